// SPDX-License-Identifier: Apache-2.0
// ImprintPrinting: the owner of an IPP response (`ipp_t`).

internal import CCups
import ImprintCore
import ImprintGraphics

/// An IPP response from `cupsDoRequest`.
///
/// Owns it; freed with `ippDelete` when destroyed.
struct IPPResponse: ~Copyable {
  let raw: OpaquePointer
  private let handleScope: LiveHandles.Scope?

  /// Takes ownership of `raw` ("transfer full").
  init(owning raw: OpaquePointer) {
    self.raw = raw
    handleScope = LiveHandles.opened("ipp_t")
  }

  deinit {
    cups.ippDelete(raw)
    LiveHandles.closed("ipp_t", in: handleScope)
  }
}
