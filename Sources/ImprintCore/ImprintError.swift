// SPDX-License-Identifier: Apache-2.0
// Imprint: the error protocol every domain error conforms to.
// See STYLE.md §3 for the message rules.

import Foundation

/// An error Imprint reports to a person or a program: a stable code, a message, an optional hint.
///
/// Every domain module has one error enum whose cases carry their evidence (the file, field, value)
/// and conform to this protocol. The CLI prints `error: <message>` and `hint: <hint>`; `--json`
/// output and batch results carry `code`, `message` and `hint` as data.
///
/// An error that wraps another (a card whose photo cannot be decoded, a write the system
/// refused) carries it as `underlying`, not as text: `--verbose` prints the chain
/// (`ErrorCause.chain(of:)`), and a program can inspect it.
public protocol ImprintError: Error, Sendable, CustomStringConvertible {
  /// A stable dotted identifier, for example `qr.payloadTooLarge`; programs match on it.
  var code: String { get }
  /// What failed, naming the input; lowercase start, no final period.
  var message: String { get }
  /// How to fix it, when known.
  var hint: String? { get }
  /// The error that caused this one, when it wraps one (nil by default).
  var underlying: (any Error)? { get }
  /// The HTTP status a service (`imprint serve`) answers the error with: 400 for malformed
  /// input (not JSON, a request that breaks its rules), 404 for an unknown named thing (a
  /// template, a route, a job), 413 for input too large, 422 for input understood but refused
  /// (the most common: a damaged PDF, an invalid address), 500 for the server's fault (a file it
  /// could not write), 503 for what it cannot do now (no LibreOffice, a full queue).
  ///
  /// Every error type says it, case by case: no default, so that a new case is given one. An
  /// error known only by its code (a worker's report, a restated one) asks
  /// `ErrorStatus.of(code:)`.
  var status: Int { get }
}

extension ImprintError {
  public var hint: String? { nil }

  public var underlying: (any Error)? { nil }

  public var description: String {
    if let hint { return "\(message) (hint: \(hint))" }
    return message
  }
}

/// The HTTP status of an error known only by its code (`ImprintError.status`), for errors that
/// restate another's code: a document worker's report, a manifest line's error.
public enum ErrorStatus {
  /// The status the capability modules' error of `code` says.
  ///
  /// 400 for `json.*` and `*.notJSON`, 404 for `template.notFound`, 413 for `file.tooLarge`,
  /// 422 for `file.escapesFolder`, 503 for `document.officeUnavailable`, 500 for the other
  /// `file.*`, 422 for the rest, as `FileError`, `JSONError`, `CardError`, `DocumentError`...
  /// say. The service's own errors (`http.*`, `service.*`) are never restated, and not told
  /// apart here.
  public static func of(code: String) -> Int {
    if code.hasPrefix("json.") || code.hasSuffix(".notJSON") { return 400 }
    switch code {
    case "template.notFound": return 404
    case "file.escapesFolder": return 422
    case "file.tooLarge": return 413
    case "document.officeUnavailable": return 503
    default: return code.hasPrefix("file.") ? 500 : 422
    }
  }
}

/// Errors of reading and writing files, shared by every module.
public enum FileError: ImprintError, Equatable {
  /// The file does not exist.
  case notFound(path: String)
  /// The path names a directory where a file was expected.
  case isDirectory(path: String)
  /// The file exists but could not be read.
  case unreadable(path: String, reason: Reason)
  /// The output could not be written.
  case unwritable(path: String, reason: Reason)
  /// The input is not valid UTF-8 text.
  case notUTF8(path: String, line: Int?)
  /// The path names a FIFO, a device or a socket where a regular file was expected.
  case notRegularFile(path: String, kind: FileKind)
  /// The file is larger than Imprint reads for this input (`bytes` when known before reading).
  case tooLarge(path: String, bytes: Int?, limit: Int)
  /// A line of a line-based input is longer than the limit; the line was skipped.
  case lineTooLong(path: String, line: Int, limit: Int)
  /// A relative path (a template's asset, an order's file, a cache entry) would leave the folder
  /// it is confined to: it is absolute, climbs with `..`, or a link leads out.
  case escapesFolder(path: String, folder: String, what: String)
  /// An output path names one of the command's inputs; writing it would destroy the input.
  case outputIsInput(path: String)
  /// A folder named by an option or environment variable is not there.
  case folderNotFound(path: String, setting: String)
  /// Two outputs of one run would have the same path; the second would replace the first.
  case outputCollision(path: String, first: String, second: String)

  public var code: String {
    switch self {
    case .notFound: "file.notFound"
    case .isDirectory: "file.isDirectory"
    case .unreadable: "file.unreadable"
    case .unwritable: "file.unwritable"
    case .notUTF8: "file.notUTF8"
    case .notRegularFile: "file.notRegular"
    case .tooLarge: "file.tooLarge"
    case .lineTooLong: "file.lineTooLong"
    case .escapesFolder: "file.escapesFolder"
    case .outputIsInput: "file.outputIsInput"
    case .outputCollision: "file.outputCollision"
    case .folderNotFound: "file.folderNotFound"
    }
  }

  public var message: String {
    switch self {
    case .notFound(let path): "'\(path)' does not exist"
    case .isDirectory(let path): "'\(path)' is a directory; a file was expected"
    case .unreadable(let path, let reason): "cannot read '\(path)' (\(reason))"
    case .unwritable(let path, let reason): "cannot write '\(path)' (\(reason))"
    case .notUTF8(let path, let line?): "'\(path)' line \(line) is not valid UTF-8"
    case .notUTF8(let path, nil): "'\(path)' is not valid UTF-8"
    case .notRegularFile(let path, let kind):
      "'\(path)' is \(kind.description); a regular file was expected"
    case .tooLarge(let path, let bytes?, let limit):
      "'\(path)' is \(bytes) bytes; the limit for this input is \(limit) bytes"
    case .tooLarge(let path, nil, let limit):
      "'\(path)' grew past \(limit) bytes, the limit for this input, while it was read"
    case .lineTooLong(let path, let line, let limit):
      "'\(path)' line \(line) is longer than \(limit) bytes, the limit for one line"
    case .escapesFolder(let path, let folder, let what):
      "\(what) '\(path)' leads outside its folder '\(folder)'"
    case .outputIsInput(let path):
      "output '\(path)' is also an input; writing it would replace the input"
    case .outputCollision(let path, let first, let second):
      "inputs '\(first)' and '\(second)' would both be written to '\(path)'"
    case .folderNotFound(let path, let setting):
      "\(setting) names '\(path)', which is not a folder"
    }
  }

  public var hint: String? {
    switch self {
    case .isDirectory: "name a file inside the directory"
    case .unwritable(_, let reason):
      switch reason.errno {
      case ENOSPC?: "free space on that disk, then run again (nothing partial was left)"
      case EDQUOT?: "your disk quota is used up: free space in it, then run again"
      case EFBIG?:
        "the file is larger than this process may write (ulimit -f) or the file system holds"
      case EROFS?: "the disk is mounted read-only: write to another folder"
      default: "check that the folder exists and is writable"
      }
    case .notUTF8: "save the file as UTF-8"
    case .notRegularFile: "copy the data into a regular file and name that file"
    case .tooLarge: "check that this is the intended file"
    case .lineTooLong: "put one item on each line"
    case .escapesFolder:
      "name a file inside the folder with a relative path without '..' (links that lead out are refused too)"
    case .outputIsInput: "name the output with -o, or a different output folder"
    case .outputCollision: "rename one of the inputs or write them to separate folders"
    case .folderNotFound(_, let setting): "set \(setting) to an existing folder, or leave it unset"
    default: nil
    }
  }

  /// 413 for a file too large, 422 for a path that leads out of its folder (input refused),
  /// 500 for the rest: a file the server could not read or write is its own fault.
  public var status: Int {
    switch self {
    case .tooLarge: 413
    case .escapesFolder: 422
    case .notFound, .isDirectory, .unreadable, .unwritable, .notUTF8, .notRegularFile,
      .lineTooLong, .outputIsInput, .folderNotFound, .outputCollision:
      500
    }
  }

  /// The system's error (`system.ENOSPC`...) when a system call failed.
  public var underlying: (any Error)? {
    switch self {
    case .unreadable(_, let reason), .unwritable(_, let reason): reason.errno.map(SystemError.init)
    default: nil
    }
  }

  /// Why a file could not be read or written: the `errno` of the system call that failed (its
  /// text is `strerror`'s), or Imprint's own words (with the errno behind them, when known).
  ///
  /// The hint is chosen from `errno`, never from the text.
  public struct Reason: Sendable, Equatable, CustomStringConvertible,
    ExpressibleByStringInterpolation
  {
    /// What the message says in parentheses.
    public let description: String
    /// The system call's error number, when one failed.
    public let errno: Int32?

    /// A reason in Imprint's words, with the errno behind it when known.
    public init(_ description: String, errno: Int32? = nil) {
      self.description = description
      self.errno = errno
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// The failure of a system call that set `errno` (its text is `strerror`'s).
    public static func system(_ errno: Int32) -> Reason {
      Reason(String(cString: strerror(errno)), errno: errno)
    }
  }
}

/// A system call's failure: its `errno`, as the cause of a `FileError` (shown by `--verbose`).
public struct SystemError: ImprintError, Equatable {
  /// The error number (`ENOSPC`...).
  public let errno: Int32

  /// The error of `errno`.
  public init(_ errno: Int32) { self.errno = errno }

  /// `system.` and the errno's name (`system.ENOSPC`), or its number when it has no name here.
  public var code: String { "system." + (Self.names[errno] ?? "errno\(errno)") }

  /// The C library's text (`strerror`).
  public var message: String { String(cString: strerror(errno)) }

  /// 422, as any error not of a file (a system error is a cause; a `FileError` is thrown).
  public var status: Int { 422 }

  private static let names: [Int32: String] = [
    EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", ENXIO: "ENXIO",
    EBADF: "EBADF", EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EBUSY: "EBUSY",
    EEXIST: "EEXIST", EXDEV: "EXDEV", ENODEV: "ENODEV", ENOTDIR: "ENOTDIR", EISDIR: "EISDIR",
    EINVAL: "EINVAL", ENFILE: "ENFILE", EMFILE: "EMFILE", ETXTBSY: "ETXTBSY", EFBIG: "EFBIG",
    ENOSPC: "ENOSPC", ESPIPE: "ESPIPE", EROFS: "EROFS", EMLINK: "EMLINK", EPIPE: "EPIPE",
    ENAMETOOLONG: "ENAMETOOLONG", ELOOP: "ELOOP", EDQUOT: "EDQUOT", ESTALE: "ESTALE",
    EOVERFLOW: "EOVERFLOW", ENOEXEC: "ENOEXEC", E2BIG: "E2BIG", ECHILD: "ECHILD",
  ]
}

/// What a path names, when it is not the regular file that was expected.
public enum FileKind: String, Sendable, Equatable {
  case fifo
  case characterDevice
  case blockDevice
  case socket
  case symbolicLink
  case directory
  case other

  /// The kind of file `mode` (from `stat`) describes.
  public init(mode: UInt32) {
    switch Int32(bitPattern: mode) & 0o170000 {
    case 0o010000: self = .fifo
    case 0o020000: self = .characterDevice
    case 0o060000: self = .blockDevice
    case 0o140000: self = .socket
    case 0o120000: self = .symbolicLink
    case 0o040000: self = .directory
    default: self = .other
    }
  }

  /// The kind in words, with an article ("a FIFO").
  public var description: String {
    switch self {
    case .fifo: "a FIFO (named pipe)"
    case .characterDevice: "a character device"
    case .blockDevice: "a block device"
    case .socket: "a socket"
    case .symbolicLink: "a symbolic link"
    case .directory: "a directory"
    case .other: "not a regular file"
    }
  }
}
