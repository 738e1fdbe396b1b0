// SPDX-License-Identifier: Apache-2.0
// ImprintGraphics: malloc settings for processes that render many cards.

internal import CImprintShims

/// Process-wide settings for command-line use (never called by the library itself; document
/// workers have their own, see `DocumentWorker`).
public enum ProcessTuning {
  /// Keeps buffers of up to 64 MB in the heap for reuse instead of a fresh mmap (page faults and
  /// zeroing) each time: photos and pages are a few hundred kilobytes, made and freed per card.
  public static func keepLargeBuffersInHeap() {
    CImprintShims_tune_malloc(64 << 20, 128 << 20)
  }
}
