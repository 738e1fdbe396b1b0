// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint serve`: the library's capabilities over HTTP (ImprintService).

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintService

enum ServeCommand {
  /// The options of `imprint serve`, each a setting of `ServiceSettings`.
  enum Key {
    static let config = OptionKey.file(
      "config", "<file>", "A JSON file of settings (see above).")
    static let listen = OptionKey.text(
      "listen", "<addr:port>", "IPv4 address and port (default 127.0.0.1:8080; port 0: any).")
    static let maxBody = OptionKey.integer(
      "max-body", "<bytes>", in: ServiceSettings.Range.maxBody,
      "The largest request body (default 33554432, 32 MiB).")
    static let maxPart = OptionKey.integer(
      "max-part", "<bytes>", in: ServiceSettings.Range.maxPart,
      "The largest part of a multipart body (default 16777216, 16 MiB).")
    static let bodyMemory = OptionKey.integer(
      "body-memory", "<bytes>", in: ServiceSettings.Range.bodyMemory,
      "Bytes of request bodies held at once; more are 503 (default: 1/16 of memory).")
    static let queue = OptionKey.integer(
      "queue", "<n>", in: ServiceSettings.Range.queue,
      "Requests waiting at most before 503 (default 64).")
    static let templates = TemplatesCommand.templates
    static let jobs = OptionKey.integer(
      "jobs", short: "j", "<n>", in: ServiceSettings.Range.jobs,
      "Requests worked at once, and document workers kept (default: all cores).")
    static let requestTimeout = OptionKey.number(
      "request-timeout", "<s>", in: ServiceSettings.Range.requestTimeout,
      "Seconds a request may take, body and queue included (default 120); then 503.")
    static let connectionTimeout = OptionKey.integer(
      "connection-timeout", "<s>", in: ServiceSettings.Range.connectionTimeout,
      "Seconds a connection may stay idle (default 30).")
    static let headTimeout = OptionKey.number(
      "head-timeout", "<s>", in: ServiceSettings.Range.headTimeout,
      "Seconds a request's head may take from its first byte; then closed (default 10).")
    static let maxConnections = OptionKey.integer(
      "max-connections", "<n>", in: ServiceSettings.Range.maxConnections,
      "Connections open at once; more wait in the backlog (default 1000).")
    static let maxConnectionsPerIP = OptionKey.integer(
      "max-connections-per-ip", "<n>", in: ServiceSettings.Range.maxConnectionsPerIp,
      "Connections open at once from one address; more are closed (default 200).")
    static let accessLog = OptionKey.flag(
      "access-log", "Write one JSON line per request on standard error.")
    static let tokenFile = OptionKey.file(
      "token-file", "<file>", "Ask every request but /healthz and /readyz for this bearer token.")
    static let publicMetrics = OptionKey.flag(
      "public-metrics", "Serve /metrics without the token.")
    static let jobQueue = OptionKey.integer(
      "job-queue", "<n>", in: ServiceSettings.Range.jobQueue,
      "Long jobs (/v1/batch, /v1/prepare) queued or running at most before 503 (default 8).")
    static let jobsKept = OptionKey.integer(
      "jobs-kept", "<n>", in: ServiceSettings.Range.jobsKept,
      "Finished long jobs kept; the oldest are removed (default 32).")
    static let jobsDisk = OptionKey.integer(
      "jobs-disk", "<bytes>", in: ServiceSettings.Range.jobsDisk,
      "Bytes the long jobs' files may hold (default 1073741824, 1 GiB).")
    static let jobLines = OptionKey.integer(
      "job-lines", "<n>", in: ServiceSettings.Range.jobLines,
      "Manifest lines one long job may have; more are 413 (default 10000).")
    static let jobTimeout = OptionKey.number(
      "job-timeout", "<s>", in: ServiceSettings.Range.jobTimeout,
      "Seconds one long job may run; then it is stopped and fails (default 3600).")
    static let jobsDir = OptionKey.directory(
      "jobs-dir", "<dir>",
      "Keep long jobs in this folder across restarts (one server a folder; default: none).")
    static let drainTimeout = OptionKey.number(
      "drain-timeout", "<s>", in: ServiceSettings.Range.drainTimeout,
      "Seconds a stop may take: requests finished, a running job let end (default 30).")
    static let priceListCheck = OptionKey.number(
      "price-list-check", "<s>", in: ServiceSettings.Range.priceListCheck,
      "Seconds between checks of the price-list files for a change (default 1; 0: none).")
    static let webhookAllowPrivate = OptionKey.flag(
      "webhook-allow-private",
      "Let callback URLs reach loopback and private addresses (never link-local).")
    static let webhookSecretFile = OptionKey.file(
      "webhook-secret-file", "<file>",
      "Sign webhook calls with this whsec_ secret (Standard Webhooks; mode 600 or 640).")
    static let passwordFile = OptionKey.file(
      "password-file", "<file>", "The user:password line for the printers that ask (mode 600).")
  }

  static let spec = CommandSpec(
    name: "serve",
    abstract: "Serve QR codes, cards and document inspection over HTTP.",
    discussion: """
      Routes: GET /healthz, GET /readyz, GET /metrics (Prometheus text), GET /openapi.json \
      (the OpenAPI document of them all), POST /v1/qr (options as a JSON body or query \
      parameters; PNG, SVG, PDF or EPS), POST /v1/card (profile JSON body, or multipart parts \
      profile and photo; template, side, format, locale as query parameters; PDF or PNG), \
      POST /v1/inspect (the document as the body or a multipart part 'file'; the JSON of \
      'imprint inspect --json'), POST /v1/thumbnail (the same upload; a PNG or JPEG of one \
      page), POST /v1/quote (multipart: the part 'order' and a part per file, named by its \
      path in the order; priced by a price list of the configuration), POST /v1/batch \
      (multipart: the part 'manifest' and a part per input file; 202 and a job id, run in the \
      background as 'imprint batch' runs it), POST /v1/prepare (the body of /v1/quote; 202 \
      and a job preparing the order as 'imprint prepare' does, sent to printer=NAME, a \
      printer of the configuration, when given; an Idempotency-Key header makes a retry \
      answer the same job), GET and DELETE /v1/jobs/ID (a job's state and \
      results; DELETE cancels a running one), GET /v1/jobs/ID/files/PATH (one of its \
      outputs); callback=URL on /v1/batch and /v1/prepare is POSTed the job's report when it \
      ends. Errors are JSON: {"error": {"code", "message", "hint"}} with 400, 401, 404, 405, \
      409, 410, 413, 415, 422, 503 or 507. \
      Documents are read in \
      sandboxed workers. HTTP/1.1 with keep-alive, no TLS: put a reverse proxy in front. \
      --config reads the options from a JSON file (the long options in camelCase, \
      priceLists: name to file, and printers: name to {uri, monoUri, scheduler}; \
      --password-file is printPasswordFile); options given on the command line win. The price lists are \
      reloaded when their files change (checked every --price-list-check seconds) and on \
      SIGHUP; a bad file keeps the previous list. SIGTERM or SIGINT stops taking \
      connections and jobs, lets the requests begun and a running job end within \
      --drain-timeout (else cancels them, killing their document workers: a request is \
      answered 503), and exits 0; 3 when work was still stuck (in a system call, at a \
      printer) 2 s past the drain, named on standard error.
      """,
    options: [
      Key.config, Key.listen, Key.maxBody, Key.maxPart, Key.bodyMemory, Key.queue, Key.templates,
      Key.jobs, Key.requestTimeout, Key.connectionTimeout, Key.headTimeout, Key.maxConnections,
      Key.maxConnectionsPerIP, Key.accessLog, Key.tokenFile, Key.publicMetrics, Key.jobQueue,
      Key.jobsKept, Key.jobsDisk, Key.jobLines, Key.jobTimeout, Key.jobsDir, Key.drainTimeout,
      Key.priceListCheck, Key.webhookAllowPrivate, Key.webhookSecretFile, Key.passwordFile,
    ] + DocumentCommands.sandboxLimitOptions
  ) { arguments, console in
    var settings =
      try arguments.value(Key.config).map { try ServiceSettings.load($0) }
      ?? ServiceSettings()
    settings.listen = arguments.value(Key.listen) ?? settings.listen
    settings.maxBody =
      try arguments.int(Key.maxBody) ?? settings.maxBody
    settings.maxPart =
      try arguments.int(Key.maxPart) ?? settings.maxPart
    settings.bodyMemory =
      try arguments.int(Key.bodyMemory) ?? settings.bodyMemory
    settings.queue = try arguments.int(Key.queue) ?? settings.queue
    settings.jobs = try arguments.int(Key.jobs) ?? settings.jobs
    settings.templates = arguments.value(Key.templates) ?? settings.templates
    settings.requestTimeout =
      try arguments.double(Key.requestTimeout)
      ?? settings.requestTimeout
    settings.connectionTimeout =
      try arguments.int(Key.connectionTimeout)
      ?? settings.connectionTimeout
    settings.headTimeout =
      try arguments.double(Key.headTimeout)
      ?? settings.headTimeout
    settings.maxConnections =
      try arguments.int(Key.maxConnections)
      ?? settings.maxConnections
    settings.maxConnectionsPerIp =
      try arguments.int(Key.maxConnectionsPerIP)
      ?? settings.maxConnectionsPerIp
    if arguments.flag(Key.accessLog) { settings.accessLog = true }
    settings.tokenFile = arguments.value(Key.tokenFile) ?? settings.tokenFile
    if arguments.flag(Key.publicMetrics) { settings.publicMetrics = true }
    settings.cpuLimit =
      try arguments.int(DocumentCommands.Key.cpuLimit) ?? settings.cpuLimit
    settings.memoryLimit =
      try arguments.int(DocumentCommands.Key.memoryLimit)
      ?? settings.memoryLimit
    settings.timeout =
      try arguments.double(DocumentCommands.Key.timeout) ?? settings.timeout
    settings.jobQueue =
      try arguments.int(Key.jobQueue) ?? settings.jobQueue
    settings.jobsKept =
      try arguments.int(Key.jobsKept) ?? settings.jobsKept
    settings.jobsDisk =
      try arguments.int(Key.jobsDisk) ?? settings.jobsDisk
    settings.jobLines =
      try arguments.int(Key.jobLines) ?? settings.jobLines
    settings.jobTimeout =
      try arguments.double(Key.jobTimeout)
      ?? settings.jobTimeout
    if let folder = arguments.value(Key.jobsDir) {
      guard !folder.isEmpty else {
        throw UsageError(message: "option '--jobs-dir' needs a folder's path, not ''")
      }
      settings.jobsDir = folder
    }
    settings.drainTimeout =
      try arguments.double(Key.drainTimeout)
      ?? settings.drainTimeout
    settings.priceListCheck =
      try arguments.double(Key.priceListCheck)
      ?? settings.priceListCheck
    if arguments.flag(Key.webhookAllowPrivate) { settings.webhookAllowPrivate = true }
    settings.webhookSecretFile =
      arguments.value(Key.webhookSecretFile) ?? settings.webhookSecretFile
    settings.printPasswordFile = arguments.value(Key.passwordFile) ?? settings.printPasswordFile

    let address: ListenAddress
    do throws(HTTPError) {
      address = try ListenAddress(parsing: settings.listen ?? "127.0.0.1:8080")
    } catch {
      // Only --listen can be malformed here: ServiceSettings.load checked the file's.
      throw UsageError(message: error.message)
    }
    var configuration = ServiceConfiguration(
      listen: address, workerExecutable: try DocumentCommands.workerExecutable(console),
      placeholder: try DeploymentResources.placeholder())
    try configuration.apply(settings)
    configuration.fonts = try DeploymentResources.fonts()
    configuration.templatesFolder = try ResourceLocator.checkedTemplatesDirectory(
      explicit: settings.templates)
    let events = console.stderr
    configuration.events = { events.write("serve: " + SafeText.escaped($0) + "\n") }
    configuration.jobEvents = { events.write($0 + "\n") }
    if settings.accessLog == true {
      let sink = console.stderr
      configuration.accessLog = { sink.write($0.logLine + "\n") }
    }
    let stderr = console.stderr
    configuration.priceListsReloaded = { reloads in
      for reload in reloads {
        if let error = reload.error {
          stderr.write(
            "error: price list '\(reload.name)' not reloaded, the previous one is kept: "
              + SafeText.escaped(error.message) + "\n")
        } else {
          stderr.write("serve: price list '\(reload.name)' reloaded from \(reload.file)\n")
        }
      }
    }
    let service = try ImprintService(configuration)
    let drain = configuration.drainSeconds
    try await service.run(
      listening: { port in
        stderr.write("serve: listening on http://\(address.host):\(port)\n")
      },
      stopped: { report in
        guard !report.isComplete else { return }
        // Work stuck in a system call may hold the threads this command would go on on: the
        // process ends here, on the stop's own thread, saying what was left.
        console.report(ServiceError.stopIncomplete(stuck: report.stuck, seconds: drain))
        fflush(nil)
        _exit(ImprintCLI.stopIncomplete)
      })
    console.stderr.write("serve: stopped\n")
    return ImprintCLI.success
  }
}
