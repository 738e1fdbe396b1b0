// SPDX-License-Identifier: Apache-2.0
// ImprintService: how a service job ended when it did not end by itself: the `error` of its report.

import Foundation
import ImprintCore

/// Why a service job ended other than by its own work.
///
/// Canceled, past a limit, interrupted by the server's stop or lost with its process. Never an HTTP answer: a job's report (and its
/// results, for an item cut short) gives it.
public enum JobError: ImprintError, Equatable {
  /// Job `id` was canceled (`DELETE /v1/jobs/ID`) after `ended` of its items ended; never an
  /// answer, a job's report gives it.
  case canceled(id: String, ended: Int)
  /// Job `id` ran longer than the limit (`seconds`); never an answer.
  case timeLimit(id: String, seconds: Double, ended: Int)
  /// Job `id`'s files grew past what the jobs' disk limit leaves it (`bytes` of `limit`,
  /// `held` by the other jobs queued or running); never an answer.
  case diskLimit(id: String, bytes: Int, held: Int, limit: Int)
  /// Job `id` was canceled because the service stopped before it ended; never an answer.
  case interrupted(id: String, ended: Int)
  /// Item `item` of job `id` was cut short (its document's worker killed) when the job was
  /// stopped for `reason`; `code` is the job's (`service.canceled`, `.timeLimit`,
  /// `.diskLimit`, `.interrupted`). Never an answer: a job's results give it.
  case itemStopped(id: String, item: String, code: String, reason: String)
  /// Job `id` (`kind`) was still running when the server's stop ended (it had not ended within
  /// the drain timeout, `seconds`): recorded so, `failed`, before the process exits. `ended`: a
  /// batch's items that had ended; `sent` of `prepared`: a prepare job's documents the printer
  /// had accepted, of those it had prepared, and `sending` more it was sending. Never an answer.
  case leftRunning(
    id: String, kind: JobKind, seconds: Double, ended: Int, sent: Int, prepared: Int, sending: Int)
  /// Job `id` (`kind`) was `queued` or `running` (`was`) when the server's process ended
  /// without stopping it (killed, crashed, the machine went down), found so by the next start
  /// on the same jobs folder; `ended`: a batch's items that had ended. Never an answer.
  case lost(id: String, kind: JobKind, was: String, ended: Int)
  /// Job `id`'s record in the jobs database (`--jobs-db`) is not one this server reads
  /// (`reason`): written by a newer server, or damaged; it ends `failed`. Never an answer.
  case unreadable(id: String, reason: String)

  public var code: String {
    switch self {
    // A new job refused and a request cut short: either way, the server is stopping.
    case .canceled: "service.jobCanceled"
    case .timeLimit: "service.jobTimeLimit"
    case .diskLimit: "service.jobDiskLimit"
    case .interrupted, .lost, .leftRunning: "service.interrupted"
    case .itemStopped(_, _, let code, _): code
    case .unreadable: "service.jobUnreadable"
    }
  }

  /// 500: never an answer; one that reached a route would be the server's fault.
  public var status: Int {
    switch self {
    case .canceled, .timeLimit, .diskLimit, .interrupted, .itemStopped, .leftRunning, .lost,
      .unreadable:
      500
    }
  }

  public var message: String {
    switch self {
    case .canceled(let id, let ended):
      "job '\(id)' was canceled after \(ended) of its items ended; the lines after them were not run"
    case .timeLimit(let id, let seconds, let ended):
      "job '\(id)' ran longer than its limit of \(ServiceMetrics.number(seconds)) s and was "
        + "stopped after \(ended) of its items ended; the lines after them were not run"
    case .diskLimit(let id, let bytes, let held, let limit):
      "job '\(id)' was stopped: its files reached \(bytes) bytes and the other jobs queued or "
        + "running hold \(held); all jobs together may hold \(limit)"
    case .interrupted(let id, let ended):
      "job '\(id)' was canceled after \(ended) of its items ended: the server stopped"
    case .itemStopped(let id, let item, _, let reason):
      "job '\(id)', item '\(SafeText.excerpt(item, limit: 100))' was stopped part-way: "
        + reason
    case .leftRunning(
      let id, let kind, let seconds, let ended, let sent, let prepared, let sending):
      "the server stopped while job '\(id)' was still running (it had not ended within the "
        + "drain timeout of \(ServiceMetrics.number(seconds)) s); "
        + (kind == .batch
          ? "\(ended) of its items had ended"
          : "\(sent) of the \(prepared) documents it had prepared had been sent to the printer"
            + (sending > 0 ? ", \(sending) more was being sent" : ""))
    case .lost(let id, let kind, let was, let ended):
      "job '\(id)' was \(was) when the server stopped without ending it (killed, crashed or "
        + "its machine went down); "
        + (kind == .batch
          ? "\(ended) of its items had ended" : "the files it had prepared are kept")
    case .unreadable(let id, let reason):
      "job '\(id)' cannot be run by this server: \(reason)"
    }
  }

  public var hint: String? {
    switch self {
    case .timeLimit:
      "send fewer lines in each job, or start the server with a larger --job-timeout"
    case .diskLimit:
      "send fewer lines in each job, or start the server with a larger --jobs-disk"
    case .interrupted: "send the job again"
    case .lost(_, let kind, _, _), .leftRunning(_, let kind, _, _, _, _, _):
      kind == .prepare
        ? "its print journal (print-journal.json in the job's folder under the server's "
          + "--jobs-dir) and the printer's job list tell what was sent; check them before "
          + "sending the order again with a new Idempotency-Key"
        : "send the job again; its files list the outputs of the items that ended"
    default: nil
    }
  }
}
