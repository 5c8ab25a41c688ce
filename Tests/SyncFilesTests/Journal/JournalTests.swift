import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private func sample(_ id: String, _ n: Int = 0) -> TaskState {
  var t = TaskState(id: id)
  t.fingerprint = "fp-\(n)"
  t.lastCheck = Timestamp(seconds: 1_800_000_000 + Int64(n))
  t.lastSuccess = t.lastCheck
  t.lastOutcome = .installed
  t.lastBytes = Int64(100 * n)
  t.httpStatus = 200
  t.installed = .init(
    size: 4608, mtimeNs: 1_800_000_000_123_456_789, etag: "\"abc\"", lastModified: "Sat, 21 Nov 2026 19:00:00 GMT",
    sha256: String(repeating: "a", count: 64))
  t.partial = .init(path: "/srv/.x.syncfiles-partial", offset: 41 << 20, totalBytes: 100 << 20, etag: "\"v2\"")
  t.failures = n % 3
  t.backoffUntil = n % 3 == 0 ? nil : Timestamp(seconds: 1_900_000_000)
  t.lastError = n % 2 == 0 ? nil : "HTTP 503 from https://example.org/x \"quoted\"\nsecond line"
  return t
}

@Suite final class JournalTests {
  let dir = makeTempDir()
  var path: String { dir + "/state/journal" }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func roundTrip() throws {
    do {
      let w = try JournalWriter(path: path)
      for i in 0..<50 { try w.record(sample("m/f\(i)", i)) }
      try w.sync()
    }
    let c = try JournalReader.read(path: path)
    #expect(c.tasks.count == 50)
    #expect(c.dropped == 0)
    for i in 0..<50 { #expect(c.tasks["m/f\(i)"] == sample("m/f\(i)", i)) }
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.hasPrefix("syncfiles-journal 1\n"))
  }

  /// A sync with nothing written since the last one makes no `fdatasync`
  /// (the run's second sync, after hooks that did not run); one after a
  /// record, a torn tail cut, or a new file's header does.
  @Test func aSyncWithNothingNewCallsNoFdatasync() throws {
    do {
      let w = try JournalWriter(path: path)
      try w.sync()
      #expect(w.datasyncs == 1, "a new journal's header is made durable")
      try w.record(sample("m/a", 1))
      try w.sync()
      try w.sync()
      #expect(w.datasyncs == 2)
      try w.record(sample("m/b", 2), flush: false)
      try w.sync()
      #expect(w.datasyncs == 3, "a record held back is written and synced")
      try w.compact()
      try w.sync()
      #expect(w.datasyncs == 3, "a compaction leaves the journal durable")
    }
    // A torn tail, cut when the journal is opened, is synced once.
    let fd = open(path, O_WRONLY | O_APPEND)
    _ = "12 deadbeef {\"t\":".withCString { write(fd, $0, strlen($0)) }
    close(fd)
    let w = try JournalWriter(path: path)
    try w.sync()
    try w.sync()
    #expect(w.datasyncs == 1)
    #expect(try JournalReader.read(path: path).tasks.count == 2)
  }

  @Test func lastRecordOfATaskWins() throws {
    do {
      let w = try JournalWriter(path: path)
      try w.record(sample("m/a", 1))
      try w.record(sample("m/b", 2))
      try w.record(sample("m/a", 3))
    }
    let c = try JournalReader.read(path: path)
    #expect(c.tasks["m/a"] == sample("m/a", 3))
    #expect(c.records == 3)
  }

  /// A line whose length and checksum hold but whose body is not JSON: only
  /// a program other than syncfiles writes one.
  private func forged(_ body: String) -> [UInt8] {
    let b = Array(body.utf8)
    return Array("\(b.count) \(String(format: "%08x", CRC32.checksum(b))) ".utf8) + b + [0x0A]
  }

  private func header() -> [UInt8] { Array(JournalFormat.header.utf8) }

  /// A task's earlier records are not read once a later one has given it
  /// (issue 15: W4 read every record of a journal holding up to four a
  /// task): the forged, unreadable record before the last is never parsed.
  @Test func aRecordAnotherOfItsTaskFollowsIsNotParsed() throws {
    let bytes =
      header() + JournalFormat.line(sample("m/a", 1)) + forged(#"{"t":"task","id":"m/a",not json"#)
      + JournalFormat.line(sample("m/b", 2)) + JournalFormat.line(sample("m/a", 3))
    let c = try #require(JournalFormat.decode(bytes))
    #expect(c.tasks["m/a"] == sample("m/a", 3) && c.tasks["m/b"] == sample("m/b", 2))
    #expect(c.records == 4 && c.dropped == 0 && c.validLength == bytes.count)
  }

  /// The record that would win does not parse: every record is read in
  /// order, as before, so the task keeps its earlier record and the line is
  /// dropped (damage inside, or a torn tail at the end).
  @Test func aLastRecordThatDoesNotParseLeavesTheOneBeforeIt() throws {
    let bad = forged(#"{"t":"task","id":"m/a",not json"#)
    let inside = header() + JournalFormat.line(sample("m/a", 1)) + bad + JournalFormat.line(sample("m/b", 2))
    let c = try #require(JournalFormat.decode(inside))
    #expect(c.tasks["m/a"] == sample("m/a", 1) && c.tasks["m/b"] == sample("m/b", 2))
    #expect(c.records == 2 && c.dropped == 1 && c.damagedInside == 1 && c.validLength == inside.count)
    let tail = header() + JournalFormat.line(sample("m/a", 1)) + bad
    let t = try #require(JournalFormat.decode(tail))
    #expect(t.tasks["m/a"] == sample("m/a", 1) && t.tornTail == 1 && t.validLength == tail.count - bad.count)
  }

  /// Cut the file at every byte offset inside its last record: the last
  /// record is dropped, every earlier one kept, and a writer appends cleanly.
  @Test func tornTailAtEveryOffsetOfTheLastRecord() throws {
    do {
      let w = try JournalWriter(path: path)
      try w.record(sample("m/a", 1))
      try w.record(sample("m/b", 2))
      try w.record(sample("m/c", 3))
    }
    let full = try Data(contentsOf: URL(fileURLWithPath: path))
    let lastStart = full.dropLast().lastIndex(of: 0x0A)! + 1
    for cut in lastStart..<full.count {
      try full.prefix(cut).write(to: URL(fileURLWithPath: path))
      let c = try JournalReader.read(path: path)
      #expect(c.tasks.count == 2, "cut at \(cut)")
      #expect(c.tasks["m/b"] == sample("m/b", 2))
      #expect(c.dropped == (cut == lastStart ? 0 : 1))
      // The next writer cuts the torn tail and appends after the good records.
      do {
        let w = try JournalWriter(path: path)
        try w.record(sample("m/d", 4))
      }
      let again = try JournalReader.read(path: path)
      #expect(again.tasks.keys.sorted() == ["m/a", "m/b", "m/d"], "cut at \(cut)")
      #expect(again.dropped == 0)
    }
  }

  @Test func randomGarbageAppendedIsDropped() throws {
    var rng = SystemRandomNumberGenerator()
    for round in 0..<20 {
      try? FileManager.default.removeItem(atPath: path)
      do {
        let w = try JournalWriter(path: path)
        try w.record(sample("m/a", round))
      }
      let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
      h.seekToEndOfFile()
      h.write(Data((0..<Int.random(in: 1...400, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
      try h.close()
      let c = try JournalReader.read(path: path)
      #expect(c.tasks["m/a"] == sample("m/a", round))
      #expect(c.tasks.count == 1)
    }
  }

  @Test func damagedRecordInTheMiddleIsSkipped() throws {
    do {
      let w = try JournalWriter(path: path)
      for i in 0..<3 { try w.record(sample("m/f\(i)", i)) }
    }
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let secondLine = bytes.firstIndex(of: 0x0A)! + 1
    let thirdLine = bytes[secondLine...].firstIndex(of: 0x0A)! + 1
    bytes[thirdLine + 30] ^= 0x01  // flip a bit inside record 2's JSON
    try bytes.write(to: URL(fileURLWithPath: path))
    let c = try JournalReader.read(path: path)
    #expect(c.dropped == 1 && c.damagedInside == 1 && c.tornTail == 0)
    #expect(c.tasks.keys.sorted() == ["m/f0", "m/f2"])
    #expect(c.damageNote(path: "J", rewritten: false)?.contains("1 damaged record(s) inside the file") == true)
  }

  /// Before: damage inside the journal was reported on every run, as "a torn
  /// tail after a crash", until a compaction happened to remove it.
  @Test func aWriterRewritesDamageInsideOnceAndSaysSo() throws {
    do {
      let w = try JournalWriter(path: path)
      for i in 0..<3 { try w.record(sample("m/f\(i)", i)) }
    }
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let secondLine = bytes.firstIndex(of: 0x0A)! + 1
    bytes[secondLine + 40] ^= 0x01  // damage record 1 of 3
    bytes.append(contentsOf: Array("57 0badc0de {\"t\":\"task\"".utf8))  // and a torn tail
    try bytes.write(to: URL(fileURLWithPath: path))
    do {
      let w = try JournalWriter(path: path)
      let note = try #require(w.recovered)
      #expect(note.contains("1 damaged record(s) inside the file") && note.contains("rewritten without them"))
      #expect(note.contains("unfinished last record") && note.contains("cut off"))
      #expect(w.contents.tasks.keys.sorted() == ["m/f1", "m/f2"])
    }
    let c = try JournalReader.read(path: path)
    #expect(c.dropped == 0 && c.tasks.keys.sorted() == ["m/f1", "m/f2"])
    #expect(try JournalWriter(path: path).recovered == nil, "said once")
  }

  /// Before: a damaged header made the whole journal "not a syncfiles journal" (exit 2, every run).
  @Test func aDamagedHeaderIsRecoveredWhenTheRecordsCheckOut() throws {
    do {
      let w = try JournalWriter(path: path)
      for i in 0..<3 { try w.record(sample("m/f\(i)", i)) }
    }
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    bytes[3] = 0x00
    try bytes.write(to: URL(fileURLWithPath: path))
    let c = try JournalReader.read(path: path)
    #expect(c.headerDamaged && c.tasks.count == 3)
    #expect(
      c.damageNote(path: "J", rewritten: false)?.contains("first line is not the journal header, but 3 record(s)")
        == true)
    do {
      let w = try JournalWriter(path: path)
      #expect(w.recovered?.contains("rewritten with the header") == true)
    }
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.hasPrefix("syncfiles-journal 1\n"))
    let again = try JournalReader.read(path: path)
    #expect(!again.headerDamaged && again.tasks["m/f2"] == sample("m/f2", 2))
  }

  /// A zeroed block over the header and its end of line (a power cut): the
  /// records after it are kept. NUL bytes there were refused as "not a
  /// journal", though 100 good records followed.
  @Test(arguments: [20, 100, 4096])
  func zerosOverTheHeaderAreRecoveredWhenTheRecordsCheckOut(zeroed: Int) throws {
    do {
      let w = try JournalWriter(path: path)
      for i in 0..<100 { try w.record(sample("m/f\(i)", i)) }
    }
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    for k in 0..<zeroed { bytes[k] = 0 }
    try bytes.write(to: URL(fileURLWithPath: path))
    let c = try JournalReader.read(path: path)
    #expect(c.headerDamaged && c.tasks.count >= 100 - (zeroed / 100 + 1), "kept \(c.tasks.count)")
    #expect(c.tasks["m/f99"] == sample("m/f99", 99))
    do { _ = try JournalWriter(path: path) }
    #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("syncfiles-journal 1\n"), "rewritten")
  }

  /// What the user can do about a file that is no journal, and what it costs.
  @Test func aRefusedJournalSaysWhatToDo() throws {
    try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
    write("hello\n", to: path)
    do {
      _ = try JournalWriter(path: path)
      Issue.record("accepted")
    } catch {
      #expect(error.message.contains("move it aside") && error.message.contains("a fresh journal forgets"))
    }
  }

  @Test func aFileWhoseRecordsDoNotCheckOutIsStillNotAJournal() throws {
    try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
    let text = "syncfiles-journal 2\n12 00000000 {\"t\":\"task\"}\nhello\n"
    write(text, to: path)
    #expect(throws: JournalError.self) { try JournalReader.read(path: path) }
    #expect(throws: JournalError.self) { try JournalWriter(path: path) }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == text, "untouched")
    // A later version's journal, even with records this version could read, is left alone.
    let later = "syncfiles-journal 2\n" + String(decoding: JournalFormat.line(sample("m/a").json), as: UTF8.self)
    write(later, to: path)
    #expect(throws: JournalError.self) { try JournalWriter(path: path) }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == later)
  }

  /// 300 random mutations of a journal (bit flips, cuts, inserted and deleted
  /// bytes, swapped lines): a reader never accepts a damaged record, and the
  /// next writer leaves a journal that reads back whole.
  @Test func threeHundredMutationsNeverYieldADamagedState() throws {
    var originals: [String: TaskState] = [:]
    do {
      let w = try JournalWriter(path: path)
      for i in 0..<20 {
        let t = sample("m/f\(i)", i)
        originals[t.id] = t
        try w.record(t)
      }
    }
    let pristine = try Data(contentsOf: URL(fileURLWithPath: path))
    var rng = SystemRandomNumberGenerator()
    var refused = 0
    for round in 0..<300 {
      var b = [UInt8](pristine)
      switch round % 5 {
      case 0: b[Int.random(in: 0..<b.count, using: &rng)] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
      case 1: b.removeLast(Int.random(in: 1..<b.count, using: &rng))
      case 2:
        b.insert(
          contentsOf: (0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) },
          at: Int.random(in: 0..<b.count, using: &rng))
      case 3:
        b.removeSubrange(
          Int.random(in: 0..<b.count - 50, using: &rng)..<Int.random(in: b.count - 50..<b.count, using: &rng))
      default:
        var lines = b.split(separator: 0x0A, omittingEmptySubsequences: false)
        lines.swapAt(Int.random(in: 1..<lines.count - 1, using: &rng), Int.random(in: 1..<lines.count - 1, using: &rng))
        b = Array(lines.joined(separator: [0x0A]))
      }
      try Data(b).write(to: URL(fileURLWithPath: path))
      guard let c = try? JournalReader.read(path: path) else {
        refused += 1
        // Refused: the writer refuses too, and leaves the file as it was.
        #expect(throws: JournalError.self) { try JournalWriter(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(b), "round \(round)")
        continue
      }
      for (id, t) in c.tasks { #expect(originals[id] == t, "round \(round): \(id) read damaged") }
      do { _ = try JournalWriter(path: path) }
      let again = try JournalReader.read(path: path)
      #expect(again.dropped == 0 && !again.headerDamaged, "round \(round): the writer repaired it")
      #expect(again.tasks == c.tasks, "round \(round): the writer kept every good record")
    }
    #expect(refused < 300)
  }

  @Test func aTornTailAloneIsNotCalledDamage() throws {
    do {
      let w = try JournalWriter(path: path)
      try w.record(sample("m/a", 1))
    }
    let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    h.seekToEndOfFile()
    h.write(Data("120 12345678 {\"t\":".utf8))
    try h.close()
    let c = try JournalReader.read(path: path)
    #expect(c.damagedInside == 0 && c.tornTail == 1)
    let note = c.damageNote(path: "J", rewritten: false) ?? ""
    #expect(
      note
        == "journal J: skipped an unfinished last record (a write cut short by a crash, a kill or a full disk; the next apply cuts it off)"
    )
  }

  @Test func compactionKeepsTheLatestStateOfEveryTask() throws {
    let w = try JournalWriter(path: path)
    w.compactionFloor = 1024
    for round in 0..<20 {
      for i in 0..<10 { try w.record(sample("m/f\(i)", round * 10 + i)) }
    }
    #expect(w.needsCompaction)
    let before = try JournalReader.read(path: path)
    try w.compact()
    #expect(!w.needsCompaction)
    let after = try JournalReader.read(path: path)
    #expect(after.tasks == before.tasks)
    #expect(after.records == 10)
    let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
    // Appends after compaction go to the new file.
    try w.record(sample("m/new", 1))
    let more = try JournalReader.read(path: path)
    #expect(more.tasks.count == 11)
    #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int) > size)
  }

  /// A compaction killed before its rename leaves `journal.compact` beside
  /// an intact journal; killed after, the new journal is complete.
  @Test func killedCompactionLeavesAReadableJournal() throws {
    do {
      let w = try JournalWriter(path: path)
      for i in 0..<5 { try w.record(sample("m/f\(i)", i)) }
    }
    let before = try JournalReader.read(path: path)
    // Killed mid-write: a half-written compact file exists.
    let half = JournalFormat.header + "123 deadbeef {\"t\":\"ta"
    try half.write(toFile: path + ".compact", atomically: false, encoding: .utf8)
    #expect(try JournalReader.read(path: path).tasks == before.tasks)
    // The next writer removes it and carries on.
    do {
      let w = try JournalWriter(path: path)
      try w.record(sample("m/f9", 9))
    }
    #expect(!FileManager.default.fileExists(atPath: path + ".compact"))
    #expect(try JournalReader.read(path: path).tasks.count == 6)
  }

  @Test func aSecondWriterIsRefusedAndNamesTheHolder() throws {
    let w = try JournalWriter(path: path)
    do {
      _ = try JournalWriter(path: path)
      Issue.record("a second writer got the lock")
    } catch {
      #expect(error == .locked(journal: path, holder: "\(getpid())"))
      #expect(error.message.contains("pid \(getpid())"))
    }
    // Readers never block.
    #expect(try JournalReader.read(path: path).tasks.isEmpty)
    _ = w
  }

  /// The "locked" message names the process that holds the flock, not the
  /// pid left in the lock file by an earlier apply (here the file says 1).
  @Test func aLockHeldByAnotherProgramNamesThatProgram() throws {
    try JournalWriter.makeFolder(of: path)
    #expect(FileManager.default.createFile(atPath: path + ".lock", contents: Data("1\n".utf8)))
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
    // --no-fork: flock becomes sleep, so the pid that holds the lock is the one terminated below.
    holder.arguments = ["--exclusive", "--no-fork", path + ".lock", "sleep", "30"]
    try holder.run()
    defer {
      // SIGKILL: the test process may have SIGTERM blocked (apply's signal
      // watcher), and a child inherits that mask.
      kill(holder.processIdentifier, SIGKILL)
      holder.waitUntilExit()
    }
    // flock(1) takes the lock before it runs sleep; wait until the kernel says so.
    var refused: JournalError? = nil
    for _ in 0..<100 {
      do {
        _ = try JournalWriter(path: path)
        usleep(20_000)
      } catch {
        refused = error
        break
      }
    }
    #expect(refused == .locked(journal: path, holder: "\(holder.processIdentifier)"))
  }

  @Test func procLocksIsReadByDeviceAndInode() {
    let text = """
      1: FLOCK  ADVISORY  WRITE 22522 fe:00:16220245 0 EOF
      1: -> FLOCK  ADVISORY  WRITE 99 fe:00:16220245 0 EOF
      2: POSIX  ADVISORY  WRITE 77 fe:01:5 0 EOF
      3: FLOCK  ADVISORY  WRITE 4242 103:02:5 0 EOF
      """
    let fe00: UInt64 = 0xfe << 8
    #expect(JournalLock.flockHolder(in: text, device: fe00, inode: 16_220_245) == 22522)
    #expect(JournalLock.flockHolder(in: text, device: fe00, inode: 16_220_246) == nil)
    #expect(JournalLock.flockHolder(in: text, device: (0xfe << 8) | 1, inode: 5) == nil)  // a POSIX lock
    // A major above 255 (0x103), printed in hex.
    let dev103: UInt64 = ((0x103 & 0xfff) << 8) | 2
    #expect(JournalLock.flockHolder(in: text, device: dev103, inode: 5) == 4242)
    #expect(JournalLock.flockHolder(in: "", device: fe00, inode: 1) == nil)
  }

  @Test func notAJournalIsRefusedUntouched() throws {
    try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
    try "important notes\n".write(toFile: path, atomically: false, encoding: .utf8)
    #expect(throws: JournalError.self) { try JournalWriter(path: path) }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "important notes\n")
  }

  @Test func missingJournalReadsEmpty() throws {
    let c = try JournalReader.read(path: dir + "/none/journal")
    #expect(c.tasks.isEmpty && c.dropped == 0)
  }

  @Test func location() throws {
    let m = [Manifest(path: "m.yaml", absolutePath: "/etc/m.yaml", name: "m", root: "/srv", journal: "/etc/j")]
    func loc(
      _ flag: String?, _ env: [String: String], _ ms: [Manifest], root: Bool = false, home: String? = "/pw"
    ) throws -> String {
      try JournalLocation.resolve(
        flag: flag, environment: env, manifests: ms, isRoot: root, workingDirectory: "/w", home: { home })
    }
    #expect(try loc("j", ["SYNCFILES_JOURNAL": "/e"], m) == "/w/j")
    #expect(try loc(nil, ["SYNCFILES_JOURNAL": "/e"], m) == "/e")
    #expect(try loc(nil, [:], m) == "/etc/j")
    #expect(try loc(nil, ["XDG_STATE_HOME": "/x", "HOME": "/h"], []) == "/x/syncfiles/journal")
    #expect(try loc(nil, ["HOME": "/h"], []) == "/h/.local/state/syncfiles/journal")
    #expect(try loc(nil, ["HOME": "/h"], [], root: true) == "/var/lib/syncfiles/journal")
    // A systemd service's StateDirectory= (the first of several), over root's default and HOME.
    #expect(try loc(nil, ["STATE_DIRECTORY": "/var/lib/syncfiles:/var/lib/other", "HOME": "/h"], [], root: true)
      == "/var/lib/syncfiles/journal")
    #expect(try loc(nil, ["STATE_DIRECTORY": "/s"], m) == "/etc/j", "the manifest's key wins")
    // No HOME: the password database's home; none: an error that says how to choose.
    #expect(try loc(nil, [:], []) == "/pw/.local/state/syncfiles/journal")
    #expect(throws: JournalError.noHome(uid: getuid())) { try loc(nil, [:], [], home: nil) }
    #expect(JournalError.noHome(uid: 65534).message.contains("--journal PATH"))
  }

  @Test func jsonParserRoundTrips() throws {
    let v = JSONValue.object([
      ("s", .string("é \"q\" \\ \n \u{1} 😀")), ("i", .int(-42)), ("d", .double(1.5)), ("b", .bool(false)),
      ("n", .null), ("a", .array([.int(1), .object([])])),
    ])
    #expect(try JSONValue.parse(v.serialized()) == v)
    #expect(try JSONValue.parse(#"{"x":"\ud83d\ude00\u00e9"}"#)["x"]?.stringValue == "😀é")
    for bad in ["", "{", "[1,]", "{\"a\" 1}", "tru", "\"\\x\"", "1 2", String(repeating: "[", count: 100)] {
      #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(bad) }
    }
  }

  /// The journal read beside the manifests (JournalPrefetch) is used only
  /// when the file under the lock holds exactly the bytes it read.
  @Test func aPrefetchIsUsedOnlyForTheSameBytes() throws {
    do {
      let w = try JournalWriter(path: path)
      for n in 0..<5 { try w.record(sample("m/t\(n)", n)) }
    }
    let same = JournalPrefetch()
    same.start(path: path)
    do {
      let w = try JournalWriter(path: path, prefetched: same)
      #expect(w.usedPrefetch)
      #expect(w.contents.tasks == (try JournalReader.read(path: path)).tasks)
      #expect(w.contents.tasks.count == 5)
    }
    // Written between the prefetch and the lock: the writer reads the file itself.
    let stale = JournalPrefetch()
    stale.start(path: path)
    stale.waitUntilRead()
    do {
      let other = try JournalWriter(path: path)
      try other.record(sample("m/t1", 99))
    }
    let w = try JournalWriter(path: path, prefetched: stale)
    #expect(!w.usedPrefetch)
    #expect(w.contents.tasks["m/t1"]?.fingerprint == "fp-99")
  }

  /// A journal last changed well before the prefetch read it is not read
  /// again under the lock when its identity (inode, size, mtime, ctime) is
  /// unchanged (issue 15: a steady journal of 2,000 tasks is 1-3 MB).
  @Test func aSettledJournalIsNotReadAgainUnderTheLock() throws {
    do {
      let w = try JournalWriter(path: path)
      for n in 0..<5 { try w.record(sample("m/t\(n)", n)) }
    }
    Thread.sleep(forTimeInterval: 0.15)
    let settled = JournalPrefetch()
    settled.start(path: path)
    let w = try JournalWriter(path: path, prefetched: settled)
    #expect(w.usedPrefetch && !w.readAgain)
    #expect(w.contents.tasks == (try JournalReader.read(path: path)).tasks)
    #expect(w.contents.tasks.count == 5)
  }

  /// After a settled prefetch, a write in place that keeps the size (the
  /// same inode, bytes of the same length) is still seen: its mtime and
  /// ctime are later than the file's before the read.
  @Test func aWriteOfTheSameSizeAfterASettledPrefetchIsSeen() throws {
    do {
      let w = try JournalWriter(path: path)
      try w.record(sample("m/a", 1))
    }
    let first = try #require(readBytes(path))
    Thread.sleep(forTimeInterval: 0.15)
    let stale = JournalPrefetch()
    stale.start(path: path)
    stale.waitUntilRead()
    // Another version of the one record, of the same length, written over the first in place.
    let other = dir + "/other"
    do {
      let w = try JournalWriter(path: other)
      try w.record(sample("m/a", 7))
    }
    let second = try #require(readBytes(other))
    #expect(second.count == first.count && second != first)
    let fd = open(path, O_WRONLY)
    #expect(second.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == second.count)
    close(fd)
    let w = try JournalWriter(path: path, prefetched: stale)
    #expect(w.readAgain && !w.usedPrefetch)
    #expect(w.contents.tasks["m/a"]?.fingerprint == "fp-7")
  }

  @Test func aPrefetchOfAnotherPathOrNoFileIsNotUsed() throws {
    let other = JournalPrefetch()
    other.start(path: dir + "/elsewhere")
    do {
      let missing = try JournalWriter(path: path, prefetched: other)
      #expect(!missing.usedPrefetch)
      try missing.record(sample("m/a"))
    }
    let none = JournalPrefetch()
    none.start(path: dir + "/elsewhere")
    let w = try JournalWriter(path: path, prefetched: none)
    #expect(!w.usedPrefetch)
    #expect(w.contents.tasks["m/a"] != nil)
  }

  @Test func crc32MatchesZlib() {
    #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    #expect(CRC32.checksum([]) == 0)
  }

  /// zlib's CRC is the bytewise CRC-32 at every length and alignment, and of
  /// known values.
  @Test func crc32IsTheBytewiseCRC() {
    func bytewise(_ b: [UInt8]) -> UInt32 {
      var c: UInt32 = 0xFFFF_FFFF
      for x in b {
        c ^= UInt32(x)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
      }
      return c ^ 0xFFFF_FFFF
    }
    var rng = SplitMix(seed: 32)
    let data = (0..<300).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    for start in 0..<9 {
      for end in start...data.count where (end - start) < 40 || end % 7 == 0 {
        let slice = data[start..<end]
        #expect(CRC32.checksum(slice) == bytewise(Array(slice)), "\(start)..<\(end)")
      }
    }
    #expect(CRC32.checksum(AnySequence(data)) == bytewise(data))  // not contiguous: copied first
    let bytes = Array(0...255).map(UInt8.init)
    #expect(CRC32.checksum(bytes) == 0x2905_8C73)
    #expect(CRC32.checksum(bytes + bytes + bytes + bytes + Array("tail".utf8)) == 0x361F_CFFF)
  }
}

/// Claims of a segmented partial hold in the boot that made them; after a
/// reboot (a power cut) only the flushed ones do (SPEC §9.2).
@Suite struct BootClaimTests {
  @Test func rangesFromAnEarlierBootAreTrustedOnlyWhereFlushed() throws {
    var p = TaskState.Partial(path: "/p", offset: 0, totalBytes: 100, etag: "\"e\"")
    p.ranges = ByteRanges([0..<60])
    p.boot = "A"
    p.durable = ByteRanges([0..<20])
    #expect(p.trustedRanges(boot: "A") == ByteRanges([0..<60]), "a kill keeps the page cache")
    #expect(p.trustedRanges(boot: "B") == ByteRanges([0..<20]), "a new boot: the flushed part alone")
    p.durable = nil
    #expect(p.trustedRanges(boot: "B") == ByteRanges(), "nothing flushed: nothing trusted")
    p.boot = nil
    #expect(p.trustedRanges(boot: "B") == ByteRanges([0..<60]), "a journal from before boots were recorded")
    // The fields go through the journal's record and back.
    var s = TaskState(id: "m/a")
    p.boot = "A"
    p.durable = ByteRanges([0..<20])
    s.partial = p
    let back = try #require(TaskState(json: s.json))
    #expect(back.partial?.boot == "A" && back.partial?.durable == ByteRanges([0..<20]))
  }
}
