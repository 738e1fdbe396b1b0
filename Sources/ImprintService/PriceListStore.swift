// SPDX-License-Identifier: Apache-2.0
// ImprintService: the named price lists a service quotes with, loaded at start and reloaded on
// request (SIGHUP for `imprint serve`) or when a list's file is seen to change, a bad file
// keeping the list it would have replaced.

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintPricing
import Synchronization

/// Price lists by name (`retail`, `trade`), each read from its file.
///
/// `Sendable`: the lists are behind a Mutex and replaced whole, so a reader sees a list as it
/// was before or after a reload, never a mix; reloads and checks are serialized by a second
/// Mutex, held while files are read (the lists' own lock only to swap one).
public final class PriceListStore: Sendable {
  /// What one reload did to one list.
  public struct Reload: Sendable {
    /// The list's name.
    public let name: String
    /// Its file.
    public let file: String
    /// Why the file was refused (the previous list is kept); nil when it was loaded.
    public let error: ErrorRecord?
  }

  /// A list as loaded, and what is known of its file.
  private struct Entry {
    var list: PriceList
    /// The bytes `list` was read from.
    var bytes: [UInt8]
    /// The SHA-256 of `bytes`.
    var digest: [UInt8]
    /// The file as last read (or found unreadable); a check reads it again only once this
    /// changed.
    var seen: FileIdentity
    /// A change seen by the last check and not yet read: read once the next check finds the
    /// file the same (settled), so that a file still being written (`cp` over it) is not read
    /// half-way.
    var pending: FileIdentity?
  }

  /// What a check found, counted for `/metrics`.
  private struct Counts {
    var loaded = 0
    var failed = 0
    var checks = 0
  }

  /// Each list's file, by name.
  public let files: [String: String]
  private let entries: Mutex<[String: Entry]>
  private let counts = Mutex(Counts())
  /// Held by `reload` and `reloadChanged` for their whole run: one at a time.
  private let reloading = Mutex(())

  /// No lists.
  public convenience init() {
    self.init(files: [:], entries: [:])
  }

  /// Reads every list in `files` (name → path).
  ///
  /// - Throws: the first file's error, in name order (`FileError`, `PricingError`; the message
  ///   names the file): a service does not start with a list missing.
  public convenience init(files: [String: String]) throws {
    var entries: [String: Entry] = [:]
    for (name, file) in files.sorted(by: { $0.key < $1.key }) {
      let read = try Self.read(file)
      entries[name] = Entry(
        list: read.list, bytes: read.bytes, digest: read.digest, seen: read.identity)
    }
    self.init(files: files, entries: entries)
  }

  private init(files: [String: String], entries: [String: Entry]) {
    self.files = files
    self.entries = Mutex(entries)
  }

  /// The names of the lists, sorted.
  public var names: [String] { files.keys.sorted() }

  /// The list named `name`, as last loaded.
  public func list(_ name: String) -> PriceList? {
    entries.withLock { $0[name]?.list }
  }

  /// The list named `name` as last loaded, with the bytes it was read from (a job that reads
  /// its list from a file gets the loaded list, not a file changed since).
  public func listWithBytes(_ name: String) -> (list: PriceList, bytes: [UInt8])? {
    entries.withLock { $0[name].map { ($0.list, $0.bytes) } }
  }

  /// Reloads every list from its file; a file that cannot be read or parsed keeps its
  /// previous list.
  ///
  /// - Returns: one `Reload` a list, in name order.
  @discardableResult
  public func reload() -> [Reload] {
    reloading.withLock { _ in
      var reloads: [Reload] = []
      for (name, file) in files.sorted(by: { $0.key < $1.key }) {
        if let reload = load(name, file: file, seen: FileIdentity(file)) {
          reloads.append(reload)
        }
      }
      return reloads
    }
  }

  /// Reloads the lists whose file changed since it was last read: one check of every file
  /// (`imprint serve` makes one every `--price-list-check` seconds).
  ///
  /// A file is known by what `stat` says of the file its path leads to, symbolic links
  /// followed (device, inode, size, modification and change times), so that every way files
  /// change in deployments is seen: an editor's new file renamed over the old (a new inode),
  /// `cp` over it (a new size or time), a Kubernetes ConfigMap update (the folder's `..data`
  /// link moved to a new folder: the path now leads to another inode). A change is read once
  /// a check finds the file as the check before it did (settled: not read while `cp` is still
  /// writing it), and reloaded only when its bytes differ from the loaded list's (SHA-256):
  /// `touch`, or a list copied over with the same bytes, reloads nothing. A file that cannot
  /// be read or parsed keeps the previous list and is not read again until it changes.
  ///
  /// - Returns: one `Reload` a list read (nothing when no file changed), in name order.
  @discardableResult
  public func reloadChanged() -> [Reload] {
    reloading.withLock { _ in
      counts.withLock { $0.checks += 1 }
      var reloads: [Reload] = []
      for (name, file) in files.sorted(by: { $0.key < $1.key }) {
        let identity = FileIdentity(file)
        let due = entries.withLock { entries -> Bool in
          guard let entry = entries[name], identity != entry.seen else { return false }
          guard identity == entry.pending else {
            entries[name]?.pending = identity
            return false
          }
          return true
        }
        guard due else { continue }
        // Changed while it was read: left for the next check.
        if let reload = load(name, file: file, seen: identity, unlessChanged: true) {
          reloads.append(reload)
        }
      }
      return reloads
    }
  }

  /// Reads `name`'s file and replaces its list when the bytes are new; counts the result.
  ///
  /// - Parameters:
  ///   - name: the list's name.
  ///   - file: its file.
  ///   - seen: the file as `stat` found it before the read.
  ///   - unlessChanged: when true, nothing is done (nil) if the file changed during the read.
  /// - Returns: what was done; nil when the read was left for later, or the bytes were the
  ///   loaded list's and `unlessChanged` (a check, which reports only what it reloaded).
  private func load(
    _ name: String, file: String, seen: FileIdentity, unlessChanged: Bool = false
  ) -> Reload? {
    let result = Result { try Self.read(file) }
    if unlessChanged, FileIdentity(file) != seen { return nil }
    switch result {
    case .success(let read):
      let same = entries.withLock { entries -> Bool in
        let same = entries[name]?.digest == read.digest
        entries[name] = Entry(
          list: read.list, bytes: read.bytes, digest: read.digest, seen: seen)
        return same
      }
      if same && unlessChanged { return nil }
      counts.withLock { $0.loaded += 1 }
      return Reload(name: name, file: file, error: nil)
    case .failure(let error):
      entries.withLock {
        $0[name]?.seen = seen
        $0[name]?.pending = nil
      }
      counts.withLock { $0.failed += 1 }
      return Reload(name: name, file: file, error: ErrorRecord(error))
    }
  }

  /// Lists reloaded, and reloads refused, since the store was made.
  public var reloadCounts: (loaded: Int, failed: Int) {
    counts.withLock { ($0.loaded, $0.failed) }
  }

  /// The checks for changed files made since the store was made (`reloadChanged`).
  public var checkCount: Int { counts.withLock { $0.checks } }

  private static func read(_ file: String) throws -> (
    list: PriceList, bytes: [UInt8], digest: [UInt8], identity: FileIdentity
  ) {
    let identity = FileIdentity(file)
    let bytes = try FileIO.read(file, limit: FileIO.Limit.structured)
    return (try PriceList.parse(bytes, source: file), bytes, SHA256.hash(bytes), identity)
  }
}

/// What `stat(2)` says of the file a path leads to (symbolic links followed): enough to tell
/// that it was replaced or written, or that there is none.
struct FileIdentity: Equatable, Sendable {
  /// Whether `stat` found a file (false: none, or a link leading nowhere; the rest is zero).
  var exists = false
  var device: UInt64 = 0
  var inode: UInt64 = 0
  var size: Int64 = 0
  var modified = timespec()
  var changed = timespec()

  /// The file `path` leads to now.
  init(_ path: String) {
    var status = stat()
    guard stat(path, &status) == 0 else { return }
    exists = true
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
    size = Int64(status.st_size)
    modified = status.st_mtim
    changed = status.st_ctim
  }

  static func == (lhs: FileIdentity, rhs: FileIdentity) -> Bool {
    lhs.exists == rhs.exists && lhs.device == rhs.device && lhs.inode == rhs.inode
      && lhs.size == rhs.size && lhs.modified.tv_sec == rhs.modified.tv_sec
      && lhs.modified.tv_nsec == rhs.modified.tv_nsec && lhs.changed.tv_sec == rhs.changed.tv_sec
      && lhs.changed.tv_nsec == rhs.changed.tv_nsec
  }
}

/// A thread that checks a store's files for a change every `interval` seconds
/// (`PriceListStore.reloadChanged`) until stopped, and reports what each check reloaded.
///
/// Polling, not inotify: a `stat` of each list's path every second costs nothing beside a
/// request, and sees every way a file changes alike, because it asks where the path leads now.
/// inotify watches names in one folder: it would need watches on every folder a chain of
/// symbolic links passes through (a ConfigMap's file is a link through `..data`, itself a link
/// to a timestamped folder that is replaced), re-made after each swap, and it reports nothing
/// for files changed on network file systems or by another mount namespace. The cost is a
/// reload at most `interval` seconds late (twice that for a file still being written: a change
/// is read once it stayed the same for one interval).
///
/// `Sendable`: the store is; the thread is stopped and joined through two semaphores.
final class PriceListWatch: Sendable {
  private let stopping = DispatchSemaphore(value: 0)
  private let finished = DispatchSemaphore(value: 0)

  /// Starts checking `store` every `interval` seconds (at least 0.1), calling `report` (on the
  /// watch's thread) with each check's reloads when it made any.
  init(
    _ store: PriceListStore, interval: Double,
    report: @escaping @Sendable ([PriceListStore.Reload]) -> Void
  ) {
    let stopping = stopping
    let finished = finished
    let pause = max(0.1, interval)
    let thread = Thread {
      while stopping.wait(timeout: .now() + pause) == .timedOut {
        let reloads = store.reloadChanged()
        if !reloads.isEmpty { report(reloads) }
      }
      finished.signal()
    }
    thread.name = "imprint-price-lists"
    thread.start()
  }

  /// Stops the checks and waits for the one under way, if any, to end.
  func stop() {
    stopping.signal()
    finished.wait()
  }
}
