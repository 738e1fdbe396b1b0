// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: errors keep their cause (the errno behind a file error, any wrapped error),
// and records show the chain only when asked.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@Suite("Errors keep their cause", .liveHandlesChecked)
struct ErrorCauseTests {
  /// An error wrapping another, for the chain's tests.
  struct Wrapper: ImprintError {
    let depth: Int
    var code: String { "test.wrapper" }
    var message: String { "wrapper \(depth)" }
    var status: Int { 422 }
    var underlying: (any Error)? {
      depth == 0
        ? FileError.unwritable(path: "x", reason: .system(ENOSPC)) : Wrapper(depth: depth - 1)
    }
  }

  @Test("a file error that a system call caused has the errno as its cause, named by code")
  func fileErrorCause() throws {
    let error = FileError.unwritable(path: "out.png", reason: .system(ENOSPC))
    let chain = ErrorCause.chain(of: error)
    #expect(chain.count == 1)
    let cause = try #require(chain.first as? SystemError)
    #expect(cause == SystemError(ENOSPC))
    #expect(cause.code == "system.ENOSPC" && cause.message == String(cString: strerror(ENOSPC)))
    #expect(SystemError(EFBIG).code == "system.EFBIG" && SystemError(EROFS).code == "system.EROFS")
    #expect(SystemError(9999).code == "system.errno9999")
    // Imprint's own words: no errno, no cause.
    #expect(ErrorCause.chain(of: FileError.unwritable(path: "x", reason: "closed")).isEmpty)
    #expect(ErrorCause.chain(of: FileError.notFound(path: "x")).isEmpty)
    // Reading: the same.
    let read = FileError.unreadable(path: "in.pdf", reason: .system(EIO))
    #expect((ErrorCause.chain(of: read).first as? SystemError)?.code == "system.EIO")
  }

  @Test("the chain is outermost first and bounded at 16 causes")
  func chainOrderAndBound() {
    let chain = ErrorCause.chain(of: Wrapper(depth: 2))
    #expect(
      chain.map { ($0 as? any ImprintError)?.code } == [
        "test.wrapper", "test.wrapper", "file.unwritable", "system.ENOSPC",
      ])
    #expect(ErrorCause.chain(of: Wrapper(depth: 100)).count == 16)
  }

  @Test("a record carries causes only when asked: its JSON is unchanged otherwise")
  func recordCauses() async throws {
    let error = FileError.unwritable(path: "out.png", reason: .system(EFBIG))
    let plain = ErrorRecord(error)
    #expect(plain.causes == nil)
    #expect(!JSONOutput.line(plain).contains("causes"))
    #expect(
      JSONOutput.line(plain)
        == #"{"code":"file.unwritable","hint":"\#(error.hint ?? "")","message":"\#(error.message)"}"#
    )
    let verbose = ErrorRecord.$includesCauses.withValue(true) { ErrorRecord(error) }
    #expect(verbose.causes?.map(\.code) == ["system.EFBIG"])
    #expect(verbose.causes?.first?.causes == nil)
    #expect(JSONOutput.line(verbose).contains(#""causes":[{"code":"system.EFBIG""#))
    // Child tasks see the setting.
    let child = await ErrorRecord.$includesCauses.withValue(true) {
      await Task { ErrorRecord(error) }.value
    }
    #expect(child.causes?.count == 1)
    // A record without causes decodes from JSON that has none (results files of older runs).
    let decoded = try JSONDecoder().decode(
      ErrorRecord.self, from: Data(#"{"code":"a.b","message":"m"}"#.utf8))
    #expect(decoded.causes == nil && decoded.code == "a.b")
  }

  @Test("causes compare by code, message and hint")
  func causeEquality() {
    #expect(ErrorCause(SystemError(ENOSPC)) == ErrorCause(SystemError(ENOSPC)))
    #expect(ErrorCause(SystemError(ENOSPC)) != ErrorCause(SystemError(EFBIG)))
  }
}
