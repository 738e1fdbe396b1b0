// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint card` and `imprint templates list`.

import Foundation
import ImprintCards
import ImprintCore
import ImprintGraphics

enum CardCommand {
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
    arguments: [ArgumentSpec("profile", "Profile JSON file(s).", variadic: true)],
    options: [
      .value("output", short: "o", "<file>", "Output file: .pdf or .png."),
      .value("output-dir", "<dir>", "Folder for the cards of several profiles."),
      .value("format", "<format>", "pdf, png or share (default: from -o, else pdf)."),
      .value(
        "template", "<name|path>", "A shipped design (see 'imprint templates list') or a file."),
      .value(
        "templates", "<dir>", "Folder of designs (default: IMPRINT_TEMPLATES, else Imprint's own)."
      ),
      .value("side", "<side>", "front, back or both (default both)."),
      .value(
        "locale", "<id>",
        "The card's language (BCP 47: ko, ja, zh-Hant, hi, ar, es, pt-BR...; default: the "
          + "template's, en)."),
      .value("dpi", "<n>", "PNG resolution, 72 to 1200 (default 300)."),
      .value("bleed", "<mm>", "Bleed per side in millimetres (default: the template's, 3.175)."),
      .flag("crop-marks", "Draw crop marks outside the bleed (PDF)."),
      .value("photo", "<file>", "The photo (JPEG, PNG, HEIF, WebP, TIFF or GIF) for one profile."),
      .value(
        "photo-cache", "<dir>",
        "Folder of photos named <account>.jpg (.png, .heic, .webp, .tif, .gif)."),
      .flag(
        "fetch-photo",
        "Download the profile_image when no photo is given or cached (http/https, 15 s in all, "
          + "10 MB; never from loopback, private, link-local or multicast addresses)."),
      .flag(
        "allow-private-network",
        "Let --fetch-photo reach loopback and private addresses (a shop's own photo server)."),
      .value("follow-counts", "<file>", "A get_follow_count result for the back (single profile)."),
      .value("platform", "<name>", "steem or hive (default: detected, else steem)."),
      .flag("allow-missing-glyphs", "Warn instead of failing when no font can draw a character."),
      .value("jobs", short: "j", "<n>", "Parallel jobs for several profiles (default: all cores)."),
      .flag("json", "Print a JSON report on standard output."),
      .flag("quiet", short: "q", "Print no warnings."),
    ]
  ) { arguments, console in
    try await run(arguments, console)
  }

  enum Format: String, CaseIterable {
    case pdf, png, share
  }

  struct Job: Sendable {
    let profilePath: String
    let output: String
    let photo: String?
    let follow: String?
    /// Set when an earlier profile of the run already writes `output` (two profiles with one
    /// base name in different folders): this job fails rather than replace that card.
    var collision: FileError? = nil
  }

  struct Report: Codable, Sendable {
    var profile: String
    var status: ItemStatus
    var account: String?
    var outputs: [String] = []
    var warnings: [String] = []
    var error: ErrorRecord?
  }

  static func run(_ arguments: ParsedArguments, _ console: Console) async throws -> Int32 {
    // Cards into a folder are flushed together at the end (one checked syncfs), not one fsync
    // a card (fsync cost up to 4 ms a file here, as much as drawing the card).
    guard let folder = arguments.value("output-dir") else {
      return try await render(arguments, console)
    }
    return try await AtomicFile.withDeferredFlush(syncing: folder) {
      try await render(arguments, console)
    }
  }

  private static func render(_ arguments: ParsedArguments, _ console: Console) async throws
    -> Int32
  {
    let profiles = arguments.positionals
    let templatesFolder = try ResourceLocator.checkedTemplatesDirectory(
      explicit: arguments.value("templates"))
    let template = try CardTemplate.load(
      arguments.value("template") ?? "classic", folder: templatesFolder)
    var options = CardOptions()
    switch try arguments.choice("side", ["front", "back", "both"]) ?? "both" {
    case "front": options.faces = [.front]
    case "back": options.faces = [.back]
    default: options.faces = [.front, .back]
    }
    options.dpi = try arguments.double("dpi", in: 72...1200) ?? 300
    options.bleed = try arguments.double("bleed", in: 0...10)
    options.cropMarks = arguments.flag("crop-marks")
    options.allowMissingGlyphs = arguments.flag("allow-missing-glyphs")
    options.fonts = try DeploymentResources.fonts()
    if let locale = arguments.value("locale") {
      // Checked before any card: an unknown or untranslated locale fails the run at once.
      _ = try CardLocale.resolve(locale, template: template)
      options.locale = locale
    }
    let platform = try arguments.choice("platform", Platform.allCases.map(\.rawValue)).flatMap {
      Platform(rawValue: $0)
    }
    let output = arguments.value("output")
    let folder = arguments.value("output-dir")
    var format = try arguments.choice("format", Format.allCases.map(\.rawValue)).flatMap {
      Format(rawValue: $0)
    }
    if format == nil, let output {
      let ext = (output as NSString).pathExtension.lowercased()
      guard let inferred = Format(rawValue: ext), inferred != .share else {
        throw UsageError(
          message: "cannot tell the format of '\(output)'; use .pdf or .png, or --format")
      }
      format = inferred
    }
    let chosen = format ?? .pdf
    if chosen == .png && options.cropMarks {
      throw UsageError(message: "--crop-marks applies to PDF output")
    }
    let jobs: [Job]
    if profiles.count > 1, let output, folder == nil {
      guard chosen == .pdf else {
        throw UsageError(message: "several profiles go into one PDF, or into --output-dir")
      }
      return try await combinedPDF(
        profiles: profiles, output: output, template: template, options: options,
        platform: platform, arguments: arguments, console: console)
    } else if profiles.count == 1, let output, folder == nil {
      jobs = [
        Job(
          profilePath: profiles[0], output: output, photo: arguments.value("photo"),
          follow: arguments.value("follow-counts"))
      ]
    } else if let folder, output == nil {
      if profiles.count > 1
        && (arguments.value("photo") != nil || arguments.value("follow-counts") != nil)
      {
        throw UsageError(
          message: "--photo and --follow-counts apply to a single profile; use --photo-cache")
      }
      try FileIO.makeFolder(folder)
      let ext = chosen == .pdf ? "pdf" : "png"
      var claimed: [String: String] = [:]
      jobs = profiles.map { path in
        let base = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        var job = Job(
          profilePath: path, output: "\(folder)/\(base).\(ext)", photo: arguments.value("photo"),
          follow: arguments.value("follow-counts"))
        if let first = claimed[job.output] {
          job.collision = .outputCollision(path: job.output, first: first, second: path)
        } else {
          claimed[job.output] = path
        }
        return job
      }
    } else {
      throw UsageError(message: "give -o <file> for one profile, or --output-dir <dir>")
    }
    let context = try Context(
      template: template, options: options, format: chosen, platform: platform,
      arguments: arguments, inputs: profiles)
    let parallel = try arguments.int("jobs", in: 1...256) ?? activeProcessorCount
    var reports: [Int: Report] = [:]
    var iterator = jobs.enumerated().makeIterator()
    await forEachConcurrently(
      inputs: { iterator.next() }, jobs: parallel,
      work: { (index, job) in (index, await context.render(job)) },
      collect: { reports[$0.0] = $0.1 })
    return finish(
      (0..<jobs.count).compactMap { reports[$0] }, single: jobs.count == 1,
      arguments: arguments, console: console)
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
      } else if !arguments.flag("quiet") {
        for warning in report.warnings { console.warn(warning) }
      }
    }
    if arguments.flag("json") {
      struct Document: Codable {
        var schemaVersion = 1
        var cards: [Report]
      }
      console.stdout.write(JSONOutput.pretty(Document(cards: ordered)))
    }
    return failed > 0 ? ImprintCLI.failure : ImprintCLI.success
  }

  /// Several profiles into one PDF (a card printer's job: front, back, front, back, ...).
  ///
  /// Cards are laid out in parallel and drawn in order into a file written as it grows, so
  /// memory stays flat; a profile that fails is reported and left out, the others are printed.
  static func combinedPDF(
    profiles: [String], output: String, template: CardTemplate, options: CardOptions,
    platform: Platform?, arguments: ParsedArguments, console: Console
  ) async throws -> Int32 {
    let context = try Context(
      template: template, options: options, format: .pdf, platform: platform,
      arguments: arguments, inputs: profiles)
    try ConfinedPath.checkNotInput(output, inputs: context.inputs)
    let temporary = try AtomicFile.temporaryPath(for: output)
    var writer = try CardPDFWriter(
      template: template, options: options, title: (output as NSString).lastPathComponent,
      path: temporary)
    var reports: [Report] = []
    var pending: [Int: (Report, PreparedCard?)] = [:]
    var next = 0
    var drawError: (any Error)?
    var iterator = profiles.enumerated().makeIterator()
    let parallel = try arguments.int("jobs", in: 1...256) ?? activeProcessorCount
    await forEachConcurrently(
      inputs: { iterator.next() }, jobs: parallel,
      work: { (index, path) in
        (
          index,
          await context.prepare(Job(profilePath: path, output: output, photo: nil, follow: nil))
        )
      },
      collect: { (index, result) in
        pending[index] = result
        while let (report, card) = pending.removeValue(forKey: next) {
          var report = report
          if let card, drawError == nil {
            do {
              try writer.add(card)
              report.outputs = [output]
            } catch {
              drawError = error
            }
          }
          reports.append(report)
          next += 1
        }
      })
    /// A write error names the file the person asked for, not its temporary.
    func failed(_ error: any Error) -> any Error {
      AtomicFile.discard(temporary)
      if case .unwritable(let path, let reason)? = error as? FileError, path == temporary {
        return FileError.unwritable(path: output, reason: reason)
      }
      return error
    }
    if let drawError { throw failed(drawError) }
    let cards = reports.filter { $0.error == nil }.count
    if cards == 0 {
      AtomicFile.discard(temporary)
    } else {
      do {
        _ = try writer.finish()
      } catch {
        throw failed(error)
      }
      try AtomicFile.commit(temporary, to: output)
    }
    if !arguments.flag("quiet") {
      console.stderr.write(
        "card: \(cards) of \(profiles.count) cards written to \(SafeText.escaped(output))\n")
    }
    return finish(reports, single: false, arguments: arguments, console: console)
  }

  /// What every card of one run shares.
  struct Context: Sendable {
    let template: CardTemplate
    let options: CardOptions
    let format: Format
    let platform: Platform?
    /// The profile, photo and follow counts of each card, read and decoded.
    let loader: CardInputLoader
    /// Every file the run reads by name (profiles, photo, follow counts, template): no output
    /// may replace one.
    let inputs: [String]

    init(
      template: CardTemplate, options: CardOptions, format: Format, platform: Platform?,
      arguments: ParsedArguments, inputs profiles: [String]
    ) throws {
      self.template = template
      self.options = options
      self.format = format
      self.platform = platform
      loader = CardInputLoader(
        placeholder: try DeploymentResources.placeholder(),
        photos: PhotoOptions(
          cache: arguments.value("photo-cache").map { PhotoCache(folder: $0) },
          fetch: arguments.flag("fetch-photo"),
          allowPrivateNetwork: arguments.flag("allow-private-network")))
      inputs =
        profiles + template.assetPaths
        + [arguments.value("photo"), arguments.value("follow-counts"), arguments.value("template")]
        .compactMap { $0 }
    }

    /// Reads the profile and photo of a job and decodes them (`CardInputLoader.load`).
    func input(_ job: Job) async throws -> LoadedCardInput {
      try await loader.load(
        CardRequest(
          profile: job.profilePath, photo: job.photo, followCounts: job.follow,
          platform: platform),
        template: template)
    }

    /// Lays out one card of a combined PDF.
    func prepare(_ job: Job) async -> (Report, PreparedCard?) {
      var report = Report(profile: job.profilePath, status: .ok)
      do {
        let loaded = try await input(job)
        report.account = loaded.input.profile.account
        let card = try CardMaker.prepare(loaded.input, options: options)
        report.warnings = loaded.warnings + card.warnings
        return (report, card)
      } catch {
        report.status = .failed
        report.error = ErrorRecord(error)
        return (report, nil)
      }
    }

    func render(_ job: Job) async -> Report {
      var report = Report(profile: job.profilePath, status: .ok)
      do {
        if let collision = job.collision { throw collision }
        let loaded = try await input(job)
        let input = loaded.input
        report.account = input.profile.account
        let inputs = inputs + [loaded.photo.file].compactMap { $0 }
        func write(_ bytes: [UInt8], to path: String) throws {
          try ConfinedPath.checkNotInput(path, inputs: inputs)
          try AtomicFile.write(bytes, to: path)
        }
        defer { report.warnings = loaded.warnings + report.warnings }
        switch format {
        case .pdf:
          let card = try CardMaker.pdf(input, options: options)
          try write(card.bytes, to: job.output)
          report.outputs = [job.output]
          report.warnings = card.warnings
        case .share:
          let card = try CardMaker.share(input, options: options)
          try write(card.bytes, to: job.output)
          report.outputs = [job.output]
          report.warnings = card.warnings
        case .png:
          let base = (job.output as NSString).deletingPathExtension
          var rendered: [(String, RenderedCard)] = []
          for face in options.faces {
            let path = options.faces.count == 1 ? job.output : "\(base)-\(face.rawValue).png"
            rendered.append((path, try CardMaker.png(input, face: face, options: options)))
          }
          // Written only when every side rendered, so a failure leaves no file; a side that
          // cannot be written (a full disk) takes the sides written before it away again.
          do {
            for (path, card) in rendered {
              try write(card.bytes, to: path)
              report.outputs.append(path)
            }
          } catch {
            for path in report.outputs { unlink(path) }
            report.outputs = []
            throw error
          }
          report.warnings = rendered.first?.1.warnings ?? []
        }
      } catch {
        report.status = .failed
        report.error = ErrorRecord(error)
      }
      return report
    }

  }
}

enum TemplatesCommand {
  static let list = CommandSpec(
    name: "list", abstract: "List the shipped card designs.",
    options: [
      .value(
        "templates", "<dir>", "Folder of designs (default: IMPRINT_TEMPLATES, else Imprint's own)."),
      .flag("json", "Print the list as JSON."),
    ]
  ) { arguments, console in
    let folder = try ResourceLocator.checkedTemplatesDirectory(
      explicit: arguments.value("templates"))
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
    if arguments.flag("json") {
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
