// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: the `imprint` command's entry point: dispatch, help, usage errors and exit codes.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintGraphics
import ImprintQR

/// The `imprint` command-line interface, callable in-process (tests, embedding) or from `main`.
public enum ImprintCLI {
  /// Imprint's version (`ImprintVersion.current`).
  public static let version = ImprintVersion.current

  /// Exit code: success.
  public static let success: Int32 = 0
  /// Exit code: the input was understood but the work failed.
  public static let failure: Int32 = 1
  /// Exit code: the command line was wrong.
  public static let usage: Int32 = 2
  /// Exit code of `imprint serve`: the stop left work stuck past `--drain-timeout` and its
  /// margin, and the process ended without it (`service.stopIncomplete`).
  public static let stopIncomplete: Int32 = 3

  static let commands: [CommandSpec] = [
    QRCommand.spec, CardCommand.spec, TemplatesCommand.spec, DocumentCommands.inspect,
    DocumentCommands.thumb, ConvertCommand.spec, QuoteCommand.spec, PrepareCommand.spec,
    BatchCommand.spec,
    ServeCommand.spec, DemoCommand.spec, ManpagesCommand.spec, CompletionCommand.spec,
  ]

  /// `imprint --version`.
  static let versionFlag = OptionKey.flag("version", "Show the version.")

  /// The root command: its help lists the commands.
  static let root = CommandSpec(
    name: "imprint",
    abstract: "The rendering core of print-shop software: ID cards, QR codes, documents, quotes.",
    options: [versionFlag],
    subcommands: commands + [helpSpec]
  ) { _, _ in success }

  /// `imprint help --markdown`.
  static let markdownFlag = OptionKey.flag(
    "markdown", "Print the reference of the command (all commands when none is named) as Markdown.")

  static let helpSpec = CommandSpec(
    name: "help", abstract: "Show help for a command.",
    arguments: [
      ArgumentSpec(
        "command", "The command to describe.", optional: true, variadic: true,
        kind: .choice(commands.map(\.name)))
    ],
    options: [markdownFlag]
  ) { arguments, console in
    let (spec, path, _) = resolve(arguments.positionals)
    if path.count < arguments.positionals.count {
      let unknown = arguments.positionals[path.count]
      throw UsageError(message: unknownCommandMessage(unknown, in: spec))
    }
    if arguments.flag(markdownFlag) {
      console.stdout.write(spec.markdownReference(path: path, version: version))
    } else {
      console.stdout.write(spec.helpText(path: path))
    }
    return success
  }

  /// Forks the document workers `imprint inspect`, `thumb` and `quote` will use, while the
  /// process still has one thread (call it first thing in `main`).
  ///
  /// A forked worker is ready in about a millisecond, an executed one after loading the
  /// executable again (some 25 ms, which was a third of counting the pages of a dozen files).
  /// One per file up to `--jobs`, with `--memory-limit`; nothing for other commands or for
  /// arguments that do not parse.
  public static func prestartWorkers() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    let specs = [
      "inspect": DocumentCommands.inspect, "thumb": DocumentCommands.thumb,
      "quote": QuoteCommand.spec, "prepare": PrepareCommand.spec, "card": CardCommand.spec,
    ]
    guard let command = arguments.first, let spec = specs[command],
      let parsed = try? spec.parse(Array(arguments.dropFirst()), path: [command])
    else { return }
    // The same option reads the same in each of these commands; a command without it (card has
    // no --memory-limit, only card has photos) takes the default.
    func int(_ keys: OptionKey<Int>...) -> Int? {
      keys.lazy.filter { parsed.declares($0) }.compactMap { try? parsed.int($0) }.first
    }
    let jobs =
      int(DocumentCommands.Key.jobs, CardCommand.Key.jobs) ?? DocumentSandbox.defaultWorkers
    let memory = int(DocumentCommands.Key.memoryLimit) ?? SandboxLimits().memoryMB
    // inspect and thumb name their files; a quote's and a prepare's are in its order, one
    // worker each; cards use workers for their photos, one a profile, none without a photo
    // option.
    let photos =
      parsed.declares(CardCommand.Key.photo)
      && (parsed.isGiven(CardCommand.Key.photo) || parsed.isGiven(CardCommand.Key.photoCache)
        || parsed.flag(CardCommand.Key.fetchPhoto))
    let files =
      switch command {
      case "quote", "prepare": jobs
      case "card": photos ? parsed.positionals.count : 0
      default: parsed.positionals.count
      }
    PrestartedWorkers.start(
      count: min(jobs, files), memoryMB: memory, documents: command != "card")
  }

  /// Process-wide tuning for the `imprint` executable (malloc thresholds, the font
  /// configuration); backends that embed the library keep their own settings.
  public static func configureProcess() {
    // A file-size limit (RLIMIT_FSIZE) would end the process with SIGXFSZ in the middle of a
    // write; ignored, the write fails with EFBIG like on a full disk, and the command reports
    // it and removes its temporary file.
    signal(SIGXFSZ, SIG_IGN)
    // (Document workers never get here: `DocumentWorker.runIfWorker()` comes first in main and
    // keeps glibc's defaults, better for parsing PDFs.)
    ProcessTuning.keepLargeBuffersInHeap()
    FontLibrary.becomeCurrentWhenLoaded()
  }

  /// Runs `imprint` with `arguments` (without the program name).
  ///
  /// - Returns: the exit code: 0 success, 1 failure, 2 usage error.
  public static func run(_ arguments: [String], console: Console) async -> Int32 {
    // Each command that reads documents stops its own sandbox's idle workers as it ends, never
    // another's: a server or backend calling this in its own process keeps its workers. Workers
    // forked at start-up that no command took are the executable's (`imprint`'s main stops them).
    let code = await dispatch(arguments, console: console)
    if console.environment["IMPRINT_DEBUG_HANDLES"] != nil {
      // Debug builds count every C handle; the leak test runs a command and expects zero.
      console.stderr.write("live handles: \(LiveHandles.count())\n")
    }
    return code
  }

  private static func dispatch(_ arguments: [String], console: Console) async -> Int32 {
    if arguments.first == "--version" {
      console.stdout.write("imprint \(version)\n")
      return success
    }
    if arguments.isEmpty || arguments.first == "--help" || arguments.first == "-h" {
      console.stdout.write(root.helpText(path: []))
      return arguments.isEmpty ? usage : success
    }
    let (spec, path, rest) = resolve(arguments)
    if path.isEmpty {
      console.stderr.write("error: \(unknownCommandMessage(arguments[0], in: root))\n")
      console.stderr.write("usage: imprint <command> [<options>]\n")
      console.stderr.write("  See 'imprint --help' for more information.\n")
      return usage
    }
    // --verbose: errors carry their causes (in JSON records and on stderr).
    var verbose = false
    do {
      let parsed: ParsedArguments
      do {
        parsed = try spec.parse(rest, path: path)
      }
      verbose = parsed.flag(CommandSpec.verbose)
      if parsed.flag(CommandSpec.help) {
        console.stdout.write(spec.helpText(path: path))
        return success
      }
      if !spec.subcommands.isEmpty && spec.arguments.isEmpty {
        if let word = parsed.positionals.first {
          throw UsageError(message: unknownCommandMessage(word, in: spec))
        }
        throw UsageError(message: "missing subcommand")
      }
      return try await ErrorRecord.$includesCauses.withValue(verbose) {
        try await spec.run(parsed, console)
      }
    } catch let error as UsageError {
      printUsageError(error.message, spec: spec, path: path, console: console)
      return usage
    } catch let error as QRError where error.isMalformedOption {
      // A value given on the command line that is not acceptable: a usage error (exit 2).
      printUsageError(error.message, spec: spec, path: path, console: console)
      return usage
    } catch {
      ErrorRecord.$includesCauses.withValue(verbose) { console.report(error) }
      return failure
    }
  }

  private static func printUsageError(
    _ message: String, spec: CommandSpec, path: [String], console: Console
  ) {
    console.stderr.write("error: \(message)\n")
    console.stderr.write("usage: \(spec.usageLine(path: path))\n")
    console.stderr.write(
      "  See 'imprint \((path + ["--help"]).joined(separator: " "))' for more information.\n")
  }

  /// Follows command words as deep as they go; returns the spec, its path and the other words.
  static func resolve(_ words: [String]) -> (CommandSpec, [String], [String]) {
    var spec = root
    var path: [String] = []
    var index = 0
    while index < words.count, let next = spec.subcommands.first(where: { $0.name == words[index] })
    {
      spec = next
      path.append(next.name)
      index += 1
    }
    return (spec, path, Array(words[index...]))
  }

  static func unknownCommandMessage(_ word: String, in spec: CommandSpec) -> String {
    var message = "unknown command '\(word)'"
    if let suggestion = closest(to: word, in: spec.subcommands.map(\.name)) {
      message += ". Did you mean '\(suggestion)'?"
    }
    return message
  }
}
