// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: temporary folders, external tools (zbarimg, poppler, rsvg, gs) and paths.

import Foundation
import ImprintCore

/// The repository's root folder, found from this file's path.
public let repositoryRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<3 { url.deleteLastPathComponent() }
  return url.path
}()

/// The `imprint` executable built beside the test bundle: it hosts document workers
/// (`DocumentSandbox(executable:)`).
public let imprintExecutable = Bundle.main.bundleURL.appendingPathComponent("imprint").path

/// `Tests/Fixtures` in the repository.
public let fixturesFolder = repositoryRoot + "/Tests/Fixtures"

/// The text of the Python helper `name` in `Tests/Fixtures/Python` (a test server's handler, an
/// outside checker, a client no Swift library would be): run with `python3 FILE` or `-c`.
///
/// A missing file gives a script that exits naming it, so the test fails saying so.
public func pythonFixture(_ name: String) -> String {
  let path = fixturesFolder + "/Python/" + name
  return (try? String(contentsOfFile: path, encoding: .utf8))
    ?? "raise SystemExit('no Python fixture \(path)')\n"
}

/// The text of a price list of Tests/Fixtures/Prices (`usd-a4.json`: store S, v1, USD; mono 10/8
/// and colour 30/25 cents a side simplex/duplex; A4 plain paper 2 cents a sheet;
/// `usd-a4-a3-letter.json`: the same rates, A4 and Letter 2 cents, A3 4, stapling 10 a copy).
public func priceListFixture(_ name: String) -> String {
  (try? String(contentsOfFile: fixturesFolder + "/Prices/\(name)", encoding: .utf8)) ?? ""
}

/// A document of Tests/Fixtures/Documents, mapped as the engine maps an upload.
public func mappedDocumentFixture(_ name: String) throws -> DocumentBytes {
  try DocumentBytes(mapping: fixturesFolder + "/Documents/\(name)")
}

/// A fresh temporary folder, removed when the value is released.
public final class TemporaryFolder: Sendable {
  /// The folder's path.
  public let path: String

  /// Creates a new, empty folder under the system's temporary directory.
  public init() {
    let base = FileManager.default.temporaryDirectory.path
    var template = Array("\(base)/imprint-test-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
    }
    guard let made else { preconditionFailure("mkdtemp failed") }
    path = made
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// A path inside the folder.
  public func file(_ name: String) -> String { path + "/" + name }

  /// The names of the files in the folder, sorted (hidden ones included).
  public func contents() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }
}

/// What a finished process printed.
public struct ToolResult: Sendable {
  /// The exit status.
  public let status: Int32
  /// Standard output, as bytes.
  public let stdoutBytes: [UInt8]
  /// Standard error, as text.
  public let stderr: String
  /// Standard output, as text.
  public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
}

/// Runs `tool` (looked up on PATH unless it contains a slash) with `arguments`.
public func runTool(_ tool: String, _ arguments: [String], stdin: [UInt8]? = nil) throws
  -> ToolResult
{
  let process = Process()
  if tool.contains("/") {
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
  } else {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
  }
  let out = CloseOnExecPipe()
  let err = CloseOnExecPipe()
  let input = CloseOnExecPipe()
  process.standardOutput = out.fileHandleForWriting
  process.standardError = err.fileHandleForWriting
  process.standardInput = stdin == nil ? FileHandle.nullDevice : input.fileHandleForReading
  try process.run()
  out.closeWriteEnd()
  err.closeWriteEnd()
  input.closeReadEnd()
  if let stdin {
    input.fileHandleForWriting.write(Data(stdin))
    try input.fileHandleForWriting.close()
  }
  // Read both pipes concurrently so a full pipe never blocks the child.
  let errReader = PipeDrain(err.fileHandleForReading.fileDescriptor)
  let outData = readToEnd(out.fileHandleForReading.fileDescriptor)
  let errData = errReader.wait()
  process.waitUntilExit()
  return ToolResult(
    status: process.terminationStatus, stdoutBytes: [UInt8](outData),
    stderr: String(decoding: errData, as: UTF8.self))
}

/// Reads a pipe to its end on a thread of its own; `wait()` joins that thread.
///
/// The bytes cross threads through a semaphore: the reader stores them and then signals, and
/// `wait()` takes the signal before it reads them, so the store happens before the read (in the
/// memory model and for ThreadSanitizer, which intercepts libdispatch).
final class PipeDrain: @unchecked Sendable {
  // @unchecked: `data` is written once by the reading thread before `finished.signal()` and read
  // only after `finished.wait()`; the semaphore orders the two.
  private var data = Data()
  private let finished = DispatchSemaphore(value: 0)

  /// Starts reading `descriptor` until end of file.
  init(_ descriptor: Int32) {
    Thread { [self] in
      data = readToEnd(descriptor)
      finished.signal()
    }.start()
  }

  /// Waits for end of file and returns everything read.
  func wait() -> Data {
    finished.wait()
    return data
  }

  /// Waits at most `seconds` for end of file: everything read, or nil when it did not come.
  func wait(seconds: Double) -> Data? {
    guard finished.wait(timeout: .now() + seconds) == .success else { return nil }
    return data
  }
}

/// Everything until end of file, retrying reads a signal interrupts (FileHandle's
/// readDataToEndOfFile stops the process on EINTR).
func readToEnd(_ descriptor: Int32) -> Data {
  var data = Data()
  var buffer = [UInt8](repeating: 0, count: 65_536)
  while true {
    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    if count < 0 && errno == EINTR { continue }
    guard count > 0 else { return data }
    data.append(contentsOf: buffer[0..<count])
  }
}

/// Decodes every QR code in an image with zbarimg; nil when none is found.
public func zbarDecode(_ imagePath: String) throws -> String? {
  let result = try runTool("zbarimg", ["-q", "--raw", "--nodbus", imagePath])
  guard result.status == 0 else { return nil }
  var text = result.stdout
  if text.hasSuffix("\n") { text.removeLast() }
  return text
}

/// Decodes a QR code with zxing-cpp: its text, error-correction level and version, or nil.
public func zxingDecode(_ imagePath: String) throws -> (text: String, level: String, version: Int?)?
{
  let code = pythonFixture("zxing_decode.py")
  let result = try runTool("python3", ["-c", code, imagePath])
  guard result.status == 0 else { return nil }
  let parts = result.stdout.split(separator: "\0", omittingEmptySubsequences: false)
  guard parts.count == 3 else { return nil }
  return (String(parts[0]), String(parts[1]), Int(parts[2]))
}

/// Whether the second decoder, zxing-cpp with Pillow (PyPI, installed by scripts/bootstrap),
/// is importable.
public let zxingAvailable: Bool = {
  (try? runTool("python3", ["-c", "import zxingcpp, PIL"]).status) == 0
}()

/// Rasterises a PDF's first page to PNG at `dpi` with pdftoppm; returns the PNG path.
public func rasterisePDF(_ pdfPath: String, dpi: Int = 300) throws -> String {
  let base = pdfPath + ".raster"
  let result = try runTool("pdftoppm", ["-r", "\(dpi)", "-png", "-singlefile", pdfPath, base])
  precondition(result.status == 0, "pdftoppm failed: \(result.stderr)")
  return base + ".png"
}

/// A binary PPM's width, height and the offset of its first pixel.
public func ppmHeader(_ bytes: [UInt8]) -> (Int, Int, Int)? {
  var fields: [Int] = []
  var index = 2
  guard bytes.starts(with: Array("P6".utf8)) else { return nil }
  while fields.count < 3, index < bytes.count {
    while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A { index += 1 }
    var value = 0
    while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
      value = value * 10 + Int(bytes[index] - 0x30)
      index += 1
    }
    fields.append(value)
  }
  return fields.count == 3 ? (fields[0], fields[1], index + 1) : nil
}

/// An Office document made by its producer: `make-office.py KIND OUTPUT ARGUMENTS...`.
public func officeFixture(_ kind: String, _ arguments: [String] = [], in folder: TemporaryFolder)
  throws -> String
{
  let name = kind.replacingOccurrences(of: "-", with: ".")
  let extensions = [
    "docx": "docx", "pptx": "pptx", "xlsx": "xlsx", "odt": "odt",
  ]
  let type = String(kind.split(separator: "-")[0])
  let path = folder.file("\(name)-\(UUID().uuidString.prefix(8)).\(extensions[type] ?? type)")
  let result = try runTool(
    "python3", [fixturesFolder + "/Office/make-office.py", kind, path] + arguments)
  precondition(result.status == 0, "make-office.py \(kind) failed: \(result.stderr)")
  return path
}

/// Rasterises an SVG on a white background with rsvg-convert; returns the PNG path.
public func rasteriseSVG(_ svgPath: String) throws -> String {
  let output = svgPath + ".png"
  let result = try runTool("rsvg-convert", ["-b", "white", "-o", output, svgPath])
  precondition(result.status == 0, "rsvg-convert failed: \(result.stderr)")
  return output
}

/// Rasterises an EPS with Ghostscript at 300 dpi; returns the PNG path.
public func rasteriseEPS(_ epsPath: String) throws -> String {
  let output = epsPath + ".png"
  let result = try runTool(
    "gs",
    [
      "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-dEPSCrop", "-sDEVICE=pnggray", "-r300",
      "-o", output, epsPath,
    ])
  precondition(result.status == 0, "gs failed: \(result.stderr)")
  return output
}

/// `pdfinfo`'s fields (`Pages`, `Page size`, `Title`, ...).
public func pdfInfo(_ pdfPath: String) throws -> [String: String] {
  let result = try runTool("pdfinfo", [pdfPath])
  var fields: [String: String] = [:]
  for line in result.stdout.split(separator: "\n") {
    guard let colon = line.firstIndex(of: ":") else { continue }
    fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(
      in: .whitespaces)
  }
  return fields
}

/// Reads a PNG's IHDR (width, height, bit depth, colour type) and pHYs (pixels per metre).
public func pngHeader(_ bytes: [UInt8]) -> (
  width: Int, height: Int, bitDepth: Int, colorType: Int, pixelsPerMetre: Int?
)? {
  guard bytes.count > 33, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
  else { return nil }
  func be32(_ offset: Int) -> Int {
    bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
  }
  var pixelsPerMetre: Int?
  var offset = 8
  while offset + 8 <= bytes.count {
    let length = be32(offset)
    let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
    if type == "pHYs" { pixelsPerMetre = be32(offset + 8) }
    offset += 12 + length
  }
  return (be32(16), be32(20), Int(bytes[24]), Int(bytes[25]), pixelsPerMetre)
}

/// Compares `actual` with the golden file `Tests/<module>/Goldens/<name>`.
///
/// With `IMPRINT_RECORD_GOLDENS=1` the golden is rewritten and the comparison fails ("recorded
/// new golden; re-run"), so recording never passes silently. On a mismatch the actual text is
/// written under `.build/test-artifacts/` and the path is in the returned message.
/// - Returns: nil when equal, else a description of the mismatch.
public func goldenMismatch(_ actual: String, module: String, name: String) -> String? {
  let path = "\(repositoryRoot)/Tests/\(module)/Goldens/\(name)"
  if ProcessInfo.processInfo.environment["IMPRINT_RECORD_GOLDENS"] == "1" {
    try? FileManager.default.createDirectory(
      atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try? Data(actual.utf8).write(to: URL(fileURLWithPath: path))
    return "recorded new golden \(path); re-run without IMPRINT_RECORD_GOLDENS"
  }
  guard let expected = try? String(contentsOfFile: path, encoding: .utf8) else {
    return "golden \(path) is missing; run with IMPRINT_RECORD_GOLDENS=1 to record it"
  }
  if expected == actual { return nil }
  let actualPath = "\(repositoryRoot)/.build/test-artifacts/\(module)/\(name)"
  try? FileManager.default.createDirectory(
    atPath: (actualPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
  try? Data(actual.utf8).write(to: URL(fileURLWithPath: actualPath))
  return "output differs from golden \(path); actual written to \(actualPath)"
}

/// Words and their boxes from `pdftotext -bbox` (points, origin top-left), per page.
public func pdfWords(_ pdfPath: String) throws -> [[(
  word: String, xMin: Double, yMin: Double, xMax: Double, yMax: Double
)]] {
  let html = try runTool("pdftotext", ["-bbox", pdfPath, "-"]).stdout
  var pages: [[(String, Double, Double, Double, Double)]] = []
  for line in html.split(separator: "\n") {
    if line.contains("<page ") { pages.append([]) }
    guard line.contains("<word "), !pages.isEmpty else { continue }
    func attribute(_ name: String) -> Double {
      guard let range = line.range(of: "\(name)=\"") else { return .nan }
      let rest = line[range.upperBound...]
      return Double(rest.prefix { $0 != "\"" }) ?? .nan
    }
    let word = line.split(separator: ">").dropFirst().first?.split(separator: "<").first ?? ""
    pages[pages.count - 1].append(
      (String(word), attribute("xMin"), attribute("yMin"), attribute("xMax"), attribute("yMax")))
  }
  return pages
}

/// The whole text of a file under /proc, or nil when it cannot be read.
///
/// Foundation's `String(contentsOfFile:)` and `FileManager.contents(atPath:)` return only what
/// their first read(2) gives (about 4 KB) for a file whose size reads 0, as /proc's do: a
/// worker's maps under ThreadSanitizer is over 100 KB, and a mapped upload is listed past 4 KB.
public func procText(_ path: String) -> String? {
  procBytes(path).map { String(decoding: $0, as: UTF8.self) }
}

/// The sockets listening on TCP `port` (IPv4 or IPv6), as /proc/net/tcp names them in a
/// process's descriptors (`socket:[inode]`).
public func listeningSockets(port: Int) -> Set<String> {
  var sockets: Set<String> = []
  for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
    // Whole (`procText`): a loaded run lists a thousand sockets.
    for line in (procText(table) ?? "").split(separator: "\n").dropFirst() {
      let fields = line.split(separator: " ")
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      guard fields.count > 9, fields[3] == "0A",
        let colon = fields[1].lastIndex(of: ":"),
        Int(fields[1][fields[1].index(after: colon)...], radix: 16) == port
      else { continue }
      sockets.insert("socket:[\(fields[9])]")
    }
  }
  return sockets
}

/// The ones of `sockets` (`listeningSockets`' names) that one of `processes` holds open.
public func held(_ sockets: Set<String>, by processes: [pid_t]) -> Set<String> {
  guard !sockets.isEmpty else { return [] }
  var found: Set<String> = []
  for pid in processes {
    let folder = "/proc/\(pid)/fd"
    for descriptor in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
      if let target = try? FileManager.default.destinationOfSymbolicLink(
        atPath: folder + "/" + descriptor), sockets.contains(target)
      {
        found.insert(target)
      }
    }
  }
  return found
}

/// The whole content of a file under /proc (see `procText`), or nil when it cannot be read.
public func procBytes(_ path: String) -> [UInt8]? {
  try? FileIO.read(path, limit: 64 << 20)
}
