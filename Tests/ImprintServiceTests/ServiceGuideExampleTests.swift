// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the service guide's batch example, its shell lines read from
// docs/service.md and run as they are (bash, curl, python3) against a real `imprint serve`, so
// that the example breaks a test when it stops doing what the text says: both jobs done, the
// card and the QR code fetched by the paths given (pdfinfo, zbarimg).

import Foundation
import ImprintTestSupport
import Testing

/// The first ```sh block after the line of `document` (a path from the repository's root) that
/// contains `marker`; nil when there is none.
func documentBlock(in document: String, after marker: String) throws -> String? {
  let text = try String(contentsOfFile: repositoryRoot + "/" + document, encoding: .utf8)
  guard let start = text.range(of: marker),
    let open = text.range(of: "\n```sh\n", range: start.upperBound..<text.endIndex),
    let close = text.range(of: "\n```\n", range: open.upperBound..<text.endIndex)
  else { return nil }
  return String(text[open.upperBound..<close.lowerBound]) + "\n"
}

@Suite("docs/service.md's examples", .liveHandlesChecked, .onTestThreads, .serialized)
struct ServiceGuideExampleTests {
  @Test("the batch example, run as docs/service.md gives it, makes and fetches what it says")
  func batchExample() async throws {
    let block = try #require(
      try documentBlock(
        in: "docs/service.md", after: "A batch, from the repository's root (a test runs these lines"
      ))
    #expect(block.contains("/v1/batch"))
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    // From the repository's root, as the text says: a folder of the test's own with the
    // repository's assets, so that what the lines write stays out of the repository.
    try FileManager.default.createSymbolicLink(
      atPath: folder.file("assets"), withDestinationPath: repositoryRoot + "/assets")
    let script =
      "cd '\(folder.path)'\n"
      + block.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(server.port)")
    // Each line must succeed (-e, pipefail); the polling loop is bounded by timeout.
    let run = try runTool("timeout", ["600", "bash", "-euo", "pipefail", "-c", script])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: URL(fileURLWithPath: folder.file("report.json"))))
        as? [String: Any])
    #expect(report["state"] as? String == "done", "\(report)")
    let summary = report["summary"] as? [String: Any]
    #expect(summary?["total"] as? Int == 2 && summary?["ok"] as? Int == 2, "\(report)")
    let files = report["files"] as? [String] ?? []
    #expect(files.contains("cards/A-1.pdf") && files.contains("qr/W-1.png"), "\(files)")
    // The card: a PDF of its two sides; the code: the payload the manifest gives.
    let info = try runTool("pdfinfo", [folder.file("A-1.pdf")])
    #expect(info.status == 0, "\(info.stderr)")
    #expect(info.stdout.contains("\nPages:           2\n"), "\(info.stdout)")
    let code = try runTool("zbarimg", ["-q", "--raw", "--nodbus", folder.file("W-1.png")])
    #expect(code.stdout == "https://example.com\n", "\(code.stdout)\(code.stderr)")
    #expect(server.stop().status == 0)
  }

  @Test(
    "a manifest line's path leading out is accepted and fails its item, as docs/service.md says")
  func manifestPathLeadingOut() async throws {
    let folder = TemporaryFolder()
    let server = try ServiceProcess()
    // docs/service.md: a part named so is refused 422 (JobRouteTests); a line's path is the job's to
    // read: 202, that item file.escapesFolder, the others run, nothing outside read.
    let manifest = try writeManifest(
      [
        #"{"id": "T-1", "kind": "thumb", "file": "../x.pdf"}"#,
        #"{"id": "T-2", "kind": "thumb", "file": "/etc/passwd"}"#,
        #"{"id": "W-1", "kind": "qr", "payload": "inside"}"#,
      ], in: folder)
    let accepted = try await postBatch(manifest, on: server)
    #expect(accepted.status == 202, "\(accepted.text)")
    let id = try #require(accepted.json?["job"] as? String, "\(accepted.text)")
    let report = try await waitForJob(id, on: server).json ?? [:]
    #expect(report["state"] as? String == "done", "\(report)")
    let results = report["results"] as? [[String: Any]] ?? []
    var codes: [String: String] = [:]
    for result in results {
      let code = (result["error"] as? [String: Any])?["code"] as? String
      codes[result["id"] as? String ?? "-"] = code ?? (result["status"] as? String)
    }
    #expect(
      codes == ["T-1": "file.escapesFolder", "T-2": "file.escapesFolder", "W-1": "ok"],
      "\(results)")
    #expect(server.stop().status == 0)
  }
}
