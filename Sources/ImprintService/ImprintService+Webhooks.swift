// SPDX-License-Identifier: Apache-2.0
// ImprintService: webhooks. A long job's request may name a URL (`callback=`) that is POSTed
// the job's report when it ends: checked like a photo download's (no private, loopback or
// link-local address unless allowed), bounded in time and attempts, off every request's path.

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintNetwork
import Synchronization

/// How a service calls the webhooks of long jobs.
public struct WebhookSettings: Sendable, Equatable {
  /// Whether a callback may reach loopback, private, CGNAT or unique local addresses.
  ///
  /// Default false: a client never makes the server call into its own network. Link-local (cloud
  /// metadata), multicast, unspecified and reserved addresses are refused even then.
  public var allowPrivateNetwork = false
  /// Calls made at most for one job (default 3): the first, then retries after a failure that
  /// is not a refused address.
  public var attempts = 3
  /// Seconds one call may take, connection included (default 10).
  public var timeout = 10.0
  /// Seconds before the first retry, doubled before each later one (default 1).
  public var backoff = 1.0
  /// The secret every call is signed with (`Webhook-Timestamp`, `Webhook-Signature`), or nil
  /// to sign none (default).
  public var secret: WebhookSecret?

  /// The defaults above.
  public init() {}

  /// The addresses a call may reach (`allowPrivateNetwork`).
  var policy: AddressPolicy { AddressPolicy(allowPrivateNetwork: allowPrivateNetwork) }
}

/// Where a job's webhook call is, as its report gives it.
struct WebhookStatus: Sendable, Codable, Equatable {
  /// The callback URL.
  var url: String
  /// `pending` (the job has not ended, or calls are still being made), `delivered` or `failed`.
  var state: String
  /// Calls made so far.
  var attempts = 0
  /// The HTTP status of the last call answered.
  var status: Int?
  /// Why the last call failed.
  var error: String?

  /// This status as a report shows it: the URL without its user name and password.
  var shown: WebhookStatus {
    var copy = self
    copy.url = Self.withoutCredentials(url)
    return copy
  }

  /// `url` with the user name and password of its authority (`user:password@`) replaced by
  /// `***`, so that a report, a message or a log line never carries them (the call is made with
  /// them).
  static func withoutCredentials(_ url: String) -> String {
    guard let scheme = url.range(of: "://") else { return url }
    let rest = url[scheme.upperBound...]
    let authorityEnd = rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex
    guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
    return String(url[..<scheme.upperBound]) + "***" + String(url[at...])
  }
}

/// The webhook deliveries under way in a service, by job: at most one a job; canceled by its
/// stop (a delivery waiting to call again stops there; its record says where it was, for a
/// restart or another replica).
final class WebhookCalls: Sendable {
  private let state = Mutex<[String: Task<Void, Never>]>([:])

  /// Runs job `id`'s `delivery` in a task of its own on `executor`, kept until it ends; nothing
  /// when one for the job runs already.
  ///
  /// - Returns: whether it was started.
  @discardableResult
  func start(
    _ id: String, on executor: ThreadExecutor, _ delivery: @escaping @Sendable () async -> Void
  ) -> Bool {
    // Kept before it starts: its end, which removes it, waits for the lock.
    state.withLock { tasks in
      guard tasks[id] == nil else { return false }
      tasks[id] = Task.detached(executorPreference: executor) { [self] in
        await delivery()
        _ = self.state.withLock { $0.removeValue(forKey: id) }
      }
      return true
    }
  }

  /// The jobs whose deliveries are under way.
  var jobs: [String] { state.withLock { Array($0.keys) } }

  /// Cancels every delivery under way, and waits until `deadline` for those making a call now
  /// to end.
  func cancelAll(waitingUntil deadline: ContinuousClock.Instant) {
    for task in state.withLock({ $0.values }) { task.cancel() }
    while !state.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline {
      usleep(10_000)
    }
  }
}

extension ImprintService {
  /// The callback URL of a long job's request (`callback`), checked.
  ///
  /// - Returns: nil when the request names none.
  /// - Throws: `ServiceError.callbackRefused` for a URL that is not http or https, whose host
  ///   does not resolve, or any of whose addresses is refused.
  func callback(_ options: inout RequestOptions) throws(ServiceError) -> String? {
    guard let url = try options.string("callback") else { return nil }
    if let refused = WebhookSender.check(url, policy: configuration.webhooks.policy) {
      throw .callbackRefused(url: WebhookStatus.withoutCredentials(url), reason: refused.reason)
    }
    return url
  }

  /// Calls job `record`'s webhook with its report (its results left out: `resultsFile` links
  /// them), in a task of its own: at most `attempts` calls in all, the retries spaced by the
  /// backoff; the outcome is kept in the job's report (in a jobs folder, in its record: a start
  /// calls again the webhooks still pending, `resumeWebhooks`), counted in `/metrics` and, when
  /// it failed, told to `configuration.events`.
  ///
  /// Every call carries the job's id as `Webhook-Id`: a receiver that took a call the server
  /// could not record (it stopped first) gets it again after a restart, the same id, the same
  /// body. A webhook called again after a restart goes on from the calls its record counts, and
  /// makes one call at least.
  func announce(_ record: JobStore.Record) {
    guard let url = record.callback else { return }
    deliver(
      record.id, to: url, body: webhookBody(record), madeBefore: record.webhook?.attempts ?? 0)
  }

  /// The body of job `record`'s webhook calls: its report without its results (which
  /// `resultsFile` links) and without its webhook.
  func webhookBody(_ record: JobStore.Record) -> [UInt8] {
    var document = report(record)
    document.results = nil
    document.webhook = nil
    return Array(JSONOutput.pretty(document).utf8)
  }

  /// Calls job `id`'s webhook at `url` with `body` as `announce` says, `made` calls already
  /// counted.
  func deliver(_ id: String, to url: String, body: [UInt8], madeBefore made: Int) {
    let settings = configuration.webhooks
    let jobs = jobs
    let metrics = metrics
    let events = configuration.events
    // Calls made before a restart count toward the attempts.
    let first = min(max(0, made), 1 << 30) + 1
    let last = max(first, settings.attempts)
    // On the jobs' threads, never waiting behind what holds Swift's global pool; once a job
    // (a replica that claims a delivery it is calling already goes on with the call it makes).
    deliveries.start(id, on: jobs.executor) {
      await WebhookSender.deliver(
        url, body: body, contentType: "application/json", timeout: settings.timeout,
        policy: settings.policy, deliveryID: id, signingKey: settings.secret?.key,
        attempts: first...last, backoff: settings.backoff
      ) { attempt in
        switch attempt.result {
        // Counted before the record says so: whoever reads the delivery in a job's report
        // finds it in /metrics too.
        case .success(let status):
          metrics.recordWebhook(delivered: true, failedCalls: attempt.number - first)
          jobs.updateWebhook(id) {
            $0.attempts = attempt.number
            $0.status = status
            $0.error = nil
            $0.state = "delivered"
          }
          return false
        case .failure(let failure):
          if attempt.last {
            metrics.recordWebhook(delivered: false, failedCalls: attempt.number - first + 1)
          }
          // False once another replica holds the delivery (its lease expired): the calls go
          // on there, not here too.
          let wait = WebhookSender.delay(after: attempt.number, backoff: settings.backoff)
          let held = jobs.updateWebhook(
            id, nextCallIn: attempt.last ? nil : .milliseconds(Int64(wait * 1000))
          ) {
            $0.attempts = attempt.number
            $0.error = failure.reason
            if attempt.last { $0.state = "failed" }
          }
          // Told once, by the replica that held the delivery to its end.
          guard attempt.last, held else { return held }
          events?(
            "webhook of job \(id) to "
              + "\(SafeText.excerpt(WebhookStatus.withoutCredentials(url), limit: 200)) failed after "
              + "\(attempt.number) attempt\(attempt.number == 1 ? "" : "s"): \(failure.reason)")
          return false
        }
      }
    }
  }

  /// Calls again the webhooks a jobs folder's jobs left pending (`JobStore.pendingWebhooks`:
  /// their job ended, or was found interrupted, before a call was answered), oldest job first,
  /// then those of the jobs removed with their webhook pending (`removedPendingWebhooks`,
  /// with the body kept for them).
  func resumeWebhooks() {
    for record in jobs.pendingWebhooks { announce(record) }
    for removed in jobs.removedPendingWebhooks {
      deliver(
        removed.job, to: removed.callback, body: Array(removed.body.utf8),
        madeBefore: removed.webhook.attempts)
    }
  }
}
