// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: a fixed language for each script run, so fonts and shaping never follow $LANGUAGE.

internal import CPango
import Foundation

/// Gives every run of a non-Latin script its language, fixed by the script.
///
/// Pango passes a run's language to fontconfig (which font) and to HarfBuzz (which local forms:
/// Marathi and Hindi conjuncts, Japanese and Chinese Han). For a run whose script the layout's
/// language does not use, Pango picks a language from `$PANGO_LANGUAGE` or `$LANGUAGE` before its
/// own table, so the same name could print differently on two machines. Setting the language of
/// each run here keeps the output the same everywhere. Han takes the language the rest of the
/// text shows (Japanese with kana, Korean with Hangul, else simplified Chinese), for fonts whose
/// Han forms follow the language.
enum ScriptLanguages {
  /// Sets the language attributes of `layout`, whose text is `text`; nothing for ASCII text.
  static func apply(to layout: OpaquePointer, text: String) {
    let utf8 = text.utf8
    guard utf8.contains(where: { $0 >= 0x80 }) else { return }
    let han = hanLanguage(of: text)
    let arabic = arabicLanguage(of: text)
    var runs: [(start: Int, end: Int, language: String)] = []
    text.withCString { base in
      guard let iterator = pango_script_iter_new(base, Int32(utf8.count)) else { return }
      defer { pango_script_iter_free(iterator) }
      repeat {
        var start: UnsafePointer<CChar>?
        var end: UnsafePointer<CChar>?
        var script = PANGO_SCRIPT_COMMON
        pango_script_iter_get_range(iterator, &start, &end, &script)
        if let start, let end, let language = language(of: script, han: han, arabic: arabic) {
          runs.append((start - base, end - base, language))
        }
      } while pango_script_iter_next(iterator) != 0
    }
    guard !runs.isEmpty else { return }
    let attributes = pango_attr_list_new()
    for run in runs {
      guard let attribute = pango_attr_language_new(pango_language_from_string(run.language))
      else { continue }
      attribute.pointee.start_index = UInt32(run.start)
      attribute.pointee.end_index = UInt32(run.end)
      pango_attr_list_insert(attributes, attribute)
    }
    pango_layout_set_attributes(layout, attributes)
    pango_attr_list_unref(attributes)
  }

  /// The language of Han characters in `text`: "ja" with kana, "ko" with Hangul, else "zh-cn".
  static func hanLanguage(of text: String) -> String {
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F: return "ja"
      case 0x1100...0x11FF, 0x3130...0x318F, 0xAC00...0xD7A3: return "ko"
      default: continue
      }
    }
    return "zh-cn"
  }

  /// The language of Arabic letters in `text`: "ur" when it has a letter of Urdu's alphabet that
  /// Arabic and Persian lack (ٹ ڈ ڑ ں ھ ہ ے), else "ar".
  ///
  /// The bundled DejaVu Sans has Arabic and Persian but not all of Urdu, and a word drawn
  /// partly in another font shows two designs: `languages.conf` sets Urdu in Noto Sans Arabic.
  static func arabicLanguage(of text: String) -> String {
    // A switch, not a set: a Set<UInt32> literal made the runtime look up UInt32's Hashable
    // conformance in the whole binary the first time, more than laying out a card's text.
    let urdu = text.unicodeScalars.contains {
      switch $0.value {
      case 0x0679, 0x0688, 0x0691, 0x06BA, 0x06BE, 0x06C1, 0x06C2, 0x06D2, 0x06D3: true
      default: false
      }
    }
    return urdu ? "ur" : "ar"
  }

  /// The language Imprint sets for `script`; nil leaves the run to Pango (Latin, common marks,
  /// and scripts no bundled font is chosen by language for).
  static func language(of script: PangoScript, han: String, arabic: String) -> String? {
    switch script {
    case PANGO_SCRIPT_HAN: han
    case PANGO_SCRIPT_HIRAGANA, PANGO_SCRIPT_KATAKANA: "ja"
    case PANGO_SCRIPT_HANGUL: "ko"
    case PANGO_SCRIPT_ARABIC: arabic
    case PANGO_SCRIPT_ARMENIAN: "hy"
    case PANGO_SCRIPT_BENGALI: "bn"
    case PANGO_SCRIPT_CYRILLIC: "ru"
    case PANGO_SCRIPT_DEVANAGARI: "hi"
    case PANGO_SCRIPT_ETHIOPIC: "am"
    case PANGO_SCRIPT_GEORGIAN: "ka"
    case PANGO_SCRIPT_GREEK: "el"
    case PANGO_SCRIPT_GUJARATI: "gu"
    case PANGO_SCRIPT_GURMUKHI: "pa"
    case PANGO_SCRIPT_HEBREW: "he"
    case PANGO_SCRIPT_KANNADA: "kn"
    case PANGO_SCRIPT_KHMER: "km"
    case PANGO_SCRIPT_LAO: "lo"
    case PANGO_SCRIPT_MALAYALAM: "ml"
    case PANGO_SCRIPT_MYANMAR: "my"
    case PANGO_SCRIPT_ORIYA: "or"
    case PANGO_SCRIPT_SINHALA: "si"
    case PANGO_SCRIPT_TAMIL: "ta"
    case PANGO_SCRIPT_TELUGU: "te"
    case PANGO_SCRIPT_THAI: "th"
    case PANGO_SCRIPT_TIBETAN: "bo"
    default: nil
    }
  }
}
