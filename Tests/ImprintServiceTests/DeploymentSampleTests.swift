// SPDX-License-Identifier: Apache-2.0
// ImprintServiceTests: the deployment samples in deploy/ checked with what this machine has:
// every flag they pass is one `imprint serve --help` lists, the settings file reads strictly,
// systemd-analyze verifies the unit without a word, the Kubernetes files (the Deployment and
// Service, and the batch Indexed Job) are read into the Kubernetes Python client's API models
// with every field kept, the Deployment's probes on /healthz and /readyz and a grace period that
// covers the drain, and the container's runtime packages provide every library the executable
// links or loads.

import Foundation
import ImprintCore
import ImprintHTTP
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

/// The time `imprint serve` may take to end after SIGTERM, in seconds: the drain it allows and
/// the stop's margin, past which it exits even with work stuck (status 3).
private func drainSeconds() throws -> Double {
  ServiceConfiguration(
    listen: try ListenAddress(parsing: "127.0.0.1:0"), workerExecutable: "",
    placeholder: ([], "")
  ).drainSeconds + ImprintService.stopMargin
}

/// Expects the pod's grace period to last longer than its container's preStop pause and the
/// server's drain together: the kubelet's SIGKILL never cuts a stop short.
private func expectGraceOverDrain(pod: [String: Any], container: [String: Any]) throws {
  let preStop =
    ((container["lifecycle"] as? [String: Any])?["preStop"] as? [String: Any])?[
      "exec"] as? [String: Any]
  let pause = Double((preStop?["command"] as? [String])?.last ?? "") ?? 0
  let grace = try #require(pod["terminationGracePeriodSeconds"] as? Int)
  #expect(Double(grace) > (try drainSeconds()) + pause)
}

/// The sample of replicas sharing their jobs (`--jobs-db`).
private let replicasSample = deploy + "imprint-serve-replicas.yaml"

/// The batch Indexed Job sample.
private let batchJob = repositoryRoot + "/examples/scale-out/imprint-batch-job.yaml"

/// The documents of a YAML file (default: the Deployment's), as JSON by Python's yaml.
private func kubernetes(_ path: String = deploy + "imprint-serve.yaml") throws -> [[String: Any]] {
  let script = pythonFixture("yaml_documents.py")
  let run = try runTool("python3", ["-c", script, path])
  try #require(run.status == 0, "\(run.stderr)")
  return try #require(
    try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [[String: Any]])
}

/// The pod template's spec of a Deployment or Job document.
private func podSpec(_ document: [String: Any]) throws -> [String: Any] {
  try #require(
    ((document["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"]
      as? [String: Any])
}

/// What deploy/Containerfile's runtime stage says of the user the image runs as: `USER`, the
/// `useradd` and `groupadd` of that user, and the `ENV` settings.
private struct ImageUser {
  var user: Int
  var group: Int
  var home: String
  var environment: [String: String]

  init() throws {
    let container = try text("Containerfile")
    let runtime = try #require(container.components(separatedBy: "FROM debian:12").last)
    let line = try #require(runtime.firstMatch(of: /\nUSER (\d+):(\d+)\n/))
    user = try #require(Int(line.1))
    group = try #require(Int(line.2))
    // The account useradd makes has these numbers, and groupadd the group.
    let useradd = try #require(runtime.firstMatch(of: /useradd ([^\n]*(?:\\\n[^\n]*)*)/))
    let words = useradd.1.split(whereSeparator: { $0.isWhitespace || $0 == "\\" }).map(String.init)
    func option(_ name: String) -> String? {
      words.firstIndex(of: name).flatMap { $0 + 1 < words.count ? words[$0 + 1] : nil }
    }
    #expect(option("--uid").flatMap { Int($0) } == user)
    #expect(option("--gid").flatMap { Int($0) } == group)
    let groupadd = try #require(runtime.firstMatch(of: /groupadd [^\n]*--gid (\d+)/))
    #expect(Int(groupadd.1) == group)
    home = try #require(option("--home-dir"))
    environment = [:]
    for setting in runtime.matches(of: /\nENV ([^\n]*)/) {
      for pair in setting.1.split(separator: " ") {
        let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
        try #require(parts.count == 2, "ENV \(setting.1)")
        environment[parts[0]] = parts[1]
      }
    }
  }
}

/// A pod's file system, played in a temporary folder: each volume mount of the container is a
/// folder under `root`, and the rest (the image's read-only root) is outside it.
private struct PlayedPod {
  let root = TemporaryFolder()
  /// The container's mounts: path in the pod and whether it may be written.
  let mounts: [(path: String, writable: Bool)]

  init(_ container: [String: Any]) throws {
    let listed = try #require(container["volumeMounts"] as? [[String: Any]])
    mounts = try listed.map {
      (try #require($0["mountPath"] as? String), ($0["readOnly"] as? Bool) != true)
    }
    for mount in mounts {
      try FileManager.default.createDirectory(
        atPath: root.path + mount.path, withIntermediateDirectories: true)
    }
  }

  /// `word` with a path on a mount at its start (or after `--flag=`) moved into `root`; other
  /// paths are left where they are, outside it, as the image's root is.
  func place(_ word: String) -> String {
    let (flag, value) =
      word.hasPrefix("--") && word.contains("=")
      ? (String(word.prefix { $0 != "=" }) + "=", String(word.drop { $0 != "=" }.dropFirst()))
      : ("", word)
    guard mounts.contains(where: { value == $0.path || value.hasPrefix($0.path + "/") }) else {
      return word
    }
    return flag + root.path + value
  }

  /// The environment the image gives the program (its `ENV`, and `HOME` from its user), with
  /// `more` (a manifest's `env`), paths placed in the pod.
  ///
  /// `HOME` is the image's, under `root` but on no mount: written to, it is reported as the
  /// read-only root is, and nothing is made in this machine's own folders.
  func environment(_ image: ImageUser, _ more: [String: String] = [:]) -> [String: String] {
    var environment = ["PATH": "/usr/bin:/bin", "HOME": root.path + image.home]
    environment.merge(image.environment.mapValues(place)) { $1 }
    environment.merge(more.mapValues(place)) { $1 }
    return environment
  }

  /// The paths among `written` that lie on no writable mount: the image's root, read-only.
  func outsideWritableMounts(_ written: [String]) -> [String] {
    let writable = mounts.filter(\.writable).map { root.path + $0.path }
    return written.filter { path in
      !writable.contains { path == $0 || path.hasPrefix($0 + "/") }
    }
  }
}

/// The system calls strace is asked to show: those that name files.
private let traced = ["-f", "-qq", "-y", "-s", "4096", "-e", "trace=%file"]

/// The paths written, made or removed in an strace log of `traced`.
///
/// Files opened for writing, folders made, names renamed, linked, removed, and metadata
/// changed; `-y` gives descriptors with their paths, and `AT_FDCWD` with the working folder.
/// Devices (`/dev`) are left out.
private func writtenPaths(_ log: String) -> [String] {
  let changing: Set<String> = [
    "creat", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat",
    "renameat2", "truncate", "mknod", "mknodat", "chmod", "fchmodat", "fchmodat2", "chown",
    "lchown", "fchownat", "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr",
    "removexattr", "lremovexattr",
  ]
  // Only the new name is written: the old one of a link, and the target text of a symlink.
  let lastOnly: Set<String> = ["link", "linkat", "symlink", "symlinkat"]
  var paths: [String] = []
  for line in log.split(separator: "\n") {
    guard let call = line.firstMatch(of: /^\d+ +([a-z0-9_]+)\((.*)$/) else { continue }
    let name = String(call.1)
    let arguments = String(call.2)
    let opened = ["open", "openat", "openat2"].contains(name)
    guard changing.contains(name) || lastOnly.contains(name) || opened else { continue }
    if opened {
      let flags = arguments.split(separator: ",").dropFirst(name == "open" ? 1 : 2).first ?? ""
      guard ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"].contains(where: flags.contains)
      else { continue }
    }
    // Each path: a quoted string, after the descriptor it is relative to when there is one.
    var named: [String] = []
    for match in arguments.matches(of: /(?:(?:\d+|AT_FDCWD)<([^>]*)>, )?"((?:[^"\\]|\\.)*)"/) {
      let path = String(match.2)
      if path.hasPrefix("/") {
        named.append(path)
      } else if let folder = match.1 {
        named.append(folder + "/" + path)
      }
    }
    if lastOnly.contains(name) { named = Array(named.suffix(1)) }
    paths += named.filter { $0 != "/dev" && !$0.hasPrefix("/dev/") }
  }
  return paths
}

/// Reads Kubernetes files into the Kubernetes Python client's API models and writes them back.
///
/// The client's own deserializer checks required fields and numbers; a field the model does not
/// have is dropped by it, so every field of the file must come back with its value. Prints `{"documents": ["FILE#N KIND NAME", ...], "problems": [...]}`.
private let kubernetesChecker = pythonFixture("kubernetes_models.py")

/// Checks Kubernetes files with `kubernetesChecker`.
private func checkKubernetes(_ paths: [String]) throws -> (documents: [String], problems: [String])
{
  let run = try runTool("python3", ["-c", kubernetesChecker] + paths)
  try #require(run.status == 0, "\(run.stderr)")
  let object = try #require(
    try JSONSerialization.jsonObject(with: Data(run.stdoutBytes)) as? [String: Any])
  return (object["documents"] as? [String] ?? [], object["problems"] as? [String] ?? [])
}

@Suite("deployment samples", .liveHandlesChecked, .onTestThreads)
struct DeploymentSampleTests {
  @Test("every flag the unit, the container and the Deployment pass is one imprint serve takes")
  func flagsExist() async throws {
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

  @Test("the samples', README's and docs' image tags name this build's version, ImprintVersion's")
  func imageTags() async throws {
    let samples = [
      deploy + "Containerfile", deploy + "imprint-serve.yaml", replicasSample,
      repositoryRoot + "/examples/scale-out/imprint-batch-job.yaml",
      // The service guide's deployment steps build and run the image by its tag.
      repositoryRoot + "/docs/service.md",
    ]
    // README and the other guides may show no image; each tag they show is checked.
    let documents = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/docs")
      .filter { $0.hasSuffix(".md") }.sorted().map { repositoryRoot + "/docs/" + $0 }
    for path in samples + [repositoryRoot + "/README.md"] + documents {
      let tags = try String(contentsOfFile: path, encoding: .utf8)
        .matches(of: /imprint:(\d+\.\d+\.\d+)/).map { String($0.output.1) }
      #expect(!tags.isEmpty || !samples.contains(path), "\(path) names no image")
      #expect(tags.allSatisfy { $0 == ImprintVersion.current }, "\(path): \(tags)")
    }
  }

  @Test("serve.json reads strictly, each key a flag of imprint serve, paths beside the file")
  func settingsSample() async throws {
    let settings = try ServiceSettings.load(deploy + "serve.json")
    #expect(settings.priceLists?["retail"] == deploy + "prices/retail.json")
    #expect(settings.priceLists?["trade"] == deploy + "prices/trade.json")
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

  @Test("a server started with serve.json quotes an order with both price lists it names")
  func settingsSampleServes() async throws {
    let folder = TemporaryFolder()
    // The sample as it is, but for the address (a free port) and a token (the sample's is
    // given by the unit and the manifest).
    let server = try ServiceProcess(["--config", deploy + "serve.json"])
    let order = folder.file("order.json")
    try Data(
      #"""
      {"schemaVersion": 1, "store": "Harbor Print Shop", "files": [{"path": "notes.pdf", "copies": 20, "color": "mono"}], "cards": {"count": 1, "sides": "both"}}
      """#.utf8
    ).write(to: URL(fileURLWithPath: order))
    var totals: [String: Int] = [:]
    for list in ["retail", "trade"] {
      let quote = try await server.request(
        "POST", "/v1/quote?prices=\(list)",
        form: [
          .file("order", path: order),
          .file("notes.pdf", path: "\(repositoryRoot)/assets/samples/documents/course-notes.pdf"),
        ])
      #expect(quote.status == 200, "\(list): \(quote.text)")
      #expect(quote.json?["currency"] as? String == "USD")
      #expect(quote.json?["priceListVersion"] as? String == "\(list)-2026-12")
      totals[list] = (quote.json?["total"] as? [String: Any])?["minor"] as? Int
    }
    // Trade prices are below retail for the same order.
    let retail = try #require(totals["retail"])
    let trade = try #require(totals["trade"])
    #expect(trade > 0 && trade < retail, "\(totals)")
    #expect(server.stop().status == 0)
  }

  @Test("the image's HEALTHCHECK command tells a serving server from none (bash's /dev/tcp)")
  func containerHealthCheck() async throws {
    let container = try text("Containerfile")
    let lines = container.split(separator: "\n").map(String.init)
    let start = try #require(lines.firstIndex { $0.hasPrefix("HEALTHCHECK ") })
    let command = try #require(
      lines[start...].first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("CMD [") })
    let words = try #require(
      try JSONSerialization.jsonObject(
        with: Data(command.trimmingCharacters(in: .whitespaces).dropFirst(4).utf8)) as? [String])
    try #require(words.count == 3 && words[0] == "/bin/bash", "\(words)")
    // The image's CMD listens on 8080; the check probes that port.
    #expect(words[2].contains("/dev/tcp/127.0.0.1/8080"))
    let server = try ServiceProcess()
    let script = words[2].replacingOccurrences(of: "/8080", with: "/\(server.port)")
    let healthy = try runTool("bash", [words[1], script])
    #expect(healthy.status == 0, "\(healthy.stderr)")
    #expect(server.stop().status == 0)
    // The same port, nobody listening: the check fails.
    let down = try runTool("bash", [words[1], script])
    #expect(down.status != 0)
  }

  @Test("systemd-analyze verifies the unit without a warning; it restarts, reloads and drains")
  func systemdUnit() async throws {
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
      "ProtectSystem=strict", "ExecReload=/bin/kill -HUP $MAINPID", "StateDirectory=imprint",
    ] {
      #expect(lines.contains(line), "\(line)")
    }
    // fontconfig's caches go to the cache directory, which ProtectSystem leaves writable (a
    // dynamic user's home, /, is not): XDG_CACHE_HOME names it.
    let cacheDirectory = try #require(lines.first { $0.hasPrefix("CacheDirectory=") })
    #expect(
      lines.contains(
        "Environment=XDG_CACHE_HOME=/var/cache/" + cacheDirectory.dropFirst("CacheDirectory=".count)
      ))
    // The jobs folder lies in the state directory, which ProtectSystem leaves writable.
    #expect(
      lines.contains {
        $0.hasPrefix("ExecStart=") && $0.hasSuffix(" --jobs-dir /var/lib/imprint/jobs")
      })
    let stop = try #require(lines.first { $0.hasPrefix("TimeoutStopSec=") })
    #expect(Double(stop.dropFirst("TimeoutStopSec=".count)) ?? 0 > (try drainSeconds()))
    #expect(!unit.contains("--token "))
  }

  @Test("the Deployment probes /healthz and /readyz and waits longer than the drain to kill")
  func kubernetesDeployment() async throws {
    let documents = try kubernetes()
    #expect(
      documents.map { $0["kind"] as? String } == ["Deployment", "PersistentVolumeClaim", "Service"])
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
    try expectGraceOverDrain(pod: pod, container: container)
    // The jobs folder on the claim, one writer: one pod, replaced only once the old one ended,
    // and a ReadWriteOnce volume. The folder is one inside the claim's root, never the root
    // itself, whose lost+found (ext4) would be a jobs.skipped line at every start.
    let args = container["args"] as? [String] ?? []
    let jobs = try #require(args.first { $0.hasPrefix("--jobs-dir=") }?.dropFirst(11))
    let mount = (container["volumeMounts"] as? [[String: Any]])?.first {
      guard let path = $0["mountPath"] as? String else { return false }
      return jobs.hasPrefix(path + "/") && !jobs.dropFirst(path.count + 1).contains("/")
    }
    #expect(mount != nil, "--jobs-dir=\(jobs) is not a folder at the root of a mount")
    let volume = (pod["volumes"] as? [[String: Any]])?.first {
      $0["name"] as? String == mount?["name"] as? String
    }
    let claimName =
      (volume?["persistentVolumeClaim"] as? [String: Any])?["claimName"] as? String
    let claim = try #require(documents[1])
    #expect(
      claimName != nil && claimName == (claim["metadata"] as? [String: Any])?["name"] as? String)
    #expect(
      (claim["spec"] as? [String: Any])?["accessModes"] as? [String] == ["ReadWriteOnce"])
    let deployment = documents[0]["spec"] as? [String: Any]
    #expect(deployment?["replicas"] as? Int == 1)
    #expect((deployment?["strategy"] as? [String: Any])?["type"] as? String == "Recreate")
    // The Service sends to these pods, on the container's named port.
    let service = try #require(documents[2]["spec"] as? [String: Any])
    #expect(service["selector"] as? [String: String] == labels)
    let target = (service["ports"] as? [[String: Any]])?.first?["targetPort"] as? String
    #expect(target == ports?.first?["name"] as? String)
  }

  @Test("replicas: 3 pods on one ReadWriteMany claim, the database from a Secret, autoscaled")
  func replicasDeployment() async throws {
    let documents = try kubernetes(replicasSample)
    #expect(
      documents.map { $0["kind"] as? String } == [
        "Deployment", "PersistentVolumeClaim", "Service", "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
      ])
    let deployment = try #require(documents[0]["spec"] as? [String: Any])
    let replicas = try #require(deployment["replicas"] as? Int)
    #expect(replicas >= 3)
    let strategy = try #require(deployment["strategy"] as? [String: Any])
    #expect(strategy["type"] as? String == "RollingUpdate")
    #expect((strategy["rollingUpdate"] as? [String: Any])?["maxUnavailable"] as? Int == 0)
    let pod = try podSpec(documents[0])
    let labels =
      ((deployment["template"] as? [String: Any])?["metadata"] as? [String: Any])?["labels"]
      as? [String: String]
    let container = try #require((pod["containers"] as? [[String: Any]])?.first)
    let args = try #require(container["args"] as? [String])
    // Every flag is one imprint serve takes; the database's URL comes from the Secret through
    // an environment variable the kubelet expands, its password as libpq's PGPASSWORD.
    let help = try runTool(imprintExecutable, ["serve", "--help"]).stdout
    for flag in flags(args) {
      #expect(help.contains("--\(flag) ") || help.contains("--\(flag)\n"), "\(flag)")
    }
    #expect(args.contains("--jobs-db=$(IMPRINT_JOBS_DB)"))
    #expect(args.contains { $0.hasPrefix("--jobs-dir=") })
    let environment = try #require(container["env"] as? [[String: Any]])
    for name in ["IMPRINT_JOBS_DB", "PGPASSWORD"] {
      let entry = environment.first { $0["name"] as? String == name }
      let secret =
        (entry?["valueFrom"] as? [String: Any])?["secretKeyRef"] as? [String: Any]
      #expect(secret?["name"] as? String == "imprint-jobs-db", "\(name)")
    }
    // One claim every replica mounts, read-write.
    let claim = try #require((documents[1]["metadata"] as? [String: Any])?["name"] as? String)
    #expect(
      (documents[1]["spec"] as? [String: Any])?["accessModes"] as? [String] == ["ReadWriteMany"])
    let volumes = try #require(pod["volumes"] as? [[String: Any]])
    #expect(
      volumes.contains {
        ($0["persistentVolumeClaim"] as? [String: Any])?["claimName"] as? String == claim
      })
    // The drain fits in the grace period, as for one pod.
    try expectGraceOverDrain(pod: pod, container: container)
    // The autoscaler scales this Deployment from its replicas; the budget and the Service
    // select its pods.
    let autoscaler = try #require(documents[3]["spec"] as? [String: Any])
    let target = autoscaler["scaleTargetRef"] as? [String: Any]
    #expect(
      target?["kind"] as? String == "Deployment" && target?["name"] as? String == "imprint-serve")
    #expect(autoscaler["minReplicas"] as? Int == replicas)
    #expect((autoscaler["maxReplicas"] as? Int ?? 0) > replicas)
    let budget = try #require(documents[4]["spec"] as? [String: Any])
    #expect((budget["selector"] as? [String: Any])?["matchLabels"] as? [String: String] == labels)
    #expect((documents[2]["spec"] as? [String: Any])?["selector"] as? [String: String] == labels)
  }

  @Test("the Kubernetes files read into the Kubernetes API models with every field kept")
  func kubernetesModels() async throws {
    let job = repositoryRoot + "/examples/scale-out/imprint-batch-job.yaml"
    let checked = try checkKubernetes([deploy + "imprint-serve.yaml", job, replicasSample])
    #expect(checked.problems.isEmpty, "\(checked.problems)")
    #expect(
      checked.documents == [
        "imprint-serve.yaml#0 Deployment imprint-serve",
        "imprint-serve.yaml#1 PersistentVolumeClaim imprint-serve-jobs",
        "imprint-serve.yaml#2 Service imprint-serve",
        "imprint-batch-job.yaml#0 Job imprint-cards-2026-11-30",
        "imprint-serve-replicas.yaml#0 Deployment imprint-serve",
        "imprint-serve-replicas.yaml#1 PersistentVolumeClaim imprint-serve-shared-jobs",
        "imprint-serve-replicas.yaml#2 Service imprint-serve",
        "imprint-serve-replicas.yaml#3 HorizontalPodAutoscaler imprint-serve",
        "imprint-serve-replicas.yaml#4 PodDisruptionBudget imprint-serve",
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
      ("replicas: 1", "replicas: one", ["V1Deployment: ", "one"]),
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

  @Test("the pods run as the image's user and group, unprivileged, on a read-only root")
  func podSecurity() async throws {
    let image = try ImageUser()
    #expect(image.user != 0 && image.group != 0)
    for (path, kind) in [
      (deploy + "imprint-serve.yaml", "Deployment"), (replicasSample, "Deployment"),
      (batchJob, "Job"),
    ] {
      let document = try #require(try kubernetes(path).first { $0["kind"] as? String == kind })
      let pod = try podSpec(document)
      let context = try #require(pod["securityContext"] as? [String: Any], "\(kind)")
      #expect(context["runAsNonRoot"] as? Bool == true, "\(kind)")
      #expect(context["runAsUser"] as? Int == image.user, "\(kind)")
      #expect(context["runAsGroup"] as? Int == image.group, "\(kind)")
      #expect(context["fsGroup"] as? Int == image.group, "\(kind)")
      for container in try #require(pod["containers"] as? [[String: Any]]) {
        let own = try #require(container["securityContext"] as? [String: Any], "\(kind)")
        #expect(own["allowPrivilegeEscalation"] as? Bool == false, "\(kind)")
        #expect(own["readOnlyRootFilesystem"] as? Bool == true, "\(kind)")
        #expect(
          (own["capabilities"] as? [String: Any])?["drop"] as? [String] == ["ALL"], "\(kind)")
        // Nothing in the container undoes the pod's user.
        #expect(own["runAsUser"] == nil && own["runAsGroup"] == nil, "\(kind)")
      }
    }
  }

  @Test("all the server and the batch Job write is on their pods' writable volumes (strace)")
  func writesOnVolumes() async throws {
    let image = try ImageUser()
    let folder = TemporaryFolder()
    // The Deployment's server, with its settings and token where the pod mounts them, every
    // kind of request made of it, then stopped.
    let deployment = try #require(try kubernetes().first)
    let serveContainer = try #require(
      (try podSpec(deployment)["containers"] as? [[String: Any]])?.first)
    let served = try PlayedPod(serveContainer)
    let volumes = try #require(try podSpec(deployment)["volumes"] as? [[String: Any]])
    for mount in try #require(serveContainer["volumeMounts"] as? [[String: Any]]) {
      let volume = try #require(volumes.first { $0["name"] as? String == mount["name"] as? String })
      let at = served.root.path + (mount["mountPath"] as? String ?? "")
      for item in (volume["configMap"] as? [String: Any])?["items"] as? [[String: Any]] ?? [] {
        let key = item["key"] as? String ?? ""
        let source =
          key == "serve.json" ? deploy + key : repositoryRoot + "/examples/prices-usd.json"
        let target = at + "/" + (item["path"] as? String ?? key)
        try FileManager.default.createDirectory(
          atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source, toPath: target)
      }
      if let secret = volume["secret"] as? [String: Any] {
        try Data("sample-token-of-32-characters\n".utf8).write(
          to: URL(fileURLWithPath: at + "/token"))
        // The mode Kubernetes gives the secret's files (0644 when the sample said none).
        chmod(at + "/token", mode_t(secret["defaultMode"] as? Int ?? 0o644))
      }
    }
    var arguments = try #require(serveContainer["args"] as? [String]).filter {
      $0 != "serve" && !$0.hasPrefix("--listen")
    }.map(served.place)
    arguments = arguments.filter { !$0.hasPrefix("--listen") }
    let serveLog = folder.file("serve.strace")
    let server = try ServiceProcess(
      arguments, launcher: ["/usr/bin/strace", "-o", serveLog] + traced + ["--"],
      environment: served.environment(image), directory: served.root.path)
    let token = "Authorization: Bearer sample-token-of-32-characters"
    let profiles = repositoryRoot + "/assets/samples/profiles/"
    let photos = repositoryRoot + "/assets/samples/photos/"
    let documents = repositoryRoot + "/assets/samples/documents/"
    try Data(#"{"schemaVersion": 1, "files": [{"path": "notes.pdf"}]}"#.utf8).write(
      to: URL(fileURLWithPath: folder.file("order.json")))
    let requests: [(path: String, form: [FormItem], body: String?)] = [
      ("/v1/qr?payload=https%3A%2F%2Fexample.com", [], nil),
      (
        "/v1/card",
        [
          .file("profile", path: profiles + "harbor-lamp.json", type: "application/json"),
          .file("photo", path: photos + "harbor-lamp.jpg"),
        ],
        nil
      ),
      ("/v1/inspect", [], documents + "course-notes.pdf"),
      ("/v1/thumbnail", [.file("file", path: documents + "course-notes.pdf")], nil),
      (
        "/v1/quote?prices=retail",
        [
          .file("order", path: folder.file("order.json")),
          .file("notes.pdf", path: documents + "course-notes.pdf"),
        ], nil
      ),
    ]
    for (path, form, body) in requests {
      let answer =
        if let body {
          try await server.request(
            "POST", path, headers: [token, "Content-Type: application/pdf"], file: body)
        } else if form.isEmpty {
          try await server.request("POST", path, headers: [token])
        } else {
          try await server.request("POST", path, headers: [token], form: form)
        }
      #expect(answer.status == 200, "\(path): \(answer.text)")
    }
    let manifest = try writeManifest(
      [
        #"{"id": "A-1", "kind": "card", "profile": "profiles/harbor-lamp.json", "photo": "photos/harbor-lamp.jpg"}"#,
        #"{"id": "T-1", "kind": "thumb", "file": "documents/course-notes.pdf"}"#,
      ], in: folder)
    let id = try acceptedID(
      try await postBatch(
        manifest,
        inputs: [
          "profiles/harbor-lamp.json", "photos/harbor-lamp.jpg", "documents/course-notes.pdf",
        ], on: server, headers: [token]))
    var state = ""
    try await eventually(tries: 30_000) {
      let answer = try await server.request("GET", "/v1/jobs/\(id)", headers: [token])
      state = answer.json?["state"] as? String ?? ""
      return state != "queued" && state != "running"
    }
    #expect(state == "done")
    #expect(
      try await server.request("DELETE", "/v1/jobs/\(id)", headers: [token]).status
        == 200)
    // strace's child is the server.
    let serverPID = try #require(server.childProcesses.first)
    kill(serverPID, SIGTERM)
    #expect(server.waitForExit().status == 0)
    let serveWrites = writtenPaths(try String(contentsOfFile: serveLog, encoding: .utf8))
    // Not vacuous: the uploads, the job's folder and the fonts' caches were seen written.
    #expect(serveWrites.count > 10, "\(serveWrites)")
    #expect(
      serveWrites.contains {
        $0.hasPrefix(served.root.path + image.environment["XDG_CACHE_HOME", default: "?"])
      })
    #expect(served.outsideWritableMounts(serveWrites) == [])

    // The Job's batch: its command with the manifest and inputs on its data volume, as shard 0
    // of the Job's count (a card with a photo and a thumbnail are that shard's lines).
    let job = try #require(try kubernetes(batchJob).first)
    let batchContainer = try #require((try podSpec(job)["containers"] as? [[String: Any]])?.first)
    let batched = try PlayedPod(batchContainer)
    let command = try #require(batchContainer["command"] as? [String])
    try #require(command.first == "imprint")
    let data = try #require(command.first { $0.hasSuffix(".jsonl") }.map(batched.place))
    let inputs = (data as NSString).deletingLastPathComponent
    for sample in ["profiles", "photos", "documents"] {
      try FileManager.default.copyItem(
        atPath: repositoryRoot + "/assets/samples/" + sample, toPath: inputs + "/" + sample)
    }
    var settings: [String: String] = ["JOB_COMPLETION_INDEX": "0"]
    for variable in batchContainer["env"] as? [[String: Any]] ?? [] {
      settings[variable["name"] as? String ?? ""] = variable["value"] as? String
    }
    let count = try #require(Int(settings["JOB_COMPLETION_COUNT"] ?? ""))
    var lines = (0..<(2 * count)).map { #"{"id": "W-\#($0)", "kind": "qr", "payload": "x\#($0)"}"# }
    lines[0] =
      #"{"id": "A-1", "kind": "card", "profile": "profiles/harbor-lamp.json", "photo": "photos/harbor-lamp.jpg"}"#
    lines[count] = #"{"id": "T-1", "kind": "thumb", "file": "documents/course-notes.pdf"}"#
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: data))
    let batchLog = folder.file("batch.strace")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
    process.arguments =
      ["-o", batchLog] + traced + ["--", imprintExecutable] + command.dropFirst().map(batched.place)
    process.environment = batched.environment(image, settings)
    process.currentDirectoryURL = URL(fileURLWithPath: batched.root.path)
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    let batchWrites = writtenPaths(try String(contentsOfFile: batchLog, encoding: .utf8))
    let output = try #require(
      command.firstIndex(of: "-o").map { batched.place(command[$0 + 1]) })
    #expect(batchWrites.contains { $0.hasPrefix(output + "/") }, "\(batchWrites)")
    #expect(batchWrites.contains { $0.hasPrefix(batched.root.path + "/tmp/") }, "\(batchWrites)")
    #expect(batched.outsideWritableMounts(batchWrites) == [])
  }

  @Test("the container's runtime packages provide every library imprint links or loads")
  func containerPackages() async throws {
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
    // libcurl, libcups, libpq); the Swift runtime, under the toolchain, is linked statically by
    // the image.
    let elf = try runTool("readelf", ["-d", imprintExecutable])
    var needed = elf.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap {
      $0.split(separator: "[").last?.split(separator: "]").first.map(String.init)
    }
    // Loaded when needed, never at exec (LibCups, LibPQ: their 22 libraries cost every start).
    for loaded in ["libheif.so.1", "libcurl.so.4", "libcups.so.2", "libpq.so.5"] {
      #expect(!needed.contains(loaded), "imprint links \(loaded)")
    }
    needed += ["libheif.so.1", "libcurl.so.4", "libcups.so.2", "libpq.so.5"]
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
