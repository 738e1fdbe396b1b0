// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: libcups, loaded with dlopen when a printer or scheduler is first talked to.

internal import CCups
import ImprintCore

/// libcups's functions that ImprintPrinting calls, looked up in `libcups.so.2` (dlopen) the first
/// time a printer, queue or scheduler is talked to.
///
/// Why not linked: libcups and libpq bring 22 libraries no other library of `imprint` needs
/// (OpenSSL's libcrypto and libssl, GnuTLS's users, Kerberos, Avahi, D-Bus, systemd, ...), which
/// the dynamic loader mapped and relocated at every exec, whatever the command: `imprint
/// --version` 20.4 ms of CPU with them, 13.9 ms without (100 runs each, release build; 17.8-20
/// ms with one of the two still linked, their dependencies being shared). Cards, QR codes,
/// documents and quotes never print.
struct LibCups: @unchecked Sendable {
  // @unchecked: C function pointers into a library that stays loaded; CUPS keeps its per-thread
  // state (server, user, last error) itself.
  let cupsAddOption: ImprintCups_cupsAddOption
  let cupsCancelDestJob: ImprintCups_cupsCancelDestJob
  let cupsConnectDest: ImprintCups_cupsConnectDest
  let cupsCopyDestInfo: ImprintCups_cupsCopyDestInfo
  let cupsCreateDestJob: ImprintCups_cupsCreateDestJob
  let cupsDoRequest: ImprintCups_cupsDoRequest
  let cupsEncryption: ImprintCups_cupsEncryption
  let cupsFinishDestDocument: ImprintCups_cupsFinishDestDocument
  let cupsFreeDestInfo: ImprintCups_cupsFreeDestInfo
  let cupsFreeDests: ImprintCups_cupsFreeDests
  let cupsFreeOptions: ImprintCups_cupsFreeOptions
  let cupsGetDestWithURI: ImprintCups_cupsGetDestWithURI
  let cupsGetNamedDest: ImprintCups_cupsGetNamedDest
  let cupsGetOption: ImprintCups_cupsGetOption
  let cupsLastError: ImprintCups_cupsLastError
  let cupsLastErrorString: ImprintCups_cupsLastErrorString
  let cupsServer: ImprintCups_cupsServer
  let cupsSetPasswordCB2: ImprintCups_cupsSetPasswordCB2
  let cupsSetServer: ImprintCups_cupsSetServer
  let cupsSetUser: ImprintCups_cupsSetUser
  let cupsStartDestDocument: ImprintCups_cupsStartDestDocument
  let cupsUser: ImprintCups_cupsUser
  let cupsWriteRequestData: ImprintCups_cupsWriteRequestData
  let httpAddrLocalhost: ImprintCups_httpAddrLocalhost
  let httpClose: ImprintCups_httpClose
  let httpConnect2: ImprintCups_httpConnect2
  let httpGetAddress: ImprintCups_httpGetAddress
  let httpIsEncrypted: ImprintCups_httpIsEncrypted
  let ippAddInteger: ImprintCups_ippAddInteger
  let ippAddString: ImprintCups_ippAddString
  let ippDelete: ImprintCups_ippDelete
  let ippEnumString: ImprintCups_ippEnumString
  let ippFindAttribute: ImprintCups_ippFindAttribute
  let ippGetCount: ImprintCups_ippGetCount
  let ippGetInteger: ImprintCups_ippGetInteger
  let ippGetStatusCode: ImprintCups_ippGetStatusCode
  let ippGetString: ImprintCups_ippGetString
  let ippNewRequest: ImprintCups_ippNewRequest
  let ippPort: ImprintCups_ippPort

  /// The functions, or why `libcups.so.2` could not be loaded (dlerror's text).
  static let loaded: Result<LibCups, SharedLibrary.Failure> = Result {
    () throws(SharedLibrary.Failure) -> LibCups in
    let library = try SharedLibrary.open("libcups.so.2")
    return try LibCups(
      cupsAddOption: library.function("cupsAddOption"),
      cupsCancelDestJob: library.function("cupsCancelDestJob"),
      cupsConnectDest: library.function("cupsConnectDest"),
      cupsCopyDestInfo: library.function("cupsCopyDestInfo"),
      cupsCreateDestJob: library.function("cupsCreateDestJob"),
      cupsDoRequest: library.function("cupsDoRequest"),
      cupsEncryption: library.function("cupsEncryption"),
      cupsFinishDestDocument: library.function("cupsFinishDestDocument"),
      cupsFreeDestInfo: library.function("cupsFreeDestInfo"),
      cupsFreeDests: library.function("cupsFreeDests"),
      cupsFreeOptions: library.function("cupsFreeOptions"),
      cupsGetDestWithURI: library.function("cupsGetDestWithURI"),
      cupsGetNamedDest: library.function("cupsGetNamedDest"),
      cupsGetOption: library.function("cupsGetOption"),
      cupsLastError: library.function("cupsLastError"),
      cupsLastErrorString: library.function("cupsLastErrorString"),
      cupsServer: library.function("cupsServer"),
      cupsSetPasswordCB2: library.function("cupsSetPasswordCB2"),
      cupsSetServer: library.function("cupsSetServer"),
      cupsSetUser: library.function("cupsSetUser"),
      cupsStartDestDocument: library.function("cupsStartDestDocument"),
      cupsUser: library.function("cupsUser"),
      cupsWriteRequestData: library.function("cupsWriteRequestData"),
      httpAddrLocalhost: library.function("httpAddrLocalhost"),
      httpClose: library.function("httpClose"),
      httpConnect2: library.function("httpConnect2"),
      httpGetAddress: library.function("httpGetAddress"),
      httpIsEncrypted: library.function("httpIsEncrypted"),
      ippAddInteger: library.function("ippAddInteger"),
      ippAddString: library.function("ippAddString"),
      ippDelete: library.function("ippDelete"),
      ippEnumString: library.function("ippEnumString"),
      ippFindAttribute: library.function("ippFindAttribute"),
      ippGetCount: library.function("ippGetCount"),
      ippGetInteger: library.function("ippGetInteger"),
      ippGetStatusCode: library.function("ippGetStatusCode"),
      ippGetString: library.function("ippGetString"),
      ippNewRequest: library.function("ippNewRequest"),
      ippPort: library.function("ippPort"))
  }

  /// The loaded functions, for code that runs in a `CupsSession` (which `CupsSession.with`
  /// opens only once they loaded).
  static var functions: LibCups {
    guard case .success(let functions) = loaded else {
      preconditionFailure("libcups is called only in a session, opened once it is loaded")
    }
    return functions
  }
}

extension LibCups {
  /// libcups' text for this thread's last error (`cupsLastErrorString`).
  var lastErrorText: String { cupsLastErrorString().map { String(cString: $0) } ?? "" }
  /// The scheduler libcups talks to on this thread (`cupsServer`).
  var serverText: String { cupsServer().map { String(cString: $0) } ?? "" }
}

/// libcups's functions, for the calls made in a `CupsSession`.
var cups: LibCups { LibCups.functions }
