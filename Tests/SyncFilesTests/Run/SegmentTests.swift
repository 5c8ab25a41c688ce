import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// SPEC §8.3: a file fetched as several byte ranges at once, against the
/// fault server (a rate per connection, a kill -9 mid-way, a version that
/// changes between runs, a server that ignores Range).
@Suite final class SegmentTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func rangeRequests() -> [FaultServer.Request] { server.requests("/big.bin").filter { $0.headers["range"] != nil } }

  func journalPartial() throws -> [String: Any]? {
    let text = try String(contentsOfFile: dir + "/state/journal", encoding: .utf8)
    // Lines are `LENGTH CRC32 JSON`.
    let last = text.split(separator: "\n").last { $0.contains("\"m/big\"") }
    let json = last.map { $0.split(separator: " ", maxSplits: 2).last ?? "" }
    let o = try json.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    return o?["partial"] as? [String: Any]
  }

  /// Starts apply, lets it run for `seconds`, kills it with SIGKILL.
  func applyKilled(after seconds: Double) throws {
    let p = try startInBackground(["apply", "--quiet", "m.yaml"], cwd: dir)
    Thread.sleep(forTimeInterval: seconds)
    kill(p.processIdentifier, SIGKILL)
    p.waitUntilExit()
    #expect(p.terminationReason == .uncaughtSignal, "apply ended before the kill")
  }

  @Test func aCappedConnectionIsOutrunByRangesWrittenIntoOnePartial() throws {
    let big = testBytes(6_000_000, seed: 1)
    server.put("big", big)
    // 1.5 MB/s per connection: one stream would take 4 s.
    server.routes(["/big.bin": ["file": "big", "etag": "\"b1\"", "trickle_bps": 1_500_000]])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 4, sha256: \(sha256Hex(big))}"])
    let plan = try run(["plan", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("in up to 4 byte ranges"), "\(plan.stdout)")

    let started = Date()
    let r = try apply()
    let took = Date().timeIntervalSince(started)
    #expect(r.run.status == 0 && r.outcome("m/big") == "installed", "\(r.run.stdout)\(r.run.stderr)")
    #expect(out("big.bin") == big && r.string("m/big", "sha256") == sha256Hex(big))
    #expect(r.int("m/big", "segments") == 4)
    let sent = r.int("m/big", "bytes_transferred") ?? 0
    #expect(sent - 6_000_000 == r.int("m/big", "bytes_discarded"), "no byte fetched twice")
    let ranges = rangeRequests()
    // The first request asks for the first 1 MiB piece; its answer names
    // the size and the version the other ranges ask for with If-Range.
    #expect(ranges.first?.headers["range"] == "bytes=0-1048575" && ranges.first?.headers["if-range"] == nil)
    #expect(
      ranges.count == 6 && ranges.dropFirst().allSatisfy { $0.headers["if-range"] == "\"b1\"" },
      "\(ranges.map(\.headers))")
    #expect(Set(ranges.map { $0.headers["range"]! }).count == ranges.count, "every range asked once")
    // Five pieces of 1 MiB or so after it, taken in file order: three begin
    // together beside the first, and the two after them at about the same
    // time, each on a connection of its own. The server may see the requests
    // of a group in any order, but not a piece before an earlier group.
    let starts = ranges.dropFirst().map { Int($0.headers["range"]!.dropFirst(6).split(separator: "-")[0])! }
    let groups = [Array(starts.prefix(3)).sorted(), Array(starts.dropFirst(3)).sorted()]
    #expect(groups == [[1, 2, 3].map { $0 << 20 }, [4, 5].map { $0 << 20 }], "\(ranges.map(\.headers))")
    #expect(took < 3.5, "4 connections at 1.5 MB/s each: \(took) s")
    #expect(!partialExists("big.bin"))
  }

  /// An entry that asks for ranges asks first for a bounded first piece,
  /// then for the pieces after it: every byte is asked for once, and no
  /// request is cut short while it runs (SPEC §9.1).
  @Test func aFirstPieceThenRangesAndNothingIsFetchedTwice() throws {
    let big = testBytes(24 << 20, seed: 9)
    server.put("big", big)
    server.routes(["/big.bin": ["file": "big", "etag": "\"b9\"", "trickle_bps": 8_000_000]])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 2, sha256: \(sha256Hex(big))}"])
    let r = try apply()
    #expect(r.run.status == 0 && out("big.bin") == big, "\(r.run.stdout)\(r.run.stderr)")
    let mib = 1 << 20
    let piece = 6 * mib
    let asked = rangeRequests().map { $0.headers["range"]! }
    let after = [1, 7, 13].map { "bytes=\($0 * mib)-\($0 * mib + piece - 1)" } + ["bytes=\(19 * mib)-\(24 * mib - 1)"]
    #expect(asked.first == "bytes=0-1048575" && asked.dropFirst().sorted() == after.sorted(), "\(asked)")
    #expect(r.int("m/big", "bytes_transferred") == big.count, "every byte once")
    #expect(r.int("m/big", "bytes_discarded") == 0)
  }

  @Test func aKillMidwayResumesOnlyTheMissingRanges() throws {
    let big = testBytes(8_000_000, seed: 2)
    server.put("big", big)
    server.routes(["/big.bin": ["file": "big", "etag": "\"b2\"", "trickle_bps": 500_000]])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 4}"])
    try applyKilled(after: 2.0)
    let p = try journalPartial()
    let ranges = p?["ranges"] as? [[Int]] ?? []
    let held = ranges.reduce(0) { $0 + $1[1] - $1[0] }
    #expect(ranges.count >= 2 && held > 2_000_000, "the journal names the ranges held: \(String(describing: p))")
    let plan = try run(["plan", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("resumable"), "\(plan.stdout)")

    server.routes(["/big.bin": ["file": "big", "etag": "\"b2\""]])
    let before = server.requests("/big.bin").count
    let r = try apply()
    #expect(r.run.status == 0 && r.outcome("m/big") == "installed", "\(r.run.stdout)")
    #expect(out("big.bin") == big, "the ranges of two runs make the one file")
    let sent = r.int("m/big", "bytes_transferred") ?? -1
    #expect(sent <= 8_000_000 - held, "only what was missing is asked for: \(sent) sent, \(held) held")
    let again = server.requests("/big.bin").dropFirst(before)
    #expect(
      !again.isEmpty && again.allSatisfy { $0.headers["if-range"] == "\"b2\"" && $0.headers["range"] != nil },
      "\(again.map(\.headers))")
  }

  @Test func aVersionChangedBetweenRunsDiscardsTheRangesHeld() throws {
    let (v1, v2) = (testBytes(8_000_000, seed: 3), testBytes(8_000_000, seed: 4))
    server.put("v1", v1)
    server.put("v2", v2)
    server.routes(["/big.bin": ["file": "v1", "etag": "\"v1\"", "trickle_bps": 1_000_000]])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 4}"])
    try applyKilled(after: 1.5)
    #expect((try journalPartial()?["ranges"] as? [[Int]])?.isEmpty == false)

    server.routes(["/big.bin": ["file": "v2", "etag": "\"v2\""]])
    let r = try apply()
    #expect(r.run.status == 0 && r.outcome("m/big") == "installed", "\(r.run.stdout)")
    #expect(out("big.bin") == v2, "never a mix of two versions")
    let warnings = (r.tasks["m/big"]?["warnings"] as? [String] ?? []).joined()
    #expect(warnings.contains("version changed"), "\(warnings)")
  }

  @Test func aServerThatIgnoresRangeIsFetchedAsOneStream() throws {
    let big = testBytes(4_000_000, seed: 5)
    server.put("big", big)
    server.routes(["/big.bin": ["file": "big", "etag": "\"i\"", "ignore_range": true, "trickle_bps": 4_000_000]])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 4}"])
    let r = try apply()
    #expect(r.run.status == 0 && out("big.bin") == big, "\(r.run.stdout)")
    #expect(r.tasks["m/big"]?["segments"] == nil)
    let warnings = (r.tasks["m/big"]?["warnings"] as? [String] ?? []).joined()
    #expect(warnings.contains("fetched as one stream"), "\(warnings)")
  }

  /// A file handed over to ranges whose first range is answered with the
  /// whole file of another version (nginx's `proxy_cache_use_stale updating`
  /// answers so while it refreshes): those bytes are never installed under
  /// the validators of the version the ranges asked for. Before, the node
  /// installed the previous version recorded as the new one, and every
  /// later run was answered 304.
  @Test func aRangeAnsweredWithAnotherVersionWholeIsNeverInstalledAsThisOne() throws {
    let v1 = testBytes(64 << 20, seed: 31)
    let v0 = testBytes(64 << 20, seed: 30)
    server.put("big", v1)
    server.put("old", v0)
    let fresh: [String: Any] = ["file": "big", "etag": "\"v1\""]
    server.routes(["/big.bin": fresh.merging(["range_answer": ["file": "old", "etag": "\"v0\""]]) { a, _ in a }])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin}"])
    let first = try apply()
    let (old, new) = (out("big.bin") == v0, out("big.bin") == v1)  // not the arrays: a failure would print them
    #expect(!old, "the previous version was installed as the new one")
    #expect(first.outcome("m/big") != "installed" || new, "\(first.run.stdout)")
    #expect(first.run.stdout.contains("another version"), "\(first.run.stdout)\(first.run.stderr)")

    // Three starts over met the same answer: the task failed, nothing installed.
    server.routes(["/big.bin": fresh])
    let second = try apply(["--force"])  // past the backoff of the failed run
    #expect(second.run.status == 0, "\(second.run.stdout)\(second.run.stderr)")
    let installed = out("big.bin") == v1
    #expect(installed, "the next run installs the version the server has: \(second.run.stdout)")
  }

  @Test func withoutAStrongValidatorOneStreamAndTheReason() throws {
    let big = testBytes(4_000_000, seed: 6)
    server.put("big", big)
    server.routes(["/big.bin": ["file": "big"]])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 4}"])
    let r = try apply()
    #expect(r.run.status == 0 && out("big.bin") == big)
    // The first piece shows there is no version to keep ranges of: the whole file, once.
    #expect(rangeRequests().map { $0.headers["range"] } == ["bytes=0-1048575"])
    #expect(server.requests("/big.bin").count == 2)
    let warnings = (r.tasks["m/big"]?["warnings"] as? [String] ?? []).joined()
    #expect(warnings.contains("no strong validator"), "\(warnings)")
  }

  @Test func aRangeCutShortIsAskedForAgainWithinTheRun() throws {
    let big = testBytes(6_000_000, seed: 7)
    server.put("big", big)
    // Every response is cut after 1 MB on its first two requests: the lead and one range.
    server.routes([
      "/big.bin": ["file": "big", "etag": "\"d\"", "drop_after": 1_000_000, "drop_times": 2, "trickle_bps": 3_000_000]
    ])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 3, sha256: \(sha256Hex(big))}"])
    let r = try apply()
    #expect(r.run.status == 0 && out("big.bin") == big, "\(r.run.stdout)\(r.run.stderr)")
    #expect(
      r.int("m/big", "attempts") == 1 && r.int("m/big", "segments") == 3,
      "retried as ranges, not as a task: \(r.run.stdout) \(r.run.stderr)")
    #expect(r.int("m/big", "bytes_transferred") == 6_000_000, "what the cut ranges wrote is kept")
  }

  @Test func mirrorsThatAgreeServeRangesOfOneFile() throws {
    let mirror = try FaultServer()
    let big = testBytes(8_000_000, seed: 9)
    for s in [server, mirror] {
      s.put("big", big)
      s.routes(["/big.bin": ["file": "big", "etag": "\"same\"", "trickle_bps": 2_000_000]])
    }
    manifest([
      "{id: big, url: '\(server.base)/big.bin', mirrors: ['\(mirror.base)/big.bin'], destination: big.bin, segments: 4, sha256: \(sha256Hex(big))}"
    ])
    let r = try apply()
    #expect(r.run.status == 0 && out("big.bin") == big, "\(r.run.stdout)")
    let fromMirror = mirror.requests("/big.bin").filter { $0.headers["if-range"] == "\"same\"" }
    #expect(!fromMirror.isEmpty, "the mirror served ranges too")
    #expect(r.tasks["m/big"]?["warnings"] == nil)
  }

  @Test func aMirrorWithAnotherVersionTakesNoRanges() throws {
    let mirror = try FaultServer()
    let big = testBytes(8_000_000, seed: 10)
    server.put("big", big)
    server.routes(["/big.bin": ["file": "big", "etag": "\"one\"", "trickle_bps": 2_000_000]])
    mirror.put("big", testBytes(8_000_000, seed: 11))
    mirror.routes(["/big.bin": ["file": "big", "etag": "\"other\""]])
    manifest([
      "{id: big, url: '\(server.base)/big.bin', mirrors: ['\(mirror.base)/big.bin'], destination: big.bin, segments: 4}"
    ])
    let r = try apply()
    #expect(r.run.status == 0 && out("big.bin") == big, "never a byte of the mirror's version: \(r.run.stdout)")
    let warnings = (r.tasks["m/big"]?["warnings"] as? [String] ?? []).joined()
    #expect(warnings.contains("mirror \(mirror.base)/big.bin answered HTTP 200 for another version"), "\(warnings)")
    #expect(mirror.requests("/big.bin").count == 1, "one range asked of it, then no more")
  }

  @Test func limitsSegmentsCapsTheRangesInFlight() throws {
    let big = testBytes(4_000_000, seed: 8)
    server.put("big", big)
    server.routes(["/big.bin": ["file": "big", "etag": "\"c\""]])
    manifest(
      ["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 8}"], extra: "limits: {segments: 1}")
    let r = try apply()
    #expect(r.run.status == 0 && out("big.bin") == big)
    #expect(rangeRequests().isEmpty, "a cap of 1 is one stream")
  }
  /// `segments: 8` gets eight connections, whatever `per_host` (default 6)
  /// says: a file's ranges are its own (SPEC §9.1). Below `limits.segments`,
  /// validate and plan say why it gets fewer.
  @Test func segmentsAskedAreConnectionsBeyondPerHost() throws {
    let big = testBytes(16 << 20, seed: 12)
    server.put("big", big)
    // 1 MB/s a connection: the first piece (1 MiB) still runs when the seven after it start.
    server.routes(["/big.bin": ["file": "big", "etag": "\"d\"", "trickle_bps": 1_000_000]])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 8}"])
    let r = try apply()
    #expect(r.run.status == 0 && out("big.bin") == big, "\(r.run.stderr)")
    let most = rangeRequests().map(\.inFlight).max() ?? 0
    #expect(most == 8, "ranges at once: \(most)")

    manifest(
      ["{id: big, url: '\(server.base)/big.bin', destination: big.bin, segments: 8}"], extra: "limits: {segments: 3}")
    let v = try run(["validate", "m.yaml"], cwd: dir)
    #expect(v.stderr.contains("segments: 8 asks for more ranges than limits.segments (3)"), "\(v.stderr)")
    try FileManager.default.removeItem(atPath: dir + "/out/big.bin")
    let plan = try run(["plan", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("limits.segments caps it at 3"), "\(plan.stdout)")
  }
}

/// The arithmetic of ranges, without a server.
@Suite struct ByteRangesTests {
  @Test func insertMergesTouchingAndOverlappingRanges() {
    var r = ByteRanges([10..<20, 0..<5])
    r.insert(5..<10)
    #expect(r.ranges == [0..<20])
    r.insert(30..<40)
    r.insert(35..<50)
    #expect(r.ranges == [0..<20, 30..<50] && r.count == 40 && r.prefix == 20)
    #expect(r.missing(total: 60) == [20..<30, 50..<60])
    #expect(ByteRanges([5..<9]).prefix == 0 && ByteRanges().missing(total: 3) == [0..<3])
    #expect(ByteRanges([0..<60]).covers(total: 60))
  }

  /// Issue 15, W3: a file is asked for in pieces the connections take in
  /// turn, so its bytes complete from the start on and the hashing keeps up.
  @Test func piecesCutTheGapsInOrderAndGiveEachConnectionTwoAtLeast() {
    let mib: Int64 = 1 << 20
    #expect(ByteRanges.pieceSize(total: 1024 * mib, ranges: 4, minimum: mib) == 16 * mib)
    #expect(ByteRanges.pieceSize(total: 64 * mib, ranges: 4, minimum: mib) == 8 * mib)
    #expect(ByteRanges.pieceSize(total: 3 * mib, ranges: 8, minimum: mib) == mib, "never below the minimum")
    #expect(ByteRanges.pieceSize(total: 6_000_000, ranges: 2, minimum: mib) == 1_441_792, "on a 64 KiB boundary")
    let pieces = ByteRanges.pieces([0..<(40 * mib), (50 * mib)..<(53 * mib), (60 * mib)..<(61 * mib)], size: 16 * mib)
    #expect(
      pieces == [
        0..<(16 * mib), (16 * mib)..<(32 * mib), (32 * mib)..<(40 * mib), (50 * mib)..<(53 * mib),
        (60 * mib)..<(61 * mib),
      ])
    let tail = ByteRanges.pieces([0..<(39 * mib)], size: 16 * mib)
    #expect(tail == [0..<(16 * mib), (16 * mib)..<(39 * mib)], "a rest under half a piece joins the last piece")
  }

  @Test func theJournalKeepsRangesAndABrokenListHoldsNothing() throws {
    var s = TaskState(id: "m/a")
    var p = TaskState.Partial(path: "/x", offset: 30, totalBytes: 100, etag: "\"e\"")
    p.ranges = ByteRanges([0..<10, 50..<70])
    s.partial = p
    let back = TaskState(json: try JSONValue.parse(s.json.serialized()))
    #expect(back?.partial?.ranges == p.ranges)
    let broken = TaskState(
      json: try JSONValue.parse(#"{"t":"task","id":"m/a","partial":{"path":"/x","offset":5,"ranges":[[9,2]]}}"#))
    #expect(broken?.partial?.ranges == ByteRanges(), "still segmented, holding nothing")
  }
}
