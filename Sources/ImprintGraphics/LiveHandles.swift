// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: counts live C handles per kind, process-wide and per scope, so tests can
// assert that nothing leaks.

import Synchronization

/// Counts the C objects currently owned by Imprint's wrappers, per kind (debug builds only).
///
/// Every owner type records its kind when it takes ownership and again in `deinit`. The counts
/// are kept for the whole process (`count(_:)`, printed by `IMPRINT_DEBUG_HANDLES=1 imprint …`)
/// and for the `Scope` bound when the handle was opened (task-local: a test suite binds one and
/// expects it empty at its end, while other suites run beside it). Release builds count nothing.
public enum LiveHandles {
  private static let counts = Mutex<[String: Int]>([:])

  /// The handles opened while it is bound (`LiveHandles.$scope.withValue(scope) { … }`, inherited
  /// by child tasks), counted until each is closed, wherever that happens.
  public final class Scope: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    public init() {}

    /// The kinds with live handles in this scope, and how many.
    public var live: [String: Int] { counts.withLock { $0.filter { $0.value != 0 } } }

    fileprivate func add(_ kind: String, _ delta: Int) {
      counts.withLock { $0[kind, default: 0] += delta }
    }
  }

  /// The scope that handles opened now are counted in, if any.
  @TaskLocal public static var scope: Scope?

  /// The number of live handles of `kind` (for example `cairo_t`), or of all kinds when nil.
  public static func count(_ kind: String? = nil) -> Int {
    counts.withLock { counts in
      if let kind { return counts[kind, default: 0] }
      return counts.values.reduce(0, +)
    }
  }

  /// Records a handle of `kind` opened, in `scope` (the current one by default).
  ///
  /// - Returns: the scope to pass to `closed(_:in:)` when the handle is closed.
  @discardableResult
  package static func opened(_ kind: String, in scope: Scope? = LiveHandles.scope) -> Scope? {
    #if DEBUG
      counts.withLock { $0[kind, default: 0] += 1 }
      scope?.add(kind, 1)
      return scope
    #else
      return nil
    #endif
  }

  /// Records a handle of `kind` closed, in the scope `opened(_:in:)` returned for it.
  package static func closed(_ kind: String, in scope: Scope?) {
    #if DEBUG
      counts.withLock { $0[kind, default: 0] -= 1 }
      scope?.add(kind, -1)
    #endif
  }
}
