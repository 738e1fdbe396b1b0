// SPDX-License-Identifier: Apache-2.0
// ImprintBatchTests: manifest lines read with Core's strict object reader: a field of the wrong
// type, or a key the manifest does not know, is that line's error; CSV rows as before.

import Foundation
import ImprintBatch
import ImprintDocuments
import ImprintPrinting
import ImprintQR
import ImprintTestSupport
import Testing

/// The items and line errors of the manifest `text`, written as `name` in a new folder.
private func read(_ text: String, name: String = "m.jsonl") throws
  -> [Result<ManifestItem, ManifestLineError>]
{
  let folder = TemporaryFolder()
  try Data(text.utf8).write(to: URL(fileURLWithPath: folder.file(name)))
  var reader = try ManifestReader(path: folder.file(name))
  var items: [Result<ManifestItem, ManifestLineError>] = []
  while let item = reader.next() { items.append(item) }
  return items
}

extension ManifestItem {
  fileprivate var qr: QRItem? {
    if case .qr(let qr) = work { return qr }
    return nil
  }
  fileprivate var thumb: ThumbItem? {
    if case .thumb(let thumb) = work { return thumb }
    return nil
  }
  fileprivate var print: PrintItem? {
    if case .print(let print) = work { return print }
    return nil
  }
}

/// A print item's required fields.
private let printFields = #""kind":"print","file":"o.json","prices":"p.json""#

@Suite("Manifest fields, read strictly", .liveHandlesChecked)
struct ManifestFieldTests {
  @Test(
    "a field of the wrong type fails its line, naming the manifest, line, field, expected and found",
    arguments: [
      // A string for a number.
      (
        #""kind":"card","profile":"p.json","copies":"3""#,
        "'copies' is '3'; expected 1 to 10000"
      ),
      // A number for a string (was read as no format: a PNG).
      (#""kind":"qr","payload":"x","format":42"#, "'format' is 42; expected a string"),
      // An array (was read as no template: the classic design).
      (
        #""kind":"card","profile":"p.json","template":["classic"]"#,
        "'template' is an array; expected a string"
      ),
      // An object for a path (was read as no photo: the placeholder).
      (
        #""kind":"card","profile":"p.json","photo":{"file":"a.jpg"}"#,
        "'photo' is an object; expected a string"
      ),
      // A boolean for a count.
      (
        #""kind":"card","profile":"p.json","copies":false"#,
        "'copies' is false; expected 1 to 10000"
      ),
      // A number for a ZIP code (its leading zeros would be lost).
      (
        #""kind":"card","profile":"p.json","shipTo":{"name":"A","address":"B","zip":2134}"#,
        "'shipTo.zip' is 2134; expected a string"
      ),
      (
        #""kind":"card","profile":"p.json","shipTo":"A, B""#,
        "'shipTo' is 'A, B'; expected an object"
      ),
      (#""kind":7,"payload":"x""#, "'kind' is 7; expected card, qr, thumb, quote or print"),
      (#""kind":"card","profile":7"#, "'profile' is 7; expected a path or a profile object"),
    ])
  func wrongType(fields: String, message: String) throws {
    let items = try read(
      #"{"id":"j",\#(fields)}"# + "\n" + #"{"id":"ok","kind":"qr","payload":"y"}"#)
    #expect(items.count == 2)
    guard case .failure(let error) = items.first else {
      Issue.record("\(fields) must fail its line")
      return
    }
    #expect(error.code == "batch.invalidField", "\(error.message)")
    #expect(error.message == "manifest 'm.jsonl': item 'j' (line 1): " + message)
    #expect(error.line == 1 && error.id == "j")
    // The next line is read as usual.
    guard case .success(let job) = items.last else {
      Issue.record("the next line must be a job")
      return
    }
    #expect(job.id == "ok" && job.line == 2)
  }

  @Test("null is an absent field, as in templates and orders; a required one is then missing")
  func null() throws {
    let items = try read(
      [
        #"{"id":"a","kind":null,"payload":"x"}"#,
        #"{"id":"b","kind":"qr","payload":null}"#,
        #"{"id":"c","kind":"qr","payload":"x","format":null,"template":null,"shipTo":null}"#,
        #"{"id":"d","kind":"card","profile":"p.json","template":null,"shipTo":null}"#,
      ].joined(separator: "\n"))
    let messages = items.map { item -> String? in
      if case .failure(let error) = item { return "\(error.code): \(error.message)" }
      return nil
    }
    #expect(
      messages[0]
        == "batch.badLine: manifest 'm.jsonl': item 'a' (line 1): 'kind' is missing; expected "
        + "card, qr, thumb, quote or print")
    #expect(
      messages[1]
        == "batch.badLine: manifest 'm.jsonl': item 'b' (line 2): a qr item needs 'payload'"
    )
    guard case .success(let job) = items[2] else {
      Issue.record("nulls must read as absent")
      return
    }
    #expect(job.qr?.format == .png)
    #expect(items[3].map { $0.card?.template == nil && $0.shipTo == nil } == .success(true))
  }

  @Test("a key nobody reads is refused, in shipTo too (not dropped from the label)")
  func unknownKeys() throws {
    let items = try read(
      [
        #"{"id":"a","kind":"qr","payload":"x","colour":"red"}"#,
        #"{"id":"b","kind":"card","profile":"p.json","shipTo":{"name":"A","address":"B","country":"SE"}}"#,
        #"{"id":"c","kind":"card","profile":"p.json","shipTo":{"name":"A","address":"B","zip":"02134"}}"#,
      ].joined(separator: "\n"))
    let errors = items.compactMap { item -> ManifestLineError? in
      if case .failure(let error) = item { return error }
      return nil
    }
    #expect(errors.map(\.code) == ["batch.badLine", "batch.badLine"])
    #expect(
      errors.first?.message == "manifest 'm.jsonl': item 'a' (line 1): 'colour' is not a known key")
    #expect(
      errors.last?.message
        == "manifest 'm.jsonl': item 'b' (line 2): 'shipTo.country' is not a known key")
    guard case .success(let job) = items.last else {
      Issue.record("a full shipTo must be read")
      return
    }
    #expect(job.shipTo?.name == "A" && job.shipTo?.address == "B")
    #expect(job.shipTo?.zip == "02134" && job.shipTo?.email == nil)
  }

  @Test("CSV rows keep their reading: every field is text, copies a number or the row's error")
  func csv() throws {
    let items = try read(
      "id,kind,profile,copies,template,zip,name,address\n"
        + "a,card,p.json,3,42,02134,A,B\n"
        + "b,card,p.json,three,,,,\n"
        + "7,card,p.json,,,,,\n",
      name: "m.csv")
    guard case .success(let first) = items[0] else {
      Issue.record("row 2 must be a job")
      return
    }
    // Numbers in text columns stay text: a template named 42, ZIP code 02134.
    #expect(first.card?.copies == 3 && first.card?.template == "42")
    #expect(first.shipTo?.zip == "02134")
    guard case .failure(let error) = items[1] else {
      Issue.record("row 3 must fail")
      return
    }
    #expect(error.code == "batch.badLine")
    #expect(
      error.message
        == "manifest 'm.csv': item 'b' (line 3): 'copies' is 'three'; expected 1 to 10000")
    guard case .success(let last) = items[2] else {
      Issue.record("row 4 must be a job")
      return
    }
    #expect(last.id == "7")
  }

  @Test("CSV: a printer column is read on print rows; on another kind's row only when empty")
  func csvPrinterColumn() throws {
    let items = try read(
      "id,kind,payload,file,prices,printer\n"
        + "q,qr,x,,,\n"
        + "r,qr,y,,,front-desk\n"
        + "p,print,,o.json,p.json,front-desk\n",
      name: "m.csv")
    guard case .success(let qr) = items[0], case .failure(let error) = items[1],
      case .success(let print) = items[2]
    else {
      Issue.record("rows 2 and 4 must be jobs, row 3 its error: \(items)")
      return
    }
    #expect(qr.kind == .qr && print.print?.printer == "front-desk")
    #expect(error.code == "batch.badLine")
    #expect(
      error.message
        == "manifest 'm.csv': item 'r' (line 3): 'printer' is for print items, not qr items")
  }

  @Test(
    "payloadType and format are read once, as the kind's enum; another value fails its line",
    arguments: [
      (
        #""kind":"qr","payload":"x","payloadType":"ethereum""#,
        "'payloadType' is 'ethereum'; expected text, eth or btc"
      ),
      (
        #""kind":"qr","payload":"x","payloadType":"ETH""#,
        "'payloadType' is 'ETH'; expected text, eth or btc"
      ),
      (
        #""kind":"qr","payload":"x","format":"gif""#,
        "'format' is 'gif'; expected png, svg, pdf, eps or text"
      ),
      (
        #""kind":"qr","payload":"x","format":"jpeg""#,
        "'format' is 'jpeg'; expected png, svg, pdf, eps or text"
      ),
      (#""kind":"thumb","file":"a.pdf","format":"svg""#, "'format' is 'svg'; expected png or jpeg"),
    ])
  func unknownChoice(fields: String, message: String) throws {
    let items = try read(
      #"{"id":"j",\#(fields)}"# + "\n" + #"{"id":"ok","kind":"qr","payload":"y"}"#)
    guard case .failure(let error) = items.first else {
      Issue.record("\(fields) must fail its line")
      return
    }
    #expect(error.code == "batch.badLine")
    #expect(error.message == "manifest 'm.jsonl': item 'j' (line 1): " + message)
    guard case .success = items.last else {
      Issue.record("the next line must be a job")
      return
    }
  }

  @Test("each name reads as its case; absent or an empty CSV cell is text and PNG")
  func choices() throws {
    let lines = [
      #"{"id":"a","kind":"qr","payload":"x"}"#,
      #"{"id":"b","kind":"qr","payload":"x","payloadType":"text","format":"text"}"#,
      #"{"id":"c","kind":"qr","payload":"x","payloadType":"eth","format":"svg"}"#,
      #"{"id":"d","kind":"qr","payload":"x","payloadType":"btc","format":"eps"}"#,
      #"{"id":"e","kind":"thumb","file":"a.pdf","format":"jpeg"}"#,
    ]
    let jobs = try read(lines.joined(separator: "\n")).map { try $0.get() }
    #expect(jobs.map(\.qr?.payloadType) == [.text, .text, .ethereum, .bitcoin, nil])
    #expect(jobs.map(\.qr?.format) == [.png, .text, .svg, .eps, nil])
    #expect(jobs.map(\.thumb?.format) == [nil, nil, nil, nil, .jpeg])
    let csv = try read(
      "id,kind,payload,payloadType,format\na,qr,x,,\nb,qr,y,btc,pdf\n", name: "m.csv"
    ).map { try $0.get() }
    #expect(csv.map(\.qr?.payloadType) == [.text, .bitcoin])
    #expect(csv.map(\.qr?.format) == [.png, .pdf])
  }

  @Test("a print job's prepare options: each read as `imprint prepare` reads its flags")
  func printOptions() throws {
    let printer = #""printer":"ipp://localhost:631/ipp/print""#
    let lines = [
      #"{"id":"a",\#(printFields)}"#,
      #"{"id":"b",\#(printFields),"splitColor":true,"previews":true}"#,
      #"{"id":"c",\#(printFields),"previews":true,"previewSize":128,"splitColor":false}"#,
      #"{"id":"d",\#(printFields),\#(printer),"monoPrinter":"ipp://m:631/ipp/print","wait":true,"waitTimeout":2.5}"#,
      #"{"id":"e",\#(printFields),\#(printer),"wait":false}"#,
      #"{"id":"f",\#(printFields),"previews":false,"wait":false}"#,
    ]
    let jobs = try read(lines.joined(separator: "\n")).map { try $0.get() }
    let prints = jobs.compactMap(\.print)
    #expect(prints.map(\.options.splitColor) == [false, true, false, false, false, false])
    // Previews at 400 px unless a size is given; none without `previews`.
    #expect(prints.map(\.options.previewSize) == [nil, 400, 128, nil, nil, nil])
    #expect(prints.map(\.monoPrinter) == [nil, nil, nil, "ipp://m:631/ipp/print", nil, nil])
    #expect(prints.map(\.wait) == [nil, nil, nil, true, false, false])
    #expect(prints.map(\.waitTimeout) == [nil, nil, nil, 2.5, nil, nil])
    // CSV: the flags as the text true or false, the numbers as text.
    let csv = try read(
      "id,kind,file,prices,printer,splitColor,previews,previewSize,wait,waitTimeout\n"
        + "a,print,o.json,p.json,ipp://h/ipp/print,true,true,64,true,30\n"
        + "b,print,o.json,p.json,,false,,,,\n",
      name: "m.csv"
    ).map { try $0.get().print }
    #expect(csv.map { $0?.options.splitColor } == [true, false])
    #expect(csv.map { $0?.options.previewSize } == [64, nil])
    #expect(csv.map { $0?.wait } == [true, nil] && csv.map { $0?.waitTimeout } == [30, nil])
  }

  @Test(
    "a print option of the wrong type, out of range, alone or on another kind fails its line",
    arguments: [
      (
        #",\#(printFields),"splitColor":"yes""#, "batch.invalidField",
        "'splitColor' is 'yes'; expected true or false"
      ),
      (
        #",\#(printFields),"previews":1"#, "batch.invalidField",
        "'previews' is 1; expected true or false"
      ),
      (
        #",\#(printFields),"previews":true,"previewSize":"big""#, "batch.invalidField",
        "'previewSize' is 'big'; expected 16 to 2048 pixels, a whole number"
      ),
      (
        #",\#(printFields),"previews":true,"previewSize":4096"#, "batch.badLine",
        "'previewSize' is '4096'; expected 16 to 2048 pixels, a whole number"
      ),
      (
        #",\#(printFields),"previews":true,"previewSize":100.5"#, "batch.badLine",
        "'previewSize' is '100.5'; expected a whole number of pixels"
      ),
      (
        #",\#(printFields),"previewSize":200"#, "batch.badLine",
        "'previewSize' needs \"previews\": true"
      ),
      (
        #",\#(printFields),"monoPrinter":"ipp://m/ipp/print""#, "batch.badLine",
        "'monoPrinter' needs 'printer' (the printer the files are sent to)"
      ),
      (
        #",\#(printFields),"wait":true"#, "batch.badLine",
        "'wait' needs 'printer' (the printer the files are sent to)"
      ),
      (
        #",\#(printFields),"printer":"ipp://h/ipp/print","waitTimeout":60"#, "batch.badLine",
        "'waitTimeout' needs \"wait\": true"
      ),
      (
        #",\#(printFields),"printer":"ipp://h/ipp/print","wait":true,"waitTimeout":-1"#,
        "batch.badLine", "'waitTimeout' is '-1'; expected 0 to 86400 seconds"
      ),
      (
        #",\#(printFields),"printer":"ipp://h/ipp/print","wait":true,"waitTimeout":true"#,
        "batch.invalidField", "'waitTimeout' is true; expected 0 to 86400 seconds"
      ),
      (
        #","kind":"quote","file":"o.json","prices":"p.json","splitColor":true"#, "batch.badLine",
        "'splitColor' is for print items, not quote items"
      ),
      (
        #","kind":"qr","payload":"x","wait":false"#, "batch.badLine",
        "'wait' is for print items, not qr items"
      ),
      (
        #","kind":"quote","file":"o.json","prices":"p.json","printer":"ipp://h/ipp/print""#,
        "batch.badLine", "'printer' is for print items, not quote items"
      ),
      (
        #","kind":"quote","file":"o.json","prices":"p.json","filesRoot":"uploads""#,
        "batch.badLine", "'filesRoot' is for print items, not quote items"
      ),
      (
        #","kind":"thumb","file":"a.pdf","printer":"front-desk""#, "batch.badLine",
        "'printer' is for print items, not thumb items"
      ),
      (#",\#(printFields),"preview":true"#, "batch.badLine", "'preview' is not a known key"),
    ])
  func badPrintOption(fields: String, code: String, message: String) throws {
    let items = try read(
      #"{"id":"j"\#(fields)}"# + "\n" + #"{"id":"ok","kind":"qr","payload":"y"}"#)
    guard case .failure(let error) = items.first else {
      Issue.record("\(fields) must fail its line")
      return
    }
    #expect(error.code == code, "\(error.message)")
    #expect(error.message == "manifest 'm.jsonl': item 'j' (line 1): " + message)
    #expect(error.line == 1 && error.id == "j")
    guard case .success = items.last else {
      Issue.record("the next line must be a job")
      return
    }
  }

  @Test("CSV: a flag that is not true or false, a size that is not a number, fail their row")
  func csvPrintOptions() throws {
    let items = try read(
      "id,kind,file,prices,splitColor,previews,previewSize\n"
        + "a,print,o.json,p.json,yes,,\n"
        + "b,print,o.json,p.json,,true,large\n",
      name: "m.csv")
    let messages = items.map { item -> String? in
      if case .failure(let error) = item { return error.message }
      return nil
    }
    #expect(
      messages == [
        "manifest 'm.csv': item 'a' (line 2): 'splitColor' is 'yes'; expected true or false",
        "manifest 'm.csv': item 'b' (line 3): 'previewSize' is 'large'; expected 16 to 2048 "
          + "pixels, a whole number",
      ])
  }

  /// Each key a kind reads, with a value of the right type, and the kinds that read it
  /// (written out here from docs/batch.md, not from the reader's table).
  static let keyOwners: [(key: String, value: String, kinds: [String])] = [
    ("copies", "2", ["card"]), ("profile", #""p.json""#, ["card"]),
    ("template", #""classic""#, ["card"]), ("photo", #""a.jpg""#, ["card"]),
    ("followCounts", #""f.json""#, ["card"]), ("locale", #""ko""#, ["card"]),
    ("payload", #""x""#, ["qr"]),
    ("payloadType", #""eth""#, ["qr"]), ("format", #""png""#, ["qr", "thumb"]),
    ("file", #""a.pdf""#, ["thumb", "quote", "print"]),
    ("prices", #""p.json""#, ["quote", "print"]),
    ("filesRoot", #""u""#, ["print"]), ("printer", #""front-desk""#, ["print"]),
    ("monoPrinter", #""mono""#, ["print"]), ("splitColor", "true", ["print"]),
    ("previews", "true", ["print"]), ("previewSize", "64", ["print"]), ("wait", "false", ["print"]),
    ("waitTimeout", "5", ["print"]),
  ]

  @Test("a print item's keys are the library's tables': the order, QuoteOption's, PrepareOption's")
  func printKeysAreTheTables() {
    let printKeys = Self.keyOwners.filter { $0.kinds.contains("print") }.map(\.key)
    let tables =
      ["file"] + [QuoteOption.prices, .filesRoot].map(\.names.key)
      + PrepareOption.manifest.map(\.names.key)
    #expect(Set(printKeys) == Set(tables))
    #expect(Self.keyOwners.filter { $0.kinds == ["quote", "print"] }.map(\.key) == ["prices"])
  }

  /// The fields each kind needs.
  static let required: [String: String] = [
    "card": #""profile":"p.json""#, "qr": #""payload":"x""#, "thumb": #""file":"a.pdf""#,
    "quote": #""file":"o.json","prices":"p.json""#, "print": #""file":"o.json","prices":"p.json""#,
  ]

  @Test("a key another kind reads fails its line, naming the kinds that read it; JSON and CSV")
  func foreignKeys() throws {
    var lines: [String] = []
    var expected: [String?] = []
    for (key, value, owners) in Self.keyOwners {
      for kind in ["card", "qr", "thumb", "quote", "print"] {
        let base = Self.required[kind]!
        if base.contains("\"\(key)\"") { continue }
        lines.append(#"{"id":"j\#(lines.count)","kind":"\#(kind)",\#(base),"\#(key)":\#(value)}"#)
        let readers =
          owners.count == 1
          ? owners[0] : owners.dropLast().joined(separator: ", ") + " and " + owners.last!
        expected.append(
          owners.contains(kind)
            ? nil
            : "manifest 'm.jsonl': item 'j\(lines.count - 1)' (line \(lines.count)): '\(key)' is "
              + "for \(readers) items, not \(kind) items")
      }
    }
    let items = try read(lines.joined(separator: "\n"))
    #expect(items.count == lines.count)
    for (item, message) in zip(items, expected) {
      switch item {
      case .failure(let error):
        // An owner's line may fail for its own reasons (a monoPrinter without a printer), never
        // as a foreign key.
        if let message {
          #expect(error.message == message)
          #expect(error.code == "batch.badLine")
        } else {
          #expect(!error.message.contains("items, not"), "\(error.message)")
        }
      case .success(let made):
        #expect(message == nil, "line \(made.line) must fail: \(message ?? "")")
      }
    }
    // Counted by hand: 6 card keys × 4 kinds, payload and payloadType × 4, format × 3, file
    // × 2, prices × 3, 8 print keys × 4.
    #expect(expected.compactMap { $0 }.count == 72)
    // CSV: a filled cell of another kind's column fails the row; an empty one is absent.
    let csv = try read(
      "id,kind,payload,profile,name,address,format\n"
        + "a,qr,x,,,,svg\n"
        + "b,qr,x,p.json,,,\n"
        + "c,qr,x,,Mara,Hamngatan 4,\n"
        + "d,card,,p.json,,,png\n",
      name: "m.csv")
    let messages = csv.map { item -> String? in
      if case .failure(let error) = item { return error.message }
      return nil
    }
    #expect(
      messages == [
        nil,
        "manifest 'm.csv': item 'b' (line 3): 'profile' is for card items, not qr items",
        // Anything made can be mailed: shipTo is every kind's.
        nil,
        "manifest 'm.csv': item 'd' (line 5): 'format' is for qr and thumb items, not card items",
      ])
  }
}
