import Foundation
import Testing

/// A transfer held to `--rate` waits without burning the CPU: the engine
/// sleeps until the bucket has room instead of resuming paused transfers on
/// every turn (SPEC §10.3).
@Suite final class RateCapTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func aCappedTransferWaitsWithoutBusyPolling() throws {
    let bytes = testBytes(3_000_000, seed: 64)
    server.put("big.bin", bytes)
    server.routes(["/big.bin": ["file": "big.bin", "etag": "\"1\""]])
    manifest(["{id: big, url: '\(server.base)/big.bin', destination: big.bin}"])
    // /usr/bin/time reports the child's own CPU time, whatever else the test process runs.
    let timed = try run(
      ["-f", "cpu %U %S wall %e", try syncfilesBinary(), "apply", "--rate", "1M", "m.yaml"], cwd: dir,
      tool: "/usr/bin/time")
    #expect(timed.status == 0, "\(timed.stderr)")
    #expect(out("big.bin") == bytes)
    let line = timed.stderr.split(separator: "\n").last { $0.hasPrefix("cpu ") } ?? ""
    let f = line.split(separator: " ").compactMap { Double($0) }
    try #require(f.count == 3, "time said: \(timed.stderr)")
    let (cpu, wall) = (f[0] + f[1], f[2])
    // 3 MB at 1 MiB/s: about 3 s of waiting. Before the fix the engine spun
    // through the wait (CPU time close to the wall time).
    #expect(wall >= 2.0, "the cap held: \(wall) s")
    #expect(cpu < 0.25 * wall, "CPU \(cpu) s over \(wall) s of wall time")
  }
}
