import Foundation
import Testing

/// A slow large file and many small ones from one plain-HTTP host (SPEC
/// §9.1): no transfer waits for another while a `per_host` slot is free.
/// HTTP/1.1 cannot multiplex, so waiting for a connection to multiplex on
/// would hold every small file behind the large one.
@Suite final class MixedSizesTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func smallFilesAreRequestedWhileTheLargeOneRuns() throws {
    server.put("big.bin", testBytes(1_500_000, seed: 1))
    server.put("small.bin", testBytes(4_096, seed: 2))
    var routes: [String: [String: Any]] = ["/big.bin": ["file": "big.bin", "trickle_bps": 1_000_000]]
    for k in 0..<12 { routes["/s\(k).bin"] = ["file": "small.bin"] }
    server.routes(routes)
    manifest(
      ["{id: big, url: '\(server.base)/big.bin', destination: big.bin}"]
        + (0..<12).map { "{id: s\($0), url: '\(server.base)/s\($0).bin', destination: s\($0).bin}" },
      extra: "limits: {parallel: 8, per_host: 6}")
    let r = try apply(["-v"])
    #expect(r.run.status == 0, "\(r.run.stderr)")
    // -v says how per_host counted on this host, once.
    let said = r.run.stderr.split(separator: "\n").filter { $0.contains("per_host (6) counts connections") }
    #expect(said.count == 1, "\(said)")
    #expect(r.count("installed") == 13, "\(r.run.stdout)")
    // Each small request that came after the large one's found it still being served.
    let seen = server.requests()
    let bigAt = seen.firstIndex { $0.path == "/big.bin" } ?? 0
    let small = seen.filter { $0.path.hasPrefix("/s") }
    #expect(small.count == 12)
    let after = seen[bigAt...].filter { $0.path.hasPrefix("/s") }.map(\.inFlight)
    #expect(after.allSatisfy { $0 >= 2 }, "small files waited: \(after)")
  }

  /// A deadline shorter than the large file still leaves the small ones installed.
  @Test func aDeadlineShorterThanTheLargeFileKeepsTheSmallOnes() throws {
    server.put("big.bin", testBytes(2_000_000, seed: 3))
    server.put("tiny.bin", Array("hello".utf8))
    server.routes([
      "/big.bin": ["file": "big.bin", "etag": "\"b\"", "trickle_bps": 500_000], "/tiny.bin": ["file": "tiny.bin"],
    ])
    manifest(
      [
        "{id: big, url: '\(server.base)/big.bin', destination: big.bin}",
        "{id: tiny, url: '\(server.base)/tiny.bin', destination: tiny.bin}",
      ], extra: "limits: {deadline: 2s, parallel: 8, per_host: 6}")
    let r = try apply()
    #expect(r.run.status == 75, "\(r.run.stderr)")
    #expect(r.outcome("m/tiny") == "installed", "\(r.run.stdout)")
    #expect(out("tiny.bin") == Array("hello".utf8))
    #expect(r.outcome("m/big") == "interrupted")
  }
}
