// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint card` and `imprint templates list`.

import Foundation
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintGraphics
import ImprintService

enum CardCommand {
  /// The options of `imprint card`.
  enum Key {
    static let output = OptionKey.file("output", short: "o", "<file>", "Output file: .pdf or .png.")
    static let outputDir = OptionKey.directory(
      "output-dir", "<dir>", "Folder for the cards of several profiles.")
    static let format = OptionKey.choice(
      "format", "<format>", CardRun.Format.allCases.map(\.rawValue),
      "pdf, png or share (default: from -o, else pdf).")
    static let template = OptionKey.file(
      "template", "<name|path>", "A shipped design (see 'imprint templates list') or a file.")
    static let templates = TemplatesCommand.templates
    static let side = OptionKey.choice(
      CardOption.side.names.flag, "<side>", CardOption.sides, "front, back or both (default both).")
    static let locale = OptionKey.text(
      CardOption.locale.names.flag, "<id>",
      "The card's language (BCP 47: ko, ja, zh-Hant, hi, ar, es, pt-BR...; default: the "
        + "template's, en).")
    static let dpi = OptionKey.number(
      CardOption.dpi.names.flag, "<n>", in: CardOption.dpiRange,
      "PNG resolution, 72 to 1200 (default 300).")
    static let bleed = OptionKey.number(
      CardOption.bleed.names.flag, "<mm>", in: CardOption.bleedRange,
      "Bleed per side in millimetres (default: the template's, 3.175)."
    )
    static let cropMarks = OptionKey.flag(
      CardOption.cropMarks.names.flag, "Draw crop marks outside the bleed (PDF).")
    static let photo = OptionKey.file(
      "photo", "<file>", "The photo (JPEG, PNG, HEIF, WebP, TIFF or GIF) for one profile.")
    static let photoCache = OptionKey.directory(
      "photo-cache", "<dir>",
      "Folder of photos named <account>.jpg (.png, .heic, .webp, .tif, .gif).")
    static let fetchPhoto = OptionKey.flag(
      "fetch-photo",
      "Download the profile_image when no photo is given or cached (http/https, 15 s in all, "
        + "10 MB; never from loopback, private, link-local or multicast addresses).")
    static let allowPrivateNetwork = OptionKey.flag(
      "allow-private-network",
      "Let --fetch-photo reach loopback and private addresses (a shop's own photo server).")
    static let followCounts = OptionKey.file(
      "follow-counts", "<file>", "A get_follow_count result for the back (single profile).")
    static let platform = OptionKey.choice(
      CardOption.platform.names.flag, "<name>", Platform.allCases.map(\.rawValue),
      "steem or hive (default: detected, else steem).")
    static let allowMissingGlyphs = OptionKey.flag(
      CardOption.allowMissingGlyphs.names.flag,
      "Warn instead of failing when no font can draw a character.")
    static let jobs = OptionKey.integer(
      "jobs", short: "j", "<n>", in: 1...256,
      "Parallel jobs for several profiles (default: all cores).")
    static let json = OptionKey.flag("json", "Print a JSON report on standard output.")
    static let quiet = OptionKey.flag("quiet", short: "q", "Print no warnings.")
  }

  static let spec = CommandSpec(
    name: "card",
    abstract: "Render Steem/Hive profiles as print-ready CR80 ID cards (PDF or PNG).",
    discussion: """
      PROFILE is an @user.json response, a get_accounts result, a bridge.get_profile result or \
      an account object. A PDF has one page per side at trim + 2 × bleed (vector text, fonts \
      embedded); PNG writes one file per side at --dpi (NAME-front.png and NAME-back.png when \
      both sides are asked for); --format share writes one 1200 × 630 preview. The photo is \
      --photo, else the account's photo in --photo-cache, else a bundled placeholder. With several \
      profiles, give --output-dir: each card is named after its account.
      """,
    arguments: [ArgumentSpec("profile", "Profile JSON file(s).", variadic: true, kind: .file)],
    options: [
      Key.output, Key.outputDir, Key.format, Key.template, Key.templates, Key.side, Key.locale,
      Key.dpi, Key.bleed, Key.cropMarks, Key.photo, Key.photoCache, Key.fetchPhoto,
      Key.allowPrivateNetwork, Key.followCounts, Key.platform, Key.allowMissingGlyphs, Key.jobs,
      Key.json, Key.quiet,
    ]
  ) { arguments, console in
    try await run(arguments, console)
  }

  /// A card's line in the `--json` report.
  struct Report: Codable, Sendable {
    var profile: String
    var status: ItemStatus
    var account: String?
    var outputs: [String] = []
    var warnings: [String] = []
    var error: ErrorRecord?

    init(_ item: CardRunItem) {
      profile = item.profile
      status = item.status
      account = item.account
      outputs = item.outputs
      warnings = item.warnings
      if case .failure(let error) = item.result { self.error = ErrorRecord(error) }
    }
  }

  static func run(_ arguments: ParsedArguments, _ console: Console) async throws -> Int32 {
    let profiles = arguments.positionals
    let templatesFolder = try ResourceLocator.checkedTemplatesDirectory(
      explicit: arguments.value(Key.templates))
    let template = try CardTemplate.load(
      arguments.value(Key.template) ?? "classic", folder: templatesFolder)
    // The library reads the options by their names (`CardOption`), as the service does.
    var source = ArgumentSource(arguments)
    let read = try CardOptions.read(from: &source, defaultFaces: [.front, .back])
    var options = read.options
    options.fonts = try DeploymentResources.fonts()
    let platform = read.platform
    let output = arguments.value(Key.output)
    let folder = arguments.value(Key.outputDir)
    var format = try arguments.choice(Key.format).flatMap {
      CardRun.Format(rawValue: $0)
    }
    if format == nil, let output {
      let ext = (output as NSString).pathExtension.lowercased()
      guard let inferred = CardRun.Format(rawValue: ext), inferred != .share else {
        throw UsageError(
          message: "cannot tell the format of '\(output)'; use .pdf or .png, or --format")
      }
      format = inferred
    }
    let chosen = format ?? .pdf
    // Options the format does not use are refused, as the service refuses them.
    if let unused = chosen.unusedOption(options, dpiGiven: read.dpiGiven) {
      throw UsageError(message: "\(unused.flag) \(unused.appliesTo)")
    }
    let photo = arguments.value(Key.photo)
    let follow = arguments.value(Key.followCounts)
    func request(_ profile: String) -> CardRequest {
      CardRequest(profile: profile, photo: photo, followCounts: follow, platform: platform)
    }
    var run: CardRun
    let combined = profiles.count > 1 && output != nil && folder == nil
    if combined, let output {
      guard chosen == .pdf else {
        throw UsageError(message: "several profiles go into one PDF, or into --output-dir")
      }
      // --photo and --follow-counts are not used for a combined PDF (only kept from being
      // replaced, with the other inputs).
      run = .combinedPDF(
        profiles.map { CardRequest(profile: $0, platform: platform) }, to: output,
        options: options)
    } else if profiles.count == 1, let output, folder == nil {
      run = .card(request(profiles[0]), to: output, format: chosen, options: options)
    } else if let folder, output == nil {
      if profiles.count > 1 && (photo != nil || follow != nil) {
        throw UsageError(
          message: "--photo and --follow-counts apply to a single profile; use --photo-cache")
      }
      run = .folder(profiles.map(request), in: folder, format: chosen, options: options)
    } else {
      throw UsageError(message: "give -o <file> for one profile, or --output-dir <dir>")
    }
    run.inputs = [photo, follow, arguments.value(Key.template)].compactMap { $0 }
    run.jobs = try arguments.int(Key.jobs) ?? activeProcessorCount
    // Photos come from strangers: decoded in the document workers, under their limits.
    let decoder = DocumentSandbox(
      executable: try DocumentCommands.workerExecutable(console), workers: run.jobs)
    defer { decoder.stopIdleWorkers() }
    let loader = CardInputLoader(
      placeholder: try DeploymentResources.placeholder(),
      photos: PhotoOptions(
        cache: arguments.value(Key.photoCache).map { PhotoCache(folder: $0) },
        fetch: arguments.flag(Key.fetchPhoto),
        allowPrivateNetwork: arguments.flag(Key.allowPrivateNetwork)),
      decoder: decoder)
    let items = try await run.run(template: template, loader: loader)
    if combined, let output, !arguments.flag(Key.quiet) {
      let cards = items.filter { $0.status == .ok }.count
      console.stderr.write(
        "card: \(cards) of \(items.count) cards written to \(SafeText.escaped(output))\n")
    }
    return finish(
      items.map(Report.init), single: !combined && items.count == 1, arguments: arguments,
      console: console)
  }

  /// Prints errors, warnings and the JSON report; returns the exit code.
  static func finish(
    _ ordered: [Report], single: Bool, arguments: ParsedArguments, console: Console
  ) -> Int32 {
    var failed = 0
    for report in ordered {
      if let error = report.error {
        failed += 1
        // Messages carry profile text (names, URLs): escaped, like Console.report's.
        if single {
          console.stderr.write("error: \(SafeText.escaped(error.message))\n")
          if let hint = error.hint { console.stderr.write("hint: \(SafeText.escaped(hint))\n") }
        } else {
          console.stderr.write(
            "error: \(SafeText.escaped(report.profile)): \(SafeText.escaped(error.message))\n")
        }
        console.reportCauses(error)
      } else if !arguments.flag(Key.quiet) {
        for warning in report.warnings { console.warn(warning) }
      }
    }
    if arguments.flag(Key.json) {
      struct Document: Codable {
        var schemaVersion = 1
        var cards: [Report]
      }
      console.stdout.write(JSONOutput.pretty(Document(cards: ordered)))
    }
    return failed > 0 ? ImprintCLI.failure : ImprintCLI.success
  }
}

enum TemplatesCommand {
  /// `--templates <dir>`, as `imprint card` and `imprint serve` take it too (a setting of
  /// `imprint serve`, declared with them).
  static let templates = OptionKey<String>(ServiceSetting.templates)
  /// `imprint templates list --json`.
  static let json = OptionKey.flag("json", "Print the list as JSON.")

  static let list = CommandSpec(
    name: "list", abstract: "List the shipped card designs.",
    options: [templates, json]
  ) { arguments, console in
    let folder = try ResourceLocator.checkedTemplatesDirectory(
      explicit: arguments.value(templates))
    struct Entry: Codable {
      var name: String
      var description: String
      /// The languages its cards can be printed in (`--locale`): its own and its translations.
      var locales: [String]
    }
    var entries: [Entry] = []
    for name in CardTemplate.shippedNames(folder: folder) {
      let template = try CardTemplate.load(name, folder: folder)
      entries.append(
        Entry(
          name: name, description: template.description,
          locales: ([template.locale] + template.strings.keys).sorted()))
    }
    if arguments.flag(json) {
      struct Document: Codable {
        var schemaVersion = 1
        var templates: [Entry]
      }
      console.stdout.write(JSONOutput.pretty(Document(templates: entries)))
    } else {
      let width = (entries.map(\.name.count).max() ?? 0) + 2
      for entry in entries {
        console.stdout.write(
          entry.name + String(repeating: " ", count: width - entry.name.count) + entry.description
            + "\n")
      }
    }
    return ImprintCLI.success
  }

  static let spec = CommandSpec(
    name: "templates", abstract: "Work with card templates.", subcommands: [list]
  ) { _, _ in ImprintCLI.success }
}
