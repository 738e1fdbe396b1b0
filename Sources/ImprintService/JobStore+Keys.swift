// SPDX-License-Identifier: Apache-2.0
// ImprintService: the `Idempotency-Key`s of the jobs a jobs folder no longer keeps
// (`DIR/.idempotency-keys.jsonl`). A job removed (DELETE, `--jobs-kept`, `--jobs-disk`) leaves
// its key there before its folder goes, so that a retry after a restart is still answered as
// it would have been before it (410 `http.idempotentJobGone`), never made, and printed, again.

import Foundation
import ImprintCore
import ImprintHTTP
import Synchronization

/// The key of a job removed from a jobs folder: one line of `.idempotency-keys.jsonl`.
struct RemovedKey: Codable, Equatable, Sendable {
  /// The job the key's request made.
  var job: String
  /// The key, as the request gave it.
  var key: String
  /// The request's fingerprint, 64 lowercase hex digits.
  var fingerprint: String
}

extension JobStore.Record {
  /// The job's key as the jobs folder keeps it once the job is removed; nil without one.
  var removedKey: RemovedKey? {
    idempotency.map { RemovedKey(job: id, key: $0.key, fingerprint: $0.fingerprint) }
  }
}

extension IdempotencyRecord {
  /// What is wrong with the record as read from a file, or nil.
  var problem: String? {
    guard (1...IdempotencyKeys.maximumLength).contains(key.utf8.count),
      key.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
    else { return "its Idempotency-Key is not 1 to 255 printable ASCII characters" }
    guard fingerprint.utf8.count == 64,
      fingerprint.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
    else { return "its request's fingerprint is not 64 hex digits" }
    return nil
  }
}

/// The keys of the jobs removed from a jobs folder, in its file `.idempotency-keys.jsonl`
/// (JSON Lines, oldest first, appended and synced as jobs are removed).
///
/// Holds the newest `kept` keys (`IdempotencyKeys.limit`: as many as the service remembers);
/// the file is written anew with them once it has twice as many lines. A line that cannot be
/// read (a crash cut the last one short, an edited file) is skipped and said, the others kept.
final class RemovedKeys: Sendable {
  /// The file's name in the jobs folder (hidden: never taken for a job).
  static let name = ".idempotency-keys.jsonl"
  /// The largest file read (16 MiB: twice `IdempotencyKeys.limit` lines of the longest keys).
  static let readLimit = 16 << 20

  /// The file's path.
  let path: String
  /// The most keys held.
  let kept: Int
  /// What reading the file at the start found wrong, in words (empty when it was read whole,
  /// or is missing).
  let problems: [String]
  private struct State {
    /// The keys, oldest first, at most `kept`.
    var keys: [RemovedKey] = []
    /// The lines of the file.
    var lines = 0
    /// Whether the file's last line has no newline (a crash cut it short): the next key
    /// starts a line of its own.
    var cut = false
  }
  private let state: Mutex<State>

  /// Reads the keys of the jobs folder `root`.
  ///
  /// - Parameters:
  ///   - root: the jobs folder.
  ///   - kept: the most keys held.
  init(in root: String, kept: Int = IdempotencyKeys.limit) {
    path = root + "/" + Self.name
    self.kept = kept
    var problems: [String] = []
    var found = State()
    var status = stat()
    if lstat(path, &status) != 0 {
      // None yet: no job with a key was removed.
    } else if (status.st_mode & S_IFMT) != S_IFREG {
      problems.append("is not a regular file (a symbolic link is never followed)")
    } else {
      do {
        let bytes = try FileIO.read(path, limit: Self.readLimit)
        found.cut = bytes.last.map { $0 != UInt8(ascii: "\n") } ?? false
        let lines = bytes.split(separator: UInt8(ascii: "\n"))
        for (index, line) in lines.enumerated() {
          found.lines += 1
          guard let key = try? JSONDecoder().decode(RemovedKey.self, from: Data(line)) else {
            problems.append("line \(index + 1) is not a key's record (cut short, or edited)")
            continue
          }
          if let problem = Self.problem(of: key) {
            problems.append("line \(index + 1): \(problem)")
            continue
          }
          found.keys.append(key)
        }
      } catch {
        problems.append("cannot be read: " + error.message)
      }
    }
    found.keys = Array(found.keys.suffix(kept))
    self.problems = problems
    state = Mutex(found)
  }

  /// The keys held, oldest first.
  var keys: [RemovedKey] { state.withLock { $0.keys } }

  /// What is wrong with `key`, or nil.
  private static func problem(of key: RemovedKey) -> String? {
    guard JobStore.isJobID(key.job) else { return "its job is not a job id" }
    return IdempotencyRecord(key: key.key, fingerprint: key.fingerprint).problem
  }

  /// Adds `keys` to the file, synced before this returns (the file written anew with the
  /// newest `kept` once it has twice as many lines).
  ///
  /// - Throws: `FileError` when the file cannot be written; the keys are held anyway.
  func append(_ keys: [RemovedKey]) throws(FileError) {
    guard !keys.isEmpty else { return }
    let text = keys.map { JSONOutput.line($0) + "\n" }.joined()
    try state.withLock { (state) throws(FileError) in
      state.keys.append(contentsOf: keys)
      if state.keys.count > kept { state.keys.removeFirst(state.keys.count - kept) }
      if state.lines + keys.count > 2 * kept {
        let all = state.keys.map { JSONOutput.line($0) + "\n" }.joined()
        try AtomicFile.write(Array(all.utf8), to: path)
        state.lines = state.keys.count
        state.cut = false
        return
      }
      let created = state.lines == 0 && !state.cut
      let line = (state.cut ? "\n" : "") + text
      // Not blocking: a FIFO planted in the file's place would hold the open (and the lock, a
      // DELETE's answer, the stop) until something read it; anything but a regular file is
      // refused.
      let descriptor = open(
        path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0o600)
      var status = stat()
      guard descriptor >= 0 else {
        let error = errno
        // A FIFO nobody reads fails the open (ENXIO): named for what it is.
        if lstat(path, &status) == 0, (status.st_mode & S_IFMT) != S_IFREG {
          throw .notRegularFile(path: path, kind: FileKind(mode: status.st_mode))
        }
        throw .unwritable(path: path, reason: .system(error))
      }
      guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
        Foundation.close(descriptor)
        throw .notRegularFile(path: path, kind: FileKind(mode: status.st_mode))
      }
      _ = fcntl(descriptor, F_SETFL, O_APPEND)
      // Part of a line may be there after a failure: the next key starts a line of its own.
      do throws(FileError) {
        try FileIO.writeAll(Array(line.utf8), to: descriptor, path: path)
      } catch {
        Foundation.close(descriptor)
        state.cut = true
        throw error
      }
      do throws(FileError) {
        try FileIO.syncAndClose(descriptor, path: path)
      } catch {
        state.cut = true
        throw error
      }
      if created { FileIO.syncFolder(of: path) }
      state.lines += keys.count
      state.cut = false
    }
  }
}
