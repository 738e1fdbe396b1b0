// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: `POST /v1/prepare` against the service in this process: an order prepared as
// `imprint prepare` prepares it (pdfinfo, qpdf --check, the CLI's bytes), sent to printers named
// in the server's configuration (ippeveprinter: what it received is what the tickets say; a
// colour split on two printers; credentials from the server's password file), printed once
// however often a request is retried with its Idempotency-Key; unknown printers, addresses,
// keys reused and bad requests refused with their codes, nothing printed.

import Foundation
import ImprintService
import ImprintTestSupport
import Testing

private let samples = repositoryRoot + "/assets/samples/"

/// USD rates for mono and colour on A4 and A3, and stapling.
private let prices = #"""
  {"schemaVersion":1,"store":"S","version":"v1","currency":"USD",
   "rates":{"default":{"mono":{"simplex":10,"duplex":8},"color":{"simplex":30,"duplex":25}}},
   "paper":{"A4":{"plain":2},"A3":{"plain":4}},
   "extras":{"staple":{"per":"copy","amount":10}}}
  """#

private func write(_ text: String, to path: String) throws {
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// A server whose configuration names the price list `shop` (`prices` above) and `printers`
/// (name → its JSON object), with `extra` settings.
private func server(
  _ folder: TemporaryFolder, printers: [String: String] = [:], extra: String = ""
) throws -> InProcessService {
  try write(prices, to: folder.file("prices.json"))
  let entries = printers.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }
  try write(
    #"{"priceLists": {"shop": "prices.json"}, "printers": {\#(entries.joined(separator: ", "))}\#(extra)}"#,
    to: folder.file("serve.json"))
  return try InProcessService(try ServiceSettings.load(folder.file("serve.json")))
}

/// Writes an order of `files` (their JSON objects) and the PDFs it names: `a.pdf`, five A4
/// pages, page 4 colour; `b.pdf`, three A4 pages.
private func order(_ folder: TemporaryFolder, _ files: [String]) throws -> String {
  try HostileDocuments.write(
    NumberedPages.written(Array(repeating: .a4, count: 5), colorPages: [4]),
    to: folder.file("a.pdf"))
  try HostileDocuments.write(
    NumberedPages.written(Array(repeating: .a4, count: 3)), to: folder.file("b.pdf"))
  let path = folder.file("order.json")
  try write(
    #"{"schemaVersion":1,"store":"S","files":[\#(files.joined(separator: ","))]}"#, to: path)
  return path
}

/// Posts `/v1/prepare` + `query` with the order at `order` and `files` (part name = a file in
/// `folder`), and `key` as its Idempotency-Key.
private func postPrepare(
  _ query: String, order: String, files: [String], key: String? = nil,
  on server: InProcessService, in folder: TemporaryFolder
) async throws -> HTTPExchange {
  try await server.request(
    "POST", "/v1/prepare" + query, headers: key.map { ["Idempotency-Key: \($0)"] } ?? [],
    form: [.file("order", path: order)] + files.map { .file($0, path: folder.file($0)) })
}

/// The job's `report.json`, fetched.
private func report(_ id: String, on server: InProcessService) async throws -> [String: Any] {
  let fetched = try await server.get("/v1/jobs/\(id)/files/report.json")
  #expect(fetched.status == 200, "\(fetched.text)")
  #expect(fetched.contentType == "application/json")
  return try #require(fetched.json)
}

/// Fetches job output `name` into `folder` and returns its path.
private func fetch(
  _ name: String, of id: String, on server: InProcessService, in folder: TemporaryFolder
) async throws -> String {
  let fetched = try await server.get("/v1/jobs/\(id)/files/\(name)")
  #expect(fetched.status == 200, "\(name): \(fetched.text)")
  let path = folder.file("fetched-\(id)-" + name)
  try Data(fetched.body).write(to: URL(fileURLWithPath: path))
  return path
}

/// The files `printer` has spooled (one a job it printed).
private func spooled(_ printer: TestPrinter) -> [String] {
  ((try? FileManager.default.contentsOfDirectory(atPath: printer.spool)) ?? []).filter {
    $0.hasSuffix(".pdf")
  }.sorted()
}

@Suite(
  "service routes: prepare and print", .liveHandlesChecked, .onTestThreads,
  .tags(.slow),
  .skippedWhenQuick)
struct PrepareRouteTests {
  @Test("without a printer: the job's files are imprint prepare's, whole PDFs (pdfinfo, qpdf)")
  func prepareOnly() async throws {
    let folder = TemporaryFolder()
    let config = folder.file("serve.json")
    try write(
      #"{"priceLists": {"booster": "\#(samples)prices-booster.json"}}"#, to: config)
    let server = try InProcessService(try ServiceSettings.load(config))
    let documents = [
      "documents/course-notes.pdf", "documents/handout.pdf", "documents/poster-photo.jpg",
    ]
    let posted = try await server.request(
      "POST", "/v1/prepare?prices=booster&previews=true&previewSize=64",
      form: [.file("order", path: samples + "order-booster.json")]
        + documents.map { .file($0, path: samples + $0) })
    let id = try acceptedID(posted)
    #expect(posted.json?["kind"] as? String == "prepare")
    let done = try await waitForJob(id, on: server)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")
    #expect(done.json?["kind"] as? String == "prepare")
    let files = try #require(done.json?["files"] as? [String])
    #expect(files.contains("report.json"), "\(files)")
    // Nothing but the outputs is served: the order, the price list and the uploads stay in.
    #expect(!files.contains { $0.contains("order") || $0.hasPrefix("documents/") }, "\(files)")
    for name in ["../order.json", "../files/documents/handout.pdf", "../print-journal.json"] {
      let escaped = name.replacingOccurrences(of: "/", with: "%2F")
      let refused = try await server.request("GET", "/v1/jobs/\(id)/files/\(escaped)")
      #expect(refused.status == 422, "\(name): \(refused.text)")
    }

    // The same order prepared by the CLI.
    let local = folder.file("local")
    for input in documents + ["order-booster.json", "prices-booster.json"] {
      let target = local + "/" + input
      try FileManager.default.createDirectory(
        atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try FileManager.default.copyItem(atPath: samples + input, toPath: target)
    }
    let cli = try runTool(
      imprintExecutable,
      [
        "prepare", local + "/order-booster.json", "--prices", local + "/prices-booster.json",
        "-o", folder.file("out"), "--previews", "--preview-size", "64", "--json",
      ])
    #expect(cli.status == 0, "\(cli.stderr)")
    let mine = try #require(
      try JSONSerialization.jsonObject(with: Data(cli.stdoutBytes)) as? [String: Any])
    let served = try await report(id, on: server)
    #expect((served["quote"] as? NSDictionary) == (mine["quote"] as? NSDictionary))
    let servedFiles = try #require(served["files"] as? [[String: Any]])
    let cliFiles = try #require(mine["files"] as? [[String: Any]])
    #expect(servedFiles.count == 3 && cliFiles.count == 3)
    for (file, cliFile) in zip(servedFiles, cliFiles) {
      let document = try #require(file["document"] as? String)
      // Paths are the job's, relative: fetched as they are given.
      #expect(!document.contains("/"), "\(document)")
      #expect((file["ticket"] as? NSDictionary) == (cliFile["ticket"] as? NSDictionary))
      let ticket = try #require(file["ticket"] as? [String: Any])
      let path = try await fetch(document, of: id, on: server, in: folder)
      let pages =
        (ticket["impressions"] as? Int ?? -1) + (ticket["blankBacks"] as? Int ?? -1)
      #expect(try pdfInfo(path)["Pages"] == "\(pages)", "\(document)")
      let check = try runTool("qpdf", ["--check", path])
      #expect(check.status == 0, "\(document): \(check.stdout)")
      // Byte for byte the CLI's.
      let cliPath = try #require(cliFile["document"] as? String)
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: path))
          == Data(contentsOf: URL(fileURLWithPath: cliPath)), "\(document)")
      let previews = try #require(file["previews"] as? [String])
      #expect(previews.count == (cliFile["previews"] as? [String])?.count)
      for preview in previews {
        #expect(files.contains(preview), "\(preview)")
      }
      let ticketPath = try #require(file["ticketPath"] as? String)
      let fetchedTicket = try await fetch(ticketPath, of: id, on: server, in: folder)
      #expect(
        (try JSONSerialization.jsonObject(
          with: Data(contentsOf: URL(fileURLWithPath: fetchedTicket)))
          as? NSDictionary) == (file["ticket"] as? NSDictionary))
    }
    #expect(served["jobs"] == nil)
    #expect(await server.stop().isComplete)
  }

  @Test("a named printer receives what the tickets say; waited for; once however often retried")
  func printOnce() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let server = try server(folder, printers: ["front": #"{"uri": "\#(printer.uri)"}"#])
    let order = try order(
      folder,
      [
        #"{"path":"a.pdf","copies":2,"duplex":"long-edge","extras":["staple"]}"#,
        #"{"path":"b.pdf","color":"mono"}"#,
      ])
    let key = "\"\(UUID().uuidString)\""
    let query = "?prices=shop&printer=front&wait=true"
    let first = try await postPrepare(
      query, order: order, files: ["a.pdf", "b.pdf"], key: key, on: server, in: folder)
    let id = try acceptedID(first)
    // A retry (a new multipart boundary, the parts in another order): the
    // same job, whatever state it is in.
    let retried = try await server.request(
      "POST", "/v1/prepare" + query, headers: ["Idempotency-Key: \(key)"],
      form: [
        .file("b.pdf", path: "\(folder.file("b.pdf"))"),
        .file("a.pdf", path: "\(folder.file("a.pdf"))"), .file("order", path: order),
      ])
    #expect(retried.status == 202, "\(retried.text)")
    #expect(retried.json?["job"] as? String == id)
    #expect(retried.headers["location"] == "/v1/jobs/\(id)")
    let done = try await waitForJob(id, on: server)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")

    let report = try await report(id, on: server)
    let files = try #require(report["files"] as? [[String: Any]])
    let jobs = try #require(report["jobs"] as? [[String: Any]])
    #expect(files.count == 2 && jobs.count == 2)
    #expect(jobs.map { $0["state"] as? String } == ["completed", "completed"])
    #expect(jobs.map { $0["printer"] as? String } == [printer.uri, printer.uri])
    let received = printer.jobs(count: 2)
    #expect(received.count == 2)
    for (file, job) in zip(files, jobs) {
      let ipp = try #require((file["ticket"] as? [String: Any])?["ipp"] as? [String: Any])
      let jobID = try #require(job["jobID"] as? Int)
      let got = try #require(received[jobID], "job \(jobID) not received")
      #expect(got.attributes["copies"] == "\(ipp["copies"] as? Int ?? -1)")
      #expect(got.attributes["sides"] == ipp["sides"] as? String)
      #expect(got.attributes["media"] == ipp["media"] as? String)
      #expect(got.attributes["print-color-mode"] == ipp["print-color-mode"] as? String)
      // The bytes printed are the job's prepared file.
      let document = try #require(file["document"] as? String)
      #expect(job["document"] as? String == document)
      let fetched = try await fetch(document, of: id, on: server, in: folder)
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: got.file))
          == Data(contentsOf: URL(fileURLWithPath: fetched)))
    }
    // The tickets' values, independently: 2 copies of a duplex stapled A4 file, 1 mono.
    let first0 = try #require(received[jobs[0]["jobID"] as? Int ?? -1])
    #expect(first0.attributes["copies"] == "2")
    #expect(first0.attributes["sides"] == "two-sided-long-edge")
    #expect(first0.attributes["finishings"] == "staple")
    #expect(first0.attributes["media"] == "iso_a4_210x297mm")
    let second0 = try #require(received[jobs[1]["jobID"] as? Int ?? -1])
    #expect(second0.attributes["print-color-mode"] == "monochrome")
    #expect(second0.attributes["copies"] == "1")
    #expect(try pdfInfo(first0.file)["Pages"] == "6")
    #expect(try pdfInfo(second0.file)["Pages"] == "3")

    // Retried once the job ended: the same job, done; nothing printed again.
    let late = try await postPrepare(
      query, order: order, files: ["a.pdf", "b.pdf"], key: key, on: server, in: folder)
    #expect(late.status == 202, "\(late.text)")
    #expect(late.json?["job"] as? String == id)
    #expect(late.json?["state"] as? String == "done")
    // The key with another request: refused, naming the job it made.
    let other = try await postPrepare(
      "?prices=shop&printer=front", order: order, files: ["a.pdf", "b.pdf"], key: key,
      on: server, in: folder)
    #expect(other.status == 422, "\(other.text)")
    #expect(other.errorCode == "http.idempotencyKeyReused")
    #expect(other.text.contains(id))
    // A malformed key: refused before anything is done.
    for bad in ["\"open", "\"\"", "\"a\\b\"", String(repeating: "k", count: 256)] {
      let malformed = try await postPrepare(
        query, order: order, files: ["a.pdf", "b.pdf"], key: bad, on: server, in: folder)
      #expect(malformed.status == 400, "\(bad): \(malformed.text)")
      #expect(malformed.errorCode == "http.invalidIdempotencyKey", "\(bad)")
    }
    #expect(spooled(printer).count == 2)
    // The job removed: the key is not run again.
    #expect(try await server.request("DELETE", "/v1/jobs/\(id)").status == 200)
    let gone = try await postPrepare(
      query, order: order, files: ["a.pdf", "b.pdf"], key: key, on: server, in: folder)
    #expect(gone.status == 410, "\(gone.text)")
    #expect(gone.errorCode == "http.idempotentJobGone")
    #expect(spooled(printer).count == 2)
    // Without a key, every request is a new job: printed again.
    let again = try acceptedID(
      try await postPrepare(query, order: order, files: ["a.pdf", "b.pdf"], on: server, in: folder))
    #expect(again != id)
    #expect(try await waitForJob(again, on: server).json?["state"] as? String == "done")
    #expect(spooled(printer).count == 4)
    #expect(await server.stop().isComplete)
  }

  @Test("splitColor: the colour part to the printer's uri, the mono part to its monoUri")
  func splitToTwoPrinters() async throws {
    let folder = TemporaryFolder()
    let monoFolder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let monoPrinter = try TestPrinter(folder: monoFolder)
    let server = try server(
      folder,
      printers: ["shop": #"{"uri": "\#(printer.uri)", "monoUri": "\#(monoPrinter.uri)"}"#])
    // Five A4 pages, page 4 colour: duplex sheets [1, 2] [3, 4] [5]; the second is colour.
    let order = try order(folder, [#"{"path":"a.pdf","color":"auto","duplex":"long-edge"}"#])
    let id = try acceptedID(
      try await postPrepare(
        "?printer=shop&splitColor=true&wait=true", order: order, files: ["a.pdf"], on: server,
        in: folder))
    let done = try await waitForJob(id, on: server)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")
    let report = try await report(id, on: server)
    let files = try #require(report["files"] as? [[String: Any]])
    #expect(files.map { $0["document"] as? String } == ["1-a.color.pdf", "1-a.mono.pdf"])
    let jobs = try #require(report["jobs"] as? [[String: Any]])
    #expect(jobs.map { $0["printer"] as? String } == [printer.uri, monoPrinter.uri])
    #expect(jobs.map { $0["state"] as? String } == ["completed", "completed"])
    let colorJob = try #require(printer.jobs(count: 1).values.first)
    let monoJob = try #require(monoPrinter.jobs(count: 1).values.first)
    #expect(try pdfInfo(colorJob.file)["Pages"] == "2")
    #expect(colorJob.attributes["print-color-mode"] == "auto")
    #expect(try pdfInfo(monoJob.file)["Pages"] == "4")
    #expect(monoJob.attributes["print-color-mode"] == "monochrome")
    #expect(spooled(printer).count == 1 && spooled(monoPrinter).count == 1)
    #expect(await server.stop().isComplete)
  }

  @Test("a configured CUPS queue on its scheduler: printed through it; a queue it lacks fails")
  func queueOnScheduler() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let scheduler = try TestScheduler(folder: folder)
    try scheduler.addQueue("shop", device: printer.uri)
    let server = try server(
      folder,
      printers: [
        "counter": #"{"uri": "shop", "scheduler": "\#(scheduler.address)"}"#,
        "missing": #"{"uri": "back-room", "scheduler": "\#(scheduler.address)"}"#,
      ])
    let order = try order(folder, [#"{"path":"b.pdf","copies":3,"duplex":"long-edge"}"#])
    let id = try acceptedID(
      try await postPrepare(
        "?printer=counter&wait=true", order: order, files: ["b.pdf"], on: server, in: folder))
    let done = try await waitForJob(id, on: server)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")
    let jobs = try #require(try await report(id, on: server)["jobs"] as? [[String: Any]])
    #expect(jobs.count == 1)
    #expect(jobs.first?["printer"] as? String == "shop")
    #expect(jobs.first?["state"] as? String == "completed")
    // The scheduler's own list has the job, as shop-ID; its printer got the copies and sides.
    let listed = try runTool("lpstat", ["-h", scheduler.address, "-W", "all", "-o"])
    let jobID = try #require(jobs.first?["jobID"] as? Int)
    #expect(listed.stdout.hasPrefix("shop-\(jobID) "), "\(listed.stdout)")
    let received = try #require(printer.jobs(count: 1).values.first)
    #expect(received.attributes["copies"] == "3")
    #expect(received.attributes["sides"] == "two-sided-long-edge")
    #expect(try pdfInfo(received.file)["Pages"] == "4")

    // A queue the scheduler does not have: looked up before anything is prepared; the job
    // fails with the CLI's error, nothing prepared, nothing sent.
    let failing = try acceptedID(
      try await postPrepare(
        "?printer=missing", order: order, files: ["b.pdf"], on: server, in: folder))
    let failed = try await waitForJob(failing, on: server)
    #expect(failed.json?["state"] as? String == "failed", "\(failed.text)")
    let error = try #require(failed.json?["error"] as? [String: Any])
    #expect(error["code"] as? String == "print.unknownPrinter", "\(error)")
    // Named as the client named it, never by the server's queue.
    #expect((error["message"] as? String)?.contains("'missing'") == true, "\(error)")
    #expect(!"\(error)".contains("back-room"), "\(error)")
    #expect(failed.json?["files"] as? [String] == [])
    #expect(spooled(printer).count == 1)
    #expect(await server.stop().isComplete)
  }

  @Test("wait: a print job the printer aborts fails the job with print.aborted, its report kept")
  func abortedJob() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder, hook: "exit 3")
    let server = try server(folder, printers: ["front": #"{"uri": "\#(printer.uri)"}"#])
    let order = try order(folder, [#"{"path":"b.pdf","color":"mono"}"#])
    let id = try acceptedID(
      try await postPrepare(
        "?printer=front&wait=true&waitTimeout=60", order: order, files: ["b.pdf"], on: server,
        in: folder))
    let failed = try await waitForJob(id, on: server)
    #expect(failed.json?["state"] as? String == "failed", "\(failed.text)")
    let error = try #require(failed.json?["error"] as? [String: Any])
    #expect(error["code"] as? String == "print.aborted", "\(error)")
    // The message names the file as the order does, not the server's folder.
    let message = try #require(error["message"] as? String)
    #expect(message.contains("'b.pdf'") && !message.contains(id), "\(message)")
    #expect(
      failed.json?["files"] as? [String]
        == ["1-b.pdf", "1-b.ticket.json", "report.json"], "\(failed.text)")
    let jobs = try #require(try await report(id, on: server)["jobs"] as? [[String: Any]])
    #expect(jobs.first?["state"] as? String == "aborted", "\(jobs)")
    #expect(spooled(printer).count == 1)

    // A damaged upload fails its job with the CLI's error, named by its path in the order
    // (the job's folder left out), before anything is sent.
    let damaged = folder.file("damaged-order.json")
    try write(#"{"schemaVersion":1,"store":"S","files":[{"path":"docs/t.pdf"}]}"#, to: damaged)
    let broken = try acceptedID(
      try await server.request(
        "POST", "/v1/prepare?printer=front",
        form: [
          .file("order", path: damaged),
          .file("docs/t.pdf", path: "\(fixturesFolder)/Documents/truncated.pdf"),
        ]))
    let brokenJob = try await waitForJob(broken, on: server)
    #expect(brokenJob.json?["state"] as? String == "failed")
    let brokenError = try #require(brokenJob.json?["error"] as? [String: Any])
    #expect(brokenError["code"] as? String == "pdf.damaged")
    #expect(
      (brokenError["message"] as? String)?.hasPrefix("pdf 'docs/t.pdf' is damaged") == true,
      "\(brokenError)")
    #expect(spooled(printer).count == 1)
    #expect(await server.stop().isComplete)
  }

  @Test(
    "a printer refusing a file part-way fails the job print.refused; its report says what was sent")
  func refusedPartWay() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let server = try server(folder, printers: ["front": #"{"uri": "\#(printer.uri)"}"#])
    // The printer offers no A3: b.pdf is refused after a.pdf was sent.
    let order = try order(folder, [#"{"path":"a.pdf"}"#, #"{"path":"b.pdf","paper":"A3"}"#])
    let id = try acceptedID(
      try await postPrepare(
        "?printer=front", order: order, files: ["a.pdf", "b.pdf"], on: server, in: folder))
    let failed = try await waitForJob(id, on: server)
    #expect(failed.json?["state"] as? String == "failed", "\(failed.text)")
    let error = try #require(failed.json?["error"] as? [String: Any])
    #expect(error["code"] as? String == "print.refused", "\(error)")
    #expect((error["message"] as? String)?.contains("'b.pdf'") == true, "\(error)")
    #expect((failed.json?["files"] as? [String])?.contains("report.json") == true, "\(failed.text)")
    let written = try await report(id, on: server)
    let jobs = try #require(written["jobs"] as? [[String: Any]])
    // One job: a.pdf's, the one the printer spooled; b.pdf prepared but not sent.
    #expect(jobs.map { $0["file"] as? String } == ["a.pdf"], "\(jobs)")
    #expect((written["files"] as? [[String: Any]])?.count == 2)
    let received = printer.jobs(count: 1)
    #expect(received.count == 1 && jobs.first?["jobID"] as? Int == received.keys.first)
    #expect(spooled(printer).count == 1)
    #expect(await server.stop().isComplete)
  }

  @Test("the server's password file answers a printer that asks; its job is the file's user's")
  func credentials() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder, users: ["clerk": "s3cret-pass"])
    let passwords = folder.file("print-password")
    try write("clerk:s3cret-pass\n", to: passwords)
    chmod(passwords, 0o600)
    let server = try server(
      folder, printers: ["guarded": #"{"uri": "\#(printer.uri)"}"#],
      extra: #", "printPasswordFile": "print-password""#)
    let order = try order(folder, [#"{"path":"b.pdf","color":"mono"}"#])
    let id = try acceptedID(
      try await postPrepare(
        "?printer=guarded&wait=true", order: order, files: ["b.pdf"], on: server, in: folder))
    let done = try await waitForJob(id, on: server)
    #expect(done.json?["state"] as? String == "done", "\(done.text)")
    let received = try #require(printer.jobs(count: 1).values.first)
    #expect(received.attributes["job-originating-user-name"] == "clerk")
    #expect(await server.stop().isComplete)

    // A password file others may read stops the start, naming it.
    chmod(passwords, 0o644)
    let refused = try runTool(imprintExecutable, ["serve", "--config", folder.file("serve.json")])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains(passwords) && refused.stderr.contains("mode is 644"))
  }

  @Test("unknown printers 404, addresses 422, bad requests 4xx: no job, nothing printed")
  func refusals() async throws {
    let folder = TemporaryFolder()
    let printer = try TestPrinter(folder: folder)
    let server = try server(folder, printers: ["front": #"{"uri": "\#(printer.uri)"}"#])
    let order = try order(folder, [#"{"path":"a.pdf"}"#])
    func post(_ query: String, files: [String] = ["a.pdf"], order: String = order) async throws
      -> HTTPExchange
    {
      try await postPrepare(query, order: order, files: files, on: server, in: folder)
    }
    let unknown = try await post("?printer=back")
    #expect(unknown.status == 404)
    #expect(unknown.errorCode == "http.unknownPrinter")
    #expect(unknown.text.contains("the server has front"), "\(unknown.text)")
    // An address, even the configured printer's own: a client never names where to connect.
    for address in [printer.uri, "ipp://169.254.169.254/ipp/print", "localhost:631", "/tmp/s"] {
      let encoded = try #require(
        address.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
      let refused = try await post("?printer=" + encoded)
      #expect(refused.status == 422, "\(address): \(refused.text)")
      #expect(refused.errorCode == "http.printerAddressRefused", "\(address)")
    }
    let cases: [(String, Int, String)] = [
      ("?prices=retail", 404, "http.unknownPriceList"),
      ("?wait=true", 400, "http.invalidParameter"),
      ("?previewSize=64", 400, "http.invalidParameter"),
      ("?printer=front&waitTimeout=5", 400, "http.invalidParameter"),
      ("?splitColor=maybe", 400, "http.invalidParameter"),
      ("?copies=2", 400, "http.invalidParameter"),
      ("?callback=http%3A%2F%2F127.0.0.1%2Fhook", 422, "http.callbackRefused"),
    ]
    for (query, status, code) in cases {
      let answer = try await post(query)
      #expect(answer.status == status, "\(query): \(answer.text)")
      #expect(answer.errorCode == code, "\(query)")
    }
    #expect(try await post("?printer=front", files: []).errorCode == "http.missingPart")
    #expect(
      try await post("?printer=front", files: ["a.pdf", "b.pdf"]).errorCode == "http.unknownPart")
    // An order the price list refuses: the CLI's code, 422.
    let badOrder = folder.file("bad-order.json")
    try write(
      #"{"schemaVersion":1,"store":"S","files":[{"path":"a.pdf","copies":0}]}"#, to: badOrder)
    let refusedOrder = try await post("?printer=front", order: badOrder)
    #expect(refusedOrder.status == 422, "\(refusedOrder.text)")
    #expect(refusedOrder.errorCode?.hasPrefix("pricing.") == true, "\(refusedOrder.text)")
    let escaping = folder.file("escaping-order.json")
    try write(#"{"schemaVersion":1,"store":"S","files":[{"path":"../a.pdf"}]}"#, to: escaping)
    let escaped = try await postPrepare(
      "?printer=front", order: escaping, files: [], on: server, in: folder)
    #expect(escaped.status == 422)
    #expect(escaped.errorCode == "file.escapesFolder")
    // None made a job, none printed.
    let metrics = try await server.request("GET", "/metrics").text
    #expect(metrics.contains("imprint_jobs{state=\"finished\"} 0\n"), "\(metrics)")
    #expect(metrics.contains("imprint_jobs{state=\"queued\"} 0\n"))
    #expect(spooled(printer).isEmpty)
    #expect(await server.stop().isComplete)
  }
}
