// SPDX-License-Identifier: Apache-2.0
// Imprint: streams the lines of a file or of standard input, without holding the whole file.

import Foundation

/// Reads a file (or standard input for `-`) line by line, in 64 KiB chunks.
///
/// Lines end at `\n`; a trailing `\r` is dropped. Lines are returned as raw bytes so that the
/// caller can report a line that is not UTF-8 with its number instead of failing the whole file.
public struct LineReader: ~Copyable {
  private let descriptor: Int32
  private let ownsDescriptor: Bool
  private var buffer: [UInt8] = []
  private var start = 0
  private var finished = false
  /// The number of the line most recently returned, starting at 1.
  public private(set) var lineNumber = 0

  /// Opens `path`, or standard input when `path` is `-`.
  ///
  /// - Throws: `FileError.notFound`, `FileError.isDirectory` or `FileError.unreadable`.
  public init(path: String) throws(FileError) {
    if path == "-" {
      descriptor = 0
      ownsDescriptor = false
      return
    }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw .notFound(path: path)
    }
    if isDirectory.boolValue { throw .isDirectory(path: path) }
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
    descriptor = fd
    ownsDescriptor = true
  }

  deinit {
    if ownsDescriptor { close(descriptor) }
  }

  /// Returns the next line without its terminator, or nil at the end of the input.
  public mutating func next() -> [UInt8]? {
    while true {
      if let end = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
        var line = Array(buffer[start..<end])
        start = end + 1
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        lineNumber += 1
        return line
      }
      if finished {
        guard start < buffer.count else { return nil }
        var line = Array(buffer[start...])
        start = buffer.count
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        lineNumber += 1
        return line
      }
      buffer.removeFirst(start)
      start = 0
      var chunk = [UInt8](repeating: 0, count: 65_536)
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count <= 0 {
        finished = true
      } else {
        buffer.append(contentsOf: chunk[0..<count])
      }
    }
  }
}
