// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint serve`: the library's capabilities over HTTP (ImprintService).

import Foundation
import ImprintCore
import ImprintService

enum ServeCommand {
  static let spec = CommandSpec(
    name: "serve",
    abstract: "Serve QR codes, cards and document inspection over HTTP.",
    discussion: """
      Routes: GET /healthz, GET /readyz, GET /metrics (Prometheus text), GET /openapi.json \
      (the OpenAPI document of them all), POST /v1/qr (options as a JSON body or query \
      parameters; PNG, SVG, PDF or EPS), POST /v1/card (profile JSON body; template, side, \
      format, locale as query parameters; PDF or PNG), POST /v1/inspect (the document as the \
      body; the JSON of 'imprint inspect --json'). Errors are JSON: {"error": {"code", \
      "message", "hint"}} with 400, 404, 405, 413, 415, 422 or 503. Documents are read in \
      sandboxed workers. HTTP/1.1 with keep-alive, no TLS: put a reverse proxy in front. \
      SIGTERM or SIGINT stops taking connections, finishes the requests begun, and exits 0.
      """,
    options: [
      .value(
        "listen", "<addr:port>", "IPv4 address and port (default 127.0.0.1:8080; port 0: any)."),
      .value("max-body", "<bytes>", "The largest request body (default 33554432, 32 MiB)."),
      .value("queue", "<n>", "Requests waiting at most before 503 (default 64)."),
      .value(
        "templates", "<dir>", "Folder of designs (default: IMPRINT_TEMPLATES, else Imprint's own)."),
      .value(
        "jobs", short: "j", "<n>",
        "Requests worked at once, and document workers kept (default: all cores)."),
      .flag("access-log", "Write one JSON line per request on standard error."),
    ] + DocumentCommands.limitOptions.filter { !["password", "jobs"].contains($0.name) }
  ) { arguments, console in
    let listenText = arguments.value("listen") ?? "127.0.0.1:8080"
    let address: ListenAddress
    do throws(ServiceError) {
      address = try ListenAddress(parsing: listenText)
    } catch {
      throw UsageError(message: error.message)
    }
    var configuration = ServiceConfiguration(
      listen: address, workerExecutable: try DocumentCommands.workerExecutable(console),
      placeholder: try DeploymentResources.placeholder())
    configuration.maximumBodyBytes =
      try arguments.int("max-body", in: 1...(1 << 31)) ?? configuration.maximumBodyBytes
    configuration.queueLength =
      try arguments.int("queue", in: 0...100_000) ?? configuration.queueLength
    configuration.concurrentRequests =
      try arguments.int("jobs", in: 1...256) ?? configuration.concurrentRequests
    configuration.limits = try DocumentCommands.limits(arguments)
    configuration.fonts = try DeploymentResources.fonts()
    configuration.templatesFolder = try ResourceLocator.checkedTemplatesDirectory(
      explicit: arguments.value("templates"))
    if arguments.flag("access-log") {
      let sink = console.stderr
      configuration.accessLog = { sink.write($0.logLine + "\n") }
    }
    let service = try ImprintService(configuration)
    try await service.run { port in
      console.stderr.write("serve: listening on http://\(address.host):\(port)\n")
    }
    console.stderr.write("serve: stopped\n")
    return ImprintCLI.success
  }
}
