import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private let now = Timestamp.parseRFC3339("2026-11-21T19:00:00Z")!

/// One manifest, root /srv, with one file `a` (destination /srv/a.bin) and `extra` keys.
private func manifest(_ extra: String..., conditions: String = "") -> Manifest {
  var text = "version: 1\nname: m\nroot: /srv\n" + conditions + "files:\n"
  text += "  - id: a\n    url: https://example.org/a\n    destination: a.bin\n    expected_bytes: 100MiB\n"
  for e in extra { text += "    \(e)\n" }
  let (m, d) = decode(text)
  precondition(!d.hasErrors, "\(d)")
  return m!
}

private func facts(_ files: [String: FileFact] = [:], minute: Int = 12 * 60, ac: Bool = true) -> Facts {
  var f = Facts(now: now, localMinuteOfDay: minute, onACPower: ac)
  f.files = files
  f.disks["/srv"] = DiskFact(device: 1, mountPoint: "/srv", freeBytes: 1 << 40)
  return f
}

private func plan(
  _ m: Manifest, _ state: TaskState? = nil, _ f: Facts = facts(), options: PlanOptions = PlanOptions()
) -> PlannedTask {
  let journal = state.map { [$0.id: $0] } ?? [:]
  return Planner.plan(manifests: [m], journal: journal, facts: f, options: options, journalPath: "/j").tasks[0]
}

/// A journal state as left by a successful install of the entry at `checked`.
private func installed(_ m: Manifest, checked: String = "2026-11-21T18:00:00Z") -> TaskState {
  var s = TaskState(id: "m/a")
  s.fingerprint = Planner.fingerprint(m.files[0])
  s.lastCheck = Timestamp.parseRFC3339(checked)
  s.lastSuccess = s.lastCheck
  s.lastOutcome = .installed
  s.installed = .init(size: 100, mtimeNs: 5, etag: "\"v1\"")
  return s
}

private let present = ["/srv/a.bin": FileFact(size: 100, mtimeNs: 5)]
/// Where the runner keeps `a`'s partial (`PartialFile.path`).
private let heldPath = "/srv/.a.bin.syncfiles-partial"

@Suite struct PlannerActionTests {
  /// The entries here expect 100 MiB: `segments: auto` offers 4 ranges (SPEC §8.3).
  static let autoRanges =
    "; in up to 4 byte ranges at once, each on a connection of its own, if the server offers ranges under a strong validator, else one stream"

  @Test func missingDestinationDownloads() {
    let t = plan(manifest())
    #expect(t.action == .download)
    #expect(t.reason == "destination missing" + Self.autoRanges)
    #expect(t.bytesToTransfer == 100 << 20)
    #expect(t.destinationMissing)
  }

  @Test func deletedBehindItsBack() {
    let m = manifest()
    let t = plan(m, installed(m))
    #expect(t.action == .download)
    #expect(t.reason == "destination deleted since install — will download again" + Self.autoRanges)
    #expect(t.destinationMissing)
  }

  /// Only a destination the plan found is looked at again before an install (whether it already holds the bytes).
  @Test func aDestinationThatExistsIsNotMarkedMissing() {
    let m = manifest("schedule: once")
    for fact in [FileFact(size: 101, mtimeNs: 5), FileFact(size: 100, mtimeNs: 5)] {
      #expect(!plan(m, installed(m), facts(["/srv/a.bin": fact])).destinationMissing)
    }
    #expect(!plan(m, nil, facts(present)).destinationMissing)
  }

  @Test func changedBehindItsBack() {
    let m = manifest("schedule: once")
    for fact in [FileFact(size: 101, mtimeNs: 5), FileFact(size: 100, mtimeNs: 6)] {
      let t = plan(m, installed(m), facts(["/srv/a.bin": fact]))
      #expect(t.action == .download)
      #expect(t.reason == "destination changed on disk since install — will re-download" + Self.autoRanges)
    }
  }

  @Test func manifestEntryChanged() {
    let m = manifest()
    var s = installed(m)
    s.fingerprint = "something-else"
    let t = plan(m, s, facts(present))
    #expect(t.action == .download)
    #expect(t.reason.hasPrefix("manifest entry changed"))
  }

  /// Journals before 2026-11-27 recorded the fingerprint over the
  /// destination's absolute path: such an entry has not changed.
  @Test func aFingerprintOfTheEarlierFormIsStillTheEntrys() {
    let m = manifest()
    var s = installed(m)
    s.fingerprint = Planner.legacyFingerprint(m.files[0])
    #expect(s.fingerprint != Planner.fingerprint(m.files[0]))
    let t = plan(m, s, facts(present))
    #expect(t.action == .revalidate, "\(t.reason)")
  }

  /// The manifest's folder moved with its files and journal: the root
  /// changed, the entry did not. The file is revalidated, not fetched again.
  @Test func aMovedRootKeepsWhatWasInstalled() {
    let m = manifest()
    let s = installed(m)
    var text = "version: 1\nname: m\nroot: /moved/srv\nfiles:\n"
    text += "  - id: a\n    url: https://example.org/a\n    destination: a.bin\n    expected_bytes: 100MiB\n"
    let moved = decode(text).0!
    let t = plan(moved, s, facts(["/moved/srv/a.bin": FileFact(size: 100, mtimeNs: 5)]))
    #expect(t.action == .revalidate, "\(t.reason)")
    // A file of another size there is not the one installed.
    let other = plan(moved, s, facts(["/moved/srv/a.bin": FileFact(size: 99, mtimeNs: 5)]))
    #expect(other.reason.hasPrefix("destination changed on disk since install"))
    // Another destination, or another URL, is another entry.
    for changed in [
      text.replacingOccurrences(of: "a.bin", with: "b.bin"), text.replacingOccurrences(of: "/a\n", with: "/b\n"),
    ] {
      let t = plan(
        decode(changed).0!, s,
        facts([
          "/moved/srv/a.bin": FileFact(size: 100, mtimeNs: 5), "/moved/srv/b.bin": FileFact(size: 100, mtimeNs: 5),
        ]))
      #expect(t.reason.hasPrefix("manifest entry changed"), "\(t.reason)")
    }
  }

  /// A journal copied with its folder names the partial in the old folder:
  /// that file is not this entry's, and is never resumed from or measured.
  @Test func aPartialThatIsNotBesideTheDestinationIsNotResumed() {
    var s = TaskState(id: "m/a")
    s.partial = .init(path: "/old/srv/.a.bin.syncfiles-partial", offset: 10, etag: "\"v2\"")
    let t = plan(manifest(), s, facts(["/old/srv/.a.bin.syncfiles-partial": FileFact(size: 10, mtimeNs: 1)]))
    #expect(t.action == .download)
    #expect(t.resumeOffset == 0)
  }

  @Test func partialHeldResumes() {
    let m = manifest()
    var s = TaskState(id: "m/a")
    s.partial = .init(path: "/srv/.a.bin.syncfiles-partial", offset: 40 << 20, totalBytes: 100 << 20, etag: "\"v2\"")
    let t = plan(m, s, facts(["/srv/.a.bin.syncfiles-partial": FileFact(size: 41 << 20, mtimeNs: 1)]))
    #expect(t.action == .resume)
    #expect(t.resumeOffset == 41 << 20)  // what the file holds, not the last journaled offset
    #expect(t.reason == "partial 41 MiB of 100 MiB held, resumable with ETag" + Self.autoRanges)
    #expect(t.bytesToTransfer == 59 << 20)
  }

  @Test func partialWithOnlyAStrongLastModifiedResumes() {
    var s = TaskState(id: "m/a")
    s.partial = .init(path: heldPath, offset: 10, lastModified: "Sat, 21 Nov 2026 10:00:00 GMT", dateIsStrong: true)
    let t = plan(manifest(), s, facts([heldPath: FileFact(size: 10, mtimeNs: 1)]))
    #expect(t.action == .resume)
    #expect(t.reason.hasSuffix("resumable with Last-Modified" + Self.autoRanges))
    #expect(t.request.headerLines(partialSize: 10).contains("If-Range: Sat, 21 Nov 2026 10:00:00 GMT"))
  }

  @Test func partialUnderAWeakLastModifiedStartsOverAndSaysWhy() {
    var s = TaskState(id: "m/a")
    // Received within the second of the response's Date (or a journal from before v1.1): weak.
    s.partial = .init(path: heldPath, offset: 10, lastModified: "Sat, 21 Nov 2026 10:00:00 GMT")
    let t = plan(manifest(), s, facts([heldPath: FileFact(size: 10, mtimeNs: 1)]))
    #expect(t.action == .download)
    #expect(t.reason.contains("weak Last-Modified and cannot be resumed"))
    #expect(t.request == .whole)
  }

  @Test func partialThatCannotBeResumedStartsOver() {
    let m = manifest()
    for p in [
      TaskState.Partial(path: heldPath, offset: 10, etag: "W/\"weak\""),  // If-Range needs a strong ETag
      TaskState.Partial(path: heldPath, offset: 10),  // no validator at all
    ] {
      var s = TaskState(id: "m/a")
      s.partial = p
      let t = plan(m, s, facts([heldPath: FileFact(size: 10, mtimeNs: 1)]))
      #expect(t.action == .download)
      #expect(t.resumeOffset == 0)
    }
    // A partial whose file is gone is nothing to resume either.
    var s = TaskState(id: "m/a")
    s.partial = .init(path: heldPath, offset: 10, etag: "\"x\"")
    #expect(plan(m, s).action == .download)
  }

  @Test func interruptedUpdateResumes() {
    let m = manifest("schedule: every 6h")
    var s = installed(m)
    s.partial = .init(path: heldPath, offset: 5, etag: "\"v2\"")
    let t = plan(m, s, facts(present.merging([heldPath: FileFact(size: 5, mtimeNs: 1)]) { a, _ in a }))
    #expect(t.action == .resume)
    #expect(t.reason.hasPrefix("update interrupted: partial 5 B of 100 MiB"))
  }

  /// Its expected size is the upper bound of what the revalidation may
  /// fetch, counted in the totals and the disk preflight (it counted 0 B).
  @Test func presentButUnknownToTheJournalRevalidates() {
    let t = plan(manifest(), nil, facts(present))
    #expect(t.action == .revalidate)
    #expect(t.reason.hasPrefix("destination exists but is not in the journal"))
    #expect(t.bytesToTransfer == 100 << 20)
    let (m, _) = decode(
      "version: 1\nname: m\nroot: /srv\nfiles:\n  - {id: a, url: 'https://e/a', destination: a.bin, expected_bytes: 100MiB}\n"
    )
    var f = facts(present)
    f.disks["/srv"] = DiskFact(device: 1, mountPoint: "/srv", freeBytes: 10 << 20)
    let p = Planner.plan(manifests: [m!], journal: [:], facts: f, journalPath: "/j")
    #expect(p.disk.first?.neededBytes == 100 << 20 && p.disk.first?.ok == false, "\(p.disk)")
  }

  @Test func notARegularFile() {
    let t = plan(manifest(), nil, facts(["/srv/a.bin": FileFact(size: 0, mtimeNs: 0, isRegular: false)]))
    #expect(t.action == .download)
    #expect(t.reason.contains("not a regular file"))
  }
}

@Suite struct PlannerScheduleTests {
  @Test func noScheduleRevalidatesEveryApply() {
    let m = manifest()
    let t = plan(m, installed(m), facts(present))
    #expect(t.action == .revalidate)
    #expect(t.reason == "no schedule: revalidate on every apply")
    #expect(t.nextDue == nil)
  }

  @Test func onceSkipsWhilePresent() {
    let m = manifest("schedule: once")
    let t = plan(m, installed(m), facts(present))
    #expect(t.action == .skip)
    #expect(t.reason == "schedule once: destination present")
    #expect(plan(m, installed(m), facts(present), options: PlanOptions(force: true)).action == .skip)
  }

  @Test func everyDuration() {
    let m = manifest("schedule: every 6h")
    var t = plan(m, installed(m, checked: "2026-11-21T18:00:00Z"), facts(present))
    #expect(t.action == .skip)
    #expect(t.reason == "not due until 2026-11-22T00:00:00Z (every 6h)")
    #expect(t.nextDue?.rfc3339 == "2026-11-22T00:00:00Z")
    t = plan(m, installed(m, checked: "2026-11-21T13:00:00Z"), facts(present))
    #expect(t.action == .revalidate)
    #expect(t.reason == "due: last checked 2026-11-21T13:00:00Z (every 6h)")
    #expect(t.nextDue?.rfc3339 == "2026-11-22T01:00:00Z")  // after this run
    // Exactly at the boundary it is due.
    t = plan(m, installed(m, checked: "2026-11-21T13:00:00Z"), facts(present))
    #expect(t.runs)
  }

  @Test func cron() {
    let m = manifest("schedule: \"0 3 * * *\"")
    var t = plan(m, installed(m, checked: "2026-11-21T03:05:00Z"), facts(present))
    #expect(t.action == .skip)
    #expect(t.reason == "not due until 2026-11-22T03:00:00Z (cron 0 3 * * *)")
    t = plan(m, installed(m, checked: "2026-11-20T03:05:00Z"), facts(present))
    #expect(t.action == .revalidate)
    #expect(t.reason == "due: cron 0 3 * * * fired at 2026-11-21T03:00:00Z since the last check")
    #expect(t.nextDue?.rfc3339 == "2026-11-22T03:00:00Z")
  }

  @Test func forceRevalidatesWhatIsNotDue() {
    let m = manifest("schedule: every 6h")
    let t = plan(m, installed(m), facts(present), options: PlanOptions(force: true))
    #expect(t.action == .revalidate)
    #expect(t.reason == "forced (--force): revalidate")
  }

  @Test func onlySelects() {
    let m = manifest()
    #expect(plan(m, options: PlanOptions(only: ["m/a"])).action == .download)
    #expect(plan(m, options: PlanOptions(only: ["m/*"])).action == .download)
    let t = plan(m, options: PlanOptions(only: ["other/*"]))
    #expect(t.action == .skip && t.reason == "not selected by --only")
  }
}

@Suite struct PlannerWaitTests {
  @Test func notBefore() {
    var t = plan(manifest("not_before: 2026-12-01T00:00:00Z"))
    #expect(t.action == .wait)
    #expect(t.reason == "waiting for not_before 2026-12-01T00:00:00Z")
    #expect(t.nextDue?.rfc3339 == "2026-12-01T00:00:00Z")
    t = plan(manifest("not_before: 2026-11-01T00:00:00Z"))
    #expect(t.action == .download)
    t = plan(manifest("not_before: 2026-12-01T00:00:00Z"), options: PlanOptions(force: true))
    #expect(t.action == .download)
  }

  @Test func backoff() {
    let m = manifest()
    var s = TaskState(id: "m/a")
    s.failures = 3
    s.backoffUntil = Timestamp.parseRFC3339("2026-11-21T20:00:00Z")
    var t = plan(m, s)
    #expect(t.action == .wait)
    #expect(t.reason == "in backoff after 3 failed runs until 2026-11-21T20:00:00Z")
    #expect(t.nextDue == s.backoffUntil)
    #expect(plan(m, s, options: PlanOptions(force: true)).action == .download)
    s.backoffUntil = Timestamp.parseRFC3339("2026-11-21T18:59:59Z")
    t = plan(m, s)
    #expect(t.action == .download)
  }

  @Test func aTaskNotDueIsSkippedRatherThanWaiting() {
    let m = manifest("schedule: once", "not_before: 2026-12-01T00:00:00Z")
    #expect(plan(m, installed(m), facts(present)).action == .skip)
  }

  @Test func windowWrappingMidnight() {
    let m = manifest("discretionary: true", conditions: "conditions: { window: \"22:00-02:00\" }\n")
    for inside in [22 * 60, 23 * 60 + 59, 0, 60, 119] {
      #expect(plan(m, nil, facts(minute: inside)).action == .download, "minute \(inside)")
    }
    for outside in [120, 12 * 60, 21 * 60 + 59] {
      let t = plan(m, nil, facts(minute: outside))
      #expect(t.action == .wait, "minute \(outside)")
      #expect(t.reason == "outside window 22:00-02:00 (local time); discretionary")
    }
    // At local 12:00, the window opens in 10 hours.
    #expect(plan(m, nil, facts(minute: 12 * 60)).nextDue == Timestamp(seconds: now.seconds + 10 * 3600))
    // Not discretionary: the window does not apply.
    let strict = manifest(conditions: "conditions: { window: \"22:00-02:00\" }\n")
    #expect(plan(strict, nil, facts(minute: 12 * 60)).action == .download)
  }

  @Test func acPower() {
    let m = manifest("discretionary: true", conditions: "conditions: { ac_power: true }\n")
    let t = plan(m, nil, facts(ac: false))
    #expect(t.action == .wait)
    #expect(t.reason == "not on mains power (ac_power); discretionary")
    #expect(plan(m, nil, facts(ac: true)).action == .download)
  }
}

@Suite struct PlannerDiskTests {
  @Test func neededIsExpectedMinusPartialPerFileSystem() {
    let text = """
      version: 1
      name: m
      root: /srv
      files:
        - {id: a, url: 'https://e/a', destination: a, expected_bytes: 100MiB}
        - {id: b, url: 'https://e/b', destination: b, expected_bytes: 50MiB}
        - {id: c, url: 'https://e/c', destination: other/c, expected_bytes: 1GiB}
        - {id: d, url: 'https://e/d', destination: d}

      """
    let (m, _) = decode(text)
    var f = facts(["/srv/.b.syncfiles-partial": FileFact(size: 20 << 20, mtimeNs: 1)])
    f.disks["/srv/other"] = DiskFact(device: 2, mountPoint: "/srv/other", freeBytes: 10 << 20)
    var s = TaskState(id: "m/b")
    s.partial = .init(path: "/srv/.b.syncfiles-partial", offset: 20 << 20, etag: "\"e\"")
    let p = Planner.plan(manifests: [m!], journal: ["m/b": s], facts: f, journalPath: "/j")
    #expect(p.disk.count == 2)
    let srv = p.disk.first { $0.path == "/srv" }!
    #expect(srv.neededBytes == (100 << 20) + (30 << 20))
    #expect(srv.ok)
    #expect(srv.unknownSizes == 1)
    let other = p.disk.first { $0.path == "/srv/other" }!
    #expect(!other.ok)
    #expect(other.tasks == ["m/c"])
    #expect(p.expectedBytes == (100 << 20) + (30 << 20) + (1 << 30))
    let text2 = PlanReport.text(p)
    #expect(text2.contains("disk /srv/other: 1 GiB needed, 10 MiB free: DOES NOT FIT (m/c)"))
    #expect(text2.contains("4 tasks: 3 download, 1 resume, 0 revalidate, 0 skip, 0 wait"))
  }

  /// The plan written as it is made (to standard output, 64 KiB at a time)
  /// is the text, byte for byte, with padding from the widest cell of any row.
  @Test func aLargePlanWrittenInPiecesIsItsText() throws {
    var text = "version: 1\nname: m\nroot: /srv\nfiles:\n"
    for i in 0..<4000 {
      text += "  - {id: f\(i), url: 'https://h.example/\(i)', destination: d/f\(i), expected_bytes: \(i * 7)}\n"
    }
    text += "  - {id: the-longest-id-of-them-all, url: 'https://h.example/x', destination: x}\n"
    let (m, _) = decode(text)
    let p = Planner.plan(manifests: [try #require(m)], journal: [:], facts: facts(), journalPath: "/j")
    let whole = PlanReport.text(p)
    #expect(whole.utf8.count > 2 << 16)  // several flushes of 64 KiB
    let path = makeTempDir() + "/plan.txt"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    #expect(fd >= 0)
    var out = TextOut(fd: fd)
    PlanReport.write(p, to: &out)
    out.flush()
    close(fd)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == whole)
    // Every row is padded to the longest id, which comes last.
    let lines = whole.split(separator: "\n")
    #expect(lines[1].hasPrefix("m/f0" + String(repeating: " ", count: "m/the-longest-id-of-them-all".count - 4 + 2)))
  }

  /// Each row holds its task's id, action, bytes to move (`?` unknown, `-`
  /// none) and the JSON's reason, a whole revalidation's request included;
  /// the columns are as wide as their widest cell.
  @Test func theTableRowsAreTheTasks() throws {
    var text = "version: 1\nname: m\nroot: /srv\nfiles:\n"
    text += "  - {id: a, url: 'https://h.example/a', destination: a.bin, expected_bytes: 2KiB}\n"
    text += "  - {id: b, url: 'https://h.example/b', destination: b.bin}\n"
    text += "  - {id: c, url: 'https://h.example/c', destination: c.bin}\n"
    text += "  - {id: d, url: 'https://h.example/d', destination: d.bin, not_before: '2999-01-01T00:00:00Z'}\n"
    let (m, _) = decode(text)
    var c = TaskState(id: "m/c")
    c.fingerprint = Planner.fingerprint(try #require(m).files[2])
    c.lastCheck = now
    c.lastOutcome = .installed
    c.installed = .init(size: 100, mtimeNs: 5)  // no validator: a whole GET
    let f = facts(["/srv/c.bin": FileFact(size: 100, mtimeNs: 5)])
    let p = Planner.plan(manifests: [m!], journal: ["m/c": c], facts: f, journalPath: "/j")
    #expect(p.tasks.map(\.action) == [.download, .download, .revalidate, .wait])
    #expect(Action.allCases.map(\.ordinal) == Array(Action.allCases.indices))
    guard case .object(let fields) = PlanReport.json(p),
      case .array(let json)? = fields.first(where: { $0.0 == "tasks" })?.1
    else { return #expect(Bool(false), "no tasks in the JSON") }
    let reasons = json.map { task -> String in
      guard case .object(let o) = task, case .string(let r)? = o.first(where: { $0.0 == "reason" })?.1 else {
        return ""
      }
      return r
    }
    #expect(reasons[2].hasSuffix("; unconditional GET (no validator recorded)"), "\(reasons[2])")
    let lines = PlanReport.text(p).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines[0] == "TASK  ACTION      BYTES  WHY")
    let expected = [
      ("m/a", "download", "2 KiB"), ("m/b", "download", "?"), ("m/c", "revalidate", "0 B"), ("m/d", "wait", "-"),
    ]
    for (i, (id, action, bytes)) in expected.enumerated() {
      let row =
        id.padding(toLength: 6, withPad: " ", startingAt: 0) + action.padding(toLength: 12, withPad: " ", startingAt: 0)
        + bytes.padding(toLength: 7, withPad: " ", startingAt: 0) + reasons[i]
      #expect(lines[i + 1] == row)
    }
    #expect(
      lines.contains {
        $0.hasPrefix(
          "4 tasks: 2 download, 0 resume, 1 revalidate, 0 skip, 1 wait; 2 KiB to transfer (+ 1 of unknown size)")
      })
  }

  @Test func sessionLimitsAreMergedAndShown() {
    let a = manifest()
    var b = manifest()
    b.limits.parallel = 2
    b.limits.rate = .constant(1_000_000)
    let p = Planner.plan(manifests: [a, b], journal: [:], facts: facts(), journalPath: "/j")
    #expect(p.limits.parallel == 2 && p.limits.rate == .constant(1_000_000))
    #expect(PlanReport.text(p).contains("limits: parallel 2, per_host 6, rate 976.6 KiB/s, deadline none"))
  }
}

@Suite struct TimeArithmeticTests {
  /// Before: the sum wrapped, so a schedule of about 290 billion years was
  /// due in the year -292277022610, that is at once and on every apply.
  @Test func aTimestampPlusAHugeSpanSaturates() {
    let now = Timestamp.parseRFC3339("2026-11-23T00:00:00Z")!
    let far = now + TimeSpan(seconds: Int64.max - 5)
    #expect(far.seconds == Int64.max && far > now)
    #expect((now + .hours(1)).seconds == now.seconds + 3600)
  }
}
