// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint inspect` and `imprint thumb`, run in sandboxed worker processes.

import Foundation
import ImprintCore
import ImprintDocuments

enum DocumentCommands {
  static let limitOptions: [OptionSpec] = [
    .value("password", "<text>", "Password of encrypted PDFs."),
    .value("cpu-limit", "<s>", "CPU seconds one file may use (default 30)."),
    .value(
      "memory-limit", "<MB>",
      "Memory of a worker process in MB (default \(SandboxLimits.defaultMemoryMB))."),
    .value("timeout", "<s>", "Wall-clock seconds one file may take (default 60)."),
    .value("jobs", short: "j", "<n>", "Files handled at once (default: all cores)."),
  ]

  /// The `imprint` executable that serves `__worker`: `IMPRINT_WORKER`, this process when it is
  /// `imprint`, or an `imprint` beside this process's executable (tests).
  static func workerExecutable(_ console: Console) throws -> String {
    if let path = console.environment["IMPRINT_WORKER"], !path.isEmpty { return path }
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    if (me as NSString).lastPathComponent == "imprint" { return me }
    let beside = (me as NSString).deletingLastPathComponent + "/imprint"
    if FileManager.default.isExecutableFile(atPath: beside) { return beside }
    throw FileError.notFound(path: "imprint (set IMPRINT_WORKER to the imprint executable)")
  }

  static func sandbox(_ arguments: ParsedArguments, _ console: Console, jobs: Int) throws
    -> DocumentSandbox
  {
    var limits = SandboxLimits()
    limits.cpuSeconds = try arguments.int("cpu-limit", in: 1...3600) ?? limits.cpuSeconds
    limits.memoryMB = try arguments.int("memory-limit", in: 128...65_536) ?? limits.memoryMB
    limits.wallSeconds = try arguments.double("timeout", in: 0.5...3600) ?? limits.wallSeconds
    return DocumentSandbox(executable: try workerExecutable(console), limits: limits, workers: jobs)
  }

  static let inspect = CommandSpec(
    name: "inspect",
    abstract: "Report page counts, page sizes, encryption and colour pages of PDFs and images.",
    discussion: """
      The type comes from the content (PDF, JPEG, PNG), never the name. Each page's size is \
      given in millimetres with the standard name within 2 mm (A3, A4, A5, B4, B5, Letter, \
      Legal, Tabloid) and its orientation. A PDF whose /Count disagrees with its page tree is \
      an error, not a price. --colors adds per page: colour or monochrome, blank, and ink \
      coverage estimates; a page is colour when more than --color-min-area per cent of it has \
      a chroma (max - min of R, G, B) above --color-tolerance. Files are read in worker \
      processes with CPU, memory and time limits.
      """,
    arguments: [
      ArgumentSpec(
        "file", "PDF, JPEG, PNG, HEIF, WebP, TIFF or GIF files.", variadic: true)
    ],
    options: [
      .flag("json", "Print a JSON report."),
      .flag("colors", "Analyse each page's colour."),
      .value("color-tolerance", "<0-255>", "Chroma above which a pixel is coloured (default 8)."),
      .value(
        "color-min-area", "<percent>", "Coloured area that makes a page colour (default 0.1)."),
    ] + limitOptions
  ) { arguments, console in
    var rule: ColorRule?
    if arguments.flag("colors") {
      var colors = ColorRule()
      colors.chromaTolerance =
        try arguments.int("color-tolerance", in: 0...255) ?? colors.chromaTolerance
      colors.minimumAreaPercent =
        try arguments.double("color-min-area", in: 0...100) ?? colors.minimumAreaPercent
      rule = colors
    }
    let files = arguments.positionals
    let colorRule = rule
    let jobs = try arguments.int("jobs", in: 1...256) ?? DocumentSandbox.defaultWorkers
    let sandbox = try sandbox(arguments, console, jobs: jobs)
    let password = arguments.value("password")
    var results: [Int: (DocumentInfo?, ErrorRecord?)] = [:]
    // Counting and measuring cost about what a file weighs: the largest go first. Colour
    // analysis costs what its pages take to draw, which the size does not tell (a 1.6 MB
    // music essay takes longer than a 3.2 MB photo manual): files go in the order given.
    var iterator =
      (colorRule == nil ? largestFirst(files, path: { $0 }) : Array(files.enumerated()))
      .makeIterator()
    await forEachConcurrently(
      inputs: { iterator.next() }, jobs: jobs,
      work: { (index, file) -> (Int, (DocumentInfo?, ErrorRecord?)) in
        do {
          let info = try await sandbox.inspect(
            path: file, file: file, password: password, colors: colorRule)
          return (index, (info, nil))
        } catch {
          return (index, (nil, ErrorRecord(error)))
        }
      },
      collect: { results[$0.0] = $0.1 })
    struct Entry: Codable {
      var file: String
      var status: ItemStatus
      var info: DocumentInfo?
      var error: ErrorRecord?
    }
    var entries: [Entry] = []
    for (index, file) in files.enumerated() {
      switch results[index] {
      case (let info?, _)?: entries.append(Entry(file: file, status: .ok, info: info))
      case (nil, let error)?: entries.append(Entry(file: file, status: .failed, error: error))
      case nil: break
      }
    }
    if arguments.flag("json") {
      struct Document: Codable {
        var schemaVersion = 1
        var files: [Entry]
      }
      console.stdout.write(JSONOutput.pretty(Document(files: entries)))
    } else {
      for entry in entries { if let info = entry.info { console.stdout.write(describe(info)) } }
    }
    reportFailures(entries.compactMap(\.error), console)
    return entries.contains { $0.error != nil } ? ImprintCLI.failure : ImprintCLI.success
  }

  /// `error: …` for each failed file (file names escaped), with the hint when there is one
  /// failure.
  static func reportFailures(_ errors: [ErrorRecord], _ console: Console) {
    for error in errors {
      console.stderr.write("error: \(SafeText.escaped(error.message))\n")
      if let hint = error.hint, errors.count == 1 {
        console.stderr.write("hint: \(SafeText.escaped(hint))\n")
      }
      console.reportCauses(error)
    }
  }

  /// `items` with their positions, the largest files first: the long page-tree walks start
  /// early instead of leaving one worker busy at the end while the others wait (reports keep
  /// the order given, by position).
  static func largestFirst<Item>(_ items: [Item], path: (Item) -> String) -> [(Int, Item)] {
    let sizes = items.map { item -> Int64 in
      var status = stat()
      return stat(path(item), &status) == 0 ? Int64(status.st_size) : 0
    }
    return items.enumerated().sorted { sizes[$0.offset] > sizes[$1.offset] }.map {
      ($0.offset, $0.element)
    }
  }

  /// The plain-text report of one file.
  static func describe(_ info: DocumentInfo) -> String {
    var groups: [(String, Int)] = []
    for size in info.pageSizes {
      let name =
        (size.paper?.rawValue
          ?? "\(Formatting.number(size.widthMM)) x \(Formatting.number(size.heightMM)) mm")
        + " \(size.orientation)"
      if groups.last?.0 == name {
        groups[groups.count - 1].1 += 1
      } else {
        groups.append((name, 1))
      }
    }
    var text =
      "\(info.file): \(info.type.rawValue.uppercased()), \(info.pages) page"
      + (info.pages == 1 ? "" : "s") + "; "
      + groups.map { $0.1 > 1 ? "\($0.0) x\($0.1)" : $0.0 }.joined(separator: ", ")
    text += info.encrypted ? "; encrypted" : ""
    text += info.printAllowed ? "" : "; printing not permitted"
    if let colors = info.colors {
      let colored = colors.filter(\.color).map { String($0.page) }
      let blank = colors.filter(\.blank).map { String($0.page) }
      text +=
        "; colour pages: \(colored.count)"
        + (colored.isEmpty ? "" : " (\(compactRanges(colors.filter(\.color).map(\.page))))")
      if !blank.isEmpty { text += "; blank: \(compactRanges(colors.filter(\.blank).map(\.page)))" }
    }
    return text + "\n"
  }

  static let thumb = CommandSpec(
    name: "thumb",
    abstract: "Render thumbnails of PDFs and images that fit a square box.",
    discussion: """
      Each thumbnail fits a --size box (longest side = size), aspect kept, white behind \
      transparent pages, rendered directly at that scale; photos are turned upright by their \
      EXIF orientation. With -o DIR, every argument is an input and FILE.png is written in DIR \
      for page 1 (FILE-N.png for each page with --pages); two inputs with the same name \
      (x/a.pdf and y/a.pdf) would write the same file, so neither is written \
      (file.outputCollision), and no output ever replaces an input (file.outputIsInput). \
      Without -o, exactly INPUT OUTPUT: the form of a freedesktop thumbnailer (see \
      assets/imprint.thumbnailer), with --freedesktop writing the Thumb::URI and Thumb::MTime \
      chunks; OUTPUT must end in .png (.jpg with --format jpeg) or have no extension, and \
      may replace only a PNG (JPEG) file, so that 'imprint thumb a.pdf b.pdf' is a usage \
      error instead of replacing b.pdf. A file's thumbnails are all written or none.
      """,
    arguments: [
      ArgumentSpec(
        "file", "PDF or image files (JPEG, PNG, HEIF, WebP, TIFF, GIF) with -o; else INPUT OUTPUT.",
        variadic: true)
    ],
    options: [
      .value("output", short: "o", "<dir>", "Folder for the thumbnails."),
      .value("size", "<px>", "Box size in pixels, 16 to 2048 (default 256)."),
      .value("pages", "<pages>", "1 (default), all, or a range such as 1-3,5."),
      .value("format", "<format>", "png (default) or jpeg."),
      .flag("freedesktop", "Write the Thumb::URI and Thumb::MTime PNG chunks."),
      .flag("json", "Print a JSON report."),
    ] + limitOptions
  ) { arguments, console in
    let size = try arguments.int("size", in: 16...2048) ?? 256
    let format =
      try arguments.choice("format", ["png", "jpeg"]).flatMap { ThumbnailFormat(rawValue: $0) }
      ?? .png
    let pagesSpec = arguments.value("pages") ?? "1"
    let ext = format == .png ? "png" : "jpg"
    let folder = arguments.value("output")
    let inputs = arguments.positionals
    let pairs = try outputs(inputs, folder: folder, format: format, ext: ext)
    if let folder {
      try FileIO.makeFolder(folder)
      // Pages staged by the workers of a run that was killed (kill -9 of the CLI) are hidden
      // temporaries of dead processes: removed once per run, never a live run's.
      AtomicFile.removeStaleTemporaries(in: folder)
    }
    let jobs = try arguments.int("jobs", in: 1...256) ?? DocumentSandbox.defaultWorkers
    let sandbox = try sandbox(arguments, console, jobs: jobs)
    let password = arguments.value("password")
    let freedesktop = arguments.flag("freedesktop")
    struct Entry: Codable, Sendable {
      var file: String
      var status: ItemStatus
      var outputs: [String] = []
      var error: ErrorRecord?
    }
    var results: [Int: Entry] = [:]
    // Identified once: each output is then one stat, however many inputs there are.
    let protected = FileIdentities(folder == nil ? [] : inputs)
    // Fewer files than workers: the pages of each are shared out among the idle ones.
    let spare = max(1, jobs / max(1, pairs.count))
    var iterator = largestFirst(pairs, path: \.input).makeIterator()
    await forEachConcurrently(
      inputs: { iterator.next() }, jobs: jobs,
      work: { (index, pair) -> (Int, Entry) in
        var entry = Entry(file: pair.input, status: .ok)
        do {
          if let collision = pair.collision { throw collision }
          var text: [(key: String, value: String)] = []
          if freedesktop {
            let absolute =
              pair.input.hasPrefix("/")
              ? pair.input : FileManager.default.currentDirectoryPath + "/" + pair.input
            let attributes = try? FileManager.default.attributesOfItem(atPath: pair.input)
            let mtime =
              (attributes?[.modificationDate] as? Date).map { Int($0.timeIntervalSince1970) } ?? 0
            text = [
              ("Thumb::URI", URL(fileURLWithPath: absolute).absoluteString),
              ("Thumb::MTime", "\(mtime)"),
            ]
          }
          entry.outputs = try await sandbox.thumbnails(
            path: pair.input, file: pair.input, password: password, pages: pagesSpec, size: size,
            format: format, output: pair.output, text: text, parallel: spare,
            inputs: protected)
        } catch {
          entry.status = .failed
          entry.error = ErrorRecord(error)
        }
        return (index, entry)
      },
      collect: { results[$0.0] = $0.1 })
    let entries = (0..<pairs.count).compactMap { results[$0] }
    if arguments.flag("json") {
      struct Document: Codable {
        var schemaVersion = 1
        var files: [Entry]
      }
      console.stdout.write(JSONOutput.pretty(Document(files: entries)))
    }
    reportFailures(entries.compactMap(\.error), console)
    return entries.contains { $0.error != nil } ? ImprintCLI.failure : ImprintCLI.success
  }

  /// Each input's output file: `DIR/BASE.ext` with `-o DIR` (inputs that would share one get
  /// `file.outputCollision` instead), or the OUTPUT of `INPUT OUTPUT`.
  ///
  /// - Throws: `UsageError` for no input, several inputs without -o, or an OUTPUT that looks
  ///   like a forgotten -o (another document, or a name of another type).
  static func outputs(
    _ inputs: [String], folder: String?, format: ThumbnailFormat, ext: String
  ) throws -> [(input: String, output: String, collision: FileError?)] {
    guard let folder else {
      guard inputs.count == 2 else {
        throw UsageError(
          message: "give -o <dir> and the files, or exactly INPUT OUTPUT (one file)")
      }
      let output = inputs[1]
      let extensions = format == .png ? ["png"] : ["jpg", "jpeg"]
      let given = (output as NSString).pathExtension.lowercased()
      // What OUTPUT holds now, if it is a file with content (opened as inputs are).
      var existing = [UInt8](repeating: 0, count: 1024)
      if let (descriptor, _) = try? FileIO.openForReading(output) {
        existing.removeLast(1024 - max(0, read(descriptor, &existing, existing.count)))
        close(descriptor)
      } else {
        existing = []
      }
      let replacesOther =
        !existing.isEmpty && DocumentType(sniffing: existing) != (format == .png ? .png : .jpeg)
      if !(given.isEmpty || extensions.contains(given)) || replacesOther {
        throw UsageError(
          message:
            "'\(SafeText.escaped(output))' cannot be the thumbnail of "
            + "'\(SafeText.escaped(inputs[0]))': without -o the second argument is the output, "
            + "a new or \(extensions[0].uppercased()) file named .\(extensions[0]); "
            + "to thumbnail several files give -o <dir>")
      }
      return [(inputs[0], output, nil)]
    }
    guard !inputs.isEmpty else { throw UsageError(message: "give the files to thumbnail") }
    let outputs = inputs.map { input in
      let base = ((input as NSString).lastPathComponent as NSString).deletingPathExtension
      return "\(folder)/\(base).\(ext)"
    }
    // Inputs sharing an output: none of them is written (which one would win is no rule).
    var users: [String: [String]] = [:]
    for (input, output) in zip(inputs, outputs) { users[output, default: []].append(input) }
    return zip(inputs, outputs).map { input, output in
      let sharing = users[output] ?? []
      guard sharing.count > 1 else { return (input, output, nil) }
      let other = sharing.first { $0 != input } ?? input
      return (input, output, FileError.outputCollision(path: output, first: input, second: other))
    }
  }

}

/// `[1, 2, 3, 5]` as `1-3, 5`.
func compactRanges(_ pages: [Int]) -> String {
  var parts: [String] = []
  var start: Int?
  var previous = 0
  for page in pages.sorted() + [Int.max] {
    if let first = start, page == previous + 1 {
      previous = page
      _ = first
      continue
    }
    if let first = start { parts.append(first == previous ? "\(first)" : "\(first)-\(previous)") }
    start = page
    previous = page
  }
  return parts.joined(separator: ", ")
}
