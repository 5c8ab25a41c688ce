import Foundation
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
import Testing

/// The files that ship with syncfiles to run it as a service (SPEC §8.4):
/// each checked by the program that will read it.
@Suite struct ShippedKitTests {
  let docs = packageRoot + "/Docs"

  func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

  /// Docs/syncfiles.1 is written by hand and kept current by this test:
  /// every option of every command's `--help`, every exit code, every
  /// manifest key and the journal's locations are in it.
  @Test func theManPageIsCurrent() throws {
    let r = try run(["-l", "-P", "cat", docs + "/syncfiles.1"], env: ["MANWIDTH": "200"], tool: "man")
    let page = r.stdout
    for command in ["apply", "plan", "validate", "status", "plugins"] {
      let help = try run([command, "--help"]).stdout
      let options = help.split(separator: "\n").compactMap { line -> String? in
        let t = line.trimmingCharacters(in: .whitespaces)
        guard t.hasPrefix("--") || t.hasPrefix("-v") else { return nil }
        return t.split(separator: " ").first.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
      }
      for option in options { #expect(page.contains(option), "syncfiles(1) lacks \(command) \(option)") }
    }
    for code in SyncFiles.ExitStatus.allCases.map({ String($0.rawValue) }) {
      #expect(page.contains("\n       \(code)\n") || page.contains("\n       \(code) "), "EXIT STATUS lacks \(code)")
    }
    for key in ManifestReferenceTests.accepted {
      let leaf = String(key.split(separator: ".").last!)
      #expect(page.contains(leaf), "MANIFEST lacks \(key)")
    }
    for section in ["ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO", "/var/lib/syncfiles/journal"] {
      #expect(page.contains(section), "syncfiles(1) lacks \(section)")
    }
  }

  @Test func theManPageRendersWithoutWarnings() throws {
    let r = try run(["-l", "--warnings", "-P", "cat", docs + "/syncfiles.1"], env: ["MANWIDTH": "100"], tool: "man")
    #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
    for text in ["SYNOPSIS", "--metrics FILE", "--horizon DURATION", "--check", "--max-late DURATION"] {
      #expect(r.stdout.contains(text), "man page lacks \(text)")
    }
    let format = try run(
      ["-l", "--warnings", "-P", "cat", docs + "/syncfiles-manifest.5"], env: ["MANWIDTH": "100"], tool: "man")
    #expect(format.status == 0 && format.stderr.isEmpty, "syncfiles-manifest(5): \(format.stderr)")
    #expect(format.stdout.contains("FILE KEYS") && format.stdout.contains("EXAMPLES"))
  }

  @Test func theCompletionsAreCurrent() throws {
    for (shell, file) in [("bash", "syncfiles.bash"), ("zsh", "_syncfiles"), ("fish", "syncfiles.fish")] {
      let r = try run(["--generate-completion-script", shell])
      #expect(r.status == 0)
      // scripts/docs adds one line to bash's: the subcommands after `help`.
      let helpLine = "    COMPREPLY+=($(compgen -W 'apply plan validate status plugins' -- \"${cur}\"))\n"
      var shipped = try read(docs + "/completions/" + file)
      if shell == "bash" {
        #expect(shipped.contains(helpLine), "bash: help offers no subcommand: run scripts/docs")
        shipped = shipped.replacingOccurrences(of: helpLine, with: "")
      }
      #expect(r.stdout == shipped, "\(file) is stale: run scripts/docs")
    }
    let syntax = try run(["-n", docs + "/completions/syncfiles.bash"], tool: "bash")
    #expect(syntax.status == 0, "\(syntax.stderr)")
  }

  /// systemd-analyze verify reads the units as systemd would (with the
  /// ExecStart binary pointed at this build, since it checks it exists).
  @Test func theSystemdUnitsVerify() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let service = try read(packageRoot + "/Examples/systemd/syncfiles.service")
    let timer = try read(packageRoot + "/Examples/systemd/syncfiles.timer")
    write(
      service.replacingOccurrences(of: "/usr/local/bin/syncfiles", with: try syncfilesBinary()),
      to: dir + "/syncfiles.service")
    write(timer, to: dir + "/syncfiles.timer")
    // It also checks Documentation=man:syncfiles(1) with man: give it our page.
    try FileManager.default.createDirectory(atPath: dir + "/man/man1", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: docs + "/syncfiles.1", toPath: dir + "/man/man1/syncfiles.1")
    let r = try run(
      ["verify", dir + "/syncfiles.service", dir + "/syncfiles.timer"], env: ["MANPATH": dir + "/man"],
      tool: "systemd-analyze")
    #expect(r.status == 0 && r.stderr.isEmpty && r.stdout.isEmpty, "\(r.stdout)\(r.stderr)")
    for key in [
      "Type=oneshot", "ProtectSystem=strict", "ReadWritePaths=", "NoNewPrivileges=yes", "StateDirectory=syncfiles",
      "SuccessExitStatus=75",
    ] {
      #expect(service.contains("\n" + key), "service lacks \(key)")
    }
    for key in ["RandomizedDelaySec=", "Persistent=true", "OnCalendar="] {
      #expect(timer.contains("\n" + key), "timer lacks \(key)")
    }
    // The user pair (Examples/systemd/user), with its binary at this build too.
    let user = try read(packageRoot + "/Examples/systemd/user/syncfiles.service")
    try FileManager.default.createDirectory(atPath: dir + "/user", withIntermediateDirectories: true)
    write(
      user.replacingOccurrences(of: "%h/.local/bin/syncfiles", with: try syncfilesBinary()),
      to: dir + "/user/syncfiles.service")
    write(try read(packageRoot + "/Examples/systemd/user/syncfiles.timer"), to: dir + "/user/syncfiles.timer")
    let u = try run(
      ["verify", dir + "/user/syncfiles.service", dir + "/user/syncfiles.timer"], env: ["MANPATH": dir + "/man"],
      tool: "systemd-analyze")
    #expect(u.status == 0 && u.stderr.isEmpty && u.stdout.isEmpty, "\(u.stdout)\(u.stderr)")
    // A broken unit does fail the check (so the assertion above can fail).
    write(timer.replacingOccurrences(of: "OnCalendar=*:0/15", with: "OnCalendar=bogus"), to: dir + "/syncfiles.timer")
    let bad = try run(["verify", dir + "/syncfiles.timer"], env: ["MANPATH": dir + "/man"], tool: "systemd-analyze")
    #expect(bad.status != 0)
  }

  /// The cron line mails only on failure: its command prints nothing when all
  /// is well, and names the task when one fails.
  @Test func theCronLineIsQuietUnlessATaskFails() throws {
    let text = try read(packageRoot + "/Examples/cron/syncfiles")
    let line = try #require(text.components(separatedBy: "\n").first { $0.hasPrefix("*/15 ") })
    let fields = line.split(separator: " ", maxSplits: 6)
    #expect(fields.count == 7 && fields[5] == "root")
    // The command as cron runs it (`\%` is cron's escape for `%`), with our binary and folders.
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try FileManager.default.createDirectory(atPath: dir + "/d", withIntermediateDirectories: true)
    write("hello\n", to: dir + "/src.txt")
    write(
      "version: 1\nname: m\nroot: \(dir)/out\nfiles:\n  - {id: a, url: 'file://\(dir)/src.txt', destination: a.txt}\n",
      to: dir + "/d/m.yaml")
    let command = String(fields[6]).replacingOccurrences(of: "\\%", with: "%")
      .replacingOccurrences(of: "sleep $((RANDOM % 300)); ", with: "")
      .replacingOccurrences(of: "syncfiles apply", with: try syncfilesBinary() + " apply --journal \(dir)/journal")
      .replacingOccurrences(of: "/var/lib/node_exporter/textfile_collector", with: dir)
      .replacingOccurrences(of: "/etc/syncfiles.d", with: dir + "/d")
    #expect(text.contains("sleep $((RANDOM \\% 300))"), "the random delay escapes % for cron")
    var r = try run(["-c", command], tool: "bash")
    #expect(r.status == 0 && r.stdout.isEmpty && r.stderr.isEmpty, "a clean run mails nothing: \(r.stdout)\(r.stderr)")
    #expect(FileManager.default.fileExists(atPath: dir + "/syncfiles.prom"))
    try FileManager.default.removeItem(atPath: dir + "/src.txt")
    try FileManager.default.removeItem(atPath: dir + "/out/a.txt")
    r = try run(["-c", command], tool: "bash")
    #expect(r.status == 1 && r.stderr.contains("failed m/a"), "a failure is printed, so cron mails it")
  }

  /// The CronJob is a CronJob that never overlaps, keeps its state on a
  /// volume, and whose manifest and arguments syncfiles accepts.
  @Test func theKubernetesCronJobHoldsTogether() throws {
    let path = packageRoot + "/Examples/kubernetes/cronjob.yaml"
    let script = """
      import json, sys, yaml
      print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))
      """
    let r = try run(["-c", script, path], tool: "python3")
    #expect(r.status == 0, "\(r.stderr)")
    let docs = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] ?? []
    let kinds = docs.compactMap { $0["kind"] as? String }
    #expect(kinds == ["PersistentVolumeClaim", "ConfigMap", "CronJob"])
    let cron = try #require(docs.first { $0["kind"] as? String == "CronJob" })
    let spec = cron["spec"] as? [String: Any]
    #expect(spec?["concurrencyPolicy"] as? String == "Forbid")
    let pod = ((spec?["jobTemplate"] as? [String: Any])?["spec"] as? [String: Any])?["template"] as? [String: Any]
    let podSpec = pod?["spec"] as? [String: Any]
    let volumes = podSpec?["volumes"] as? [[String: Any]] ?? []
    let claim = volumes.compactMap { ($0["persistentVolumeClaim"] as? [String: Any])?["claimName"] as? String }
    #expect(claim == ["syncfiles-data"])
    let container = (podSpec?["containers"] as? [[String: Any]])?.first
    let command = ((container?["args"] as? [String]) ?? []).first ?? ""
    #expect(container?["command"] as? [String] == ["/bin/sh", "-c"])
    #expect(command.hasPrefix("syncfiles apply") && command.contains("--journal=/data/state/journal"))
    // The image is tagged with the version the binary says.
    let version = try run(["--version"]).stdout.split(separator: " ").dropFirst().first.map(String.init) ?? "?"
    #expect((container?["image"] as? String)?.hasSuffix(":" + version) == true, "image tag against \(version)")

    // Exit 75 (stopped early, resumable) is no failed Job; 1 and 2 stay failures.
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write("#!/bin/sh\nexit $CODE\n", to: dir + "/syncfiles")
    chmod(dir + "/syncfiles", 0o755)
    for (code, job) in [(0, 0), (75, 0), (1, 1), (2, 2)] {
      let r = try run(["-c", command], env: ["PATH": dir + ":/usr/bin:/bin", "CODE": "\(code)"], tool: "/bin/sh")
      #expect(r.status == Int32(job), "syncfiles exit \(code): the Job's container exits \(r.status)")
    }

    // The ConfigMap's manifest validates, and the container's command line parses.
    let manifests = (docs[1]["data"] as? [String: String]) ?? [:]
    for (name, text) in manifests { write(text.replacingOccurrences(of: "/data", with: dir), to: dir + "/" + name) }
    #expect(try run(["validate", dir]).status == 0)
    let dry = command.replacingOccurrences(of: "syncfiles apply", with: "syncfiles apply --dry-run")
      .replacingOccurrences(of: "/data", with: dir).replacingOccurrences(of: "/etc/syncfiles.d", with: dir)
    let binFolder = (try syncfilesBinary() as NSString).deletingLastPathComponent
    let plan = try run(["-c", dry], env: ["PATH": binFolder + ":/usr/bin:/bin"], tool: "/bin/sh")
    #expect(plan.status == 0 && plan.stdout.contains("datasets/iris"), "\(plan.stderr)")
  }

  @Test func installPutsBinaryManPageAndCompletionsUnderThePrefix() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let r = try run(
      [packageRoot + "/scripts/install", "/opt/syncfiles"],
      env: ["SYNCFILES_BIN": try syncfilesBinary(), "DESTDIR": dir],
      tool: "bash")
    #expect(r.status == 0, "\(r.stderr)")
    let root = dir + "/opt/syncfiles"
    for file in [
      "bin/syncfiles", "share/man/man1/syncfiles.1", "share/man/man5/syncfiles-manifest.5",
      "share/bash-completion/completions/syncfiles",
      "share/zsh/site-functions/_syncfiles", "share/fish/vendor_completions.d/syncfiles.fish",
    ] {
      #expect(FileManager.default.fileExists(atPath: root + "/" + file), "missing \(file)")
    }
    let version = try run(["--version"], tool: root + "/bin/syncfiles")
    #expect(version.status == 0 && version.stdout.hasPrefix("syncfiles "))
    let man = try run(["-l", "-P", "cat", root + "/share/man/man1/syncfiles.1"], tool: "man")
    #expect(man.status == 0 && man.stdout.contains("syncfiles"))
    let relative = try run([packageRoot + "/scripts/install", "relative/path"], tool: "bash")
    #expect(relative.status == 2 && relative.stderr.contains("PREFIX must be an absolute path"))
  }
}
