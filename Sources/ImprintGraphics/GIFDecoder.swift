// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: GIF images through giflib (the first frame).

internal import CGIF
import ImprintCore

/// GIF decoding with giflib's record API: the first frame only.
///
/// The frame is read line by line (interlaced frames in their four passes) and placed at its
/// position on the logical screen, which is transparent elsewhere, as a browser shows the file
/// before it animates. Later frames are never
/// read, so an animation cut short after its first frame still shows (giflib's `DGifSlurp` would
/// refuse it).
enum GIFDecoder {
  /// The logical screen's size, from the header (bytes 6 to 9, little-endian).
  ///
  /// - Throws: `ImageError.damaged` naming `source` for a short header or a zero side.
  static func size(_ bytes: [UInt8], source: String) throws(ImageError) -> (Int, Int) {
    guard bytes.count >= 13 else { throw .damaged(source: source, reason: "no GIF screen header") }
    let width = Int(bytes[6]) | Int(bytes[7]) << 8
    let height = Int(bytes[8]) | Int(bytes[9]) << 8
    guard width > 0, height > 0 else {
      throw .damaged(
        source: source, reason: "the GIF header gives invalid dimensions \(width) x \(height)")
    }
    return (width, height)
  }

  /// Decodes the first frame onto the logical screen, refusing a screen or frame of more than
  /// `maximumPixels` before allocating it.
  ///
  /// - Throws: `ImageError` naming `source`: `.tooLarge`, `.damaged` (giflib's text),
  ///   `.outOfMemory`.
  static func decode(
    _ bytes: [UInt8], source: String, maximumPixels: Int
  ) throws(ImageError) -> Bitmap {
    let (width, height) = try size(bytes, source: source)
    guard width * height <= maximumPixels else {
      throw .tooLarge(source: source, width: width, height: height, maximumPixels: maximumPixels)
    }
    let reader = MemoryReader(bytes)
    var status: Int32 = 0
    let opened = withExtendedLifetime(reader) {
      DGifOpen(Unmanaged.passUnretained(reader).toOpaque(), gifRead, &status)
    }
    guard let gif = opened else { throw failure(status, source: source) }
    let scope = LiveHandles.opened("GifFileType")
    defer {
      DGifCloseFile(gif, &status)
      LiveHandles.closed("GifFileType", in: scope)
    }
    return try withExtendedLifetime(reader) { () throws(ImageError) -> Bitmap in
      var transparent: Int?
      while true {
        var record = UNDEFINED_RECORD_TYPE
        guard DGifGetRecordType(gif, &record) == GIF_OK else {
          throw failure(gif.pointee.Error, source: source)
        }
        switch record {
        case EXTENSION_RECORD_TYPE:
          transparent = try extensions(gif, source: source) ?? transparent
        case IMAGE_DESC_RECORD_TYPE:
          guard DGifGetImageDesc(gif) == GIF_OK else {
            throw failure(gif.pointee.Error, source: source)
          }
          return try frame(
            gif, width: width, height: height, transparent: transparent,
            maximumPixels: maximumPixels, source: source)
        case TERMINATE_RECORD_TYPE:
          throw .damaged(source: source, reason: "the GIF holds no image")
        default:
          throw .damaged(source: source, reason: "giflib: unexpected record")
        }
      }
    }
  }

  /// Reads one extension's blocks; returns the transparent colour index a graphic control
  /// extension sets, nil otherwise.
  private static func extensions(
    _ gif: UnsafeMutablePointer<GifFileType>, source: String
  ) throws(ImageError) -> Int? {
    var code: Int32 = 0
    var block: UnsafeMutablePointer<GifByteType>?
    guard DGifGetExtension(gif, &code, &block) == GIF_OK else {
      throw failure(gif.pointee.Error, source: source)
    }
    var transparent: Int?
    // A graphic control block: length 4, flags (bit 0: transparency), delay, index.
    if code == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4, block[1] & 1 != 0 {
      transparent = Int(block[4])
    }
    while block != nil {
      guard DGifGetExtensionNext(gif, &block) == GIF_OK else {
        throw failure(gif.pointee.Error, source: source)
      }
    }
    return transparent
  }

  /// Reads the current frame's lines and places them on a transparent screen.
  private static func frame(
    _ gif: UnsafeMutablePointer<GifFileType>, width: Int, height: Int, transparent: Int?,
    maximumPixels: Int, source: String
  ) throws(ImageError) -> Bitmap {
    let image = gif.pointee.Image
    let frameWidth = Int(image.Width)
    let frameHeight = Int(image.Height)
    guard frameWidth > 0, frameHeight > 0 else {
      throw .damaged(
        source: source,
        reason: "the first frame has invalid dimensions \(frameWidth) x \(frameHeight)")
    }
    // Every line of the frame is decoded, those off the screen too.
    guard frameWidth * frameHeight <= maximumPixels else {
      throw .tooLarge(
        source: source, width: frameWidth, height: frameHeight, maximumPixels: maximumPixels)
    }
    guard let map = image.ColorMap ?? gif.pointee.SColorMap, let colors = map.pointee.Colors
    else {
      throw .damaged(source: source, reason: "the first frame has no colour table")
    }
    let colorCount = Int(map.pointee.ColorCount)
    let left = Int(image.Left)
    let top = Int(image.Top)
    // Rows in the order the file stores them: interlaced frames in four passes.
    var order: [Int] = []
    if image.Interlace {
      for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
        order += Array(Swift.stride(from: start, to: frameHeight, by: step))
      }
    } else {
      order = Array(0..<frameHeight)
    }
    var pixels = [UInt8](repeating: 0, count: width * height * 4)
    var line = [GifPixelType](repeating: 0, count: frameWidth)
    var hasAlpha = left > 0 || top > 0 || left + frameWidth < width || top + frameHeight < height
    for row in order {
      guard DGifGetLine(gif, &line, Int32(frameWidth)) == GIF_OK else {
        throw failure(gif.pointee.Error, source: source)
      }
      let y = top + row
      guard y < height else { continue }
      for x in 0..<frameWidth where left + x < width {
        let index = Int(line[x])
        let at = (y * width + left + x) * 4
        guard index != transparent, index < colorCount else {
          hasAlpha = true
          continue
        }
        let color = colors[index]
        pixels[at] = color.Blue
        pixels[at + 1] = color.Green
        pixels[at + 2] = color.Red
        pixels[at + 3] = 255
      }
    }
    return Bitmap(width: width, height: height, pixels: pixels, hasAlpha: hasAlpha)
  }

  private static func failure(_ code: Int32, source: String) -> ImageError {
    if code == D_GIF_ERR_NOT_ENOUGH_MEM { return .outOfMemory(source: source) }
    let text = GifErrorString(code).map { String(cString: $0) } ?? "error \(code)"
    return .damaged(source: source, reason: "giflib: " + text)
  }
}

/// giflib's input function: copies from the reader in `UserData`; a short read is how giflib
/// learns that the file ends early.
private func gifRead(
  _ gif: UnsafeMutablePointer<GifFileType>?, _ target: UnsafeMutablePointer<GifByteType>?,
  _ count: Int32
) -> Int32 {
  guard let gif, let target, let user = gif.pointee.UserData, count > 0 else { return 0 }
  let reader = Unmanaged<MemoryReader>.fromOpaque(user).takeUnretainedValue()
  return Int32(reader.read(into: target, count: Int(count)))
}
