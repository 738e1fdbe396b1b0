// SPDX-License-Identifier: Apache-2.0
// ImprintCLI: `imprint serve`: the library's capabilities over HTTP (ImprintService).

import Foundation
import ImprintCore
import ImprintHTTP
import ImprintService

enum ServeCommand {
  /// The options of `imprint serve` beside its settings (`ServiceSetting.all`, each an option).
  enum Key {
    static let config = OptionKey.file(
      "config", "<file>", "A JSON file of settings (see above).")
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
    options: [Key.config as any OptionDeclaration]
      + ServiceSetting.all.map(OptionKey<Any>.init)
  ) { arguments, console in
    var settings =
      try arguments.value(Key.config).map { try ServiceSettings.load($0) }
      ?? ServiceSettings()
    // The command line wins over the file.
    for setting in ServiceSetting.all { try setting.read(arguments, into: &settings) }

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
        console.report(ServerError.stopIncomplete(stuck: report.stuck, seconds: drain))
        fflush(nil)
        _exit(ImprintCLI.stopIncomplete)
      })
    console.stderr.write("serve: stopped\n")
    return ImprintCLI.success
  }
}

extension OptionKey {
  /// The option of a setting of `imprint serve` (`ServiceSetting`), declared there once with
  /// its `--config` key: `Value` must be what the setting holds (`String`, `Bool`, `Int`,
  /// `Double`), or `Any` for a spec's list.
  init(_ setting: ServiceSetting) {
    let kind: OptionKind =
      switch setting.value {
      case .address, .text: .text
      case .file: .file
      case .folder: .directory
      case .flag: .flag
      case .integer(_, let range): .integer(range)
      case .number(_, let range): .number(range)
      }
    self.init(
      spec: OptionSpec(
        name: setting.option, short: setting.short, value: setting.placeholder,
        help: setting.help, kind: kind))
  }
}

extension ServiceSetting {
  /// Sets the field of `settings` this setting names when its option was given.
  ///
  /// - Throws: `UsageError` for a value out of the setting's range, or an empty folder where
  ///   one is needed.
  func read(_ arguments: ParsedArguments, into settings: inout ServiceSettings)
    throws(UsageError)
  {
    switch value {
    case .address(let field), .file(let field), .text(let field):
      settings[keyPath: field] = arguments.value(OptionKey(self)) ?? settings[keyPath: field]
    case .folder(let field, let nonEmpty):
      guard let folder = arguments.value(OptionKey(self)) else { return }
      if nonEmpty && folder.isEmpty {
        throw UsageError(message: "option '--\(option)' needs a folder's path, not ''")
      }
      settings[keyPath: field] = folder
    case .flag(let field):
      if arguments.flag(OptionKey(self)) { settings[keyPath: field] = true }
    case .integer(let field, _):
      settings[keyPath: field] = try arguments.int(OptionKey(self)) ?? settings[keyPath: field]
    case .number(let field, _):
      settings[keyPath: field] =
        try arguments.double(OptionKey(self)) ?? settings[keyPath: field]
    }
  }
}
