// SPDX-License-Identifier: Apache-2.0
// ImprintService: the named price lists a service quotes with, loaded at start and reloaded on
// request (SIGHUP for `imprint serve`), a bad file keeping the list it would have replaced.

import Foundation
import ImprintCore
import ImprintPricing
import Synchronization

/// Price lists by name (`retail`, `trade`), each read from its file.
///
/// `Sendable`: the lists are behind a Mutex and replaced whole, so a reader sees a list as it
/// was before or after a reload, never a mix.
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

  /// Each list's file, by name.
  public let files: [String: String]
  private let lists: Mutex<[String: PriceList]>
  private let counts = Mutex((loaded: 0, failed: 0))

  /// No lists.
  public convenience init() {
    self.init(files: [:], lists: [:])
  }

  /// Reads every list in `files` (name → path).
  ///
  /// - Throws: the first file's error, in name order (`FileError`, `PricingError`; the message
  ///   names the file): a service does not start with a list missing.
  public convenience init(files: [String: String]) throws {
    var lists: [String: PriceList] = [:]
    for (name, file) in files.sorted(by: { $0.key < $1.key }) {
      lists[name] = try Self.read(file)
    }
    self.init(files: files, lists: lists)
  }

  private init(files: [String: String], lists: [String: PriceList]) {
    self.files = files
    self.lists = Mutex(lists)
  }

  /// The names of the lists, sorted.
  public var names: [String] { files.keys.sorted() }

  /// The list named `name`, as last loaded.
  public func list(_ name: String) -> PriceList? {
    lists.withLock { $0[name] }
  }

  /// Reloads every list from its file; a file that cannot be read or parsed keeps its
  /// previous list.
  ///
  /// - Returns: one `Reload` a list, in name order.
  @discardableResult
  public func reload() -> [Reload] {
    var reloads: [Reload] = []
    for (name, file) in files.sorted(by: { $0.key < $1.key }) {
      do {
        let list = try Self.read(file)
        lists.withLock { $0[name] = list }
        reloads.append(Reload(name: name, file: file, error: nil))
      } catch {
        reloads.append(Reload(name: name, file: file, error: ErrorRecord(error)))
      }
    }
    let failed = reloads.count { $0.error != nil }
    counts.withLock {
      $0.loaded += reloads.count - failed
      $0.failed += failed
    }
    return reloads
  }

  /// Lists reloaded, and reloads refused, since the store was made.
  public var reloadCounts: (loaded: Int, failed: Int) { counts.withLock { $0 } }

  private static func read(_ file: String) throws -> PriceList {
    try PriceList.parse(try FileIO.read(file, limit: FileIO.Limit.structured), source: file)
  }
}
