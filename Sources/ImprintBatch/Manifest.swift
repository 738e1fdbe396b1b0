// SPDX-License-Identifier: Apache-2.0
// ImprintBatch: manifests (JSON Lines or CSV with a header), read one line at a time.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting
import ImprintQR

/// What a job makes.
public enum JobKind: String, Sendable, Codable, CaseIterable {
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

/// One job of a manifest.
///
/// Paths are resolved against the manifest's folder (or the inputs root) and confined to it:
/// see `ManifestReader.init(path:inputsRoot:)`.
public struct ManifestJob: Sendable, Equatable {
  /// The 1-based line of the manifest (the header of a CSV is line 1).
  public var line: Int
  /// The job's id, unique in the manifest.
  public var id: String
  /// What it makes.
  public var kind: JobKind
  /// Copies (cards on sheets, card-printer pages).
  public var copies: Int
  /// card: the profile file, or the inline profile object as JSON bytes.
  public var profile: String?
  /// card: the inline profile, serialised.
  public var inlineProfile: [UInt8]?
  /// card: the template name or file.
  public var template: String?
  /// card: the photo file.
  public var photo: String?
  /// card: a get_follow_count result file.
  public var followCounts: String?
  /// card: the card's language (BCP 47); the template's own when nil.
  public var locale: String?
  /// qr: the payload; `payloadType` says what it is.
  public var payload: String?
  /// qr: what the payload is, read from `payloadType` (`text`, `eth` or `btc`); nil is text.
  public var payloadType: QRPayloadKind?
  /// thumb, quote and print: the input file (an upload, or an order).
  public var file: String?
  /// quote and print: the price list.
  public var prices: String?
  /// print: the folder the order's files are relative to and confined to (nil: the order's
  /// folder).
  public var filesRoot: String?
  /// print: the printer the prepared files are sent to, an IPP URI or a CUPS queue name (nil:
  /// prepared only).
  public var printer: String?
  /// print: the printer the monochrome files are sent to instead of `printer`, an IPP URI or a
  /// CUPS queue name (nil: all to `printer`), as `imprint prepare --mono-printer`.
  public var monoPrinter: String?
  /// print: whether each `auto` colour file is split into its colour and monochrome files, as
  /// `imprint prepare --split-color`.
  public var splitColor = false
  /// print: the previews' box in pixels when the job draws each sheet side (`previews`, with
  /// `previewSize` or 400), nil for none, as `imprint prepare --previews --preview-size`.
  public var previewSize: Int?
  /// print: whether the job follows its printer jobs to their end (nil: the batch's `--wait`).
  public var wait: Bool?
  /// print: how long it waits for them, in seconds (nil: the batch's `--wait-timeout`).
  public var waitTimeout: Double?
  /// qr: the code's format, read from `format` (`png`, `svg`, `pdf`, `eps` or `text`); nil is
  /// PNG.
  public var qrFormat: QRFormat?
  /// thumb: the thumbnail's format, read from `format` (`png` or `jpeg`); nil is PNG.
  public var thumbnailFormat: ThumbnailFormat?
  /// card orders: the shipping address.
  public var shipTo: ShipTo?
  /// The line's text, for the resume fingerprint.
  public var source: String
}

/// A manifest record that is not a job: that job's error (the others run).
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

/// The records of a manifest, before they are read as jobs.
enum ManifestRecord {
  /// A JSON Lines object.
  case object([String: Any], line: Int, source: String)
  /// A CSV data row with its header.
  case row([String], header: [String], line: Int, source: String)
  /// A record that cannot be a job.
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
/// strictly (a repeated key is that job's error) and its fields read with Core's
/// `JSONObjectReader`: a field of the wrong type (`"copies": "2"`, `"format": 1`, a number for
/// a ZIP code) is that job's `batch.invalidField`, a key the manifest does not know (in
/// `shipTo` too) its `batch.badLine`, and `null` an absent field. CSV (`.csv`): RFC 4180 with a
/// header row, every field text; a job's line is the line its record starts on.
public struct ManifestReader: ~Copyable {
  private let source: any ManifestSource
  /// The folder the job's relative paths are joined to and confined to.
  private let folder: String
  /// What an absolute path in the manifest may name.
  private let absolutePaths: ConfinedPath.AbsolutePaths
  /// The manifest's path.
  public let name: String
  /// The manifest's name in every message: `init`'s `displayName`, else its file name.
  public let display: String

  /// Opens `path` (`.csv` files are CSV with a header; anything else is JSON Lines).
  ///
  /// The files a job names (profile, photo, follow counts, template file, upload, order, price
  /// list) are confined (`ConfinedPath`): a relative path is joined to the manifest's folder
  /// and may not leave it (`..`, or a link leading out, fails that job with
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

  /// The next job, or the error of a bad record; nil at the end.
  public mutating func next() -> Result<ManifestJob, ManifestLineError>? {
    switch source.next() {
    case nil: return nil
    case .failure(let error): return .failure(error)
    case .object(let object, let line, let source):
      return job(object, line: line, source: source, csv: false)
    case .row(let fields, let header, let line, let source):
      var object: [String: Any] = [:]
      var ship: [String: Any] = [:]
      for (index, key) in header.enumerated() where index < fields.count && !fields[index].isEmpty {
        switch key {
        case "name", "email", "address", "zip": ship[key] = fields[index]
        case "copies", "previewSize": object[key] = Int(fields[index]) ?? fields[index]
        case "waitTimeout": object[key] = Double(fields[index]) ?? fields[index]
        default: object[key] = fields[index]
        }
      }
      if !ship.isEmpty { object["shipTo"] = ship }
      return job(object, line: line, source: source, csv: true)
    }
  }

  /// The records of the manifest that are jobs or job errors (what `next()` returns).
  ///
  /// Counted without making jobs, for a progress display; zero when it cannot be read.
  public static func count(path: String) -> Int {
    guard let reader = try? ManifestReader(path: path) else { return 0 }
    var count = 0
    while reader.source.skip() { count += 1 }
    return count
  }

  /// A job's path joined to the folder and confined to it (nil when absent or empty).
  private func resolve(_ path: String?, _ what: String) throws(FileError) -> String? {
    guard let path, !path.isEmpty else { return nil }
    return try ConfinedPath.resolve(path, root: folder, absolute: absolutePaths, what: what)
  }

  static let knownKeys = Set<String>(
    [
      "id", "kind", "copies", "profile", "template", "photo", "followCounts", "payload",
      "payloadType", "file", "prices", "format", "shipTo", "locale", "filesRoot", "printer",
    ] + printOptionKeys)

  /// The keys only a print job reads (how `imprint prepare` prepares and prints), refused on
  /// the other kinds.
  static let printOptionKeys: [String] = [
    "monoPrinter", "splitColor", "previews", "previewSize", "wait", "waitTimeout",
  ]

  /// The job of one record, or its error (this line's alone) when the record is not a job.
  ///
  /// - Parameters:
  ///   - object: the record's fields.
  ///   - line: the line it starts on.
  ///   - source: its text, for the fingerprint.
  ///   - csv: whether the record is a CSV row, whose fields are all text (a `copies` that is
  ///     not a number is then a value out of range, not a field of the wrong type).
  /// - Returns: the job, or the line's error.
  private func job(_ object: [String: Any], line: Int, source: String, csv: Bool)
    -> Result<ManifestJob, ManifestLineError>
  {
    do throws(ManifestLineError) {
      return .success(try readJob(object, line: line, source: source, csv: csv))
    } catch {
      return .failure(error)
    }
  }

  /// Reads a record's fields with Core's strict `JSONObjectReader`.
  ///
  /// A field of the wrong type is the line's `batch.invalidField` error, naming the manifest,
  /// the line, the field, what was expected and what was found; a key the manifest does not
  /// know (in `shipTo` too) is its `batch.badLine` error. `null` is an absent field, as in
  /// templates and orders.
  private func readJob(_ object: [String: Any], line: Int, source: String, csv: Bool)
    throws(ManifestLineError) -> ManifestJob
  {
    let display = display
    // The id first, so that every later message names the job. A number is accepted as its
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
        "job '\(SafeText.excerpt(id))' (line \(line)): 'id' may hold only letters, digits, '-', "
          + "'_' and '.'")
    }
    let job = "job '\(id)' (line \(line))"
    if let unknown = object.keys.sorted().first(where: { !Self.knownKeys.contains($0) }) {
      throw failure("\(job): '\(SafeText.excerpt(unknown))' is not a known key")
    }
    var fields = try JSONObjectReader(
      object, source: display, path: "",
      makeError: { problem in
        switch problem.kind {
        case .unknownKey:
          failure("\(job): '\(SafeText.excerpt(problem.field))' is not a known key")
        case .wrongType(let expected):
          failure(
            "\(job): '\(SafeText.excerpt(problem.field))' is "
              + "\(JSONFieldProblem.describe(problem.value)); expected \(expected.phrase)",
            code: "batch.invalidField")
        }
      })
    _ = fields.value("id")
    let kinds = "card, qr, thumb, quote or print"
    let kindValue = fields.value("kind")
    guard let kindText = kindValue as? String, let kind = JobKind(rawValue: kindText) else {
      if kindValue != nil && !(kindValue is String) {
        throw fields.wrongType("kind", expected: .described(kinds))
      }
      throw failure(
        "\(job): 'kind' is \(kindValue.map { "'\(SafeText.excerpt("\($0)"))'" } ?? "missing"); "
          + "expected \(kinds)")
    }
    var copies = 1
    if let value = fields.value("copies") {
      let isNumber = value is NSNumber && !Formatting.isJSONBool(value)
      guard isNumber || (csv && value is String) else {
        throw fields.wrongType("copies", expected: .described("1 to 10000"))
      }
      guard isNumber, let count = (value as? NSNumber).flatMap({ Int(exactly: $0.doubleValue) }),
        (1...10_000).contains(count)
      else {
        throw failure("\(job): 'copies' is '\(SafeText.excerpt("\(value)"))'; expected 1 to 10000")
      }
      copies = count
    }
    var made = ManifestJob(
      line: line, id: id, kind: kind, copies: copies, profile: nil, inlineProfile: nil,
      template: try fields.string("template"), photo: nil, followCounts: nil,
      payload: try fields.string("payload"), file: nil, prices: nil, shipTo: nil, source: source)
    // Named by the kind's enum below; empty (a blank CSV cell) is absent.
    let payloadType = try fields.string("payloadType").flatMap { $0.isEmpty ? nil : $0 }
    let format = try fields.string("format").flatMap { $0.isEmpty ? nil : $0 }
    made.locale = try fields.string("locale").flatMap { $0.isEmpty ? nil : $0 }
    let photo = try fields.string("photo")
    let followCounts = try fields.string("followCounts")
    let file = try fields.string("file")
    let prices = try fields.string("prices")
    let filesRoot = try fields.string("filesRoot")
    made.printer = try fields.string("printer").flatMap { $0.isEmpty ? nil : $0 }
    if kind == .print {
      try readPrintOptions(&fields, into: &made, job: job, csv: csv, failure: { failure($0) })
    } else if let key = (["printer", "filesRoot"] + Self.printOptionKeys).first(where: {
      fields.has($0)
    }) {
      // Read by print jobs alone: another kind would ignore it silently (a quote job's files
      // are confined to its order's folder, and nothing else prints).
      throw failure("\(job): '\(key)' is for print jobs only")
    }
    var profilePath: String?
    switch fields.value("profile") {
    case nil: break
    case let path as String: profilePath = path
    case let inline as [String: Any]:
      made.inlineProfile = (try? JSONSerialization.data(withJSONObject: inline)).map { [UInt8]($0) }
    default: throw fields.wrongType("profile", expected: .described("a path or a profile object"))
    }
    do throws(FileError) {
      made.photo = try resolve(photo, "photo")
      made.followCounts = try resolve(followCounts, "follow counts file")
      made.file = try resolve(file, kind == .quote || kind == .print ? "order" : "file")
      made.prices = try resolve(prices, "price list")
      made.filesRoot = try resolve(filesRoot, "files root")
      if let template = made.template, template.contains("/") || template.hasSuffix(".json") {
        made.template = try resolve(template, "template")
      }
      if let profilePath { made.profile = try resolve(profilePath, "profile") }
    } catch {
      throw ManifestLineError(
        line: line, id: id, message: "manifest '\(display)': \(job): \(error.message)",
        code: error.code, hint: error.hint, cause: error.underlying.map(ErrorCause.init))
    }
    if var ship = try fields.child("shipTo") {
      guard let name = try ship.string("name"), let address = try ship.string("address") else {
        throw failure("\(job): 'shipTo' needs 'name' and 'address'")
      }
      made.shipTo = ShipTo(
        name: name, email: try ship.string("email"), address: address, zip: try ship.string("zip"))
      try ship.finish()
    }
    // Every other key was refused above.
    try fields.finish()
    switch kind {
    case .card where made.profile == nil && made.inlineProfile == nil:
      throw failure("\(job): a card needs 'profile'")
    case .qr where (made.payload ?? "").isEmpty:
      throw failure("\(job): a qr job needs 'payload'")
    case .thumb where made.file == nil:
      throw failure("\(job): a thumb job needs 'file'")
    case .quote where made.file == nil || made.prices == nil:
      throw failure("\(job): a quote job needs 'file' (the order) and 'prices'")
    case .print where made.file == nil || made.prices == nil:
      throw failure("\(job): a print job needs 'file' (the order) and 'prices'")
    default: break
    }
    // The value `text` of `field` names among `Value`'s cases (nil when absent).
    func choice<Value: CaseIterable>(
      _ field: String, _ text: String?, names: (Value) -> String
    ) throws(ManifestLineError) -> Value? {
      guard let text else { return nil }
      guard let value = Value.allCases.first(where: { names($0) == text }) else {
        let expected = Formatting.alternatives(Value.allCases.map(names))
        throw failure("\(job): '\(field)' is '\(SafeText.excerpt(text))'; expected \(expected)")
      }
      return value
    }
    // Each kind reads the fields it uses (a card or quote job ignores a format, as before).
    switch kind {
    case .qr:
      made.payloadType = try choice("payloadType", payloadType, names: \QRPayloadKind.shortName)
      made.qrFormat = try choice("format", format, names: \QRFormat.rawValue)
    case .thumb:
      made.thumbnailFormat = try choice("format", format, names: \ThumbnailFormat.rawValue)
    case .card, .quote, .print: break
    }
    return made
  }

  /// Reads a print job's options: `monoPrinter`, `splitColor`, `previews` with `previewSize`,
  /// `wait` with `waitTimeout` (what `imprint prepare` takes besides the order, prices, files
  /// root and printer).
  ///
  /// Each is checked as the command line checks it: a flag is `true` or `false` (in CSV the
  /// text `true` or `false`), `previewSize` a whole number of pixels in
  /// `OrderPreparer.previewSizes` that needs `previews`, `waitTimeout` seconds in
  /// `PrintTarget.waitSecondsRange` that needs `"wait": true`; `monoPrinter` and `wait` need
  /// `printer` (`PrepareRequest.conflict`).
  private func readPrintOptions(
    _ fields: inout JSONObjectReader<ManifestLineError>, into made: inout ManifestJob,
    job: String, csv: Bool, failure: (String) -> ManifestLineError
  ) throws(ManifestLineError) {
    func flag(_ name: String) throws(ManifestLineError) -> Bool? {
      if csv, let text = fields.value(name) as? String {
        guard let value = ["true": true, "false": false][text] else {
          throw failure("\(job): '\(name)' is '\(SafeText.excerpt(text))'; expected true or false")
        }
        return value
      }
      return try fields.bool(name)
    }
    // A number in its range; in CSV a cell that is not a number is out of range too.
    func number(_ name: String, _ range: ClosedRange<Double>, _ expected: String)
      throws(ManifestLineError) -> Double?
    {
      guard let value = fields.value(name) else { return nil }
      guard (value is NSNumber && !Formatting.isJSONBool(value)) || (csv && value is String) else {
        throw fields.wrongType(name, expected: .described(expected))
      }
      guard let number = (value as? NSNumber)?.doubleValue, range.contains(number) else {
        throw failure(
          "\(job): '\(name)' is '\(SafeText.excerpt("\(value)"))'; expected \(expected)")
      }
      return number
    }
    made.monoPrinter = try fields.string("monoPrinter").flatMap { $0.isEmpty ? nil : $0 }
    var asked = PrepareRequest()
    asked.splitColor = try flag("splitColor") ?? false
    asked.previews = try flag("previews") ?? false
    let sizes = OrderPreparer.previewSizes
    let size = try number(
      "previewSize", Double(sizes.lowerBound)...Double(sizes.upperBound),
      "\(sizes.lowerBound) to \(sizes.upperBound) pixels, a whole number")
    if let size, size.rounded() != size {
      throw failure("\(job): 'previewSize' is '\(size)'; expected a whole number of pixels")
    }
    asked.previewSize = size.map { Int($0) }
    asked.printer = made.printer != nil
    asked.monoPrinter = made.monoPrinter != nil
    asked.wait = try flag("wait")
    let waits = PrintTarget.waitSecondsRange
    asked.waitTimeout = try number(
      "waitTimeout", waits,
      "\(Int(waits.lowerBound)) to \(Int(waits.upperBound)) seconds")
    // The library's rule, worded as the manifest's fields (the command line words it as flags).
    switch asked.conflict() {
    case nil: break
    case .previewSizeWithoutPreviews:
      throw failure("\(job): 'previewSize' needs \"previews\": true")
    case .waitTimeoutWithoutWait:
      throw failure("\(job): 'waitTimeout' needs \"wait\": true")
    case let conflict?:
      throw failure(
        "\(job): '\(conflict.option.rawValue)' needs 'printer' (the printer the files are sent "
          + "to)")
    }
    made.splitColor = asked.splitColor
    made.previewSize = asked.options.previewSize
    made.wait = asked.wait
    made.waitTimeout = asked.waitTimeout
  }
}
