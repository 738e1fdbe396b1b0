// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: long work over HTTP against the service in this process: a batch accepted with
// 202 and a job id, polled to its end, its outputs fetched and compared with `imprint batch`'s;
// unknown jobs and files, paths leading out, printers in manifests, and every limit (jobs
// queued, jobs kept, bytes on disk) refused with their codes.

import Foundation
import ImprintTestSupport
import Testing

private let samples = repositoryRoot + "/assets/samples/"

/// Polls `/v1/jobs/ID` until the job is neither queued nor running (a wait for the server's
/// work, not a measure of time), and returns the last answer.
func waitForJob(_ id: String, on server: some LoopbackServer) async throws -> HTTPExchange {
  var answer = try await server.get("/v1/jobs/\(id)")
  try await eventually(tries: 30_000) {
    answer = try await server.get("/v1/jobs/\(id)")
    let state = answer.json?["state"] as? String
    return state != "queued" && state != "running"
  }
  return answer
}

/// Posts a batch of `manifest` and `inputs` (files under assets/samples, each part named by
/// its path there) and `files` (parts as given), and returns the answer.
func postBatch(
  _ manifest: String, inputs: [String] = [], files: [FormItem] = [],
  on server: some LoopbackServer, query: String = "", headers: [String] = []
) async throws -> HTTPExchange {
  try await server.request(
    "POST", "/v1/batch" + query, headers: headers,
    form: [.file("manifest", path: manifest)]
      + inputs.map { .file($0, path: samples + $0) } + files)
}

/// The folder of job `id` on the disk (`imprint-serve-jobs-*/ID` in the temporary folder, which
/// the servers the tests start share with them); nil when there is none.
func jobFolder(_ id: String) -> String? {
  let temporary = FileManager.default.temporaryDirectory.path
  let roots = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
  return roots.filter { $0.hasPrefix("imprint-serve-jobs-") }.map {
    temporary + "/" + $0 + "/" + id
  }
  .first { FileManager.default.fileExists(atPath: $0) }
}

/// Writes `lines` as a JSON Lines manifest in `folder` and returns its path.
func writeManifest(_ lines: [String], in folder: TemporaryFolder, name: String = "manifest.jsonl")
  throws -> String
{
  let path = folder.file(name)
  try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
  return path
}

/// The id of a 202 answer, checked: a random (version 4) UUID, `status` and `Location` its
/// report's path.
func acceptedID(_ answer: HTTPExchange) throws -> String {
  #expect(answer.status == 202, "\(answer.text)")
  let id = try #require(answer.json?["job"] as? String)
  #expect(UUID(uuidString: id) != nil && id == id.lowercased(), "\(id)")
  #expect(Array(id)[14] == "4", "not a random UUID: \(id)")
  #expect(answer.json?["state"] as? String == "queued")
  #expect(answer.json?["status"] as? String == "/v1/jobs/\(id)")
  #expect(answer.headers["location"] == "/v1/jobs/\(id)")
  return id
}

@Suite("service routes: long jobs", .liveHandlesChecked, .onTestThreads)
struct JobRouteTests {
  @Test("batch: 202 and a job id; polled to done; its outputs are imprint batch's")
  func batch() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let manifest = try writeManifest(
      [
        #"{"id": "A-1", "kind": "card", "profile": "profiles/harbor-lamp.json", "photo": "photos/harbor-lamp.jpg"}"#,
        #"{"id": "W-1", "kind": "qr", "payload": "https://example.com/o/17"}"#,
        #"{"id": "T-1", "kind": "thumb", "file": "documents/course-notes.pdf"}"#,
        #"{"id": "T-2", "kind": "thumb", "file": "documents/missing.pdf"}"#,
      ], in: folder)
    let inputs = [
      "profiles/harbor-lamp.json", "photos/harbor-lamp.jpg", "documents/course-notes.pdf",
    ]
    let id = try acceptedID(try await postBatch(manifest, inputs: inputs, on: server))
    let done = try await waitForJob(id, on: server)
    let report = try #require(done.json)
    #expect(report["state"] as? String == "done", "\(done.text)")
    #expect(report["kind"] as? String == "batch")
    let summary = report["summary"] as? [String: Any]
    #expect(summary?["total"] as? Int == 4)
    #expect(summary?["ok"] as? Int == 3)
    #expect(summary?["failed"] as? Int == 1)
    let results = try #require(report["results"] as? [[String: Any]])
    #expect(results.map { $0["id"] as? String } == ["A-1", "W-1", "T-1", "T-2"])
    let missing = try #require(results[3]["error"] as? [String: Any])
    #expect(missing["code"] as? String == "file.notFound")
    #expect(report["resultsFile"] as? String == "/v1/jobs/\(id)/files/results.jsonl")
    let files = try #require(report["files"] as? [String])
    #expect(files.contains("results.jsonl") && files.contains("cards/A-1.pdf"), "\(files)")
    #expect(!files.contains { $0.hasPrefix(".") }, "\(files)")

    // The results file fetched is the report's results, line for line.
    let resultsFile = try await server.request("GET", "/v1/jobs/\(id)/files/results.jsonl")
    #expect(resultsFile.status == 200)
    let lines = resultsFile.text.split(separator: "\n").map {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
    #expect(lines.map { $0?["id"] as? String } == ["A-1", "W-1", "T-1", "T-2"])

    // The same manifest run by imprint batch in a folder of the same inputs.
    let local = folder.file("local")
    for input in inputs {
      let target = local + "/" + input
      try FileManager.default.createDirectory(
        atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try FileManager.default.copyItem(atPath: samples + input, toPath: target)
    }
    try FileManager.default.copyItem(atPath: manifest, toPath: local + "/manifest.jsonl")
    let cli = try runTool(
      imprintExecutable, ["batch", local + "/manifest.jsonl", "-o", folder.file("out"), "-q"])
    #expect(cli.status == 1, "\(cli.stderr)")
    for result in results.prefix(3) {
      let outputs = try #require(result["outputs"] as? [String])
      #expect(!outputs.isEmpty)
      for output in outputs {
        // A slash in the path may be sent as it is or escaped.
        let escaped = output.replacingOccurrences(of: "/", with: "%2F")
        let fetched = try await server.request("GET", "/v1/jobs/\(id)/files/\(escaped)")
        #expect(fetched.status == 200, "\(output): \(fetched.text)")
        let path = folder.file("fetched-" + (output as NSString).lastPathComponent)
        try Data(fetched.body).write(to: URL(fileURLWithPath: path))
        let mine = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.file("out/" + output))))
        switch (output as NSString).pathExtension {
        case "pdf":
          #expect(fetched.contentType == "application/pdf")
          #expect(try pdfInfo(path)["Pages"] == "2")
          #expect(
            try pdfInfo(path)["Pages"] == (try pdfInfo(folder.file("out/" + output))["Pages"]))
        default:
          #expect(fetched.contentType == "image/png")
          #expect(mine == fetched.body, "\(output) differs from imprint batch's")
          if result["id"] as? String == "W-1" {
            #expect(try zbarDecode(path) == "https://example.com/o/17")
          }
        }
      }
    }

    // Polls and fetches are counted under the routes' templates, never under an id.
    let metrics = try await server.request("GET", "/metrics").text
    #expect(metrics.contains(#"route="/v1/jobs/{id}",method="GET",status="200""#))
    #expect(metrics.contains(#"route="/v1/jobs/{id}/files/{path}",method="GET",status="200""#))
    #expect(!metrics.contains(id))
    #expect(metrics.contains("imprint_jobs{state=\"finished\"} 1\n"), "\(metrics)")

    // The missing file's message names it as the manifest does, never the server's folders.
    let message = try #require(missing["message"] as? String)
    #expect(message.contains("'documents/missing.pdf'"), "\(message)")
    #expect(!message.contains(id) && !message.contains("imprint-serve-jobs-"), "\(message)")
    #expect(!resultsFile.text.contains("imprint-serve-jobs-"), "\(resultsFile.text)")
    // The job's folder is removed with the job.
    let folderOnDisk = try #require(jobFolder(id))
    #expect(
      FileManager.default.fileExists(atPath: folderOnDisk + "/output/results.jsonl"),
      "\(folderOnDisk)")
    let removed = try await server.request("DELETE", "/v1/jobs/\(id)")
    #expect(removed.status == 200, "\(removed.text)")
    #expect(removed.json?["state"] as? String == "done")
    #expect(!FileManager.default.fileExists(atPath: folderOnDisk))
    let gone = try await server.request("GET", "/v1/jobs/\(id)")
    #expect(gone.status == 404)
    #expect(gone.errorCode == "http.unknownJob")
    let jobsRoot = (folderOnDisk as NSString).deletingLastPathComponent
    #expect(FileManager.default.fileExists(atPath: jobsRoot))
    #expect(await server.stop().isComplete)
    // The jobs' folder goes with the server.
    #expect(!FileManager.default.fileExists(atPath: jobsRoot))
  }

  @Test("batch: unknown jobs and files 404, paths leading out 422, printers 422, bad bodies 4xx")
  func refusals() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService(settings: { $0.jobsKept = 1 })
    let unknown = try await server.request("GET", "/v1/jobs/\(UUID().uuidString.lowercased())")
    #expect(unknown.status == 404)
    #expect(unknown.errorCode == "http.unknownJob")
    #expect(try await server.request("DELETE", "/v1/jobs/nope").status == 404)
    let put = try await server.request("PUT", "/v1/jobs/nope")
    #expect(put.status == 405, "\(put.status) \(put.headers) \(put.text)")
    #expect(try await server.request("GET", "/v1/jobs/").status == 404)
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "x"}"#], in: folder)

    let noManifest = try await server.request(
      "POST", "/v1/batch", form: [.file("a.pdf", path: "\(samples)documents/handout.pdf")])
    #expect(noManifest.status == 400)
    #expect(noManifest.errorCode == "http.missingPart")
    let json = try await server.request(
      "POST", "/v1/batch", headers: ["Content-Type: application/json"], file: qr)
    #expect(json.status == 415)
    let query = try await postBatch(qr, on: server, query: "?fast=1")
    #expect(query.status == 400)
    #expect(query.errorCode == "http.invalidParameter")
    let escaping = try await postBatch(
      qr, files: [.file("../escape.pdf", path: "\(samples)documents/handout.pdf")], on: server)
    #expect(escaping.status == 422, "\(escaping.text)")
    #expect(escaping.errorCode == "file.escapesFolder")
    #expect(!escaping.text.contains("imprint-serve-jobs-"), "\(escaping.text)")
    // An absolute name is refused as leading out, as README says (it was stored inside), and
    // names that name no file ('.', './', '/') are the client's mistake, never a 500.
    for (name, status, code) in [
      ("/etc/passwd", 422, "file.escapesFolder"), ("/a.pdf", 422, "file.escapesFolder"),
      (".", 400, "http.invalidPartName"), ("./", 400, "http.invalidPartName"),
      ("./.", 400, "http.invalidPartName"), ("/", 422, "file.escapesFolder"),
    ] {
      let answer = try await postBatch(
        qr, files: [.file("\(name)", path: "\(samples)documents/handout.pdf")], on: server)
      #expect(answer.status == status, "\(name): \(answer.text)")
      #expect(answer.errorCode == code, "\(name): \(answer.text)")
      #expect(!answer.text.contains("imprint-serve-jobs-"), "\(name): \(answer.text)")
    }
    let twice = try await postBatch(
      qr,
      files: [
        .file("a.pdf", path: "\(samples)documents/handout.pdf"),
        .file("./a.pdf", path: "\(samples)documents/handout.pdf"),
      ], on: server)
    #expect(twice.status == 400)
    #expect(twice.errorCode == "http.duplicatePart")
    let printer = try writeManifest(
      [
        #"{"id": "W-1", "kind": "qr", "payload": "x"}"#,
        #"{"id": "P-1", "kind": "print", "file": "order.json", "prices": "p.json", "printer": "ipp://10.0.0.1/ipp/print"}"#,
      ], in: folder, name: "printer.jsonl")
    let refused = try await postBatch(printer, on: server)
    #expect(refused.status == 422, "\(refused.text)")
    #expect(refused.errorCode == "http.printerNotAllowed")
    #expect(refused.text.contains("line 2"))
    // None of the refused requests left a job behind.
    let metrics = try await server.request("GET", "/metrics").text
    for state in ["queued", "running", "finished"] {
      #expect(metrics.contains("imprint_jobs{state=\"\(state)\"} 0\n"), "\(metrics)")
    }
    #expect(metrics.contains("imprint_jobs_bytes 0\n"))

    // A manifest that is not one fails its lines, not the request; a CSV manifest is read as
    // CSV.
    let csv = folder.file("orders.csv")
    try Data("id,kind,payload\nC-1,qr,hello\n".utf8).write(to: URL(fileURLWithPath: csv))
    let first = try acceptedID(try await postBatch(csv, on: server))
    let firstDone = try await waitForJob(first, on: server)
    #expect(firstDone.json?["state"] as? String == "done", "\(firstDone.text)")
    #expect((firstDone.json?["summary"] as? [String: Any])?["ok"] as? Int == 1)
    let code = try await server.request("GET", "/v1/jobs/\(first)/files/qr/C-1.png")
    #expect(code.status == 200)
    let codePath = folder.file("c1.png")
    try Data(code.body).write(to: URL(fileURLWithPath: codePath))
    #expect(try zbarDecode(codePath) == "hello")
    for path in ["qr/none.png", ".state/C-1.json", "qr", "%2E%2E/manifest.csv"] {
      let missing = try await server.request("GET", "/v1/jobs/\(first)/files/\(path)")
      #expect([404, 422].contains(missing.status), "\(path): \(missing.text)")
      #expect(
        missing.errorCode == (path.hasPrefix("%2E") ? "file.escapesFolder" : "http.unknownJobFile"),
        "\(path)")
    }
    // --jobs-kept 1: the second job's end removes the first.
    let garbage = try writeManifest(
      ["not json", #"{"id": "W-2", "kind": "qr", "payload": "x", "copies": "2"}"#], in: folder,
      name: "orders-17.jsonl")
    let second = try acceptedID(try await postBatch(garbage, on: server))
    let secondDone = try await waitForJob(second, on: server)
    #expect(secondDone.json?["state"] as? String == "done")
    #expect((secondDone.json?["summary"] as? [String: Any])?["failed"] as? Int == 2)
    // Its lines' messages name the manifest as the client sent it, not as the server stored it.
    let messages = ((secondDone.json?["results"] as? [[String: Any]]) ?? []).map {
      ($0["error"] as? [String: Any])?["message"] as? String ?? ""
    }
    #expect(messages.count == 2, "\(secondDone.text)")
    for message in messages {
      #expect(message.contains("'orders-17.jsonl'"), "\(message)")
      #expect(!message.contains("manifest.jsonl"), "\(message)")
    }
    let evicted = try await server.request("GET", "/v1/jobs/\(first)")
    #expect(evicted.status == 404)
    #expect(evicted.errorCode == "http.unknownJob")
    let after = try await server.request("GET", "/metrics").text
    #expect(after.contains("imprint_jobs{state=\"finished\"} 1\n"))
    #expect(after.contains("imprint_jobs_removed_total 1\n"))
    #expect(await server.stop().isComplete)
  }

  @Test("batch: a full queue 503, files over the disk limit 413 or 507, a running job canceled")
  func limits() async throws {
    let folder = TemporaryFolder()
    let bomb = folder.file("bomb.pdf")
    try HostileDocuments.write(HostileDocuments.cpuBomb(pages: 1, slow: 1), to: bomb)
    let bombBytes = try #require(
      try FileManager.default.attributesOfItem(atPath: bomb)[.size] as? Int)
    let slow = try writeManifest(
      [#"{"id": "T-1", "kind": "thumb", "file": "bomb.pdf"}"#], in: folder, name: "slow.jsonl")
    let slowBytes = bombBytes + (try Data(contentsOf: URL(fileURLWithPath: slow))).count
    let qr = try writeManifest([#"{"id": "W-1", "kind": "qr", "payload": "x"}"#], in: folder)
    let qrBytes = (try Data(contentsOf: URL(fileURLWithPath: qr))).count
    // Room for the slow job and less than one more QR manifest beside it.
    let server = try InProcessService(settings: {
      $0.jobQueue = 2
      $0.jobsDisk = slowBytes + qrBytes - 1
      $0.cpuLimit = 4
    })
    let big = folder.file("big.bin")
    try Data(repeating: 0x41, count: slowBytes + qrBytes).write(to: URL(fileURLWithPath: big))
    let tooLarge = try await postBatch(qr, files: [.file("big.bin", path: big)], on: server)
    #expect(tooLarge.status == 413, "\(tooLarge.text)")
    #expect(tooLarge.errorCode == "http.jobTooLarge")

    let running = try acceptedID(
      try await postBatch(slow, files: [.file("bomb.pdf", path: bomb)], on: server))
    // The slow job holds its bytes until it ends: a second job does not fit beside it.
    let full = try await postBatch(qr, on: server)
    #expect(full.status == 507, "\(full.text)")
    #expect(full.errorCode == "http.jobStorageFull")
    #expect(full.headers["retry-after"] == "10")
    let state = try await server.request("GET", "/v1/jobs/\(running)")
    #expect(["queued", "running"].contains(state.json?["state"] as? String ?? ""), "\(state.text)")
    try await eventually {
      try await server.request("GET", "/v1/jobs/\(running)").json?["state"]
        as? String != "queued"
    }
    // DELETE asks it to stop: its one item, under way in a worker, is cut short (the worker
    // killed) and the job ends canceled (CanceledWorkTests shows the worker gone).
    let busy = try await server.request("DELETE", "/v1/jobs/\(running)")
    if busy.status == 202 {
      #expect(busy.json?["removed"] as? Bool == false)
    } else {
      // The CPU limit ended the job between the two requests: a finished job is removed.
      #expect(busy.status == 200, "\(busy.text)")
    }
    let ended = try await waitForJob(running, on: server)
    if ended.status == 200 {
      let results = ended.json?["results"] as? [[String: Any]]
      let error = results?.first?["error"] as? [String: Any]
      // Cut short by the DELETE; or, when its CPU limit (or, on a machine too busy to give it
      // that much CPU, the wall-clock limit) ended the item first, done with that error.
      let outcome = [ended.json?["state"] as? String ?? "", error?["code"] as? String ?? ""]
      #expect(
        [
          ["canceled", "service.jobCanceled"], ["done", "document.cpuLimit"],
          ["done", "document.timeout"],
        ].contains(outcome), "\(ended.text)")
    }
    // Once it ended, its room is given to the next job (the finished one removed for it).
    let next = try acceptedID(try await postBatch(qr, on: server))
    #expect(try await waitForJob(next, on: server).json?["state"] as? String == "done")
    #expect(try await server.request("GET", "/v1/jobs/\(running)").status == 404)
    #expect(await server.stop().isComplete)

    // --job-queue 1: a job queued or running fills the queue.
    let single = try InProcessService(settings: {
      $0.jobQueue = 1
      $0.cpuLimit = 4
    })
    let holding = try acceptedID(
      try await postBatch(slow, files: [.file("bomb.pdf", path: bomb)], on: single))
    let refused = try await postBatch(qr, on: single)
    #expect(refused.status == 503, "\(refused.text)")
    #expect(refused.errorCode == "http.jobQueueFull")
    #expect(refused.headers["retry-after"] == "10")
    _ = try await waitForJob(holding, on: single)
    #expect(try await postBatch(qr, on: single).status == 202)
    #expect(await single.stop().isComplete)
  }
}
