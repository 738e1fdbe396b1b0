// SPDX-License-Identifier: Apache-2.0
// ImprintTestSupport: an `ImprintService` started in the test's own process, on a port the
// system chose: what a route test talks to (docs/api-testing.md, "How to write a route test").

import Foundation
import ImprintCards
import ImprintCore
import ImprintHTTP
import ImprintService
import Synchronization

#if canImport(Testing)
  import Testing
#endif

/// An `ImprintService` made as `imprint serve` makes it, listening on `127.0.0.1:0` in this
/// process; stopped by `stop()` (or when released).
///
/// The settings are `imprint serve`'s (`ServiceSettings`, one field per option: `--max-part
/// 100000` is `settings.maxPart = 100000`), applied as the command applies them; `adjust` may
/// change the configuration after that (a callback, a short drain). Document workers are the
/// built `imprint` executable, reached through a link of the service's own, so that its workers
/// can be told from any other sandbox's.
///
/// Nothing process-wide is touched: no signal handler is installed (`start`, not `run`), so
/// SIGTERM and SIGHUP stay the test runner's; a test asks for a reload with
/// `service.reloadPriceLists()`. `stop()` checks that the service left nothing behind: its port
/// refuses connections, none of its document workers is alive, and its report says no request
/// or job was still under way (the server's threads are the stop's to end: they cannot be told
/// apart in /proc, where a new thread keeps its creator's name).
public final class InProcessService: LoopbackServer, @unchecked Sendable {
  // @unchecked: `stopped` is touched by the test that owns the service, one call at a time.
  /// The service.
  public let service: ImprintService
  /// The port it listens on.
  public let port: Int
  /// The lines `imprint serve` would have written on standard error (events, the jobs folder's
  /// JSON lines, price list reloads, the access log when `settings.accessLog`).
  public var log: [String] { lines.value.withLock { $0 } }
  /// The access log's lines alone (also in `log`), without the events a start may write, such
  /// as the removal of the jobs folder another test's server left behind when it was killed.
  public var accessLog: [String] { accessLines.value.withLock { $0 } }
  private let lines = Lines()
  private let accessLines = Lines()
  /// The folder of the link workers are started through.
  private let workerFolder = TemporaryFolder()
  private var stopped = false

  /// Makes the service and starts it.
  ///
  /// - Parameters:
  ///   - settings: `imprint serve`'s settings (`--config` keys); none by default.
  ///   - adjust: changes made to the configuration last.
  /// - Throws: what `ServiceConfiguration.apply`, `ImprintService.init` and `start` throw.
  public init(
    _ settings: ServiceSettings = ServiceSettings(),
    adjust: (inout ServiceConfiguration) -> Void = { _ in }
  ) throws {
    let worker = workerFolder.file("imprint")
    try FileManager.default.createSymbolicLink(
      atPath: worker, withDestinationPath: imprintExecutable)
    var configuration = ServiceConfiguration(
      listen: try ListenAddress(parsing: "127.0.0.1:0"), workerExecutable: worker,
      placeholder: try CardInput.shippedPlaceholder())
    try configuration.apply(settings)
    configuration.templatesFolder = settings.templates
    let lines = lines
    configuration.events = { line in lines.append("serve: " + SafeText.escaped(line)) }
    configuration.jobEvents = { line in lines.append(line) }
    configuration.priceListsReloaded = { reloads in
      lines.value.withLock {
        for reload in reloads {
          $0.append(
            reload.error.map {
              "error: price list '\(reload.name)' not reloaded, the previous one is kept: "
                + SafeText.escaped($0.message)
            }
              ?? "serve: price list '\(reload.name)' reloaded from \(reload.file)")
        }
      }
    }
    if settings.accessLog == true {
      let accessLines = accessLines
      configuration.accessLog = { record in
        lines.append(record.logLine)
        accessLines.append(record.logLine)
      }
    }
    adjust(&configuration)
    service = try ImprintService(configuration)
    do {
      port = try service.start()
    } catch {
      service.stop()
      throw error
    }
  }

  /// Makes the service with the settings `change` sets (`{ $0.maxPart = 100_000 }`).
  public convenience init(
    settings change: (inout ServiceSettings) -> Void,
    adjust: (inout ServiceConfiguration) -> Void = { _ in }
  ) throws {
    var settings = ServiceSettings()
    change(&settings)
    try self.init(settings, adjust: adjust)
  }

  deinit {
    // A test that ended early (a failed `#require`): stopped here, on whatever thread.
    guard !stopped else { return }
    service.stop()
  }

  /// The pids of the document workers this service started and that are still alive.
  public var workers: [Int32] {
    let link = workerFolder.file("imprint")
    return ProcessTree.children(of: getpid()).filter { pid in
      procText("/proc/\(pid)/cmdline")?.hasPrefix(link + "\0") == true
    }
  }

  /// Stops the service (`ImprintService.stop`, the drain of `imprint serve`'s SIGTERM, on a
  /// thread of its own) and checks that it left nothing running; a second call does nothing.
  ///
  /// - Returns: the stop's report (`isComplete` when nothing was stuck).
  @discardableResult
  public func stop() async -> StopReport {
    guard !stopped else { return StopReport() }
    stopped = true
    let service = service
    // This process's socket listening on the port, by inode: once closed, another test's
    // server may listen on the same port number, which a connection could not tell apart.
    let listener = held(listeningSockets(port: port), by: [getpid()])
    let report = await onOwnThread { service.stop() }
    #if canImport(Testing)
      // Within a moment: the listening socket may be closed just after the stop returns.
      let port = port
      #expect(!listener.isEmpty, "no socket of this process listened on port \(port)")
      #expect(
        await eventually(tries: 200) { held(listener, by: [getpid()]).isEmpty },
        "port \(port)'s listening socket is still open")
      let workers = self.workers
      #expect(
        await eventually(tries: 200) { self.workers.isEmpty }, "document workers left: \(workers)")
    #endif
    return report
  }
}

/// Lines appended from any thread (the service's callbacks).
private final class Lines: Sendable {
  let value = Mutex<[String]>([])
  func append(_ line: String) { value.withLock { $0.append(line) } }
}
