import Foundation
import Testing

/// `rate: SIZE` caps one file under the session's cap (SPEC §10.4): the
/// capped file takes its time while a large file beside it on the same
/// host is not held back, and the ranges of a segmented file share the cap.
@Suite final class FileRateTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// When the file at `name` was installed, in seconds after `start`.
  func installedAfter(_ start: Date, _ name: String) throws -> Double {
    let a = try FileManager.default.attributesOfItem(atPath: dir + "/out/" + name)
    return try #require(a[.modificationDate] as? Date).timeIntervalSince(start)
  }

  @Test func oneFileIsCappedAndTheOthersAreNot() throws {
    let slow = testBytes(1_500_000, seed: 71)
    let seg = testBytes(3_000_000, seed: 72)
    let fast = testBytes(16_000_000, seed: 73)
    var routes: [String: [String: Any]] = [:]
    for (name, bytes) in [("slow", slow), ("seg", seg), ("fast", fast)] {
      server.put(name, bytes)
      routes["/\(name).bin"] = ["file": name, "etag": "\"\(name)1\""]
    }
    server.routes(routes)
    manifest(
      [
        "{id: slow, url: '\(server.base)/slow.bin', destination: slow.bin, rate: 500K, sha256: \(sha256Hex(slow))}",
        "{id: seg, url: '\(server.base)/seg.bin', destination: seg.bin, segments: 4, rate: 1M, sha256: \(sha256Hex(seg))}",
        "{id: fast, url: '\(server.base)/fast.bin', destination: fast.bin, sha256: \(sha256Hex(fast))}",
      ], extra: "defaults: {max_bytes: 64MiB}")
    let start = Date()
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stdout)\(r.run.stderr)")
    #expect(out("slow.bin") == slow && out("seg.bin") == seg && out("fast.bin") == fast)
    #expect((r.int("m/seg", "segments") ?? 0) > 1, "fetched in ranges: \(r.run.stdout)")
    // 1.5 MB at 500 KiB/s is about 2.9 s; 3 MB at 1 MiB/s about 2.9 s, its
    // ranges together. Uncapped, each takes a fraction of a second here.
    let (s, g, f) = (
      try installedAfter(start, "slow.bin"), try installedAfter(start, "seg.bin"), try installedAfter(start, "fast.bin")
    )
    #expect(s >= 2.4, "slow.bin was installed after \(s) s")
    #expect(g >= 2.4, "seg.bin was installed after \(g) s: its ranges together kept under the cap")
    #expect(f < 2.0, "fast.bin was held back: installed after \(f) s")
  }

  @Test func aRateIsCheckedWhereItIsWritten() throws {
    manifest(
      ["{id: a, url: 'https://example.org/a', destination: a, max_bytes: 1M, rate: 0}"],
      extra: "defaults: {rate: fast}")
    let v = try run(["validate", "m.yaml"], cwd: dir)
    #expect(v.status == 2)
    #expect(v.stderr.contains("m.yaml:5:18: error: defaults.rate: malformed size 'fast'"), "\(v.stderr)")
    #expect(v.stderr.contains("m.yaml:7:80: error: rate must be more than 0 bytes per second"), "\(v.stderr)")
  }

  @Test func aRateInDefaultsCapsEveryFile() throws {
    let bytes = testBytes(1_000_000, seed: 74)
    server.put("d", bytes)
    server.routes(["/d.bin": ["file": "d", "etag": "\"d1\""]])
    manifest(
      ["{id: d, url: '\(server.base)/d.bin', destination: d.bin, max_bytes: 2M}"], extra: "defaults: {rate: 400K}")
    let start = Date()
    let r = try apply()
    #expect(r.run.status == 0 && out("d.bin") == bytes, "\(r.run.stderr)")
    let took = try installedAfter(start, "d.bin")
    #expect(took >= 1.8, "1 MB at 400 KiB/s took \(took) s")
  }

  /// A file held to its own `rate` waits in libcurl's timer, not in a loop:
  /// its CPU time stays a small part of the wall time (SPEC §10.3).
  @Test func aFileHeldToItsRateWaitsWithoutCPU() throws {
    let bytes = testBytes(3_000_000, seed: 75)
    server.put("w", bytes)
    server.routes(["/w.bin": ["file": "w", "etag": "\"w1\""]])
    manifest(["{id: w, url: '\(server.base)/w.bin', destination: w.bin, max_bytes: 4M, rate: 1M}"])
    let timed = try run(
      ["-f", "cpu %U %S wall %e", try syncfilesBinary(), "apply", "m.yaml"], cwd: dir, tool: "/usr/bin/time")
    #expect(timed.status == 0, "\(timed.stderr)")
    #expect(out("w.bin") == bytes)
    let line = timed.stderr.split(separator: "\n").last { $0.hasPrefix("cpu ") } ?? ""
    let f = line.split(separator: " ").compactMap { Double($0) }
    try #require(f.count == 3, "time said: \(timed.stderr)")
    let (cpu, wall) = (f[0] + f[1], f[2])
    #expect(wall >= 2.0, "the cap held: \(wall) s")
    #expect(cpu < 0.25 * wall, "CPU \(cpu) s over \(wall) s of wall time")
  }
}
