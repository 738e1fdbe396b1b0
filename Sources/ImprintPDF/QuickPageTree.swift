// SPDX-License-Identifier: Apache-2.0
// ImprintPDF: a fast first look at a well-formed PDF's page tree (cross-reference tables and
// streams, object streams), read directly; anything unusual is left to qpdf.

internal import CImprintInflate
import ImprintCore

/// Reads the page tree of a well-formed, unencrypted PDF without materialising its objects.
///
/// libqpdf parses every object of each object stream it opens and wraps each in a handle; on a
/// long manual (2 415 pages in 565 object streams) that is half a second, against 10 ms for
/// `pdfinfo`, which only reads `/Count`. This reader inflates the object streams that hold
/// page-tree nodes and parses just those nodes' dictionaries.
///
/// It is an accelerator, not a judge: it returns nil for anything it does not expect (an
/// encrypted file, a damaged cross-reference, an object that is not where the table says, a
/// filter other than Flate), and `PageTreeWalk` only accepts its answer when it agrees with the
/// declared `/Count`; every disagreement is decided by qpdf.
enum QuickPageTree {
  /// Walks the tree; nil when qpdf should decide.
  static func walk(_ bytes: UnsafeBufferPointer<UInt8>, imagePages: [Int]) -> PageTreeWalk? {
    var reader = Reader(bytes)
    guard let trailer = reader.readCrossReferences(), trailer["/Encrypt"] == nil,
      case .dictionary(let root)? = reader.resolve(trailer["/Root"]),
      let pagesReference = root["/Pages"],
      case .dictionary(let pages)? = reader.resolve(pagesReference)
    else { return nil }
    var visited = Set<Int>()
    var sizes: [Size] = []
    var imageNodes: [Int: [String: Value]] = [:]
    let wanted = Set(imagePages)
    var cycle = false
    var failed = false
    func visit(
      _ node: [String: Value], id: Int?, depth: Int, media: [Double]?, crop: [Double]?,
      rotate: Int, resources: Value?
    ) {
      guard !cycle, !failed else { return }
      if let id, !visited.insert(id).inserted || depth > 64 {
        cycle = true
        return
      }
      guard sizes.count < 1_000_000 else {
        failed = true
        return
      }
      // A box this reader cannot read (a number too large for a Double, a wrong count) is left
      // to the full reader, which decides for every file alike: never silently the default.
      let ownMedia = reader.box(node["/MediaBox"])
      let ownCrop = reader.box(node["/CropBox"])
      if (node["/MediaBox"] != nil && ownMedia == nil)
        || (node["/CropBox"] != nil && ownCrop == nil)
      {
        failed = true
        return
      }
      let media = ownMedia ?? media
      let crop = ownCrop ?? crop
      var rotate = rotate
      if case .integer(let value)? = reader.resolve(node["/Rotate"]) { rotate = value }
      let resources = node["/Resources"] ?? resources
      if case .array(let kids)? = reader.resolve(node["/Kids"]), node["/Type"] != .name("/Page") {
        for kid in kids {
          guard case .reference(let number) = kid,
            case .dictionary(let child)? = reader.resolve(kid)
          else {
            failed = true
            return
          }
          visit(
            child, id: number, depth: depth + 1, media: media, crop: crop, rotate: rotate,
            resources: resources)
        }
      } else {
        sizes.append(PageTreeWalk.displayedSize(media: media, crop: crop, rotate: rotate))
        if wanted.contains(sizes.count) {
          var page = node
          page["/Resources"] = resources
          imageNodes[sizes.count] = page
        }
      }
    }
    let rootID: Int? = if case .reference(let number) = pagesReference { number } else { nil }
    visit(pages, id: rootID, depth: 0, media: nil, crop: nil, rotate: 0, resources: nil)
    if cycle { return nil }  // qpdf names it
    guard !failed else { return nil }
    var declared: Int?
    if case .integer(let count)? = reader.resolve(pages["/Count"]) { declared = count }
    var largest: LargestImage?
    for (number, page) in imageNodes.sorted(by: { $0.key < $1.key }) {
      guard reader.scanImages(page["/Resources"], page: number, depth: 0, largest: &largest)
      else { return nil }
    }
    guard !reader.failed else { return nil }
    return .pages(
      sizes.count, declared: declared, encrypted: false, repairedXref: false,
      largestImage: largest, sizes: sizes)
  }

  /// A PDF value, as far as the page tree needs one.
  indirect enum Value: Equatable {
    case null
    case boolean(Bool)
    case integer(Int)
    case real(Double)
    case name(String)
    case string
    case array([Value])
    case dictionary([String: Value])
    case reference(Int)
    /// A stream: its dictionary and where its data starts.
    case stream([String: Value], Int)
  }

  /// Where an object lives.
  enum Location {
    case offset(Int)
    case inStream(Int, index: Int)
  }

  /// A decoded object stream: its data and each object's start in it.
  struct ObjectStream {
    let data: [UInt8]
    let starts: [Int]
  }

  /// Where each object number lives, newest section first (an array: files number their
  /// objects densely, and a long manual has tens of thousands of them).
  struct Locations {
    private var table: [Location?] = []
    /// Object numbers above this are refused (a hostile /Size or table).
    static let maximumNumber = 8_000_000

    subscript(number: Int) -> Location? {
      number >= 0 && number < table.count ? table[number] : nil
    }

    /// Records `location` unless a newer section already did; false for an absurd number.
    mutating func add(_ number: Int, _ location: Location) -> Bool {
      guard number > 0, number <= Self.maximumNumber else { return false }
      if number >= table.count {
        table.append(
          contentsOf: repeatElement(nil, count: max(number + 1, table.count * 2) - table.count))
      }
      if table[number] == nil { table[number] = location }
      return true
    }
  }

  struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    var locations = Locations()
    var streams: [Int: ObjectStream] = [:]
    var inflated = 0
    var failed = false
    /// The dictionary keys the walk reads (trailers, cross-reference and object streams, page-tree
    /// nodes, resources, images); an object's other keys are skipped unread.
    static let keys: Set<String> = [
      "/Type", "/Kids", "/Count", "/MediaBox", "/CropBox", "/Rotate", "/Resources", "/Root",
      "/Pages", "/Encrypt", "/Prev", "/XRefStm", "/Size", "/W", "/Index", "/Filter",
      "/DecodeParms", "/Length", "/N", "/First", "/Subtype", "/Width", "/Height",
      "/BitsPerComponent", "/ColorSpace", "/XObject",
    ]
    /// Object streams decoded in all, at most (hostile files are cut off here).
    static let maximumInflated = 512 << 20

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Reads every cross-reference section from `startxref` back through `/Prev`; returns the
    /// newest trailer.
    mutating func readCrossReferences() -> [String: Value]? {
      let tail = max(0, bytes.count - 1024)
      guard let mark = lastIndex(of: Array("startxref".utf8), from: tail) else { return nil }
      var parser = Parser(bytes, at: mark + 9)
      guard case .integer(var offset)? = parser.value() else { return nil }
      var newest: [String: Value]?
      var seen = Set<Int>()
      while seen.insert(offset).inserted, seen.count < 64 {
        guard offset >= 0, offset < bytes.count else { return nil }
        let section: [String: Value]?
        if bytes[offset...].starts(with: Array("xref".utf8)) {
          section = readTable(at: offset + 4)
        } else {
          section = readStream(at: offset)
        }
        guard let trailer = section else { return nil }
        if newest == nil { newest = trailer }
        if case .integer(let hybrid)? = trailer["/XRefStm"] {
          guard readStream(at: hybrid) != nil else { return nil }
        }
        guard case .integer(let previous)? = trailer["/Prev"] else { break }
        offset = previous
      }
      return newest
    }

    /// A classic `xref` table (older sections never replace newer entries).
    mutating func readTable(at start: Int) -> [String: Value]? {
      var parser = Parser(bytes, at: start)
      while true {
        parser.skipSpace()
        if parser.keyword("trailer") {
          guard case .dictionary(let trailer)? = parser.value() else { return nil }
          return trailer
        }
        guard case .integer(let first)? = parser.value(),
          case .integer(let count)? = parser.value(),
          first >= 0, count >= 0, count < 10_000_000
        else { return nil }
        for number in first..<(first + count) {
          // Two plain integers (never a reference: no `R` probe) and the entry's kind.
          guard case .integer(let offset)? = parser.plainInteger(), parser.plainInteger() != nil
          else { return nil }
          parser.skipSpace()
          guard parser.index < bytes.count else { return nil }
          let kind = bytes[parser.index]
          parser.index += 1
          if kind == UInt8(ascii: "n") {
            if number > 0 { guard locations.add(number, .offset(offset)) else { return nil } }
          } else if kind != UInt8(ascii: "f") {
            return nil
          }
        }
      }
    }

    /// A cross-reference stream (`/Type /XRef`), its entries added; returns its dictionary.
    mutating func readStream(at offset: Int) -> [String: Value]? {
      guard case .stream(let dictionary, let start)? = object(at: offset, number: nil),
        dictionary["/Type"] == .name("/XRef"),
        case .array(let widths)? = dictionary["/W"], widths.count == 3,
        case .integer(let size)? = dictionary["/Size"]
      else { return nil }
      let w = widths.compactMap { value -> Int? in
        if case .integer(let width) = value, (0...8).contains(width) { return width }
        return nil
      }
      guard w.count == 3, let data = streamData(dictionary, start: start, limit: 64 << 20)
      else { return nil }
      var ranges: [(Int, Int)] = [(0, size)]
      if case .array(let index)? = dictionary["/Index"] {
        ranges = []
        var values = index.makeIterator()
        while case .integer(let first)? = values.next() {
          guard case .integer(let count)? = values.next() else { return nil }
          ranges.append((first, count))
        }
      }
      let rowLength = w.reduce(0, +)
      guard rowLength > 0 else { return nil }
      var row = 0
      for (first, count) in ranges {
        guard first >= 0, count >= 0 else { return nil }
        for number in first..<(first + count) {
          let base = row * rowLength
          guard base + rowLength <= data.count else { return nil }
          row += 1
          func field(_ at: Int, _ width: Int) -> Int {
            var value = 0
            for k in 0..<width { value = value << 8 | Int(data[base + at + k]) }
            return value
          }
          let type = w[0] == 0 ? 1 : field(0, w[0])
          let second = field(w[0], w[1])
          let third = field(w[0] + w[1], w[2])
          guard number > 0 else { continue }
          switch type {
          case 1: guard locations.add(number, .offset(second)) else { return nil }
          case 2: guard locations.add(number, .inStream(second, index: third)) else { return nil }
          default: break
          }
        }
      }
      return dictionary
    }

    /// The object at `offset` (`N G obj …`); checks the number when given.
    func object(at offset: Int, number: Int?, keys: Set<String>? = Reader.keys) -> Value? {
      guard offset >= 0, offset < bytes.count else { return nil }
      var parser = Parser(bytes, at: offset)
      guard case .integer(let found)? = parser.value(), case .integer? = parser.value(),
        parser.keyword("obj"), number == nil || number == found
      else { return nil }
      parser.keys = keys
      guard let value = parser.value() else { return nil }
      if case .dictionary(let dictionary) = value, parser.keyword("stream") {
        var start = parser.index
        if start < bytes.count, bytes[start] == 13 { start += 1 }
        if start < bytes.count, bytes[start] == 10 { start += 1 }
        return .stream(dictionary, start)
      }
      return value
    }

    /// Follows a reference (direct values are returned as they are).
    mutating func resolve(_ value: Value?, keys: Set<String>? = Reader.keys) -> Value? {
      guard case .reference(let number)? = value else { return value }
      switch locations[number] {
      case .offset(let offset)?:
        guard let found = object(at: offset, number: number, keys: keys) else {
          failed = true
          return nil
        }
        return found
      case .inStream(let container, let index)?:
        guard let stream = objectStream(container), stream.starts.indices.contains(index) else {
          failed = true
          return nil
        }
        return stream.data.withUnsafeBufferPointer {
          var parser = Parser($0, at: stream.starts[index])
          parser.keys = keys
          return parser.value()
        }
      case nil:
        return .null
      }
    }

    mutating func objectStream(_ number: Int) -> ObjectStream? {
      if let cached = streams[number] { return cached }
      guard case .offset(let offset)? = locations[number],
        case .stream(let dictionary, let start)? = object(at: offset, number: number),
        case .integer(let count)? = dictionary["/N"],
        case .integer(let first)? = dictionary["/First"],
        count >= 0, count < 1_000_000,
        let data = streamData(dictionary, start: start, limit: Self.maximumInflated - inflated)
      else { return nil }
      inflated += data.count
      let header = data.withUnsafeBufferPointer { buffer -> [Int]? in
        var parser = Parser(buffer, at: 0)
        var starts: [Int] = []
        starts.reserveCapacity(count)
        for _ in 0..<count {
          guard case .integer? = parser.value(), case .integer(let relative)? = parser.value(),
            relative >= 0, first + relative < buffer.count
          else { return nil }
          starts.append(first + relative)
        }
        return starts
      }
      guard let starts = header else { return nil }
      let stream = ObjectStream(data: data, starts: starts)
      streams[number] = stream
      return stream
    }

    /// A stream's data, inflated (Flate with or without a PNG predictor, or no filter).
    mutating func streamData(_ dictionary: [String: Value], start: Int, limit: Int) -> [UInt8]? {
      var lengthValue = dictionary["/Length"]
      if case .reference(let number)? = lengthValue {
        guard case .offset(let offset)? = locations[number] else { return nil }
        lengthValue = object(at: offset, number: number)
      }
      guard case .integer(let length)? = lengthValue, length >= 0, start + length <= bytes.count,
        limit > 0
      else { return nil }
      let raw = UnsafeBufferPointer(rebasing: bytes[start..<(start + length)])
      var filter = dictionary["/Filter"]
      if case .array(let filters)? = filter {
        guard filters.count <= 1 else { return nil }
        filter = filters.first
      }
      var data: [UInt8]
      switch filter {
      case nil: data = Array(raw)
      case .name("/FlateDecode")?:
        guard let inflated = Self.inflate(raw, limit: limit) else { return nil }
        data = inflated
      default: return nil
      }
      var parameters = dictionary["/DecodeParms"]
      if case .array(let list)? = parameters { parameters = list.first }
      if case .dictionary(let options)? = parameters,
        case .integer(let predictor)? = options["/Predictor"], predictor > 1
      {
        guard predictor >= 10 else { return nil }
        var columns = 1
        if case .integer(let value)? = options["/Columns"] { columns = value }
        guard columns > 0, let undone = Self.unpredict(data, columns: columns) else { return nil }
        data = undone
      }
      return data
    }

    static func inflate(_ raw: UnsafeBufferPointer<UInt8>, limit: Int) -> [UInt8]? {
      var capacity = min(limit, max(4096, raw.count * 8))
      while true {
        var written = -1
        // Not zero-filled first: zlib writes every byte that is kept.
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
          written = CImprintInflate_inflate(
            raw.baseAddress, raw.count, buffer.baseAddress, buffer.count)
          count = max(0, written)
        }
        if written >= 0 { return output }
        guard written == -2, capacity < limit else { return nil }
        capacity = min(limit, capacity * 4)
      }
    }

    /// Undoes PNG row predictors (PDF predictors 10-15) on rows of `columns` bytes.
    static func unpredict(_ data: [UInt8], columns: Int) -> [UInt8]? {
      let stride = columns + 1
      guard data.count % stride == 0 else { return nil }
      var output = [UInt8](repeating: 0, count: data.count / stride * columns)
      var previous = [UInt8](repeating: 0, count: columns)
      for row in 0..<(data.count / stride) {
        let filter = data[row * stride]
        var current = [UInt8](repeating: 0, count: columns)
        for x in 0..<columns {
          let raw = data[row * stride + 1 + x]
          let left = x > 0 ? current[x - 1] : 0
          let up = previous[x]
          let upLeft = x > 0 ? previous[x - 1] : 0
          switch filter {
          case 0: current[x] = raw
          case 1: current[x] = raw &+ left
          case 2: current[x] = raw &+ up
          case 3: current[x] = raw &+ UInt8((Int(left) + Int(up)) / 2)
          case 4:
            let p = Int(left) + Int(up) - Int(upLeft)
            let (pa, pb, pc) = (abs(p - Int(left)), abs(p - Int(up)), abs(p - Int(upLeft)))
            current[x] = raw &+ (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft)
          default: return nil
          }
        }
        output.replaceSubrange((row * columns)..<((row + 1) * columns), with: current)
        previous = current
      }
      return output
    }

    /// A box: four numbers.
    mutating func box(_ value: Value?) -> [Double]? {
      guard case .array(let items)? = resolve(value), items.count == 4 else { return nil }
      var numbers: [Double] = []
      for item in items {
        switch resolve(item) {
        case .integer(let number)?: numbers.append(Double(number))
        case .real(let number)?: numbers.append(number)
        default: return nil
        }
      }
      return numbers
    }

    /// Finds the largest image of a resource dictionary (forms up to 3 deep); false when an
    /// object could not be read.
    mutating func scanImages(
      _ resources: Value?, page: Int, depth: Int, largest: inout LargestImage?
    ) -> Bool {
      guard depth <= 3, case .dictionary(let dictionary)? = resolve(resources) else { return true }
      // An image map's keys are the images' names: all of them are read.
      guard case .dictionary(let objects)? = resolve(dictionary["/XObject"], keys: nil) else {
        return true
      }
      for key in objects.keys.sorted() {
        guard case .stream(let stream, _)? = resolve(objects[key]) else {
          if failed { return false }
          continue
        }
        if stream["/Subtype"] == .name("/Form") {
          guard scanImages(stream["/Resources"], page: page, depth: depth + 1, largest: &largest)
          else { return false }
          continue
        }
        guard stream["/Subtype"] == .name("/Image") else { continue }
        func integer(_ name: String) -> Int {
          if case .integer(let value)? = resolve(stream[name]) { return value }
          return 0
        }
        let width = integer("/Width")
        let height = integer("/Height")
        let bits = max(1, integer("/BitsPerComponent"))
        let space = resolve(stream["/ColorSpace"])
        let components =
          space == .name("/DeviceCMYK") ? 4 : space == .name("/DeviceGray") ? 1 : 3
        LargestImage.keepLarger(
          &largest, page: page, width: width, height: height, components: components, bits: bits)
      }
      return !failed
    }

    private func lastIndex(of pattern: [UInt8], from start: Int) -> Int? {
      QuickPageTree.lastIndex(of: pattern, in: bytes, from: start)
    }
  }

  /// Where `pattern` last occurs in `bytes` at or after `start`.
  static func lastIndex(of pattern: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int)
    -> Int?
  {
    var index = bytes.count - pattern.count
    while index >= start {
      if bytes[index..<(index + pattern.count)].elementsEqual(pattern) { return index }
      index -= 1
    }
    return nil
  }

  /// A tokenizer and parser of PDF values (no streams' data).
  struct Parser {
    let data: UnsafeBufferPointer<UInt8>
    var index: Int
    private var depth = 0
    /// When set, an object's own dictionary keeps only these keys; the others' values are
    /// skipped without being built (a page's annotations, fonts and the like).
    var keys: Set<String>?

    init(_ data: UnsafeBufferPointer<UInt8>, at index: Int) {
      self.data = data
      self.index = index
    }

    static func isSpace(_ byte: UInt8) -> Bool {
      byte == 32 || byte == 10 || byte == 13 || byte == 9 || byte == 12 || byte == 0
    }

    static func isDelimiter(_ byte: UInt8) -> Bool {
      switch byte {
      case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"),
        UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"),
        UInt8(ascii: "/"), UInt8(ascii: "%"):
        true
      default: false
      }
    }

    mutating func skipSpace() {
      while index < data.count {
        if Self.isSpace(data[index]) {
          index += 1
        } else if data[index] == UInt8(ascii: "%") {
          while index < data.count, data[index] != 10, data[index] != 13 { index += 1 }
        } else {
          return
        }
      }
    }

    /// Consumes `word` when it comes next as a whole keyword.
    mutating func keyword(_ word: StaticString) -> Bool {
      skipSpace()
      let count = word.utf8CodeUnitCount
      guard index + count <= data.count else { return false }
      // Compared in place: asked once or twice for every reference and object read.
      let same = word.withUTF8Buffer { bytes in
        (0..<count).allSatisfy { data[index + $0] == bytes[$0] }
      }
      guard same else { return false }
      let end = index + count
      if end < data.count, !Self.isSpace(data[end]), !Self.isDelimiter(data[end]) { return false }
      index = end
      return true
    }

    private mutating func regularToken() -> Slice<UnsafeBufferPointer<UInt8>> {
      let start = index
      while index < data.count, !Self.isSpace(data[index]), !Self.isDelimiter(data[index]) {
        index += 1
      }
      return data[start..<index]
    }

    /// The next value, or nil for anything unexpected.
    mutating func value() -> Value? {
      skipSpace()
      guard index < data.count, depth < 32 else { return nil }
      let byte = data[index]
      switch byte {
      case UInt8(ascii: "/"):
        index += 1
        let start = index - 1  // the name with its slash, in one string
        _ = regularToken()
        return .name(String(decoding: data[start..<index], as: UTF8.self))
      case UInt8(ascii: "["):
        index += 1
        depth += 1
        defer { depth -= 1 }
        var items: [Value] = []
        while true {
          skipSpace()
          guard index < data.count else { return nil }
          if data[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
          }
          guard let item = value() else { return nil }
          items.append(item)
        }
      case UInt8(ascii: "<"):
        if index + 1 < data.count, data[index + 1] == UInt8(ascii: "<") {
          index += 2
          depth += 1
          defer { depth -= 1 }
          var dictionary: [String: Value] = [:]
          while true {
            skipSpace()
            guard index + 1 < data.count else { return nil }
            if data[index] == UInt8(ascii: ">"), data[index + 1] == UInt8(ascii: ">") {
              index += 2
              return .dictionary(dictionary)
            }
            guard case .name(let key)? = value() else { return nil }
            if depth == 1, let keys, !keys.contains(key) {
              guard skipValue() else { return nil }
              continue
            }
            guard let item = value() else { return nil }
            dictionary[key] = item
          }
        }
        guard let end = data[index...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
        index = end + 1
        return .string
      case UInt8(ascii: "("):
        var nesting = 0
        while index < data.count {
          let c = data[index]
          index += 1
          if c == UInt8(ascii: "\\") {
            index += 1
          } else if c == UInt8(ascii: "(") {
            nesting += 1
          } else if c == UInt8(ascii: ")") {
            nesting -= 1
            if nesting == 0 { return .string }
          }
        }
        return nil
      default:
        let token = regularToken()
        guard !token.isEmpty else { return nil }
        if let integer = Self.integer(token) {
          // `N G R` is a reference.
          let save = index
          var probe = self
          if integer >= 0, case .integer? = probe.plainInteger(), probe.keyword("R") {
            self = probe
            return .reference(integer)
          }
          index = save
          return .integer(integer)
        }
        let text = String(decoding: token, as: UTF8.self)
        switch text {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "null": return .null
        default: break
        }
        if let real = Double(text), real.isFinite { return .real(real) }
        return nil
      }
    }

    /// An integer written in `token` (optional sign, at most 18 digits), read from the bytes
    /// without making a string: object streams and tables hold thousands.
    static func integer(_ token: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
      var digits = token[...]
      var negative = false
      if let sign = digits.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
        negative = sign == UInt8(ascii: "-")
        digits = digits.dropFirst()
      }
      guard !digits.isEmpty, digits.count <= 18 else { return nil }
      var value = 0
      for byte in digits {
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
      }
      return negative ? -value : value
    }

    /// Moves past the next value without building it; false for anything unexpected.
    mutating func skipValue() -> Bool {
      skipSpace()
      guard index < data.count, depth < 32 else { return false }
      switch data[index] {
      case UInt8(ascii: "/"):
        index += 1
        _ = regularToken()
        return true
      case UInt8(ascii: "["), UInt8(ascii: "<"), UInt8(ascii: "("):
        // Containers and strings: one nesting level at a time, as `value` reads them.
        let isDictionary =
          data[index] == UInt8(ascii: "<") && index + 1 < data.count
          && data[index + 1] == UInt8(ascii: "<")
        guard data[index] == UInt8(ascii: "[") || isDictionary else { return value() != nil }
        index += isDictionary ? 2 : 1
        depth += 1
        defer { depth -= 1 }
        while true {
          skipSpace()
          guard index < data.count else { return false }
          if isDictionary, data[index] == UInt8(ascii: ">"), index + 1 < data.count,
            data[index + 1] == UInt8(ascii: ">")
          {
            index += 2
            return true
          }
          if !isDictionary, data[index] == UInt8(ascii: "]") {
            index += 1
            return true
          }
          guard skipValue() else { return false }
        }
      default:
        let token = regularToken()
        guard !token.isEmpty else { return false }
        if let number = Self.integer(token), number >= 0 {
          var probe = self
          if case .integer? = probe.plainInteger(), probe.keyword("R") { self = probe }
        }
        return true
      }
    }

    mutating func plainInteger() -> Value? {
      skipSpace()
      guard let value = Self.integer(regularToken()) else { return nil }
      return .integer(value)
    }
  }
}
