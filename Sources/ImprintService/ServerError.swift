// SPDX-License-Identifier: Apache-2.0
// ImprintService: the errors of the server itself, at its start and its stop (not of a request or a job).

import Foundation
import ImprintCore

/// Why the server cannot start or did not stop cleanly.
///
/// A token, webhook secret or configuration file it cannot use, a jobs folder another server
/// holds; work left stuck past the drain timeout. Never an HTTP answer: `imprint
/// serve` reports it and exits.
public enum ServerError: ImprintError, Equatable {
  /// The server's stop returned with work still stuck (`stuck`, `StopReport.stuck`) past the
  /// drain timeout (`seconds`) and its margin; never an answer (`imprint serve` reports it as
  /// it exits).
  case stopIncomplete(stuck: String, seconds: Double)
  /// The token file's text is not a bearer token.
  case invalidToken(source: String, problem: String)
  /// A webhook secret file (`--webhook-secret-file`) others may read, or whose text is not a
  /// Standard Webhooks secret.
  case invalidWebhookSecret(source: String, problem: String)
  /// A configuration file's key is unknown, of the wrong type or out of range.
  case invalidSetting(file: String, key: String, problem: String)
  /// Another server holds the jobs folder `folder` (its lock file `.lock` is locked).
  case jobsFolderInUse(folder: String)

  public var code: String {
    switch self {
    case .stopIncomplete: "service.stopIncomplete"
    case .invalidToken: "service.invalidToken"
    case .invalidWebhookSecret: "service.invalidWebhookSecret"
    case .invalidSetting: "service.invalidSetting"
    case .jobsFolderInUse: "service.jobsFolderInUse"
    }
  }

  /// 500: never an answer; one that reached a route would be the server's fault.
  public var status: Int {
    switch self {
    case .stopIncomplete, .invalidToken, .invalidWebhookSecret, .invalidSetting,
      .jobsFolderInUse:
      500
    }
  }

  public var message: String {
    switch self {
    case .stopIncomplete(let stuck, let seconds):
      "the server stopped with work still stuck past the drain timeout of "
        + "\(ServiceMetrics.number(seconds)) s: \(SafeText.excerpt(stuck, limit: 2000))"
    case .invalidToken(let source, let problem):
      "the token file '\(source)' \(problem)"
    case .invalidWebhookSecret(let source, let problem):
      "the webhook secret file '\(source)' \(problem)"
    case .invalidSetting(let file, let key, let problem):
      "configuration '\(file)': '\(key)' \(problem)"
    case .jobsFolderInUse(let folder):
      "jobs folder '\(folder)' is in use by another server ('\(folder)/.lock' is locked)"
    }
  }

  public var hint: String? {
    switch self {
    case .stopIncomplete:
      "work that cannot be canceled (a prepare job sending to or waiting for its printer, a "
        + "system call to a printer, a scheduler or a file system that does not answer) was "
        + "left behind: the process ended without it; check what it waits for"
    case .invalidToken:
      "put one token on one line, e.g. from 'openssl rand -hex 32', in a file others cannot "
        + "read (chmod 600 FILE)"
    case .invalidWebhookSecret:
      "put one secret on one line, e.g. from 'echo whsec_$(openssl rand -base64 32)', in a file "
        + "others cannot read (chmod 600 FILE)"
    case .invalidSetting: "the settings are the long options of imprint serve, in camelCase"
    case .jobsFolderInUse:
      "give each server its own --jobs-dir (one writer a folder), or stop the other one first"
    }
  }
}
