// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: manifests (JSON Lines or CSV with a header), read one line at a time.
//
// Words: a manifest's line is an *item* (`ManifestItem`); a service's unit of work is a *item*
// (ImprintService's `ItemKind`); what a printer queues is a *printer job* (`SubmittedJob`).

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintQR

/// What a batch item makes.
public enum ItemKind: String, Sendable, Codable, CaseIterable {
  /// An ID card (front and back PDF) from a profile.
  case card
  /// A QR code.
  case qr
  /// A thumbnail of an upload.
  case thumb
  /// A quote for an order.
  case quote
  /// An order printed as quoted: print-ready files and tickets, optionally sent to a printer.
  case print
}

/// Where a card goes.
public struct ShipTo: Sendable, Codable, Equatable {
  /// The recipient.
  public var name: String
  /// Their e-mail.
  public var email: String?
  /// The postal address (lines separated by newlines or commas).
  public var address: String
  /// The postal code.
  public var zip: String?
}

/// One item of a manifest: a line that makes one thing, with the fields of its kind.
///
/// Paths are resolved against the manifest's folder (or the inputs root) and confined to it:
/// see `ManifestReader.init(path:inputsRoot:)`.
public struct ManifestItem: Sendable, Equatable {
  /// The 1-based line of the manifest (the header of a CSV is line 1).
  public var line: Int
  /// The item's id, unique in the manifest.
  public var id: String
  /// What it makes, with what it makes it from.
  public var work: ItemWork
  /// Where what it makes is mailed (the packing list and labels), when it is.
  public var shipTo: ShipTo?
  /// The line's text, for the resume fingerprint.
  public var source: String

  /// What it makes.
  public var kind: ItemKind { work.kind }

  /// An item of `line`.
  public init(line: Int, id: String, work: ItemWork, shipTo: ShipTo? = nil, source: String) {
    self.line = line
    self.id = id
    self.work = work
    self.shipTo = shipTo
    self.source = source
  }

  /// The card this item makes, when it is a card item.
  public var card: CardItem? {
    if case .card(let card) = work { return card }
    return nil
  }
}

/// An item's kind and the fields that kind reads.
public enum ItemWork: Sendable, Equatable {
  /// An ID card.
  case card(CardItem)
  /// A QR code.
  case qr(QRItem)
  /// A thumbnail of an upload.
  case thumb(ThumbItem)
  /// A quote for an order.
  case quote(OrderItem)
  /// An order prepared, and sent to a printer when it names one.
  case print(PrintItem)

  /// What it makes.
  public var kind: ItemKind {
    switch self {
    case .card: .card
    case .qr: .qr
    case .thumb: .thumb
    case .quote: .quote
    case .print: .print
    }
  }

  /// The files it reads (confined paths), in the order its fingerprint takes them.
  var files: [String] {
    switch self {
    case .card(let card):
      // A template without a slash is a shipped design's name, not a file.
      [
        card.profile.path, card.photo, card.followCounts,
        card.template.flatMap { $0.contains("/") ? $0 : nil },
      ]
      .compactMap { $0 }
    case .qr: []
    case .thumb(let thumb): [thumb.file]
    case .quote(let order): [order.order, order.prices]
    case .print(let print): [print.order.order, print.order.prices]
    }
  }
}

/// A card item: a profile drawn with a design.
public struct CardItem: Sendable, Equatable {
  /// Where the profile is.
  public enum Profile: Sendable, Equatable {
    /// A profile file.
    case file(String)
    /// The profile written inline in the line, as JSON bytes.
    case inline([UInt8])

    /// The file's path (nil for an inline profile).
    public var path: String? {
      if case .file(let path) = self { return path }
      return nil
    }
  }

  /// The profile.
  public var profile: Profile
  /// The template: a shipped design's name or a template file (nil: `classic`).
  public var template: String?
  /// The photo file (nil: the profile's, through the batch's photo options).
  public var photo: String?
  /// A get_follow_count result file.
  public var followCounts: String?
  /// The card's language (BCP 47); the batch's or the template's when nil.
  public var locale: String?
  /// Copies on sheets and card-printer files.
  public var copies = 1

  /// The profile's bytes: the inline object, or the file's (up to the limit of structured
  /// files).
  func profileBytes() throws(FileError) -> [UInt8] {
    switch profile {
    case .file(let path): try FileIO.read(path, limit: FileIO.Limit.structured)
    case .inline(let bytes): bytes
    }
  }

  /// A card of `profile`.
  public init(
    profile: Profile, template: String? = nil, photo: String? = nil, followCounts: String? = nil,
    locale: String? = nil, copies: Int = 1
  ) {
    self.profile = profile
    self.template = template
    self.photo = photo
    self.followCounts = followCounts
    self.locale = locale
    self.copies = copies
  }
}

/// A QR item: a payload drawn as `imprint qr` draws it.
public struct QRItem: Sendable, Equatable {
  /// The payload.
  public var payload: String
  /// What the payload is (`payloadType`: `text`, `eth` or `btc`).
  public var payloadType: QRPayloadKind = .text
  /// The code's format (`format`: `png`, `svg`, `pdf`, `eps` or `text`).
  public var format: QRFormat = .png

  /// A code of `payload`.
  public init(payload: String, payloadType: QRPayloadKind = .text, format: QRFormat = .png) {
    self.payload = payload
    self.payloadType = payloadType
    self.format = format
  }
}

/// A thumbnail item: page 1 of an upload at 256 px.
public struct ThumbItem: Sendable, Equatable {
  /// The upload.
  public var file: String
  /// The thumbnail's format (`format`: `png` or `jpeg`).
  public var format: ThumbnailFormat = .png

  /// A thumbnail of `file`.
  public init(file: String, format: ThumbnailFormat = .png) {
    self.file = file
    self.format = format
  }
}

/// A quote item: an order and its price list (`file`, `prices`).
public struct OrderItem: Sendable, Equatable {
  /// The order.
  public var order: String
  /// The price list.
  public var prices: String

  /// A quote of `order` at `prices`.
  public init(order: String, prices: String) {
    self.order = order
    self.prices = prices
  }
}

/// A print item: an order prepared as `imprint prepare` prepares it, and sent to `printer`.
public struct PrintItem: Sendable, Equatable {
  /// The order and its price list.
  public var order: OrderItem
  /// The folder the order's files are relative to and confined to (nil: the order's folder).
  public var filesRoot: String?
  /// The printer the prepared files are sent to, an IPP URI or a CUPS queue name (nil:
  /// prepared only).
  public var printer: String?
  /// The printer the monochrome files are sent to instead (nil: all to `printer`), as
  /// `imprint prepare --mono-printer`.
  public var monoPrinter: String?
  /// How the files are prepared (`splitColor`; `previews` with `previewSize`).
  public var options = PrepareOptions()
  /// Whether the item follows its printer jobs to their end (nil: the batch's `--wait`).
  public var wait: Bool?
  /// How long it waits for them, in seconds (nil: the batch's `--wait-timeout`).
  public var waitTimeout: Double?

  /// A print item of `order`.
  public init(
    order: OrderItem, filesRoot: String? = nil, printer: String? = nil,
    monoPrinter: String? = nil, options: PrepareOptions = PrepareOptions(), wait: Bool? = nil,
    waitTimeout: Double? = nil
  ) {
    self.order = order
    self.filesRoot = filesRoot
    self.printer = printer
    self.monoPrinter = monoPrinter
    self.options = options
    self.wait = wait
    self.waitTimeout = waitTimeout
  }
}

/// A manifest record that is not an item: that item's error (the others run).
public struct ManifestLineError: ImprintError, Equatable {
  /// The 1-based line the record starts on.
  public var line: Int
  /// The id, when one could be read.
  public var id: String?
  /// What is wrong, naming the manifest and the line.
  public var message: String
  /// The stable code (`batch.badLine`, or the reader's: `json.duplicateKey`, `csv.unclosedQuote`…).
  public var code: String
  /// How to fix it, when known.
  public var hint: String?
  /// The cause of the reader's error this one restates (the errno behind a file error).
  public var cause: ErrorCause?

  /// An error of `line`.
  public init(
    line: Int, id: String?, message: String, code: String = "batch.badLine", hint: String? = nil,
    cause: ErrorCause? = nil
  ) {
    self.line = line
    self.id = id
    self.message = message
    self.code = code
    self.hint = hint
    self.cause = cause
  }

  /// The error `error` of the record starting on `line`: its code, message, hint and cause.
  init(line: Int, id: String? = nil, _ error: some ImprintError) {
    self.init(
      line: line, id: id, message: error.message, code: error.code, hint: error.hint,
      cause: error.underlying.map(ErrorCause.init))
  }

  public var underlying: (any Error)? { cause?.error }
}

/// The records of a manifest, before they are read as items.
enum ManifestRecord {
  /// A JSON Lines object.
  case object([String: Any], line: Int, source: String)
  /// A CSV data row with its header.
  case row([String], header: [String], line: Int, source: String)
  /// A record that cannot be an item.
  case failure(ManifestLineError)
}

/// Where a manifest's records come from (a class: the readers are noncopyable).
private protocol ManifestSource: AnyObject {
  func next() -> ManifestRecord?
  /// Passes over the next record as cheaply as it can; false at the end.
  func skip() -> Bool
}

extension ManifestSource {
  func skip() -> Bool { next() != nil }
}

/// JSON Lines: one object a line, each through `StrictJSON`; blank lines and `#` comments
/// skipped.
private final class JSONLinesSource: ManifestSource {
  var reader: LineReader
  let name: String

  init(path: String, name: String) throws(FileError) {
    // Regular files only: the manifest is read more than once (the progress count, the merge).
    let (descriptor, _) = try FileIO.openForReading(path)
    close(descriptor)
    reader = try LineReader(path: path)
    self.name = name
  }

  func next() -> ManifestRecord? { next(parse: true) }

  // Every line that is not blank or a comment is one record: counted without parsing it.
  func skip() -> Bool { next(parse: false) != nil }

  private func next(parse: Bool) -> ManifestRecord? {
    while true {
      var bytes: [UInt8]
      do {
        guard let line = try reader.next() else { return nil }
        bytes = line
      } catch {
        return .failure(ManifestLineError(line: reader.lineNumber, error))
      }
      let number = reader.lineNumber
      if number == 1 && bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
      guard let first = bytes.first(where: { $0 != 0x20 && $0 != 0x09 }) else { continue }
      if first == UInt8(ascii: "#") { continue }
      guard parse else { return .object([:], line: number, source: "") }
      let value: Any
      do {
        value = try StrictJSON.parse(bytes, source: name)
      } catch {
        return .failure(ManifestLineError(line: number, error.onLine(number)))
      }
      guard let object = value as? [String: Any] else {
        return .failure(
          ManifestLineError(
            line: number, id: nil, message: "manifest '\(name)' line \(number) is not a JSON object"
          ))
      }
      return .object(object, line: number, source: String(decoding: bytes, as: UTF8.self))
    }
  }
}

extension JSONError {
  /// The error of one line's document, placed on line `line` of the file.
  fileprivate func onLine(_ line: Int) -> JSONError {
    switch self {
    case .syntax(let source, _, let column, let expected, let found):
      .syntax(source: source, line: line, column: column, expected: expected, found: found)
    case .duplicateKey(let source, let key, _, let column):
      .duplicateKey(source: source, key: key, line: line, column: column)
    case .tooDeep(let source, _, let column, let limit):
      .tooDeep(source: source, line: line, column: column, limit: limit)
    case .numberOutOfRange(let source, _, let column):
      .numberOutOfRange(source: source, line: line, column: column)
    case .notUTF8(let source, _, let column):
      .notUTF8(source: source, line: line, column: column)
    case .empty: self
    }
  }
}

/// CSV (RFC 4180) with a header; blank rows skipped.
private final class CSVSource: ManifestSource {
  var reader: CSVReader
  let name: String
  /// The header's names, once read.
  var header: [String]?
  /// Why the header cannot be used (every row fails with it).
  var headerProblem: ManifestLineError?

  init(path: String, name: String) throws(FileError) {
    reader = try CSVReader(path: path, name: name)
    self.name = name
  }

  func next() -> ManifestRecord? {
    while true {
      let record: CSVRecord
      do {
        guard let next = try reader.next() else { return nil }
        record = next
      } catch {
        let failure = ManifestLineError(line: reader.lineNumber, error)
        if header == nil {
          header = []
          headerProblem = ManifestLineError(
            line: failure.line, id: nil,
            message: "manifest '\(name)': the header (line \(failure.line)) cannot be read: "
              + failure.message, code: failure.code, hint: failure.hint, cause: failure.cause)
          if !error.isRecordError { return .failure(failure) }
          continue
        }
        return .failure(failure)
      }
      if record.fields.count == 1
        && record.fields[0].trimmingCharacters(in: .whitespaces).isEmpty
      {
        continue
      }
      guard let header else {
        let names = record.fields.map { $0.trimmingCharacters(in: .whitespaces) }
        header = names
        var seen = Set<String>()
        if let twice = names.first(where: { !$0.isEmpty && !seen.insert($0).inserted }) {
          headerProblem = ManifestLineError(
            line: record.line, id: nil,
            message: "manifest '\(name)': the header (line \(record.line)) names column "
              + "'\(SafeText.excerpt(twice))' twice",
            code: "batch.badHeader", hint: "keep one of the two columns")
        }
        continue
      }
      if let headerProblem {
        return .failure(
          ManifestLineError(
            line: record.line, id: nil, message: headerProblem.message, code: headerProblem.code,
            hint: headerProblem.hint))
      }
      guard record.fields.count <= header.count else {
        return .failure(
          ManifestLineError(
            line: record.line, id: nil,
            message: "manifest '\(name)' line \(record.line) has \(record.fields.count) fields; "
              + "the header has \(header.count)",
            hint: "quote fields that hold commas (\"Hamngatan 4, Göteborg\")"))
      }
      return .row(record.fields, header: header, line: record.line, source: record.text)
    }
  }
}

/// Reads a manifest a record at a time (flat memory, whatever its length).
///
/// JSON Lines: one object a line, blank lines and `#` comments skipped, each line parsed
/// strictly (a repeated key is that item's error) and its fields read with Core's
/// `JSONObjectReader`: a field of the wrong type (`"copies": "2"`, `"format": 1`, a number for
/// a ZIP code) is that item's `batch.invalidField`, a key the manifest does not know (in
/// `shipTo` too) its `batch.badLine`, and `null` an absent field. CSV (`.csv`): RFC 4180 with a
/// header row, every field text; an item's line is the line its record starts on.
public struct ManifestReader: ~Copyable {
  private let source: any ManifestSource
  /// The folder the item's relative paths are joined to and confined to.
  private let folder: String
  /// What an absolute path in the manifest may name.
  private let absolutePaths: ConfinedPath.AbsolutePaths
  /// The manifest's path.
  public let name: String
  /// The manifest's name in every message: `init`'s `displayName`, else its file name.
  public let display: String

  /// Opens `path` (`.csv` files are CSV with a header; anything else is JSON Lines).
  ///
  /// The files an item names (profile, photo, follow counts, template file, upload, order, price
  /// list) are confined (`ConfinedPath`): a relative path is joined to the manifest's folder
  /// and may not leave it (`..`, or a link leading out, fails that item with
  /// `file.escapesFolder`); an absolute path is taken as written, as on a command line. With
  /// `inputsRoot`, every path is confined to that folder instead: relative paths are joined to
  /// it, absolute paths are accepted only inside it (for manifests that a backend generates
  /// from uploads).
  ///
  /// - Parameters:
  ///   - path: the manifest.
  ///   - inputsRoot: the folder every path the manifest names must lie in, or nil.
  ///   - displayName: the name messages give the manifest (a service's client's file name);
  ///     nil: its file name.
  /// - Throws: `FileError` (`file.notRegular` for anything but a regular file).
  public init(path: String, inputsRoot: String? = nil, displayName: String? = nil)
    throws(FileError)
  {
    name = path
    display = displayName ?? (path as NSString).lastPathComponent
    source =
      path.lowercased().hasSuffix(".csv")
      ? try CSVSource(path: path, name: display) : try JSONLinesSource(path: path, name: display)
    if let inputsRoot {
      folder = inputsRoot.isEmpty ? "." : inputsRoot
      absolutePaths = .insideRoot
    } else {
      let directory = (path as NSString).deletingLastPathComponent
      folder = directory.isEmpty ? "." : directory
      absolutePaths = .asWritten
    }
  }

  /// The next item, or the error of a bad record; nil at the end.
  public mutating func next() -> Result<ManifestItem, ManifestLineError>? {
    switch source.next() {
    case nil: return nil
    case .failure(let error): return .failure(error)
    case .object(let object, let line, let source):
      return item(object, line: line, source: source, csv: false)
    case .row(let fields, let header, let line, let source):
      var object: [String: Any] = [:]
      var ship: [String: Any] = [:]
      for (index, key) in header.enumerated() where index < fields.count && !fields[index].isEmpty {
        switch key {
        case "name", "email", "address", "zip": ship[key] = fields[index]
        // A print item's numbers are read as numbers by `ManifestFields`.
        case "copies": object[key] = Int(fields[index]) ?? fields[index]
        default: object[key] = fields[index]
        }
      }
      if !ship.isEmpty { object["shipTo"] = ship }
      return item(object, line: line, source: source, csv: true)
    }
  }

  /// Passes over the next record (an item or an item error, as `next()` counts them) as
  /// cheaply as its format allows: a JSON line unparsed; false at the end.
  public mutating func skip() -> Bool { source.skip() }

  /// The records of the manifest that are items or item errors (what `next()` returns).
  ///
  /// Counted without making items, for a progress display; zero when it cannot be read.
  public static func count(path: String) -> Int {
    guard let reader = try? ManifestReader(path: path) else { return 0 }
    var count = 0
    while reader.source.skip() { count += 1 }
    return count
  }

  /// An item's path joined to the folder and confined to it (nil when absent or empty).
  private func resolve(_ path: String?, _ what: String) throws(FileError) -> String? {
    guard let path, !path.isEmpty else { return nil }
    return try ConfinedPath.resolve(path, root: folder, absolute: absolutePaths, what: what)
  }

  /// The keys each kind reads besides `id` and `kind`; a key of another kind fails the line
  /// (a field an item would ignore is a mistake in the manifest, never skipped silently).
  static let keys: [ItemKind: [String]] = [
    .card: ["copies", "profile", "template", "photo", "followCounts", "locale"],
    .qr: ["payload", "payloadType", "format"],
    .thumb: ["file", "format"],
    .quote: ["file", QuoteOption.prices.names.key],
    .print: ["file", QuoteOption.prices.names.key, QuoteOption.filesRoot.names.key]
      + printOptionKeys,
  ]

  /// The keys every kind reads.
  static let commonKeys = ["id", "kind", "shipTo"]

  static let knownKeys = Set(commonKeys + keys.values.joined())

  /// The keys only a print item reads (how `imprint prepare` prepares and prints: the
  /// library's table, `PrepareOption.manifest`).
  static let printOptionKeys = PrepareOption.manifest.map(\.names.key)

  /// The item of one record, or its error (this line's alone) when the record is not an item.
  ///
  /// - Parameters:
  ///   - object: the record's fields.
  ///   - line: the line it starts on.
  ///   - source: its text, for the fingerprint.
  ///   - csv: whether the record is a CSV row, whose fields are all text (a `copies` that is
  ///     not a number is then a value out of range, not a field of the wrong type).
  /// - Returns: the item, or the line's error.
  private func item(_ object: [String: Any], line: Int, source: String, csv: Bool)
    -> Result<ManifestItem, ManifestLineError>
  {
    do throws(ManifestLineError) {
      return .success(try readItem(object, line: line, source: source, csv: csv))
    } catch {
      return .failure(error)
    }
  }

  /// Reads a record's fields with Core's strict `JSONObjectReader`.
  ///
  /// A field of the wrong type is the line's `batch.invalidField` error, naming the manifest,
  /// the line, the field, what was expected and what was found; a key the manifest does not
  /// know (in `shipTo` too), or one its kind does not read, is its `batch.badLine` error.
  /// `null` is an absent field, as in templates and orders.
  private func readItem(_ object: [String: Any], line: Int, source: String, csv: Bool)
    throws(ManifestLineError) -> ManifestItem
  {
    let display = display
    // The id first, so that every later message names the item. A number is accepted as its
    // digits (order numbers).
    let id: String? =
      switch object["id"] {
      case let text as String: text
      case let number as NSNumber where !Formatting.isJSONBool(number): number.stringValue
      default: nil
      }
    func failure(_ message: String, code: String = "batch.badLine") -> ManifestLineError {
      ManifestLineError(
        line: line, id: id, message: "manifest '\(display)': " + message, code: code)
    }
    guard let id, !id.isEmpty else {
      if let value = object["id"], !(value is String), !(value is NSNull) {
        throw failure(
          "line \(line): 'id' is \(JSONFieldProblem.describe(value)); expected text or a number",
          code: "batch.invalidField")
      }
      throw failure("line \(line) has no 'id'")
    }
    guard id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }),
      !id.hasPrefix(".")
    else {
      throw failure(
        "item '\(SafeText.excerpt(id))' (line \(line)): 'id' may hold only letters, digits, '-', "
          + "'_' and '.'")
    }
    let item = "item '\(id)' (line \(line))"
    if let unknown = object.keys.sorted().first(where: { !Self.knownKeys.contains($0) }) {
      throw failure("\(item): '\(SafeText.excerpt(unknown))' is not a known key")
    }
    var fields = try JSONObjectReader(
      object, source: display, path: "",
      makeError: { problem in
        switch problem.kind {
        case .unknownKey:
          failure("\(item): '\(SafeText.excerpt(problem.field))' is not a known key")
        case .wrongType(let expected):
          failure(
            "\(item): '\(SafeText.excerpt(problem.field))' is "
              + "\(JSONFieldProblem.describe(problem.value)); expected \(expected.phrase)",
            code: "batch.invalidField")
        }
      })
    _ = fields.value("id")
    let kinds = "card, qr, thumb, quote or print"
    let kindValue = fields.value("kind")
    guard let kindText = kindValue as? String, let kind = ItemKind(rawValue: kindText) else {
      if kindValue != nil && !(kindValue is String) {
        throw fields.wrongType("kind", expected: .described(kinds))
      }
      throw failure(
        "\(item): 'kind' is \(kindValue.map { "'\(SafeText.excerpt("\($0)"))'" } ?? "missing"); "
          + "expected \(kinds)")
    }
    // A key of another kind would be ignored: a quote's files are confined to its order's
    // folder whatever `filesRoot` says, and a qr item has no photo.
    let own = Set(Self.commonKeys + (Self.keys[kind] ?? []))
    if let foreign = object.keys.sorted().first(where: {
      !own.contains($0) && !(object[$0] is NSNull)
    }) {
      let readers = ItemKind.allCases.filter { Self.keys[$0]?.contains(foreign) ?? false }
      let names = readers.map(\.rawValue)
      let list = names.dropLast().joined(separator: ", ") + (names.count > 1 ? " and " : "")
      throw failure(
        "\(item): '\(foreign)' is for \(list + (names.last ?? "")) items, not \(kind.rawValue) "
          + "items")
    }
    // Another kind's key that is null is absent, as any null field.
    for key in object.keys where !own.contains(key) {
      _ = fields.value(key)
    }
    // Empty (a blank CSV cell) is absent.
    func text(_ name: String) throws(ManifestLineError) -> String? {
      try fields.string(name).flatMap { $0.isEmpty ? nil : $0 }
    }
    // A path joined to the folder and confined to it.
    func path(_ name: String, _ what: String) throws(ManifestLineError) -> String? {
      try resolved(try fields.string(name), what)
    }
    func resolved(_ value: String?, _ what: String) throws(ManifestLineError) -> String? {
      do throws(FileError) {
        return try resolve(value, what)
      } catch {
        throw ManifestLineError(
          line: line, id: id, message: "manifest '\(display)': \(item): \(error.message)",
          code: error.code, hint: error.hint, cause: error.underlying.map(ErrorCause.init))
      }
    }
    // The value `text` of `field` names among `Value`'s cases (nil when absent).
    func choice<Value: CaseIterable>(_ field: String, names: (Value) -> String)
      throws(ManifestLineError) -> Value?
    {
      guard let text = try text(field) else { return nil }
      guard let value = Value.allCases.first(where: { names($0) == text }) else {
        let expected = Formatting.alternatives(Value.allCases.map(names))
        throw failure("\(item): '\(field)' is '\(SafeText.excerpt(text))'; expected \(expected)")
      }
      return value
    }
    // An option of the library's table, read as the command line and the service read it.
    func quoting(_ option: QuoteOption) throws(ManifestLineError) -> QuoteRequest {
      let lineFailure: (String) -> ManifestLineError = { failure($0) }
      return try ManifestFields.reading(&fields, csv: csv, item: item, failure: lineFailure) {
        try QuoteRequest.read(from: &$0, offering: [option])
      }
    }
    // An order and its price list (quote and print items).
    func order() throws(ManifestLineError) -> OrderItem {
      let order = try path("file", "order")
      let prices = try resolved(try quoting(.prices).prices, "price list")
      guard let order, let prices else {
        throw failure("\(item): a \(kind.rawValue) item needs 'file' (the order) and 'prices'")
      }
      return OrderItem(order: order, prices: prices)
    }
    let work: ItemWork
    switch kind {
    case .card:
      let count = try copies(&fields, item: item, csv: csv, failure: { failure($0) })
      var template = try fields.string("template")
      let locale = try text("locale")
      let photo = try path("photo", "photo")
      let followCounts = try path("followCounts", "follow counts file")
      if let name = template, name.contains("/") || name.hasSuffix(".json") {
        template = try path("template", "template")
      }
      let profile: CardItem.Profile
      switch fields.value("profile") {
      case nil: throw failure("\(item): a card needs 'profile'")
      case let inline as [String: Any]:
        profile = .inline(
          (try? JSONSerialization.data(withJSONObject: inline)).map { [UInt8]($0) } ?? [])
      case is String:
        guard let resolved = try path("profile", "profile") else {
          throw failure("\(item): a card needs 'profile'")
        }
        profile = .file(resolved)
      default:
        throw fields.wrongType("profile", expected: .described("a path or a profile object"))
      }
      work = .card(
        CardItem(
          profile: profile, template: template, photo: photo, followCounts: followCounts,
          locale: locale, copies: count))
    case .qr:
      guard let payload = try fields.string("payload"), !payload.isEmpty else {
        throw failure("\(item): a qr item needs 'payload'")
      }
      var qr = QRItem(payload: payload)
      qr.payloadType = try choice("payloadType", names: \QRPayloadKind.shortName) ?? .text
      qr.format = try choice("format", names: \QRFormat.rawValue) ?? .png
      work = .qr(qr)
    case .thumb:
      guard let file = try path("file", "file") else {
        throw failure("\(item): a thumb item needs 'file'")
      }
      work = .thumb(
        ThumbItem(
          file: file, format: try choice("format", names: \ThumbnailFormat.rawValue) ?? .png))
    case .quote:
      work = .quote(try order())
    case .print:
      var print = PrintItem(order: try order())
      print.filesRoot = try resolved(try quoting(.filesRoot).filesRoot, "files root")
      try readPrintOptions(&fields, into: &print, item: item, csv: csv, failure: { failure($0) })
      work = .print(print)
    }
    var shipTo: ShipTo?
    if var ship = try fields.child("shipTo") {
      guard let name = try ship.string("name"), let address = try ship.string("address") else {
        throw failure("\(item): 'shipTo' needs 'name' and 'address'")
      }
      shipTo = ShipTo(
        name: name, email: try ship.string("email"), address: address, zip: try ship.string("zip"))
      try ship.finish()
    }
    // Every other key was refused above.
    try fields.finish()
    return ManifestItem(line: line, id: id, work: work, shipTo: shipTo, source: source)
  }

  /// A card's `copies`: 1 to 10 000 (1 when absent).
  private func copies(
    _ fields: inout JSONObjectReader<ManifestLineError>, item: String, csv: Bool,
    failure: (String) -> ManifestLineError
  ) throws(ManifestLineError) -> Int {
    guard let value = fields.value("copies") else { return 1 }
    let isNumber = value is NSNumber && !Formatting.isJSONBool(value)
    guard isNumber || (csv && value is String) else {
      throw fields.wrongType("copies", expected: .described("1 to 10000"))
    }
    guard isNumber, let count = (value as? NSNumber).flatMap({ Int(exactly: $0.doubleValue) }),
      (1...10_000).contains(count)
    else {
      throw failure("\(item): 'copies' is '\(SafeText.excerpt("\(value)"))'; expected 1 to 10000")
    }
    return count
  }

  /// Reads a print item's options: `printer` and `monoPrinter`, `splitColor`, `previews` with
  /// `previewSize`, `wait` with `waitTimeout` (what `imprint prepare` takes besides the order,
  /// prices and files root), through the library's table (`PrepareRequest.read`).
  ///
  /// Each is checked as the command line checks it (`ManifestFields`): a flag is `true` or
  /// `false` (in CSV the text `true` or `false`), `previewSize` a whole number of pixels in
  /// `OrderPreparer.previewSizes` that needs `previews`, `waitTimeout` seconds in
  /// `PrintTarget.waitSecondsRange` that needs `"wait": true`; `monoPrinter` and `wait` need
  /// `printer` (`PrepareRequest.conflict`).
  private func readPrintOptions(
    _ fields: inout JSONObjectReader<ManifestLineError>, into made: inout PrintItem,
    item: String, csv: Bool, failure: @escaping (String) -> ManifestLineError
  ) throws(ManifestLineError) {
    let asked: PrepareRequest
    (asked, made.printer, made.monoPrinter, _) = try ManifestFields.reading(
      &fields, csv: csv, item: item, failure: failure
    ) { try PrepareRequest.read(from: &$0, offering: PrepareOption.manifest) }
    // The library's rule, worded as the manifest's fields (the command line words it as flags).
    switch asked.conflict() {
    case nil: break
    case .previewSizeWithoutPreviews:
      throw failure(
        "\(item): '\(PrepareOption.previewSize.names.key)' needs "
          + "\"\(PrepareOption.previews.names.key)\": true")
    case .waitTimeoutWithoutWait:
      throw failure(
        "\(item): '\(PrepareOption.waitTimeout.names.key)' needs "
          + "\"\(PrepareOption.wait.names.key)\": true")
    case let conflict?:
      throw failure(
        "\(item): '\(conflict.option.names.key)' needs '\(PrepareOption.printer.names.key)' "
          + "(the printer the files are sent to)")
    }
    made.options = asked.options
    made.wait = asked.wait
    made.waitTimeout = asked.waitTimeout
  }
}

/// A manifest line's fields as a capability's options (`OptionSource`): each read by its
/// `key`, refused as the manifest refuses a field: a value of the wrong type is the line's
/// `batch.invalidField`, a value out of range (or, in CSV, text that is not of the option's
/// kind) its `batch.badLine`, each naming the item, the field and what was expected.
///
/// Empty text (a blank CSV cell) is absent; in CSV, whose fields are all text, a flag is the
/// text `true` or `false` and a number is read from its text.
struct ManifestFields: OptionSource {
  /// The line's fields.
  var fields: JSONObjectReader<ManifestLineError>
  /// Whether the line is a CSV row.
  let csv: Bool
  /// The item, as messages name it (`item 'a' (line 2)`).
  let item: String
  /// The line's `batch.badLine` error with a message.
  let failure: (String) -> ManifestLineError

  /// What `read` reads from `fields` (a library's `read(from:)`), the fields read marked as
  /// such.
  ///
  /// - Throws: the line's error for a field `read` refuses.
  static func reading<Value>(
    _ fields: inout JSONObjectReader<ManifestLineError>, csv: Bool, item: String,
    failure: @escaping (String) -> ManifestLineError,
    _ read: (inout ManifestFields) throws -> Value
  ) throws(ManifestLineError) -> Value {
    var source = ManifestFields(fields: fields, csv: csv, item: item, failure: failure)
    defer { fields = source.fields }
    do {
      return try read(&source)
    } catch let error as ManifestLineError {
      throw error
    } catch {
      preconditionFailure("a manifest's fields throw only ManifestLineError: \(error)")
    }
  }

  mutating func text(_ name: OptionName) throws(ManifestLineError) -> String? {
    try fields.string(name.key).flatMap { $0.isEmpty ? nil : $0 }
  }

  mutating func decimalText(_ name: OptionName) throws(ManifestLineError) -> String? {
    try text(name)
  }

  mutating func integerText(_ name: OptionName) throws(ManifestLineError) -> String? {
    try text(name)
  }

  mutating func flag(_ name: OptionName) throws(ManifestLineError) -> Bool {
    try toggle(name) ?? false
  }

  mutating func toggle(_ name: OptionName) throws(ManifestLineError) -> Bool? {
    if csv, let text = fields.value(name.key) as? String {
      guard let value = ["true": true, "false": false][text] else {
        throw failure(
          "\(item): '\(name.key)' is '\(SafeText.excerpt(text))'; expected true or false")
      }
      return value
    }
    return try fields.bool(name.key)
  }

  mutating func integer(_ name: OptionName, in range: ClosedRange<Int>)
    throws(ManifestLineError) -> Int?
  {
    let value = try number(
      name, Double(range.lowerBound)...Double(range.upperBound),
      expected: { "\(range.lowerBound) to \(range.upperBound) \(Self.unit(name)), a whole number" },
      parse: { Int($0) })
    if let value, value.rounded() != value {
      throw failure(
        "\(item): '\(name.key)' is '\(value)'; expected a whole number of \(Self.unit(name))")
    }
    return value.map { Int($0) }
  }

  mutating func number(_ name: OptionName, in range: ClosedRange<Double>)
    throws(ManifestLineError) -> Double?
  {
    try number(
      name, range,
      expected: { "\(Int(range.lowerBound)) to \(Int(range.upperBound)) \(Self.unit(name))" },
      parse: { Double($0) })
  }

  mutating func choice(_ name: OptionName, _ choices: [String]) throws(ManifestLineError)
    -> String?
  {
    guard let text = try text(name) else { return nil }
    guard choices.contains(text) else {
      throw failure(
        "\(item): '\(name.key)' is '\(SafeText.excerpt(text))'; expected "
          + Formatting.alternatives(choices))
    }
    return text
  }

  mutating func color(_ name: OptionName) throws(ManifestLineError) -> Color? {
    guard let text = try text(name) else { return nil }
    guard let color = Color(parsing: text) else {
      throw failure(
        "\(item): '\(name.key)' is '\(SafeText.excerpt(text))'; expected a colour like #1A2B3C")
    }
    return color
  }

  /// A number in `range`, `expected` naming what is: a JSON number, or in CSV the text
  /// `parse` reads (a cell that is not a number is out of range too).
  private mutating func number(
    _ name: OptionName, _ range: ClosedRange<Double>, expected: () -> String,
    parse: (String) -> Any?
  ) throws(ManifestLineError) -> Double? {
    guard var value = fields.value(name.key) else { return nil }
    if csv, let text = value as? String { value = parse(text) ?? text }
    guard (value is NSNumber && !Formatting.isJSONBool(value)) || (csv && value is String) else {
      throw fields.wrongType(name.key, expected: .described(expected()))
    }
    guard let number = (value as? NSNumber)?.doubleValue, range.contains(number) else {
      throw failure(
        "\(item): '\(name.key)' is '\(SafeText.excerpt("\(value)"))'; expected \(expected())")
    }
    return number
  }

  /// The unit option `name`'s range is stated in (`pixels`), from the library's table.
  private static func unit(_ name: OptionName) -> String {
    PrepareOption.allCases.first { $0.names == name }?.entry.unit ?? "units"
  }
}
