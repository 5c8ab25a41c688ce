import Foundation
import Testing

/// nginx (the Debian package, `NginxServer`): downloads, 304 revalidation
/// with its ETags, a resume with Range + If-Range after a deadline, a changed file.
@Suite struct NginxConformanceTests {
  @Test func downloadRevalidateResumeAndChangeAgainstNginx() throws {
    let nginx = try NginxServer()
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let a = testBytes(5_000_000, seed: 31)
    let b = testBytes(10_000, seed: 32)
    let big = testBytes(12_000_000, seed: 33)
    nginx.put("a.bin", a, mtime: timeFromNow(-3600))
    nginx.put("sub/b.txt", b, mtime: timeFromNow(-3600))
    nginx.put("big.bin", big, mtime: timeFromNow(-3600))
    let base = nginx.base
    func manifest(_ ids: [String]) {
      var files = [
        "  - {id: a, url: '\(base)/a.bin', destination: a.bin, sha256: \(sha256Hex(a))}",
        "  - {id: b, url: '\(base)/sub/b.txt', destination: x/y/b.txt}",
      ]
      if ids.contains("big") { files.append("  - {id: big, url: '\(base)/big.bin', destination: big.bin}") }
      write(
        "version: 1\nname: n\nroot: out\njournal: state/journal\nfiles:\n" + files.joined(separator: "\n") + "\n",
        to: dir + "/n.yaml")
    }
    func apply(_ args: [String] = []) throws -> ApplyResult {
      try ApplyResult(run(["apply", "--format", "json"] + args + ["n.yaml"], cwd: dir))
    }
    manifest([])
    let first = try apply()
    #expect(first.run.status == 0, "\(first.run.stderr) \(nginx.errorLog)")
    #expect(readBytes(dir + "/out/a.bin") == a)
    #expect(readBytes(dir + "/out/x/y/b.txt") == b)

    let second = try apply()
    #expect(second.run.status == 0)
    #expect(second.outcome("n/a") == "unchanged" && second.outcome("n/b") == "unchanged")
    #expect(second.int("n/a", "http_status") == 304)

    // A large file cut short by the deadline, then resumed with Range + If-Range (nginx answers 206).
    manifest(["big"])
    let cut = try apply(["--rate", "4MB/s", "--deadline", "1s"])
    #expect(cut.run.status == 75, "\(cut.run.stderr)")
    #expect(cut.outcome("n/big") == "interrupted")
    let resumed = try apply()
    #expect(resumed.run.status == 0, "\(resumed.run.stderr)")
    #expect((resumed.int("n/big", "resumed_from") ?? 0) > 0)
    #expect(resumed.int("n/big", "http_status") == 206)
    #expect((resumed.int("n/big", "bytes_transferred") ?? 0) < big.count)
    #expect(readBytes(dir + "/out/big.bin") == big)

    // A changed file on the server is fetched again; the unchanged ones are not.
    let b2 = testBytes(11_000, seed: 34)
    nginx.put("sub/b.txt", b2, mtime: timeFromNow(-60))  // a new Last-Modified, so a new ETag
    let changed = try apply()
    #expect(changed.run.status == 0)
    #expect(changed.outcome("n/b") == "installed")
    #expect(changed.outcome("n/a") == "unchanged")
    #expect(readBytes(dir + "/out/x/y/b.txt") == b2)
  }
}

/// SPEC §8.3 against nginx capping each connection (`limit_rate`, as CDNs
/// do): eight ranges at once, each on a connection of its own.
@Suite struct NginxSegmentTests {
  @Test func rangesOutrunNginxsLimitRatePerConnection() throws {
    let nginx = try NginxServer(limitRate: "4m")
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let big = testBytes(24_000_000, seed: 41)
    nginx.put("big.bin", big, mtime: timeFromNow(-3600))
    write(
      """
      version: 1
      name: n
      root: out
      journal: state/journal
      limits: {per_host: 8}
      files:
        - {id: big, url: '\(nginx.base)/big.bin', destination: big.bin, segments: 8, sha256: \(sha256Hex(big))}

      """, to: dir + "/n.yaml")
    let started = Date()
    let r = try ApplyResult(run(["apply", "--format", "json", "n.yaml"], cwd: dir))
    let took = Date().timeIntervalSince(started)
    #expect(r.run.status == 0 && r.outcome("n/big") == "installed", "\(r.run.stdout) \(nginx.errorLog)")
    #expect(readBytes(dir + "/out/big.bin") == big && r.int("n/big", "segments") == 8)
    let ranges = nginx.accessLog.filter { $0.contains(" 206 GET /big.bin") }
    let connections = Set(ranges.map { $0.split(separator: " ")[0] })
    #expect(ranges.count >= 7 && connections.count >= 7, "\(nginx.accessLog)")
    // One connection at 4 MB/s would take 6 s.
    #expect(took < 4, "eight ranges under limit_rate 4m: \(took) s")
    print("segments | nginx limit_rate 4m, 24 MB, segments 8: \(took) s, \(ranges.count) ranges")
  }
}

/// Connections are kept for reuse (issue 15, W4): a steady run of many small
/// revalidations at 8 at a time opens at most 8 connections, and no more
/// when the files are fetched. libcurl's own cache size (four per handle
/// added at that moment) closed connections whenever few transfers were in
/// flight: W4 opened 64 for 2,000 requests.
@Suite struct NginxConnectionReuseTests {
  @Test func manySmallFilesAtEightAtATimeUseEightConnections() throws {
    let nginx = try NginxServer()
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let count = 1500
    var lines = [
      "version: 1", "name: n", "root: out", "journal: state/journal", "limits: {parallel: 8, per_host: 8}", "files:",
    ]
    for i in 0..<count {
      nginx.put("f\(i).bin", testBytes(512, seed: UInt64(i)), mtime: timeFromNow(-3600))
      lines.append("  - {id: f\(i), url: '\(nginx.base)/f\(i).bin', destination: f\(i).bin}")
    }
    write(lines.joined(separator: "\n") + "\n", to: dir + "/n.yaml")
    for pass in ["fetched", "revalidated"] {
      let before = nginx.accessLog.count
      let r = try run(["apply", "--quiet", "n.yaml"], cwd: dir)
      #expect(r.status == 0, "\(r.stderr)")
      let log = nginx.accessLog.dropFirst(before)
      #expect(log.count == count)
      #expect(log.allSatisfy { $0.contains(pass == "fetched" ? " 200 GET" : " 304 GET") })
      let connections = Set(log.map { $0.split(separator: " ")[0] })
      #expect(connections.count <= 8, "\(pass): \(connections.count) connections for \(count) requests")
    }
  }
}
