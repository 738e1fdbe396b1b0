// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: the JPEG decoder (libjpeg-turbo through CImprintShims).

internal import CImprintShims

/// JPEG decoding with libjpeg-turbo, through CImprintShims (never exits, never prints).
public enum JPEGDecoder {
  /// What a JPEG header says.
  public struct Info: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Colour components: 1 grey, 3 YCbCr/RGB, 4 CMYK/YCCK.
    public let components: Int
    /// Whether the file is progressive.
    public let progressive: Bool
  }

  /// Reads the header of a JPEG.
  ///
  /// - Throws: `ImageError.damaged` naming `source`, with libjpeg's text.
  public static func info(_ bytes: [UInt8], source: String) throws(ImageError) -> Info {
    var width: UInt32 = 0
    var height: UInt32 = 0
    var components: Int32 = 0
    var colorSpace: Int32 = 0
    var progressive: Int32 = 0
    var message = [CChar](repeating: 0, count: 256)
    let status = bytes.withUnsafeBufferPointer {
      CImprintShims_jpeg_info(
        $0.baseAddress, $0.count, &width, &height, &components, &colorSpace, &progressive,
        &message, message.count)
    }
    guard status == 0 else { throw .damaged(source: source, reason: "libjpeg: " + text(message)) }
    return Info(
      width: Int(width), height: Int(height), components: Int(components),
      progressive: progressive != 0)
  }

  /// Decodes a JPEG to an opaque bitmap; CMYK (Adobe-inverted or not) is converted to RGB.
  ///
  /// - Parameters:
  ///   - bytes: the file's bytes.
  ///   - source: the file's name, for errors.
  ///   - strict: treat libjpeg warnings (truncated or corrupt data) as errors (default).
  ///   - maximumPixels: refuse larger images before allocating.
  /// - Returns: the decoded, opaque bitmap.
  /// - Throws: `ImageError.damaged` (with libjpeg's text) or `ImageError.tooLarge`, naming
  ///   `source`.
  public static func decode(
    _ bytes: [UInt8], source: String, strict: Bool = true,
    maximumPixels: Int = RasterImage.maximumPixels
  ) throws(ImageError) -> Bitmap {
    let header = try info(bytes, source: source)
    guard header.width * header.height <= maximumPixels else {
      throw .tooLarge(
        source: source, width: header.width, height: header.height, maximumPixels: maximumPixels)
    }
    let stride = header.width * 4
    var pixels = [UInt8](repeating: 0, count: stride * header.height)
    var width: UInt32 = 0
    var height: UInt32 = 0
    var message = [CChar](repeating: 0, count: 256)
    let status = bytes.withUnsafeBufferPointer { input in
      pixels.withUnsafeMutableBufferPointer { output in
        CImprintShims_jpeg_decode(
          input.baseAddress, input.count, Int32(CImprintShims_JPEG_BGRX), 1,
          strict ? strictFlag : 0,
          output.baseAddress, stride, output.count, &width, &height, &message, message.count)
      }
    }
    guard status == 0 else { throw .damaged(source: source, reason: "libjpeg: " + text(message)) }
    for index in Swift.stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 }
    // Grey, RGB and YCbCr files can be embedded in PDFs as they are; CMYK ones (often stored
    // inverted) are re-encoded from the converted pixels when needed.
    return Bitmap(
      width: Int(width), height: Int(height), pixels: pixels, hasAlpha: false,
      jpeg: header.components == 4 ? nil : bytes)
  }

  /// A C decoder with `CImprintShims_jpeg_decode`'s contract.
  ///
  /// Its parameters: bytes and their count; layout 0 (B G R X) or 1 (grey); a scale
  /// denominator of 1, 2, 4 or 8; flags (`strictFlag`: libjpeg's warnings are errors;
  /// `everyScanFlag`); the pixels, their stride and capacity in bytes; the decoded width and
  /// height; a message buffer and its size. Returns 0 on success.
  ///
  /// A progressive file at 1/8 is decoded from a copy without the AC scans of the components
  /// libjpeg then draws from their DC coefficients alone (a block's 1x1 inverse DCT): the same
  /// pixels for about half the work on a photograph (`dcScansSize`).
  public typealias CDecode =
    @convention(c) (
      UnsafePointer<UInt8>?, Int, Int32, Int32, Int32, UnsafeMutablePointer<UInt8>?, Int, Int,
      UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<CChar>?,
      Int
    ) -> Int32

  /// libjpeg's decoder as a C function, for C code of another module that decodes JPEGs at a
  /// reduced size (ImprintDocuments' Splash thumbnails), so that libjpeg keeps one owner.
  public static let cDecode: CDecode = CImprintShims_jpeg_decode

  /// The decoder's flag making libjpeg's warnings errors.
  static let strictFlag = Int32(CImprintShims_JPEG_STRICT)
  /// The decoder's flag decoding a progressive file at 1/8 from every scan (for tests).
  static let everyScanFlag = Int32(CImprintShims_JPEG_EVERY_SCAN)

  /// The size of the copy of a progressive JPEG the decoder reads at 1/8 (its DC scans, and the
  /// AC scans of components drawn larger than a pixel a block), or 0 when it reads the file as
  /// it is (not progressive, a scan it does not expect, or coefficients that libjpeg's block
  /// smoothing would guess).
  static func dcScansSize(_ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBufferPointer { CImprintShims_jpeg_dc_scans_size($0.baseAddress, $0.count) }
  }

  static func text(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
