// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the words of the service's own errors: counts that agree with their
// number, and the headers an answer carries.

import ImprintCore
import ImprintHTTP
import ImprintPrinting
import ImprintTestSupport
import Testing

@testable import ImprintService

@Suite("imprint serve: error wording", .liveHandlesChecked, .onTestThreads)
struct ErrorWordingTests {
  @Test(
    "counts agree with their number: 1 request, 2 requests",
    arguments: [
      (
        HTTPError.busy(queued: 1) as any ImprintError,
        "every worker is busy and the queue is full (1 request waiting)"
      ),
      (
        HTTPError.busy(queued: 2), "every worker is busy and the queue is full (2 requests waiting)"
      ),
      (
        ServiceError.jobQueueFull(queued: 1),
        "the server holds 1 job queued or running, the most it takes"
      ),
      (
        ServiceError.jobQueueFull(queued: 8),
        "the server holds 8 jobs queued or running, the most it takes"
      ),
      (
        ServiceError.tooManyLines(lines: 2, limit: 1),
        "the manifest has more than 1 line; a job may have 1"
      ),
      (ServiceError.tooManyLines(lines: 1, limit: 1), "the manifest has 1 line; a job may have 1"),
      (
        HTTPError.tooManyParts(path: "/v1/batch", limit: 1),
        "the multipart body of '/v1/batch' has more than 1 part"
      ),
    ])
  func counts(error: any ImprintError, message: String) {
    #expect(error.message == message)
  }

  @Test("the words of a count: the singular for 1 alone")
  func count() {
    #expect(Formatting.count(1, "job") == "1 job")
    #expect(Formatting.count(0, "job") == "0 jobs")
    #expect(Formatting.count(2, "request") == "2 requests")
    #expect(Formatting.count(3, "copy", plural: "copies") == "3 copies")
  }

  @Test("a key in use is answered 409 with Retry-After: 1, as the other answers to retry are")
  func keyInUse() {
    let answer = HTTPResponse.error(ServiceError.idempotencyKeyInUse(key: "k-1"))
    #expect(answer.status == 409)
    #expect(answer.headers.filter { $0.0 == "Retry-After" }.map(\.1) == ["1"])
    #expect(ServiceError.idempotencyKeyInUse(key: "k-1").hint?.contains("Retry-After") == true)
  }
}

@Suite("multipart boundaries as RFC 2046 allows them", .liveHandlesChecked, .onTestThreads)
struct BoundaryTests {
  @Test(
    "a boundary of 1 to 70 bchars, as a token or quoted, in a parameter of any case",
    arguments: [
      ("multipart/form-data; boundary=b", "b"),
      ("multipart/form-data; boundary=\"b\"", "b"),
      (
        "multipart/form-data;boundary=----WebKitFormBoundary7MA4YWxk",
        "----WebKitFormBoundary7MA4YWxk"
      ),
      ("multipart/form-data; BOUNDARY=abc; charset=utf-8", "abc"),
      ("multipart/form-data; charset=utf-8; boundary=\"a:b c'()+_,-./=?\"", "a:b c'()+_,-./=?"),
      (
        "multipart/form-data; boundary=" + String(repeating: "x", count: 70),
        String(repeating: "x", count: 70)
      ),
    ])
  func legal(value: String, boundary: String) {
    #expect(HTTPMessageHeaders.boundary(value) == boundary)
  }

  @Test(
    "no boundary, one too long, of other characters, ending in a space, or given twice is none",
    arguments: [
      "multipart/form-data", "multipart/form-data; charset=utf-8", "multipart/form-data; boundary=",
      "multipart/form-data; boundary=\"\"",
      "multipart/form-data; boundary=" + String(repeating: "x", count: 71),
      "multipart/form-data; boundary=a@b", "multipart/form-data; boundary=\"a b \"",
      "multipart/form-data; boundary=\"abc", "multipart/form-data; boundary=a; boundary=b",
      "multipart/form-data; boundary=\"ab\" x", "multipart/form-data; boundary=é",
    ])
  func refused(value: String) {
    #expect(HTTPMessageHeaders.boundary(value) == nil)
  }

  @Test("a printer's errors are answered with their own status, also once their paths are shown")
  func printErrorStatus() {
    let errors: [PrintError] = [
      .unreachable(printer: "front", detail: "cups: No route"),
      .journalDamaged(path: "/jobs/1/print-journal.json", reason: "not a print journal"),
    ]
    for error in errors {
      #expect(ServiceStatus.of(error) == error.status)
      #expect(ServiceStatus.of(ImprintService.withoutFolders(error, ["/jobs/1"])) == 422)
    }
  }
}
