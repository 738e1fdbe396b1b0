// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: the private fontconfig configuration that makes text independent of the machine.

internal import CCairo
internal import CFontconfig
internal import CPango
import Foundation
import ImprintCore
import Synchronization

/// The fonts Imprint renders with, in a private fontconfig configuration.
///
/// Only the fonts of one bundle (and any folders added) are loaded. System fonts and rules are
/// invisible, so the same input gives the same output on every machine.
///
/// Which fonts: every API that sets text takes a `fonts:` library (`CardOptions.fonts`,
/// `QRStyle.fonts`, `VectorDocument`, `RasterImage`, `TextMeasurer`). When it is nil, the
/// default is `bundled()`: the fonts shipped in this module's resources (`Bundle.module`), found
/// beside the executable with no environment variable and no working-directory guess. A
/// deployment that wants other fonts loads them with `init(bundle:)` and passes them in.
///
/// Two libraries are equal when they are the same instance.
///
/// `@unchecked Sendable`: the wrapped `FcConfig` is built once, never modified afterwards, and
/// fontconfig is thread-safe for lookups; every task creates its own Pango font map over it.
public final class FontLibrary: @unchecked Sendable, Hashable {
  private let config: OpaquePointer
  /// The font folders loaded, in order.
  public let directories: [String]
  /// Families appended after every requested family, in order, for characters it lacks.
  public let fallbackFamilies: [String]

  /// The bundled library (its one key), loaded once by the first thread that asks while the
  /// others wait asleep (`Memo.valueComputedOnce`).
  private static let shared = Memo<Int, Result<FontLibrary, GraphicsError>>(limit: 1)
  private static let becomesCurrent = Atomic<Bool>(false)

  /// Makes the bundled library, when it is first created, fontconfig's current configuration
  /// as well (for the `imprint` process; a library user's fontconfig default is left alone).
  ///
  /// Pango starts a thread at its first font map that loads the system's default configuration
  /// (every file under /etc/fonts and the system font caches), which Imprint never uses: with
  /// a current configuration already set, that thread has nothing to do. A tenth of the CPU of
  /// a one-card run went there.
  public static func becomeCurrentWhenLoaded() {
    becomesCurrent.store(true, ordering: .relaxed)
  }

  /// The folder of the fonts shipped with Imprint (`fonts` in this module's resource bundle),
  /// or nil when the bundle is not deployed beside the executable.
  public static var bundledFolder: String? {
    ResourceBundle.path(of: "fonts", module: "ImprintGraphics", bundle: .module)
  }

  /// The library over the fonts shipped with Imprint (`bundledFolder`), created on first use
  /// and shared by the process: the default wherever a `fonts:` parameter is nil.
  ///
  /// - Throws: `GraphicsError.fontsUnavailable` when the bundle is missing or holds no fonts.
  public static func bundled() throws(GraphicsError) -> FontLibrary {
    try shared.valueComputedOnce(0) { _ in
      guard let folder = bundledFolder else {
        return .failure(
          .fontsUnavailable(
            reason: "'\(ResourceBundle.location(module: "ImprintGraphics"))' is missing"))
      }
      do throws(GraphicsError) {
        let library = try FontLibrary(bundle: folder)
        if becomesCurrent.load(ordering: .relaxed) { FcConfigSetCurrent(library.config) }
        return .success(library)
      } catch {
        return .failure(error)
      }
    }.get()
  }

  public static func == (a: FontLibrary, b: FontLibrary) -> Bool { a === b }

  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

  /// Loads a font bundle: every font under `folder`, plus the system font files named in
  /// `folder/system-fonts.txt` (one path a line, `#` comments; installed by scripts/bootstrap),
  /// with the fallback order given by `folder/fallback.txt` (one family a line) and the
  /// fontconfig rules of `folder/languages.conf` when it exists.
  ///
  /// - Throws: `GraphicsError.fontsUnavailable` naming a missing folder or file.
  public convenience init(bundle folder: String) throws(GraphicsError) {
    func lines(_ name: String) -> [String] {
      guard let text = FileManager.default.contents(atPath: folder + "/" + name) else {
        return []
      }
      return FontLibrary.listed(Array(text))
    }
    let rules = folder + "/languages.conf"
    try self.init(
      directories: [folder], files: lines("system-fonts.txt"), fallback: lines("fallback.txt"),
      rules: FileManager.default.fileExists(atPath: rules) ? [rules] : [])
  }

  /// Loads every font under `directories` (recursively) and the font `files` into a new private
  /// configuration, with the fontconfig rule files `rules` (fontconfig's XML format).
  ///
  /// Fontconfig caches what it learns from a folder (in `$XDG_CACHE_HOME/imprint/fontconfig`,
  /// valid while the folder is unchanged), but never from a file added alone, which FreeType
  /// opens again in every process. So each file's folder is added, with every font in it but the
  /// named files rejected (`<selectfont>`): a process reads one cache per folder instead of
  /// scanning 36 fonts, and only the named files are visible. A folder's cache is written by the
  /// first process that finds it missing or stale (after a package upgrade changed the folder).
  ///
  /// - Throws: `GraphicsError.fontsUnavailable` when a folder or file is missing or no font loads.
  public init(
    directories: [String], files: [String] = [], fallback: [String] = [], rules: [String] = []
  ) throws(GraphicsError) {
    guard let config = FcConfigCreate() else {
      throw .fontsUnavailable(reason: "FcConfigCreate failed")
    }
    for directory in directories {
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory),
        isDirectory.boolValue
      else {
        FcConfigDestroy(config)
        throw .fontsUnavailable(reason: "font folder '\(directory)' does not exist")
      }
    }
    for file in files where !FileManager.default.fileExists(atPath: file) {
      FcConfigDestroy(config)
      throw .fontsUnavailable(reason: "font file '\(file)' is not installed")
    }
    // Files whose path fontconfig's globs would read as a pattern are added alone.
    let (single, inFolders) = files.reduce(into: ([String](), [String]())) { split, file in
      // By bytes: by Characters, these tests cost more than fontconfig's parse of the XML.
      let bytes = file.utf8
      if bytes.contains(where: { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") })
        || !bytes.contains(UInt8(ascii: "/"))
      {
        split.0.append(file)
      } else {
        split.1.append(file)
      }
    }
    let folders = FontLibrary.folders(of: inFolders)
    let xml = FontLibrary.configuration(
      cache: FontLibrary.cacheDirectory(), folders: folders, files: inFolders)
    _ = xml.withCString {
      FcConfigParseAndLoadFromMemory(
        config, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self), 0)
    }
    for rule in rules {
      let loaded = rule.withCString {
        FcConfigParseAndLoad(config, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self), 0)
      }
      guard loaded != 0 else {
        FcConfigDestroy(config)
        throw .fontsUnavailable(reason: "fontconfig rules '\(rule)' could not be read")
      }
    }
    for directory in directories + folders {
      _ = directory.withCString {
        FcConfigAppFontAddDir(config, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self))
      }
    }
    for file in single {
      _ = file.withCString {
        FcConfigAppFontAddFile(config, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self))
      }
    }
    FcConfigBuildFonts(config)
    let fonts = FcConfigGetFonts(config, FcSetApplication)
    guard let fonts, fonts.pointee.nfont > 0 else {
      FcConfigDestroy(config)
      throw .fontsUnavailable(reason: "no font files under \(directories.joined(separator: ", "))")
    }
    FontLibrary.pinFaces(fonts)
    self.config = config
    self.directories = directories
    self.fallbackFamilies = fallback
  }

  /// Gives every font of `fonts` a FreeType face of its own (`FC_FT_FACE`), opened now and kept
  /// for the life of the process, so that cairo draws with it instead of opening and closing
  /// faces itself.
  ///
  /// Why: cairo 1.16 (and 1.18) keeps at most 10 FreeType faces open for the fonts it opens from
  /// a file name, and closes one nobody has locked to open an 11th
  /// (`_cairo_ft_unscaled_font_lock_face`). That check reads the other font's lock count under
  /// the font map's mutex only, while a thread locking that font counts itself under the font's
  /// own mutex: a thread can get a face that another thread is closing. Cards in more than ten
  /// fonts drawn at once (a batch of names in many scripts, the service under load) crashed in
  /// FreeType (`FT_Get_Next_Char` from the PDF font subsetter, another thread in
  /// `FT_New_Face`), or failed with "error occurred in libfreetype". A face given in the pattern
  /// is one cairo never closes, and each use of it still takes cairo's per-font mutex.
  ///
  /// The faces belong to one FreeType library per font library, opened here on one thread
  /// (FreeType asks that opening and closing faces of a library be serialized; using different
  /// faces on different threads is allowed). They are never closed: cairo's caches may hold
  /// fonts made from them past any owner's life. A font FreeType cannot open keeps its plain
  /// pattern (cairo then opens it as before).
  private static func pinFaces(_ fonts: UnsafeMutablePointer<FcFontSet>) {
    var library: FT_Library?
    guard FT_Init_FreeType(&library) == 0, let library else { return }
    for i in 0..<Int(fonts.pointee.nfont) {
      guard let pattern = fonts.pointee.fonts[i] else { continue }
      var file: UnsafeMutablePointer<FcChar8>?
      var index: Int32 = 0
      guard FcPatternGetString(pattern, FC_FILE, 0, &file) == FcResultMatch, let file else {
        continue
      }
      if FcPatternGetInteger(pattern, FC_INDEX, 0, &index) != FcResultMatch { index = 0 }
      var face: FT_Face?
      let opened = file.withMemoryRebound(to: CChar.self, capacity: 1) {
        FT_New_Face(library, $0, FT_Long(index), &face)
      }
      guard opened == 0, let face else { continue }
      guard let pinned = FcPatternDuplicate(pattern),
        FcPatternAddFTFace(pinned, FC_FT_FACE, face) != 0
      else {
        FT_Done_Face(face)
        continue
      }
      fonts.pointee.fonts[i] = pinned
      FcPatternDestroy(pattern)
    }
  }

  /// The lines of a bundled list (`system-fonts.txt`, `fallback.txt`), trimmed of spaces, tabs
  /// and carriage returns, without empty lines and `#` comments.
  ///
  /// By bytes: Foundation's trimming and a split by Characters cost 3.9 M instructions for
  /// the two lists, a twentieth of a one-card run.
  static func listed(_ text: [UInt8]) -> [String] {
    func isSpace(_ byte: UInt8) -> Bool {
      byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
    return text.split(separator: UInt8(ascii: "\n")).compactMap { line in
      guard let first = line.firstIndex(where: { !isSpace($0) }),
        let last = line.lastIndex(where: { !isSpace($0) }), line[first] != UInt8(ascii: "#")
      else { return nil }
      return String(decoding: line[first...last], as: UTF8.self)
    }
  }

  /// The folders holding `files`, each once, in the order first named.
  private static func folders(of files: [String]) -> [String] {
    var seen = Set<String>()
    return files.compactMap { file in
      let slash = file.utf8.lastIndex(of: UInt8(ascii: "/")) ?? file.endIndex
      let folder = String(file[..<slash])
      return seen.insert(folder).inserted ? folder : nil
    }
  }

  /// The private configuration's XML: the cache folder, and for each of `folders` every font
  /// rejected but `files` (in fontconfig, an accepted font wins over a rejected one).
  private static func configuration(cache: String, folders: [String], files: [String]) -> String {
    // Scalar by scalar: Foundation's replacingOccurrences, three times for each of 36 paths,
    // was a quarter of loading the library.
    func escaped(_ text: String) -> String {
      guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E }) else {
        return text
      }
      var out = ""
      for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        default: out.unicodeScalars.append(scalar)
        }
      }
      return out
    }
    var xml = "<fontconfig><cachedir>\(escaped(cache))</cachedir>"
    if !folders.isEmpty {
      xml += "<selectfont><rejectfont>"
      xml += folders.map { "<glob>\(escaped($0))/*</glob>" }.joined()
      xml += "</rejectfont><acceptfont>"
      xml += files.map { "<glob>\(escaped($0))</glob>" }.joined()
      xml += "</acceptfont></selectfont>"
    }
    return xml + "</fontconfig>"
  }

  deinit { FcConfigDestroy(config) }

  /// The family names available, sorted.
  public var families: [String] {
    guard let fonts = FcConfigGetFonts(config, FcSetApplication) else { return [] }
    var names = Set<String>()
    for i in 0..<Int(fonts.pointee.nfont) {
      guard let pattern = fonts.pointee.fonts[i] else { continue }
      var value: UnsafeMutablePointer<FcChar8>?
      if FcPatternGetString(pattern, FC_FAMILY, 0, &value) == FcResultMatch, let value {
        names.insert(String(cString: value))
      }
    }
    return names.sorted()
  }

  /// The files of the loaded fonts that have no FreeType face of their own (`pinFaces`), so
  /// that cairo opens and closes their faces itself: none, unless FreeType refused a file.
  var filesWithoutOwnFace: [String] {
    guard let fonts = FcConfigGetFonts(config, FcSetApplication) else { return [] }
    return (0..<Int(fonts.pointee.nfont)).compactMap { i in
      guard let pattern = fonts.pointee.fonts[i] else { return nil }
      var face: FT_Face?
      guard FcPatternGetFTFace(pattern, FC_FT_FACE, 0, &face) != FcResultMatch || face == nil
      else { return nil }
      var file: UnsafeMutablePointer<FcChar8>?
      guard FcPatternGetString(pattern, FC_FILE, 0, &file) == FcResultMatch, let file else {
        return "font \(i)"
      }
      return String(cString: file)
    }
  }

  /// The characters of `text` that no loaded font has a glyph for, each once, in order (white
  /// space, joiners and variation selectors aside): for an error that names them.
  public func uncoveredCharacters(in text: String) -> [Unicode.Scalar] {
    guard let fonts = FcConfigGetFonts(config, FcSetApplication) else { return [] }
    var charsets: [OpaquePointer] = []
    for i in 0..<Int(fonts.pointee.nfont) {
      guard let pattern = fonts.pointee.fonts[i] else { continue }
      var set: OpaquePointer?
      if FcPatternGetCharSet(pattern, FC_CHARSET, 0, &set) == FcResultMatch, let set {
        charsets.append(set)
      }
    }
    var seen = Set<Unicode.Scalar>()
    return text.unicodeScalars.filter { scalar in
      let properties = scalar.properties
      guard !properties.isWhitespace, !properties.isVariationSelector,
        !properties.isDefaultIgnorableCodePoint, properties.generalCategory != .control,
        seen.insert(scalar).inserted
      else { return false }
      return !charsets.contains { FcCharSetHasChar($0, scalar.value) != 0 }
    }
  }

  /// Creates a Pango font map over this configuration for one task (caller owns one reference).
  func makeFontMap() -> UnsafeMutablePointer<PangoFontMap> {
    guard let map = pango_cairo_font_map_new_for_font_type(CAIRO_FONT_TYPE_FT) else {
      preconditionFailure("pango_cairo_font_map_new_for_font_type returned NULL")
    }
    pango_fc_font_map_set_config(imprint_pango_fc_font_map(map), config)
    return map
  }

  private static func cacheDirectory() -> String {
    let environment = ProcessInfo.processInfo.environment
    let base =
      environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? environment["HOME"].map { $0 + "/.cache" } ?? "/tmp"
    let folder = base + "/imprint/fontconfig"
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
  }
}
