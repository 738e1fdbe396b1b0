// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: text shaped once where it was measured and drawn on another thread, as the
// glyphs Pango's cairo renderer would draw.

internal import CCairo
internal import CFontconfig
internal import CPango
import Foundation
import Synchronization

/// A block's glyphs as Pango laid them out, ready to be drawn by any thread: the glyph runs
/// `pango_cairo_show_layout` would hand to cairo, with the same fonts, positions and text.
///
/// A card's texts are measured (shaped) while it is laid out, on whichever thread prepares it,
/// and drawn into the PDF by the one thread writing it: without this, each text was shaped a
/// second time there. A thread's Pango objects never leave it; only cairo scaled fonts do.
///
/// `@unchecked Sendable`: immutable once made; its cairo scaled fonts are reference counted
/// atomically and locked by cairo itself, which shares them between threads by design.
final class ShapedText: @unchecked Sendable {
  /// One glyph item of a line: Pango's `PangoGlyphItem` as its cairo renderer draws it.
  struct Run {
    /// The font, one reference owned.
    let font: OpaquePointer
    /// The font's file as HarfBuzz reads it (`hb_face_t`, one reference owned: immutable and
    /// shared between threads by design), for the PDFs Imprint writes itself.
    let face: OpaquePointer?
    /// The font's size in points of the block (its matrix's scale times the layout's factor).
    let size: Double
    /// Whether fontconfig asks for the font emboldened (a bold weight the family lacks, when
    /// the configuration says so): cairo then thickens its outlines by a 24th of the size.
    let emboldened: Bool
    /// The item's text (UTF-8), for the PDF's text extraction.
    let text: [CChar]
    /// Where the run starts, in Pango units of the layout (`unit`) from its top-left corner.
    let x: Int32
    let y: Int32
    /// Glyph ids, and their offsets from the run's start in Pango units.
    let glyphs: [(index: UInt, dx: Int32, dy: Int32)]
    /// How many bytes and glyphs each cluster has, as cairo wants them.
    let clusters: [cairo_text_cluster_t]
    /// Whether the run is right to left (clusters in backward order).
    let backward: Bool
    /// Each cluster's glyphs (indices into `glyphs`, possibly none) and its bytes of `text`,
    /// in the glyphs' order: a PDF Imprint writes itself gives a glyph its text from these.
    let spans: [(glyphs: Range<Int>, text: Range<Int>)]
  }

  /// A character no font has, as a box where Pango draws its hex digits: its left edge and
  /// baseline in Pango units of the layout from its top-left corner, its advance, and the font
  /// size in points.
  struct Missing {
    let x: Int32
    let y: Int32
    let width: Int32
    let size: Double
  }

  let runs: [Run]
  /// The missing characters' boxes (only when made with `missing: true`).
  let missing: [Missing]
  let metrics: TextMetrics
  /// The block's size over the size it was laid out at (`TextLayout.factor`): the runs' fonts
  /// (`Run.font`) are at the layout's size.
  let factor: Double
  /// Points per Pango unit of the positions.
  var unit: Double { factor / Double(PANGO_SCALE) }

  private init(runs: [Run], missing: [Missing], metrics: TextMetrics, factor: Double) {
    self.runs = runs
    self.missing = missing
    self.metrics = metrics
    self.factor = factor
  }

  deinit {
    for run in runs {
      cairo_scaled_font_destroy(run.font)
      if let face = run.face { hb_face_destroy(face) }
    }
  }

  /// The glyphs `pango_cairo_show_layout` would draw for `layout` (Pango 1.50's renderer:
  /// lines at their logical x and baseline, runs one after another with their offsets), or nil
  /// when the layout holds what only Pango draws (a character no font has, drawn as a box of
  /// hex digits, unless `missing`: then a box is kept for it; vertical text).
  static func make(from layout: TextLayout, metrics: TextMetrics, missing: Bool = false)
    -> ShapedText?
  {
    guard let text = pango_layout_get_text(layout.pango),
      let iterator = pango_layout_get_iter(layout.pango)
    else { return nil }
    defer { pango_layout_iter_free(iterator) }
    let empty = UInt32(0x0FFF_FFFF)  // PANGO_GLYPH_EMPTY
    let unknown = UInt32(0x1000_0000)  // PANGO_GLYPH_UNKNOWN_FLAG
    var runs: [Run] = []
    var boxes: [Missing] = []
    var made = true
    func release() {
      for run in runs {
        cairo_scaled_font_destroy(run.font)
        if let face = run.face { hb_face_destroy(face) }
      }
    }
    repeat {
      guard let line = pango_layout_iter_get_line_readonly(iterator) else { continue }
      var logical = PangoRectangle()
      pango_layout_iter_get_line_extents(iterator, nil, &logical)
      let baseline = pango_layout_iter_get_baseline(iterator)
      var offset: Int32 = 0
      var node = line.pointee.runs
      while let current = node, made {
        node = current.pointee.next
        guard let data = current.pointee.data else { continue }
        let run = data.assumingMemoryBound(to: PangoGlyphItem.self)
        guard let item = run.pointee.item, let glyphs = run.pointee.glyphs,
          item.pointee.analysis.flags & UInt8(PANGO_ANALYSIS_FLAG_CENTERED_BASELINE) == 0,
          let font = item.pointee.analysis.font,
          let scaled = pango_cairo_font_get_scaled_font(OpaquePointer(font)),
          cairo_scaled_font_status(scaled) == CAIRO_STATUS_SUCCESS
        else {
          made = false
          break
        }
        let width = pango_glyph_string_get_width(glyphs)
        offset += run.pointee.start_x_offset
        let glyphCount = Int(glyphs.pointee.num_glyphs)
        var placed: [(index: UInt, dx: Int32, dy: Int32)] = []
        placed.reserveCapacity(glyphCount)
        // Each glyph's index in `placed`, or its next drawn glyph's for one not drawn.
        var placedAt: [Int] = []
        placedAt.reserveCapacity(glyphCount + 1)
        var position: Int32 = 0
        var matrix = cairo_matrix_t()
        cairo_scaled_font_get_font_matrix(scaled, &matrix)
        let size = abs(matrix.yy) * layout.factor
        for index in 0..<glyphCount {
          let glyph = glyphs.pointee.glyphs[index]
          placedAt.append(placed.count)
          if glyph.glyph != empty {
            if glyph.glyph & unknown != 0 {
              guard missing else {
                made = false
                break
              }
              boxes.append(
                Missing(
                  x: logical.x + offset + position, y: baseline - run.pointee.y_offset,
                  width: glyph.geometry.width, size: size))
              position += glyph.geometry.width
              continue
            }
            placed.append(
              (UInt(glyph.glyph), position + glyph.geometry.x_offset, glyph.geometry.y_offset))
          }
          position += glyph.geometry.width
        }
        guard made else { break }
        let backward = item.pointee.analysis.level & 1 != 0
        placedAt.append(placed.count)
        var clusters: [cairo_text_cluster_t] = []
        clusters.reserveCapacity(glyphCount)
        var spans: [(glyphs: Range<Int>, text: Range<Int>)] = []
        spans.reserveCapacity(glyphCount)
        var cluster = PangoGlyphItemIter()
        if pango_glyph_item_iter_init_start(&cluster, run, text) != 0 {
          repeat {
            var count =
              backward
              ? cluster.start_glyph - cluster.end_glyph : cluster.end_glyph - cluster.start_glyph
            for index in min(
              cluster.start_glyph, cluster.end_glyph + 1)..<max(
                cluster.start_glyph + 1, cluster.end_glyph)
            where glyphs.pointee.glyphs[Int(index)].glyph == empty
              || glyphs.pointee.glyphs[Int(index)].glyph & unknown != 0
            {
              // Neither is drawn as a glyph (a missing character is a box).
              count -= 1
            }
            clusters.append(
              cairo_text_cluster_t(
                num_bytes: cluster.end_index - cluster.start_index, num_glyphs: count))
            let low = Int(min(cluster.start_glyph, cluster.end_glyph + 1))
            let high = Int(max(cluster.start_glyph + 1, cluster.end_glyph))
            let first = Int(cluster.start_index - item.pointee.offset)
            spans.append(
              (
                placedAt[max(0, low)]..<placedAt[min(placedAt.count - 1, max(low, high))],
                first..<(first + Int(cluster.end_index - cluster.start_index))
              ))
          } while pango_glyph_item_iter_next_cluster(&cluster) != 0
        }
        let start = Int(item.pointee.offset)
        let bytes = UnsafeBufferPointer(start: text + start, count: Int(item.pointee.length))
        let face = pango_font_get_hb_font(font).flatMap { hb_font_get_face($0) }
        var embolden: FcBool = 0
        if let pattern = pango_fc_font_get_pattern(imprint_pango_fc_font(font)),
          FcPatternGetBool(pattern, FC_EMBOLDEN, 0, &embolden) != FcResultMatch
        {
          embolden = 0
        }
        runs.append(
          Run(
            font: cairo_scaled_font_reference(scaled), face: face.map { hb_face_reference($0) },
            size: size, emboldened: embolden != 0, text: Array(bytes),
            x: logical.x + offset, y: baseline - run.pointee.y_offset, glyphs: placed,
            clusters: clusters, backward: backward,
            spans: inGlyphOrder(spans)))
        offset += width + run.pointee.end_x_offset
      }
    } while made && pango_layout_iter_next_line(iterator) != 0
    guard made else {
      release()
      return nil
    }
    return ShapedText(runs: runs, missing: boxes, metrics: metrics, factor: layout.factor)
  }

  /// `spans` by their first glyph; as they are when they already are (left-to-right runs), as
  /// the sort would leave them.
  private static func inGlyphOrder(_ spans: [(glyphs: Range<Int>, text: Range<Int>)])
    -> [(glyphs: Range<Int>, text: Range<Int>)]
  {
    let ordered = zip(spans, spans.dropFirst()).allSatisfy {
      $0.glyphs.lowerBound <= $1.glyphs.lowerBound
    }
    return ordered ? spans : spans.sorted { $0.glyphs.lowerBound < $1.glyphs.lowerBound }
  }

  /// Draws the runs with the layout's top-left corner at the current point of `cr`, as
  /// `pango_cairo_show_layout` does on a surface that keeps text (PDF) scaled by `factor`:
  /// each run in its own saved state, its font installed, its glyphs shown with their text and
  /// clusters.
  func draw(on cr: OpaquePointer) {
    var originX = 0.0
    var originY = 0.0
    // The current point as cairo keeps it (fixed point), which is what Pango starts from.
    cairo_get_current_point(cr, &originX, &originY)
    let scale = Double(PANGO_SCALE)
    for run in runs {
      let baseX = Double(run.x) / scale
      let baseY = Double(run.y) / scale
      cairo_save(cr)
      cairo_translate(cr, originX, originY)
      if factor != 1 { cairo_scale(cr, factor, factor) }
      cairo_set_scaled_font(cr, run.font)
      var glyphs = run.glyphs.map { glyph in
        cairo_glyph_t(
          index: glyph.index, x: baseX + Double(glyph.dx) / scale,
          y: glyph.dy == 0 ? baseY : baseY + Double(glyph.dy) / scale)
      }
      var clusters = run.clusters
      run.text.withUnsafeBufferPointer { text in
        cairo_show_text_glyphs(
          cr, text.baseAddress, Int32(text.count), &glyphs, Int32(glyphs.count), &clusters,
          Int32(clusters.count),
          run.backward ? CAIRO_TEXT_CLUSTER_FLAG_BACKWARD : cairo_text_cluster_flags_t(0))
      }
      cairo_restore(cr)
    }
  }
}

/// Shaped texts by block and font library, shared by a process's threads: filled where cards
/// are laid out (`TextMeasurer.prepareDrawing`), read where they are drawn into a PDF.
///
/// Holds at most `limit` texts; when full it is emptied and fills again, so memory stays bounded
/// however many cards a run has. A library is kept alive by its entries, so its identity is
/// never another library's.
final class ShapedTextCache: Sendable {
  static let shared = ShapedTextCache(limit: 4096)

  private struct Key: Hashable {
    let library: ObjectIdentifier
    let block: TextBlock
  }

  private let limit: Int
  private let entries = Mutex<[Key: (FontLibrary, ShapedText)]>([:])

  init(limit: Int) { self.limit = limit }

  func text(_ block: TextBlock, library: FontLibrary) -> ShapedText? {
    entries.withLock { $0[Key(library: ObjectIdentifier(library), block: block)]?.1 }
  }

  func keep(_ text: ShapedText, for block: TextBlock, library: FontLibrary) {
    entries.withLock { entries in
      if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
      entries[Key(library: ObjectIdentifier(library), block: block)] = (library, text)
    }
  }
}
