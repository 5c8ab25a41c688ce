import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

@Suite final class PlanCommandTests {
  let dir = makeTempDir()
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func setUp() {
    write(
      """
      version: 1
      name: m
      root: out
      journal: state/journal
      files:
        - {id: a, url: 'https://example.org/a', destination: a.bin, expected_bytes: 4.5KiB, max_bytes: 1MiB}
        - {id: b, url: 'https://example.org/b', destination: b.bin, expected_bytes: 1KiB, max_bytes: 1MiB, schedule: "0 3 * * *"}

      """, to: dir + "/m.yaml")
  }

  /// A `root:` and a `journal:` from the environment: plan (text and
  /// JSON, with destinations and the journal's path) and status print the
  /// value masked. The test fails without `Output.mask`.
  @Test func valuesFromTheEnvironmentAreMaskedInPlanAndStatus() throws {
    write(
      "version: 1\nname: m\nroot: out/${TOK}\njournal: state/${TOK}/journal\nfiles:\n"
        + "  - {id: a, url: 'https://example.org/a', destination: a.bin, max_bytes: 1MiB}\n", to: dir + "/m.yaml")
    let env = ["TOK": "topsecret-123"]
    for args in [["plan", "m.yaml"], ["plan", "--format", "json", "m.yaml"], ["status", "m.yaml"]] {
      let r = try run(args, cwd: dir, env: env)
      #expect(r.status == 0, "\(args): \(r.stderr)")
      #expect(!r.stdout.contains("topsecret") && !r.stderr.contains("topsecret"), "\(args): \(r.stdout)")
      #expect(r.stdout.contains("state/<redacted>/journal"), "\(args): \(r.stdout)")
    }
    let json = try run(["plan", "--format", "json", "m.yaml"], cwd: dir, env: env)
    #expect(json.stdout.contains("out/<redacted>/a.bin"))
  }

  @Test func planJSONFollowsTheSpec() throws {
    setUp()
    let r = try run(["plan", "--format", "json", "--now", "2026-11-21T19:00:00Z", "m.yaml"], cwd: dir)
    #expect(r.status == 0, "\(r.stderr)")
    let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    #expect(o["now"] as? String == "2026-11-21T19:00:00Z")
    #expect((o["session"] as? String)?.isEmpty == false)
    let tasks = try #require(o["tasks"] as? [[String: Any]])
    #expect(tasks.map { $0["id"] as? String } == ["m/a", "m/b"])
    let a = tasks[0]
    #expect(a["url"] as? String == "https://example.org/a")
    #expect(a["destination"] as? String == dir + "/out/a.bin")
    #expect(a["action"] as? String == "download")
    #expect(a["reason"] as? String == "destination missing")
    #expect(a["resume_offset"] as? Int == 0)
    #expect(a["expected_bytes"] as? Int == 4608)
    #expect(tasks[1]["next_due"] as? String == "2026-11-22T03:00:00Z")
    let totals = try #require(o["totals"] as? [String: Int])
    #expect(
      totals == ["tasks": 2, "download": 2, "resume": 0, "revalidate": 0, "skip": 0, "wait": 0, "expected_bytes": 5632])
    let disk = try #require((o["disk"] as? [[String: Any]])?.first)
    #expect(disk["needed_bytes"] as? Int == 5632)
    #expect(disk["ok"] as? Bool == true)
    #expect((disk["free_bytes"] as? Int ?? 0) > 0)
  }

  /// `plan` checks the destinations beside its planning: a conflict still
  /// ends it with the errors alone (exit 2, nothing on stdout), and with
  /// another error in the manifest every error is shown at once.
  @Test func conflictingDestinationsStopThePlanBeforeAnyOutput() throws {
    let head = "version: 1\nname: m\nroot: out\njournal: state/journal\nfiles:\n"
    let entries =
      "  - {id: a, url: 'https://example.org/a', destination: d/a.bin}\n"
      + "  - {id: b, url: 'https://example.org/b', destination: d/a.bin}\n"
      + "  - {id: c, url: 'https://example.org/c', destination: d/a.bin/c.bin}\n"
    write(head + entries, to: dir + "/c.yaml")
    var r = try run(["plan", "c.yaml"], cwd: dir)
    #expect(r.status == 2)
    #expect(r.stdout.isEmpty, "\(r.stdout)")
    #expect(r.stderr.contains("destination '\(dir)/out/d/a.bin' of 'm/b' is also the destination of 'm/a'"))
    #expect(r.stderr.contains("destination of 'm/c' needs a folder at '\(dir)/out/d/a.bin'"))
    #expect(r.stderr.contains("nothing was done"))
    let validate = try run(["validate", "c.yaml"], cwd: dir)
    let errors = { (text: String) in text.split(separator: "\n").filter { $0.contains(": error: ") } }
    #expect(errors(r.stderr) == errors(validate.stdout + validate.stderr), "plan and validate name the same errors")
    write(
      head + entries + "  - {id: e, url: 'https://example.org/e', destination: e.bin, colour: red}\n",
      to: dir + "/c.yaml")
    r = try run(["plan", "c.yaml"], cwd: dir)
    #expect(r.status == 2 && r.stdout.isEmpty)
    #expect(r.stderr.contains("unknown key 'colour'") && r.stderr.contains("is also the destination of 'm/a'"))
  }

  @Test func dryRunIsThePlanAndWritesNothing() throws {
    setUp()
    let plan = try run(["plan", "--now", "2026-11-21T19:00:00Z", "m.yaml"], cwd: dir)
    let dry = try run(["apply", "--dry-run", "--now", "2026-11-21T19:00:00Z", "m.yaml"], cwd: dir)
    #expect(dry.status == 0)
    // The free space on the disk line is read live, and other tests write to
    // the same file system at the same time: compare everything but that figure.
    #expect(withoutFreeSpace(dry.stdout) == withoutFreeSpace(plan.stdout))
    #expect(withoutFreeSpace(plan.stdout).contains { $0.hasSuffix(": 5.5 KiB needed, <free> free: ok") })
    #expect(plan.stdout.contains("m/a   download  4.5 KiB  destination missing"))
    #expect(!FileManager.default.fileExists(atPath: dir + "/state"))
    #expect(!FileManager.default.fileExists(atPath: dir + "/out"))
  }

  /// The plan's text with the free-space figure of each disk line replaced,
  /// so two plans made a moment apart compare equal.
  private func withoutFreeSpace(_ text: String) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
      guard line.hasPrefix("disk "), let needed = line.range(of: " needed, "),
        let free = line.range(of: " free", range: needed.upperBound..<line.endIndex)
      else { return String(line) }
      return String(line[..<needed.upperBound]) + "<free>" + String(line[free.lowerBound...])
    }
  }

  @Test func statusShowsWhatTheJournalKnows() throws {
    setUp()
    var s = TaskState(id: "m/b")
    s.lastOutcome = .failed
    s.lastCheck = Timestamp.parseRFC3339("2026-11-21T18:00:00Z")
    s.failures = 2
    s.backoffUntil = Timestamp.parseRFC3339("2026-11-21T20:00:00Z")
    s.partial = .init(path: dir + "/out/.b.bin.syncfiles-partial", offset: 512, totalBytes: 1024, etag: "\"x\"")
    s.lastError = "HTTP 503"
    do {
      let w = try JournalWriter(path: dir + "/state/journal")
      try w.record(s)
    }
    var r = try run(["status", "--now", "2026-11-21T19:00:00Z", "m.yaml"], cwd: dir)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout.contains("m/a   never"))
    #expect(
      r.stdout.contains(
        "m/b   failed  2026-11-21T18:00:00Z  -      512 B of 1 KiB  2026-11-21T20:00:00Z  2, backoff until 2026-11-21T20:00:00Z"
      ))
    r = try run(["status", "--format", "json", "--journal", "state/journal"], cwd: dir)
    let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    let tasks = try #require(o["tasks"] as? [[String: Any]])
    #expect(tasks.count == 1)
    #expect(tasks[0]["failures"] as? Int == 2)
    #expect(tasks[0]["error"] as? String == "HTTP 503")
    #expect((tasks[0]["partial"] as? [String: Any])?["offset"] as? Int == 512)
  }

  @Test func damagedJournalIsReportedOnceAndStillRead() throws {
    setUp()
    do {
      let w = try JournalWriter(path: dir + "/state/journal")
      try w.record(TaskState(id: "m/a"))
    }
    let h = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + "/state/journal"))
    h.seekToEndOfFile()
    h.write(Data("57 0000 {\"t\":\"task\",\"id\":\"m/b\"".utf8))
    try h.close()
    let r = try run(["status", "--journal", "state/journal"], cwd: dir)
    #expect(r.status == 0)
    #expect(r.stderr.contains("skipped an unfinished last record"), "\(r.stderr)")
    #expect(r.stderr.components(separatedBy: "\n").filter { $0.contains("journal") }.count == 1, "once")
    #expect(r.stdout.contains("m/a"))
  }

  @Test func invalidManifestsStopPlanWithExit2() throws {
    write("version: 1\nfiles:\n  - id: a\n", to: dir + "/bad.yaml")
    let r = try run(["plan", "bad.yaml"], cwd: dir)
    #expect(r.status == 2)
    #expect(r.stdout.isEmpty)
    #expect(r.stderr.contains("bad.yaml:3:5: error: file entry 'a' is missing required keys 'url', 'destination'"))
  }

  @Test func badNowIsAUsageError() throws {
    setUp()
    let r = try run(["plan", "--now", "tomorrow", "m.yaml"], cwd: dir)
    #expect(r.status == 2)
    #expect(r.stderr.contains("RFC 3339"))
  }
}
