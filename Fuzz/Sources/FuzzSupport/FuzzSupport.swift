// SPDX-License-Identifier: Apache-2.0
// FuzzSupport: runs libFuzzer, and the small helpers the harnesses share.

import CFuzzerDriver
import Foundation

/// libFuzzer's callback: one input; returns 0 (or -1 to keep the input out of the corpus).
public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

/// Runs libFuzzer's driver with `callback`; called by each target's `<Target>_main`.
///
/// - Returns: libFuzzer's exit status.
public func runFuzzer(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
  _ callback: FuzzCallback
) -> Int32 {
  var count = argc
  var arguments = argv
  return LLVMFuzzerRunDriver(&count, &arguments, callback)
}

/// The input as an array.
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
  guard let data, size > 0 else { return [] }
  return Array(UnsafeBufferPointer(start: data, count: size))
}

/// The repository's root folder (the fuzz package is its `Fuzz/` folder).
public let repositoryRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<4 { url.deleteLastPathComponent() }
  return url.path
}()

/// A private folder for the harnesses that can only hand a parser a file path; removed at exit.
public let scratchFolder: String = {
  let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
  var template = Array("\(base)/imprint-fuzz-XXXXXX".utf8CString)
  let made = template.withUnsafeMutableBufferPointer { buffer in
    buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
  }
  guard let made else { preconditionFailure("mkdtemp failed") }
  atexit { try? FileManager.default.removeItem(atPath: scratchFolder) }
  return made
}()

/// Writes `bytes` to `name` in the scratch folder (replacing it) and returns the path.
public func scratchFile(_ name: String, _ bytes: [UInt8]) -> String {
  let path = scratchFolder + "/" + name
  guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
    preconditionFailure("cannot write \(path)")
  }
  return path
}

/// Splits the input at newlines into at most `count` fields (the last takes the rest), decoding
/// each as UTF-8 (invalid sequences become U+FFFD, as text from a form would).
public func fields(_ bytes: [UInt8], count: Int) -> [String] {
  var parts = bytes.split(
    separator: UInt8(ascii: "\n"), maxSplits: count - 1, omittingEmptySubsequences: false)
  while parts.count < count { parts.append([]) }
  return parts.map { String(decoding: $0, as: UTF8.self) }
}

/// A PDF of `objects` (object 1 the root; binary stream data allowed) with a correct
/// cross-reference table, for targets that put their input inside a PDF. (The tests'
/// `HostileDocuments.pdf(bytes:)`, which this package cannot import: the test support module is
/// no product of Imprint's.)
public func pdfFile(objects: [[UInt8]]) -> [UInt8] {
  var out = Array("%PDF-1.4\n".utf8)
  var offsets: [Int] = []
  for (index, body) in objects.enumerated() {
    offsets.append(out.count)
    out += Array("\(index + 1) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
  }
  var table = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
  for offset in offsets {
    table += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n"
  }
  table += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(out.count)\n%%EOF\n"
  return out + Array(table.utf8)
}
