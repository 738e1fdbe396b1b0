// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: the user name and password for printers and CUPS schedulers that ask for
// them, read from a file only its owner can read (`--password-file`).

import Foundation
import ImprintCore

/// A user name and password for printers and schedulers that ask for credentials (HTTP Basic
/// or Digest, answered by libcups).
///
/// Never written anywhere: its description shows the user name only.
public struct PrintCredentials: Sendable, Equatable, CustomStringConvertible,
  CustomDebugStringConvertible, CustomReflectable
{
  /// The user name (also IPP's `requesting-user-name`).
  public var user: String
  /// The password.
  public var password: String

  /// The largest password file read, in bytes.
  public static let fileLimit = 4096
  /// The longest `user:password` line libcups sends, in bytes.
  public static let lineLimit = 190

  /// `user` with `password`.
  public init(user: String, password: String) {
    self.user = user
    self.password = password
  }

  /// The credentials in the file at `path`: one line `user:password` (the password is
  /// everything after the first colon, so it may hold colons; a final line break is dropped).
  ///
  /// The file must be a regular file of at most `fileLimit` bytes that neither its group nor
  /// others can read or write (mode `600` or `400`, as ssh asks of private keys): a password
  /// others can read is refused rather than used.
  ///
  /// - Throws: `FileError` when the file cannot be read (missing, a folder, a FIFO, too
  ///   large); `PrintError.passwordFile` when others may read it, or when its text is
  ///   not one `user:password` line of UTF-8 without control characters.
  public init(file path: String) throws {
    let bytes = try FileIO.readSecret(path, limit: Self.fileLimit, access: .ownerOnly) {
      PrintError.passwordFile(path: path, problem: $0)
    }
    try self.init(text: bytes, source: path)
  }

  /// The credentials in `text`, one line `user:password` (`source` names it in errors).
  ///
  /// - Throws: `PrintError.passwordFile` when `text` is not such a line.
  init(text: [UInt8], source: String) throws(PrintError) {
    var line = text[...]
    if line.last == UInt8(ascii: "\n") { line = line.dropLast() }
    if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
    guard let string = String(validating: line, as: UTF8.self) else {
      throw .passwordFile(path: source, problem: "it is not UTF-8 text")
    }
    guard !string.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else {
      throw .passwordFile(
        path: source,
        problem: "it holds more than one line, or control characters; one line user:password "
          + "was expected")
    }
    guard let colon = string.firstIndex(of: ":") else {
      throw .passwordFile(
        path: source, problem: "it has no ':'; one line user:password was expected")
    }
    let user = String(string[..<colon])
    let password = String(string[string.index(after: colon)...])
    guard !user.isEmpty, !password.isEmpty else {
      throw .passwordFile(
        path: source,
        problem: "its \(user.isEmpty ? "user name" : "password") is empty; one line "
          + "user:password was expected")
    }
    // libcups keeps `user:password` base64-encoded in 256 bytes.
    guard line.count <= Self.lineLimit else {
      throw .passwordFile(
        path: source,
        problem: "its line is \(line.count) bytes; user:password may be \(Self.lineLimit) at most")
    }
    self.init(user: user, password: password)
  }

  /// The user name only.
  public var description: String { "\(user):(password)" }

  /// The description: `dump`, `debugPrint` and string interpolation never show the password.
  public var debugDescription: String { description }

  /// The user name only, so that `dump` and loggers built on `Mirror` never show the password.
  public var customMirror: Mirror { Mirror(self, children: ["user": user]) }
}
