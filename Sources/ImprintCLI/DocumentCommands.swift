// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint inspect` and `imprint thumb`, run in sandboxed worker processes.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintService

enum DocumentCommands {
  /// The options of `imprint inspect` and `imprint thumb`, and the limits `quote`, `prepare`
  /// and `serve` share.
  enum Key {
    // The options of reading a document are the library's table (`InspectOption`), as the
    // service reads it.
    static let password = OptionKey<String>(InspectOption.password.entry)
    // The workers' limits are settings of `imprint serve` too, declared with them.
    static let cpuLimit = OptionKey<Int>(ServiceSetting.cpuLimit)
    static let memoryLimit = OptionKey<Int>(ServiceSetting.memoryLimit)
    static let timeout = OptionKey<Double>(ServiceSetting.timeout)
    static let jobs = OptionKey.integer(
      "jobs", short: "j", "<n>", in: 1...256, "Files handled at once (default: all cores).")
    static let json = OptionKey.flag("json", "Print a JSON report.")
    static let colors = OptionKey<Bool>(InspectOption.colors.entry)
    static let colorTolerance = OptionKey<Int>(InspectOption.colorTolerance.entry)
    static let colorMinArea = OptionKey<Double>(InspectOption.colorMinArea.entry)
    static let output = OptionKey.directory(
      "output", short: "o", "<dir>", "Folder for the thumbnails.")
    static let size = OptionKey.integer(
      ThumbnailOption.size.names.flag, "<px>", in: ThumbnailOption.sizeRange,
      "Box size in pixels, 16 to 2048 (default 256).")
    static let pages = OptionKey.text(
      "pages", "<pages>", "1 (default), all, or a range such as 1-3,5.")
    static let format = OptionKey.choice(
      ThumbnailOption.format.names.flag, "<format>", ThumbnailFormat.allCases.map(\.rawValue),
      "png (default) or jpeg.")
    static let freedesktop = OptionKey.flag(
      "freedesktop", "Write the Thumb::URI and Thumb::MTime PNG chunks.")
  }

  /// The workers' limits (`--cpu-limit`, `--memory-limit`, `--timeout`).
  static let sandboxLimitOptions: [any OptionDeclaration] = [
    Key.cpuLimit, Key.memoryLimit, Key.timeout,
  ]

  /// A password, the workers' limits and `--jobs`, as inspect and thumb take them.
  static let limitOptions: [any OptionDeclaration] =
    [Key.password] + sandboxLimitOptions + [Key.jobs]

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

  /// The command's own sandbox, with the workers' limits of `arguments`, running up to `jobs`
  /// workers.
  ///
  /// The command stops its idle workers when it ends (`defer { sandbox.stopIdleWorkers() }`),
  /// whatever the outcome: each is reaped before the command returns, and those of other
  /// sandboxes in the process (a server's, another caller's) are left alone.
  static func sandbox(_ arguments: ParsedArguments, _ console: Console, jobs: Int) throws
    -> DocumentSandbox
  {
    DocumentSandbox(
      executable: try workerExecutable(console), limits: try limits(arguments), workers: jobs)
  }

  /// The workers' limits from `--cpu-limit`, `--memory-limit` and `--timeout`.
  static func limits(_ arguments: ParsedArguments) throws -> SandboxLimits {
    var limits = SandboxLimits()
    limits.cpuSeconds = try arguments.int(Key.cpuLimit) ?? limits.cpuSeconds
    limits.memoryMB = try arguments.int(Key.memoryLimit) ?? limits.memoryMB
    limits.wallSeconds = try arguments.double(Key.timeout) ?? limits.wallSeconds
    return limits
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
        "file", "PDF, JPEG, PNG, HEIF, WebP, TIFF or GIF files.", variadic: true, kind: .file)
    ],
    options: [Key.json, Key.colors, Key.colorTolerance, Key.colorMinArea] + limitOptions
  ) { arguments, console in
    // The library reads the options by their names (`InspectOption`), as the service.
    var source = ArgumentSource(arguments)
    let request = try InspectRequest.read(from: &source, offering: InspectOption.commandLine)
    let jobs = try arguments.int(Key.jobs) ?? DocumentSandbox.defaultWorkers
    let sandbox = try sandbox(arguments, console, jobs: jobs)
    defer { sandbox.stopIdleWorkers() }
    let items = await sandbox.inspect(
      files: arguments.positionals, password: request.password, colors: request.colors,
      jobs: jobs)
    return report(items, arguments, console, text: describe) { item, error in
      InspectEntry(
        file: item.file, status: item.status, info: try? item.result.get(), error: error)
    }
  }

  /// Prints a bulk run: the `--json` report (each file's entry made by `entry` from its item and
  /// its error's record) or, without --json, `text` of each file that succeeded; then `error: …`
  /// for each file that failed.
  ///
  /// - Returns: `ImprintCLI.failure` when a file failed, else `ImprintCLI.success`.
  static func report<Value, Entry: Encodable & Sendable>(
    _ items: [DocumentItem<Value>], _ arguments: ParsedArguments, _ console: Console,
    text: ((Value) -> String)? = nil,
    entry: (DocumentItem<Value>, ErrorRecord?) -> Entry
  ) -> Int32 {
    let errors = items.map { item -> ErrorRecord? in
      guard case .failure(let error) = item.result else { return nil }
      return ErrorRecord(error)
    }
    if arguments.flag(Key.json) {
      console.stdout.write(JSONOutput.pretty(FilesReport(files: zip(items, errors).map(entry))))
    } else if let text {
      for item in items {
        if case .success(let value) = item.result { console.stdout.write(text(value)) }
      }
    }
    reportFailures(errors.compactMap { $0 }, console)
    return errors.contains { $0 != nil } ? ImprintCLI.failure : ImprintCLI.success
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
        variadic: true, kind: .file)
    ],
    options: [Key.output, Key.size, Key.pages, Key.format, Key.freedesktop, Key.json]
      + limitOptions
  ) { arguments, console in
    // The library reads size and format by their names (`ThumbnailOption`), as the service.
    var source = ArgumentSource(arguments)
    let thumbnail = try ThumbnailOptions.read(from: &source)
    let (size, format) = (thumbnail.size, thumbnail.format)
    let (files, destination) = try destination(
      arguments.positionals, folder: arguments.value(Key.output), format: format)
    let jobs = try arguments.int(Key.jobs) ?? DocumentSandbox.defaultWorkers
    let sandbox = try sandbox(arguments, console, jobs: jobs)
    defer { sandbox.stopIdleWorkers() }
    let items = try await sandbox.thumbnails(
      of: files, to: destination, pages: arguments.value(Key.pages) ?? "1", size: size,
      format: format, password: arguments.value(Key.password),
      freedesktop: arguments.flag(Key.freedesktop), jobs: jobs)
    struct Entry: Encodable, Sendable {
      var file: String
      var status: ItemStatus
      var outputs: [String]
      var error: ErrorRecord?
    }
    return report(items, arguments, console) { item, error in
      Entry(
        file: item.file, status: item.status, outputs: (try? item.result.get()) ?? [],
        error: error)
    }
  }

  /// The files to thumbnail and where: `-o DIR` and the files, or exactly `INPUT OUTPUT`.
  ///
  /// - Throws: `UsageError` for no input, several inputs without -o, or an OUTPUT that looks
  ///   like a forgotten -o (another document, or a name of another type).
  static func destination(_ inputs: [String], folder: String?, format: ThumbnailFormat) throws
    -> (files: [String], destination: ThumbnailDestination)
  {
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
      return ([inputs[0]], .file(output))
    }
    guard !inputs.isEmpty else { throw UsageError(message: "give the files to thumbnail") }
    return (inputs, .folder(folder))
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
