// SPDX-License-Identifier: Apache-2.0
// ImprintDocuments: a thumbnail's options read once, from any surface (`imprint thumb`'s
// arguments, `POST /v1/thumb`'s query): the same names, ranges and defaults everywhere, each
// surface refusing a bad value in its own words.

import ImprintCore

/// An option of a thumbnail, as every surface reads it (`ThumbnailOptions.read`).
public enum ThumbnailOption: String, Sendable, CaseIterable {
  case size, format

  /// The option's names: the same on the command line and in a request.
  public var names: OptionName { OptionName(flag: rawValue, key: rawValue) }

  /// `size`: the square box a thumbnail fits, in pixels.
  public static let sizeRange = 16...2048
}

/// How a thumbnail is drawn: the box it fits and its file format.
public struct ThumbnailOptions: Sendable, Equatable {
  /// The side of the square box the page fits, in pixels (its longer side).
  public var size = 256
  /// The file format.
  public var format = ThumbnailFormat.png

  /// The defaults: 256 px, PNG (what a batch's thumb items and `imprint thumb` without options
  /// make).
  public init(size: Int = 256, format: ThumbnailFormat = .png) {
    self.size = size
    self.format = format
  }

  /// A thumbnail's options read from `source`, each by its `ThumbnailOption` name, kind and
  /// range; the defaults for those not given.
  ///
  /// - Throws: `source`'s error for an option it refuses.
  public static func read(from source: inout some OptionSource) throws -> ThumbnailOptions {
    var options = ThumbnailOptions()
    options.size =
      try source.integer(ThumbnailOption.size.names, in: ThumbnailOption.sizeRange) ?? options.size
    let formats = ThumbnailFormat.allCases.map(\.rawValue)
    options.format =
      try source.choice(ThumbnailOption.format.names, formats).flatMap(ThumbnailFormat.init)
      ?? options.format
    return options
  }
}
