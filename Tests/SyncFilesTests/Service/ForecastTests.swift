import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private func at(_ s: String) -> Timestamp { Timestamp.parseRFC3339(s)! }

/// The forecast of manifest `body` (entries under `files:`) planned at `now`, with a disk of `free` bytes.
private func forecast(
  _ files: [String], top: String = "", now: String = "2026-11-23T12:00:00Z", horizon: TimeSpan = .hours(48),
  free: Int64 = 1 << 40
) -> Forecast {
  let text = "version: 1\nname: m\nroot: /srv\n\(top)\nfiles:\n" + files.map { "  - \($0)\n" }.joined()
  let (m, d) = decode(text)
  precondition(!d.hasErrors, "\(d)")
  var facts = Facts(now: at(now), localMinuteOfDay: 720, onACPower: true)
  let disk = DiskFact(device: 1, mountPoint: "/srv", freeBytes: free)
  facts.disks["/srv"] = disk
  let plan = Planner.plan(manifests: [m!], journal: [:], facts: facts, options: PlanOptions(), journalPath: "/j")
  let context = Forecast.Context(
    conditions: ["m": m!.conditions], rate: m!.limits.rate, disks: ["/srv": disk], utcOffset: { _ in 0 })
  return Forecast(plan: plan, horizon: horizon, context: context)
}

private func file(_ id: String, _ extra: String) -> String {
  "{id: \(id), url: 'https://example.org/\(id)', destination: \(id).bin, \(extra)}"
}

@Suite struct ForecastTests {
  @Test func runsFollowTheSchedulesInsideTheHorizon() {
    let f = forecast(
      [
        file("h", "expected_bytes: 1000, schedule: every 6h"), file("c", "expected_bytes: 500, schedule: '30 0 * * *'"),
      ],
      horizon: .hours(24))
    // h: 12:00 18:00 00:00 06:00; c: due now (never checked) 12:00, then 00:30.
    #expect(
      f.runs.map(\.time.rfc3339) == [
        "2026-11-23T12:00:00Z", "2026-11-23T18:00:00Z", "2026-11-24T00:00:00Z", "2026-11-24T00:30:00Z",
        "2026-11-24T06:00:00Z",
      ])
    #expect(f.runs[0].tasks == ["m/h", "m/c"] && f.runs[0].bytes == 1500)
    #expect(f.totalBytes == 4 * 1000 + 2 * 500)
    #expect(f.days.map(\.date) == ["2026-11-23", "2026-11-24"] && f.days.map(\.bytes) == [2500, 2500])
    #expect(f.busiestHour?.start == at("2026-11-23T12:00:00Z") && f.busiestHour?.bytes == 1500)
    #expect(f.warnings.isEmpty)
  }

  @Test func aDiscretionaryTaskWaitsForItsWindowAndIsWarnedWhenItCannotFit() {
    let top = "limits: {rate: 1MB}\nconditions: {window: '01:00-03:00'}"
    let f = forecast(
      [
        file("fits", "expected_bytes: 5GB, schedule: every 1d, discretionary: true"),
        file("huge", "expected_bytes: 20GB, schedule: every 1d, discretionary: true"),
      ], top: top, horizon: .hours(24))
    #expect(f.runs.map(\.time.rfc3339) == ["2026-11-24T01:00:00Z"])
    #expect(f.warnings.count == 1, "\(f.warnings)")
    #expect(f.warnings.first?.hasPrefix("m/huge: 18.6 GiB cannot pass inside its window 01:00-03:00") == true)
  }

  /// A timetable's rates inside the window, minute by minute (SPEC §10.4):
  /// 1 MB/s from 01:00 and off from 02:00 fits anything; 100 KB/s all window long does not.
  @Test func theWindowFitIsCountedAtTheTimetablesRates() {
    let files = [file("big", "expected_bytes: 5GB, schedule: every 1d, discretionary: true")]
    let window = "\nconditions: {window: '01:00-03:00'}"
    let lifted = forecast(files, top: "limits: {rate: \"01:00,1MB 02:00,off\"}" + window, horizon: .hours(24))
    #expect(lifted.warnings.isEmpty, "\(lifted.warnings)")
    let slow = forecast(files, top: "limits: {rate: \"00:00,100KB 06:00,off\"}" + window, horizon: .hours(24))
    #expect(
      slow.warnings.first?.contains("at limits.rate 00:00,97.7 KiB/s 06:00,off, which moves at most 686.6 MiB") == true,
      "\(slow.warnings)")
  }

  @Test func unknownSizesAreCountedNotGuessed() {
    let f = forecast([file("n", "max_bytes: 1GB, schedule: every 12h")], horizon: .hours(24))
    #expect(f.runs.count == 2 && f.totalBytes == 0 && f.unknownSizes == 2)
  }

  @Test func herdsAndFullDisksAreWarned() {
    let herd = (1...6).map { file("h\($0)", "expected_bytes: 100, schedule: '0 * * * *'") }
    var f = forecast(herd, horizon: .hours(3))
    #expect(f.warnings.contains { $0.hasPrefix("6 tasks fire by cron at the same minute") }, "\(f.warnings)")
    f = forecast([file("a", "expected_bytes: 600, schedule: every 1h")], horizon: .hours(24), free: 10_000)
    // 12 runs on the 23rd (7.0 KiB), 12 on the 24th: each day 7,200 bytes, under 10,000...
    #expect(f.warnings.isEmpty, "\(f.warnings)")
    f = forecast([file("a", "expected_bytes: 1000, schedule: every 1h")], horizon: .hours(24), free: 10_000)
    #expect(f.warnings == ["2026-11-23: 11.7 KiB due for /srv, which has 9.8 KiB free now"], "\(f.warnings)")
  }

  @Test func aScheduleOfEveryMinuteIsCapped() {
    let f = forecast([file("m", "expected_bytes: 1, schedule: every 1m")], horizon: .hours(24 * 30))
    #expect(f.runs.count == Forecast.occurrenceCap)
    #expect(f.warnings.first?.contains("due more than 10000 times") == true)
  }
}

@Suite struct ForecastCommandTests {
  @Test func planHorizonAddsForecastToJSONAndADaySummaryToText() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(
      """
      version: 1
      journal: state/journal
      files:
        - {id: a, url: 'https://example.org/a', destination: a.bin, expected_bytes: 1MB, schedule: every 12h}

      """, to: dir + "/m.yaml")
    let now = "2026-11-23T12:00:00Z"
    let j = try run(["plan", "--horizon", "1d", "--now", now, "--format", "json", "m.yaml"], cwd: dir)
    #expect(j.status == 0, "\(j.stderr)")
    let o = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
    let fc = o?["forecast"] as? [String: Any]
    #expect(fc?["total_bytes"] as? Int == 2_000_000)
    #expect((fc?["runs"] as? [[String: Any]])?.count == 2)
    #expect((fc?["busiest_hour"] as? [String: Any])?["start"] as? String == now)
    #expect((fc?["warnings"] as? [Any])?.isEmpty == true)
    let t = try run(["plan", "--horizon", "1d", "--now", now, "m.yaml"], cwd: dir)
    #expect(
      t.stdout.contains("forecast for 1d") && t.stdout.contains("2026-11-23  1     1      976.6 KiB"), "\(t.stdout)")
    let plain = try run(["plan", "--format", "json", "m.yaml"], cwd: dir)
    #expect(!plain.stdout.contains("forecast"))
    let bad = try run(["plan", "--horizon", "0s", "m.yaml"], cwd: dir)
    #expect(bad.status == 2 && bad.stderr.contains("--horizon 0s covers no time"))
  }
}
