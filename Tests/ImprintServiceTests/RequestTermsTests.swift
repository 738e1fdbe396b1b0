// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: a backend's findings on error answers of the service (in this process): messages
// name the request's own keys and files (never imprint's flags or the server's file names),
// JSON integers where a backend sends numbers, contradictory options refused, and the words of
// counts, media types and boundaries as a client reads them.

import Foundation
import ImprintTestSupport
import Testing

private let json = "Content-Type: application/json"
private let profile = repositoryRoot + "/assets/samples/profiles/sora-park.json"
/// EIP-55's example address.
private let address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

private func message(_ answer: HTTPExchange) -> String {
  ((answer.json?["error"] as? [String: Any])?["message"] as? String) ?? ""
}

private func hint(_ answer: HTTPExchange) -> String {
  ((answer.json?["error"] as? [String: Any])?["hint"] as? String) ?? ""
}

/// A `/v1/qr` JSON body for `address` as an Ethereum payment request, with `members` added.
private func ethereumBody(_ members: String) -> String {
  #"{"payload": "\#(address)", "payloadType": "eth", "request": true, \#(members)}"#
}

@Suite(
  "service routes: error answers in the request's own terms", .liveHandlesChecked, .onTestThreads)
struct RequestTermsTests {
  @Test("qr: a refused payment value names the request's key, imprint qr names its flag")
  func paymentKeys() async throws {
    let server = try InProcessService()
    let cases: [(member: String, key: String, flag: String, value: String, expected: String)] = [
      ("gasPrice", "gasPrice", "--gas-price", "0.5", "a price from 1 to 100 gwei"),
      ("gasLimit", "gasLimit", "--gas-limit", "20999", "an integer from 21000 to 30000000"),
      ("chainId", "chainId", "--chain-id", "0", "a positive integer"),
      ("amount", "amount", "--amount", "1.0000000000000000001", "a decimal number"),
    ]
    for (member, key, flag, value, expected) in cases {
      let body = try await server.request(
        "POST", "/v1/qr", headers: [json],
        body: Array((ethereumBody(#""\#(member)": "\#(value)""#)).utf8))
      #expect(body.status == 422, "\(body.text)")
      #expect(body.errorCode == "qr.invalidAmount")
      #expect(message(body).hasPrefix("\(key) '\(value)' is not valid; expected \(expected)"))
      #expect(!body.text.contains("--"), "\(body.text)")
      // The query names it alike.
      let query = try await server.request(
        "POST", "/v1/qr?payload=\(address)&payloadType=eth&\(member)=\(value)")
      #expect(query.status == 422, "\(query.text)")
      #expect(message(query) == message(body), "\(query.text)")
      // imprint qr names its flag, with the same words after it.
      let cli = try runTool(
        imprintExecutable, ["qr", "--eth", "--request", flag, value, "-o", "-", address])
      #expect(cli.status == 2, "\(cli.stderr)")
      #expect(cli.stderr.hasPrefix("error: \(flag) '\(value)' is not valid; expected \(expected)"))
    }
    #expect(await server.stop().isComplete)
  }

  @Test("qr: chainId and gasLimit as JSON integers make the code their strings make")
  func integerKeys() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let numbers = try await server.request(
      "POST", "/v1/qr", headers: [json],
      body: Array(
        (ethereumBody(#""amount": "1", "chainId": 5, "gasLimit": 21000, "gasPrice": "2""#)).utf8))
    #expect(numbers.status == 200, "\(numbers.text)")
    let strings = try await server.request(
      "POST", "/v1/qr", headers: [json],
      body: Array(
        (ethereumBody(#""amount": "1", "chainId": "5", "gasLimit": "21000", "gasPrice": "2""#)).utf8
      ))
    #expect(strings.status == 200, "\(strings.text)")
    #expect(numbers.body == strings.body)
    let png = folder.file("numbers.png")
    try Data(numbers.body).write(to: URL(fileURLWithPath: png))
    let decoded = try #require(try zbarDecode(png))
    #expect(
      decoded == "ethereum:\(address)@5?value=1000000000000000000&gas=21000&gasPrice=2000000000",
      "\(decoded)")
    // The largest chain id, exactly (a double would round it).
    let largest = try await server.request(
      "POST", "/v1/qr", headers: [json],
      body: Array((ethereumBody(#""chainId": 18446744073709551615"#)).utf8))
    #expect(largest.status == 200, "\(largest.text)")
    let largestPNG = folder.file("largest.png")
    try Data(largest.body).write(to: URL(fileURLWithPath: largestPNG))
    #expect(try zbarDecode(largestPNG) == "ethereum:\(address)@18446744073709551615")
    // Fractions, exponents, negatives and values past the range: the 422 of the same string.
    let refused: [(member: String, value: String, code: String, shown: String)] = [
      ("gasLimit", "21000.5", "qr.invalidAmount", "21000.5"),
      ("gasLimit", "21000.0", "qr.invalidAmount", "21000.0"),
      ("gasLimit", "2.1e4", "qr.invalidAmount", "21000.0"),
      ("gasLimit", "20999", "qr.invalidAmount", "20999"),
      ("gasLimit", "99999999999999999999999", "qr.invalidAmount", "99999999999999999999999"),
      ("chainId", "0", "qr.invalidAmount", "0"),
      ("chainId", "-1", "qr.invalidAmount", "-1"),
      ("chainId", "1.5", "qr.invalidAmount", "1.5"),
      ("chainId", "18446744073709551616", "eth.amountOutOfRange", "18446744073709551616"),
      ("chainId", "99999999999999999999999", "eth.amountOutOfRange", "99999999999999999999999"),
    ]
    for (member, value, code, shown) in refused {
      let answer = try await server.request(
        "POST", "/v1/qr", headers: [json],
        body: Array((ethereumBody(#""\#(member)": \#(value)"#)).utf8))
      #expect(answer.status == 422, "\(member) \(value): \(answer.text)")
      #expect(answer.errorCode == code, "\(member) \(value): \(answer.text)")
      #expect(message(answer).hasPrefix("\(member) '\(shown)' is "), "\(answer.text)")
      let asString = try await server.request(
        "POST", "/v1/qr", headers: [json],
        body: Array((ethereumBody(#""\#(member)": "\#(shown)""#)).utf8))
      #expect(asString.text == answer.text, "\(member) \(value)")
    }
    // Neither a boolean nor a decimal amount as a JSON number: an amount's digits would be lost.
    let flag = try await server.request(
      "POST", "/v1/qr", headers: [json], body: Array((ethereumBody(#""chainId": true"#)).utf8))
    #expect(flag.status == 400 && flag.errorCode == "http.invalidParameter", "\(flag.text)")
    #expect(message(flag).contains("expected a string or an integer"), "\(flag.text)")
    for member in ["amount", "gasPrice"] {
      let number = try await server.request(
        "POST", "/v1/qr", headers: [json], body: Array((ethereumBody(#""\#(member)": 1.5"#)).utf8))
      #expect(number.status == 400 && number.errorCode == "http.invalidParameter")
      #expect(
        message(number).hasPrefix("parameter '\(member)' is a JSON number; expected a string"))
      #expect(message(number).contains("18 decimals"), "\(number.text)")
    }
    #expect(await server.stop().isComplete)
  }

  @Test("batch: every line's message names the manifest by the client's file name")
  func manifestName() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let jsonLines = try writeManifest(
      [
        #"{"id": "Q-1", "kind": "qr", "payload": "x"}"#,
        #"{"id": "Q-1", "kind": "qr", "payload": "y"}"#,
        #"{"id": "Q-2", "kind": "qr", "payload": "z", "colour": "red"}"#,
      ], in: folder, name: "orders.jsonl")
    let csv = try writeManifest(
      ["id,kind,payload", "Q-1,qr,x", "Q-1,qr,y", "Q-2,qr,z,extra"], in: folder, name: "orders.csv")
    for manifest in [jsonLines, csv] {
      let name = (manifest as NSString).lastPathComponent
      let id = try acceptedID(try await postBatch(manifest, on: server))
      let ended = try await waitForJob(id, on: server)
      let results = try #require(ended.json?["results"] as? [[String: Any]], "\(ended.text)")
      let errors = results.compactMap { $0["error"] as? [String: Any] }
      #expect(errors.count == 2, "\(ended.text)")
      #expect(errors.first?["code"] as? String == "batch.duplicateId", "\(ended.text)")
      for error in errors {
        let text = error["message"] as? String ?? ""
        #expect(text.hasPrefix("manifest '\(name)'"), "\(text)")
        #expect(!text.contains("manifest.jsonl") && !text.contains("manifest.csv"), "\(text)")
      }
    }
    #expect(await server.stop().isComplete)
  }

  @Test("card and qr: an option the format or another option makes unused is 400, as in the CLI")
  func unusedOptions() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let refused: [(query: String, name: String, flags: [String], words: String)] = [
      ("format=share&side=back", "side", ["--side", "back"], "a share image shows both sides"),
      ("format=share&side=front", "side", ["--side", "front"], "a share image shows both sides"),
      ("format=share&dpi=600", "dpi", ["--dpi", "600"], "a share image is 1200 × 630 pixels"),
      ("format=share&bleed=1", "bleed", ["--bleed", "1"], "shows the cards trimmed"),
      ("format=share&cropMarks=true", "cropMarks", ["--crop-marks"], "applies to PDF output"),
      ("format=png&side=back&cropMarks=true", "cropMarks", ["--crop-marks"], "applies to PDF"),
    ]
    for (query, name, flags, words) in refused {
      let answer = try await server.request(
        "POST", "/v1/card?" + query, headers: [json], file: profile)
      #expect(answer.status == 400, "\(query): \(answer.text)")
      #expect(answer.errorCode == "http.invalidParameter", "\(query)")
      #expect(message(answer).hasPrefix("parameter '\(name)' applies to "), "\(answer.text)")
      #expect(message(answer).contains(words), "\(answer.text)")
      // imprint card refuses the same combination as a usage error, writing nothing.
      let format = query.hasPrefix("format=share") ? "share" : "png"
      let out = folder.file("cli-\(name).png")
      let cli = try runTool(
        imprintExecutable, ["card", profile, "--format", format, "-o", out] + flags)
      #expect(cli.status == 2, "\(flags): \(cli.stderr)")
      #expect(cli.stderr.hasPrefix("error: \(flags[0]) applies to "), "\(cli.stderr)")
      #expect(cli.stderr.contains(words), "\(cli.stderr)")
      #expect(!FileManager.default.fileExists(atPath: out))
    }
    // Both sides are what a share image shows: the same image as without side.
    let both = try await server.request(
      "POST", "/v1/card?format=share&side=both", headers: [json], file: profile)
    let plain = try await server.request(
      "POST", "/v1/card?format=share", headers: [json], file: profile)
    #expect(both.status == 200 && plain.status == 200, "\(both.text)")
    #expect(pngHeader(both.body)?.width == 1200 && pngHeader(both.body)?.height == 630)
    #expect(both.body == plain.body)
    // A module size beside a printed size: the size sets the module, the module was ignored.
    let qr = try await server.request("POST", "/v1/qr?payload=x&module=4&size=20")
    #expect(qr.status == 400 && qr.errorCode == "http.invalidParameter", "\(qr.text)")
    #expect(message(qr).hasPrefix("parameter 'module' cannot be combined with size"))
    let cliQR = try runTool(
      imprintExecutable, ["qr", "--module", "4", "--size", "20", "-o", "-", "x"])
    #expect(cliQR.status == 2, "\(cliQR.stderr)")
    #expect(cliQR.stderr.hasPrefix("error: --module and --size cannot be combined"))
    for query in ["payload=x&size=20", "payload=x&module=4"] {
      #expect(try await server.request("POST", "/v1/qr?" + query).status == 200)
    }
    #expect(await server.stop().isComplete)
  }

  @Test("415 says the request has no Content-Type; an empty Content-Type is no type")
  func contentTypes() async throws {
    let server = try InProcessService()
    let expected =
      "'/v1/card' reads application/json or multipart/form-data; the request has no Content-Type"
    // No Content-Type, and an empty one.
    for header in [[], ["Content-Type:"]] {
      let answer = try await server.request("POST", "/v1/card", headers: header, file: profile)
      #expect(answer.status == 415, "\(header): \(answer.text)")
      #expect(answer.errorCode == "http.unsupportedMediaType")
      #expect(message(answer) == expected, "\(header): \(answer.text)")
    }
    let typed = try await server.request(
      "POST", "/v1/card", headers: ["Content-Type: text/plain"], file: profile)
    #expect(message(typed).hasSuffix("; the body is 'text/plain'"), "\(typed.text)")
    // /v1/inspect takes a body of no type: an empty header is the same.
    let pdf = repositoryRoot + "/assets/samples/documents/handout.pdf"
    for header in [[], ["Content-Type:"]] {
      let answer = try await server.request(
        "POST", "/v1/inspect?name=handout.pdf", headers: header, file: pdf)
      #expect(answer.status == 200, "\(header): \(answer.text)")
      let files = answer.json?["files"] as? [[String: Any]]
      let pages = (files?.first?["info"] as? [String: Any])?["pages"] as? Int
      let counted = Int(try pdfInfo(pdf)["Pages"] ?? "")
      #expect(pages != nil && pages == counted, "\(answer.text)")
    }
    #expect(await server.stop().isComplete)
  }

  @Test("an unknown parameter's 400 lists the route's parameters in its hint")
  func unknownParameters() async throws {
    let server = try InProcessService()
    let qrKeys = [
      "allowLowContrast", "amount", "background", "caption", "captionAddress", "chainId",
      "decimals", "dpi", "foreground", "format", "gasLimit", "gasPrice", "label", "level",
      "message", "module", "payload", "payloadType", "quietZone", "request", "size", "token",
    ]
    let query = try await server.request("POST", "/v1/qr?payload=x&colour=red")
    let body = try await server.request(
      "POST", "/v1/qr", headers: [json], body: Array((#"{"payload": "x", "colour": "red"}"#).utf8))
    for answer in [query, body] {
      #expect(answer.status == 400 && answer.errorCode == "http.invalidParameter")
      #expect(message(answer) == "parameter 'colour' is not known", "\(answer.text)")
      #expect(
        hint(answer) == "the route's parameters are " + qrKeys.joined(separator: ", "),
        "\(answer.text)")
    }
    let thumbnail = try await server.request(
      "POST", "/v1/thumbnail?pages=2", headers: ["Content-Type: application/pdf"],
      file: repositoryRoot + "/assets/samples/documents/handout.pdf")
    #expect(thumbnail.status == 400, "\(thumbnail.text)")
    #expect(
      hint(thumbnail) == "the route's parameters are format, name, page, password, size",
      "\(thumbnail.text)")
    let job = try await server.request("GET", "/v1/jobs/none?verbose=1")
    #expect(job.status == 400 && hint(job) == "the route takes no parameter", "\(job.text)")
    #expect(await server.stop().isComplete)
  }

  @Test("batch: a file no part brought is told apart, naming the parts that were sent")
  func missingPart() async throws {
    let folder = TemporaryFolder()
    let server = try InProcessService()
    let manifest = try writeManifest(
      [
        #"{"id": "C-1", "kind": "card", "profile": "profiles/x.json"}"#,
        #"{"id": "C-2", "kind": "card", "profile": "profiles/sora-park.json"}"#,
      ], in: folder)
    let id = try acceptedID(
      try await postBatch(manifest, inputs: ["profiles/sora-park.json"], on: server))
    let ended = try await waitForJob(id, on: server)
    let results = try #require(ended.json?["results"] as? [[String: Any]], "\(ended.text)")
    #expect(results.map { $0["status"] as? String } == ["failed", "ok"], "\(ended.text)")
    let error = try #require(results.first?["error"] as? [String: Any])
    #expect(error["code"] as? String == "file.notFound")
    #expect(error["message"] as? String == "'profiles/x.json' does not exist", "\(error)")
    #expect(
      error["hint"] as? String
        == "no part named 'profiles/x.json' was uploaded (the parts besides the manifest are "
        + "'profiles/sora-park.json'); send the file as a part of that name, or correct the path "
        + "in the manifest", "\(error)")
    // More parts than a hint lists: their count.
    let many = (1...9).map { FormItem.file("extra/\($0).json", path: manifest) }
    let second = try acceptedID(
      try await postBatch(
        manifest, inputs: ["profiles/sora-park.json"], files: many, on: server))
    let counted = try await waitForJob(second, on: server)
    let first = (counted.json?["results"] as? [[String: Any]])?.first?["error"] as? [String: Any]
    #expect(
      (first?["hint"] as? String)?.contains("(10 parts were sent besides the manifest)") == true,
      "\(counted.text)")
    #expect(await server.stop().isComplete)
  }

  @Test("multipart: boundaries RFC 2046 allows are read, others refused with the usual 400")
  func boundaries() async throws {
    let server = try InProcessService()
    // Each body built around its boundary and sent as it is.
    let pdf = repositoryRoot + "/assets/samples/documents/handout.pdf"
    func send(_ contentType: String, _ boundary: String) async throws -> (Int, String) {
      let body = try MultipartBody(
        [.file("file", path: pdf, filename: "a.pdf", type: "application/pdf")],
        boundary: boundary)
      let answer = try await server.request(
        "POST", "/v1/inspect", headers: ["Content-Type: \(contentType)", "Connection: close"],
        body: body.bytes)
      return (answer.status, answer.text)
    }
    let seventy = String(repeating: "x", count: 70)
    for (contentType, boundary) in [
      ("multipart/form-data; boundary=ab", "ab"),
      (#"multipart/form-data; boundary="b""#, "b"),
      (#"multipart/form-data; boundary="a:b c'()+_,-./=?""#, "a:b c'()+_,-./=?"),
      ("multipart/form-data; boundary=\(seventy)", seventy),
    ] {
      let (status, text) = try await send(contentType, boundary)
      #expect(status == 200, "\(contentType): \(text)")
      #expect(text.contains(#""file" : "a.pdf""#), "\(contentType): \(text)")
    }
    let seventyOne = String(repeating: "x", count: 71)
    for (contentType, boundary) in [
      ("multipart/form-data; boundary=\(seventyOne)", seventyOne),
      ("multipart/form-data; boundary=a@b", "a@b"),
      (#"multipart/form-data; boundary="ab ""#, "ab "),
    ] {
      let (status, text) = try await send(contentType, boundary)
      #expect(status == 400, "\(contentType): \(text)")
      #expect(text.contains("its Content-Type gives no usable boundary"), "\(text)")
    }
    #expect(await server.stop().isComplete)
  }
}
