import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private func at(_ s: String) -> Timestamp { Timestamp.parseRFC3339(s)! }

/// A planned task of one entry with `schedule` (and `extra` entry keys), planned at `now`.
private func subject(
  _ schedule: String?, _ state: TaskState?, now: Timestamp, extra: [String] = []
) -> HealthCheck.Subject {
  var text = "version: 1\nname: m\nroot: /srv\nfiles:\n"
  text += "  - {id: a, url: 'https://example.org/a', destination: a.bin, max_bytes: 1MB}\n"
  if let schedule {
    text = text.replacingOccurrences(of: "max_bytes: 1MB", with: "max_bytes: 1MB, schedule: '\(schedule)'")
  }
  for e in extra { text = text.replacingOccurrences(of: "max_bytes: 1MB", with: "max_bytes: 1MB, \(e)") }
  let (m, d) = decode(text)
  precondition(!d.hasErrors, "\(d)")
  var facts = Facts(now: now, localMinuteOfDay: 720, onACPower: true)
  facts.disks["/srv"] = DiskFact(device: 1, mountPoint: "/srv", freeBytes: 1 << 40)
  let journal = state.map { ["m/a": $0] } ?? [:]
  let plan = Planner.plan(manifests: [m!], journal: journal, facts: facts, options: PlanOptions(), journalPath: "/j")
  return HealthCheck.Subject(id: "m/a", state: state, planned: plan.tasks[0])
}

private func succeeded(_ when: String) -> TaskState {
  var s = TaskState(id: "m/a")
  s.lastCheck = at(when)
  s.lastSuccess = at(when)
  s.lastOutcome = .unchanged
  return s
}

@Suite struct HealthCheckTests {
  @Test func aTaskWithinItsIntervalIsHealthyAndPastItIsOverdue() {
    let s = succeeded("2026-11-23T00:00:00Z")
    // Due at 06:00; one interval (6h) of lateness is allowed, so 12:00 is the edge.
    for (now, faulty) in [
      ("2026-11-23T05:00:00Z", false), ("2026-11-23T12:00:00Z", false), ("2026-11-23T12:01:00Z", true),
    ] {
      let f = HealthCheck.faults([subject("every 6h", s, now: at(now))], now: at(now), maxLate: nil)
      #expect(f.map(\.kind) == (faulty ? [.overdue] : []), "\(now): \(f)")
    }
    let late = HealthCheck.faults(
      [subject("every 6h", s, now: at("2026-11-23T07:00:00Z"))], now: at("2026-11-23T07:00:00Z"), maxLate: .minutes(30))
    #expect(late.map(\.kind) == [.overdue])
    #expect(
      late.first?.line.contains("due 2026-11-23T06:00:00Z") == true
        && late.first?.line.contains("--max-late 30m") == true)
  }

  @Test func cronOverdueUsesTheGapBetweenItsTwoLatestFireTimes() {
    // Fires at 02:00 and 14:00: the latest gap before 2026-11-24T03:00 is 02:00 - 14:00 = 12h.
    let s = succeeded("2026-11-23T02:00:00Z")
    let cron = "0 2,14 * * *"
    let ok = at("2026-11-24T01:59:00Z")  // due 14:00 the day before, 11h59m late
    #expect(HealthCheck.faults([subject(cron, s, now: ok)], now: ok, maxLate: nil).isEmpty)
    let bad = at("2026-11-24T02:01:00Z")  // 12h01m late
    let f = HealthCheck.faults([subject(cron, s, now: bad)], now: bad, maxLate: nil)
    #expect(f.map(\.kind) == [.overdue] && f[0].message.contains("one schedule interval, 12h"), "\(f)")
  }

  @Test func latestFireTimesOfCron() throws {
    let c = try CronExpression.parse("30 4 * * 1").get()  // Mondays 04:30
    #expect(c.latest(atOrBefore: at("2026-11-25T00:00:00Z")) == at("2026-11-23T04:30:00Z"))
    #expect(c.latest(atOrBefore: at("2026-11-23T04:30:00Z")) == at("2026-11-23T04:30:00Z"))
    #expect(c.latestInterval(atOrBefore: at("2026-11-25T00:00:00Z")) == .hours(24 * 7))
    let never = try CronExpression.parse("0 0 31 2 *").get()
    #expect(never.latest(atOrBefore: at("2026-11-25T00:00:00Z")) == nil)
  }

  @Test func failingInterruptedNeverRunAndOwedHooksAreFaults() {
    let now = at("2026-11-23T12:00:00Z")
    var failed = succeeded("2026-11-23T11:00:00Z")
    failed.lastOutcome = .failed
    failed.failures = 3
    failed.lastError = "HTTP 404 Not Found"
    failed.backoffUntil = at("2026-11-23T13:00:00Z")
    var f = HealthCheck.faults([subject(nil, failed, now: now)], now: now, maxLate: nil)
    #expect(f.map(\.kind) == [.failing])
    #expect(f[0].line.hasPrefix("m/a: failing: 3 failed runs in a row") && f[0].line.contains("HTTP 404 Not Found"))

    var stopped = succeeded("2026-11-23T11:00:00Z")
    stopped.lastOutcome = .interrupted
    f = HealthCheck.faults([subject(nil, stopped, now: now)], now: now, maxLate: nil)
    #expect(f.map(\.kind) == [.interrupted])

    f = HealthCheck.faults([subject(nil, nil, now: now)], now: now, maxLate: nil)
    #expect(f.map(\.kind) == [.neverRun])
    // Held by not_before: not due, so not a fault yet.
    f = HealthCheck.faults(
      [subject(nil, nil, now: now, extra: ["not_before: '2026-12-01T00:00:00Z'"])], now: now, maxLate: nil)
    #expect(f.isEmpty)

    var owed = succeeded("2026-11-23T11:00:00Z")
    owed.changeHookPending = true
    f = HealthCheck.faults([subject(nil, owed, now: now)], now: now, maxLate: nil)
    #expect(f.map(\.kind) == [.hookOwed])
  }

  @Test func withoutAScheduleOnlyMaxLateMakesATaskOverdue() {
    let s = succeeded("2026-11-20T00:00:00Z")
    let now = at("2026-11-23T00:00:00Z")
    #expect(HealthCheck.faults([subject(nil, s, now: now)], now: now, maxLate: nil).isEmpty)
    #expect(HealthCheck.faults([subject(nil, s, now: now)], now: now, maxLate: .hours(24)).map(\.kind) == [.overdue])
    #expect(HealthCheck.faults([subject("once", s, now: now)], now: now, maxLate: .hours(1)).isEmpty)
  }
}

/// The binary as a monitoring system calls it.
@Suite final class StatusCheckCommandTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func exitCodesAndOneLinePerTaskAtFault() throws {
    server.put("a.bin", testBytes(1_000, seed: 1))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\""], "/b.bin": ["status": 404]])
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, schedule: every 1h}",
      "{id: b, url: '\(server.base)/b.bin', destination: b.bin, schedule: every 1h, retry: {attempts: 1}}",
    ])
    var r = try run(["status", "--check", "m.yaml"], cwd: dir)
    #expect(r.status == 1 && r.stdout.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 2, "\(r.stdout)")
    #expect(r.stdout.contains("m/a: never run: due now"))

    _ = try apply()
    r = try run(["status", "--check", "m.yaml"], cwd: dir)
    #expect(r.status == 1)
    #expect(r.stdout.hasPrefix("m/b: failing: 1 failed run in a row") && !r.stdout.contains("m/a"), "\(r.stdout)")

    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, schedule: every 1h}"])
    r = try run(["status", "--check", "m.yaml"], cwd: dir)
    #expect(r.status == 0 && r.stdout.isEmpty, "\(r.stdout)")
    #expect(r.stderr.contains("ok: 1 task(s) checked"))

    let future = Timestamp(seconds: Int64(Date().timeIntervalSince1970) + 3 * 3600).rfc3339
    r = try run(["status", "--check", "--now", future, "--format", "json", "m.yaml"], cwd: dir)
    #expect(r.status == 1)
    let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
    let faults = o?["faults"] as? [[String: Any]]
    #expect(o?["ok"] as? Bool == false && faults?.first?["fault"] as? String == "overdue", "\(r.stdout)")
    r = try run(["status", "--check", "--max-late", "1d", "--now", future, "m.yaml"], cwd: dir)
    #expect(r.status == 0, "\(r.stdout)")
    r = try run(["status", "--max-late", "1d", "m.yaml"], cwd: dir)
    #expect(r.status == 2 && r.stderr.contains("--max-late is for health checks"))

    // A destination deleted by hand since its install is a fault, named (SPEC §10.3).
    try FileManager.default.removeItem(atPath: dir + "/out/a.bin")
    r = try run(["status", "--check", "--max-late", "1d", "m.yaml"], cwd: dir)
    #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
    #expect(
      r.stdout.contains("m/a: destination missing: ") && r.stdout.contains("out/a.bin was installed"), "\(r.stdout)")
  }
}
