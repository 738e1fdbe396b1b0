// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: libcups' per-thread settings for one call: the scheduler, the user and a
// password callback that never prompts.

internal import CCups
import Foundation
import ImprintCore

/// libcups' settings for one call on one thread: the scheduler, the user, and the password
/// callback (`cupsSetPasswordCB2`), which answers from the credentials and never prompts.
///
/// libcups keeps these per thread; `with` sets them for its body and afterwards leaves the
/// thread on libcups' default scheduler and user with a callback that answers nothing (libcups'
/// own callback would prompt on the terminal and wait). Not Sendable: it lives on its thread.
final class CupsSession {
  /// The scheduler and credentials.
  let access: PrintAccess
  /// The password as libcups takes it (kept alive while libcups may read it).
  private let password: UnsafeMutablePointer<CChar>?
  /// The connections the password was given on: asked again on one, it was refused.
  private var answered: Set<UInt> = []
  /// Whether libcups asked for a password.
  private(set) var asked = false
  /// Whether a printer asked again on a connection after being given the password.
  private(set) var refused = false
  /// Whether a printer asked for the password over plain IPP from another machine (not given:
  /// HTTP Basic would carry it readable by anyone on the way).
  private(set) var insecure = false

  private init(_ access: PrintAccess) {
    self.access = access
    password = access.credentials.map { strdup($0.password) }
  }

  deinit {
    if let password { explicit_bzero(password, strlen(password)) }
    free(password)
  }

  /// Runs `body` with libcups set up for `access` on this thread, to talk to `printer`.
  ///
  /// - Throws: `PrintError.unreachable` naming `printer` when libcups cannot be loaded (every
  ///   call to it is made in a session); what `body` throws.
  static func with<Value>(
    _ access: PrintAccess, printer: String, _ body: (CupsSession) throws -> Value
  ) throws -> Value {
    if case .failure(let failure) = LibCups.loaded {
      throw PrintError.unreachable(
        printer: printer,
        detail: "libcups.so.2 cannot be loaded (Debian: libcups2): \(failure.reason)")
    }
    let session = CupsSession(access)
    if let scheduler = access.scheduler { cups.cupsSetServer(scheduler) }
    if let user = access.credentials?.user { cups.cupsSetUser(user) }
    cups.cupsSetPasswordCB2(
      { _, http, _, _, context in
        guard let context else { return nil }
        return Unmanaged<CupsSession>.fromOpaque(context).takeUnretainedValue().answer(http)
      }, Unmanaged.passUnretained(session).toOpaque())
    defer {
      cups.cupsSetPasswordCB2({ _, _, _, _, _ in nil }, nil)
      if access.credentials != nil { cups.cupsSetUser(nil) }
      if access.scheduler != nil { cups.cupsSetServer(nil) }
    }
    return try body(session)
  }

  /// The scheduler libcups talks to now: `host:port`, or the socket's path.
  static var scheduler: String {
    let server = cups.serverText
    return server.hasPrefix("/") ? server : "\(server):\(cups.ippPort())"
  }

  /// Forgets that `connection` (just opened, perhaps where a closed one was) was answered.
  func opened(_ connection: OpaquePointer) {
    answered.remove(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))))
  }

  /// The password for libcups' question on `http`: once a connection; nil (libcups gives up)
  /// when there are no credentials or the printer asked again after getting them.
  private func answer(_ http: OpaquePointer?) -> UnsafePointer<CChar>? {
    asked = true
    guard let password else { return nil }
    // Only over TLS (ipps://, or a scheduler that encrypts), or to this machine (loopback, a
    // local socket): HTTP Basic over plain IPP would show the password to the network.
    guard let http, cups.httpIsEncrypted(http) != 0 || Self.isLocal(http) else {
      insecure = true
      return nil
    }
    let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(http)))
    guard answered.insert(key).inserted else {
      refused = true
      return nil
    }
    return UnsafePointer(password)
  }

  /// Whether `http` is a connection to this machine (a loopback address or a local socket).
  private static func isLocal(_ http: OpaquePointer) -> Bool {
    guard let address = cups.httpGetAddress(http) else { return false }
    return cups.httpAddrLocalhost(address) != 0
  }

  /// `unauthorized` for `printer` when libcups' last error (after `what`) says the
  /// credentials were missing or refused, else nil.
  func refusal(_ printer: String, _ what: String) -> PrintError? {
    let status = cups.cupsLastError()
    let authentication = [
      IPP_STATUS_ERROR_NOT_AUTHENTICATED, IPP_STATUS_ERROR_NOT_AUTHORIZED,
      IPP_STATUS_ERROR_FORBIDDEN, IPP_STATUS_ERROR_CUPS_AUTHENTICATION_CANCELED,
    ]
    guard authentication.contains(status) || refused || insecure else { return nil }
    if insecure { return .insecureCredentials(printer: printer) }
    return .unauthorized(
      printer: printer, user: access.credentials?.user,
      detail: "\(what): \(cups.lastErrorText)")
  }
}

extension PrintError {
  /// `unreachable` for `printer` with libcups' last error text.
  static func cupsUnreachable(_ printer: String) -> PrintError {
    .unreachable(printer: printer, detail: "cups: \(cups.lastErrorText)")
  }
}
