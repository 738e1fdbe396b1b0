// SPDX-License-Identifier: Apache-2.0
// RemovedKeys: the Idempotency-Keys of the jobs removed from a jobs folder, read back as
// written, a line cut short by a crash skipped without losing the next, the file bounded.

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintTestSupport
import Synchronization
import Testing

@testable import ImprintService

@Suite(
  "RemovedKeys: the keys of jobs removed from a jobs folder", .liveHandlesChecked, .onTestThreads)
struct RemovedKeysTests {
  /// A key of a job of its own, with a fingerprint that is the SHA-256 of `n`'s digits.
  private func key(_ n: Int) -> RemovedKey {
    RemovedKey(
      job: UUID().uuidString.lowercased(), key: "key \"\(n)\" \\ /",
      fingerprint: SHA256.hex(SHA256.hash(Array(String(n).utf8))))
  }

  /// The file's non-empty lines.
  private func lines(_ path: String) throws -> [Substring] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
  }

  @Test("keys are read back as written, oldest first; a line cut short is skipped, not the next")
  func readBack() throws {
    let folder = TemporaryFolder()
    let written = (0..<3).map(key)
    let keys = RemovedKeys(in: folder.path)
    #expect(keys.keys.isEmpty && keys.problems.isEmpty)
    try keys.append([written[0]])
    try keys.append(Array(written[1...]))
    #expect(RemovedKeys(in: folder.path).keys == written)
    #expect(RemovedKeys(in: folder.path).problems.isEmpty)

    // A crash while the third was appended: its line cut short, no newline.
    let path = folder.file(RemovedKeys.name)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    try bytes.prefix(bytes.count - 10).write(to: URL(fileURLWithPath: path))
    let reread = RemovedKeys(in: folder.path)
    #expect(reread.keys == Array(written.prefix(2)))
    #expect(reread.problems == ["line 3 is not a key's record (cut short, or edited)"])
    // The next key starts a line of its own: read back, the cut line still said.
    let next = key(3)
    try reread.append([next])
    let after = RemovedKeys(in: folder.path)
    #expect(after.keys == Array(written.prefix(2)) + [next])
    #expect(after.problems == reread.problems)

    // A line naming no job, or with a fingerprint that is not hex: skipped, said.
    var bad = key(4)
    bad.fingerprint = String(repeating: "z", count: 64)
    var notJob = key(5)
    notJob.job = "../elsewhere"
    try reread.append([bad, notJob])
    let checked = RemovedKeys(in: folder.path)
    #expect(checked.keys == Array(written.prefix(2)) + [next])
    #expect(
      checked.problems == [
        "line 3 is not a key's record (cut short, or edited)",
        "line 5: its request's fingerprint is not 64 hex digits",
        "line 6: its job is not a job id",
      ])
  }

  @Test("the file holds the newest keys: written anew at twice their number")
  func bounded() throws {
    let folder = TemporaryFolder()
    let path = folder.file(RemovedKeys.name)
    let keys = RemovedKeys(in: folder.path, kept: 3)
    let written = (0..<7).map(key)
    for (index, one) in written.enumerated() {
      try keys.append([one])
      // Appended up to six lines; the seventh writes the newest three anew.
      #expect(try lines(path).count == (index < 6 ? index + 1 : 3))
      #expect(keys.keys == Array(written.prefix(index + 1).suffix(3)))
    }
    #expect(RemovedKeys(in: folder.path, kept: 3).keys == Array(written.suffix(3)))
  }

  @Test("a FIFO in the file's place is refused at once, read by someone or not, never written")
  func fifo() throws {
    let folder = TemporaryFolder()
    let path = folder.file(RemovedKeys.name)
    try #require(mkfifo(path, 0o600) == 0)
    let keys = RemovedKeys(in: folder.path)
    #expect(keys.problems == ["is not a regular file (a symbolic link is never followed)"])
    // Nobody reads it: a blocking open would wait for a reader for ever (a DELETE's answer and
    // the server's stop with it). The append runs on a thread of its own so that a hang fails
    // the test instead of holding it.
    let done = DispatchSemaphore(value: 0)
    let outcome = Mutex<FileError?>(nil)
    Thread {
      do throws(FileError) {
        try keys.append([key(1)])
      } catch { outcome.withLock { $0 = error } }
      done.signal()
    }.start()
    #expect(done.wait(timeout: .now() + 10) == .success, "the append is still waiting")
    #expect(outcome.withLock { $0 } == .notRegularFile(path: path, kind: .fifo))
    // Someone reads it: the open would succeed; the keys must still not go into it.
    let reader = open(path, O_RDONLY | O_NONBLOCK)
    try #require(reader >= 0)
    defer { close(reader) }
    #expect(throws: FileError.notRegularFile(path: path, kind: .fifo)) {
      try keys.append([key(2)])
    }
    var buffer = [UInt8](repeating: 0, count: 64)
    #expect(read(reader, &buffer, buffer.count) <= 0)
  }

  @Test("a link in the file's place is never followed: said at the start, never written through")
  func link() throws {
    let folder = TemporaryFolder()
    let target = folder.file("elsewhere.txt")
    try Data("outside\n".utf8).write(to: URL(fileURLWithPath: target))
    try FileManager.default.createSymbolicLink(
      atPath: folder.file(RemovedKeys.name), withDestinationPath: target)
    let keys = RemovedKeys(in: folder.path)
    #expect(keys.problems == ["is not a regular file (a symbolic link is never followed)"])
    #expect(throws: FileError.self) { try keys.append([key(1)]) }
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "outside\n")
  }
}
