// SPDX-License-Identifier: Apache-2.0
// Imprint: CSV records per RFC 4180 (quoted fields with commas, doubled quotes and line breaks,
// CRLF or LF, a byte-order mark), streamed with a bound on the length of one record.

import Foundation

/// One record of a CSV file.
public struct CSVRecord: Sendable, Equatable {
  /// The 1-based line the record starts on.
  public var line: Int
  /// Its fields, unquoted (a line break inside quotes is `\n`, whether the file wrote CRLF or LF).
  public var fields: [String]
  /// The record as it is in the file, without its line end (a fingerprint of the record).
  public var text: String

  /// A record starting on `line`.
  public init(line: Int, fields: [String], text: String) {
    self.line = line
    self.fields = fields
    self.text = text
  }
}

/// A record that could not be read; reading goes on with the next record.
public enum CSVError: ImprintError, Equatable {
  /// A record longer than the limit (its bytes are skipped, not held).
  case recordTooLong(path: String, line: Int, limit: Int)
  /// A quote opened on `line` and never closed before the end of the file.
  case unclosedQuote(path: String, line: Int)
  /// Text after the closing quote of a quoted field (`"a"b`).
  case strayQuote(path: String, line: Int)
  /// A record that is not valid UTF-8.
  case notUTF8(path: String, line: Int)
  /// The file could not be read (reading stops).
  case file(FileError)

  public var code: String {
    switch self {
    case .recordTooLong: "csv.recordTooLong"
    case .unclosedQuote: "csv.unclosedQuote"
    case .strayQuote: "csv.strayQuote"
    case .notUTF8: "csv.notUTF8"
    case .file(let error): error.code
    }
  }

  public var message: String {
    switch self {
    case .recordTooLong(let path, let line, let limit):
      "'\(path)': the record starting on line \(line) is longer than \(limit) bytes"
    case .unclosedQuote(let path, let line):
      "'\(path)': the quote opened on line \(line) is never closed"
    case .strayQuote(let path, let line):
      "'\(path)' line \(line): text follows the closing quote of a field"
    case .notUTF8(let path, let line): "'\(path)' line \(line) is not valid UTF-8"
    case .file(let error): error.message
    }
  }

  public var hint: String? {
    switch self {
    case .recordTooLong, .unclosedQuote:
      "check the quotes of that line: a field with a quote must start with one and double the "
        + "quotes inside it"
    case .strayQuote: "quote the whole field and double the quotes inside it (\"a \"\"b\"\"\")"
    case .notUTF8: "save the file as UTF-8 CSV"
    case .file(let error): error.hint
    }
  }

  /// 422 for a record that cannot be read; the file error's own for a file.
  public var status: Int {
    switch self {
    case .recordTooLong, .unclosedQuote, .strayQuote, .notUTF8: 422
    case .file(let error): error.status
    }
  }

  /// A file error's own cause (the errno behind it).
  public var underlying: (any Error)? {
    if case .file(let error) = self { error.underlying } else { nil }
  }

  /// Whether reading can go on with the next record.
  public var isRecordError: Bool {
    if case .file = self { false } else { true }
  }
}

/// Reads a CSV file (RFC 4180) one record at a time, in 64 KiB chunks.
///
/// Fields are separated by commas and records by CRLF or LF; a field that starts with a quote
/// runs to the next single quote, holding commas, line breaks and doubled quotes. A quote inside
/// an unquoted field is kept as text (`5" card`), as spreadsheets do. A UTF-8 byte-order mark at
/// the start is skipped. A record longer than the limit is not held: its bytes are skipped to
/// its end and `next()` throws `recordTooLong` naming the line it started on, then goes on with
/// the next record; memory stays within one limit's worth of bytes whatever the file holds (a
/// quote never closed included).
public struct CSVReader: ~Copyable {
  private let descriptor: Int32
  private let path: String
  /// The file's name in errors.
  private let name: String
  private let limit: Int
  private var buffer = [UInt8](repeating: 0, count: 65_536)
  private var count = 0
  private var position = 0
  private var finished = false
  private var started = false
  /// The line the reader is on (1-based).
  private var currentLine = 1
  /// The line the most recent record (or error) started on.
  public private(set) var lineNumber = 0

  /// Opens `path`, a regular file.
  ///
  /// - Parameters:
  ///   - path: the file.
  ///   - name: the file's name in errors (default: `path`).
  ///   - limit: the longest record accepted, in bytes.
  /// - Throws: `FileError.notFound`, `.isDirectory`, `.notRegularFile` or `.unreadable`.
  public init(path: String, name: String? = nil, limit: Int = FileIO.Limit.line) throws(FileError) {
    (descriptor, _) = try FileIO.openForReading(path)
    self.path = path
    self.name = name ?? path
    self.limit = limit
  }

  deinit { close(descriptor) }

  private enum State {
    case fieldStart, unquoted, quoted, quoteInQuoted, afterQuote
  }

  /// The next record, or nil at the end of the file.
  ///
  /// - Throws: a record error (`isRecordError`: call again for the next record), or
  ///   `CSVError.file` when reading fails.
  public mutating func next() throws(CSVError) -> CSVRecord? {
    var raw: [UInt8] = []
    var fields: [[UInt8]] = []
    var field: [UInt8] = []
    var state = State.fieldStart
    var tooLong = false
    var stray = false
    var pendingCR = false
    var any = false
    let startLine = currentLine
    func endField() {
      if !tooLong { fields.append(field) }
      field.removeAll(keepingCapacity: true)
    }
    while true {
      if position == count {
        if finished { break }
        try fill()
        if position == count { break }
      }
      if state == .quoted && !pendingCR && buffer[position] != 0x22 {
        // Inside quotes, up to the next quote at once (a quote never closed is read fast).
        let end = quotedRun(&field, &raw, keep: !tooLong)
        any = true
        position = end
        if !tooLong && raw.count > limit + 1 {
          tooLong = true
          raw = []
          fields = []
          field = []
        }
        continue
      }
      let byte = buffer[position]
      position += 1
      any = true
      // A CR is part of the line end when an LF follows; anywhere else it is text.
      if pendingCR {
        pendingCR = false
        if byte != 0x0A {
          if state == .afterQuote {
            stray = true
          } else {
            if !tooLong { field.append(0x0D) }
            state = .unquoted
          }
        }
      }
      if byte == 0x0A { currentLine += 1 }
      switch state {
      case .quoted:
        if byte == 0x22 {
          state = .quoteInQuoted
        } else if !tooLong {
          if byte == 0x0A, field.last == 0x0D { field.removeLast() }
          field.append(byte)
        }
      case .quoteInQuoted:
        if byte == 0x22 {
          if !tooLong { field.append(0x22) }
          state = .quoted
          break
        }
        state = .afterQuote
        fallthrough
      case .fieldStart, .unquoted, .afterQuote:
        switch byte {
        case 0x0A:
          endField()
          lineNumber = startLine
          if raw.last == 0x0D { raw.removeLast() }
          return try finish(
            raw: raw, fields: fields, tooLong: tooLong, stray: stray, from: startLine)
        case 0x0D:
          pendingCR = true
        case 0x2C:
          endField()
          state = .fieldStart
        case 0x22 where state == .fieldStart:
          state = .quoted
        default:
          if state == .afterQuote {
            stray = true
          } else {
            state = .unquoted
            if !tooLong { field.append(byte) }
          }
        }
      }
      if !tooLong {
        raw.append(byte)
        if raw.count > limit + 1 {
          tooLong = true
          raw = []
          fields = []
          field = []
        }
      }
    }
    // The end of the file.
    guard any else { return nil }
    lineNumber = startLine
    if state == .quoted { throw .unclosedQuote(path: name, line: startLine) }
    if pendingCR && !tooLong { raw.removeLast() }
    endField()
    return try finish(raw: raw, fields: fields, tooLong: tooLong, stray: stray, from: startLine)
  }

  /// Takes the bytes from `position` to the next quote (or the end of the buffer) as quoted text.
  ///
  /// Counts their line breaks and, when `keep`, appends them to the record and the field (CRLF
  /// as LF). Returns where it stopped.
  private mutating func quotedRun(_ field: inout [UInt8], _ raw: inout [UInt8], keep: Bool)
    -> Int
  {
    let start = position
    var lines = 0
    var hasCR = false
    let end = buffer.withUnsafeBufferPointer { all -> Int in
      guard let base = all.baseAddress else { return start }
      let offset = { (found: UnsafeMutableRawPointer) in
        Int(bitPattern: found) - Int(bitPattern: base)
      }
      let stop = memchr(base + start, 0x22, count - start).map(offset) ?? count
      var cursor = start
      while cursor < stop, let found = memchr(base + cursor, 0x0A, stop - cursor) {
        lines += 1
        cursor = offset(found) + 1
      }
      hasCR = keep && memchr(base + start, 0x0D, stop - start) != nil
      return stop
    }
    currentLine += lines
    if keep {
      raw.append(contentsOf: buffer[start..<end])
      if hasCR || (field.last == 0x0D && buffer[start] == 0x0A) {
        for byte in buffer[start..<end] {
          if byte == 0x0A, field.last == 0x0D { field.removeLast() }
          field.append(byte)
        }
      } else {
        field.append(contentsOf: buffer[start..<end])
      }
    }
    return end
  }

  private func finish(raw: [UInt8], fields: [[UInt8]], tooLong: Bool, stray: Bool, from line: Int)
    throws(CSVError) -> CSVRecord
  {
    if tooLong || raw.count > limit {
      throw .recordTooLong(path: name, line: line, limit: limit)
    }
    if stray { throw .strayQuote(path: name, line: line) }
    guard let text = String(validating: raw, as: UTF8.self) else {
      throw .notUTF8(path: name, line: line)
    }
    var strings: [String] = []
    strings.reserveCapacity(fields.count)
    for field in fields {
      guard let string = String(validating: field, as: UTF8.self) else {
        throw .notUTF8(path: name, line: line)
      }
      strings.append(string)
    }
    return CSVRecord(line: line, fields: strings, text: text)
  }

  /// Reads the next chunk (skipping a byte-order mark at the start of the file).
  private mutating func fill() throws(CSVError) {
    var got: Int
    repeat {
      got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    } while got < 0 && errno == EINTR
    if got < 0 {
      throw .file(.unreadable(path: path, reason: .system(errno)))
    }
    count = max(got, 0)
    position = 0
    if got == 0 { finished = true }
    if !started {
      started = true
      // A BOM split over reads is not possible: the first read of a regular file returns at
      // least 3 bytes when it has them.
      if count >= 3 && buffer[0] == 0xEF && buffer[1] == 0xBB && buffer[2] == 0xBF { position = 3 }
    }
  }
}
