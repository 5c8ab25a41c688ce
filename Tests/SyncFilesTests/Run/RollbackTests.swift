import Foundation
import Testing

@testable import SyncFiles

/// `keep_versions` and `syncfiles rollback` (SPEC §10.4): four versions
/// with two kept, rollback and its hook, the hold that even --force keeps,
/// a second rollback, release, and the errors.
@Suite final class RollbackTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()
  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  let versions = (1...4).map { testBytes(3000 + $0, seed: UInt64(200 + $0)) }

  func publish(_ v: Int) {
    server.put("f", versions[v - 1])
    server.routes(["/f.bin": ["file": "f", "etag": "\"v\(v)\""]])
  }

  func hooks() -> Int {
    ((try? String(contentsOfFile: dir + "/hooks.log", encoding: .utf8)) ?? "").split(separator: "\n").count
  }

  func status() throws -> [String: Any] {
    let r = try run(["status", "--format", "json", "m.yaml"], cwd: dir)
    let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
    return ((o?["tasks"] as? [[String: Any]]) ?? []).first ?? [:]
  }

  @Test func fourVersionsTwoKeptRollbackHoldAndRelease() throws {
    manifest([
      "{id: f, url: '\(server.base)/f.bin', destination: data/f.bin, max_bytes: 1M, keep_versions: 2, on_change: ['/bin/sh', '-c', 'echo $SYNCFILES_DESTINATION >> \(dir)/hooks.log']}"
    ])
    for v in 1...4 {
      publish(v)
      let r = try apply(["--force"])
      #expect(r.outcome("m/f") == "installed", "v\(v): \(r.run.stderr)")
    }
    #expect(out("data/f.bin") == versions[3])
    let kept = try status()["versions"] as? [[String: Any]] ?? []
    #expect(kept.map { $0["size"] as? Int } == [3003, 3002], "v3 and v2 kept, v1 pruned: \(kept)")
    let folder = dir + "/out/data/.syncfiles-versions/f.bin"
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == 2)
    #expect(hooks() == 4)

    let back = try run(["rollback", "m/f", "m.yaml"], cwd: dir)
    #expect(back.status == 0, "\(back.stderr)")
    #expect(back.stderr.contains("rolled back m/f to the version replaced at"), "\(back.stderr)")
    #expect(out("data/f.bin") == versions[2], "v3 is back")
    #expect(hooks() == 5, "on_change ran")
    let held = try status()
    #expect(held["rolled_back"] is String && (held["versions"] as? [Any])?.count == 2, "\(held)")

    // Held: apply --force leaves it alone, and plan says so.
    let forced = try apply(["--force"])
    #expect(forced.run.status == 0 && out("data/f.bin") == versions[2], "\(forced.run.stdout)")
    #expect(server.requests("/f.bin").count == 4, "no request for a held task")
    let plan = try run(["plan", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("rolled back at"), "\(plan.stdout)")

    // The newest kept version now is v4 (the file the rollback replaced), then v2.
    let further = try run(["rollback", "--to", "2", "m/f", "m.yaml"], cwd: dir)
    #expect(further.status == 0 && out("data/f.bin") == versions[1], "\(further.stderr)")

    let released = try run(["rollback", "--release", "m/f", "m.yaml"], cwd: dir)
    #expect(released.status == 0, "\(released.stderr)")
    let after = try apply()
    #expect(after.outcome("m/f") == "installed" && out("data/f.bin") == versions[3], "\(after.run.stderr)")
    #expect(try status()["rolled_back"] is NSNull)
  }

  @Test func withNoVersionKeptRollbackIsAnError() throws {
    publish(1)
    manifest(["{id: f, url: '\(server.base)/f.bin', destination: f.bin, max_bytes: 1M}"])
    _ = try apply()
    let r = try run(["rollback", "m/f", "m.yaml"], cwd: dir)
    #expect(r.status == 1)
    #expect(r.stderr.contains("no version of m/f is kept (keep_versions: 0)"), "\(r.stderr)")
    let release = try run(["rollback", "--release", "m/f", "m.yaml"], cwd: dir)
    #expect(release.status == 1 && release.stderr.contains("m/f is not rolled back"))
    let unknown = try run(["rollback", "m/g", "m.yaml"], cwd: dir)
    #expect(unknown.status == 2 && unknown.stderr.contains("no task m/g in these manifests"))
  }

  /// A kept version is never a destination, nor an object of a prefix.
  @Test func theVersionsFolderIsNoOnesDestination() {
    #expect(PrefixExpansion.unusable("models/.syncfiles-versions/x") != nil)
    let (_, d) = decode(entry("keep_versions: 2").replacingOccurrences(of: "a.bin", with: ".syncfiles-versions/a.bin"))
    #expect(errors(d).contains { $0.message.contains("lies in .syncfiles-versions") }, "\(d)")
    let (_, big) = decode(entry("keep_versions: 101"))
    #expect(!errors(big).isEmpty)
  }
}
