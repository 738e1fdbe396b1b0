// SPDX-License-Identifier: Apache-2.0
// Imprint: streams the lines of a file or of standard input, without holding the whole file.

import Foundation

/// Reads a file (or standard input for `-`) line by line, in 64 KiB chunks, with a bound on the
/// length of one line.
///
/// Lines end at `\n`; a trailing `\r` is dropped. Lines are returned as raw bytes so that the
/// caller can report a line that is not UTF-8 with its number instead of failing the whole file.
/// A line longer than the limit is not held: its bytes are skipped up to its end and `next()`
/// throws `FileError.lineTooLong` for it, after which reading goes on with the next line. Memory
/// stays within one limit's worth of bytes whatever the input (a 10 MB line, `/dev/zero` piped in).
///
/// Regular files, pipes (standard input, `<(command)`) and FIFOs are read; devices, sockets and
/// folders are refused.
public struct LineReader: ~Copyable {
  private let descriptor: Int32
  private let ownsDescriptor: Bool
  private let path: String
  private let limit: Int
  private var buffer: [UInt8] = []
  private var start = 0
  /// Where the search for the next newline resumes (bytes before it hold none).
  private var scanned = 0
  private var finished = false
  /// The number of the line most recently returned (or refused), starting at 1.
  public private(set) var lineNumber = 0

  /// Opens `path`, or standard input when `path` is `-`.
  ///
  /// - Parameters:
  ///   - path: the file, or `-`.
  ///   - limit: the longest line accepted, in bytes.
  /// - Throws: `FileError.notFound`, `.isDirectory`, `.notRegularFile` or `.unreadable`.
  public init(path: String, limit: Int = FileIO.Limit.line) throws(FileError) {
    self.path = path
    self.limit = limit
    if path == "-" {
      descriptor = 0
      ownsDescriptor = false
      return
    }
    let (fd, status) = try FileIO.openAnyForReading(path)
    let kind = FileKind(mode: status.st_mode)
    guard status.st_mode & S_IFMT == S_IFREG || kind == .fifo else {
      close(fd)
      if kind == .directory { throw .isDirectory(path: path) }
      throw .notRegularFile(path: path, kind: kind)
    }
    descriptor = fd
    ownsDescriptor = true
  }

  deinit {
    if ownsDescriptor { close(descriptor) }
  }

  /// Returns the next line without its terminator, or nil at the end of the input.
  ///
  /// - Throws: `FileError.lineTooLong` for a line over the limit (call again for the next line),
  ///   `FileError.unreadable` when reading fails.
  public mutating func next() throws(FileError) -> [UInt8]? {
    var skipping = false
    while true {
      if let end = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
        let lineStart = start
        start = end + 1
        scanned = start
        lineNumber += 1
        if skipping || end - lineStart > limit + 1 {
          throw .lineTooLong(path: path, line: lineNumber, limit: limit)
        }
        var line = Array(buffer[lineStart..<end])
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if line.count > limit { throw .lineTooLong(path: path, line: lineNumber, limit: limit) }
        return line
      }
      scanned = buffer.count
      if finished {
        guard start < buffer.count || skipping else { return nil }
        var line = Array(buffer[start...])
        start = buffer.count
        scanned = start
        lineNumber += 1
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if skipping || line.count > limit {
          throw .lineTooLong(path: path, line: lineNumber, limit: limit)
        }
        return line
      }
      if buffer.count - start > limit + 1 {
        // Over the limit with no end in sight: drop what is held and skip to the line's end.
        skipping = true
        start = buffer.count
      }
      if start > 0 {
        buffer.removeFirst(start)
        scanned -= start
        start = 0
      }
      try fill()
    }
  }

  /// Appends one read's worth of bytes to the buffer, or marks the end of the input.
  private mutating func fill() throws(FileError) {
    var chunk = [UInt8](repeating: 0, count: 65_536)
    var count: Int
    repeat {
      count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    } while count < 0 && errno == EINTR
    if count < 0 {
      throw .unreadable(path: path, reason: .system(errno))
    }
    if count == 0 {
      finished = true
    } else {
      buffer.append(contentsOf: chunk[0..<count])
    }
  }
}
