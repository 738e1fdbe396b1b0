// SPDX-License-Identifier: Apache-2.0
// ImprintJobsDB: libpq, loaded with dlopen when a jobs database is first connected to.

internal import CLibpq
import ImprintCore

/// libpq's functions that ImprintJobsDB calls, looked up in `libpq.so.5` (dlopen) the first time
/// a jobs database is connected to.
///
/// Why not linked: libpq and libcups bring 22 libraries no other library of `imprint` needs
/// (OpenSSL's libcrypto and libssl, Kerberos, LDAP, SASL, Avahi, D-Bus, systemd, ...), which the
/// dynamic loader mapped and relocated at every exec, whatever the command: `imprint --version`
/// 20.4 ms of CPU with them, 13.9 ms without (100 runs each, release build). Only
/// `imprint serve --jobs-db` and its tests connect to a database.
struct LibPQ: @unchecked Sendable {
  // @unchecked: C function pointers into a library that stays loaded; libpq's functions are
  // safe to call from many threads on distinct connections.
  let clear: ImprintPQ_clear
  let cmdTuples: ImprintPQ_cmdTuples
  let connectPoll: ImprintPQ_connectPoll
  let connectStartParams: ImprintPQ_connectStartParams
  let conninfo: ImprintPQ_conninfo
  let conninfoFree: ImprintPQ_conninfoFree
  let conninfoParse: ImprintPQ_conninfoParse
  let consumeInput: ImprintPQ_consumeInput
  let errorMessage: ImprintPQ_errorMessage
  let execParams: ImprintPQ_execParams
  let finish: ImprintPQ_finish
  let fname: ImprintPQ_fname
  let freemem: ImprintPQ_freemem
  let getisnull: ImprintPQ_getisnull
  let getvalue: ImprintPQ_getvalue
  let nfields: ImprintPQ_nfields
  let notifies: ImprintPQ_notifies
  let ntuples: ImprintPQ_ntuples
  let reset: ImprintPQ_reset
  let resultErrorField: ImprintPQ_resultErrorField
  let resultStatus: ImprintPQ_resultStatus
  let setNoticeProcessor: ImprintPQ_setNoticeProcessor
  let socket: ImprintPQ_socket
  let status: ImprintPQ_status

  /// The functions, or why `libpq.so.5` could not be loaded (dlerror's text).
  static let loaded: Result<LibPQ, SharedLibrary.Failure> = Result {
    () throws(SharedLibrary.Failure) -> LibPQ in
    let library = try SharedLibrary.open("libpq.so.5")
    return try LibPQ(
      clear: library.function("PQclear"),
      cmdTuples: library.function("PQcmdTuples"),
      connectPoll: library.function("PQconnectPoll"),
      connectStartParams: library.function("PQconnectStartParams"),
      conninfo: library.function("PQconninfo"),
      conninfoFree: library.function("PQconninfoFree"),
      conninfoParse: library.function("PQconninfoParse"),
      consumeInput: library.function("PQconsumeInput"),
      errorMessage: library.function("PQerrorMessage"),
      execParams: library.function("PQexecParams"),
      finish: library.function("PQfinish"),
      fname: library.function("PQfname"),
      freemem: library.function("PQfreemem"),
      getisnull: library.function("PQgetisnull"),
      getvalue: library.function("PQgetvalue"),
      nfields: library.function("PQnfields"),
      notifies: library.function("PQnotifies"),
      ntuples: library.function("PQntuples"),
      reset: library.function("PQreset"),
      resultErrorField: library.function("PQresultErrorField"),
      resultStatus: library.function("PQresultStatus"),
      setNoticeProcessor: library.function("PQsetNoticeProcessor"),
      socket: library.function("PQsocket"),
      status: library.function("PQstatus"))
  }

  /// The loaded functions, for code that runs on a connection (`JobsDBConnection.init` makes
  /// none unless they loaded).
  static var functions: LibPQ {
    guard case .success(let functions) = loaded else {
      preconditionFailure("libpq is called only on a connection, made once it is loaded")
    }
    return functions
  }
}
