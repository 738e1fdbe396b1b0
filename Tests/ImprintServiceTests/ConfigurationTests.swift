// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the bearer token (`--token-file`), the configuration file (`--config`,
// strict, every option) and the price lists it names, reloaded on SIGHUP with a bad file keeping
// the previous list.

import Foundation
import ImprintHTTP
import ImprintPricing
import ImprintTestSupport
import Testing

@testable import ImprintService

private let token = "b7c4e1f0a9d2c3b4a5968776e5d4c3b2"

/// Writes `text` to `name` in `folder`, readable by its owner alone (as a token file must be);
/// returns its path.
private func write(_ text: String, _ name: String, in folder: TemporaryFolder) throws -> String {
  let path = folder.file(name)
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
  chmod(path, 0o600)
  return path
}

/// Replaces the file at `path` by one holding `text` (a new file renamed over it, as deployment
/// tools do).
private func replace(_ path: String, with text: String) throws {
  let staged = path + ".new"
  try Data(text.utf8).write(to: URL(fileURLWithPath: staged))
  guard rename(staged, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
}

/// The value of `name` in `/metrics` (with `labels`), read with the bearer token.
private func metric(
  _ server: ServiceProcess, _ name: String, _ labels: [String: String] = [:],
  in folder: TemporaryFolder
) async throws -> Double? {
  let answer = try await server.request(
    "GET", "/metrics", headers: ["Authorization: Bearer \(token)"])
  return try PrometheusText(answer.text).value(name, labels)
}

private let usd = try? String(
  contentsOfFile: repositoryRoot + "/examples/prices-usd.json", encoding: .utf8)

@Suite("imprint serve: token and configuration", .liveHandlesChecked, .onTestThreads, .serialized)
struct ConfigurationTests {
  @Test("--token-file: 401 with WWW-Authenticate without the token or with another; probes open")
  func bearerToken() async throws {
    let folder = TemporaryFolder()
    let file = try write(token + "\n", "token", in: folder)
    let server = try ServiceProcess(["--token-file", file])
    let query = server.url("/v1/qr?payload=token%20test")
    let none = try await server.request("POST", query)
    #expect(none.status == 401)
    #expect(none.errorCode == "http.unauthorized")
    #expect(none.headers["www-authenticate"] == #"Bearer realm="imprint""#)
    let wrong = try await server.request(
      "POST", query, headers: ["Authorization: Bearer " + token.dropLast() + "0"])
    #expect(wrong.status == 401)
    #expect(
      wrong.headers["www-authenticate"] == #"Bearer realm="imprint", error="invalid_token""#)
    // A longer token that begins with the right one, and another scheme, are refused too.
    for header in ["Authorization: Bearer \(token)0", "Authorization: Basic \(token)"] {
      #expect(try await server.request("POST", query, headers: [header]).status == 401)
    }
    let right = try await server.request("POST", query, headers: ["Authorization: Bearer \(token)"])
    #expect(right.status == 200)
    let png = folder.file("code.png")
    try Data(right.body).write(to: URL(fileURLWithPath: png))
    #expect(try zbarDecode(png) == "token test")
    // Unknown routes ask for the token first (no map of routes for strangers).
    #expect(try await server.request("GET", "/v9/x").status == 401)
    #expect(try await server.request("GET", "/healthz").status == 200)
    #expect(try await server.request("GET", "/readyz").status == 200)
    #expect(try await server.request("GET", "/metrics").status == 401)
    // A body is refused from the head: the 401 comes and the connection closes.
    let upload = try await server.request(
      "POST", "/v1/inspect", headers: ["Content-Type: application/pdf", "Expect: 100-continue"],
      file: fixturesFolder + "/Documents/mixed.pdf")
    #expect(upload.status == 401)
    #expect(upload.headers["connection"] == "close")
    // Counted when each answer has been written, which may be after the client read it.
    #expect(
      try await eventually {
        try await metric(server, "imprint_errors_total", ["code": "http.unauthorized"], in: folder)
          == 7
      })
    let stopped = server.stop()
    #expect(stopped.status == 0)
    #expect(!stopped.stderr.contains(token))
  }

  @Test("--public-metrics serves /metrics without the token; the rest still asks for it")
  func publicMetrics() async throws {
    let folder = TemporaryFolder()
    let file = try write(token, "token", in: folder)
    let server = try ServiceProcess(["--token-file", file, "--public-metrics"])
    #expect(try await server.request("GET", "/metrics").status == 200)
    #expect(try await server.request("POST", "/v1/qr?payload=x").status == 401)
    #expect(server.stop().status == 0)
  }

  @Test("a token file that is short, has a space, others may read or is missing stops the start")
  func badTokenFiles() async throws {
    let folder = TemporaryFolder()
    for (text, expected) in [
      ("short\n", "holds 5 characters; a token has 16 to 512"),
      ("two words in a token file", "holds characters outside a bearer token's"),
    ] {
      let file = try write(text, "token", in: folder)
      let run = try runTool(
        imprintExecutable, ["serve", "--listen", "127.0.0.1:0", "--token-file", file])
      #expect(run.status == 1)
      #expect(run.stderr.hasPrefix("error: the token file '\(file)' \(expected)"), "\(run.stderr)")
    }
    // A token others may read stops the start as a password file others may read does; its
    // group may read it (a Kubernetes secret mounted 0440 for the pod's fsGroup), not change it.
    let file = try write(token, "token", in: folder)
    for (mode, who) in [
      (0o644 as mode_t, "others than its owner and its group may read or change it"),
      (0o604, "others than its owner and its group may read or change it"),
      (0o602, "others than its owner and its group may read or change it"),
      (0o660, "its group may change it"),
    ] {
      chmod(file, mode)
      let run = try runTool(
        imprintExecutable, ["serve", "--listen", "127.0.0.1:0", "--token-file", file])
      #expect(run.status == 1, "\(String(mode, radix: 8)): \(run.stderr)")
      let octal = String(mode, radix: 8)
      #expect(
        run.stderr.hasPrefix(
          "error: the token file '\(file)' cannot be used: its mode is \(octal); \(who)\n"),
        "\(run.stderr)")
      #expect(run.stderr.contains("chmod 600"), "\(run.stderr)")
      #expect(!run.stderr.contains(token))
    }
    for mode in [0o600, 0o400, 0o640, 0o440] as [mode_t] {
      chmod(file, mode)
      let server = try ServiceProcess(["--token-file", file])
      let answer = try await server.request(
        "POST", "/v1/qr?payload=x", headers: ["Authorization: Bearer \(token)"])
      #expect(answer.status == 200, "\(String(mode, radix: 8))")
      #expect(server.stop().status == 0)
    }
    let missing = try runTool(
      imprintExecutable, ["serve", "--listen", "127.0.0.1:0", "--token-file", folder.file("none")])
    #expect(missing.status == 1)
    #expect(missing.stderr.contains(folder.file("none")))
    // Never a token on the command line.
    let inline = try runTool(imprintExecutable, ["serve", "--token", token])
    #expect(inline.status == 2)
  }

  @Test("--config: every setting read, paths relative to the file, the command line winning")
  func configurationFile() async throws {
    let folder = TemporaryFolder()
    _ = try write(token, "token", in: folder)
    _ = try write(try #require(usd), "usd.json", in: folder)
    let config = try write(
      """
      {"listen": "127.0.0.1:0", "maxBody": 1000, "queue": 3, "jobs": 1, "accessLog": true,
       "tokenFile": "token", "publicMetrics": true, "cpuLimit": 10, "memoryLimit": 512,
       "timeout": 20, "priceLists": {"retail": "usd.json"}}
      """, "serve.json", in: folder)
    let server = try ServiceProcess(["--config", config])
    #expect(try await metric(server, "imprint_http_queue_limit", in: folder) == 3)
    #expect(try await metric(server, "imprint_price_lists", in: folder) == 1)
    // publicMetrics: a scrape without the token; tokenFile: a route that asks for it.
    #expect(try await server.request("GET", "/metrics").status == 200)
    #expect(try await server.request("POST", "/v1/qr?payload=x").status == 401)
    // maxBody 1000.
    let big = try write(String(repeating: "x", count: 2000), "big.bin", in: folder)
    let tooLarge = try await server.request(
      "POST", "/v1/inspect", headers: ["Authorization: Bearer \(token)", "Expect: 100-continue"],
      file: big)
    #expect(tooLarge.errorCode == "http.bodyTooLarge")
    #expect(tooLarge.text.contains("the limit is 1000"))
    let stopped = server.stop()
    #expect(stopped.status == 0)
    // accessLog: the requests were logged.
    // (Only request lines: a start may also log removing a killed server's jobs folder.)
    let requestLines = stopped.stderr.split(separator: "\n").filter {
      $0.hasPrefix("{") && $0.contains("\"method\":")
    }
    #expect(requestLines.count == 5)

    let overridden = try ServiceProcess(["--config", config, "--queue", "5"])
    #expect(try await metric(overridden, "imprint_http_queue_limit", in: folder) == 5)
    #expect(overridden.stop().status == 0)
  }

  @Test(
    "--config refuses unknown keys, wrong types, values out of range, bad names and lists",
    arguments: [
      (#"{"colour": "red"}"#, "'colour' is not a setting"),
      (#"{"queue": "3"}"#, "'queue' is '3'; expected a whole number"),
      (#"{"jobs": 0}"#, "'jobs' is 0; expected 1 to 256"),
      (#"{"timeout": 0.1}"#, "'timeout' is 0.1; expected 0.5 to 3600.0"),
      (#"{"priceListCheck": -1}"#, "'priceListCheck' is -1.0; expected 0.0 to 3600.0"),
      (#"{"jobLines": 0}"#, "'jobLines' is 0; expected 1 to 10000000"),
      (#"{"webhookAttempts": 0}"#, "'webhookAttempts' is 0; expected 1 to 100"),
      (#"{"webhookTimeout": 0.5}"#, "'webhookTimeout' is 0.5; expected 1.0 to 300.0"),
      (#"{"webhookBackoff": 0.05}"#, "'webhookBackoff' is 0.05; expected 0.1 to 86400.0"),
      (#"{"jobTimeout": 0.5}"#, "'jobTimeout' is 0.5; expected 1.0 to 604800.0"),
      (#"{"drainTimeout": 3601}"#, "'drainTimeout' is 3601.0; expected 1.0 to 3600.0"),
      (#"{"jobsDir": ""}"#, "'jobsDir' is empty; expected a folder's path"),
      (#"{"jobsDir": 1}"#, "'jobsDir' is 1; expected a string"),
      (#"{"listen": "localhost"}"#, "'listen' is 'localhost'; expected IPV4-ADDRESS:PORT"),
      (#"{"priceLists": {"a b": "usd.json"}}"#, "'priceLists.a b' is not a list name"),
      (#"{"priceLists": {"retail": 7}}"#, "'priceLists.retail' is 7; expected a string"),
      (#"{"printers": {"a b": {"uri": "q"}}}"#, "'printers.a b' is not a printer name"),
      (
        #"{"printers": {"front": "ipp://h/p"}}"#,
        "'printers.front' is 'ipp://h/p'; expected an object"
      ),
      (#"{"printers": {"front": {}}}"#, "'printers.front.uri' is missing; expected the printer's"),
      (
        #"{"printers": {"front": {"uri": "q", "url": "q"}}}"#,
        "'printers.front.url' is not a setting"
      ),
      (
        #"{"printers": {"front": {"uri": "http://h/p"}}}"#,
        "'printers.front.uri' is not a printer: cannot reach the printer 'http://h/p' (not an ipp://"
      ),
      (
        #"{"printers": {"front": {"uri": "q", "monoUri": "a b"}}}"#,
        "'printers.front.monoUri' is not a printer:"
      ),
      (#"{"printPasswordFile": 3}"#, "'printPasswordFile' is 3; expected a string"),
      (#"{"webhookSecretFile": 3}"#, "'webhookSecretFile' is 3; expected a string"),
      (#"[1]"#, "'(top level)' is an array; expected an object"),
    ])
  func badConfiguration(text: String, expected: String) throws {
    let folder = TemporaryFolder()
    let config = try write(text, "serve.json", in: folder)
    let run = try runTool(imprintExecutable, ["serve", "--config", config])
    #expect(run.status == 1)
    #expect(
      run.stderr.hasPrefix("error: configuration '\(config)': \(expected)"), "\(run.stderr)")
  }

  @Test("a price list that does not parse stops the start, naming its file")
  func badPriceListAtStart() async throws {
    let folder = TemporaryFolder()
    _ = try write(#"{"schemaVersion": 1}"#, "broken.json", in: folder)
    let config = try write(
      #"{"priceLists": {"retail": "broken.json"}}"#, "serve.json", in: folder)
    let run = try runTool(imprintExecutable, ["serve", "--config", config])
    #expect(run.status == 1)
    #expect(run.stderr.contains(folder.file("broken.json")), "\(run.stderr)")
  }

  @Test("SIGHUP reloads the price lists; a bad file keeps the previous list and is counted")
  func reloadOnHangUp() async throws {
    let folder = TemporaryFolder()
    let prices = try write(try #require(usd), "usd.json", in: folder)
    let config = try write(#"{"priceLists": {"retail": "usd.json"}}"#, "serve.json", in: folder)
    let server = try ServiceProcess(["--config", config])
    func reloads(_ result: String) async throws -> Double? {
      try await metric(server, "imprint_price_list_reloads_total", ["result": result], in: folder)
    }
    #expect(try await reloads("failed") == 0)
    try replace(prices, with: "{\"schemaVersion\": 1, \"currency\": ")
    kill(server.pid, SIGHUP)
    // The reload runs on the server's signal thread: wait for it to be counted.
    #expect(try await eventually { try await reloads("failed") == 1 })
    #expect(try await reloads("loaded") == 0)
    try replace(prices, with: try #require(usd).replacingOccurrences(of: "v7", with: "v8"))
    kill(server.pid, SIGHUP)
    #expect(try await eventually { try await reloads("loaded") == 1 })
    // The server still answers, and says what each reload did.
    #expect(try await server.request("GET", "/healthz").status == 200)
    let stopped = server.stop()
    #expect(stopped.status == 0)
    #expect(
      stopped.stderr.contains(
        "error: price list 'retail' not reloaded, the previous one is kept: "), "\(stopped.stderr)")
    #expect(stopped.stderr.contains("serve: price list 'retail' reloaded from \(prices)\n"))
  }

  @Test("PriceListStore: a reload from a bad file keeps the list; a good file replaces it")
  func storeKeepsListOnBadReload() async throws {
    let folder = TemporaryFolder()
    let text = try #require(usd)
    let path = try write(text, "usd.json", in: folder)
    let store = try PriceListStore(files: ["retail": path])
    let first = try #require(store.list("retail"))
    #expect(first.version == "v7")
    try replace(path, with: "not json")
    let refused = store.reload()
    #expect(refused.count == 1)
    #expect(refused[0].error?.code.hasPrefix("json.") == true)
    #expect(store.list("retail") == first)
    try FileManager.default.removeItem(atPath: path)
    #expect(store.reload()[0].error?.code == "file.notFound")
    #expect(store.list("retail") == first)
    try replace(path, with: text.replacingOccurrences(of: "v7", with: "v8"))
    #expect(store.reload()[0].error == nil)
    #expect(store.list("retail")?.version == "v8")
    #expect(store.reloadCounts == (loaded: 1, failed: 2))
  }

  @Test("BearerToken compares whole tokens only, under the Bearer scheme in any case")
  func tokenComparison() async throws {
    let bearer = try BearerToken(token, source: "test")
    #expect(bearer.admits("Bearer \(token)"))
    #expect(bearer.admits("bearer \(token)"))
    #expect(!bearer.admits(nil))
    #expect(!bearer.admits("Bearer"))
    #expect(!bearer.admits("Bearer \(token.dropLast())"))
    // Blanks after the token are the header's optional whitespace (RFC 7230), not the token's.
    #expect(bearer.admits("Bearer \(token) "))
    #expect(bearer.admits("Bearer  \(token)\t"))
    #expect(!bearer.admits("Bearer \(token) x"))
    #expect(!bearer.admits("Bearer  "))
    #expect(!bearer.admits(token))
    #expect(throws: ServerError.self) { try BearerToken("short", source: "test") }
    #expect(
      try BearerToken("abcdefghijklmnop==", source: "test").admits("Bearer abcdefghijklmnop=="))
    #expect(throws: ServerError.self) { try BearerToken("abc=defghijklmnop", source: "test") }
  }
}
