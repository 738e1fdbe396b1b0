// SPDX-License-Identifier: Apache-2.0
// ImprintCoreTests: files of secrets read as one trimmed value (FileIO.readSecretLine), refused
// when others may read them, bounded like every input.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

/// The caller's error for a file others may read, with the problem in words.
private struct Exposed: Error, Equatable {
  let problem: String
}

@Suite("Files of secrets read as one value", .liveHandlesChecked)
struct SecretFileTests {
  /// Writes `bytes` to `name` in `folder` with `mode` and returns its path.
  private func secret(_ bytes: [UInt8], mode: mode_t, in folder: TemporaryFolder, name: String)
    throws -> String
  {
    let path = folder.file(name)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    chmod(path, mode)
    return path
  }

  /// `FileIO.readSecretLine` of `path` at most 4096 bytes, its exposed file an `Exposed`.
  private func read(_ path: String, access: FileIO.SecretAccess) throws -> String {
    try FileIO.readSecretLine(path, limit: 4096, access: access) { Exposed(problem: $0) }
  }

  @Test(
    "the value trimmed of white space around it, inner spaces kept, bytes not UTF-8 as U+FFFD",
    arguments: [
      ("s3cret-token", "s3cret-token"), ("s3cret-token\n", "s3cret-token"),
      ("  s3cret-token\r\n", "s3cret-token"), ("\ts3cret-token \n\n", "s3cret-token"),
      ("a b\u{1}\n", "a b\u{1}"),
    ])
  func trimmed(text: String, value: String) throws {
    let folder = TemporaryFolder()
    let path = try secret(Array(text.utf8), mode: 0o600, in: folder, name: "token")
    #expect(try read(path, access: .ownerOnly) == value)
    let invalid = try secret([0x61, 0x20, 0x62, 0xFF, 0x0A], mode: 0o600, in: folder, name: "key")
    #expect(try read(invalid, access: .ownerOnly) == "a b\u{FFFD}")
  }

  @Test("a file its group or others may read is refused as the access says, naming its mode")
  func exposed() throws {
    let folder = TemporaryFolder()
    let shared = try secret(Array("token\n".utf8), mode: 0o640, in: folder, name: "shared")
    #expect(
      throws: Exposed(problem: "its mode is 640; others than its owner may read or change it")
    ) { _ = try read(shared, access: .ownerOnly) }
    #expect(try read(shared, access: .groupMayRead) == "token")
    let open = try secret(Array("token\n".utf8), mode: 0o644, in: folder, name: "open")
    #expect(
      throws: Exposed(
        problem: "its mode is 644; others than its owner and its group may read or change it")
    ) { _ = try read(open, access: .groupMayRead) }
  }

  @Test("a file over the limit is FileError.tooLarge, a missing one FileError.notFound")
  func bounded() throws {
    let folder = TemporaryFolder()
    let large = try secret(
      Array(repeating: 0x78, count: 5000), mode: 0o600, in: folder, name: "big")
    #expect(throws: FileError.tooLarge(path: large, bytes: 5000, limit: 4096)) {
      _ = try read(large, access: .ownerOnly)
    }
    let missing = folder.file("missing")
    #expect(throws: FileError.notFound(path: missing)) {
      _ = try read(missing, access: .ownerOnly)
    }
  }
}
