// SPDX-License-Identifier: Apache-2.0
// ImprintService: Imprint's capabilities over HTTP (`imprint serve`, or a backend hosting the
// server itself): the configuration, start and graceful stop, and the routing of requests.

import Foundation
import ImprintCards
import ImprintCore
import ImprintDocuments
import ImprintGraphics
import ImprintHTTP
import ImprintPricing
import ImprintPrinting
import Synchronization

/// How a service listens, what it allows and where its resources come from.
public struct ServiceConfiguration: Sendable {
  /// The address and port to listen on.
  public var listen: ListenAddress
  /// The largest request body, in bytes (default 32 MiB); larger ones are answered 413.
  public var maximumBodyBytes = 32 << 20
  /// The bytes of request bodies held in memory at once, all requests together (nil: a
  /// sixteenth of the machine's memory, and at least `maximumBodyBytes`); a body that does not
  /// fit beside those being received is answered 503 `http.bodiesBusy` before it is read.
  public var bodyMemoryBytes: Int?

  /// The bytes of bodies held at once when `bodyMemoryBytes` is nil: a sixteenth of the
  /// machine's memory (1.5 GiB of 24 GiB), and at least `maximumBodyBytes`.
  public var defaultBodyMemory: Int {
    let share = Int(clamping: ProcessInfo.processInfo.physicalMemory / 16)
    return max(share, maximumBodyBytes)
  }
  /// What a `multipart/form-data` body may hold: parts, bytes of a part, bytes of a name.
  public var multipart = MultipartLimits()
  /// Requests worked at once (default: one per core).
  public var concurrentRequests = activeProcessorCount
  /// Requests waiting for a turn at most (default 64); more are answered 503 with Retry-After.
  public var queueLength = 64
  /// Seconds a connection may stay idle before it is closed (default 30).
  public var connectionTimeout = 30
  /// Connections open at once at most (default 1000); more wait in the system's backlog.
  ///
  /// The default stays below the 1024 descriptors many systems give a process, with room for
  /// the document workers' pipes and the jobs' files.
  public var maximumConnections = 1000
  /// Connections open at once from one client address at most (default 200); more are
  /// accepted and closed at once.
  ///
  /// Well below `maximumConnections`, so that one client (a slow or hostile one, or a runaway
  /// pool) cannot take them all: it takes five addresses at the limit to fill the server, and
  /// probes and a reverse proxy coming from another address still get in. A reverse proxy's
  /// pool of connections to the server fits (the server works `concurrentRequests` requests
  /// and queues `queueLength`: more connections from one client would only wait).
  public var maximumConnectionsPerIP = 200
  /// Seconds a request's head may take from its first byte (default 10).
  ///
  /// A connection whose head is not whole by then is closed; one that sends nothing is left to
  /// `connectionTimeout`.
  public var headTimeout = 10.0
  /// Seconds a request may take, from its head's arrival to its answer, reading its body and
  /// waiting for a worker included (default 120); past it, the answer is 503
  /// `http.deadlineExceeded`, or a body still arriving has its connection dropped.
  public var requestTimeout = 120.0
  /// Seconds a stop may take (default 30): it lets the requests begun and a running long job
  /// end within this time, less a grace (2 s, or a quarter of it when shorter) in which those
  /// still worked are cut short (answered 503, their document workers killed).
  public var drainSeconds: Double = 30
  /// The executable that serves document workers (`DocumentWorker.runIfWorker()` first).
  public var workerExecutable: String
  /// The document workers' limits.
  public var limits = SandboxLimits()
  /// The fonts cards and QR captions are set with; the bundled ones when nil.
  public var fonts: FontLibrary?
  /// The photo of cards that have none.
  public var placeholder: (bytes: [UInt8], source: String)
  /// The folder of card designs; the shipped designs when nil.
  public var templatesFolder: String?
  /// The token requests must carry (`Authorization: Bearer`); nil: none is asked for.
  ///
  /// `/healthz` and `/readyz` never ask for it, `/metrics` unless `publicMetrics`.
  public var bearerToken: BearerToken?
  /// Whether `/metrics` is served without the bearer token (default false).
  public var publicMetrics = false
  /// The named price lists (reloaded by `ImprintService.reloadPriceLists`, on SIGHUP under
  /// `run`, and when their files change); none by default.
  public var priceLists = PriceListStore()
  /// How much long work (`/v1/batch`) is kept: jobs queued or running, finished jobs kept,
  /// bytes on disk.
  public var jobLimits = JobLimits()
  /// The folder in which the jobs' private folder is made (the system's temporary folder when
  /// nil); that folder is removed when the service stops.
  public var jobsParent: String?
  /// The jobs folder (`--jobs-dir`), or nil for a private folder forgotten at the stop.
  ///
  /// The long jobs are kept there instead of a private folder, each with its record, and read
  /// again by the next start on it (`jobsParent` is then not used); one service at a time (a
  /// second is refused, `service.jobsFolderInUse`).
  public var jobsFolder: String?
  /// The jobs database shared with other replicas (`--jobs-db`: a `postgres://` URL or
  /// libpq's `key=value` pairs), or nil for jobs of this process alone.
  ///
  /// The jobs' records, states, leases and `Idempotency-Key`s are kept there, their files in
  /// `jobsFolder` (needed), which every replica mounts (a ReadWriteMany volume).
  public var jobsDatabase: String?
  /// Seconds a replica's lease of a running job lasts unless renewed (every third of it);
  /// once it expires, another replica takes the job over (default 30).
  public var jobLeaseSeconds = 30.0
  /// Seconds between two checks of the price lists' files for a change, while the service
  /// runs (default 1; at least 0.1; 0: no checks, only `reloadPriceLists()` and SIGHUP).
  public var priceListCheckSeconds = 1.0
  /// Told what each reload did to each list it read: SIGHUP's and `reloadPriceLists()`'s (every
  /// list), a check's (the lists whose file changed); nil for no one.
  ///
  /// Called on the thread that reloaded (a check's own, or the signal's): keep it quick.
  /// `imprint serve` writes a line for each list on standard error.
  public var priceListsReloaded: (@Sendable ([PriceListStore.Reload]) -> Void)?
  /// How long jobs' webhooks are called.
  public var webhooks = WebhookSettings()
  /// The printers `POST /v1/prepare?printer=NAME` may send orders to, by name; none by default.
  public var printers: [String: ServicePrinter] = [:]
  /// The user name and password for printers and schedulers that ask (`--password-file`), or
  /// nil to answer none.
  public var printCredentials: PrintCredentials?
  /// Told of events worth a log line that are no request's answer (a webhook given up).
  ///
  /// Nil for none. `imprint serve` writes each on standard error.
  public var events: (@Sendable (String) -> Void)?
  /// Told of what the start found in the jobs folder (`jobsFolder`), one JSON object a line
  /// (sorted keys, no newline): `time`, `event` (`jobs.skipped`, `jobs.interrupted`,
  /// `jobs.removed`, `jobs.unwritten`, `jobs.loaded`), `path`, and `reason` or `jobs`; without
  /// one, the private folders of servers killed that it removed (`jobs.abandoned`).
  ///
  /// Nil for none. `imprint serve` writes each on standard error.
  public var jobEvents: (@Sendable (String) -> Void)?
  /// Told of every request once it completed; nil for none.
  ///
  /// Called on the server's event thread: keep it quick. `imprint serve --access-log` writes
  /// each record's `logLine` on standard error.
  public var accessLog: (@Sendable (CompletedRequest) -> Void)?

  /// A configuration with the defaults above.
  public init(
    listen: ListenAddress, workerExecutable: String,
    placeholder: (bytes: [UInt8], source: String)
  ) {
    self.listen = listen
    self.workerExecutable = workerExecutable
    self.placeholder = placeholder
  }
}

/// An HTTP service over Imprint's library: every route calls the entry point the matching
/// command calls and answers with its bytes, its `--json` document or its error object.
///
/// Routes: `GET /healthz`, `GET /readyz`, `GET /metrics`, `GET /openapi.json` (the OpenAPI
/// document of them all), `POST /v1/qr`, `POST /v1/card`, `POST /v1/inspect`,
/// `POST /v1/thumbnail`, `POST /v1/quote`, and the long work: `POST /v1/batch` and
/// `POST /v1/prepare` (202 and a job), `GET` and `DELETE /v1/jobs/ID`,
/// `GET /v1/jobs/ID/files/PATH`. Designs and the
/// OpenAPI document are loaded once, when the service is made; documents are read in the sandbox's
/// workers, so a hostile upload costs a worker, never the server.
public final class ImprintService: Sendable {
  /// The configuration the service was made with.
  public let configuration: ServiceConfiguration
  let templates: [String: CardTemplate]
  let sandbox: DocumentSandbox
  let loader: CardInputLoader
  let metrics = ServiceMetrics(routes: ImprintService.routes.keys)
  /// The long jobs (`/v1/batch`, `/v1/prepare`), in a private folder removed by `stop`.
  let jobs: JobStore
  /// The `Idempotency-Key`s of the requests that made jobs.
  let idempotencyKeys = IdempotencyKeys()
  /// The bytes `GET /openapi.json` answers with (`openAPIDocument()`).
  let openAPI: [UInt8]
  let server: HTTPServer
  /// The checks of the price lists' files, while the service runs.
  private let watch = Mutex<PriceListWatch?>(nil)
  /// The webhook deliveries under way, canceled by `stop`.
  let deliveries = WebhookCalls()

  /// Loads the card designs and the OpenAPI document and prepares the sandbox; nothing listens
  /// yet.
  ///
  /// - Throws: `ServerError.invalidSetting` when `bodyMemoryBytes` is below
  ///   `maximumBodyBytes` (the largest body could never be read); `CardError` when a design
  ///   cannot be loaded; `FileError` when the OpenAPI document is not deployed
  ///   (`openAPIDocument()`) or the jobs' folder cannot be made.
  public init(_ configuration: ServiceConfiguration) throws {
    self.configuration = configuration
    let bodyBudget = configuration.bodyMemoryBytes ?? configuration.defaultBodyMemory
    guard bodyBudget >= configuration.maximumBodyBytes else {
      throw ServerError.invalidSetting(
        file: "the settings", key: "bodyMemory",
        problem: "is \(bodyBudget); expected at least maxBody (\(configuration.maximumBodyBytes)), "
          + "or the largest body could never be read")
    }
    openAPI = try Self.openAPIDocument()
    var templates: [String: CardTemplate] = [:]
    for name in CardTemplate.shippedNames(folder: configuration.templatesFolder) {
      templates[name] = try CardTemplate.load(name, folder: configuration.templatesFolder)
    }
    self.templates = templates
    let sandbox = DocumentSandbox(
      executable: configuration.workerExecutable, limits: configuration.limits,
      workers: configuration.concurrentRequests)
    self.sandbox = sandbox
    loader = CardInputLoader(placeholder: configuration.placeholder, decoder: sandbox)
    let box = Weak()
    let events = configuration.events
    var shared: SharedJobs?
    if let url = configuration.jobsDatabase {
      guard configuration.jobsFolder != nil else {
        throw ServerError.invalidSetting(
          file: "the settings", key: "jobsDb",
          problem: "needs jobsDir (--jobs-dir), the folder of the jobs' files every replica mounts")
      }
      shared = try SharedJobs(url: url, lease: .seconds(configuration.jobLeaseSeconds))
    }
    jobs = try JobStore(
      parent: configuration.jobsParent, folder: configuration.jobsFolder,
      limits: configuration.jobLimits, told: { events?($0) },
      ended: { box.service?.announce($0) }, webhookBody: { box.service?.webhookBody($0) },
      shared: shared)
    shared?.builder.withLock {
      $0 = { work, id, folder, shard in
        box.service?.work(for: work, id: id, folder: folder, shard: shard)
      }
    }
    let deliveries = deliveries
    shared?.calling.withLock { $0 = { deliveries.jobs } }
    shared?.deliverer.withLock {
      $0 = { id, url, body, made in box.service?.deliver(id, to: url, body: body, madeBefore: made)
      }
    }
    for (key, id) in jobs.idempotencyKeys {
      idempotencyKeys.restore(key.key, fingerprint: key.fingerprint, job: id)
    }
    if let log = configuration.jobEvents {
      for event in jobs.loaded { log(JSONOutput.line(event)) }
    }
    let pool = WorkPool(
      width: configuration.concurrentRequests, queueLimit: configuration.queueLength)
    let metrics = metrics
    let accessLog = configuration.accessLog
    server = HTTPServer(
      maximumBodyBytes: configuration.maximumBodyBytes, bodyBudget: bodyBudget,
      multipartLimits: configuration.multipart,
      connectionTimeout: configuration.connectionTimeout,
      connectionLimits: (configuration.maximumConnections, configuration.maximumConnectionsPerIP),
      headTimeout: configuration.headTimeout,
      requestTimeout: configuration.requestTimeout, pool: pool,
      observer: { completed in
        metrics.record(completed)
        accessLog?(completed)
      },
      gate: { method, path, authorization, queryProblem in
        box.service?.refusal(method: method, path: path, authorization: authorization)
          ?? queryProblem.map {
            .error(ServiceError.invalidParameter(name: $0.name, problem: $0.problem))
          }
      },
      inline: { request in box.service?.respondInline(request) },
      handler: { request in
        guard let service = box.service else { return .error(HTTPError.busy(queued: 0)) }
        return await service.respond(request)
      })
    box.service = self
  }

  /// Starts listening, and checking the price lists' files for a change
  /// (`priceListCheckSeconds`); in a jobs folder, calls again the webhooks its jobs left
  /// pending (`resumeWebhooks`), once the server answers their receivers' polls.
  ///
  /// - Returns: the port listened on (the system's choice when the configuration says 0).
  /// - Throws: `HTTPError.listen`.
  public func start() throws(HTTPError) -> Int {
    let port = try server.start(configuration.listen)
    let lists = configuration.priceLists
    if configuration.priceListCheckSeconds > 0 && !lists.files.isEmpty {
      let report = configuration.priceListsReloaded
      let started = PriceListWatch(lists, interval: configuration.priceListCheckSeconds) {
        report?($0)
      }
      watch.withLock { $0 = started }
    }
    resumeWebhooks()
    jobs.startClaiming()
    return port
  }

  /// Stops gracefully, within `drainSeconds`: new connections are refused, `/readyz` answers
  /// 503, requests already begun are finished (responses say `Connection: close`) until the
  /// drain period is nearly over (2 s before it, or a quarter of it when shorter); those still
  /// waiting or being worked then are answered 503 `http.stopping` and their work canceled (a
  /// document's worker killed); then the server stops; the price lists' files are no longer
  /// checked.
  ///
  /// Long jobs live in this process. From the start of the stop no job is taken (503
  /// `http.stopping`) and the queued ones are dropped; the running one may end until the drain
  /// period is nearly over, then it is canceled (no new item starts, those under way in
  /// document workers are cut short) and waited for until the period ends.
  /// Each job dropped or canceled is told to `events` (`service.interrupted`'s message); their
  /// webhooks are not called. Then the folder of the jobs' files is removed; a jobs folder
  /// (`jobsFolder`) is kept instead, each job's record as last written (a job still running
  /// at the drain's end, its work stuck, is written `failed`, `service.interrupted`, saying
  /// the stop left it running and what it had done, and the webhooks still pending, the
  /// stopped jobs' too, are called by the next start), and its lock released. Last, the
  /// sandbox's idle document workers are stopped and reaped.
  ///
  /// Bounded: `stop` returns within `drainSeconds` plus `stopMargin` (2 s) whatever the work
  /// does. Work stuck in a system call that cancellation cannot interrupt (a printer or a
  /// file system that never answers) is left running in the background, and so is a step of
  /// the stop itself that such a call holds (the stop runs on a thread of its own, which then
  /// goes on); the report names them. A process that leaves such work behind may not be able to
  /// go on normally (the threads it holds may be the ones Swift's tasks need): `imprint serve`
  /// exits then (`run`'s `stopped`).
  ///
  /// - Returns: what was still stuck when the stop returned (`StopReport.isComplete` when
  ///   nothing was).
  @discardableResult
  public func stop() -> StopReport {
    let deadline = ContinuousClock.now + .seconds(configuration.drainSeconds)
    let grace = min(Duration.seconds(2), .seconds(configuration.drainSeconds / 4))
    let progress = StopProgress()
    let ended = Self.bounded(until: deadline + .seconds(Self.stopMargin), name: "imprint-stop") {
      [self] in
      progress.begin("stopping the price lists' checks")
      watch.withLock { $0.take() }?.stop()
      progress.begin("canceling the queued jobs")
      jobs.beginStop()
      progress.begin("stopping the HTTP server")
      server.stop(until: deadline, grace: grace, drainSeconds: configuration.drainSeconds)
      progress.begin("waiting for the running job")
      jobs.stopRunning(
        until: deadline, grace: grace, drainSeconds: configuration.drainSeconds)
      progress.begin("closing the jobs folder")
      // The webhooks waiting to call again: a restart, or another replica, goes on with them;
      // a call under way is let end within the drain (its outcome recorded).
      deliveries.cancelAll(waitingUntil: deadline)
      jobs.close()
      // Nothing reads documents any more: the idle workers are reaped now, on the stop's path,
      // not wherever the service's last reference drops.
      progress.begin("reaping the idle document workers")
      sandbox.stopIdleWorkers()
      // The requests' threads end; the jobs' ended with the jobs folder.
      server.pool.shutDown()
      progress.begin(nil)
    }
    var report = StopReport()
    report.requests = server.workUnderWay
    report.jobs = jobs.running
    report.step = ended ? nil : progress.step
    return report
  }

  /// Serves until SIGTERM or SIGINT, then stops gracefully; SIGHUP reloads the price lists.
  ///
  /// The signals are taken over before the server listens, so that one sent as soon as the
  /// port is announced is handled, not the default action (ending the process at once). The
  /// stop runs on the thread that waited for the signal, not on Swift's task threads: work
  /// stuck in a system call may hold all of those, and the stop would then never begin.
  ///
  /// - Parameters:
  ///   - listening: called with the port once the server listens.
  ///   - stopped: called on that same thread with the stop's report once it returned (within
  ///     `drainSeconds` plus `stopMargin`), before `run` returns. When the report is not
  ///     complete, `run` may never return (the stuck work may hold the threads it would resume
  ///     on): `imprint serve` writes what was stuck and ends the process there.
  /// - Returns: the stop's report.
  /// - Throws: `HTTPError.listen`.
  @discardableResult
  public func run(
    listening: (Int) -> Void, stopped: @escaping @Sendable (StopReport) -> Void = { _ in }
  ) async throws(HTTPError) -> StopReport {
    let signals = StopSignal.install(hangUp: true)
    let port = try start()
    listening(port)
    return await signals.wait(
      hangUp: { [weak self] in self?.reloadPriceLists() },
      then: { [self] _ in
        let report = stop()
        stopped(report)
        return report
      })
  }

  /// Reloads every price list from its file; one that cannot be read keeps its previous list.
  ///
  /// `priceListsReloaded` is told.
  ///
  /// - Returns: what the reload did to each list, in name order.
  @discardableResult
  public func reloadPriceLists() -> [PriceListStore.Reload] {
    let reloads = configuration.priceLists.reload()
    configuration.priceListsReloaded?(reloads)
    return reloads
  }

  /// The 401 answer for a request whose head lacks the bearer token, when one is configured
  /// and the path is not one that goes without (`/healthz`, `/readyz`, `/metrics` when public).
  func refusal(method: String, path: String, authorization: String?) -> HTTPResponse? {
    guard let token = configuration.bearerToken, !["/healthz", "/readyz"].contains(path),
      !(path == "/metrics" && configuration.publicMetrics), !token.admits(authorization)
    else { return nil }
    return .error(ServiceError.unauthorized(path: path, presented: authorization != nil))
  }

  /// The response to `request`: its route's, or the error object of what went wrong.
  func respond(_ request: HTTPRequest) async -> HTTPResponse {
    do {
      return try await route(request)
    } catch {
      return .error(error)
    }
  }

  /// The routes and the methods each takes: what the router answers, and what the OpenAPI
  /// document must describe (a test compares the two).
  package static let routes: [String: [String]] = [
    "/healthz": ["GET", "HEAD"], "/readyz": ["GET", "HEAD"], "/metrics": ["GET", "HEAD"],
    "/openapi.json": ["GET", "HEAD"], "/v1/qr": ["POST"], "/v1/card": ["POST"],
    "/v1/inspect": ["POST"], "/v1/thumbnail": ["POST"], "/v1/convert": ["POST"],
    "/v1/quote": ["POST"], "/v1/batch": ["POST"], "/v1/prepare": ["POST"],
    "/v1/jobs/{id}": ["GET", "HEAD", "DELETE"],
    "/v1/jobs/{id}/files/{path}": ["GET", "HEAD"],
  ]

  /// The answer to a request that is quick to make (`GET` or `HEAD` of `/healthz`, `/readyz`,
  /// `/metrics`, `/openapi.json`), made on the server's event thread; nil for the others.
  func respondInline(_ request: HTTPRequest) -> HTTPResponse? {
    guard ["GET", "HEAD"].contains(request.method) else { return nil }
    struct Status: Encodable { var status: String }
    switch request.path {
    case "/healthz":
      return .json(Status(status: "ok"))
    case "/readyz":
      if server.isDraining { return .json(Status(status: "draining"), status: 503) }
      // Jobs cannot be taken or answered without the jobs database: a balancer sends the
      // requests elsewhere meanwhile.
      if let shared = jobs.shared, !shared.reachable.load(ordering: .acquiring) {
        return .json(Status(status: "jobs database unreachable"), status: 503)
      }
      return .json(Status(status: "ready"))
    case "/metrics":
      let (running, waiting) = server.pool.counts
      return .metrics(
        metrics.render(
          ServiceMetrics.Gauges(
            inFlight: server.inFlight, running: running, queued: waiting,
            queueLimit: server.pool.queueLimit, workerRestarts: sandbox.workersReplaced,
            workerCancels: sandbox.workersCanceled, workers: sandbox.workersAlive,
            priceLists: configuration.priceLists.files.count,
            priceListReloads: configuration.priceLists.reloadCounts, jobs: jobs.counts,
            priceListChecks: configuration.priceLists.checkCount,
            connections: server.openConnections, slowHeadsCut: server.headsCut,
            bodyBytes: (server.bodyBytesHeld, server.bodyBudget),
            jobsDatabaseErrors: jobs.shared?.errors.withLock { $0 })))
    case "/openapi.json":
      return HTTPResponse(status: 200, contentType: "application/json", body: openAPI)
    default:
      return nil
    }
  }

  private func route(_ request: HTTPRequest) async throws -> HTTPResponse {
    guard let key = Self.routeKey(request.path), let methods = Self.routes[key] else {
      throw ServiceError.notFound(method: request.method, path: request.path)
    }
    guard methods.contains(request.method) else {
      throw ServiceError.methodNotAllowed(
        method: request.method, path: request.path, allowed: methods)
    }
    switch key {
    case "/v1/qr":
      return try qr(request)
    case "/v1/card":
      return try await card(request)
    case "/v1/thumbnail":
      return try await thumbnail(request)
    case "/v1/convert":
      return try await convert(request)
    case "/v1/quote":
      return try await quote(request)
    case "/v1/inspect":
      return try await inspect(request)
    case "/v1/batch":
      return try await batch(request)
    case "/v1/prepare":
      return try await prepare(request)
    case "/v1/jobs/{id}", "/v1/jobs/{id}/files/{path}":
      return try job(request)
    default:
      // The quick routes, answered here only when the event thread did not (HEAD, GET).
      guard let answer = respondInline(request) else {
        preconditionFailure("route \(request.path) has no handler")
      }
      return answer
    }
  }
}

/// The service seen from its server's handler without keeping it alive.
private final class Weak: @unchecked Sendable {
  // `@unchecked Sendable`: set once in `ImprintService.init`, before the server starts.
  weak var service: ImprintService?
}
