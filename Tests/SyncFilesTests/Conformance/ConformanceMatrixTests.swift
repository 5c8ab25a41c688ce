import Foundation
import Testing

/// One manifest folder against one server: applies, kills, and reads back.
final class Site {
  let server: WebServer
  let dir = makeTempDir()
  private var names: [String] = []

  init(_ server: WebServer) { self.server = server }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// The manifest: one entry per served file, id = the name without extension.
  func serve(_ names: [String], extra: String = "") {
    self.names = names
    let files = names.map {
      "  - {id: \(id($0)), url: '\(server.base)/\($0)', destination: \($0)\(server.entryKeys)\(extra)}"
    }
    write(
      "version: 1\nname: t\nroot: out\njournal: state/journal\nfiles:\n" + files.joined(separator: "\n") + "\n",
      to: dir + "/t.yaml")
  }

  func id(_ name: String) -> String { String(name.split(separator: ".")[0]) }
  func task(_ name: String) -> String { "t/" + id(name) }
  func file(_ name: String) -> [UInt8]? { readBytes(dir + "/out/" + name) }
  var partials: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/out")) ?? []).filter {
      $0.hasSuffix(".syncfiles-partial")
    }
  }

  func apply(_ args: [String] = []) throws -> ApplyResult {
    try ApplyResult(run(["apply", "--format", "json"] + args + ["t.yaml"], cwd: dir, env: server.environment))
  }

  /// Starts a slow apply of one file and SIGKILLs it once its partial holds
  /// at least `atLeast` bytes; returns how many it held.
  @discardableResult
  func killMidway(_ name: String, atLeast: Int = 400_000) throws -> Int {
    let p = try startInBackground(
      ["apply", "--quiet", "--rate", "1MB/s", "--only", task(name), "t.yaml"], cwd: dir, env: server.environment)
    let partial = dir + "/out/.\(name).syncfiles-partial"
    var held = 0
    let start = Date()
    while Date().timeIntervalSince(start) < 20 && p.isRunning {
      held = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0
      if held >= atLeast { break }
      Thread.sleep(forTimeInterval: 0.02)
    }
    kill(p.processIdentifier, SIGKILL)
    p.waitUntilExit()
    return held
  }
}

/// The matrix: each real server, the same five checks. Nothing mixes two versions, ever.
@Suite(.serialized) struct ConformanceMatrixTests {
  static let old = timeFromNow(-3600)

  /// install, 304, a change at the origin seen on the next check, kill -9 then
  /// resume, a change between kill and resume, a change within the second.
  func matrix(_ server: WebServer) throws {
    let site = Site(server)
    let s = server.name
    // 1. Install.
    let a = testBytes(300_000, seed: 1)
    server.put("a.bin", a, mtime: Self.old)
    site.serve(["a.bin"])
    let r1 = try site.apply()
    #expect(r1.run.status == 0, "\(s): \(r1.run.stderr)")
    let installedA = site.file("a.bin") == a
    #expect(installedA, "\(s): install")

    // 2. Revalidation: 304, and nothing left behind (a proxy's CONNECT answer is no file's).
    let r2 = try site.apply()
    #expect(r2.outcome("t/a") == "unchanged" && r2.int("t/a", "http_status") == 304, "\(s): 304 \(r2.run.stdout)")
    #expect(site.partials.isEmpty, "\(s): partials left after a 304: \(site.partials)")
    print("matrix | \(s) | install, 304 | \(r1.int("t/a", "http_status") ?? 0), \(r2.int("t/a", "http_status") ?? 0)")

    // 3. A change at the origin is seen on the next check (caches in between ask the origin).
    let a2 = testBytes(300_000, seed: 11)
    server.put("a.bin", a2, mtime: timeFromNow(-1800))
    let r3 = try site.apply()
    let seen = site.file("a.bin") == a2
    #expect(r3.outcome("t/a") == "installed" && seen, "\(s): change at the origin \(r3.run.stdout)")

    // 4. kill -9 mid-transfer, then resume with Range + If-Range.
    let big = testBytes(6_000_000, seed: 2)
    server.put("big.bin", big, mtime: Self.old)
    site.serve(["a.bin", "big.bin"])
    let held = try site.killMidway("big.bin")
    let r4 = try site.apply()
    #expect(r4.run.status == 0, "\(s): \(r4.run.stderr)")
    let resumedOK = site.file("big.bin") == big
    #expect(resumedOK, "\(s): resumed file differs")
    let from = r4.int("t/big", "resumed_from") ?? 0
    if server.honoursRange {
      #expect(from > 0 && r4.int("t/big", "http_status") == 206, "\(s): resume \(r4.run.stdout)")
    }
    print("matrix | \(s) | kill -9 at \(held), resume | status \(r4.int("t/big", "http_status") ?? 0), from \(from)")

    // 5. The file changes between the kill and the resume: the new version, whole.
    let c1 = testBytes(6_000_000, seed: 3)
    let c2 = testBytes(6_000_000, seed: 4)
    server.put("c.bin", c1, mtime: Self.old)
    site.serve(["a.bin", "big.bin", "c.bin"])
    try site.killMidway("c.bin")
    server.put("c.bin", c2, mtime: timeFromNow(-1800))
    let r5 = try site.apply()
    let newOK = site.file("c.bin") == c2
    #expect(newOK, "\(s): changed between kill and resume: not the new version")
    print("matrix | \(s) | changed before resume | status \(r5.int("t/c", "http_status") ?? 0), whole new version")

    try changedWithinTheSecond(site)
  }

  /// Versions that share one modification date (a date no earlier than the
  /// response's Date, so weak) and one size: neither a resume nor a 304 may
  /// trust that date, nor an ETag made from it.
  func changedWithinTheSecond(_ site: Site) throws {
    let server = site.server
    let s = server.name
    let when = timeFromNow(30)
    let w1 = testBytes(6_000_000, seed: 5)
    let w2 = testBytes(6_000_000, seed: 6)
    let w3 = testBytes(6_000_000, seed: 7)
    server.put("w.bin", w1, mtime: when)
    site.serve(["a.bin", "big.bin", "c.bin", "w.bin"])
    try site.killMidway("w.bin")
    server.put("w.bin", w2, mtime: when)
    let r6 = try site.apply()
    let got = site.file("w.bin")
    let isW2 = got == w2
    #expect(isW2, "\(s): a weak date guarded a resume: \(got == w1 ? "the old version" : "two versions mixed")")
    #expect(r6.int("t/w", "resumed_from") ?? 0 == 0, "\(s): resumed under a weak date")
    // The next version under the very same date and size is not hidden behind a 304.
    server.put("w.bin", w3, mtime: when)
    let r7 = try site.apply()
    let w3OK = site.file("w.bin") == w3
    #expect(r7.outcome("t/w") == "installed" && w3OK, "\(s): change hidden by a weak date \(r7.run.stdout)")
    // The same bytes fetched again are unchanged, not changed.
    let r8 = try site.apply()
    #expect(r8.outcome("t/w") == "unchanged", "\(s): identical bytes \(r8.run.stdout)")
    #expect(site.partials.isEmpty, "\(s): partials left: \(site.partials)")
    print(
      "matrix | \(s) | changed within the second | resume refused (status \(r6.int("t/w", "http_status") ?? 0)), change seen (\(r7.int("t/w", "http_status") ?? 0)), same bytes unchanged (\(r8.int("t/w", "http_status") ?? 0))"
    )
  }

  @Test func nginx() throws { try matrix(NginxServer()) }
  @Test func nginxTLSAndHTTP2() throws { try matrix(NginxServer(tls: TestCA())) }
  @Test func apache() throws { try matrix(ApacheServer()) }
  @Test func lighttpd() throws { try matrix(LighttpdServer()) }
  @Test func pythonHTTPServer() throws { try matrix(PythonServer()) }

  @Test func squidCachingPlainHTTP() throws {
    let squid = try Squid()
    try matrix(ThroughSquid(origin: NginxServer(), squid: squid, viaEnvironment: false))
    let log = squid.accessLog
    #expect(log.contains { $0.contains("GET http://127.0.0.1") }, "requests went through squid")
    // Every answer was checked with the origin (max-age=0, or no-cache for weak dates), never served from the cache alone.
    #expect(log.contains { $0.contains("TCP_REFRESH_UNMODIFIED/304") }, "a 304 that the origin confirmed")
    #expect(!log.contains { $0.contains("_HIT/") }, "answered from the cache alone: \(log)")
  }

  @Test func squidConnectToTLS() throws {
    let squid = try Squid()
    try matrix(ThroughSquid(origin: NginxServer(tls: TestCA()), squid: squid, viaEnvironment: true))
    #expect(squid.accessLog.contains { $0.contains("CONNECT 127.0.0.1") }, "https went through CONNECT")
  }

  /// Credentials in a proxy URL, from a variable or written inline, are
  /// secrets: sent to the proxy, shown as *** in -v, found nowhere else.
  @Test func proxyCredentialsAreSecrets() throws {
    let squid = try Squid()
    let origin = try NginxServer()
    let site = Site(origin)
    origin.put("a.bin", testBytes(1_000, seed: 1), mtime: Self.old)
    let fromEnv = "pw-\(UUID().uuidString)"
    let inline = "inline-\(UUID().uuidString.prefix(8))"
    for (password, proxy) in [(fromEnv, "${SF_PROXY_PW}"), (inline, inline)] {
      let url = squid.url.replacingOccurrences(of: "http://", with: "http://alice:\(proxy)@")
      site.serve(["a.bin"], extra: ", proxy: '\(url)'")
      let r = try ApplyResult(
        run(["apply", "--format", "json", "-v", "--force", "t.yaml"], cwd: site.dir, env: ["SF_PROXY_PW": fromEnv]))
      #expect(r.run.status == 0, "\(r.run.stderr)")
      #expect(r.run.stderr.contains("Proxy-Authorization: ***"), "the credentials went to the proxy")
      let journal = String(decoding: readBytes(site.dir + "/state/journal") ?? [], as: UTF8.self)
      let plan = try run(["plan", "--format", "json", "t.yaml"], cwd: site.dir, env: ["SF_PROXY_PW": fromEnv])
      let seen = r.run.stdout + r.run.stderr + journal + plan.stdout + plan.stderr
      #expect(!seen.contains(password), "a proxy password leaked")
    }
    #expect(squid.accessLog.contains { $0.contains("GET http://127.0.0.1") })
  }
}
