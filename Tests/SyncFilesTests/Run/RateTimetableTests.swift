import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesManifest

/// `--rate` and `limits.rate` as a timetable (SPEC §10.4), rclone's
/// `--bwlimit` syntax in local time.
@Suite struct RateTimetableTests {
  @Test func aTimetableHoldsFromEachTimeToTheNextAndWraps() throws {
    let t = try RateCap.parse("18:00,10M 08:00,512K 23:30,off").get()
    #expect(t.steps.map(\.minute) == [8 * 60, 18 * 60, 23 * 60 + 30], "sorted by time")
    #expect(t.rate(atMinute: 7 * 60) == nil, "before 08:00 the last entry (23:30, off) still holds")
    #expect(t.rate(atMinute: 8 * 60) == Int64(512 * 1024))
    #expect(t.rate(atMinute: 20 * 60) == Int64(10 * 1024 * 1024))
    #expect(t.description == "08:00,512 KiB/s 18:00,10 MiB/s 23:30,off")
    #expect(try RateCap.parse("20MB/s").get() == .constant(20_000_000))
  }

  @Test func mistakesSayWhatAnEntryIs() {
    for (text, said) in [
      ("8,512K", "timetable entry '8,512K' is not HH:MM,RATE"), ("24:00,1M", "is not HH:MM,RATE"),
      ("08:00,fast", "timetable entry '08:00,fast': malformed size"), ("08:00,0", "a rate must be more than 0"),
      ("08:00,1M 08:00,2M", "timetable names 08:00 twice"), ("0", "a rate must be more than 0"),
    ] {
      guard case .failure(let e) = RateCap.parse(text) else {
        Issue.record("\(text) was accepted")
        continue
      }
      #expect(e.message.contains(said), "\(text): \(e.message)")
    }
  }

  @Test func theLeastOfTwoCapsAtEveryTimeAndTheCapacityOfAWindow() throws {
    let day = try RateCap.parse("08:00,1M 18:00,off").get()
    let night = try RateCap.parse("00:00,100K 06:00,off").get()
    let both = day.least(night)
    #expect(both.rate(atMinute: 3 * 60) == Int64(100 * 1024))
    #expect(both.rate(atMinute: 7 * 60) == nil)
    #expect(both.rate(atMinute: 9 * 60) == Int64(1024 * 1024))
    #expect(RateCap.least(nil, .constant(5)) == .constant(5))
    #expect(day.capacity(fromMinute: 8 * 60, minutes: 60) == Int64(60 * 60 * 1024 * 1024))
    #expect(day.capacity(fromMinute: 17 * 60, minutes: 120) == nil, "18:00 to 19:00 has no cap")
  }

  @Test func theNextChangeIsCountedInLocalTime() throws {
    let t = try RateCap.parse("08:00,1M 18:00,off").get()
    setenv("TZ", "UTC", 1)
    tzset()
    defer {
      unsetenv("TZ")
      tzset()
    }
    let sevenThirty = Int64(7 * 3600 + 30 * 60)
    #expect(t.secondsToNextChange(from: sevenThirty) == 30 * 60)
    #expect(t.secondsToNextChange(from: Int64(19 * 3600)) == 13 * 3600, "past the last entry: tomorrow's first")
    #expect(RateCap.constant(1).secondsToNextChange(from: 0) == nil)
  }

  @Test func aMalformedTimetableIsAnErrorWhereItIsWritten() {
    let (_, d) = decode("version: 1\nlimits:\n  rate: \"08:00,1M 25:00,off\"\nfiles: []\n")
    #expect(
      errors(d).contains { "\($0)".contains("test.yaml:3:9: error: limits.rate: timetable entry '25:00,off'") },
      "\(d)")
  }

  /// plan --horizon's window-fit warning counts a timetable minute by minute.
  @Test func aWindowFitsOrNotByTheTimetablesRates() throws {
    let slowNights = try RateCap.parse("01:00,1K 05:00,off").get()
    #expect(slowNights.capacity(fromMinute: 60, minutes: 4 * 60) == Int64(4 * 3600 * 1024))
  }
}

/// The cap changes at the timetable's boundary during a run, within about
/// a second of it (the process's local time is moved with TZ so that a
/// minute boundary falls three seconds into the run).
@Suite final class RateTimetableRunTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()
  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func theCapLiftsAtTheBoundary() throws {
    let bytes = testBytes(4_000_000, seed: 91)
    server.put("big", bytes)
    server.routes(["/big.bin": ["file": "big", "etag": "\"b\""]])
    // Local time = UTC + offset: the next local minute begins `lead` seconds from now.
    let lead = 3
    let now = Int(Date().timeIntervalSince1970)
    let offset = ((60 - lead) - now % 60 + 60) % 60
    let local = now + offset
    func hm(_ minute: Int) -> String { String(format: "%02d:%02d", (minute / 60) % 24, minute % 60) }
    let minute = (local / 60) % 1440
    let table = "\(hm(minute)),200K \(hm(minute + 1)),off"
    manifest(
      ["{id: big, url: '\(server.base)/big.bin', destination: big.bin, sha256: \(sha256Hex(bytes))}"],
      extra: "limits: {rate: \"\(table)\"}")
    let boundary = Date(timeIntervalSince1970: Double(now + lead))
    let start = Date()
    let p = try startInBackground(
      ["apply", "-v", "m.yaml"], cwd: dir, env: ["TZ": "SYN-00:00:\(String(format: "%02d", offset))"],
      stderr: dir + "/err")
    var saidAt: Date? = nil
    while p.isRunning && Date().timeIntervalSince(start) < 30 {
      let err = (try? String(contentsOfFile: dir + "/err", encoding: .utf8)) ?? ""
      if saidAt == nil && err.contains("rate: the timetable's cap is now off") { saidAt = Date() }
      Thread.sleep(forTimeInterval: 0.05)
    }
    p.waitUntilExit()
    let took = Date().timeIntervalSince(start)
    #expect(p.terminationStatus == 0)
    #expect(out("big.bin").map(sha256Hex) == sha256Hex(bytes))
    let lag = saidAt.map { $0.timeIntervalSince(boundary) } ?? 99
    #expect(lag > -0.2 && lag < 1.5, "the cap changed \(lag) s after the boundary (\(table), TZ offset \(offset) s)")
    // At 200 KiB/s the 4 MB would take 20 s; lifted after 3 s, the run ends soon after.
    let capped = boundary.timeIntervalSince(start)
    #expect(took >= capped - 0.3 && took < 10, "the run took \(took) s, capped for its first \(capped) s")
  }
}
