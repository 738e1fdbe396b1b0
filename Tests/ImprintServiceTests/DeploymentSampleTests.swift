// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the deployment samples in deploy/ checked with what this machine has:
// every flag they pass is one `imprint serve --help` lists, the settings file reads strictly,
// systemd-analyze verifies the unit without a word, the Kubernetes files (the Deployment and
// Service, and the batch Indexed Job) are read into the Kubernetes Python client's API models
// with every field kept, the Deployment's probes on /healthz and /readyz and a grace period that
// covers the drain, and the container's runtime packages provide every library the executable
// links or loads.

import Foundation
import ImprintTestSupport
import Testing

@testable import ImprintService

private let deploy = repositoryRoot + "/deploy/"

private func text(_ name: String) throws -> String {
  try String(contentsOfFile: deploy + name, encoding: .utf8)
}

/// The `--flag` names among `arguments` (`--config=/x` gives `config`).
private func flags(_ arguments: [String]) -> [String] {
  arguments.filter { $0.hasPrefix("--") }.map {
    String($0.dropFirst(2).prefix { $0 != "=" })
  }
}

/// The drain `imprint serve` allows on SIGTERM, in seconds.
private func drainSeconds() throws -> Double {
  ServiceConfiguration(
    listen: try ListenAddress(parsing: "127.0.0.1:0"), workerExecutable: "",
    placeholder: ([], "")
  ).drainSeconds
}

/// The Kubernetes file's documents, as JSON by Python's yaml.
private func kubernetes() throws -> [[String: Any]] {
  let script = """
    import json, sys, yaml
    print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))
    """
  let run = try runTool("python3", ["-c", script, deploy + "imprint-serve.yaml"])
  try #require(run.status == 0, "\(run.stderr)")
  return try #require(
    try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [[String: Any]])
}

/// Reads Kubernetes files into the Kubernetes Python client's API models and writes them back.
///
/// The client's own deserializer checks required fields and numbers; a field the model does not
/// have is dropped by it, so every field of the file must come back with its value. Prints `{"documents": ["FILE#N KIND NAME", ...], "problems": [...]}`.
private let kubernetesChecker = #"""
  import json, sys, yaml
  from kubernetes import client
  models = {('apps/v1', 'Deployment'): 'V1Deployment', ('v1', 'Service'): 'V1Service',
            ('batch/v1', 'Job'): 'V1Job', ('v1', 'ConfigMap'): 'V1ConfigMap'}
  api = client.ApiClient()
  # What ApiClient.deserialize does once it has the answer's JSON (its own signature changed
  # in client 32: a response object before, the text and its type after).
  deserialize = api._ApiClient__deserialize
  documents, problems = [], []
  def compare(read, kept, where, at):
      if isinstance(read, dict):
          if not isinstance(kept, dict):
              return problems.append(f'{where}: {at or "."} is not an object')
          for key, value in read.items():
              if key not in kept: problems.append(f'{where}: {at}.{key} is not a field there')
              else: compare(value, kept[key], where, f'{at}.{key}')
      elif isinstance(read, list):
          if not isinstance(kept, list) or len(kept) != len(read):
              return problems.append(f'{where}: {at} is not a list')
          for index, (value, back) in enumerate(zip(read, kept)):
              compare(value, back, where, f'{at}[{index}]')
      elif read != kept or type(read) != type(kept):
          problems.append(f'{where}: {at} is {read!r}; the model reads {kept!r}')
  for path in sys.argv[1:]:
      for index, document in enumerate(yaml.safe_load_all(open(path, encoding='utf-8'))):
          where = f'{path.rsplit("/", 1)[-1]}#{index}'
          model = models.get((document.get('apiVersion'), document.get('kind')))
          if model is None:
              problems.append(f'{where}: {document.get("apiVersion")} {document.get("kind")} '
                              'is not a kind this check knows')
              continue
          try:
              read = deserialize(document, model)
          except Exception as error:
              problems.append(f'{where}: {model}: {error}')
              continue
          compare(document, api.sanitize_for_serialization(read), where, '')
          documents.append(f'{where} {document["kind"]} {read.metadata.name}')
  print(json.dumps({'documents': documents, 'problems': problems}))
  """#

/// Checks Kubernetes files with `kubernetesChecker`.
private func checkKubernetes(_ paths: [String]) throws -> (documents: [String], problems: [String])
{
  let run = try runTool("python3", ["-c", kubernetesChecker] + paths)
  try #require(run.status == 0, "\(run.stderr)")
  let object = try #require(
    try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [String: Any])
  return (object["documents"] as? [String] ?? [], object["problems"] as? [String] ?? [])
}

@Suite("deployment samples", .liveHandlesChecked)
struct DeploymentSampleTests {
  @Test("every flag the unit, the container and the Deployment pass is one imprint serve takes")
  func flagsExist() throws {
    let help = try runTool(imprintExecutable, ["serve", "--help"])
    #expect(help.status == 0)
    let unit = try text("imprint-serve.service")
    let execStart = try #require(
      unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
    let container = try text("Containerfile")
    let command = try #require(
      container.split(separator: "\n").first { $0.hasPrefix("CMD ") })
    let commandWords = try #require(
      try JSONSerialization.jsonObject(with: Data(command.dropFirst(4).utf8)) as? [String])
    let deployment = try #require(try kubernetes().first)
    let spec = (deployment["spec"] as? [String: Any])?["template"] as? [String: Any]
    let containers = (spec?["spec"] as? [String: Any])?["containers"] as? [[String: Any]]
    let args = try #require(containers?.first?["args"] as? [String])
    var used: [String] = []
    for words in [execStart.split(separator: " ").map(String.init), commandWords, args] {
      #expect(words.contains("serve"))
      used += flags(words)
    }
    try #require(used.count >= 8)
    for flag in used {
      #expect(help.stdout.contains("--\(flag) ") || help.stdout.contains("--\(flag)\n"), "\(flag)")
    }
  }

  @Test("serve.json reads strictly, each key a flag of imprint serve, paths beside the file")
  func settingsSample() throws {
    let settings = try ServiceSettings.load(deploy + "serve.json")
    #expect(settings.priceLists?["retail"] == deploy + "prices/retail.json")
    #expect(settings.queue == 64)
    #expect(settings.printers?["front"]?.uri == "ipps://printer-1.shop.internal/ipp/print")
    let help = try runTool(imprintExecutable, ["serve", "--help"]).stdout
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(try text("serve.json").utf8)) as? [String: Any])
    for key in object.keys where !["priceLists", "printers"].contains(key) {
      let flag = key.replacing(/[A-Z]/) { "-" + $0.output.lowercased() }
      #expect(help.contains("--\(flag) "), "\(key) -> --\(flag)")
    }
  }

  @Test("systemd-analyze verifies the unit without a warning; it restarts, reloads and drains")
  func systemdUnit() throws {
    let folder = TemporaryFolder()
    let unit = try text("imprint-serve.service")
    // verify checks that ExecStart's program exists: the built one stands in for the installed.
    let local = unit.replacingOccurrences(
      of: "/usr/local/lib/imprint/imprint", with: imprintExecutable)
    let path = folder.file("imprint-serve.service")
    try Data(local.utf8).write(to: URL(fileURLWithPath: path))
    let verify = try runTool("systemd-analyze", ["verify", path])
    #expect(verify.status == 0)
    #expect(verify.stdout.isEmpty && verify.stderr.isEmpty, "\(verify.stdout)\(verify.stderr)")
    let lines = Set(unit.split(separator: "\n").map(String.init))
    for line in [
      "KillSignal=SIGTERM", "KillMode=mixed", "Restart=on-failure", "NoNewPrivileges=yes",
      "ProtectSystem=strict", "ExecReload=/bin/kill -HUP $MAINPID",
    ] {
      #expect(lines.contains(line), "\(line)")
    }
    let stop = try #require(lines.first { $0.hasPrefix("TimeoutStopSec=") })
    #expect(Double(stop.dropFirst("TimeoutStopSec=".count)) ?? 0 > (try drainSeconds()))
    #expect(!unit.contains("--token "))
  }

  @Test("the Deployment probes /healthz and /readyz and waits longer than the drain to kill")
  func kubernetesDeployment() throws {
    let documents = try kubernetes()
    #expect(documents.map { $0["kind"] as? String } == ["Deployment", "Service"])
    let template = try #require(
      (documents[0]["spec"] as? [String: Any])?["template"] as? [String: Any])
    let labels = (template["metadata"] as? [String: Any])?["labels"] as? [String: String]
    let pod = try #require(template["spec"] as? [String: Any])
    let container = try #require((pod["containers"] as? [[String: Any]])?.first)
    func probe(_ name: String) -> (path: String?, port: String?) {
      let get = (container[name] as? [String: Any])?["httpGet"] as? [String: Any]
      return (get?["path"] as? String, get?["port"] as? String)
    }
    #expect(probe("livenessProbe").path == "/healthz")
    #expect(probe("readinessProbe").path == "/readyz")
    let ports = container["ports"] as? [[String: Any]]
    #expect(ports?.first?["name"] as? String == probe("readinessProbe").port)
    #expect(ports?.first?["containerPort"] as? Int == 8080)
    let preStop =
      ((container["lifecycle"] as? [String: Any])?["preStop"] as? [String: Any])?[
        "exec"] as? [String: Any]
    let pause = Double((preStop?["command"] as? [String])?.last ?? "") ?? 0
    let grace = try #require(pod["terminationGracePeriodSeconds"] as? Int)
    #expect(Double(grace) > (try drainSeconds()) + pause)
    // The Service sends to these pods, on the container's named port.
    let service = try #require(documents[1]["spec"] as? [String: Any])
    #expect(service["selector"] as? [String: String] == labels)
    let target = (service["ports"] as? [[String: Any]])?.first?["targetPort"] as? String
    #expect(target == ports?.first?["name"] as? String)
  }

  @Test("the Kubernetes files read into the Kubernetes API models with every field kept")
  func kubernetesModels() throws {
    let job = repositoryRoot + "/examples/scale-out/imprint-batch-job.yaml"
    let checked = try checkKubernetes([deploy + "imprint-serve.yaml", job])
    #expect(checked.problems.isEmpty, "\(checked.problems)")
    #expect(
      checked.documents == [
        "imprint-serve.yaml#0 Deployment imprint-serve",
        "imprint-serve.yaml#1 Service imprint-serve",
        "imprint-batch-job.yaml#0 Job imprint-cards-2026-11-30",
      ])
    // The check is not vacuous: a misspelt field, a field in the wrong object, a missing
    // required field and a number written as a word are each found.
    let folder = TemporaryFolder()
    let serve = try text("imprint-serve.yaml")
    for (from, to, problem) in [
      ("path: /readyz", "paht: /readyz", [".readinessProbe.httpGet.paht is not a field there"]),
      (
        "      terminationGracePeriodSeconds: 45", "      terminationGracePeriodSecond: 45",
        [".spec.template.spec.terminationGracePeriodSecond is not a field there"]
      ),
      // The deserializer's own words differ between clients (pydantic models from 37 on): the
      // model, and the field or the value.
      ("        - name: imprint\n", "        - stdin: false\n", ["V1Deployment: ", "name"]),
      ("replicas: 2", "replicas: two", ["V1Deployment: ", "two"]),
    ] {
      try #require(serve.contains(from), "\(from)")
      let path = folder.file("altered.yaml")
      try Data(serve.replacingOccurrences(of: from, with: to).utf8).write(
        to: URL(fileURLWithPath: path))
      let altered = try checkKubernetes([path])
      #expect(altered.problems.count == 1, "\(to): \(altered.problems)")
      let found = altered.problems.first ?? ""
      #expect(found.hasPrefix("altered.yaml#0: "), "\(to): \(found)")
      for words in problem {
        #expect(found.contains(words), "\(to): \(found)")
      }
    }
    // The Job runs a command imprint has, with flags imprint batch takes.
    let command = try #require(
      try String(contentsOfFile: job, encoding: .utf8).split(separator: "\n").first {
        $0.contains("command:")
      })
    let words = try #require(
      try JSONSerialization.jsonObject(
        with: Data(command.drop { $0 != "[" }.utf8)) as? [String])
    #expect(Array(words.prefix(2)) == ["imprint", "batch"])
    let help = try runTool(imprintExecutable, ["batch", "--help"]).stdout
    for flag in words.filter({ $0.hasPrefix("-") }) {
      #expect(help.contains(flag + " ") || help.contains(flag + ","), "\(flag)")
    }
  }

  @Test("the container's runtime packages provide every library imprint links or loads")
  func containerPackages() throws {
    let container = try text("Containerfile")
    let stages = container.split(separator: "\n").filter { $0.hasPrefix("FROM ") }
    #expect(stages.count == 2)
    #expect(stages.allSatisfy { $0.contains("bookworm") || $0.contains("debian:12") })
    // The runtime stage's apt-get install list.
    let runtime = try #require(container.components(separatedBy: "FROM debian:12").last)
    let install = try #require(
      runtime.components(separatedBy: "--no-install-recommends").dropFirst().first)
    let listed = install.components(separatedBy: "&&")[0].split(whereSeparator: \.isWhitespace)
      .filter { $0 != "\\" }.map(String.init)
    try #require(listed.count > 10)
    // Everything apt installs for them.
    let depends = try runTool(
      "apt-cache",
      [
        "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
        "--no-breaks", "--no-replaces", "--no-enhances",
      ] + listed)
    #expect(depends.status == 0, "\(depends.stderr)")
    let closure = Set(
      depends.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }.map {
        String($0.prefix { $0 != ":" })
      })
    // The libraries imprint needs: its NEEDED entries, and those it loads with dlopen (libheif,
    // libcurl); the Swift runtime, under the toolchain, is linked statically by the image.
    let elf = try runTool("readelf", ["-d", imprintExecutable])
    var needed = elf.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap {
      $0.split(separator: "[").last?.split(separator: "]").first.map(String.init)
    }
    needed += ["libheif.so.1", "libcurl.so.4"]
    let cache = try runTool("ldconfig", ["-p"]).stdout.split(separator: "\n")
    // In the system's cache: a Debian package's (the Swift runtime is not there).
    let system = needed.filter { library in cache.contains { $0.hasPrefix("\t\(library) ") } }
    try #require(system.count >= 20)
    for library in system {
      // dpkg knows a file by the folder its package put it in (/lib or /usr/lib): ask by name.
      let owners = try runTool("dpkg", ["-S", "*/" + library])
      #expect(owners.status == 0, "\(library): \(owners.stderr)")
      let packages = owners.stdout.split(separator: "\n").flatMap {
        $0.components(separatedBy: ": /")[0].components(separatedBy: ", ").map {
          String($0.prefix { $0 != ":" })
        }
      }
      #expect(packages.contains(where: closure.contains), "\(library): \(packages)")
    }
  }
}
