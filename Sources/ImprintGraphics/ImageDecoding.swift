// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: where an image from a stranger is decoded (the sandbox's workers), named by
// the one thing card inputs need of it.

/// Decodes an image file into an upright bitmap, as `ImageDecoder.decode(_:source:)` does.
///
/// ImprintDocuments's `DocumentSandbox` decodes in its worker processes, under their memory,
/// CPU and time limits: the decoder for files from strangers (photos given, cached or
/// downloaded), whose header may lie about the size a decoder then allocates.
/// `InProcessImageDecoder` decodes in the calling process: for files the caller trusts.
public protocol ImageDecoding: Sendable {
  /// The upright bitmap of the image file `bytes` (`source` names it in errors).
  ///
  /// - Throws: `ImageError` for a file that is not a usable image; the decoder's own errors
  ///   otherwise (a sandbox's limits, for instance).
  func decodeImage(_ bytes: [UInt8], source: String) async throws -> Bitmap
}

/// Decodes in the calling process (`ImageDecoder.decode`): only for images the caller trusts
/// (its own templates' pictures, its placeholder), since a file that lies about its size makes
/// some decoders allocate what its stream holds before the lie is seen.
public struct InProcessImageDecoder: ImageDecoding {
  /// The in-process decoder.
  public init() {}

  public func decodeImage(_ bytes: [UInt8], source: String) async throws -> Bitmap {
    try ImageDecoder.decode(bytes, source: source)
  }
}
