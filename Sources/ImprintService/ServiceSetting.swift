// SPDX-License-Identifier: Apache-2.0
// ImprintService: the one table of `imprint serve`'s settings: each setting's key in a
// `--config` file, its command-line option, what it holds and its range, and its help. The
// command's spec and parsing (ImprintCLI), the file's reading and the ranges' checks read it.

import ImprintDocuments

/// One setting of `imprint serve`: a `--config` key and the command-line option that sets the
/// same field of `ServiceSettings`.
public struct ServiceSetting: Sendable {
  /// What the setting holds: the field of `ServiceSettings` it sets, and how it is checked.
  public enum Value: Sendable {
    /// `ADDRESS:PORT` (`ListenAddress`).
    case address(WritableKeyPath<ServiceSettings, String?> & Sendable)
    /// A file's path; in a file, relative to the file's folder.
    case file(WritableKeyPath<ServiceSettings, String?> & Sendable)
    /// Text taken as it is (a URL).
    case text(WritableKeyPath<ServiceSettings, String?> & Sendable)
    /// A folder's path; in a file, relative to the file's folder. `nonEmpty`: `""` is refused.
    case folder(WritableKeyPath<ServiceSettings, String?> & Sendable, nonEmpty: Bool)
    /// On or off (a command-line flag only turns it on).
    case flag(WritableKeyPath<ServiceSettings, Bool?> & Sendable)
    /// A whole number in the range.
    case integer(WritableKeyPath<ServiceSettings, Int?> & Sendable, ClosedRange<Int>)
    /// A finite number in the range.
    case number(WritableKeyPath<ServiceSettings, Double?> & Sendable, ClosedRange<Double>)
  }

  /// The key in a `--config` file (`maxBody`).
  public let key: String
  /// The command-line option's long name, without dashes (`max-body`).
  public let option: String
  /// The option's one-letter short form, if any.
  public let short: Character?
  /// The option's value placeholder (`<bytes>`); nil for a flag.
  public let placeholder: String?
  /// The field it sets and how it is checked.
  public let value: Value
  /// One line of help, with the default.
  public let help: String

  init(
    _ key: String, option: String, short: Character? = nil, _ placeholder: String?,
    _ value: Value, _ help: String
  ) {
    self.key = key
    self.option = option
    self.short = short
    self.placeholder = placeholder
    self.value = value
    self.help = help
  }
}

extension ServiceSetting {
  /// `templates`: the folder of card designs (`imprint card` and `templates list` take the same
  /// option).
  public static let templates = ServiceSetting(
    "templates", option: "templates", "<dir>", .folder(\.templates, nonEmpty: false),
    "Folder of designs (default: IMPRINT_TEMPLATES, else Imprint's own).")
  /// `cpuLimit`: CPU seconds of one document (the document commands take the same option).
  public static let cpuLimit = ServiceSetting(
    "cpuLimit", option: "cpu-limit", "<s>", .integer(\.cpuLimit, 1...3600),
    "CPU seconds one file may use (default 30).")
  /// `memoryLimit`: a document worker's memory (the document commands take the same option).
  public static let memoryLimit = ServiceSetting(
    "memoryLimit", option: "memory-limit", "<MB>", .integer(\.memoryLimit, 128...65_536),
    "Memory of a worker process in MB (default \(SandboxLimits.defaultMemoryMB)).")
  /// `timeout`: wall-clock seconds of one document (the document commands take the same
  /// option).
  public static let timeout = ServiceSetting(
    "timeout", option: "timeout", "<s>", .number(\.timeout, 0.5...3600),
    "Wall-clock seconds one file may take (default 60).")

  /// Every setting, in the order `imprint serve --help` lists them (after `--config`).
  public static let all: [ServiceSetting] = [
    ServiceSetting(
      "listen", option: "listen", "<addr:port>", .address(\.listen),
      "IPv4 address and port (default 127.0.0.1:8080; port 0: any)."),
    ServiceSetting(
      "maxBody", option: "max-body", "<bytes>", .integer(\.maxBody, 1...(1 << 31)),
      "The largest request body (default 33554432, 32 MiB)."),
    ServiceSetting(
      "maxPart", option: "max-part", "<bytes>", .integer(\.maxPart, 1...(1 << 31)),
      "The largest part of a multipart body (default 16777216, 16 MiB)."),
    ServiceSetting(
      "bodyMemory", option: "body-memory", "<bytes>", .integer(\.bodyMemory, 1...(1 << 40)),
      "Bytes of request bodies held at once; more are 503 (default: 1/16 of memory)."),
    ServiceSetting(
      "queue", option: "queue", "<n>", .integer(\.queue, 0...100_000),
      "Requests waiting at most before 503 (default 64)."),
    templates,
    ServiceSetting(
      "jobs", option: "jobs", short: "j", "<n>", .integer(\.jobs, 1...256),
      "Requests worked at once, and document workers kept (default: all cores)."),
    ServiceSetting(
      "requestTimeout", option: "request-timeout", "<s>", .number(\.requestTimeout, 1...3600),
      "Seconds a request may take, body and queue included (default 120); then 503."),
    ServiceSetting(
      "connectionTimeout", option: "connection-timeout", "<s>",
      .integer(\.connectionTimeout, 1...3600), "Seconds a connection may stay idle (default 30)."),
    ServiceSetting(
      "headTimeout", option: "head-timeout", "<s>", .number(\.headTimeout, 1...3600),
      "Seconds a request's head may take from its first byte; then closed (default 10)."),
    ServiceSetting(
      "maxConnections", option: "max-connections", "<n>", .integer(\.maxConnections, 1...65_536),
      "Connections open at once; more wait in the backlog (default 1000)."),
    ServiceSetting(
      "maxConnectionsPerIp", option: "max-connections-per-ip", "<n>",
      .integer(\.maxConnectionsPerIp, 1...65_536),
      "Connections open at once from one address; more are closed (default 200)."),
    ServiceSetting(
      "accessLog", option: "access-log", nil, .flag(\.accessLog),
      "Write one JSON line per request on standard error."),
    ServiceSetting(
      "tokenFile", option: "token-file", "<file>", .file(\.tokenFile),
      "Ask every request but /healthz and /readyz for this bearer token."),
    ServiceSetting(
      "publicMetrics", option: "public-metrics", nil, .flag(\.publicMetrics),
      "Serve /metrics without the token."),
    ServiceSetting(
      "jobQueue", option: "job-queue", "<n>", .integer(\.jobQueue, 1...10_000),
      "Long jobs (/v1/batch, /v1/prepare) queued or running at most before 503 (default 8)."),
    ServiceSetting(
      "jobsKept", option: "jobs-kept", "<n>", .integer(\.jobsKept, 0...100_000),
      "Finished long jobs kept; the oldest are removed (default 32)."),
    ServiceSetting(
      "jobsDisk", option: "jobs-disk", "<bytes>", .integer(\.jobsDisk, 1...(1 << 50)),
      "Bytes the long jobs' files may hold (default 1073741824, 1 GiB)."),
    ServiceSetting(
      "jobLines", option: "job-lines", "<n>", .integer(\.jobLines, 1...10_000_000),
      "Manifest lines one long job may have; more are 413 (default 10000)."),
    // A week at most.
    ServiceSetting(
      "jobTimeout", option: "job-timeout", "<s>", .number(\.jobTimeout, 1...604_800),
      "Seconds one long job may run; then it is stopped and fails (default 3600)."),
    ServiceSetting(
      "jobsDir", option: "jobs-dir", "<dir>", .folder(\.jobsDir, nonEmpty: true),
      "Keep long jobs in this folder across restarts (one server a folder; default: none)."),
    ServiceSetting(
      "jobsDb", option: "jobs-db", "<url>", .text(\.jobsDb),
      "Share long jobs with other replicas in this PostgreSQL database (needs --jobs-dir)."),
    // Renewed every third of it: long enough for a few missed renewals, short enough for a
    // quick takeover.
    ServiceSetting(
      "jobLease", option: "job-lease", "<s>", .number(\.jobLease, 2...3600),
      "Seconds a replica's claim of a running job lasts unless renewed (default 30)."),
    // 64 shards at most (JobLimits.maximumShards).
    ServiceSetting(
      "jobShardItems", option: "job-shard-items", "<n>", .integer(\.jobShardItems, 0...10_000_000),
      "Items above which a batch runs in shards any replica takes (default 250; 0: never)."),
    ServiceSetting(
      "drainTimeout", option: "drain-timeout", "<s>", .number(\.drainTimeout, 1...3600),
      "Seconds a stop may take: requests finished, a running job let end (default 30)."),
    // 0: no checks; below 0.1, checked every 0.1 s.
    ServiceSetting(
      "priceListCheck", option: "price-list-check", "<s>", .number(\.priceListCheck, 0...3600),
      "Seconds between checks of the price-list files for a change (default 1; 0: none)."),
    ServiceSetting(
      "webhookAllowPrivate", option: "webhook-allow-private", nil, .flag(\.webhookAllowPrivate),
      "Let callback URLs reach loopback and private addresses (never link-local)."),
    ServiceSetting(
      "webhookSecretFile", option: "webhook-secret-file", "<file>", .file(\.webhookSecretFile),
      "Sign webhook calls with this whsec_ secret (Standard Webhooks; mode 600 or 640)."),
    ServiceSetting(
      "webhookAttempts", option: "webhook-attempts", "<n>", .integer(\.webhookAttempts, 1...100),
      "Calls made at most for one job's webhook: the first and its retries (default 3)."),
    ServiceSetting(
      "webhookTimeout", option: "webhook-timeout", "<s>", .number(\.webhookTimeout, 1...300),
      "Seconds one webhook call may take, connection included (default 10)."),
    // A day at most between two calls (WebhookSender.delay caps each wait at a day too).
    ServiceSetting(
      "webhookBackoff", option: "webhook-backoff", "<s>", .number(\.webhookBackoff, 0.1...86_400),
      "Seconds before a webhook's first retry, doubled before each later one (default 1)."),
    ServiceSetting(
      "printPasswordFile", option: "password-file", "<file>", .file(\.printPasswordFile),
      "The user:password line for the printers that ask (mode 600)."),
    cpuLimit, memoryLimit, timeout,
  ]

  /// The setting whose `--config` key is `key`.
  public static func named(_ key: String) -> ServiceSetting? {
    all.first { $0.key == key }
  }
}
