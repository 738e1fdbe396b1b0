// SPDX-License-Identifier: Apache-2.0
// ImprintQRTests: every output format decodes to the exact payload with independent decoders.

import Foundation
import ImprintCore
import ImprintGraphics
import ImprintQR
import ImprintTestSupport
import Testing

private func write(_ rendering: QRRendering, _ folder: TemporaryFolder, _ name: String) throws
  -> String
{
  let path = folder.file(name)
  try Data(rendering.bytes).write(to: URL(fileURLWithPath: path))
  return path
}

/// Rasterises any format to a PNG a decoder can read.
private func raster(_ path: String, _ format: QRFormat) throws -> String {
  switch format {
  case .png: path
  case .svg: try rasteriseSVG(path)
  case .pdf: try rasterisePDF(path)
  case .eps: try rasteriseEPS(path)
  case .text: preconditionFailure("text is not an image")
  }
}

@Suite("Rendering, decoded independently", .liveHandlesChecked)
struct RenderTests {
  static let payloads = [
    "0x52908400098527886E0F7030069857D2E4169EE7",
    "ethereum:0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359@1?value=2014000000000000000&gas=21000",
    "bitcoin:bc1qvyq0cc6rahyvsazfdje0twl7ez82ndmuac2lhv?amount=0.5&label=Caf%C3%A9",
    "https://steemit.com/@harbor-lamp",
    "안녕하세요 — こんにちは — مرحبا",
  ]

  @Test(
    "PNG, SVG, PDF and EPS all decode to the exact payload with zbarimg",
    arguments: payloads, [QRFormat.png, .svg, .pdf, .eps])
  func decodes(payload: String, format: QRFormat) throws {
    let folder = TemporaryFolder()
    let rendering = try QRRenderer.render(payload: payload, style: QRStyle(), format: format)
    let path = try write(rendering, folder, "code.\(format.rawValue)")
    #expect(try zbarDecode(raster(path, format)) == payload)
  }

  @Test(
    "zxing-cpp reads the PNGs too, at the level asked for",
    arguments: [QRErrorCorrection.low, .medium, .quartile, .high])
  func zxing(level: QRErrorCorrection) throws {
    guard zxingAvailable else {
      Issue.record("zxing-cpp is not installed: run scripts/bootstrap")
      return
    }
    let folder = TemporaryFolder()
    var style = QRStyle()
    style.level = level
    let payload = Self.payloads[0]
    let rendering = try QRRenderer.render(payload: payload, style: style, format: .png)
    let decoded = try #require(try zxingDecode(try write(rendering, folder, "z.png")))
    #expect(decoded.text == payload)
    #expect(decoded.level == level.rawValue)
    #expect(decoded.version == rendering.matrix.version)
  }

  @Test("PNG: 1-bit grey, 8 px modules, 4-module quiet zone, DPI stored")
  func pngLayout() throws {
    let rendering = try QRRenderer.render(payload: Self.payloads[0], style: QRStyle(), format: .png)
    let header = try #require(pngHeader(rendering.bytes))
    #expect(header.bitDepth == 1 && header.colorType == 0)
    #expect(header.width == (29 + 8) * 8 && header.height == header.width)
    #expect(header.pixelsPerMetre == 11811)
  }

  @Test("--size and --dpi give whole-pixel modules closest to the printed size")
  func pngPhysicalSize() throws {
    var style = QRStyle()
    style.sizeMillimetres = 20
    style.dpi = 600
    let rendering = try QRRenderer.render(payload: Self.payloads[0], style: style, format: .png)
    // 20 mm at 600 dpi = 472.4 px over 29 modules = 16.3 → 16 px.
    #expect(rendering.modulePixels == 16)
    #expect(pngHeader(rendering.bytes)?.width == 37 * 16)
  }

  @Test("PDF pages have the exact physical size: symbol + quiet zone")
  func pdfSize() throws {
    let folder = TemporaryFolder()
    var style = QRStyle()
    style.sizeMillimetres = 25
    let rendering = try QRRenderer.render(payload: Self.payloads[0], style: style, format: .pdf)
    let path = try write(rendering, folder, "s.pdf")
    let expected = 25.0 / 29 * 37 / 25.4 * 72
    let size = try #require(try pdfInfo(path)["Page size"])
    let width = Double(size.split(separator: " ")[0]) ?? 0
    #expect(abs(width - expected) < 0.01)
    #expect(abs(rendering.symbolMillimetres - 25) < 1e-9)
  }

  @Test(
    "the same input gives the same bytes in every format",
    arguments: [QRFormat.png, .svg, .pdf, .eps])
  func deterministic(format: QRFormat) throws {
    var style = QRStyle()
    style.caption = "0x 5290 8400"
    let a = try QRRenderer.render(payload: Self.payloads[0], style: style, format: format)
    let b = try QRRenderer.render(payload: Self.payloads[0], style: style, format: format)
    #expect(a.bytes == b.bytes)
  }

  @Test("SVG is one path of row runs, never a rect per module")
  func svgStructure() throws {
    let rendering = try QRRenderer.render(payload: Self.payloads[0], style: QRStyle(), format: .svg)
    let svg = String(decoding: rendering.bytes, as: UTF8.self)
    #expect(svg.components(separatedBy: "<path").count == 2)
    #expect(svg.components(separatedBy: "<rect").count == 2)  // the background only
    #expect(svg.contains("viewBox=\"0 0 37 37\"") && svg.contains("crispEdges"))
  }

  @Test(
    "captions render below the code, which still decodes", arguments: [QRFormat.png, .svg, .pdf])
  func caption(format: QRFormat) throws {
    let folder = TemporaryFolder()
    var style = QRStyle()
    style.caption = groupedForReading(Self.payloads[0])
    let rendering = try QRRenderer.render(payload: Self.payloads[0], style: style, format: format)
    let path = try write(rendering, folder, "c.\(format.rawValue)")
    #expect(try zbarDecode(raster(path, format)) == Self.payloads[0])
    if format == .pdf {
      let text = try runTool("pdftotext", [path, "-"]).stdout
      #expect(text.contains("0x 5290 8400 0985 2788 6E0F"))
      #expect(text.contains("7030 0698 57D2 E416 9EE7"))
    }
    if format == .png {
      let header = try #require(pngHeader(rendering.bytes))
      #expect(header.height > header.width)
    }
  }

  @Test("custom colours with enough contrast decode; palette PNG keeps 1 bit a pixel")
  func colours() throws {
    let folder = TemporaryFolder()
    var style = QRStyle()
    style.foreground = try #require(Color(parsing: "#1B2A6B"))
    style.background = try #require(Color(parsing: "#FFF8E7"))
    let rendering = try QRRenderer.render(payload: Self.payloads[3], style: style, format: .png)
    #expect(pngHeader(rendering.bytes)?.colorType == 3)
    #expect(pngHeader(rendering.bytes)?.bitDepth == 1)
    #expect(try zbarDecode(write(rendering, folder, "c.png")) == Self.payloads[3])
  }

  @Test("inverted and low-contrast colours are refused unless allowed")
  func contrast() throws {
    var style = QRStyle()
    style.foreground = .white
    style.background = .black
    #expect(throws: QRError.invertedColors(foreground: .white, background: .black)) {
      _ = try QRRenderer.render(payload: "x", style: style, format: .png)
    }
    style.foreground = try #require(Color(parsing: "#FF0000"))
    style.background = .white
    do {
      _ = try QRRenderer.render(payload: "x", style: style, format: .png)
      Issue.record("red on white (4.0:1) must be refused")
    } catch let error as QRError {
      #expect(error.code == "qr.lowContrast")
      #expect(error.message.contains("#FF0000") && error.message.contains("3.99:1"))
    }
    style.allowLowContrast = true
    _ = try QRRenderer.render(payload: "x", style: style, format: .png)
  }

  @Test("terminal text: half blocks, two module rows per line, quiet zone included")
  func terminal() throws {
    let rendering = try QRRenderer.render(
      payload: Self.payloads[0], style: QRStyle(), format: .text)
    let lines = String(decoding: rendering.bytes, as: UTF8.self).split(
      separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 19 + 1)  // ceil(37 / 2) lines and the final newline
    #expect(lines[0].count == 37)
    #expect(lines[2].hasPrefix("    \u{2588}\u{2580}\u{2580}"))  // finder pattern's top edge
  }

  @Test("many tasks render at once and every code decodes")
  func concurrent() async throws {
    let folder = TemporaryFolder()
    let addresses = (0..<24).map { index in
      "0x" + String(repeating: String(index % 10), count: 40)
    }
    try await withThrowingTaskGroup(of: (String, [UInt8]).self) { group in
      for address in addresses {
        group.addTask {
          var style = QRStyle()
          style.caption = address
          let format: QRFormat = address.hasSuffix("0") ? .pdf : .png
          return (
            address, try QRRenderer.render(payload: address, style: style, format: format).bytes
          )
        }
      }
      for try await (address, bytes) in group {
        let isPDF = bytes.starts(with: Array("%PDF".utf8))
        let path = folder.file(String(address.suffix(3)) + (isPDF ? ".pdf" : ".png"))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try zbarDecode(isPDF ? rasterisePDF(path) : path) == address)
      }
    }
  }
}
