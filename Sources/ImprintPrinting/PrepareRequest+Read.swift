// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: the options of preparing (and printing) an order declared once, and read
// once from any surface (`imprint prepare`'s arguments, `POST /v1/prepare`'s query, a batch
// print item's fields): the same names, kinds, ranges and help everywhere, each surface
// refusing a bad value in its own words.

import ImprintCore

extension PrepareOption {
  /// The option's names: `--preview-size` on the command line, `previewSize` in a request and
  /// a manifest line.
  public var names: OptionName { OptionName(key: rawValue) }

  /// The option as the table declares it: its names, what it holds, the command line's
  /// placeholder and help.
  public var entry: OptionEntry {
    switch self {
    case .printer:
      OptionEntry(
        names, .text, placeholder: "<uri|queue>",
        help: "Send each prepared file to this IPP printer (ipp://, ipps://) or CUPS queue.")
    case .monoPrinter:
      OptionEntry(
        names, .text, placeholder: "<uri|queue>",
        help: "With --printer: send the monochrome files to this printer or queue instead.")
    case .passwordFile:
      OptionEntry(
        names, .file, placeholder: "<file>",
        help: "With --printer: the user:password line for printers that ask (mode 600).")
    case .splitColor:
      OptionEntry(
        names, .flag,
        help: "Split each auto colour file into its colour and monochrome sheets, a file each.")
    case .previews:
      OptionEntry(
        names, .flag,
        help: "Draw each sheet side as a PNG (N-name.side-1.png, ...).")
    case .previewSize:
      OptionEntry(
        names, .integer(OrderPreparer.previewSizes),
        placeholder: "<px>", unit: "pixels",
        help: "The box each preview fits, \(OrderPreparer.previewSizes.lowerBound) to "
          + "\(OrderPreparer.previewSizes.upperBound) pixels (default "
          + "\(OrderPreparer.defaultPreviewSize)); with --previews.")
    case .wait:
      OptionEntry(
        names, .flag,
        help: "With --printer, wait for each job to end and report how it ended.")
    case .waitTimeout:
      OptionEntry(
        names, .number(PrintTarget.waitSecondsRange),
        placeholder: "<s>", unit: "seconds",
        help: "With --wait: how long to wait for all the jobs, in seconds (default "
          + "\(Formatting.number(PrintTarget.defaultWaitSeconds))).")
    }
  }

  /// What `POST /v1/prepare` reads: the printer is a name of the server's configuration,
  /// which holds its monochrome printer and credentials.
  public static let request: [PrepareOption] = [
    .printer, .splitColor, .previews, .previewSize, .wait, .waitTimeout,
  ]
  /// What a batch's print item reads: the batch gives every item its credentials
  /// (`imprint batch --password-file`).
  public static let manifest = allCases.filter { $0 != .passwordFile }
}

extension PrepareRequest {
  /// The options of preparing and printing an order read from `source`, each by its
  /// `PrepareOption` name, kind and range, those of `offered` alone (what the surface takes);
  /// a surface that does not offer an option leaves it unread, and a request that gives it
  /// is refused as any unknown option is.
  ///
  /// Nothing is checked but each value's own kind and range: `conflict()` checks the rest,
  /// for each surface to word.
  ///
  /// - Returns: the request, and the printer, monochrome printer and credentials file given
  ///   (their text as given: a surface keeps its own meaning of a printer).
  /// - Throws: `source`'s error for an option it refuses.
  public static func read(
    from source: inout some OptionSource, offering offered: [PrepareOption] = PrepareOption.allCases
  ) throws -> (
    request: PrepareRequest, printer: String?, monoPrinter: String?, passwordFile: String?
  ) {
    // Read in this order on every surface: a manifest line's first wrong field is the one
    // reported.
    func text(_ option: PrepareOption) throws -> String? {
      offered.contains(option) ? try source.text(option.names) : nil
    }
    var request = PrepareRequest()
    let printer = try text(.printer)
    let monoPrinter = try text(.monoPrinter)
    let passwordFile = try text(.passwordFile)
    request.printer = printer != nil
    request.monoPrinter = monoPrinter != nil
    request.passwordFile = passwordFile != nil
    if offered.contains(.splitColor) {
      request.splitColor = try source.flag(PrepareOption.splitColor.names)
    }
    if offered.contains(.previews) {
      request.previews = try source.flag(PrepareOption.previews.names)
    }
    if offered.contains(.previewSize) {
      request.previewSize = try source.integer(
        PrepareOption.previewSize.names, in: OrderPreparer.previewSizes)
    }
    if offered.contains(.wait) { request.wait = try source.toggle(PrepareOption.wait.names) }
    if offered.contains(.waitTimeout) {
      request.waitTimeout = try source.number(
        PrepareOption.waitTimeout.names, in: PrintTarget.waitSecondsRange)
    }
    return (request, printer, monoPrinter, passwordFile)
  }
}
