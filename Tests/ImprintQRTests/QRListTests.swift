// SPDX-License-Identifier: Apache-2.0
// ImprintQRTests: the bulk QR list called as a library (no CLI): typed per-line results, each
// line's failure its own, outputs confined to the folder.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintQR

@Suite("QRList", .liveHandlesChecked)
struct QRListTests {
  /// Writes `text` as the list `in.txt` in `folder`; returns its path.
  func list(_ text: String, in folder: TemporaryFolder) -> String {
    let path = folder.file("in.txt")
    #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
    return path
  }

  func code(of item: QRListItem) -> QRListCode? {
    try? item.result.get()
  }

  func errorCode(of item: QRListItem) -> String? {
    guard case .failure(let error) = item.result else { return nil }
    return (error as? any ImprintError)?.code
  }

  @Test("one code per non-blank line, named by NAME<TAB> or the line number, in line order")
  func codes() async throws {
    let folder = TemporaryFolder()
    let input = list("first\thttps://example.org/1\n\n  \nhttps://example.org/4\n", in: folder)
    let out = folder.file("out")
    let items = try await QRList.make(
      input: input, folder: out, format: .svg, settings: QRSettings(), jobs: 2)
    #expect(items.map(\.line) == [1, 4])
    let codes = items.compactMap(code(of:))
    #expect(codes.map(\.output) == [out + "/first.svg", out + "/000004.svg"])
    #expect(codes.map(\.payload.text) == ["https://example.org/1", "https://example.org/4"])
    #expect(codes.allSatisfy { $0.facts.format == .svg && $0.facts.pixelWidth == nil })
    #expect(codes.first?.facts.version == 2 && codes.first?.facts.level == .medium)
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).count == 2)
    #expect(try zbarDecode(rasteriseSVG(out + "/first.svg")) == "https://example.org/1")
  }

  @Test("an invalid address, a too-long line and a line not in UTF-8 fail alone")
  func lineErrors() async throws {
    let folder = TemporaryFolder()
    var text = Data("bad\t0x1234\n".utf8)
    text.append(Data(repeating: UInt8(ascii: "x"), count: FileIO.Limit.line + 10))
    text.append(Data("\nlatin\t".utf8) + Data([0xE9, 0x0A]))
    text.append(Data("ok\t0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\n".utf8))
    let input = folder.file("in.txt")
    try text.write(to: URL(fileURLWithPath: input))
    var settings = QRSettings(kind: .ethereum)
    settings.captionAddress = true
    let items = try await QRList.make(
      input: input, folder: folder.file("out"), format: .png, settings: settings, jobs: 1)
    #expect(items.map(\.line) == [1, 2, 3, 4])
    #expect(
      items.map(errorCode(of:)) == ["eth.invalidAddress", "file.lineTooLong", "file.notUTF8", nil])
    let made = try #require(code(of: items[3]))
    #expect(made.output == folder.file("out/ok.png"))
    // The address is printed under the code: taller than wide.
    let width = try #require(made.facts.pixelWidth)
    #expect((made.facts.pixelHeight ?? 0) > width)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("out")) == ["ok.png"])
  }

  @Test("names stay in the folder, never replace each other or the list itself")
  func confined() async throws {
    let folder = TemporaryFolder()
    let out = folder.file("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let input = out + "/codes.txt"
    let text = "../up\tone\n/etc/x\ttwo\nsame\tthree\nsame\tfour\ncodes\tfive\n.hidden\tsix\n"
    #expect(FileManager.default.createFile(atPath: input, contents: Data(text.utf8)))
    let items = try await QRList.make(
      input: input, folder: out, format: .text, settings: QRSettings(), jobs: 2)
    #expect(
      items.map(errorCode(of:))
        == [nil, nil, nil, "file.outputCollision", "file.outputIsInput", nil])
    #expect(
      items.compactMap(code(of:)).map(\.output)
        == ["_.._up", "_etc_x", "same", "_.hidden"].map { out + "/" + $0 + ".txt" })
    #expect(try String(contentsOfFile: input, encoding: .utf8) == text)
    #expect(folder.contents() == ["out"])
    #expect(QRList.sanitize(String(repeating: "n", count: 300)).count == QRList.maximumNameLength)
  }

  @Test("a style whose PNGs would pass the pixel bound is refused before the list is read")
  func rasterBound() async throws {
    let folder = TemporaryFolder()
    var settings = QRSettings()
    settings.style.sizeMillimetres = 1000
    settings.style.dpi = 4800
    await #expect {
      _ = try await QRList.make(
        input: folder.file("absent.txt"), folder: folder.file("out"), format: .png,
        settings: settings)
    } throws: { ($0 as? QRError)?.code == "qr.imageTooLarge" }
    await #expect {
      _ = try await QRList.make(
        input: folder.file("absent.txt"), folder: folder.file("out"), format: .svg,
        settings: settings)
    } throws: { ($0 as? FileError)?.code == "file.notFound" }
    #expect(folder.contents().isEmpty)
  }
}
