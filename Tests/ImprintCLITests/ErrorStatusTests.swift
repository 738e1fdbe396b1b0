// SPDX-License-Identifier: Apache-2.0
// ImprintCLITests: every error says the HTTP status the service answers it with, and each
// case's is the one the service answered before errors said their own (when it chose most of
// them by the code's prefix).

import Foundation
import ImprintCards
import ImprintCore
import ImprintGraphics
import ImprintHTTP
import ImprintNetwork
import ImprintPricing
import ImprintPrinting
import ImprintQR
import ImprintTestSupport
import Testing

@testable import ImprintBatch
@testable import ImprintDocuments
@testable import ImprintService

/// The status the service answered an error with before errors said their own, written out
/// again: `HTTPError`'s and `ServiceError`'s tables by code, 500 for the server's and a job's
/// own errors, and for the rest the rule on the code (400 `json.*` and `*.notJSON`, 404
/// `template.notFound`, 422 `file.escapesFolder`, 413 `file.tooLarge`, 503
/// `document.officeUnavailable`, 500 the other `file.*`, 422 the rest).
private func formerStatus(_ error: any ImprintError) -> Int {
  if error is JobError || error is ServerError { return 500 }
  if error is HTTPError { return httpStatuses[error.code] ?? 0 }
  if error is ServiceError { return serviceStatuses[error.code] ?? 0 }
  return formerStatus(code: error.code)
}

private func formerStatus(code: String) -> Int {
  if code.hasPrefix("json.") || code.hasSuffix(".notJSON") { return 400 }
  if code == "template.notFound" { return 404 }
  if code == "file.escapesFolder" { return 422 }
  if code == "file.tooLarge" { return 413 }
  if code == "document.officeUnavailable" { return 503 }
  if code.hasPrefix("file.") { return 500 }
  return 422
}

private let httpStatuses: [String: Int] = [
  "http.bodyTooLarge": 413, "http.bodiesBusy": 503, "http.ambiguousFraming": 400,
  "http.malformedRequest": 400, "http.headTooLarge": 431, "http.headTimeout": 408,
  "http.requestTimeout": 408, "http.unsupportedVersion": 505,
  "http.unsupportedTransferCoding": 501, "http.expectationFailed": 417, "http.invalidPath": 400,
  "http.malformedMultipart": 400, "http.tooManyParts": 413, "http.partTooLarge": 413,
  "http.invalidPartName": 400, "http.unsupportedPartEncoding": 415, "http.busy": 503,
  "http.deadlineExceeded": 503, "http.stopping": 503, "service.invalidAddress": 500,
  "service.listen": 500,
]

private let serviceStatuses: [String: Int] = [
  "http.notFound": 404, "http.methodNotAllowed": 405, "http.unsupportedMediaType": 415,
  "http.unsupportedCharset": 415, "http.invalidParameter": 400, "http.missingParameter": 400,
  "http.unknownPart": 400, "http.missingPart": 400, "http.duplicatePart": 400,
  "http.unknownPriceList": 404, "http.unknownJob": 404, "http.unknownJobFile": 404,
  "http.jobQueueFull": 503, "http.jobTooLarge": 413, "http.jobStorageFull": 507,
  "http.tooManyLines": 413, "http.emptyManifest": 422, "http.printerNotAllowed": 422,
  "http.callbackRefused": 422, "http.unknownPrinter": 404, "http.printerAddressRefused": 422,
  "http.invalidIdempotencyKey": 400, "http.idempotencyKeyReused": 422,
  "http.idempotencyKeyInUse": 409, "http.idempotentJobGone": 410, "http.unauthorized": 401,
]

/// A file error of each status: a file the server could not read, one too large, a path out.
private let fileErrors: [FileError] = [
  .notFound(path: "a"), .tooLarge(path: "a", bytes: 9, limit: 1),
  .escapesFolder(path: "../a", folder: "f", what: "file"),
]

/// At least one value of every case of every error type, by its type's name and the file
/// that declares it.
private let errors: [(type: String, file: String, values: [any ImprintError])] = [
  (
    "FileError", "ImprintCore/ImprintError.swift",
    [
      FileError.notFound(path: "a"), FileError.isDirectory(path: "a"),
      FileError.unreadable(path: "a", reason: .system(EIO)),
      FileError.unwritable(path: "a", reason: "closed"), FileError.notUTF8(path: "a", line: 1),
      FileError.notRegularFile(path: "a", kind: .fifo),
      FileError.tooLarge(path: "a", bytes: nil, limit: 1),
      FileError.lineTooLong(path: "a", line: 1, limit: 1),
      FileError.escapesFolder(path: "../a", folder: "f", what: "file"),
      FileError.outputIsInput(path: "a"), FileError.folderNotFound(path: "a", setting: "S"),
      FileError.outputCollision(path: "a", first: "b", second: "c"),
    ]
  ),
  (
    "CSVError", "ImprintCore/CSVReader.swift",
    [
      CSVError.recordTooLong(path: "a", line: 1, limit: 1),
      CSVError.unclosedQuote(path: "a", line: 1), CSVError.strayQuote(path: "a", line: 1),
      CSVError.notUTF8(path: "a", line: 1),
    ] + fileErrors.map(CSVError.file)
  ),
  (
    "JSONError", "ImprintCore/StrictJSON.swift",
    [
      JSONError.syntax(source: "a", line: 1, column: 1, expected: "x", found: "y"),
      JSONError.duplicateKey(source: "a", key: "k", line: 1, column: 1),
      JSONError.tooDeep(source: "a", line: 1, column: 1, limit: 1),
      JSONError.numberOutOfRange(source: "a", line: 1, column: 1),
      JSONError.notUTF8(source: "a", line: 1, column: 1), JSONError.empty(source: "a"),
    ]
  ),
  (
    "CardError", "ImprintCards/CardError.swift",
    [
      CardError.profileNotJSON(source: "a", detail: "d"),
      CardError.accountNotFound(source: "a", account: nil, text: "t"),
      CardError.accountUnavailable(source: "a", account: "x", text: "t"),
      CardError.noAccount(source: "a", found: "{}"), CardError.missingAccountName(source: "a"),
      CardError.templateNotFound(name: "t", available: []),
      CardError.invalidTemplate(template: "t", key: "k", problem: "p"),
      CardError.missingAsset(template: "t", key: "k", path: "p"),
      CardError.missingGlyphs(field: "f", text: "t", count: 1),
      CardError.photo(source: "a", reason: "r"), CardError.photoNotSandboxed(source: "a"),
      CardError.unknownLocale(identifier: "xx"),
      CardError.untranslatedLocale(identifier: "xx", template: "t", available: []),
    ] + fileErrors.map(CardError.file)
  ),
  (
    "ImageError", "ImprintGraphics/ImageDecoder.swift",
    [
      ImageError.unsupportedType(source: "a", found: "f"),
      ImageError.damaged(source: "a", reason: "r"),
      ImageError.tooLarge(source: "a", width: 1, height: 1, maximumPixels: 0),
      ImageError.outOfMemory(source: "a"), ImageError.unsupportedVariant(source: "a", reason: "r"),
      ImageError.decoderUnavailable(source: "a", library: "l", reason: "r"),
    ]
  ),
  (
    "GraphicsError", "ImprintGraphics/GraphicsError.swift",
    [
      GraphicsError.cairo(operation: "o", status: "s"), GraphicsError.pngEncode(reason: "r"),
      GraphicsError.jpegEncode(reason: "r"), GraphicsError.fontsUnavailable(reason: "r"),
      GraphicsError.rasterTooLarge(width: 1, height: 1, maximumPixels: 0),
      GraphicsError.textSize(size: "nan"),
      GraphicsError.textTooLarge(pixels: 70000, maximumPixels: 65535),
    ]
  ),
  (
    "QRError", "ImprintQR/QRError.swift",
    [
      QRError.emptyPayload(source: "a"),
      QRError.invalidEthereumAddress(address: "a", reason: "r"),
      QRError.ethereumChecksumMismatch(address: "a", positions: [1]),
      QRError.invalidBitcoinAddress(address: "a", reason: "r"),
      QRError.invalidAmount(field: .amount, value: "v", expected: "e"),
      QRError.invalidOption(option: .module, value: "v", expected: "e"),
      QRError.invertedColors(foreground: .white, background: .black),
      QRError.lowContrast(foreground: .black, background: .black, ratio: 1, minimum: 3),
      QRError.unknownFormat("f"), QRError.payloadNotUTF8(source: "a"),
      QRError.amountOutOfRange(field: .amount, value: "v", maximum: "m"),
      QRError.imageTooLarge(width: 1, height: 1, limit: 0),
      QRError.payloadTooLarge(bytes: 2, level: "H", maximum: 1),
      QRError.encode(reason: "r", errno: ENOMEM),
    ]
  ),
  (
    "PricingError", "ImprintPricing/PricingError.swift",
    [
      PricingError.invalidJSON(.empty(source: "a")),
      PricingError.invalidField(source: "a", field: "f", value: "v", expected: "e"),
      PricingError.unknownKey(source: "a", field: "f"),
      PricingError.unknownCurrency(source: "a", code: "XXX"),
      PricingError.negativePrice(source: "a", field: "f", value: -1),
      PricingError.missingRate(file: "a", paper: "A4", color: "mono", sides: "simplex"),
      PricingError.missingPaperPrice(file: "a", paper: "A4", paperType: "plain"),
      PricingError.unknownExtra(file: "a", extra: "e", offered: []),
      PricingError.rangeOutsideDocument(file: "a", range: "2", pages: 1),
      PricingError.noCardPrice(source: "a"),
      PricingError.outOfRange(source: "a", field: "f", value: "v", expected: "e"),
      PricingError.overflow(source: "a", what: "w"), PricingError.unknownLocale(identifier: "xx"),
    ] + fileErrors.map(PricingError.file)
  ),
  (
    "DocumentError", "ImprintDocuments/DocumentError.swift",
    [
      DocumentError.empty(file: "a"), DocumentError.unsupportedType(file: "a", found: "f"),
      DocumentError.damaged(file: "a", reason: "r"),
      DocumentError.encrypted(file: "a", passwordGiven: false), DocumentError.noPages(file: "a"),
      DocumentError.countMismatch(file: "a", declared: nil, found: 1),
      DocumentError.pageTreeCycle(file: "a"), DocumentError.brokenXref(file: "a"),
      DocumentError.imageBomb(
        file: "a", page: 1, width: 1, height: 1, megabytes: 2, maximumMB: 1),
      DocumentError.pageTooLarge(file: "a", page: 1, widthMM: 2, heightMM: 2, maximumMM: 1),
      DocumentError.emptyPage(file: "a", page: 1),
      DocumentError.image(.damaged(source: "a", reason: "r")),
      DocumentError.badPageRange(file: "a", range: "x"),
      DocumentError.pageOutOfRange(file: "a", page: 2, pages: 1),
      DocumentError.cpuLimit(file: "a", seconds: 1),
      DocumentError.memoryLimit(file: "a", megabytes: 1),
      DocumentError.timeout(file: "a", seconds: 1), DocumentError.canceled(file: "a"),
      DocumentError.fileChanged(file: "a"), DocumentError.workerCrashed(file: "a", detail: "d"),
      DocumentError.badOutput(file: "a", detail: "d"),
      DocumentError.changedSinceQuote(file: "a", quotedPages: 1, pages: 2),
      DocumentError.prepareFailed(file: "a", reason: "r"),
      DocumentError.printNotAllowed(file: "a"),
      DocumentError.impressionsMismatch(file: "a", quoted: 1, prepared: 2),
      DocumentError.previewSize(size: 1), DocumentError.officeUnavailable(detail: "d"),
      DocumentError.officeUnreadable(file: "a"),
      DocumentError.officeEncrypted(file: "a", passwordGiven: true),
      DocumentError.conversionFailed(file: "a", detail: "d"),
      DocumentError.tooManyPages(file: "a", pages: 2, maximum: 1),
      DocumentError.notOffice(file: "a", found: "f"),
      DocumentError.officeDamaged(file: "a", container: .zip),
    ]
  ),
  (
    "PDFOpenFailure", "ImprintDocuments/PDFDocument.swift",
    [PDFOpenFailure.encrypted, PDFOpenFailure.damaged("d"), PDFOpenFailure.invalid("i")]
  ),
  (
    "WorkerProtocolError", "ImprintDocuments/Sandbox/WorkerProtocol.swift",
    [WorkerProtocolError.malformedRequest, WorkerProtocolError.unknownOperation(name: "n")]
  ),
  (
    "ImposeError", "ImprintBatch/Imposition.swift",
    [
      ImposeError.noCards, ImposeError.doesNotFit(stock: "A4"),
      ImposeError.sizeMismatch(id: "j", size: (1, 1), expected: (2, 2)),
    ]
  ),
  (
    "BatchError", "ImprintBatch/BatchRunner.swift",
    [
      BatchError.noSandbox(id: "j"), BatchError.badShard("x"), BatchError.noShardEnvironment,
      BatchError.shardsMissing(folder: "f", detail: "d"),
      BatchError.shardMismatch(folder: "f", detail: "d"),
      BatchError.resultUnreadable(file: "a", line: 1, reason: "r"),
    ]
  ),
  (
    "JobError", "ImprintService/JobError.swift",
    [
      JobError.canceled(id: "j", ended: 0), JobError.timeLimit(id: "j", seconds: 1, ended: 0),
      JobError.diskLimit(id: "j", bytes: 2, held: 0, limit: 1),
      JobError.interrupted(id: "j", ended: 0),
      JobError.itemStopped(id: "j", item: "i", code: "file.tooLarge", reason: "r"),
      JobError.leftRunning(
        id: "j", kind: .batch, seconds: 1, ended: 0, sent: 0, prepared: 0, sending: 0),
      JobError.lost(id: "j", kind: .prepare, was: "running", ended: 0),
      JobError.unreadable(id: "j", reason: "r"),
    ]
  ),
  (
    "ServerError", "ImprintService/ServerError.swift",
    [
      ServerError.stopIncomplete(stuck: "s", seconds: 1),
      ServerError.invalidToken(source: "a", problem: "p"),
      ServerError.invalidWebhookSecret(source: "a", problem: "p"),
      ServerError.invalidSetting(file: "a", key: "k", problem: "p"),
      ServerError.jobsFolderInUse(folder: "f"),
    ]
  ),
  (
    "HTTPError", "ImprintHTTP/HTTPError.swift",
    [
      HTTPError.bodyTooLarge(path: "/p", bytes: 2, limit: 1),
      HTTPError.jsonTooLarge(path: "/p", bytes: nil, limit: 1),
      HTTPError.bodiesBusy(path: "/p", bytes: 2, held: 1, limit: 2),
      HTTPError.ambiguousFraming(path: "/p", found: "f"),
      HTTPError.malformedRequest(problem: "p"), HTTPError.headTooLarge(limit: 1, fields: 2),
      HTTPError.headTimeout(seconds: 1), HTTPError.bodyTimeout(path: "/p", seconds: 1),
      HTTPError.unsupportedVersion(found: "HTTP/2"),
      HTTPError.unsupportedTransferCoding(path: "/p", coding: "gzip"),
      HTTPError.expectationFailed(path: "/p", found: "f"),
      HTTPError.invalidPath(path: "/p", problem: "p"),
      HTTPError.malformedMultipart(path: "/p", problem: "p"),
      HTTPError.tooManyParts(path: "/p", limit: 1),
      HTTPError.partTooLarge(path: "/p", part: "a", limit: 1),
      HTTPError.invalidPartName(path: "/p", name: "n", what: "w", limit: 1),
      HTTPError.partNamesNoFile(path: "/p", name: "n"),
      HTTPError.unsupportedPartEncoding(path: "/p", part: "a", encoding: "e"),
      HTTPError.busy(queued: 1), HTTPError.deadlineExceeded(path: "/p", seconds: 1),
      HTTPError.stopping, HTTPError.stoppedWhileWorking(path: "/p", seconds: 1),
      HTTPError.invalidAddress("a"),
      HTTPError.listen(address: "a", call: "bind", errno: EADDRINUSE),
    ]
  ),
  (
    "PrintError", "ImprintPrinting/PrintError.swift",
    [
      PrintError.unreachable(printer: "p", detail: "d"),
      PrintError.refused(file: "a", printer: "p", detail: "d"),
      PrintError.unconfirmed(file: "a", printer: "p", jobID: 1, journal: "j"),
      PrintError.journalDamaged(path: "j", reason: "r"),
      PrintError.claimedByAnother(file: "a", part: "whole"),
      PrintError.unclaimed(file: "a", part: "whole", reason: "r"),
      PrintError.partlySent(file: "a", sent: [], parts: 2, now: 1, journal: "j"),
      PrintError.jobEnded(
        file: "a", printer: "p", jobID: 1, state: "canceled", reasons: [], message: nil),
      PrintError.jobEnded(
        file: "a", printer: "p", jobID: 1, state: "aborted", reasons: [], message: nil),
      PrintError.waitTimedOut(file: "a", printer: "p", jobID: 1, state: "s", seconds: 1),
      PrintError.jobUnknown(file: "a", printer: "p", jobID: 1),
      PrintError.unknownPrinter(printer: "p", scheduler: "s"),
      PrintError.unauthorized(printer: "p", user: nil, detail: "d"),
      PrintError.passwordFile(path: "a", problem: "p"),
      PrintError.insecureCredentials(printer: "p"),
    ]
  ),
  (
    "NetworkError", "ImprintNetwork/NetworkError.swift",
    [
      NetworkError.photoDownload(url: "u", reason: "r"),
      NetworkError.photoAddressRefused(url: "u", detail: "d", never: true),
    ]
  ),
  (
    "ServiceError", "ImprintService/ServiceError.swift",
    [
      ServiceError.notFound(method: "GET", path: "/x"),
      ServiceError.methodNotAllowed(method: "PUT", path: "/x", allowed: ["GET"]),
      ServiceError.unsupportedMediaType(path: "/x", found: nil, expected: ["application/json"]),
      ServiceError.unsupportedCharset(path: "/x", found: "latin1"),
      ServiceError.invalidParameter(name: "n", problem: "p"),
      ServiceError.unknownParameter(name: "n", known: []),
      ServiceError.missingParameter(name: "n", route: "/x"),
      ServiceError.unknownPart(path: "/x", name: "n", expected: ["a"]),
      ServiceError.missingPart(path: "/x", name: "n"),
      ServiceError.duplicatePart(path: "/x", name: "n"),
      ServiceError.unknownPriceList(name: "n", available: []), ServiceError.unknownJob(id: "j"),
      ServiceError.unknownJobFile(id: "j", path: "p"), ServiceError.jobQueueFull(queued: 1),
      ServiceError.jobTooLarge(bytes: 2, limit: 1),
      ServiceError.jobStorageFull(bytes: 2, held: 1, limit: 2),
      ServiceError.tooManyLines(lines: 2, limit: 1), ServiceError.emptyManifest(part: "m"),
      ServiceError.printerNotAllowed(line: 1, id: "j"),
      ServiceError.callbackRefused(url: "u", reason: "r"),
      ServiceError.unknownPrinter(name: "n", available: []),
      ServiceError.printerAddressRefused(given: "ipp://x", available: []),
      ServiceError.invalidIdempotencyKey(problem: "p"),
      ServiceError.idempotencyKeyReused(key: "k", id: "j"),
      ServiceError.idempotencyKeyInUse(key: "k"), ServiceError.idempotentJobGone(key: "k", id: "j"),
      ServiceError.unauthorized(path: "/x", presented: false),
    ]
  ),
]

/// The names of the cases `type` declares in `file` (its lines `  case name...`).
private func declaredCases(of type: String, in file: String) throws -> Set<String> {
  let text = try String(contentsOfFile: repositoryRoot + "/Sources/" + file, encoding: .utf8)
  let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
  guard let start = lines.firstIndex(where: { $0.hasPrefix("public enum \(type):") }) else {
    return []
  }
  let declaration = try Regex(#"^  case ([a-zA-Z0-9]+)"#)
  var names: Set<String> = []
  for line in lines[start...].dropFirst() {
    if line == "}" { break }
    if let match = line.firstMatch(of: declaration), let name = match.output[1].substring {
      names.insert(String(name))
    }
  }
  return names
}

/// The case of `value`: its label, or (a case without values has none) its code.
private func caseName(_ value: any ImprintError) -> String {
  Mirror(reflecting: value).children.first?.label ?? "code " + value.code
}

@Suite("Every error says its HTTP status", .liveHandlesChecked)
struct ErrorStatusTests {
  @Test("each case of each error type has the status the service answered it with")
  func everyCase() throws {
    var count = 0
    for (type, _, values) in errors {
      for value in values {
        count += 1
        #expect(value.status == formerStatus(value), "\(type) \(value.code)")
        #expect(ServiceStatus.of(value) == value.status, "\(type) \(value.code)")
      }
    }
    #expect(count > 200)
    // The structs: a system call's error (a cause), the decoders' errors.
    var structs: [any ImprintError] = [SystemError(ENOSPC)]
    if case .failure(let error) = Base58.decode("0") { structs.append(error) }
    if case .failure(let error) = Bech32.decode("bc1notvalid") { structs.append(error) }
    #expect(structs.count == 3)
    for error in structs {
      #expect(error.status == formerStatus(error) && error.status == 422, "\(error.code)")
    }
    // A nested error's status is its own: a file too large, a path out, a file unreadable.
    #expect(fileErrors.map(\.status) == [500, 413, 422])
    #expect(CSVError.file(.tooLarge(path: "a", bytes: 2, limit: 1)).status == 413)
    #expect(
      DocumentError.image(.tooLarge(source: "a", width: 1, height: 1, maximumPixels: 0)).status
        == 422)
    #expect(DocumentError.officeUnavailable(detail: "d").status == 503)
  }

  @Test("the values above hold every case each error type declares")
  func everyCaseListed() throws {
    for (type, file, values) in errors {
      let declared = try declaredCases(of: type, in: file)
      #expect(declared.count >= 2, "\(type): no cases found in \(file)")
      let listed = Set(values.map(caseName))
      let labelled = listed.filter { !$0.hasPrefix("code ") }
      let bare = listed.count - labelled.count
      // Every case with values is listed by name; the cases without values, by their count.
      #expect(labelled.isSubset(of: declared), "\(type): \(labelled.subtracting(declared))")
      #expect(labelled.count + bare == declared.count, "\(type): \(declared.subtracting(listed))")
    }
  }

  @Test("an error known by its code alone has the status of the error it restates")
  func restated() throws {
    let restated: [any ImprintError] =
      [
        JSONError.empty(source: "a"), CardError.profileNotJSON(source: "a", detail: "d"),
        CardError.templateNotFound(name: "t", available: []),
        DocumentError.officeUnavailable(detail: "d"), CSVError.unclosedQuote(path: "a", line: 1),
      ] + fileErrors
    for error in restated {
      let code = error.code
      #expect(ErrorStatus.of(code: code) == formerStatus(code: code), "\(code)")
      // A document worker's report.
      #expect(ReportedError(record: ErrorRecord(error)).status == formerStatus(code: code))
      // A manifest line's error.
      #expect(ManifestLineError(line: 1, error).status == formerStatus(code: code), "\(code)")
    }
    #expect(ManifestLineError(line: 1, id: nil, message: "m").status == 422)
    // A rewritten message keeps the status of the error it stands for.
    let unknown = ServiceError.unknownJob(id: "/jobs/1/x")
    let shown = ImprintService.withoutFolders(unknown, ["/jobs/1"])
    #expect(shown is RecordedError && ServiceStatus.of(shown) == 404)
    #expect(RecordedError(record: ErrorRecord(unknown), status: 404).status == 404)
    // An error that is not Imprint's is the server's fault.
    #expect(ServiceStatus.of(CancellationError()) == 500)
  }
}
