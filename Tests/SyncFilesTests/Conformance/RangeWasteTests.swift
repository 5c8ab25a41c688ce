import Foundation
import Testing

/// Ranges that lose nothing and waste nothing (SPEC §9.1), against nginx
/// capping each connection as busy mirrors do: a fresh segmented download
/// receives the file once, and a re-run after kill -9 asks for no more than
/// what was missing plus 1 MiB a range. Bytes are counted on both sides:
/// what the report says arrived, and what nginx logged as sent.
@Suite(.serialized) struct RangeWasteTests {
  static let size = 32 << 20
  static let ranges = 4

  /// `keys`: the entry's keys besides id, url and destination.
  func site(_ nginx: NginxServer, _ bytes: [UInt8], keys: String = ", segments: \(ranges)") -> String {
    let dir = makeTempDir()
    nginx.put("big.bin", bytes, mtime: timeFromNow(-3600))
    write(
      """
      version: 1
      name: t
      root: out
      journal: state/journal
      files:
        - {id: big, url: '\(nginx.base)/big.bin', destination: big.bin\(keys)}

      """, to: dir + "/t.yaml")
    return dir
  }

  /// Capped connections with `segments: 4`; full loopback speed under
  /// `auto` with `expected_bytes` (both ask for a bounded first piece, so
  /// nginx sends the file once); and `auto` with no size known, where the
  /// first response hands the file over to ranges at its headers: nothing
  /// it sent is received, but what was already in the sockets was sent.
  /// (Before, the first stream ran past its share: 72 MiB arrived for 64.)
  @Test(arguments: [
    (rate: "24m", size: 32 << 20, keys: ", segments: 4", serverSlack: 0),
    (rate: "", size: 64 << 20, keys: ", expected_bytes: 64MiB", serverSlack: 0),
    (rate: "", size: 64 << 20, keys: "", serverSlack: 8 << 20),
  ])
  func aFreshSegmentedDownloadReceivesTheFileOnce(shape: (rate: String, size: Int, keys: String, serverSlack: Int))
    throws
  {
    let nginx = try NginxServer(limitRate: shape.rate.isEmpty ? nil : shape.rate)
    let size = shape.size
    let big = testBytes(size, seed: 70)
    let dir = site(nginx, big, keys: shape.keys)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let r = try ApplyResult(run(["apply", "--format", "json", "t.yaml"], cwd: dir))
    #expect(r.run.status == 0 && readBytes(dir + "/out/big.bin") == big, "\(r.run.stderr)")
    #expect(r.int("t/big", "segments") == Self.ranges, "\(r.run.stdout)")
    let arrived = r.int("t/big", "bytes_transferred") ?? 0
    let discarded = r.int("t/big", "bytes_discarded") ?? -1
    let sent = nginx.bodyBytesSent
    print("waste | fresh \(size) B\(shape.keys) | arrived \(arrived), discarded \(discarded), nginx sent \(sent)")
    #expect(arrived - size == discarded, "what arrived beyond the file was thrown away, and said so")
    #expect(arrived <= size + size / 100, "arrived \(arrived) for \(size)")
    #expect(sent <= size + size / 100 + shape.serverSlack, "nginx sent \(sent) for \(size)")
  }

  /// The bytes the journal's last record says the partial holds.
  static func held(_ journal: String) -> Int {
    let text = (try? String(contentsOfFile: journal, encoding: .utf8)) ?? ""
    guard let last = text.split(separator: "\n").last(where: { $0.contains("\"partial\"") }),
      let body = last.split(separator: " ", maxSplits: 2).last,
      let o = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
      let partial = o["partial"] as? [String: Any]
    else { return 0 }
    return partial["offset"] as? Int ?? 0
  }

  @Test func aRerunAfterKillAsksOnlyForWhatIsMissing() throws {
    let nginx = try NginxServer(limitRate: "2m")
    let big = testBytes(Self.size, seed: 71)
    let dir = site(nginx, big)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let p = try startInBackground(["apply", "--quiet", "t.yaml"], cwd: dir)
    // 4 ranges at 2 MiB/s: killed once the journal holds about 40 % of the file.
    let start = Date()
    while p.isRunning && Self.held(dir + "/state/journal") < Self.size * 2 / 5 && Date().timeIntervalSince(start) < 20 {
      Thread.sleep(forTimeInterval: 0.02)
    }
    kill(p.processIdentifier, SIGKILL)
    p.waitUntilExit()
    let held = Self.held(dir + "/state/journal")
    #expect(held > Self.size / 10 && held < Self.size, "the kill landed mid-transfer: \(held) held")
    let r = try ApplyResult(run(["apply", "--format", "json", "t.yaml"], cwd: dir))
    #expect(r.run.status == 0 && readBytes(dir + "/out/big.bin") == big, "\(r.run.stderr)")
    // nginx logs a request cut by the kill when it notices, not at once: the
    // two runs' bytes are counted together once the re-run has ended. The
    // re-run asks for no more than what was missing plus 1 MiB a range
    // exactly when the two runs together take no more than the file plus that.
    Thread.sleep(forTimeInterval: 0.5)
    let sent = nginx.bodyBytesSent
    let allowance = Self.ranges << 20
    print("waste | kill -9 at \(held) B held | both runs: nginx sent \(sent) for \(Self.size), allowance \(allowance)")
    #expect(sent <= Self.size + allowance, "sent \(sent) in all for \(Self.size)")
    #expect((r.int("t/big", "resumed_from") ?? 0) > 0, "\(r.run.stdout)")
  }
}
