import Foundation
import Testing

/// SIGKILL at random moments, many times: every destination is always the
/// old complete file, the new complete file, or absent — never partial, never
/// mixed — and a final run converges, having resumed the large files.
/// 150 small and 3 large files; the versions served flip every 10 kills so
/// runs keep working. SYNCFILES_KILLS sets the number of kills (default 50,
/// as in CI); `scripts/kill-soak` runs the long soak (1,000).
@Suite struct CrashTests {
  static var kills: Int { Int(ProcessInfo.processInfo.environment["SYNCFILES_KILLS"] ?? "") ?? 50 }

  @Test func killedAtRandomMomentsEveryDestinationIsOldOrNewAndTheLastRunConverges() throws {
    let server = try FaultServer()
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var v1: [String: [UInt8]] = [:]
    var v2: [String: [UInt8]] = [:]
    var names: [String] = []
    for i in 0..<153 {
      let big = i < 3
      let size = big ? 3_000_000 : 2_000 + i * 300
      let name = "f\(i).bin"
      names.append(name)
      v1[name] = testBytes(size, seed: UInt64(100 + i))
      v2[name] = testBytes(size + (big ? 0 : 7), seed: UInt64(200 + i))
    }
    func serve(_ versions: [String: [UInt8]], tag: String) {
      var routes: [String: [String: Any]] = [:]
      for (name, bytes) in versions {
        server.put("\(tag)-\(name)", bytes)
        var r: [String: Any] = ["file": "\(tag)-\(name)", "etag": "\"\(tag)-\(name)\""]
        if bytes.count > 1_000_000 { r["trickle_bps"] = 400_000 }
        routes["/" + name] = r
      }
      server.routes(routes)
    }
    let files = names.map { "  - {id: \($0), url: '\(server.base)/\($0)', destination: data/\($0)}" }
    write(
      "version: 1\nname: c\nroot: out\njournal: state/journal\nfiles:\n" + files.joined(separator: "\n") + "\n",
      to: dir + "/c.yaml")

    serve(v1, tag: "v1")
    let first = try run(["apply", "c.yaml"], cwd: dir)
    #expect(first.status == 0, "\(first.stderr)")
    serve(v2, tag: "v2")

    var rng = SystemRandomNumberGenerator()
    var landed = 0
    for round in 0..<Self.kills {
      if round > 0 && round % 10 == 0 { round % 20 == 0 ? serve(v2, tag: "v2") : serve(v1, tag: "v1") }
      let p = try startInBackground(["apply", "--quiet", "c.yaml"], cwd: dir)
      Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.9, using: &rng))
      kill(p.processIdentifier, SIGKILL)
      p.waitUntilExit()
      if p.terminationReason == .uncaughtSignal { landed += 1 }
      for name in names {
        let got = readBytes(dir + "/out/data/" + name)
        #expect(
          got == v1[name] || got == v2[name], "round \(round): \(name) is neither version (\(got?.count ?? -1) bytes)")
      }
    }

    print("soak | \(Self.kills) kills, \(landed) landed mid-run, over \(names.count) files")
    #expect(landed > Self.kills / 2, "most kills should land while apply runs")
    serve(v2, tag: "v2")
    let last = try run(["apply", "--format", "json", "c.yaml"], cwd: dir)
    #expect(last.status == 0, "\(last.stderr)")
    for name in names { #expect(readBytes(dir + "/out/data/" + name) == v2[name], "\(name) converged") }
    // The large files were resumed (Range from a non-zero offset), not restarted every time.
    for name in names.prefix(3) {
      let ranged = server.requests("/" + name).compactMap { $0.headers["range"] }
      #expect(!ranged.isEmpty, "\(name) was resumed at least once")
    }
    // Nothing half-written is left behind: no partial files once converged.
    let left = try FileManager.default.contentsOfDirectory(atPath: dir + "/out/data").filter {
      $0.hasSuffix(".syncfiles-partial")
    }
    #expect(left.isEmpty, "\(left)")
  }
}
