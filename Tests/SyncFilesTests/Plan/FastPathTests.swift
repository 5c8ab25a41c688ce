import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The shortcuts taken for large manifests give exactly what the plain way gives.
@Suite struct FastPathTests {
  /// normalize as it was before the already-normal shortcut: split, resolve, join.
  func slowNormalize(_ path: String, relativeTo base: String = "/") -> String {
    let full = path.hasPrefix("/") ? path : base + "/" + path
    var parts: [Substring] = []
    for c in full.split(separator: "/", omittingEmptySubsequences: true) {
      if c == "." { continue }
      if c == ".." {
        if !parts.isEmpty { parts.removeLast() }
        continue
      }
      parts.append(c)
    }
    return "/" + parts.joined(separator: "/")
  }

  @Test func normalizeAgreesWithTheSlowWayOnEveryShapeOfPath() {
    let pieces = ["", "/", "//", ".", "..", "...", ".a", "a.", "a", "bc", "é", "/./", "/../"]
    var checked = 0
    for a in pieces {
      for b in pieces {
        for c in pieces {
          let path = a + b + "/" + c
          for base in ["/", "/srv/data", "/srv/../x"] {
            #expect(
              Paths.normalize(path, relativeTo: base) == slowNormalize(path, relativeTo: base), "\(path) in \(base)")
            checked += 1
          }
          #expect(Paths.isNormal(path) == (path == slowNormalize(path)), "\(path)")
        }
      }
    }
    #expect(checked == 3 * pieces.count * pieces.count * pieces.count)
  }

  /// What `confine` returns for a relative path, the plain way.
  func slowConfine(_ raw: String) -> String? {
    if raw.isEmpty || raw.hasPrefix("/") { return nil }
    if raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return nil }
    if raw.hasSuffix("/") || raw.hasSuffix("/.") || raw == "." { return nil }
    let parts = raw.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
    if parts.contains("..") || parts.isEmpty || parts.contains(where: { $0.utf8.count > 255 }) { return nil }
    return parts.joined(separator: "/")
  }

  @Test func aPlainRelativeDestinationIsConfinedUnchanged() throws {
    let pieces = ["", "/", ".", "..", "...", "a", "é", "\t", String(repeating: "x", count: 256)]
    var plain = 0
    for a in pieces {
      for b in pieces {
        for c in pieces {
          let path = a + b + c
          guard Paths.isPlainRelative(path) else { continue }
          plain += 1
          #expect(slowConfine(path) == path, "\(path)")
          #expect(try Paths.confine(destination: path, root: "/srv").get() == path)
        }
      }
    }
    #expect(plain > 50)
    for bad in ["a//b", "a/./b", "./a", "a/..", "../a", "a\u{7F}", "/srv/a", "a/"] {
      #expect(!Paths.isPlainRelative(bad), "\(bad)")
    }
  }

  @Test func folderAndNameSplitOnTheLastSlashByBytes() {
    #expect(Paths.folder(of: "/srv/a/b.bin") == "/srv/a")
    #expect(Paths.folder(of: "/b.bin") == "/")
    #expect(Paths.folder(of: "b.bin") == ".")
    #expect(Paths.fileName(of: "/srv/é/ü.bin") == "ü.bin")
    #expect(Paths.fileName(of: "/srv/a/\u{301}x") == "\u{301}x", "a combining mark after the slash stays in the name")
    let long = "/var/tmp/a-folder-name-longer-than-fifteen/bytes.bin"
    #expect(Paths.folder(of: long) == "/var/tmp/a-folder-name-longer-than-fifteen")
    #expect(Paths.fileName(of: long) == "bytes.bin")
    #expect(Paths.folder(of: "/") == "/")
    #expect(Paths.folder(of: "") == ".")
    #expect(Paths.fileName(of: "/srv/a/") == "")
    #expect(Paths.stem(of: "/srv/.hidden") == ".hidden")
    #expect(Paths.stem(of: "/srv/data.tar.gz") == "data.tar")
  }

  @Test func theFingerprintIsTheHashOfThePartsJoined() {
    let (m, d) = decode(
      """
      version: 1
      name: m
      root: /srv
      files:
        - {id: a, url: 'https://example.org/a', destination: a.bin, max_bytes: 1MiB, sha256: \(String(repeating: "ab", count: 32))}
        - {id: b, url: 'https://example.org/b', destination: b.bin, max_bytes: 5}
        - {id: c, url: 'https://user:pw@example.org/dir/c', destination: c.bin}
        - {id: d, url: 'https://example.org/${TOKEN}/a-name-longer-than-fifteen', destination: d.bin}
        - {id: e, url: 'https://example.org', destination: e.bin}
      """, env: ["TOKEN": "t0k"])
    #expect(!d.hasErrors, "\(d)")
    #expect(m!.files.count == 5)
    for e in m!.files {
      // The destination as written (relative to the root); journals written
      // before 2026-11-27 recorded it with the absolute path.
      for (destination, fingerprint) in [
        (e.destination, Planner.fingerprint(e)), (e.destinationPath, Planner.legacyFingerprint(e)),
      ] {
        let key = [e.url.display, destination, e.sha256 ?? "", e.maxBytes.map(String.init) ?? ""]
          .joined(separator: "\u{1}")
        let hex = String(Planner.fnv1a(key), radix: 16)
        #expect(fingerprint == String(repeating: "0", count: 16 - hex.count) + hex)
      }
    }
  }

  @Test func theHashAndItsDigitsAreFNV1aAsJournalsRecordIt() {
    // Journals hold fingerprints: a change here would make every entry look changed.
    #expect(Planner.fnv1a("hello") == 0xa430_d846_80aa_bd0b)
    #expect(Planner.hex16(0xa430_d846_80aa_bd0b) == "a430d84680aabd0b")
    #expect(Planner.hex16(0x0f) == "000000000000000f")
    #expect(Planner.fnv1a(joined: ["he", "lo"], separator: "l") == Planner.fnv1a("hello"))
    #expect(Planner.hex16(0x0123_4567_89ab_cdef) == "0123456789abcdef" && Planner.hex16(.max) == "ffffffffffffffff")
  }

  @Test func anEntryCopiedAndChangedLeavesTheOriginalAsItWas() {
    let (m, _) = decode(entry())
    let original = m!.files[0]
    var copy = original
    #expect(copy == original)
    copy.maxBytes = 7
    copy.retry.attempts = 9
    #expect(original.maxBytes == nil)
    #expect(original.retry.attempts == RetryPolicy().attempts)
    #expect(copy.maxBytes == 7 && copy.retry.attempts == 9)
    #expect(copy != original)
    #expect(m!.files[0] == original)
  }

  @Test func fieldsKeepTheOrderWrittenAndFindEveryKey() {
    var f = Fields<Int>()
    for (i, k) in ["id", "url", "destination", "expected_bytes"].enumerated() { f.append(new: k, i) }
    #expect(f["destination"] == 2)
    #expect(f["sha256"] == nil)
    #expect(f.map(\.0) == ["id", "url", "destination", "expected_bytes"])
    #expect(f.map(\.1) == [0, 1, 2, 3])
    f.append(new: "sha256", 7)
    #expect(f["sha256"] == 7 && f.count == 5)
  }

  @Test func tableCellsArePaddedByCharactersNotBytes() {
    #expect(TextTable.width("m/f1") == 4)
    #expect(TextTable.width(String(repeating: "x", count: 40)) == 40)
    #expect(TextTable.width("é/ü") == 3)
    #expect(TextTable.width("e\u{301}" + String(repeating: "x", count: 20)) == 21, "a combining mark adds no column")
    var out: [UInt8] = []
    TextTable.cell("é", width: 3, into: &out)
    #expect(String(decoding: out, as: UTF8.self) == "é    ")
    // A plan's rows line up under its header, the widest id setting the column.
    var text = "version: 1\nname: m\nroot: /srv\nfiles:\n"
    for id in ["a", "abc", "a-much-longer-id"] {
      text += "  - {id: '\(id)', url: 'https://example.org/\(id)', destination: '\(id).bin', max_bytes: 1KiB}\n"
    }
    let p = planOf(text, disk: "/srv")
    let lines = PlanReport.text(p)
      .split(separator: "\n").prefix(4).map(String.init)
    let column = lines.map { line in line.distance(from: line.startIndex, to: line.range(of: "  ")!.lowerBound) }
    #expect(lines[0].hasPrefix("TASK  ") && lines[2].hasPrefix("m/abc  "))
    let action = lines.map { line in
      line.distance(from: line.startIndex, to: line.range(of: line == lines[0] ? "ACTION" : "download")!.lowerBound)
    }
    #expect(Set(action).count == 1, "\(lines)")
    #expect(column[3] == "m/a-much-longer-id".count)
  }

  /// One text holds an entry's absolute and relative destination, under any root.
  @Test func theRelativeDestinationIsTheEndOfTheAbsoluteOne() {
    for (root, dest, path) in [
      ("/", "a/b.bin", "/a/b.bin"), ("/srv", "./x//y.bin", "/srv/x/y.bin"), ("/srv/é", "ü.bin", "/srv/é/ü.bin"),
      ("/srv", "/srv/deep/z.bin", "/srv/deep/z.bin"),
    ] {
      let (m, d) = decode(
        "version: 1\nname: m\nroot: '\(root)'\nfiles:\n  - {id: a, url: 'https://e.org/a', destination: '\(dest)', max_bytes: 1}\n"
      )
      #expect(!d.hasErrors, "\(d)")
      #expect(m?.files.first?.destinationPath == path)
      #expect(m?.files.first?.destination == String(path.dropFirst(root == "/" ? 1 : root.count + 1)))
    }
    // A plan holds a task per entry: what most leave at its default is boxed.
    #expect(MemoryLayout<PlannedTask>.stride <= 88)
  }

  /// An entry keeps its id as the end of its qualified id, and its expected
  /// size and not_before without an optional's padding: each reads back.
  @Test func anEntryKeepsItsIdSizeAndDateInItsOwnTexts() throws {
    let text = entry(lines: ["expected_bytes: 0", "not_before: 1969-12-31T23:59:59Z"])
      .replacingOccurrences(of: "name: t", with: "name: n-1.x")
      .replacingOccurrences(of: "id: a", with: "id: a.b-c_1")
    let (m, d) = decode(text)
    let e = try #require(m?.files.first, "\(d)")
    #expect(e.id == "a.b-c_1" && e.qualifiedID == "n-1.x/a.b-c_1")
    #expect(e.expectedBytes == 0 && e.notBefore == Timestamp(seconds: -1))
    let (m2, _) = decode(entry(lines: []))
    let plain = try #require(m2?.files.first)
    #expect(plain.id == "a" && plain.expectedBytes == nil && plain.notBefore == nil)
  }

  /// A task's optional numbers are kept without an optional's padding:
  /// each one reads back as set, nil included.
  @Test func aTaskKeepsItsOptionalNumbers() throws {
    let (m, _) = decode(entry(lines: []))
    var t = PlannedTask(entry: try #require(m?.files.first), action: .download, reason: "r")
    #expect(t.bytesToTransfer == nil && t.nextDue == nil && t.segments == nil && t.correctMode == nil)
    t.bytesToTransfer = 0
    t.nextDue = Timestamp(seconds: -1)
    t.segments = 8
    t.correctMode = 0o644
    #expect(t.bytesToTransfer == 0 && t.nextDue == Timestamp(seconds: -1) && t.segments == 8 && t.correctMode == 0o644)
    t.bytesToTransfer = Int64.max
    t.correctMode = nil
    #expect(t.bytesToTransfer == .max && t.correctMode == nil && t.segments == 8)
    t.segments = nil
    t.nextDue = nil
    #expect(t.segments == nil && t.nextDue == nil)
  }

  @Test func tasksWaitingForDifferentDatesEachSayTheirOwn() {
    var text = "version: 1\nname: m\nroot: /srv\nfiles:\n"
    let dates = ["2999-01-01T00:00:00Z", "2999-01-01T00:00:00Z", "2998-05-06T07:08:09Z", "2999-01-01T00:00:00Z"]
    for (i, date) in dates.enumerated() {
      text += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: \(i).bin, not_before: '\(date)'}\n"
    }
    let p = planOf(text, disk: "/srv")
    #expect(p.tasks.map(\.reason) == dates.map { "waiting for not_before \($0)" })
    #expect(p.tasks.map(\.nextDue) == dates.map { Timestamp.parseRFC3339($0) })
  }

  @Test func aLongPlanCountsItsTasksByAction() {
    var text = "version: 1\nname: m\nroot: /srv\nfiles:\n"
    for i in 0..<300 {
      let wait = i % 3 == 0 ? ", not_before: '2999-01-01T00:00:00Z'" : ""
      text += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: d/\(i).bin, max_bytes: 1KiB\(wait)}\n"
    }
    let p = planOf(text, disk: "/srv/d")
    #expect(p.counts == [.wait: 100, .download: 200])
    #expect(p.count(.download) == 200)
    let text2 = PlanReport.text(p)
    #expect(text2.contains("300 tasks: 200 download, 0 resume, 0 revalidate, 0 skip, 100 wait"))
    let rows = text2.split(separator: "\n").filter { $0.hasPrefix("m/f") }
    #expect(rows.count == 300)
    #expect(rows.allSatisfy { $0.hasPrefix("m/f") && ($0.contains(" wait ") || $0.contains(" download ")) })
  }
}

/// The plan of a manifest's text, with no journal, at a fixed time, its
/// destinations on one roomy disk whose folder is `disk`.
private func planOf(_ text: String, disk: String) -> SessionPlan {
  let (m, d) = decode(text)
  #expect(!d.hasErrors)
  var f = Facts(now: Timestamp.parseRFC3339("2026-11-21T19:00:00Z")!, localMinuteOfDay: 0, onACPower: true)
  f.disks[disk] = DiskFact(device: 1, mountPoint: "/srv", freeBytes: 1 << 40)
  return Planner.plan(manifests: [m!], journal: [:], facts: f, journalPath: "/j")
}
