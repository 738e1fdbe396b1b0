// SPDX-License-Identifier: Apache-2.0
// Imprint: the error protocol every domain error conforms to.
// See STYLE.md §3 for the message rules.

/// An error Imprint reports to a person or a program: a stable code, a message, an optional hint.
///
/// Every domain module has one error enum whose cases carry their evidence (the file, field, value)
/// and conform to this protocol. The CLI prints `error: <message>` and `hint: <hint>`; `--json`
/// output and batch results carry `code`, `message` and `hint` as data.
public protocol ImprintError: Error, Sendable, CustomStringConvertible {
  /// A stable dotted identifier, for example `qr.payloadTooLarge`; programs match on it.
  var code: String { get }
  /// What failed, naming the input; lowercase start, no final period.
  var message: String { get }
  /// How to fix it, when known.
  var hint: String? { get }
}

extension ImprintError {
  public var hint: String? { nil }

  public var description: String {
    if let hint { return "\(message) (hint: \(hint))" }
    return message
  }
}

/// Errors of reading and writing files, shared by every module.
public enum FileError: ImprintError, Equatable {
  /// The file does not exist.
  case notFound(path: String)
  /// The path names a directory where a file was expected.
  case isDirectory(path: String)
  /// The file exists but could not be read.
  case unreadable(path: String, reason: String)
  /// The output could not be written.
  case unwritable(path: String, reason: String)
  /// The input is not valid UTF-8 text.
  case notUTF8(path: String, line: Int?)

  public var code: String {
    switch self {
    case .notFound: "file.notFound"
    case .isDirectory: "file.isDirectory"
    case .unreadable: "file.unreadable"
    case .unwritable: "file.unwritable"
    case .notUTF8: "file.notUTF8"
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
    }
  }

  public var hint: String? {
    switch self {
    case .isDirectory: "name a file inside the directory"
    case .unwritable: "check that the folder exists and is writable"
    case .notUTF8: "save the file as UTF-8"
    default: nil
    }
  }
}
