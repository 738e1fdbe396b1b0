// SPDX-License-Identifier: Apache-2.0
// ImprintCore: a C library opened with dlopen when first needed, and its functions looked up.

import Glibc

/// A shared library opened with `dlopen` (never closed: its functions stay valid for the
/// process), for the modules that load their C library when it is first needed rather than
/// linking it (libheif, libcups, libpq: each says why).
public struct SharedLibrary: @unchecked Sendable {
  // @unchecked: a handle that is only read, to a library that stays loaded.
  /// The library's name as opened (its soname).
  public let name: String
  private let handle: UnsafeMutableRawPointer

  /// Why a library or one of its functions could not be had.
  public struct Failure: Error, Sendable {
    /// `dlerror`'s text, the missing function, or the library's own refusal to start.
    public let reason: String

    public init(reason: String) { self.reason = reason }
  }

  /// Opens `name` (`RTLD_NOW | RTLD_LOCAL`: every function bound now, none made global).
  ///
  /// - Throws: `Failure` with `dlerror`'s text.
  public static func open(_ name: String) throws(Failure) -> SharedLibrary {
    guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
      throw Failure(reason: dlerror().map { String(cString: $0) } ?? "dlopen failed")
    }
    return SharedLibrary(name: name, handle: handle)
  }

  /// The function `symbol` as the C function type `T` (the caller's to get right: a type
  /// from the library's own header, as `__typeof__` gives it).
  ///
  /// - Throws: `Failure` naming the library and the symbol when it has none.
  public func function<T>(_ symbol: String) throws(Failure) -> T {
    guard let address = dlsym(handle, symbol) else {
      throw Failure(reason: "\(name) has no \(symbol)")
    }
    return unsafeBitCast(address, to: T.self)
  }
}
