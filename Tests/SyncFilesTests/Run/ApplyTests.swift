import Foundation
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
import Testing

/// `syncfiles apply` end to end: the built binary, real libcurl, the
/// fault-injecting server on loopback. Each test names the misbehaviour.
@Suite final class ApplyTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func downloadsThenRevalidatesWith304() throws {
    let a = testBytes(100_000, seed: 1)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\""]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: d/a.bin, sha256: \(sha256Hex(a)), mode: '0640'}"])
    let first = try apply()
    #expect(first.run.status == 0, "\(first.run.stderr)")
    #expect(first.outcome("m/a") == "installed")
    #expect(first.int("m/a", "bytes_transferred") == a.count)
    #expect(first.int("m/a", "http_status") == 200)
    #expect(out("d/a.bin") == a)
    let attrs = try FileManager.default.attributesOfItem(atPath: dir + "/out/d/a.bin")
    #expect((attrs[.posixPermissions] as? Int) == 0o640)
    #expect(!partialExists("d/a.bin"))

    let second = try apply()
    #expect(second.run.status == 0)
    #expect(second.outcome("m/a") == "unchanged")
    #expect(second.int("m/a", "bytes_transferred") == 0)
    let reqs = server.requests("/a.bin")
    #expect(reqs.count == 2)
    #expect(reqs[1].headers["if-none-match"] == "\"v1\"")
    #expect(reqs[0].headers["accept-encoding"] == "identity")
  }

  /// Two manifests in one session, each with its own root: every task is
  /// carried out under its own manifest's root (with one manifest, the
  /// runner maps no ids to manifests at all).
  @Test func eachManifestsFilesLandUnderItsOwnRoot() throws {
    let a = testBytes(5_000, seed: 41)
    let b = testBytes(6_000, seed: 42)
    server.put("a.bin", a)
    server.put("b.bin", b)
    server.routes(["/a.bin": ["file": "a.bin"], "/b.bin": ["file": "b.bin"]])
    try FileManager.default.createDirectory(atPath: dir + "/conf.d", withIntermediateDirectories: true)
    for (name, root, body) in [("one", "out-one", "a"), ("two", "out-two", "b")] {
      write(
        """
        version: 1
        name: \(name)
        root: \(root)
        journal: state/journal
        files:
          - {id: x, url: '\(server.base)/\(body).bin', destination: x.bin}
          - {id: y, url: '\(server.base)/\(body).bin', destination: sub/y.bin}

        """, to: dir + "/conf.d/\(name).yaml")
    }
    let r = try run(["apply", "conf.d"], cwd: dir)
    #expect(r.status == 0, "\(r.stderr)")
    for (root, body) in [("out-one", a), ("out-two", b)] {
      let x = readBytes(dir + "/conf.d/\(root)/x.bin") == body
      let y = readBytes(dir + "/conf.d/\(root)/sub/y.bin") == body
      #expect(x && y, "\(root)")
    }
  }

  /// A small body is held in memory until it completes (issue 15, W7): no
  /// partial file and no journal record of one before its install, so the
  /// task's only record is its outcome (before: a partial record, then it).
  @Test func aSmallBodyIsJournaledOnceWithItsOutcome() throws {
    let a = testBytes(20_000, seed: 40)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"h\""]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"])
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(out("a.bin") == a)
    let journal = (try? String(contentsOfFile: dir + "/state/journal", encoding: .utf8)) ?? ""
    let records = journal.split(separator: "\n").filter { $0.contains("\"id\":\"m/a\"") }
    #expect(records.count == 1 && !records[0].contains("\"partial\""), "\(records)")
  }

  @Test func resumesAfterTheConnectionDropsWithRangeAndIfRange() throws {
    let a = testBytes(300_000, seed: 2)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"abc\"", "drop_after": 100_000, "drop_times": 1]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, sha256: \(sha256Hex(a)), retry: {attempts: 2, backoff: 1s}}"
    ])
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(r.outcome("m/a") == "installed")
    #expect(r.int("m/a", "resumed_from") == 100_000)
    #expect(out("a.bin") == a)
    let reqs = server.requests("/a.bin")
    #expect(reqs.count == 2)
    #expect(reqs[1].headers["range"] == "bytes=100000-")
    #expect(reqs[1].headers["if-range"] == "\"abc\"")
  }

  /// Run 1 fails mid-body with one attempt: the partial and its validators stay.
  func interruptedFirstRun(_ body: [UInt8], etag: String = "\"v1\"", extra: [String: Any] = [:]) throws {
    server.put("a.bin", body)
    server.routes(["/a.bin": ["file": "a.bin", "etag": etag, "drop_after": 50_000]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    let r = try apply()
    #expect(r.run.status == 1)
    #expect(r.outcome("m/a") == "failed")
    #expect(out("a.bin") == nil)
    #expect(partialExists("a.bin"))
  }

  @Test func aServerIgnoringRangeMeansStartOverNeverAppend() throws {
    let a = testBytes(200_000, seed: 3)
    try interruptedFirstRun(a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\"", "ignore_range": true]])
    let r = try apply(["--force"])
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(server.requests("/a.bin").last?.headers["range"] == "bytes=50000-")
    #expect(r.int("m/a", "resumed_from") == 0)
    #expect(r.int("m/a", "bytes_transferred") == a.count)
    #expect(out("a.bin") == a)
  }

  @Test func aChangedVersionIsNeverMixedWithTheOldPartial() throws {
    try interruptedFirstRun(testBytes(200_000, seed: 4))
    let v2 = testBytes(150_000, seed: 5)
    server.put("a.bin", v2)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v2\""]])
    let r = try apply(["--force"])
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(server.requests("/a.bin").last?.headers["if-range"] == "\"v1\"")
    #expect(out("a.bin") == v2)
  }

  @Test func aWrongContentRangeStartsOver() throws {
    let a = testBytes(200_000, seed: 6)
    try interruptedFirstRun(a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\"", "content_range_shift": 10]])
    let r = try apply(["--force"])
    #expect(r.run.status == 0, "\(r.run.stderr)")
    let reqs = server.requests("/a.bin")
    #expect(reqs.last?.headers["range"] == nil, "the restart asks for the whole file")
    #expect(out("a.bin") == a)
  }

  /// Before: the cause was repeated in the warnings and again in the error.
  @Test func aServerThatNeverResumesRightGivesUpNamingTheCauseOnce() throws {
    let a = testBytes(200_000, seed: 16)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\"", "drop_after": 50_000, "content_range_shift": 10]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 10, backoff: 1s, max_backoff: 1s}}"
    ])
    let r = try apply()
    #expect(r.run.status == 1 && r.outcome("m/a") == "failed")
    let error = r.string("m/a", "error") ?? ""
    #expect(
      error == "the server resumed at byte 50010 instead of 50000; gave up after starting over 3 times", "\(error)")
    let warnings = r.tasks["m/a"]?["warnings"] as? [String] ?? []
    #expect(!warnings.contains { $0.contains("resumed at byte") }, "\(warnings)")
    #expect(r.run.stdout.components(separatedBy: "resumed at byte").count == 2, "said once: \(r.run.stdout)")
  }

  @Test func a416WithACompletePartialInstallsItWithoutTheErrorBody() throws {
    let a = testBytes(120_000, seed: 7)
    try interruptedFirstRun(a)
    // All bytes arrived but the process died before installing: the partial is whole.
    _ = FileManager.default.createFile(
      atPath: dir + "/out/.a.bin.syncfiles-partial", contents: Data(a), attributes: [.posixPermissions: 0o600])
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\""]])
    let r = try apply(["--force"])
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(server.requests("/a.bin").last?.headers["range"] == "bytes=120000-")
    #expect(r.int("m/a", "http_status") == 416)
    #expect(r.outcome("m/a") == "installed")
    #expect(out("a.bin") == a)
  }

  @Test func a503WithRetryAfterIsRetriedAfterTheWait() throws {
    let a = testBytes(10_000, seed: 8)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "fail_first": 2, "fail_status": 503, "retry_after": "1"]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 4, backoff: 1s}}"])
    let start = Date()
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(r.outcome("m/a") == "installed")
    #expect(r.int("m/a", "attempts") == 3)
    #expect(Date().timeIntervalSince(start) >= 2.0, "two waits of Retry-After: 1")
    #expect(out("a.bin") == a)
  }

  @Test func a404FailsAtOnceAndKeepsTheOldFile() throws {
    server.routes([:])
    write("old content\n", to: dir + "/out/a.bin")
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 4, backoff: 1m}}"])
    let r = try apply()
    #expect(r.run.status == 1)
    #expect(r.outcome("m/a") == "failed")
    #expect((r.tasks["m/a"]?["error"] as? String)?.contains("HTTP 404") == true)
    #expect(server.requests("/a.bin").count == 1)
    #expect(out("a.bin") == Array("old content\n".utf8))
    // The failure is held across runs: the next plan waits for the backoff.
    let plan = try run(["plan", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("in backoff after 1 failed run"))
  }

  @Test func mirrorsAreTriedInOrder() throws {
    let a = testBytes(5_000, seed: 9)
    server.put("a.bin", a)
    server.routes(["/mirror/a.bin": ["file": "a.bin"]])
    manifest([
      "{id: a, url: '\(server.base)/gone/a.bin', mirrors: ['\(server.base)/mirror/a.bin'], destination: a.bin}"
    ])
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(out("a.bin") == a)
    #expect(server.requests().map(\.path) == ["/gone/a.bin", "/mirror/a.bin"])
    #expect(r.string("m/a", "url") == "\(server.base)/mirror/a.bin", "the report names the mirror that served")
  }

  @Test func redirectsKeepSecretsAtTheirOriginAndNeverReachOutput() throws {
    let a = testBytes(5_000, seed: 10)
    server.put("a.bin", a)
    let other = "http://localhost:\(server.port)"
    server.routes([
      "/a": ["redirect": ["location": "/b"]],
      "/b": ["redirect": ["location": "\(other)/c"]],
      "/c": ["file": "a.bin"],
    ])
    manifest(["{id: a, url: '\(server.base)/a', destination: a.bin, headers: {X-Token: '${SF_TEST_TOKEN}'}}"])
    let secret = "tok-\(UUID().uuidString)"
    let r = try apply(env: ["SF_TEST_TOKEN": secret])
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(out("a.bin") == a)
    let reqs = server.requests()
    #expect(reqs.map(\.path) == ["/a", "/b", "/c"])
    #expect(reqs[0].headers["x-token"] == secret)
    #expect(reqs[1].headers["x-token"] == secret, "same origin after a redirect within the host")
    #expect(reqs[2].headers["x-token"] == nil, "another origin never gets the manifest's headers")
    let journal = String(decoding: readBytes(dir + "/state/journal") ?? [], as: UTF8.self)
    #expect(!r.run.stdout.contains(secret) && !r.run.stderr.contains(secret) && !journal.contains(secret))
  }

  @Test func aRedirectToFileIsRefused() throws {
    write("local secret\n", to: dir + "/secret.txt")
    server.routes(["/a": ["redirect": ["location": "file://\(dir)/secret.txt"]]])
    manifest(["{id: a, url: '\(server.base)/a', destination: a.bin}"])
    let r = try apply()
    #expect(r.run.status == 1)
    #expect((r.tasks["m/a"]?["error"] as? String)?.contains("redirect refused: the target's scheme is 'file'") == true)
    #expect(out("a.bin") == nil)
  }

  @Test func moreBytesThanDeclaredNeverReachTheFile() throws {
    let a = testBytes(20_000, seed: 11)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "extra_bytes": 5000]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, sha256: \(sha256Hex(a))}"])
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(out("a.bin") == a)
  }

  @Test func maxBytesAbortsAndLeavesNothing() throws {
    server.put("a.bin", testBytes(300_000, seed: 12))
    server.routes(["/a.bin": ["file": "a.bin"]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, max_bytes: 100KB}"])
    let r = try apply()
    #expect(r.run.status == 1)
    #expect((r.tasks["m/a"]?["error"] as? String)?.contains("max_bytes") == true)
    #expect(out("a.bin") == nil)
    #expect(!partialExists("a.bin"))
  }

  @Test func aChecksumMismatchKeepsTheOldFileByteForByte() throws {
    let v1 = testBytes(30_000, seed: 13)
    server.put("a.bin", v1)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"1\""]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, sha256: \(sha256Hex(v1))}"])
    #expect(try apply().run.status == 0)
    server.put("a.bin", testBytes(30_000, seed: 14))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"2\""]])
    let r = try apply()
    #expect(r.run.status == 1)
    #expect((r.tasks["m/a"]?["error"] as? String)?.contains("sha256 mismatch") == true)
    #expect(out("a.bin") == v1)
    #expect(!partialExists("a.bin"))
  }

  @Test func aStalledTransferTimesOut() throws {
    server.put("a.bin", testBytes(50_000, seed: 15))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"s\"", "trickle_bps": 200]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, timeout: {stall: 2s}, retry: {attempts: 1}}"])
    let r = try apply()
    #expect(r.run.status == 1)
    #expect(r.outcome("m/a") == "failed")
    #expect(out("a.bin") == nil)
  }

  @Test func aDeadlineStopsWith75AndTheNextRunResumes() throws {
    let a = testBytes(120_000, seed: 16)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"d\"", "trickle_bps": 20_000]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"])
    let start = Date()
    let r = try apply(["--deadline", "1s"])
    #expect(r.run.status == 75, "\(r.run.stderr)")
    #expect(Date().timeIntervalSince(start) < 5)
    #expect(r.outcome("m/a") == "interrupted")
    #expect(out("a.bin") == nil)
    #expect(partialExists("a.bin"))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"d\""]])
    let again = try apply()
    #expect(again.run.status == 0, "\(again.run.stderr)")
    #expect((again.int("m/a", "resumed_from") ?? 0) > 0)
    #expect(out("a.bin") == a)
  }

  /// The runner hands the engine twice `parallel` (and `per_host`) so that a
  /// freed slot is filled at once (issue 15, W4); the engine still keeps the
  /// limits: the server never serves more at once than they allow, and does
  /// serve that many.
  @Test(arguments: [(parallel: 2, perHost: 8), (parallel: 8, perHost: 3)])
  func parallelAndPerHostHoldWhenTheEngineIsHandedMore(limits: (parallel: Int, perHost: Int)) throws {
    server.put("a.bin", testBytes(6_000, seed: 27))
    var routes: [String: [String: Any]] = [:]
    for k in 0..<10 { routes["/f\(k).bin"] = ["file": "a.bin", "trickle_bps": 20_000] }
    server.routes(routes)
    manifest(
      (0..<10).map { "{id: f\($0), url: '\(server.base)/f\($0).bin', destination: f\($0).bin}" },
      extra: "limits: {parallel: \(limits.parallel), per_host: \(limits.perHost)}")
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect((0..<10).allSatisfy { r.outcome("m/f\($0)") == "installed" })
    let seen = server.requests().map(\.inFlight)
    #expect(seen.count == 10 && seen.max() == min(limits.parallel, limits.perHost), "in flight: \(seen)")
  }

  /// A task the deadline stopped before it began is "not started", with no
  /// byte count ("interrupted 0 B" read as if it had run).
  @Test func aTaskTheDeadlineStoppedBeforeItBeganShowsNoBytes() throws {
    server.put("a.bin", testBytes(120_000, seed: 26))
    server.routes(["/a.bin": ["file": "a.bin", "trickle_bps": 20_000], "/b.bin": ["file": "a.bin"]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin}",
      "{id: b, url: '\(server.base)/b.bin', destination: b.bin}",
    ])
    let r = try run(["apply", "--parallel", "1", "--deadline", "1s", "m.yaml"], cwd: dir)
    #expect(r.status == 75)
    let row = r.stdout.split(separator: "\n").first { $0.hasPrefix("m/b ") }.map(String.init) ?? ""
    #expect(row.contains("interrupted") && row.contains("not started") && !row.contains("0 B"), "\(r.stdout)")
  }

  /// A SIGTERM at any moment of the start ends in 75, from the first code of
  /// ours on (a constructor blocks it before the Swift runtime starts; only
  /// the dynamic loader's few milliseconds before it are out of reach). One
  /// in the first 10-20 ms of a release binary killed the process.
  @Test func aSigtermInTheFirstMillisecondsStillEndsIn75() throws {
    server.put("a.bin", testBytes(200_000, seed: 31))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"e\"", "trickle_bps": 50_000]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"])
    for delay in [0.015, 0.02, 0.03, 0.05] {
      let p = try startInBackground(["apply", "--quiet", "m.yaml"], cwd: dir)
      Thread.sleep(forTimeInterval: delay)
      kill(p.processIdentifier, SIGTERM)
      p.waitUntilExit()
      #expect(
        p.terminationReason == .exit && p.terminationStatus == 75,
        "SIGTERM after \(delay) s: \(p.terminationReason == .exit ? "exit" : "signal") \(p.terminationStatus)")
    }
  }

  /// After an interrupted run, `status --check` names that run's time (it
  /// named the run before), and status says the resume is due now (its
  /// next_due was the schedule's next time, 6 h on).
  @Test func statusAfterAnInterruptedRunNamesThatRunAndIsDueNow() throws {
    server.put("v1", testBytes(10_000, seed: 32))
    server.put("v2", testBytes(300_000, seed: 33))
    server.routes(["/a.bin": ["file": "v1", "etag": "\"v1\""]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, schedule: every 6h}"])
    #expect(try apply().outcome("m/a") == "installed")
    Thread.sleep(forTimeInterval: 1.2)
    server.routes(["/a.bin": ["file": "v2", "etag": "\"v2\"", "trickle_bps": 50_000]])
    let startedAt = Timestamp.current().rfc3339
    let p = try startInBackground(["apply", "--force", "m.yaml"], cwd: dir)
    Thread.sleep(forTimeInterval: 1.0)
    kill(p.processIdentifier, SIGTERM)
    p.waitUntilExit()
    #expect(p.terminationStatus == 75)
    let check = try run(["status", "--check", "m.yaml"], cwd: dir)
    let named = check.stdout.components(separatedBy: "the last run (").dropFirst().first?.prefix(20) ?? ""
    #expect(check.status == 1 && String(named) >= startedAt, "\(check.stdout) (the run began \(startedAt))")
    let status = try run(["status", "--format", "json", "m.yaml"], cwd: dir)
    let o = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
    let task = (o?["tasks"] as? [[String: Any]])?.first
    #expect(task?["action"] as? String == "resume", "\(status.stdout)")
    #expect(task?["next_due"] as? String == o?["now"] as? String, "\(status.stdout)")
  }

  @Test func sigtermStopsWith75KeepingResumeStateAndASecondApplyIsLockedOut() throws {
    server.put("a.bin", testBytes(200_000, seed: 17))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"t\"", "trickle_bps": 20_000]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"])
    let p = try startInBackground(["apply", "m.yaml"], cwd: dir)
    Thread.sleep(forTimeInterval: 1.0)
    let second = try run(["apply", "m.yaml"], cwd: dir)
    #expect(second.status == 3)
    #expect(second.stderr.contains("holds the journal"))
    let sent = Date()
    kill(p.processIdentifier, SIGTERM)
    p.waitUntilExit()
    #expect(p.terminationStatus == 75)
    #expect(Date().timeIntervalSince(sent) < 2.5)
    let status = try run(["status", "--format", "json", "m.yaml"], cwd: dir)
    #expect(status.stdout.contains("\"interrupted\""), "\(status.stdout)")
    #expect(partialExists("a.bin"))
  }

  @Test func hooksRunWithTheTaskInTheirEnvironmentAndTheirFailureIsReported() throws {
    server.put("a.bin", testBytes(1000, seed: 18))
    server.put("b.bin", testBytes(1000, seed: 19))
    server.routes(["/a.bin": ["file": "a.bin"], "/b.bin": ["file": "b.bin"]])
    let log = dir + "/hooks.log"
    let script = dir + "/hook.sh"
    write("#!/bin/sh\necho \"$1 $SYNCFILES_TASK_ID $SYNCFILES_OUTCOME $SYNCFILES_DESTINATION\" >> \(log)\n", to: script)
    chmod(script, 0o755)
    manifest(
      [
        "{id: a, url: '\(server.base)/a.bin', destination: a.bin, on_change: ['\(script)', change]}",
        "{id: b, url: '\(server.base)/b.bin', destination: b.bin, on_change: ['/bin/sh', '-c', 'echo nope >&2; exit 3']}",
      ], extra: "hooks: {on_complete: ['\(script)', complete]}")
    let r = try apply()
    #expect(r.run.status == 1, "a failed hook is reported in the exit code")
    #expect(r.outcome("m/a") == "installed" && r.outcome("m/b") == "installed")
    #expect((r.tasks["m/b"]?["hook_error"] as? String)?.contains("nope") == true)
    let lines = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    #expect(lines == "change m/a installed \(dir)/out/a.bin\ncomplete  changed \n")
    // Nothing changed on the second run: the hooks that succeeded do not run
    // again; b's failed one is still owed, runs again, and fails again.
    let again = try apply(["--force"])
    #expect(again.run.status == 1)
    #expect((again.tasks["m/b"]?["hook_error"] as? String)?.contains("nope") == true)
    #expect(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "") == lines)
  }

  @Test func aSymlinkInsideRootCannotSteerTheWriteOutside() throws {
    server.put("a.bin", testBytes(1000, seed: 20))
    server.routes(["/a.bin": ["file": "a.bin"]])
    let outside = makeTempDir()
    try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: dir + "/out/sub", withDestinationPath: outside)
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: sub/a.bin}"])
    let r = try apply()
    #expect(r.run.status == 1)
    #expect((r.tasks["m/a"]?["error"] as? String)?.contains("symlink") == true)
    #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
  }

  @Test func waitingAndSkippedTasksDoNotFailTheRun() throws {
    server.put("a.bin", testBytes(100, seed: 21))
    server.routes(["/a.bin": ["file": "a.bin"]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, schedule: once}",
      "{id: later, url: '\(server.base)/a.bin', destination: later.bin, not_before: '2999-01-01T00:00:00Z'}",
    ])
    #expect(try apply().run.status == 0)
    let r = try apply()
    #expect(r.run.status == 0)
    #expect(r.outcome("m/a") == "skipped")
    #expect(r.outcome("m/later") == "waiting")
    #expect(server.requests().count == 1)
  }

  @Test func theRateCapHoldsAcrossTransfers() throws {
    for n in ["a", "b"] { server.put("\(n).bin", testBytes(600_000, seed: 22)) }
    server.routes(["/a.bin": ["file": "a.bin"], "/b.bin": ["file": "b.bin"]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin}",
      "{id: b, url: '\(server.base)/b.bin', destination: b.bin}",
    ])
    let start = Date()
    let r = try apply(["--rate", "400KB/s"])
    #expect(r.run.status == 0, "\(r.run.stderr)")
    // 1.2 MB at 400 kB/s: about 3 s (libcurl may burst the first buffer of each).
    #expect(Date().timeIntervalSince(start) >= 2.0)
  }

  @Test func aVerifierThatRejectsKeepsTheOldFileAndOneThatAcceptsInstalls() throws {
    let v1 = testBytes(2000, seed: 23)
    server.put("a.bin", v1)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"1\""]])
    let plugins = dir + "/plugins"
    // Accepts unless the request's `with.reject` is true; records what it was given.
    write(
      """
      #!/bin/sh
      req=$(cat)
      echo "$req" > \(dir)/verify-request.json
      wc -c < \(dir)/out/.a.bin.syncfiles-partial > \(dir)/verify-saw-bytes
      case "$req" in *'"reject":true'*) echo "signature does not match" >&2; exit 1;; esac
      exit 0
      """, to: plugins + "/syncfiles-verify-sig")
    chmod(plugins + "/syncfiles-verify-sig", 0o755)
    let env = ["SYNCFILES_PLUGIN_PATH": plugins]
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, verify: [{plugin: sig, with: {reject: false}}]}"
    ])
    let first = try apply(env: env)
    #expect(first.run.status == 0, "\(first.run.stderr)")
    #expect(out("a.bin") == v1)
    let request = (try? String(contentsOfFile: dir + "/verify-request.json", encoding: .utf8)) ?? ""
    #expect(request.contains("\"path\":\"\(dir)/out/.a.bin.syncfiles-partial\""), "\(request)")
    #expect(request.contains("\"protocol\":1"))
    // A verifier that reads the file finds every byte in it: such a body is never held in memory.
    let saw = (try? String(contentsOfFile: dir + "/verify-saw-bytes", encoding: .utf8)) ?? ""
    #expect(saw.trimmingCharacters(in: .whitespacesAndNewlines) == "2000", "\(saw)")

    server.put("a.bin", testBytes(2000, seed: 24))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"2\""]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, verify: [{plugin: sig, with: {reject: true}}]}"]
    )
    let second = try apply(env: env)
    #expect(second.run.status == 1)
    #expect((second.tasks["m/a"]?["error"] as? String)?.contains("signature does not match") == true)
    #expect(out("a.bin") == v1)
    #expect(!partialExists("a.bin"))
  }

  @Test func progressIsALiveLineOnRequestAndPlainLinesOtherwise() throws {
    server.put("a.bin", testBytes(40_000, seed: 25))
    server.routes(["/a.bin": ["file": "a.bin", "trickle_bps": 40_000]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, expected_bytes: 40000}"])
    let live = try run(["apply", "--progress", "always", "m.yaml"], cwd: dir, env: ["TERM": "xterm"])
    #expect(live.status == 0)
    #expect(live.stderr.contains("\r\u{1b}[K[0/1 files]"), "\(live.stderr.debugDescription)")
    // A total, a percentage and the file being fetched (issue 55: the line had none of them).
    #expect(live.stderr.contains(" of 39.1 KiB (") && live.stderr.contains("%)"), "\(live.stderr.debugDescription)")
    #expect(live.stderr.contains("  m/a"), "\(live.stderr.debugDescription)")
    // A dumb terminal gets no escape codes: the line is overwritten with spaces.
    let dumb = try run(["apply", "--force", "--progress", "always", "m.yaml"], cwd: dir, env: ["TERM": "dumb"])
    #expect(dumb.status == 0 && !dumb.stderr.contains("\u{1b}"), "\(dumb.stderr.debugDescription)")
    #expect(dumb.stderr.contains("\r[0/1 files]"), "\(dumb.stderr.debugDescription)")
    #expect(live.stdout.contains("1 installed"))
    #expect(live.stderr.contains("syncfiles: installed m/a ("), "\(live.stderr.debugDescription)")
    let plain = try run(["apply", "--force", "m.yaml"], cwd: dir)
    #expect(!plain.stderr.contains("\r"), "no terminal: no redrawn line")
    let quiet = try run(["apply", "--force", "--quiet", "m.yaml"], cwd: dir)
    #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty)
  }

  /// Before: a transfer the deadline stopped was counted as a file done ("[1/1 files]").
  @Test func aStoppedTransferIsNotCountedAsAFileDone() throws {
    server.put("slow.bin", testBytes(100_000, seed: 26))
    server.routes(["/slow.bin": ["file": "slow.bin", "trickle_bps": 20_000]])
    manifest(["{id: s, url: '\(server.base)/slow.bin', destination: s.bin}"])
    let r = try run(["apply", "--progress", "always", "--deadline", "1s", "m.yaml"], cwd: dir, env: ["TERM": "xterm"])
    #expect(r.status == 75)
    #expect(r.stderr.contains("[0/1 files]") && !r.stderr.contains("[1/1 files]"), "\(r.stderr.debugDescription)")
  }

  /// The report's phases: the apply's steps in order, adding up to its
  /// elapsed time, which counts from the start of the apply (before, it
  /// began with the transfers: a run's reading and planning were in no
  /// figure, and the report had no phases).
  @Test func theReportTimesEachStepOfTheApplyAndTheirSumIsItsDuration() throws {
    server.put("a.bin", testBytes(30_000, seed: 27))
    server.routes(["/a.bin": ["file": "a.bin", "trickle_bps": 60_000]])
    manifest(
      ["{id: a, url: '\(server.base)/a.bin', destination: a.bin, schedule: once}"], extra: "metrics: metrics.prom")
    for (k, r) in try [apply(), apply()].enumerated() {
      #expect(r.run.status == 0, "\(r.run.stderr)")
      let phases = try #require(r.object["phases"] as? [String: Double], "\(r.run.stdout)")
      let order = RunClock.steps.compactMap { step in r.run.stdout.range(of: "\"\(step)\":").map(\.lowerBound) }
      #expect(Set(phases.keys) == Set(RunClock.steps) && order == order.sorted() && order.count == 5)
      #expect(phases.values.allSatisfy { $0 >= 0 })
      let elapsed = try #require(r.object["elapsed_seconds"] as? Double)
      #expect(abs(phases.values.reduce(0, +) - elapsed) < 0.002, "\(phases) against \(elapsed)")
      let m = try ParsedMetrics(file: dir + "/metrics.prom")
      let samples = RunClock.steps.compactMap { m.samples["syncfiles_last_run_phase_seconds{phase=\($0)}"] }
      #expect(samples.count == 5)
      #expect(abs(samples.reduce(0, +) - (m["syncfiles_last_run_duration_seconds"] ?? -1)) < 0.006)
      if k == 0 {
        // 30,000 bytes at 60,000 a second.
        #expect(phases["transfers"]! >= 0.4, "\(phases)")
      } else {
        #expect(r.outcome("m/a") == "skipped")
        #expect(phases["transfers"] == 0, "nothing was due: \(phases)")
      }
    }
  }

  /// A file's outcome reaches the journal soon after it is installed, even
  /// while another transfer runs on without an event for minutes (the
  /// runner holds outcomes back for one write every 20 ms; before a wait
  /// with records held it bounds the wait, or they stayed unwritten until
  /// the next event: a kill then lost an installed file's record).
  @Test func anOutcomeIsWrittenWhileAnotherTransferRunsOn() throws {
    server.put("a.bin", testBytes(1_000, seed: 28))
    server.put("slow.bin", testBytes(120_000, seed: 29))
    server.routes(["/a.bin": ["file": "a.bin"], "/slow.bin": ["file": "slow.bin", "trickle_bps": 40_000]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin}",
      "{id: slow, url: '\(server.base)/slow.bin', destination: slow.bin}",
    ])
    let p = try startInBackground(["apply", "--quiet", "m.yaml"], cwd: dir)
    defer { p.waitUntilExit() }
    var recorded: TaskState.Outcome?
    let start = Date()
    while recorded == nil && Date().timeIntervalSince(start) < 2.0 {
      Thread.sleep(forTimeInterval: 0.05)
      recorded = (try? JournalReader.read(path: dir + "/state/journal"))?.tasks["m/a"]?.lastOutcome
    }
    #expect(recorded == .installed, "m/a's record while slow.bin (3 s) still runs")
    #expect(p.isRunning, "the slow transfer is still running")
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
  }
}
