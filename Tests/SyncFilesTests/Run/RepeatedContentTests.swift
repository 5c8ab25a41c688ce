import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// SPEC §8.3: content already in place is adopted by its sha256, and
/// entries with the same sha256 are fetched once per run.
@Suite final class RepeatedContentTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func status() throws -> [String: [String: Any]] {
    let r = try run(["status", "--format", "json", "m.yaml"], cwd: dir)
    let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
    let tasks = o?["tasks"] as? [[String: Any]] ?? []
    return Dictionary(uniqueKeysWithValues: tasks.map { ($0["id"] as! String, $0) })
  }

  /// Before: a file copied in by hand was downloaded again.
  @Test func aDestinationHoldingItsSha256IsAdoptedWithoutATransfer() throws {
    let a = testBytes(50_000, seed: 1)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\""]])
    try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
    write(a, to: dir + "/out/a.bin")
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, sha256: \(sha256Hex(a))}"])

    let plan = try run(["plan", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("already holds the declared sha256"), "\(plan.stdout)")
    let r = try apply()
    #expect(r.run.status == 0 && r.outcome("m/a") == "unchanged" && r.int("m/a", "bytes_transferred") == 0)
    #expect(server.requests().isEmpty, "no request at all")
    let installed = try status()["m/a"]?["installed"] as? [String: Any]
    #expect(installed?["sha256"] as? String == sha256Hex(a) && installed?["size"] as? Int == 50_000)

    // Recorded: the next apply neither hashes nor asks (no validator to ask with).
    let again = try apply()
    #expect(again.outcome("m/a") == "skipped" && server.requests().isEmpty, "\(again.run.stdout)")
  }

  @Test func aDestinationWithOtherBytesIsNotAdopted() throws {
    let a = testBytes(50_000, seed: 2)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\""]])
    try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
    write(testBytes(50_000, seed: 3), to: dir + "/out/a.bin")
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, sha256: \(sha256Hex(a))}"])
    let r = try apply()
    #expect(r.outcome("m/a") == "installed" && r.int("m/a", "bytes_transferred") == 50_000)
    #expect(out("a.bin") == a)
  }

  /// A file edited by hand back to the declared bytes (new mtime) is adopted again, not fetched.
  @Test func aFileTouchedSinceInstallButStillRightIsAdoptedAgain() throws {
    let a = testBytes(20_000, seed: 4)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\""]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, sha256: \(sha256Hex(a))}"])
    #expect(try apply().outcome("m/a") == "installed")
    let before = server.requests().count
    var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
    utimensat(AT_FDCWD, dir + "/out/a.bin", &times, 0)
    let r = try apply()
    #expect(r.outcome("m/a") == "unchanged" && server.requests().count == before, "\(r.run.stdout)")
  }
}

/// SPEC §8.3: one fetch per sha256 in a run.
@Suite final class SameContentTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// Before: two entries with the same sha256 were fetched twice.
  @Test func entriesWithOneSha256AreFetchedOnceAndCopied() throws {
    let a = testBytes(300_000, seed: 5)
    server.put("a.bin", a)
    server.routes([
      "/a.bin": ["file": "a.bin", "etag": "\"v1\""], "/mirror/a.bin": ["file": "a.bin", "etag": "\"v1\""],
    ])
    let sum = sha256Hex(a)
    manifest([
      "{id: one, url: '\(server.base)/a.bin', destination: one.bin, sha256: \(sum)}",
      "{id: two, url: '\(server.base)/mirror/a.bin', destination: sub/two.bin, sha256: \(sum), mode: '0600'}",
      "{id: three, url: '\(server.base)/a.bin', destination: three.bin, sha256: \(sum)}",
    ])
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(server.requests().filter { $0.method == "GET" }.count == 1, "one fetch for the three")
    for name in ["one.bin", "sub/two.bin", "three.bin"] { #expect(out(name) == a, "\(name)") }
    #expect(["m/one", "m/two", "m/three"].map { r.outcome($0) } == ["installed", "installed", "installed"])
    #expect(r.int("m/one", "bytes_transferred") == 300_000)
    #expect(r.string("m/two", "copied_from") == "m/one" && r.int("m/two", "bytes_transferred") == 0)
    #expect(["copy", "reflink"].contains(r.string("m/three", "copy_method") ?? ""))
    let perms = try FileManager.default.attributesOfItem(atPath: dir + "/out/sub/two.bin")[.posixPermissions] as? Int
    #expect(perms == 0o600)
    #expect(!partialExists("three.bin"))

    // Recorded: the next run revalidates the leader's URL version, and the copies are up to date.
    let again = try apply()
    #expect(again.run.status == 0 && again.count("installed") == 0, "\(again.run.stdout)")
  }

  @Test func whenTheLeaderFailsTheOthersFetchForThemselves() throws {
    let a = testBytes(10_000, seed: 6)
    server.put("a.bin", a)
    server.routes(["/broken.bin": ["status": 404], "/a.bin": ["file": "a.bin", "etag": "\"v1\""]])
    let sum = sha256Hex(a)
    manifest([
      "{id: one, url: '\(server.base)/broken.bin', destination: one.bin, sha256: \(sum), retry: {attempts: 1}}",
      "{id: two, url: '\(server.base)/a.bin', destination: two.bin, sha256: \(sum)}",
    ])
    let r = try apply()
    #expect(r.run.status == 1 && r.outcome("m/one") == "failed" && r.outcome("m/two") == "installed")
    #expect(r.string("m/two", "copied_from") == nil && out("two.bin") == a)
  }
}
