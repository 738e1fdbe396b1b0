// SPDX-License-Identifier: Apache-2.0
// ImprintQR: one code per line of a list (`imprint qr --input`): lines read bounded, each
// line's failure its own, outputs confined to one folder and never replacing each other.

import Foundation
import ImprintCore
import ImprintGraphics

/// What a code is made from besides its payload text: the payload's kind, a payment request's
/// details and the style.
public struct QRSettings: Sendable {
  /// Text, an Ethereum address or a Bitcoin address.
  public var kind: QRPayloadKind
  /// A payment request's details (amount, token, label, ...).
  public var payment: PaymentOptions
  /// How the code looks.
  public var style: QRStyle
  /// Print an address under the code, grouped in fours (instead of `style.caption`).
  public var captionAddress: Bool

  /// Settings for plain text in the default style.
  public init(
    kind: QRPayloadKind = .text, payment: PaymentOptions = PaymentOptions(),
    style: QRStyle = QRStyle(), captionAddress: Bool = false
  ) {
    self.kind = kind
    self.payment = payment
    self.style = style
    self.captionAddress = captionAddress
  }

  /// Builds the payload for `input` and renders it.
  ///
  /// - Parameters:
  ///   - input: the text, URL or address.
  ///   - format: the output format.
  ///   - source: what messages call the payload (`the payload`, `codes.txt line 3`).
  /// - Returns: the payload and its rendering.
  /// - Throws: `QRError` for a payload that is invalid or does not fit; `GraphicsError` from the
  ///   C libraries.
  public func make(_ input: String, format: QRFormat, source: String) throws -> (
    QRPayload, QRRendering
  ) {
    let payload = try QRPayload.build(input, kind: kind, payment: payment, source: source)
    var style = style
    if captionAddress, let address = payload.address {
      style.caption = groupedForReading(address)
    }
    return (payload, try QRRenderer.render(payload: payload.text, style: style, format: format))
  }
}

/// What a rendering is, without its bytes (kept for a report while the bytes are gone).
public struct QRRenderingFacts: Sendable, Equatable {
  /// The output format.
  public var format: QRFormat
  /// The symbol's version (1 to 40).
  public var version: Int
  /// The error-correction level.
  public var level: QRErrorCorrection
  /// How the payload was split into modes.
  public var segmentation: QRSegmentation
  /// Modules a side, without the quiet zone.
  public var modules: Int
  /// The full width and height in pixels (PNG only).
  public var pixelWidth: Int?
  /// See `pixelWidth`.
  public var pixelHeight: Int?
  /// The printed size of one module, in millimetres.
  public var moduleMillimetres: Double
  /// The printed width of the symbol without its quiet zone, in millimetres.
  public var symbolMillimetres: Double

  /// The facts of `rendering`.
  public init(_ rendering: QRRendering) {
    format = rendering.format
    version = rendering.matrix.version
    level = rendering.matrix.level
    segmentation = rendering.matrix.segmentation
    modules = rendering.matrix.size
    if rendering.format == .png {
      pixelWidth = rendering.pixelWidth
      pixelHeight = rendering.pixelHeight
    }
    moduleMillimetres = rendering.moduleMillimetres
    symbolMillimetres = rendering.symbolMillimetres
  }
}

/// A code made from one line of a list.
public struct QRListCode: Sendable {
  /// The file written.
  public var output: String
  /// The payload encoded (with its warnings).
  public var payload: QRPayload
  /// What was drawn.
  public var facts: QRRenderingFacts
}

/// One line of a list and what became of it.
public struct QRListItem: Sendable {
  /// The line's number in the list, from 1.
  public var line: Int
  /// The code written, or why the line failed (the error as thrown).
  public var result: Result<QRListCode, any Error>

  /// `ok`, or `failed` with the error in `result`.
  public var status: ItemStatus {
    if case .success = result { .ok } else { .failed }
  }
}

/// Makes one code per line of a list: `PAYLOAD`, or `NAME<TAB>PAYLOAD` to name the output file.
public enum QRList {
  /// The longest output name taken from a line, in characters (ASCII after `sanitize`), leaving
  /// room for the extension within a file system's 255 bytes.
  public static let maximumNameLength = 200

  /// Reads the list at `input` and writes a code for each non-blank line into `folder`.
  ///
  /// Lines are read through `LineReader` (bounded: a line over the limit, or one that is not
  /// UTF-8, fails alone and reading goes on). A line's output is `folder/NAME.EXT`, NAME being
  /// the line's own (made a plain file name by `sanitize`) or its number (`000042`). A line
  /// whose name another line took first, or that would replace the list itself, fails
  /// (`file.outputCollision`, `file.outputIsInput`); so does one whose payload is invalid or
  /// does not fit. The others are made. Outputs are written atomically and flushed together
  /// at the end (one checked `syncfs` of `folder`, `AtomicFile.withDeferredFlush`).
  ///
  /// - Parameters:
  ///   - input: the list's path, or `-` for standard input.
  ///   - folder: the output folder (made when missing).
  ///   - format: the format of every code.
  ///   - settings: how each code is made.
  ///   - jobs: codes made at once.
  /// - Returns: one item per non-blank line, in line order.
  /// - Throws: `QRError.imageTooLarge` when the style makes PNGs over the pixel bound (before
  ///   anything is read); `FileError` when the list cannot be opened, the folder cannot be made
  ///   or the final flush fails.
  public static func make(
    input: String, folder: String, format: QRFormat, settings: QRSettings,
    jobs: Int = activeProcessorCount
  ) async throws -> [QRListItem] {
    if format == .png { try QRRenderer.checkRasterSize(style: settings.style) }
    // One flush of the folder at the end instead of one fsync a code (which would double the
    // time of a thousand codes); the flush is checked, so a disk that failed is still told.
    return try await AtomicFile.withDeferredFlush(syncing: folder) {
      try await makeCodes(
        input: input, folder: folder, format: format, settings: settings, jobs: jobs)
    }
  }

  /// What messages call the list: its path, or `standard input`.
  public static func sourceName(_ input: String) -> String {
    input == "-" ? "standard input" : input
  }

  /// One line of a list: its number, output name and payload (or why it is unreadable).
  private struct Line: Sendable {
    let number: Int
    let name: String
    let payload: Result<String, FileError>
  }

  private static func makeCodes(
    input: String, folder: String, format: QRFormat, settings: QRSettings, jobs: Int
  ) async throws -> [QRListItem] {
    var reader = try LineReader(path: input)
    try FileIO.makeFolder(folder)
    let sourceName = sourceName(input)
    let ext = format == .text ? "txt" : format.rawValue
    // Output names taken so far, with the line that took each: a later line whose name
    // collides fails (file.outputCollision) instead of silently replacing the earlier code.
    var taken: [String: Int] = [:]
    // The input file itself, when it lies in the output folder, is a name no line may take
    // (a line named after it would replace the input): found once, no call per line.
    let inputName = input == "-" ? nil : nameInFolder(input, folder)
    var ended = false
    let nextLine = { () -> Line? in
      while !ended {
        let bytes: [UInt8]
        do throws(FileError) {
          guard let next = try reader.next() else { return nil }
          bytes = next
        } catch {
          // A line over the limit is that line's failure; a failed read ends the input.
          if case .lineTooLong = error {} else { ended = true }
          let number = reader.lineNumber
          return Line(
            number: number, name: String(format: "%06d", number), payload: .failure(error))
        }
        let number = reader.lineNumber
        guard let text = String(validating: bytes, as: UTF8.self) else {
          return Line(
            number: number, name: "", payload: .failure(.notUTF8(path: sourceName, line: number)))
        }
        if text.trimmingCharacters(in: .whitespaces).isEmpty { continue }
        var name = String(format: "%06d", number)
        var payload = text
        if let tab = text.firstIndex(of: "\t") {
          name = sanitize(String(text[..<tab]))
          payload = String(text[text.index(after: tab)...])
        }
        if name + "." + ext == inputName {
          return Line(
            number: number, name: name,
            payload: .failure(.outputIsInput(path: folder + "/" + name + "." + ext)))
        }
        if let first = taken[name] {
          return Line(
            number: number, name: name,
            payload: .failure(
              .outputCollision(
                path: folder + "/" + name + "." + ext, first: "\(sourceName) line \(first)",
                second: "\(sourceName) line \(number)")))
        }
        taken[name] = number
        return Line(number: number, name: name, payload: .success(payload))
      }
      return nil
    }
    var items: [QRListItem] = []
    // Lines go to tasks in chunks: one code takes well under a millisecond, so a task per line
    // would spend a large share of the time scheduling.
    let nextChunk = { () -> [Line]? in
      var chunk: [Line] = []
      while chunk.count < 16, let line = nextLine() { chunk.append(line) }
      return chunk.isEmpty ? nil : chunk
    }
    await forEachConcurrently(
      inputs: nextChunk, jobs: jobs,
      work: { (chunk: [Line]) -> [QRListItem] in
        chunk.map { line in
          do {
            let text = try line.payload.get()
            let (payload, rendering) = try settings.make(
              text, format: format, source: "\(sourceName) line \(line.number)")
            let path = folder + "/" + line.name + "." + ext
            try AtomicFile.write(rendering.bytes, to: path)
            return QRListItem(
              line: line.number,
              result: .success(
                QRListCode(output: path, payload: payload, facts: QRRenderingFacts(rendering))))
          } catch {
            return QRListItem(line: line.number, result: .failure(error))
          }
        }
      },
      collect: { items += $0 })
    items.sort { $0.line < $1.line }
    return items
  }

  /// The file name of `path` when the file lies directly in `folder` (links resolved), else nil.
  static func nameInFolder(_ path: String, _ folder: String) -> String? {
    guard let file = realpath(path, nil) else { return nil }
    defer { free(file) }
    guard let base = realpath(folder, nil) else { return nil }
    defer { free(base) }
    let resolved = String(cString: file)
    let parent = (resolved as NSString).deletingLastPathComponent
    return parent == String(cString: base) ? (resolved as NSString).lastPathComponent : nil
  }

  /// A line's NAME made into one plain file name inside the output folder.
  ///
  /// Letters, digits, `-`, `_` and `.` are kept, anything else (`/`, control characters,
  /// non-ASCII) becomes `_`; a name starting with `.` (`..`, `.hidden`) or empty gets a leading
  /// `_`; cut to `maximumNameLength` characters. So no name can leave the folder or hide in it.
  public static func sanitize(_ name: String) -> String {
    let cleaned = String(
      name.prefix(maximumNameLength).map {
        $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "_"
      })
    let safe = cleaned.isEmpty || cleaned.hasPrefix(".") ? "_" + cleaned : cleaned
    precondition(ConfinedPath.isPlainFileName(safe), "a sanitized name is a plain file name")
    return safe
  }
}
