// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: the page tree as qpdf walks it, to check the /Count poppler trusts.

internal import CImprintEngines
import ImprintCore
import ImprintPDF

extension PageTreeWalk {
  /// Whether qpdf rejects `password` for the PDF in `bytes`.
  ///
  /// poppler 22.12 crashes (a null dereference in `PDFDoc`) when given a wrong password for
  /// some AES-256 files, so a password is checked with qpdf before poppler sees it.
  public static func isWrongPassword(_ data: DocumentBytes, password: String) -> Bool {
    passwordBytes(password).allSatisfy { isWrongPassword(data, bytes: $0) }
  }

  private static func isWrongPassword(_ data: DocumentBytes, bytes password: [CChar]) -> Bool {
    guard let (qpdf, _) = session(data, password: password) else { return false }
    defer { close(qpdf) }
    return isPasswordError(qpdf)
  }

  /// A quiet qpdf session that read `data` with `password`'s bytes, and the read's status;
  /// nil when qpdf_init fails.
  private static func session(_ data: DocumentBytes, password: [CChar]?) -> (
    qpdf_data, QPDF_ERROR_CODE
  )? {
    guard let qpdf = engines.qpdf_init() else { return nil }
    engines.qpdf_silence_errors(qpdf)
    engines.qpdf_set_suppress_warnings(qpdf, 1)
    let status = data.buffer.withMemoryRebound(to: CChar.self) { buffer in
      engines.qpdf_read_memory(qpdf, "upload", buffer.baseAddress, UInt64(buffer.count), password)
    }
    return (qpdf, status)
  }

  /// Whether `qpdf`'s read failed for the password (the error is taken).
  private static func isPasswordError(_ qpdf: qpdf_data) -> Bool {
    guard engines.qpdf_has_error(qpdf) != 0, let error = engines.qpdf_get_error(qpdf) else {
      return false
    }
    return engines.qpdf_get_error_code(qpdf, error) == qpdf_e_password
  }

  /// The bytes to try `password` as, in turn.
  ///
  /// As given (UTF-8, as files of 256-bit AES keep theirs), then in Latin-1 when that differs
  /// and every character fits, as files of revision 4 and below keep theirs (PDFDocEncoding)
  /// and poppler-glib tries them. qpdf's library takes the bytes as they are (its command line
  /// tries both, as here).
  static func passwordBytes(_ password: String) -> [[CChar]] {
    var candidates = [Array(password.utf8CString)]
    let scalars = password.unicodeScalars
    if scalars.contains(where: { $0.value > 0x7F }), scalars.allSatisfy({ $0.value <= 0xFF }) {
      candidates.append(scalars.map { CChar(bitPattern: UInt8($0.value)) } + [0])
    }
    return candidates
  }

  /// Walks the page tree of a PDF held in memory; looks for the largest image only on
  /// `imagePages` (1-based: the pages about to be rendered).
  ///
  /// A well-formed, unencrypted file is read by `QuickPageTree` (a few milliseconds on a long
  /// manual); its answer is taken only when the pages it found agree with the root's `/Count`.
  /// Anything else — a disagreement, a cycle, a damaged or encrypted file — is walked by qpdf.
  public static func walk(_ data: DocumentBytes, password: String?, imagePages: [Int] = [])
    -> PageTreeWalk
  {
    if let quick = quickWalk(data, imagePages: imagePages) { return quick }
    return walkWithQPDF(data, password: password, imagePages: imagePages)
  }

  /// Ends a qpdf session, first taking any error left in its slot: `qpdf_cleanup` writes
  /// "WARNING: application did not handle error: …" (with byte offsets from the file) to
  /// qpdf's default logger, whatever `qpdf_silence_errors` says, when an error was never
  /// retrieved — as after reading a `/Count` past 64 bits, which is itself reported otherwise.
  private static func close(_ qpdf: qpdf_data) {
    if engines.qpdf_has_error(qpdf) != 0 { _ = engines.qpdf_get_error(qpdf) }
    var owned: qpdf_data? = qpdf
    engines.qpdf_cleanup(&owned)
  }

  /// The walk by libqpdf, which repairs damaged files and decrypts encrypted ones.
  static func walkWithQPDF(_ data: DocumentBytes, password: String?, imagePages: [Int])
    -> PageTreeWalk
  {
    // Each of the password's forms in turn (`passwordBytes`), the next only when qpdf refused
    // the password; no password: one read.
    let candidates: [[CChar]?] = password.map { passwordBytes($0).map { $0 } } ?? [nil]
    var opened: (qpdf_data, QPDF_ERROR_CODE)?
    for (index, bytes) in candidates.enumerated() {
      guard let (qpdf, status) = session(data, password: bytes) else {
        return .unreadable("qpdf_init failed")
      }
      if index < candidates.count - 1, isPasswordError(qpdf) {
        close(qpdf)
        continue
      }
      opened = (qpdf, status)
      break
    }
    guard let (qpdf, status) = opened else { return .unreadable("qpdf_init failed") }
    defer { close(qpdf) }
    if status & QPDF_ERRORS != 0 || engines.qpdf_has_error(qpdf) != 0 {
      return .unreadable(errorText(qpdf))
    }
    let root = engines.qpdf_get_root(qpdf)
    let pages = engines.qpdf_oh_get_key(qpdf, root, "/Pages")
    // Our own walk of /Kids: it only reads each node's /Type and /Kids (qpdf's getAllPages
    // also copies inherited attributes into every page, ten times the cost on long manuals).
    var visited = Set<Int32>()
    var count = 0
    var cycle = false
    var sizes: [Size] = []
    func box(_ node: qpdf_oh, _ key: String) -> [Double]? {
      let array = engines.qpdf_oh_get_key(qpdf, node, key)
      defer { engines.qpdf_oh_release(qpdf, array) }
      guard engines.qpdf_oh_is_array(qpdf, array) != 0,
        engines.qpdf_oh_get_array_n_items(qpdf, array) == 4
      else {
        return nil
      }
      var values: [Double] = []
      for index in Int32(0)..<4 {
        let item = engines.qpdf_oh_get_array_item(qpdf, array, index)
        defer { engines.qpdf_oh_release(qpdf, item) }
        guard engines.qpdf_oh_is_number(qpdf, item) != 0 else { return nil }
        values.append(engines.qpdf_oh_get_numeric_value(qpdf, item))
      }
      return values
    }
    var unreadablePage: Int?
    func visit(_ node: qpdf_oh, depth: Int, media: [Double]?, crop: [Double]?, rotate: Int) {
      guard !cycle, unreadablePage == nil else { return }
      // A kid qpdf could not read (an integer of 400 digits, say) is null: a page the reader
      // cannot size is left to poppler, never a default Letter page. (An unreadable root is
      // told by poppler's count disagreeing with this one.)
      guard depth == 0 || engines.qpdf_oh_is_dictionary(qpdf, node) != 0 else {
        unreadablePage = count + 1
        return
      }
      let id = engines.qpdf_oh_get_object_id(qpdf, node)
      if id > 0 && !visited.insert(id).inserted || depth > 64 {
        cycle = true
        return
      }
      let media = box(node, "/MediaBox") ?? media
      let crop = box(node, "/CropBox") ?? crop
      let rotateObject = engines.qpdf_oh_get_key(qpdf, node, "/Rotate")
      let rotate =
        engines.qpdf_oh_is_integer(qpdf, rotateObject) != 0
        ? Int(engines.qpdf_oh_get_int_value(qpdf, rotateObject)) : rotate
      engines.qpdf_oh_release(qpdf, rotateObject)
      let kids = engines.qpdf_oh_get_key(qpdf, node, "/Kids")
      let type = engines.qpdf_oh_get_key(qpdf, node, "/Type")
      if engines.qpdf_oh_is_array(qpdf, kids) != 0
        && engines.qpdf_oh_is_name_and_equals(qpdf, type, "/Page") == 0
      {
        for index in 0..<engines.qpdf_oh_get_array_n_items(qpdf, kids) {
          let kid = engines.qpdf_oh_get_array_item(qpdf, kids, index)
          visit(kid, depth: depth + 1, media: media, crop: crop, rotate: rotate)
          engines.qpdf_oh_release(qpdf, kid)
        }
      } else {
        count += 1
        sizes.append(displayedSize(media: media, crop: crop, rotate: rotate))
      }
      engines.qpdf_oh_release(qpdf, type)
      engines.qpdf_oh_release(qpdf, kids)
    }
    visit(pages, depth: 0, media: nil, crop: nil, rotate: 0)
    if cycle { return .cycle("the page tree loops") }
    if let page = unreadablePage {
      return .unreadable("page \(page)'s object (or one of the page tree's) cannot be read")
    }
    if engines.qpdf_has_error(qpdf) != 0 { return .unreadable(errorText(qpdf)) }
    let countObject = engines.qpdf_oh_get_key(qpdf, pages, "/Count")
    let declared =
      engines.qpdf_oh_is_integer(qpdf, countObject) != 0
      ? Int(engines.qpdf_oh_get_int_value(qpdf, countObject)) : nil
    var repaired = false
    while engines.qpdf_more_warnings(qpdf) != 0 {
      if let warning = engines.qpdf_next_warning(qpdf),
        let text = engines.qpdf_get_error_full_text(qpdf, warning)
      {
        let lower = String(cString: text).lowercased()
        if lower.contains("reconstruct") || lower.contains("xref") { repaired = true }
      }
    }
    var largest: LargestImage?
    for number in imagePages where number >= 1 && number <= count {
      let index = number - 1
      let page = engines.qpdf_get_page_n(qpdf, index)
      let resources = engines.qpdf_oh_get_key(qpdf, page, "/Resources")
      scanImages(qpdf, resources, page: index + 1, depth: 0, largest: &largest)
    }
    return .pages(
      count, declared: declared, encrypted: engines.qpdf_is_encrypted(qpdf) != 0,
      repairedXref: repaired, largestImage: largest, sizes: sizes)
  }

  /// Finds the image XObjects of a resource dictionary (and of forms inside it).
  private static func scanImages(
    _ qpdf: qpdf_data, _ resources: qpdf_oh, page: Int, depth: Int, largest: inout LargestImage?
  ) {
    guard depth <= 3, engines.qpdf_oh_is_dictionary(qpdf, resources) != 0 else { return }
    let objects = engines.qpdf_oh_get_key(qpdf, resources, "/XObject")
    guard engines.qpdf_oh_is_dictionary(qpdf, objects) != 0 else { return }
    var keys: [String] = []
    engines.qpdf_oh_begin_dict_key_iter(qpdf, objects)
    while engines.qpdf_oh_dict_more_keys(qpdf) != 0 {
      if let key = engines.qpdf_oh_dict_next_key(qpdf) { keys.append(String(cString: key)) }
    }
    for key in keys {
      let object = engines.qpdf_oh_get_key(qpdf, objects, key)
      guard engines.qpdf_oh_is_stream(qpdf, object) != 0 else { continue }
      let dict = engines.qpdf_oh_get_dict(qpdf, object)
      let subtype = engines.qpdf_oh_get_key(qpdf, dict, "/Subtype")
      if engines.qpdf_oh_is_name_and_equals(qpdf, subtype, "/Form") != 0 {
        scanImages(
          qpdf, engines.qpdf_oh_get_key(qpdf, dict, "/Resources"), page: page, depth: depth + 1,
          largest: &largest)
        continue
      }
      guard engines.qpdf_oh_is_name_and_equals(qpdf, subtype, "/Image") != 0 else { continue }
      func integer(_ name: String) -> Int {
        let value = engines.qpdf_oh_get_key(qpdf, dict, name)
        return engines.qpdf_oh_is_integer(qpdf, value) != 0
          ? Int(engines.qpdf_oh_get_int_value(qpdf, value)) : 0
      }
      let width = integer("/Width")
      let height = integer("/Height")
      let bits = max(1, integer("/BitsPerComponent"))
      let space = engines.qpdf_oh_get_key(qpdf, dict, "/ColorSpace")
      let components =
        engines.qpdf_oh_is_name_and_equals(qpdf, space, "/DeviceCMYK") != 0
        ? 4 : engines.qpdf_oh_is_name_and_equals(qpdf, space, "/DeviceGray") != 0 ? 1 : 3
      LargestImage.keepLarger(
        &largest, page: page, width: width, height: height, components: components, bits: bits)
    }
  }

  private static func errorText(_ qpdf: qpdf_data) -> String {
    guard engines.qpdf_has_error(qpdf) != 0, let error = engines.qpdf_get_error(qpdf),
      let text = engines.qpdf_get_error_full_text(qpdf, error)
    else { return "unknown qpdf error" }
    return String(cString: text)
  }
}
