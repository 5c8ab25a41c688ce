import Foundation
import Testing

@testable import SyncFiles

/// `notify: URL` and `apply --notify URL` (SPEC §10.4): a receiver in the
/// test hears `URL/start`, then `URL/EXIT_CODE` with the JSON report, for
/// success, failure, a stopped run and an invalid manifest; a receiver that
/// is down or hangs costs at most 10 s a ping and never the exit code.
@Suite final class MonitorPingTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws {
    server = try FaultServer()
    server.put("ok", Array("OK".utf8))
    server.put("f", testBytes(20_000, seed: 81))
    var routes: [String: [String: Any]] = ["/f.bin": ["file": "f", "etag": "\"f\""]]
    for end in ["start", "0", "1", "2", "75"] { routes["/ping/\(end)"] = ["file": "ok"] }
    server.routes(routes)
  }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func pings() -> [FaultServer.Request] { server.requests().filter { $0.path.hasPrefix("/ping/") } }

  @Test func aRunPingsStartThenItsExitCodeWithTheReport() throws {
    manifest(
      ["{id: f, url: '\(server.base)/f.bin', destination: f.bin, max_bytes: 1M}"],
      extra: "notify: '\(server.base)/ping/'")
    let r = try apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    let p = pings()
    #expect(p.map(\.path) == ["/ping/start", "/ping/0"], "\(p.map(\.path))")
    #expect(p.first?.method == "GET" && p.last?.method == "POST")
    #expect(p.last?.headers["content-type"] == "application/json")
    let body = try JSONSerialization.jsonObject(with: Data((p.last?.body ?? "").utf8)) as? [String: Any]
    #expect(body?["exit_code"] as? Int == 0 && (body?["tasks"] as? [Any])?.count == 1, "\(p.last?.body ?? "")")
  }

  @Test func aFailedRunAndAStoppedRunPingTheirCodes() throws {
    server.routes([
      "/f.bin": ["status": 404], "/slow.bin": ["file": "f", "trickle_bps": 2000], "/ping/1": ["file": "ok"],
      "/ping/75": ["file": "ok"], "/ping/start": ["file": "ok"],
    ])
    manifest(["{id: f, url: '\(server.base)/f.bin', destination: f.bin, max_bytes: 1M}"])
    let failed = try apply(["--notify", "\(server.base)/ping"])
    #expect(failed.run.status == 1)
    #expect(pings().map(\.path) == ["/ping/start", "/ping/1"])
    manifest(["{id: s, url: '\(server.base)/slow.bin', destination: s.bin, max_bytes: 1M}"])
    let stopped = try apply(["--notify", "\(server.base)/ping", "--deadline", "1s"])
    #expect(stopped.run.status == 75)
    #expect(pings().map(\.path).suffix(2) == ["/ping/start", "/ping/75"])
  }

  @Test func anInvalidManifestStillReachesTheFlagsMonitor() throws {
    write("version: 1\nfiles:\n  - {id: a, url: 'https://x/a', destinaton: a}\n", to: dir + "/m.yaml")
    let r = try run(["apply", "--notify", "\(server.base)/ping", "m.yaml"], cwd: dir)
    #expect(r.status == 2)
    #expect(pings().map(\.path) == ["/ping/2"])
  }

  /// A receiver that refuses connections and one that never answers: each
  /// ping gives up within its 10 s, the run's exit code stands, and the
  /// password in the URL is never printed.
  @Test func aReceiverDownOrHangingCostsAtMostTenSecondsAPing() throws {
    let closed = try freePort()
    server.routes(["/f.bin": ["file": "f", "etag": "\"f\""], "/hang/start": ["hang": 30], "/hang/0": ["hang": 30]])
    manifest(
      ["{id: f, url: '\(server.base)/f.bin', destination: f.bin, max_bytes: 1M}"],
      extra: "notify: 'http://monitor:${PING_PASSWORD}@127.0.0.1:\(closed)/ping'")
    let other = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: other) }
    try FileManager.default.copyItem(atPath: dir + "/m.yaml", toPath: other + "/m.yaml")
    let start = Date()
    // Both at once: the hanging receiver's run alongside the refusing one's.
    let hanging = try startInBackground(
      ["apply", "--notify", "\(server.base)/hang", "m.yaml"], cwd: other, env: ["PING_PASSWORD": "pw-s3cret"],
      stderr: other + "/err")
    let down = try apply(env: ["PING_PASSWORD": "pw-s3cret"])
    hanging.waitUntilExit()
    let took = Date().timeIntervalSince(start)
    #expect(down.run.status == 0 && hanging.terminationStatus == 0)
    #expect(took < 24, "two pings took \(took) s")
    #expect(
      down.run.stderr.contains(
        "warning: notify ping http://monitor:${PING_PASSWORD}@127.0.0.1:\(closed)/ping/start failed"))
    #expect(!down.run.stderr.contains("pw-s3cret") && !down.run.stdout.contains("pw-s3cret"))
    let hangErr = try String(contentsOfFile: other + "/err", encoding: .utf8)
    #expect(hangErr.contains("notify ping \(server.base)/hang/0 failed"), "\(hangErr)")
  }
}

@Suite struct MonitorPingURLTests {
  @Test func theSuffixGoesAfterThePathBeforeTheQuery() {
    #expect(MonitorPing.url("https://hc-ping.com/abc", "start") == "https://hc-ping.com/abc/start")
    #expect(MonitorPing.url("https://hc-ping.com/abc/", "0") == "https://hc-ping.com/abc/0")
    #expect(
      MonitorPing.url("https://kuma.example/api/push/x?status=up", "1") == "https://kuma.example/api/push/x/1?status=up"
    )
  }
}
