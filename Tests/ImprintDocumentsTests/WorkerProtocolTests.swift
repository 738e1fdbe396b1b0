// SPDX-License-Identifier: Apache-2.0
// ImprintDocumentsTests: the worker protocol as typed messages, its entry point, and a worker's
// death told by its exit status.

import Foundation
import ImprintCore
import ImprintTestSupport
import Testing

@testable import ImprintDocuments

@Suite("The worker protocol: typed operations, every request answered at once", .liveHandlesChecked)
struct WorkerProtocolTests {
  /// Sends `lines` to one fresh worker, one exchange each, waiting at most 10 s for each answer
  /// (a hang guard: a request left unanswered would hold its caller for the sandbox's 60 s
  /// time limit).
  static func exchange(_ lines: [String]) throws -> [WorkerResponse?] {
    let process = try WorkerProcess(executable: worker, memoryMB: SandboxLimits.defaultMemoryMB)
    defer { process.stop() }
    return lines.map { line in
      switch process.exchange(Array(line.utf8) + [10], timeout: 10) {
      case .answer(let data): try? JSONDecoder().decode(WorkerResponse.self, from: data)
      case .timedOut, .died: nil
      }
    }
  }

  static func request(_ operation: String, file: String = "mixed.pdf") -> String {
    #"{"operation":"\#(operation)","path":"\#(documents)\#(file)","file":"\#(file)","cpuSeconds":5}"#
  }

  @Test(
    "an unknown operation is refused at once with its own code, never read as inspect",
    arguments: ["explode", "Inspect", "", "thumbnails", "inspect\n"])
  func unknownOperation(name: String) throws {
    // A readable PDF: had the operation been taken for inspect, the answer would count pages.
    let line = Self.request(name.replacingOccurrences(of: "\n", with: "\\n"))
    let answers = try Self.exchange([line, Self.request("inspect")])
    guard case .refused(let error)? = answers[0] else {
      Issue.record("'\(name)': \(String(describing: answers[0])) instead of a refusal")
      return
    }
    #expect(error == .unknownOperation(name: name))
    #expect(error.code == "document.unknownOperation")
    #expect(error.hint?.contains("inspect, thumbnail") == true)
    // Echoed escaped, never raw.
    #expect(!error.message.contains("\n"))
    // On the wire, named fields (what another program reading the worker's answers sees).
    let wire = JSONOutput.line(WorkerResponse.refused(error: error))
    #expect(wire.contains(#""unknownOperation":{"name":"#), "\(wire)")
    // The worker goes on serving the next request.
    guard case .inspected(let info)? = answers[1] else {
      Issue.record("no inspection after the refusal: \(String(describing: answers[1]))")
      return
    }
    #expect(info.pages == 3)
  }

  @Test(
    "decodeImage and its answer, written and read by hand: JSONEncoder's bytes, JSONDecoder's values",
    arguments: [
      "a.png", "/tmp/with space/é ü 한글 😀.jpg", #"quote " back\slash / slash"#,
      "tab\tnewline\ncontrol\u{1}\u{1F}", "\u{7F}\u{2028}\u{2029}", "",
    ])
  func decodeImageByHand(name: String) throws {
    let request = WorkerRequest.decodeImage(
      .init(input: .init(path: "/p/" + name, file: name, cpuSeconds: 7), output: name + ".px"))
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let foundation = String(decoding: try encoder.encode(request), as: UTF8.self)
    #expect(request.wireLine == foundation)
    guard case .success(.decodeImage(let read)) = WorkerRequest.decode(Array(foundation.utf8)),
      case .decodeImage(let sent) = request
    else {
      Issue.record("\(foundation) does not read back")
      return
    }
    #expect(read == sent)
    for (width, height, alpha, embeds) in [(1, 1, false, false), (4032, 3024, true, true)] {
      let answer = WorkerResponse.decodedImage(
        width: width, height: height, hasAlpha: alpha, embedsFile: embeds)
      let bytes = String(decoding: try encoder.encode(answer), as: UTF8.self)
      #expect(answer.wireLine == bytes)
      guard
        case .decodedImage(let w, let h, let a, let e)? = WorkerResponse.decode(Array(bytes.utf8))
      else {
        Issue.record("\(bytes) does not read back")
        continue
      }
      #expect((w, h, a, e) == (width, height, alpha, embeds))
    }
  }

  @Test("decodeImage's integers read exactly, past 2^53 too, as JSONDecoder reads them")
  func exactIntegers() throws {
    for seconds in ["9007199254740993", "-1", "0", "9223372036854775807", "9223372036854775808"] {
      let line =
        #"{"cpuSeconds":\#(seconds),"file":"a","operation":"decodeImage","output":"o","path":"p"}"#
      let foundation = try? JSONDecoder().decode(WorkerRequest.self, from: Data(line.utf8))
      let read = try? WorkerRequest.decode(Array(line.utf8)).get()
      #expect(read?.input.cpuSeconds == foundation?.input.cpuSeconds, "\(seconds)")
      #expect((read == nil) == (foundation == nil), "\(seconds)")
    }
    let answer =
      #"{"decodedImage":{"embedsFile":false,"hasAlpha":false,"height":9007199254740993,"width":1}}"#
    guard case .decodedImage(_, let height, _, _)? = WorkerResponse.decode(Array(answer.utf8))
    else {
      Issue.record("\(answer) does not read")
      return
    }
    #expect(height == 9_007_199_254_740_993)
  }

  @Test("answers the hand-written reader does not take are read by JSONDecoder, as before")
  func answersFallBack() throws {
    // Not the four fields, a fractional size, a string for a flag, another answer, not JSON.
    let lines = [
      #"{"decodedImage":{"width":2,"height":3,"hasAlpha":true}}"#,
      #"{"decodedImage":{"width":2.5,"height":3,"hasAlpha":true,"embedsFile":false}}"#,
      #"{"decodedImage":{"width":2,"height":3,"hasAlpha":"yes","embedsFile":false}}"#,
      #"{"decodedImage":{"width":2,"height":3,"hasAlpha":true,"embedsFile":false},"x":1}"#,
      #"{"refused":{"error":{"malformedRequest":{}}}}"#, "not json", "",
    ]
    for line in lines {
      let foundation = try? JSONDecoder().decode(WorkerResponse.self, from: Data(line.utf8))
      let read = WorkerResponse.decode(Array(line.utf8))
      #expect(
        String(describing: read) == String(describing: foundation),
        "\(line): \(String(describing: read)) against \(String(describing: foundation))")
    }
  }

  @Test(
    "a malformed request is answered at once with document.badRequest",
    arguments: [
      "not json", "{}", "[1, 2, 3]", #"{"operation":"inspect"}"#,
      #"{"operation":"inspect","path":7,"file":"x","cpuSeconds":5}"#,
      #"{"operation":5,"path":"/dev/null","file":"x","cpuSeconds":5}"#,
      #"{"operation":"thumbnail","path":"/dev/null","file":"x","cpuSeconds":5,"format":"gif"}"#,
    ])
  func malformed(line: String) throws {
    let answers = try Self.exchange([line, Self.request("inspect")])
    guard case .refused(let error)? = answers[0] else {
      Issue.record("\(line): \(String(describing: answers[0])) instead of a refusal")
      return
    }
    #expect(error == .malformedRequest)
    #expect(error.code == "document.badRequest")
    guard case .inspected(let info)? = answers[1] else {
      Issue.record("no inspection after the refusal: \(String(describing: answers[1]))")
      return
    }
    #expect(info.pages == 3)
  }

  @Test("each operation's request is one flat JSON line of the fields it needs, read back alike")
  func wireLines() throws {
    let input = WorkerRequest.Input(path: "/tmp/a.pdf", file: "a.pdf", cpuSeconds: 5)
    let layout = SheetLayout(pages: "2-3", expectedPages: 4, nUp: 2, paper: .a4, blankBack: true)
    let cases: [(WorkerRequest, String)] = [
      (
        .inspect(.init(input: input, password: "pw", colors: nil)),
        #"{"cpuSeconds":5,"file":"a.pdf","operation":"inspect","password":"pw","path":"/tmp/a.pdf"}"#
      ),
      (
        .prepare(.init(input: input, password: nil, layout: layout, output: "/tmp/o.pdf")),
        #"{"cpuSeconds":5,"file":"a.pdf","layout":{"blankBack":true,"expectedPages":4,"nUp":2,"#
          + #""pages":"2-3","paper":"A4"},"operation":"prepare","output":"/tmp/o.pdf","#
          + #""path":"/tmp/a.pdf"}"#
      ),
      (
        .decodeImage(.init(input: input, output: "/tmp/px")),
        #"{"cpuSeconds":5,"file":"a.pdf","operation":"decodeImage","output":"/tmp/px","#
          + #""path":"/tmp/a.pdf"}"#
      ),
    ]
    for (request, line) in cases {
      #expect(JSONOutput.line(request) == line)
      #expect(request.wireLine == line)
      let back = WorkerRequest.decode(Array(line.utf8))
      switch (request, back) {
      case (.inspect(let sent), .success(.inspect(let read))): #expect(sent == read)
      case (.prepare(let sent), .success(.prepare(let read))): #expect(sent == read)
      case (.decodeImage(let sent), .success(.decodeImage(let read))): #expect(sent == read)
      default: Issue.record("\(line): \(back)")
      }
    }
    // The lines an earlier sandbox wrote still read: an empty `text`, `pages` beside a layout.
    let earlier = [
      #"{"cpuSeconds":5,"file":"a.pdf","format":"png","operation":"thumbnail","#
        + #""output":"/tmp/a.png","pages":"1","path":"/tmp/a.pdf","size":64,"text":[]}"#,
      #"{"cpuSeconds":5,"file":"a.pdf","layout":{"expectedPages":4,"nUp":2,"#
        + #""paper":"A4","blankBack":false},"operation":"prepare","output":"/tmp/o.pdf","#
        + #""pages":"2-3","path":"/tmp/a.pdf"}"#,
    ]
    for line in earlier {
      guard case .success(let request) = WorkerRequest.decode(Array(line.utf8)) else {
        Issue.record("\(line) no longer reads")
        continue
      }
      #expect(request.input == input)
    }
  }

  @Test(
    "a request without a field its operation needs is document.badRequest, before any file",
    arguments: [
      #"{"operation":"thumbnail","path":"/dev/null","file":"x","cpuSeconds":5}"#,
      #"{"operation":"prepare","path":"/dev/null","file":"x","cpuSeconds":5,"output":"/tmp/o"}"#,
      #"{"operation":"decodeImage","path":"/dev/null","file":"x","cpuSeconds":5}"#,
      #"{"operation":"inspect","path":"/dev/null","file":"x","cpuSeconds":5,"colors":7}"#,
    ])
  func missingField(line: String) {
    guard case .failure(let error) = WorkerRequest.decode(Array(line.utf8)) else {
      Issue.record("\(line) was read as a request")
      return
    }
    #expect(error.code == "document.badRequest")
  }

  @Test("requests and answers are typed values that survive their JSON line")
  func roundTrip() throws {
    let request = WorkerRequest.thumbnail(
      .init(
        input: .init(path: "/tmp/a.pdf", file: "a.pdf", cpuSeconds: 5), password: nil,
        pages: "1-3", size: 64, format: .jpeg, output: "/tmp/a.jpg",
        text: [("Thumb::MTime", "7")]))
    let line = JSONOutput.line(request)
    let decoded = WorkerRequest.decode(Array(line.utf8))
    guard case .success(.thumbnail(let back)) = decoded else {
      Issue.record("\(decoded)")
      return
    }
    #expect(back.pages == "1-3" && back.format == .jpeg && back.output == "/tmp/a.jpg")
    #expect(back.text.map { [$0.key, $0.value] } == [["Thumb::MTime", "7"]])
    let staged = WorkerResponse.staged(
      pages: [StagedThumbnail(temporary: "/tmp/.a.tmp", final: "/tmp/a.jpg")])
    let answer = try JSONDecoder().decode(
      WorkerResponse.self, from: Data(JSONOutput.line(staged).utf8))
    guard case .staged(let pages) = answer else {
      Issue.record("\(answer)")
      return
    }
    #expect(pages == [StagedThumbnail(temporary: "/tmp/.a.tmp", final: "/tmp/a.jpg")])
  }
}

@Suite("Hosting workers: the entry point and the defaults", .liveHandlesChecked)
struct WorkerHostingTests {
  @Test("runIfWorker returns at once in a process that is not a worker")
  func notAWorker() {
    DocumentWorker.runIfWorker(arguments: ["server"])
    DocumentWorker.runIfWorker(arguments: ["imprint", "inspect", "__worker"])
    DocumentWorker.runIfWorker(arguments: [])
    #expect(DocumentWorker.argument == "__worker")
  }

  @Test("a worker started with no --memory-mb gets the one default, and serves")
  func defaultMemory() throws {
    #expect(SandboxLimits().memoryMB == SandboxLimits.defaultMemoryMB)
    #expect(SandboxLimits.defaultMemoryMB == 1536)
    #expect(DocumentSandbox.defaultWorkers == activeProcessorCount)
    let run = try runTool(
      worker, ["__worker"], stdin: Array(WorkerProtocolTests.request("inspect").utf8) + [10])
    #expect(run.status == 0, "\(run.stderr)")
    let answer = try JSONDecoder().decode(WorkerResponse.self, from: Data(run.stdout.utf8))
    guard case .inspected(let info) = answer else {
      Issue.record("\(answer)")
      return
    }
    #expect(info.pages == 3)
  }
}

@Suite("A worker's death told by its exit status, never by what it printed", .liveHandlesChecked)
struct WorkerDeathTests {
  /// A stand-in worker: a shell script that prints `stderr` and ends as `end` says.
  static func fakeWorker(in folder: TemporaryFolder, stderr: String, end: String) throws
    -> String
  {
    let path = folder.file("worker.sh")
    let script = Array("#!/bin/sh\nprintf '%s\\n' '\(stderr)' >&2\n\(end)\n".utf8)
    // Written through a descriptor opened with O_CLOEXEC: Foundation's Data.write opens without
    // it (strace), so a worker forked meanwhile by a test running beside this one inherits the
    // open script, and exec of the script fails with ETXTBSY ("Text file busy") until that
    // worker execs in turn.
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    #expect(fd >= 0)
    let written = script.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    #expect(written == script.count)
    #expect(close(fd) == 0)
    #expect(chmod(path, 0o755) == 0)
    return path
  }

  static func inspectCode(executable: String, memoryMB: Int = SandboxLimits.defaultMemoryMB)
    async -> String?
  {
    var limits = SandboxLimits()
    limits.memoryMB = memoryMB
    let sandbox = DocumentSandbox(executable: executable, limits: limits, workers: 1)
    do {
      _ = try await sandbox.inspect(path: documents + "mixed.pdf", file: "mixed.pdf")
      return nil
    } catch let error as DocumentError {
      return error.code
    } catch {
      return "\(error)"
    }
  }

  @Test(
    "a real worker out of memory is document.memoryLimit (its exit status 86)",
    .disabled(
      if: Sanitizer.current != nil,
      "scripts/sanitize preloads no-rlimit-as.so: the address-space cap this test runs into is lifted"
    ))
  func realWorkerOutOfMemory() async throws {
    // 64 MB of address space: the worker starts (it loads no document engine at start), but
    // mapping the file or loading poppler and qpdf fails with ENOMEM, and it exits with 86.
    let code = await Self.inspectCode(executable: worker, memoryMB: 64)
    #expect(code == "document.memoryLimit")
    let process = try WorkerProcess(executable: worker, memoryMB: 64)
    defer { process.stop() }
    let outcome = process.exchange(
      Array(WorkerProtocolTests.request("inspect").utf8) + [10], timeout: 20)
    guard case .died(let exit) = outcome else {
      Issue.record("\(outcome)")
      return
    }
    #expect(exit == .status(WorkerPlumbing.outOfMemoryExitStatus))
  }

  @Test(
    "words about memory on stderr do not make a crash a memory limit",
    arguments: [
      ("kill -ABRT $$", "terminate called after throwing an instance of 'std::bad_alloc'"),
      ("exit 3", "GLib-ERROR: failed to allocate 1048576000 bytes"),
      ("kill -SEGV $$", "out of memory"),
    ])
  func stderrIgnored(end: String, stderr: String) async throws {
    let folder = TemporaryFolder()
    let fake = try Self.fakeWorker(in: folder, stderr: stderr, end: end)
    #expect(await Self.inspectCode(executable: fake) == "document.workerCrashed")
  }

  @Test("a worker that closes its pipes but does not end is killed after a grace, not waited for")
  func closedButRunning() throws {
    // The shell closes its output and errors, then sleeps with its input still open: what a
    // worker stuck in its exit looks like from here.
    let process = try WorkerProcess(
      arguments: ["/bin/sh", "-c", "exec >&- 2>&-; exec sleep 600"], memoryMB: 64)
    defer { process.stop() }
    let started = Date()
    let outcome = process.exchange(Array("{}\n".utf8), timeout: 300)
    let seconds = Date().timeIntervalSince(started)
    guard case .died(let exit) = outcome else {
      Issue.record("\(outcome) after \(seconds) s")
      return
    }
    // Killed after the grace: never the sleep's 600 s, nor the exchange's own 300.
    #expect(exit == .signal(SIGKILL))
    #expect(seconds >= WorkerProcess.exitGrace, "\(seconds) s")
    #expect(seconds < 120, "\(seconds) s")
    #expect(kill(process.pid, 0) != 0)
  }

  @Test("a silent exit with status 86 is a memory limit: the status alone tells")
  func statusAlone() async throws {
    let folder = TemporaryFolder()
    let fake = try Self.fakeWorker(in: folder, stderr: "", end: "exit 86")
    #expect(await Self.inspectCode(executable: fake) == "document.memoryLimit")
  }
}

// Page sizes between a worker and its parent.
extension WorkerProtocolTests {
  @Test("a worker sends page sizes as runs; the parent gets every page back, the CLI lists each")
  func pageSizeRuns() throws {
    // Runs broken by a size, a rotation (orientation), and a gap in the page numbers.
    var sizes = (1...5).map { PageSize(page: $0, widthPoints: 595.28, heightPoints: 841.89) }
    sizes += [PageSize(page: 6, widthPoints: 612, heightPoints: 792)]
    sizes += [PageSize(page: 7, widthPoints: 841.89, heightPoints: 595.28)]
    sizes += [PageSize(page: 9, widthPoints: 841.89, heightPoints: 595.28)]
    sizes += (10...12).map { PageSize(page: $0, widthPoints: 595.28, heightPoints: 841.89) }
    let info = DocumentInfo(
      file: "a.pdf", type: .pdf, pages: sizes.count, pageSizes: sizes, encrypted: false,
      printAllowed: true, colors: nil, conversion: nil)
    let text = JSONOutput.line(
      WorkerResponse.inspected(info: info), flags: [DocumentInfo.compactPageSizes])
    let compact = Data(text.utf8)
    #expect(text.contains(#""pageSizeRuns""#) && !text.contains(#""pageSizes""#), "\(text)")
    // Five runs: pages 1-5, 6, 7, 9 (not consecutive to 7), 10-12.
    #expect(text.components(separatedBy: #""count""#).count - 1 == 5, "\(text)")
    guard
      case .inspected(let decoded) = try JSONDecoder().decode(WorkerResponse.self, from: compact)
    else {
      Issue.record("not an inspection: \(text)")
      return
    }
    #expect(decoded == info)
    // Everywhere else (the CLI's --json, the service's answers) each page is listed, as before.
    let listed = JSONOutput.line(info)
    #expect(listed.contains(#""pageSizes":[{"#) && !listed.contains("pageSizeRuns"))
    #expect(try JSONDecoder().decode(DocumentInfo.self, from: Data(listed.utf8)) == info)
    // A run the document cannot hold is refused, not expanded.
    let bad = text.replacingOccurrences(of: #""count":5"#, with: #""count":99999999"#)
    #expect(bad != text)
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(WorkerResponse.self, from: Data(bad.utf8))
    }
  }

  @Test("a worker's inspection of a real PDF decodes to every page's size")
  func inspectionRoundTrip() throws {
    let answers = try Self.exchange([Self.request("inspect")])
    guard case .inspected(let info)? = answers[0] else {
      Issue.record("\(String(describing: answers[0]))")
      return
    }
    #expect(info.pageSizes.map(\.page) == Array(1...info.pages))
    #expect(info.pages == 3)
  }
}
