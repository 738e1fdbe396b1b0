// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint prepare`: an order's files as print-ready PDFs with job tickets.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintPrinting

enum PrepareCommand {
  /// The options of `imprint prepare` beside those it shares with `imprint quote`.
  enum Key {
    static let output = OptionKey.directory(
      "output", short: "o", "<dir>", "The folder for the PDFs and tickets (created).")
    // How an order is prepared and printed is the library's table (`PrepareOption`), as the
    // service and manifests read it.
    static let splitColor = OptionKey<Bool>(PrepareOption.splitColor.entry)
    static let previews = OptionKey<Bool>(PrepareOption.previews.entry)
    static let previewSize = OptionKey<Int>(PrepareOption.previewSize.entry)
    static let printer = OptionKey<String>(PrepareOption.printer.entry)
    static let monoPrinter = OptionKey<String>(PrepareOption.monoPrinter.entry)
    static let passwordFile = OptionKey<String>(PrepareOption.passwordFile.entry)
    static let wait = OptionKey<Bool>(PrepareOption.wait.entry)
    static let waitTimeout = OptionKey<Double>(PrepareOption.waitTimeout.entry)
    static let json = OptionKey.flag(
      "json", "Print the quote, the prepared files and their tickets (and jobs) as JSON.")
  }

  static let spec = CommandSpec(
    name: "prepare",
    abstract: "Make each file of an order a print-ready PDF with its job ticket, as quoted.",
    discussion: """
      The order is quoted first, exactly as 'imprint quote' does (same order, price list, \
      files root and limits). Then each PDF becomes DIR/N-name.pdf: the selected pages, \
      n-up in reading order (2 and 6 on landscape sheets; a page whose orientation differs \
      from its cell is turned a quarter counter-clockwise, as CUPS does), scaled to fit the \
      paper, centred, never cropped, with a blank back after a duplex job's odd last sheet. \
      Pages are carried over losslessly (their own content, fonts and images, placed by \
      libqpdf in sandboxed workers). DIR/N-name.ticket.json holds the IPP attributes (copies, \
      sides, media, print-color-mode, finishings) and the quote's line; the file's pages are \
      the quote's impressions plus its blank back, checked before anything is written. All \
      files are written or none. An image (JPEG, PNG, HEIF, WebP, TIFF, GIF) is placed the \
      same way, each page at its own size and resolution, upright; an upright JPEG is embedded \
      as it is. \
      With --split-color, an auto colour file with both colour and monochrome sheets becomes \
      two: DIR/N-name.color.pdf with the sheets that have a colour side (a side is colour when \
      any page on it is, as the quote counts; a duplex sheet goes whole) and \
      DIR/N-name.mono.pdf with the rest, each with its ticket; their impressions add up to \
      the quote's. \
      With --previews, each file's sheet sides are drawn as they will print, one PNG a side \
      (DIR/N-name.side-1.png, ...), fitting a --preview-size box (default 400 px), in the \
      sandboxed workers. \
      With --printer, each file is then sent to that printer with its ticket's attributes, \
      and its job id is reported: an IPP URI (ipp://host:port/ipp/print) straight to the \
      device, or a CUPS queue name through the CUPS scheduler libcups is configured for \
      (CUPS_SERVER, client.conf, the local socket; 'lpstat -e' lists its queues); with \
      --mono-printer as well, files whose print-color-mode is monochrome go to that printer \
      instead. A printer or scheduler that asks for credentials gets the user and password of \
      --password-file FILE (one line user:password; the file must not be readable by its \
      group or others), and is print.unauthorized without them; nothing ever prompts. With --wait, each job is followed until the printer has ended \
      it: completed, or aborted or canceled with the printer's reasons (exit 1), or still \
      going after --wait-timeout seconds (print.timeout, exit 1).
      """,
    arguments: [ArgumentSpec("order", "The order (JSON).", kind: .file)],
    options: [
      QuoteCommand.Key.prices, Key.output, QuoteCommand.Key.filesRoot, Key.splitColor,
      Key.previews, Key.previewSize, Key.printer, Key.monoPrinter, Key.passwordFile, Key.wait,
      Key.waitTimeout, Key.json,
    ] + QuoteCommand.limitOptions
  ) { arguments, console in
    // The library reads the options by their names (`QuoteOption`, `PrepareOption`), as the
    // service and manifests.
    var source = ArgumentSource(arguments)
    let quoting = try QuoteRequest.read(from: &source, offering: [.prices, .filesRoot])
    guard let pricesPath = quoting.prices else {
      throw UsageError(message: "missing --prices <file>")
    }
    guard let folder = arguments.value(Key.output) else {
      throw UsageError(message: "missing -o <dir>")
    }
    let (request, printer, monoPrinter, passwordFile) = try PrepareRequest.read(from: &source)
    // The library's rule, worded as flags (the service and manifests word it as their keys).
    if let conflict = request.conflict() { throw usageError(conflict) }
    let credentials = try passwordFile.map { try PrintCredentials(file: $0) }
    let jobs = try arguments.int(DocumentCommands.Key.jobs) ?? activeProcessorCount
    let sandbox = try DocumentCommands.sandbox(arguments, console, jobs: jobs)
    defer { sandbox.stopIdleWorkers() }
    let target = printer.map { printer in
      var target = PrintTarget(printer: printer, monoPrinter: monoPrinter)
      target.waitSeconds = request.waitSeconds
      target.access.credentials = credentials
      return target
    }
    let printed = try await OrderPrinter(
      preparer: OrderPreparer(quoter: OrderQuoter(sandbox: sandbox, jobs: jobs))
    ).run(
      order: arguments.positionals[0], prices: pricesPath, filesRoot: quoting.filesRoot,
      output: folder, options: request.options, target: target)
    if arguments.flag(Key.json) {
      console.stdout.write(JSONOutput.pretty(printed))
    } else {
      for file in printed.files {
        let ticket = file.ticket
        let blank = ticket.blankBacks > 0 ? " + \(ticket.blankBacks) blank back" : ""
        let part =
          ticket.split.map { split in
            ", \(split.part) part: sheets \(split.sheets)"
              + (split.share.map {
                ", \($0.subtotal.formatted) of \(ticket.quote.subtotal.formatted)"
              }
                ?? "")
          } ?? ""
        let previews = file.previews.map {
          ", \($0.count) preview\($0.count == 1 ? "" : "s")"
            + ($0.first.map { " (\(SafeText.escaped($0)), ...)" } ?? "")
        }
        console.stdout.write(
          "\(SafeText.escaped(file.document)): \(ticket.impressions) impression"
            + "\(ticket.impressions == 1 ? "" : "s")\(blank), \(ticket.ipp.copies) "
            + "cop\(ticket.ipp.copies == 1 ? "y" : "ies"), \(ticket.ipp.sides), "
            + "\(ticket.ipp.media), \(ticket.ipp.printColorMode)\(part)\(previews ?? "")\n")
      }
      for job in printed.jobs ?? [] {
        var ended = ""
        if let state = job.state {
          let why = ((job.stateReasons ?? []) + (job.stateMessage.map { [$0] } ?? []))
            .joined(separator: ": ")
          ended = ": \(state)" + (why.isEmpty ? "" : " (\(SafeText.escaped(why)))")
        }
        console.stdout.write(
          "\(SafeText.escaped(job.document)): job \(job.jobID) on "
            + "\(SafeText.escaped(job.printer))\(ended)\n")
      }
    }
    if let failure = printed.failure {
      console.report(failure)
      return ImprintCLI.failure
    }
    return ImprintCLI.success
  }

  /// The usage error for a combination of flags the library refuses (`PrepareRequest.conflict`).
  static func usageError(_ conflict: PrepareConflict) -> UsageError {
    switch conflict {
    case .previewSizeWithoutPreviews:
      UsageError(message: "--preview-size needs --previews")
    case .monoPrinterWithoutPrinter:
      UsageError(message: "--mono-printer needs --printer <uri|queue> (the colour printer)")
    case .waitWithoutPrinter:
      UsageError(message: "--wait needs --printer <uri|queue>")
    case .waitTimeoutWithoutWait:
      UsageError(message: "--wait-timeout needs --wait")
    case .passwordFileWithoutPrinter:
      UsageError(message: "--password-file needs --printer <uri|queue>")
    }
  }
}
