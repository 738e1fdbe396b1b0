// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: the options of preparing (and printing) an order as each surface takes
// them (`imprint prepare`'s flags, `/v1/prepare`'s query, a batch print job's fields), and the
// combinations they refuse: one rule for every surface, each naming the option in its own words.

/// An option of preparing and printing an order, as every surface reads it
/// (`PrepareRequest.read`); some need another one given (`PrepareConflict`).
public enum PrepareOption: String, Sendable, CaseIterable {
  case printer, monoPrinter, passwordFile, splitColor, previews, previewSize, wait, waitTimeout
}

/// A combination of prepare options that cannot be honoured: an option that would be ignored
/// without the one it needs.
public enum PrepareConflict: Sendable, Equatable {
  /// A preview size without previews.
  case previewSizeWithoutPreviews
  /// A monochrome printer without the printer (the colour one).
  case monoPrinterWithoutPrinter
  /// Waiting for the printer's jobs without a printer.
  case waitWithoutPrinter
  /// A time to wait without waiting.
  case waitTimeoutWithoutWait
  /// A printer's credentials without a printer.
  case passwordFileWithoutPrinter

  /// The option given.
  public var option: PrepareOption {
    switch self {
    case .previewSizeWithoutPreviews: .previewSize
    case .monoPrinterWithoutPrinter: .monoPrinter
    case .waitWithoutPrinter: .wait
    case .waitTimeoutWithoutWait: .waitTimeout
    case .passwordFileWithoutPrinter: .passwordFile
    }
  }
}

/// The options of preparing and printing an order as they are given, before their defaults:
/// what `imprint prepare`, `POST /v1/prepare` and a batch print job read, checked by one rule
/// (`conflict()`) and turned into `PrepareOptions` and a wait.
public struct PrepareRequest: Sendable, Equatable, Codable {
  /// Whether auto colour files are split (`PrepareOptions.splitColor`).
  public var splitColor = false
  /// Whether each sheet side is drawn as a preview.
  public var previews = false
  /// The previews' box in pixels (in `OrderPreparer.previewSizes`), if given.
  public var previewSize: Int?
  /// Whether a printer is given (files are sent to it).
  public var printer = false
  /// Whether a printer for the monochrome files is given.
  public var monoPrinter = false
  /// Whether the printer's credentials are given.
  public var passwordFile = false
  /// Whether the printer's jobs are followed to their end (nil: not said, for a batch job that
  /// takes the batch's own).
  public var wait: Bool?
  /// How long to wait for them, in seconds (in `PrintTarget.waitSecondsRange`), if given.
  public var waitTimeout: Double?

  /// Nothing asked: whole files, no previews, no printer.
  public init() {}

  /// The first combination these options refuse, or nil; checked after each value's own
  /// range.
  public func conflict() -> PrepareConflict? {
    if previewSize != nil && !previews { return .previewSizeWithoutPreviews }
    if monoPrinter && !printer { return .monoPrinterWithoutPrinter }
    if wait == true && !printer { return .waitWithoutPrinter }
    // A timeout alone would be ignored: the jobs are followed only when waiting.
    if waitTimeout != nil && wait != true { return .waitTimeoutWithoutWait }
    if passwordFile && !printer { return .passwordFileWithoutPrinter }
    return nil
  }

  /// The options `OrderPreparer` takes: previews at `previewSize`, else
  /// `OrderPreparer.defaultPreviewSize`, when asked for.
  public var options: PrepareOptions {
    PrepareOptions(
      splitColor: splitColor,
      previewSize: previews ? previewSize ?? OrderPreparer.defaultPreviewSize : nil)
  }

  /// The seconds to wait for the printer's jobs when waiting (`waitTimeout`, else
  /// `PrintTarget.defaultWaitSeconds`), else nil.
  public var waitSeconds: Double? {
    wait == true ? waitTimeout ?? PrintTarget.defaultWaitSeconds : nil
  }
}
