import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// What the manifest says is what is on disk (SPEC §8.2): symlinks are
/// replaced and never adopted, and `mode` holds on every apply.
@Suite final class OnDiskTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func mode(_ name: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: dir + "/out/" + name))?[.posixPermissions] as? Int
  }

  /// Before: the planner stat'ed through the link, revalidated against the
  /// outside file's date, got a 304 and left the link in place.
  @Test func aSymlinkAtTheDestinationIsReplacedNeverAdopted() throws {
    let a = testBytes(4_000, seed: 1)
    server.put("a.bin", a)
    let lm = "Sat, 21 Nov 2026 10:00:00 GMT"
    server.routes(["/a.bin": ["file": "a.bin", "last_modified": lm]])
    let outside = dir + "/elsewhere/precious.bin"
    try FileManager.default.createDirectory(atPath: dir + "/elsewhere", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
    let precious = testBytes(1_000, seed: 2)
    write(precious, to: outside)
    // The outside file's date is the server's Last-Modified: following the link would mean a 304.
    var times = [timespec(tv_sec: 1_795_255_200, tv_nsec: 0), timespec(tv_sec: 1_795_255_200, tv_nsec: 0)]
    utimensat(AT_FDCWD, outside, &times, 0)
    try FileManager.default.createSymbolicLink(atPath: dir + "/out/evil.bin", withDestinationPath: outside)
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: evil.bin}"])

    let plan = try run(["plan", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("symlink"), "\(plan.stdout)")
    let r = try apply()
    #expect(r.run.status == 0 && r.outcome("m/a") == "installed", "\(r.run.stdout)")
    let link = try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/out/evil.bin")
    #expect(link == nil, "the symlink is gone")
    #expect(out("evil.bin") == a)
    #expect(readBytes(outside) == precious, "the outside file is untouched")
  }

  /// Found by the kill soak: a partial a kill left unjournaled stayed beside
  /// an up-to-date destination for good. Now a 304 removes it.
  @Test func aLeftoverPartialBesideAnUpToDateFileIsRemoved() throws {
    let a = testBytes(4_000, seed: 9)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\""]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"])
    #expect(try apply().outcome("m/a") == "installed")
    write(testBytes(1_500, seed: 10), to: dir + "/out/.a.bin.syncfiles-partial")
    let r = try apply()
    #expect(r.outcome("m/a") == "unchanged" && server.requests().last?.headers["if-none-match"] == "\"v1\"")
    #expect(!partialExists("a.bin"), "the leftover is gone")
    #expect(out("a.bin") == a)
  }

  /// Before: a changed `mode`, and a file chmod'ed by hand, were both kept.
  @Test func modeHoldsOnEveryApplyWithoutATransfer() throws {
    let a = testBytes(4_000, seed: 3)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\"", "last_modified": "Sat, 21 Nov 2026 10:00:00 GMT"]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, mode: '0640'}"])
    #expect(try apply().outcome("m/a") == "installed")
    #expect(mode("a.bin") == 0o640)

    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, mode: '0600'}"])
    let plan = try run(["plan", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("mode 0640 will be set to 0600"), "\(plan.stdout)")
    let changed = try apply()
    #expect(changed.outcome("m/a") == "unchanged" && changed.int("m/a", "bytes_transferred") == 0)
    #expect(mode("a.bin") == 0o600)

    chmod(dir + "/out/a.bin", 0o666)  // drift by hand
    // Also when the file is not due: the mode is corrected, nothing is fetched.
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, mode: '0600', schedule: every 1d}"])
    let before = server.requests("/a.bin").count
    let drifted = try apply()
    #expect(drifted.run.status == 0)
    #expect(mode("a.bin") == 0o600)
    #expect(server.requests("/a.bin").count == before, "no request for a mode")
    #expect(out("a.bin") == a)
  }

  @Test func setuidSetgidAndStickyBitsAreErrorsAtTheModeLine() throws {
    for bits in ["4755", "2755", "1777", "0o4755"] {
      manifest(["{id: a, url: 'https://example.org/a', destination: a.bin, mode: '\(bits)'}"])
      let r = try run(["validate", "m.yaml"], cwd: dir)
      #expect(r.status == 2 && r.stderr.contains("setuid, setgid or sticky"), "\(bits): \(r.stderr)")
    }
  }

  /// The digest is of the bytes on disk: past a body's first 256 KiB the
  /// hashing reads them back from the partial. A partial cut behind the
  /// transfer's back (here truncated to nothing at 1 MB) cannot give a
  /// digest, so the file is fetched again, never installed as what is left.
  /// Before, the bytes were hashed as received, and the 2 MB appended after
  /// the cut were installed as the file.
  @Test func aPartialCutBehindTheTransfersBackIsFetchedAgainNeverInstalled() throws {
    let body = testBytes(3_000_000, seed: 7)
    server.put("t.bin", body)
    server.routes(["/t.bin": ["file": "t.bin", "etag": "\"t1\"", "trickle_bps": 1_000_000]])
    manifest(["{id: t, url: '\(server.base)/t.bin', destination: t.bin}"])
    let partial = dir + "/out/.t.bin.syncfiles-partial"
    let cutter = Thread {
      var st = stat()
      for _ in 0..<1000 {
        if stat(partial, &st) == 0 && st.st_size >= 1_000_000 {
          truncate(partial, 0)
          return
        }
        usleep(10_000)
      }
    }
    cutter.start()
    let r = try apply()
    let warnings = (r.tasks["m/t"]?["warnings"] as? [String] ?? []).joined()
    #expect(warnings.contains("could not be read back to hash it"), "\(warnings) \(r.run.stderr)")
    #expect(r.run.status == 0 && r.outcome("m/t") == "installed", "\(r.run.stdout)")
    #expect(out("t.bin") == body, "the file as the server has it")
    #expect(r.string("m/t", "sha256") == sha256Hex(body))
    #expect(server.requests("/t.bin").count == 2, "fetched again after the cut")
  }
}

/// `status` after a kill -9 shows the partial data actually held (SPEC §8.2);
/// it said 0 B while `plan` knew of megabytes.
@Suite struct StatusAfterKillTests {
  /// Starts an apply of `body` served at `bps`, kills it with SIGKILL once
  /// its partial holds `least` bytes, and checks what `status` says then.
  /// Returns the folder and the bytes the partial held.
  func killedWhenThePartialHolds(_ least: Int, of body: [UInt8], bps: Int, server: FaultServer) throws -> (
    String, Int
  ) {
    let dir = makeTempDir()
    server.put("big.bin", body)
    server.routes(["/big.bin": ["file": "big.bin", "etag": "\"v1\"", "trickle_bps": bps]])
    write(
      "version: 1\nname: s\nroot: out\njournal: state/journal\nfiles:\n  - {id: big, url: '\(server.base)/big.bin', destination: big.bin}\n",
      to: dir + "/s.yaml")
    let p = try startInBackground(["apply", "--quiet", "s.yaml"], cwd: dir)
    let partial = dir + "/out/.big.bin.syncfiles-partial"
    let start = Date()
    var held = 0
    while held < least && Date().timeIntervalSince(start) < 10 {
      Thread.sleep(forTimeInterval: 0.05)
      held = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0
    }
    kill(p.processIdentifier, SIGKILL)
    p.waitUntilExit()
    held = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0
    #expect(held >= least)
    let status = try run(["status", "--format", "json", "s.yaml"], cwd: dir)
    let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
    let task = (json?["tasks"] as? [[String: Any]])?.first
    let offset = (task?["partial"] as? [String: Any])?["offset"] as? Int
    #expect(offset == held, "status says \(offset ?? -1), the partial holds \(held): \(status.stdout)")
    let text = try run(["status", "s.yaml"], cwd: dir)
    #expect(text.stdout.contains(ByteSize.format(Int64(held))), "\(text.stdout)")
    return (dir, held)
  }

  @Test func statusShowsThePartialBytesHeldAfterAKill() throws {
    let server = try FaultServer()
    let (dir, _) = try killedWhenThePartialHolds(
      600_000, of: testBytes(3_000_000, seed: 5), bps: 1_000_000, server: server)
    try? FileManager.default.removeItem(atPath: dir)
  }

  /// A small body is held in memory while it arrives (issue 15, W7), but not
  /// for long: a slow one is in its partial file and journaled within
  /// `Transfer.holdSeconds`, so a kill -9 keeps it, `status` shows it and
  /// the next apply resumes it.
  @Test func aSlowSmallBodyIsInItsPartialAndJournaledWhenKilled() throws {
    let server = try FaultServer()
    let body = testBytes(200_000, seed: 41)
    let (dir, held) = try killedWhenThePartialHolds(20_000, of: body, bps: 20_000, server: server)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    server.routes(["/big.bin": ["file": "big.bin", "etag": "\"v1\""]])
    let again = try ApplyResult(run(["apply", "--format", "json", "s.yaml"], cwd: dir))
    #expect(again.run.status == 0, "\(again.run.stderr)")
    #expect(again.int("s/big", "resumed_from") == held)
    #expect(readBytes(dir + "/out/big.bin") == body)
  }
}

/// Hooks are owed until they succeed, and `changed` means different bytes (SPEC §8.2).
@Suite final class HookAndChangeTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func lines(_ name: String) -> [String] {
    ((try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
  }

  /// Before: the reload failed once, the next run got a 304, exited 0, and
  /// the reload never happened.
  @Test func aFailedHookRunsAgainUntilItSucceedsThenNeverForTheSameChange() throws {
    server.put("a.bin", testBytes(2_000, seed: 1))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\"", "last_modified": "Sat, 21 Nov 2026 10:00:00 GMT"]])
    // Fails while the file `broken` exists, and logs every call.
    let script = dir + "/reload.sh"
    write("#!/bin/sh\necho \"$1\" >> \(dir)/calls\n[ -e \(dir)/broken ] && exit 1\nexit 0\n", to: script)
    chmod(script, 0o755)
    write("", to: dir + "/broken")
    manifest(
      ["{id: a, url: '\(server.base)/a.bin', destination: a.bin, on_change: ['\(script)', change]}"],
      extra: "hooks: {on_complete: ['\(script)', complete]}")
    let first = try apply()
    #expect(first.run.status == 1 && first.outcome("m/a") == "installed")
    #expect(lines("calls") == ["change", "complete"])

    let second = try apply()
    #expect(second.outcome("m/a") == "unchanged" && second.int("m/a", "http_status") == 304)
    #expect(second.run.status == 1, "still failing: still reported")
    #expect(lines("calls") == ["change", "complete", "change", "complete"])

    try FileManager.default.removeItem(atPath: dir + "/broken")
    let third = try apply()
    #expect(third.run.status == 0, "\(third.run.stderr)")
    #expect(lines("calls").count == 6, "ran once more, and succeeded")

    let fourth = try apply()
    #expect(fourth.run.status == 0)
    #expect(lines("calls").count == 6, "exactly once after success")
  }

  /// Before: with the journal lost, the same bytes fetched again were
  /// `changed` and fired on_change.
  @Test func identicalBytesAfterALostJournalAreUnchangedAndFireNoHook() throws {
    let a = testBytes(50_000, seed: 2)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin"]])  // no validators at all: every check is a full GET
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, on_change: [touch, '\(dir)/fired']}"])
    #expect(try apply().outcome("m/a") == "installed")
    try FileManager.default.removeItem(atPath: dir + "/fired")
    try FileManager.default.removeItem(atPath: dir + "/state")
    let again = try apply()
    #expect(again.run.status == 0)
    #expect(again.outcome("m/a") == "unchanged", "\(again.run.stdout)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/fired"))
    #expect(out("a.bin") == a)
    // Different bytes are a change.
    server.put("a.bin", testBytes(50_000, seed: 3))
    let changed = try apply()
    #expect(changed.outcome("m/a") == "installed" && (changed.tasks["m/a"]?["changed"] as? Bool) == true)
    #expect(FileManager.default.fileExists(atPath: dir + "/fired"))
  }

  /// A destination edited by hand and restored by apply changed: its bytes
  /// differ from what was there before, so on_change runs (it was
  /// `changed: false`, "same content", and no hook). A touch alone changes
  /// nothing.
  @Test func aFileEditedByHandAndRestoredIsChangedAndFiresTheHook() throws {
    let a = testBytes(20_000, seed: 5)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"e1\""]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, on_change: [touch, '\(dir)/fired']}"])
    #expect(try apply().outcome("m/a") == "installed")
    try FileManager.default.removeItem(atPath: dir + "/fired")
    write(Array("edited by hand\n".utf8), to: dir + "/out/a.bin")
    let restored = try apply()
    #expect(restored.outcome("m/a") == "installed" && out("a.bin") == a, "\(restored.run.stdout)")
    #expect((restored.tasks["m/a"]?["changed"] as? Bool) == true, "\(restored.run.stdout)")
    #expect(FileManager.default.fileExists(atPath: dir + "/fired"), "on_change ran")

    try FileManager.default.removeItem(atPath: dir + "/fired")
    var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
    utimensat(AT_FDCWD, dir + "/out/a.bin", &times, 0)
    let touched = try apply()
    #expect(touched.outcome("m/a") == "unchanged", "\(touched.run.stdout)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/fired"), "the same bytes: no hook")
  }
}
