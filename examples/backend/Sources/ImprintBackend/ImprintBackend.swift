// SPDX-License-Identifier: Apache-2.0
// ImprintBackend: what a server does with Imprint, from 64 tasks at once, every result checked:
// cards, QR codes, quotes, and uploads inspected and thumbnailed by document workers that this
// executable hosts itself. Exits 0 when every check passes, 1 otherwise (naming each failure).

import Foundation
import ImprintCards
import ImprintDocuments
import ImprintGraphics
import ImprintPricing
import ImprintQR

/// A request the server handles, and what it must produce.
enum Work: Sendable {
  case cardPDF(design: String)
  case cardPNG(design: String)
  case qr(payload: String)
  case quote
  case upload(index: Int)

  static func of(_ index: Int) -> Work {
    let designs = ["classic", "midnight", "moderator"]
    switch index % 5 {
    case 0: return .cardPDF(design: designs[index % 3])
    case 1: return .cardPNG(design: designs[index % 3])
    case 2: return .qr(payload: "https://example.org/order/\(index)")
    case 3: return .quote
    default: return .upload(index: index)
    }
  }
}

/// The folder the sample order's files are relative to (`examples`, holding `uploads/`), found
/// from this source file: a real server keeps its customers' uploads in a folder of its own.
let filesRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// A folder of this run's own files, removed at the end.
let scratch = FileManager.default.temporaryDirectory
  .appendingPathComponent("imprint-backend-\(getpid())").path

/// The document sandbox: its workers are this executable, started again as `__worker`.
let sandbox = DocumentSandbox(executable: DocumentSandbox.currentExecutable)

struct Failure: Error, CustomStringConvertible {
  var description: String
}

func check(_ condition: Bool, _ what: @autoclosure () -> String) throws {
  if !condition { throw Failure(description: what()) }
}

/// The width and height in a PNG's header.
func pngSize(_ bytes: [UInt8]) throws -> (width: Int, height: Int) {
  try check(
    bytes.count > 24 && bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
    "not a PNG")
  func be32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
  return (be32(16), be32(20))
}

/// The number of page objects in a PDF written by Imprint (`/Type /Page`, not `/Pages`).
func pdfPageCount(_ bytes: [UInt8]) throws -> Int {
  try check(bytes.starts(with: Array("%PDF-".utf8)), "not a PDF")
  let text = String(decoding: bytes, as: UTF8.self)
  return text.components(separatedBy: "/Type /Page").dropFirst().filter { !$0.hasPrefix("s") }
    .count
}

let profileJSON = Array(
  #"""
  {"id":2210451,"name":"layla-h","json_metadata":"","posting_json_metadata":"{\"profile\":{\"name\":\"ليلى حداد\",\"about\":\"كاتبة ومصممة — writer and type designer\",\"location\":\"عمّان\",\"version\":2}}","created":"2019-12-31T22:45:00","post_count":97,"reputation":"10004392664120"}
  """#.utf8)

let priceListJSON = Array(
  #"""
  {
    "schemaVersion": 1, "store": "BOOSTER Campus Print (Sinchon)", "version": "2026-11-01",
    "currency": "KRW",
    "rates": {
      "default": { "mono": { "simplex": 50, "duplex": 40 }, "color": { "simplex": 300, "duplex": 250 } },
      "A3": { "mono": { "simplex": 100, "duplex": 80 }, "color": { "simplex": 600, "duplex": 500 } }
    },
    "paper": { "A4": { "plain": 10, "heavy": 40 }, "A3": { "plain": 20 }, "Letter": { "plain": 10 } },
    "tiers": [{ "fromImpressions": 200, "percent": -10 }],
    "extras": {
      "staple": { "per": "copy", "amount": 100 },
      "hole-punch": { "per": "sheet", "amount": 5 },
      "binding": { "per": "job", "amount": 2000 }
    },
    "adjustments": [{ "name": "student discount", "percent": -5 }],
    "minimumOrder": 500, "tax": { "percent": 10, "included": true }, "blankPages": "paper-only",
    "rounding": "half-up", "roundTo": 10,
    "defaults": { "color": "auto", "duplex": "none", "nUp": 1, "paper": "A4", "paperType": "plain", "copies": 1 },
    "cards": { "oneSided": 3000, "twoSided": 4000 }
  }
  """#.utf8)

let orderJSON = Array(
  #"""
  {
    "schemaVersion": 1, "store": "BOOSTER Campus Print (Sinchon)",
    "files": [
      { "path": "uploads/course-notes.pdf", "copies": 2, "duplex": "long-edge", "extras": ["staple"] },
      { "path": "uploads/handout.pdf", "copies": 30, "color": "mono" },
      { "path": "uploads/poster-photo.jpg", "paper": "A3", "paperType": "plain", "color": "color" }
    ],
    "cards": { "count": 1, "sides": "both" }
  }
  """#.utf8)

/// A card PDF, as a customer would upload it.
func cardPDF(design: String) throws -> [UInt8] {
  let template = try CardTemplate.shipped(named: design)
  let profile = try Profile.parse(profileJSON, source: "layla-h.json")
  // No photo: the placeholder shipped with Imprint.
  let input = try CardInput(profile: profile, template: template, photo: nil)
  return try CardMaker.pdf(input, options: CardOptions()).bytes
}

/// Handles one request and checks its result; returns a line for the log.
func handle(_ work: Work) async throws -> String {
  switch work {
  case .cardPDF(let design):
    let bytes = try cardPDF(design: design)
    let pages = try pdfPageCount(bytes)
    try check(pages == 2, "card PDF (\(design)) has \(pages) pages, expected 2")
    return "card \(design): PDF, \(pages) pages, \(bytes.count) bytes"
  case .cardPNG(let design):
    let template = try CardTemplate.shipped(named: design)
    let profile = try Profile.parse(profileJSON, source: "layla-h.json")
    // The customer's photo is a stranger's file: decoded by the sandbox's workers.
    let photo = [UInt8](
      try Data(contentsOf: URL(fileURLWithPath: filesRoot + "/uploads/poster-photo.jpg")))
    let input = try await CardInput(
      profile: profile, template: template, photo: (photo, "poster-photo.jpg"),
      placeholder: try CardInput.shippedPlaceholder(), decoder: sandbox)
    try check(
      input.photo.width > 0 && input.photo.jpeg == photo, "the photo did not decode as a JPEG")
    let options = CardOptions()
    let card = try CardMaker.png(input, face: .front, options: options)
    let (width, height) = try pngSize(card.bytes)
    let size = CardMaker.pageSize(template, options: options)
    let expected = (Int((size.width * 300 / 72).rounded()), Int((size.height * 300 / 72).rounded()))
    try check(
      (width, height) == expected,
      "card PNG (\(design)) is \(width) x \(height) pixels, expected \(expected.0) x \(expected.1)")
    return "card \(design): PNG \(width) x \(height)"
  case .qr(let payload):
    var style = QRStyle()
    style.caption = payload
    // The call `imprint qr` makes: the payload built (and checked), then rendered.
    let (_, code) = try QRSettings(kind: .text, style: style).make(
      payload, format: .png, source: "order link")
    let (width, height) = try pngSize(code.bytes)
    let side = (code.matrix.size + 2 * style.quietZone) * style.modulePixels
    try check(width == side, "QR PNG is \(width) pixels wide, expected \(side)")
    try check(height > width, "QR PNG has no caption below the code (\(width) x \(height))")
    return "qr version \(code.matrix.version): PNG \(width) x \(height)"
  case .quote:
    // The request's body and the store's list, read as `imprint quote` reads its files; then
    // the one order pipeline `imprint quote` and batch quote jobs use: the store checked, the
    // files confined to their root and read in the sandbox, priced.
    let prices = try PriceList.parse(priceListJSON, source: "prices.json")
    let order = try Order.parse(orderJSON, source: "order.json")
    let quoted = try await OrderQuoter(sandbox: sandbox).quote(
      order, prices: prices, filesRoot: filesRoot, explicitRoot: false,
      orderSource: "order.json", pricesSource: "prices.json")
    let notes = quoted.files.first { $0.file == "uploads/course-notes.pdf" }
    try check(
      notes?.facts.pages == 3,
      "course-notes.pdf has \(notes?.facts.pages ?? 0) pages, expected 3")
    let quote = quoted.quote
    try check(
      quote.total.minor == 6880 && quote.currency == "KRW",
      "quote total is \(quote.total.formatted), expected KRW 6,880")
    // The same order sent to another store is refused before any file is read.
    var elsewhere = order
    elsewhere.store = "BOOSTER Campus Print (Hongdae)"
    do {
      _ = try await OrderQuoter(sandbox: sandbox).quote(
        elsewhere, prices: prices, filesRoot: filesRoot, explicitRoot: false)
      throw Failure(description: "an order for another store was quoted")
    } catch let error as PricingError {
      try check(error.code == "pricing.invalidField", "another store's order: \(error.code)")
    }
    return "quote: \(quote.total.formatted)"
  case .upload(let index):
    // An upload checked and thumbnailed by a worker process, never parsed in this one.
    let bytes = try cardPDF(design: "classic")
    let info = try await sandbox.inspect(bytes: bytes, file: "upload-\(index).pdf")
    try check(info.pages == 2, "upload-\(index).pdf: \(info.pages) pages, expected 2")
    let path = scratch + "/upload-\(index).pdf"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let written = try await sandbox.thumbnails(
      path: path, file: "upload-\(index).pdf", pages: "all", size: 128, format: .png,
      output: scratch + "/upload-\(index).png")
    try check(written.count == 2, "upload-\(index).pdf: \(written.count) thumbnails, expected 2")
    for thumbnail in written {
      let (width, height) = try pngSize(
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: thumbnail))))
      try check(
        max(width, height) == 128,
        "\(thumbnail) is \(width) x \(height), expected 128 on its long side")
    }
    return "upload \(index): 2 pages, 2 thumbnails"
  }
}

@main
struct ImprintBackend {
  static func main() async {
    // First thing: when the sandbox started this executable as a document worker, serve.
    DocumentWorker.runIfWorker()
    var failures: [String] = []
    try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    // The resources come from the bundles SwiftPM put beside this executable, never from the
    // working directory (which may hold an unrelated assets/fonts).
    let beside = Bundle.main.bundleURL.path + "/Imprint_"
    for (what, folder) in [
      ("fonts", FontLibrary.bundledFolder), ("templates", CardTemplate.shippedFolder),
    ] {
      if let folder, folder.hasPrefix(beside) {
        print("\(what): \(folder)")
      } else {
        failures.append("\(what) not found in Imprint's resource bundle: \(folder ?? "none")")
      }
    }
    let names = CardTemplate.shippedNames
    if names != ["classic", "midnight", "moderator"] {
      failures.append("shipped designs are \(names), expected classic, midnight, moderator")
    }
    let results = await withTaskGroup(of: (Int, Result<String, any Error>).self) { group in
      for index in 0..<64 {
        group.addTask {
          do { return (index, .success(try await handle(Work.of(index)))) } catch {
            return (index, .failure(error))
          }
        }
      }
      var results: [(Int, Result<String, any Error>)] = []
      for await result in group { results.append(result) }
      return results.sorted { $0.0 < $1.0 }
    }
    for (index, result) in results {
      switch result {
      case .success(let line): print("task \(index): \(line)")
      case .failure(let error): failures.append("task \(index): \(error)")
      }
    }
    try? FileManager.default.removeItem(atPath: scratch)
    if failures.isEmpty {
      print("ok: 64 tasks")
    } else {
      for failure in failures {
        FileHandle.standardError.write(Data("failed: \(failure)\n".utf8))
      }
      exit(1)
    }
  }
}
