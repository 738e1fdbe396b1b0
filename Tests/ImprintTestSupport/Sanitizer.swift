// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: what changes when the suite runs under a sanitizer (scripts/sanitize).

import Foundation

/// The sanitizer the code under test was built with, as `scripts/sanitize` announces it
/// (`IMPRINT_SANITIZER=address|thread`); nil for a normal build.
///
/// A sanitizer changes three things the suite measures, and only those: peak memory (ASan's
/// quarantine keeps up to 256 MB of freed blocks and its shadow adds an eighth of all memory;
/// TSan's shadow is several times the program's), speed (instrumented code runs 2-15× slower),
/// and TSan's start-up, which writes a 512 KiB file and dies of SIGBUS under a smaller
/// RLIMIT_FSIZE (scripts/sanitizers/FsizeProbe.c). Every other assertion holds as it is.
public enum Sanitizer: String, Sendable {
  case address, thread

  /// The sanitizer of this run.
  public static let current: Sanitizer? = ProcessInfo.processInfo.environment["IMPRINT_SANITIZER"]
    .flatMap(Sanitizer.init(rawValue:))

  /// A hang guard's seconds, ten times longer for instrumented code.
  public static func seconds(_ seconds: Double) -> Double {
    current == nil ? seconds : seconds * 10
  }

  /// A hang guard's whole seconds, ten times longer for instrumented code.
  public static func seconds(_ seconds: Int) -> Int {
    current == nil ? seconds : seconds * 10
  }

  /// Whether a program can start under `prlimit --fsize` below 512 KiB (not under TSan).
  public static var startsUnderSmallFileSizeLimit: Bool { current != .thread }

  /// The reason the full-disk tests (RLIMIT_FSIZE below 512 KiB) do not run under TSan.
  public static let smallFileSizeLimitReason =
    "under TSan the runtime itself dies of SIGBUS at start-up below 512 KiB of RLIMIT_FSIZE"

  /// Whether a peak-memory bound measures Imprint: only without a sanitizer.
  ///
  /// Under a sanitizer it would measure the sanitizer's allocator and shadow; the run's other
  /// assertions still hold.
  public static var measuresMemory: Bool { current == nil }
}
