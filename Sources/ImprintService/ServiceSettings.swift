// SPDX-License-Identifier: Apache-2.0
// ImprintService: the settings of `imprint serve --config FILE`, one key per command-line
// option (`ServiceSetting.all`), read strictly (unknown keys refused) and checked against the
// table's ranges.

import Foundation
import ImprintCore
import ImprintDocuments
import ImprintHTTP
import ImprintPrinting

/// A service's settings as a configuration file or the command line gives them; nil: not given.
///
/// The file is a JSON object (`StrictJSON`, `JSONObjectReader`): the keys of
/// `ServiceSetting.all` (each field below but `priceLists` and `printers`), `priceLists`
/// (name → file) and `printers` (name → `ServicePrinter`). Paths are relative to the file's
/// folder.
public struct ServiceSettings: Sendable, Equatable {
  /// `ADDRESS:PORT`.
  public var listen: String?
  /// The largest request body, in bytes.
  public var maxBody: Int?
  /// The largest part of a multipart body, in bytes.
  public var maxPart: Int?
  /// The bytes of request bodies held at once.
  public var bodyMemory: Int?
  /// Requests waiting at most.
  public var queue: Int?
  /// Requests worked at once.
  public var jobs: Int?
  /// The folder of card designs.
  public var templates: String?
  /// Whether each request is logged.
  public var accessLog: Bool?
  /// The file holding the bearer token.
  public var tokenFile: String?
  /// Whether `/metrics` is served without the token.
  public var publicMetrics: Bool?
  /// Seconds a request may take, head to answer.
  public var requestTimeout: Double?
  /// Seconds a connection may stay idle.
  public var connectionTimeout: Int?
  /// Connections open at once at most.
  public var maxConnections: Int?
  /// Connections open at once from one client address at most.
  public var maxConnectionsPerIp: Int?
  /// Seconds a request's head may take from its first byte.
  public var headTimeout: Double?
  /// CPU seconds one document may use.
  public var cpuLimit: Int?
  /// Memory of a document worker, in MB.
  public var memoryLimit: Int?
  /// Wall-clock seconds one document may take.
  public var timeout: Double?
  /// Price lists by name: each one's file.
  public var priceLists: [String: String]?
  /// Long jobs queued or running at most.
  public var jobQueue: Int?
  /// Finished long jobs kept at most.
  public var jobsKept: Int?
  /// Bytes all long jobs' files may hold.
  public var jobsDisk: Int?
  /// Manifest lines one long job may have.
  public var jobLines: Int?
  /// Seconds one long job may run.
  public var jobTimeout: Double?
  /// The folder long jobs are kept in across restarts.
  public var jobsDir: String?
  /// The jobs database several replicas share (a `postgres://` URL or libpq's `key=value`
  /// pairs), with `jobsDir` on storage they all mount.
  public var jobsDb: String?
  /// Seconds a replica's lease of a running job lasts unless renewed.
  public var jobLease: Double?
  /// Items of a batch above which it runs in shards, with the jobs database (0: never).
  public var jobShardItems: Int?
  /// Seconds a stop may take (requests drained, a running job let end; then both cut short).
  public var drainTimeout: Double?
  /// Seconds between checks of the price lists' files for a change (0: none).
  public var priceListCheck: Double?
  /// Whether webhooks may call loopback and private addresses.
  public var webhookAllowPrivate: Bool?
  /// The file of the secret webhook calls are signed with (`WebhookSecret`).
  public var webhookSecretFile: String?
  /// Calls made at most for one job's webhook (`WebhookSettings.attempts`).
  public var webhookAttempts: Int?
  /// Seconds one webhook call may take (`WebhookSettings.timeout`).
  public var webhookTimeout: Double?
  /// Seconds before a webhook's first retry, doubled before each later one
  /// (`WebhookSettings.backoff`).
  public var webhookBackoff: Double?
  /// Printers by name: where `POST /v1/prepare?printer=NAME` sends an order's files.
  public var printers: [String: ServicePrinter]?
  /// The file holding the `user:password` line for printers that ask (`--password-file`).
  public var printPasswordFile: String?

  /// No settings.
  public init() {}

  /// Reads the configuration file at `path`.
  ///
  /// - Throws: `FileError` when it cannot be read; `JSONError` when it is not JSON;
  ///   `ServerError.invalidSetting` for a key that is unknown, of the wrong type or out of
  ///   range, each naming the file and the key.
  public static func load(_ path: String) throws -> ServiceSettings {
    let bytes = try FileIO.read(path, limit: FileIO.Limit.structured)
    let value = try StrictJSON.parse(bytes, source: path)
    var reader = try JSONObjectReader(value, source: path, path: "") { problem in
      ServerError.invalidSetting(
        file: problem.source, key: problem.field.isEmpty ? "(top level)" : problem.field,
        problem: problem.kind == .unknownKey
          ? "is not a setting"
          : "is \(JSONFieldProblem.describe(problem.value)); expected \(Self.expected(problem))")
    }
    let folder = (path as NSString).deletingLastPathComponent
    func resolved(_ file: String) -> String {
      file.hasPrefix("/") || folder.isEmpty ? file : folder + "/" + file
    }
    func ranged<T: Comparable>(_ key: String, _ value: T?, _ range: ClosedRange<T>)
      throws(ServerError) -> T?
    {
      guard let value, !range.contains(value) else { return value }
      throw .invalidSetting(
        file: path, key: key,
        problem: "is \(value); expected \(range.lowerBound) to \(range.upperBound)")
    }
    var settings = ServiceSettings()
    for setting in ServiceSetting.all {
      let key = setting.key
      switch setting.value {
      case .address(let field):
        guard let listen = try reader.string(key) else { break }
        guard (try? ListenAddress(parsing: listen)) != nil else {
          throw ServerError.invalidSetting(
            file: path, key: key,
            problem: "is '\(SafeText.excerpt(listen, limit: 100))'; expected IPV4-ADDRESS:PORT "
              + "such as 127.0.0.1:8080")
        }
        settings[keyPath: field] = listen
      case .file(let field):
        settings[keyPath: field] = try reader.string(key).map(resolved)
      case .text(let field):
        settings[keyPath: field] = try reader.string(key)
      case .folder(let field, let nonEmpty):
        guard let folder = try reader.string(key) else { break }
        if nonEmpty && folder.isEmpty {
          throw ServerError.invalidSetting(
            file: path, key: key, problem: "is empty; expected a folder's path")
        }
        settings[keyPath: field] = resolved(folder)
      case .flag(let field):
        settings[keyPath: field] = try reader.bool(key)
      case .integer(let field, let range):
        settings[keyPath: field] = try ranged(key, try reader.integer(key), range)
      case .number(let field, let range):
        settings[keyPath: field] = try ranged(key, try reader.number(key)?.doubleValue, range)
      }
    }
    if var lists = try reader.child("priceLists") {
      var files: [String: String] = [:]
      for name in lists.object.keys.sorted() {
        try Self.checkName(name, key: "priceLists", what: "list", file: path)
        guard let file = try lists.string(name) else {
          throw lists.wrongType(name, expected: .string)
        }
        files[name] = resolved(file)
      }
      settings.priceLists = files
    }
    if var printers = try reader.child("printers") {
      var found: [String: ServicePrinter] = [:]
      for name in printers.object.keys.sorted() {
        try Self.checkName(name, key: "printers", what: "printer", file: path)
        guard var entry = try printers.child(name) else {
          throw printers.wrongType(name, expected: .object)
        }
        guard let uri = try entry.string("uri") else {
          throw ServerError.invalidSetting(
            file: path, key: entry.key("uri"),
            problem: "is missing; expected the printer's IPP URI or CUPS queue name")
        }
        let printer = ServicePrinter(
          uri: uri, monoUri: try entry.string("monoUri"), scheduler: try entry.string("scheduler"))
        try entry.finish()
        for (key, value) in [("uri", uri), ("monoUri", printer.monoUri)] {
          guard let value else { continue }
          do {
            try PrintSubmitter.checkPrinter(value)
          } catch {
            throw ServerError.invalidSetting(
              file: path, key: entry.key(key),
              problem: "is not a printer: " + error.message)
          }
        }
        found[name] = printer
      }
      settings.printers = found
    }
    try reader.finish()
    return settings
  }

  /// Checks that `name`, a member of `key` (`priceLists`, `printers`), is 1 to 64 letters,
  /// digits, `-` or `_`: a name a client gives in a query.
  ///
  /// - Throws: `ServerError.invalidSetting` naming the file and the member.
  private static func checkName(_ name: String, key: String, what: String, file: String)
    throws(ServerError)
  {
    guard (1...64).contains(name.utf8.count),
      name.utf8.allSatisfy({
        $0 < 0x80 && ($0 == 0x2D || $0 == 0x5F || isalnum(Int32($0)) != 0)
      })
    else {
      throw .invalidSetting(
        file: file, key: key + "." + SafeText.excerpt(name, limit: 64),
        problem: "is not a \(what) name; expected 1 to 64 letters, digits, - or _")
    }
  }

  private static func expected(_ problem: JSONFieldProblem) -> String {
    if case .wrongType(let expected) = problem.kind { return expected.phrase }
    return "nothing"
  }
}

extension ServiceConfiguration {
  /// Takes the settings that are the configuration's own.
  ///
  /// Those are the body, part, body memory, queue and job limits, the long jobs' limits (queue,
  /// kept, disk, lines, time) and folder, the request, head and connection timeouts, the
  /// connection limits, the drain time, the
  /// document workers' limits, the bearer token (read from its file), whether `/metrics` is
  /// public, the price lists (read from their files) and how often their files are checked
  /// for a change, the printers and their credentials (read from their file). The address, the designs' folder and
  /// the access log's destination are the caller's to resolve.
  ///
  /// - Throws: `FileError` or `ServerError.invalidToken` for the token file; `FileError` or
  ///   `PricingError` for a price list (each message names the file).
  public mutating func apply(_ settings: ServiceSettings) throws {
    maximumBodyBytes = settings.maxBody ?? maximumBodyBytes
    multipart.maximumPartBytes = settings.maxPart ?? multipart.maximumPartBytes
    bodyMemoryBytes = settings.bodyMemory ?? bodyMemoryBytes
    queueLength = settings.queue ?? queueLength
    concurrentRequests = settings.jobs ?? concurrentRequests
    requestTimeout = settings.requestTimeout ?? requestTimeout
    connectionTimeout = settings.connectionTimeout ?? connectionTimeout
    maximumConnections = settings.maxConnections ?? maximumConnections
    maximumConnectionsPerIP = settings.maxConnectionsPerIp ?? maximumConnectionsPerIP
    headTimeout = settings.headTimeout ?? headTimeout
    limits.cpuSeconds = settings.cpuLimit ?? limits.cpuSeconds
    limits.memoryMB = settings.memoryLimit ?? limits.memoryMB
    limits.wallSeconds = settings.timeout ?? limits.wallSeconds
    if let file = settings.tokenFile { bearerToken = try BearerToken(file: file) }
    publicMetrics = settings.publicMetrics ?? publicMetrics
    if let files = settings.priceLists { priceLists = try PriceListStore(files: files) }
    jobLimits.queue = settings.jobQueue ?? jobLimits.queue
    jobLimits.kept = settings.jobsKept ?? jobLimits.kept
    jobLimits.maximumBytes = settings.jobsDisk ?? jobLimits.maximumBytes
    jobLimits.lines = settings.jobLines ?? jobLimits.lines
    jobLimits.seconds = settings.jobTimeout ?? jobLimits.seconds
    jobLimits.shardItems = settings.jobShardItems ?? jobLimits.shardItems
    jobsFolder = settings.jobsDir ?? jobsFolder
    jobsDatabase = settings.jobsDb ?? jobsDatabase
    jobLeaseSeconds = settings.jobLease ?? jobLeaseSeconds
    drainSeconds = settings.drainTimeout ?? drainSeconds
    priceListCheckSeconds = settings.priceListCheck ?? priceListCheckSeconds
    webhooks.allowPrivateNetwork = settings.webhookAllowPrivate ?? webhooks.allowPrivateNetwork
    if let file = settings.webhookSecretFile { webhooks.secret = try WebhookSecret(file: file) }
    webhooks.attempts = settings.webhookAttempts ?? webhooks.attempts
    webhooks.timeout = settings.webhookTimeout ?? webhooks.timeout
    webhooks.backoff = settings.webhookBackoff ?? webhooks.backoff
    printers = settings.printers ?? printers
    if let file = settings.printPasswordFile { printCredentials = try PrintCredentials(file: file) }
  }
}
