import Foundation
import Testing

/// Lists and signatures travel as the file does (SPEC §10.2): over
/// HTTP/2 and TLS, through a proxy and a cache, beside a large file; the
/// entry's headers go only to its own origin, and not along a redirect.
@Suite final class TrustNetworkTests: ApplyWorkspace {
  let dir = makeTempDir()
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// A large file and small ones under one signed list on `server`: every
  /// file installed with the signer in its checks, one request for the
  /// list; the next run revalidates it once.
  func signedLayout(_ server: WebServer) throws -> (first: ApplyResult, second: ApplyResult) {
    var files: [String: [UInt8]] = ["big.iso": testBytes(16_000_000, seed: 31)]
    for i in 0..<8 { files["s\(i).txt"] = testBytes(2000 + i, seed: UInt64(40 + i)) }
    let now = timeFromNow(-60)
    for (name, bytes) in files { server.put("rel/" + name, bytes, mtime: now) }
    let sums = files.keys.sorted().map { sumLine(files[$0]!, $0) }.joined()
    server.put("rel/SHA256SUMS", Array(sums.utf8), mtime: now)
    TrustKeys.gpg("good@example.org", server.docroot + "/rel/SHA256SUMS", out: server.docroot + "/rel/SHA256SUMS.gpg")
    chmod(server.docroot + "/rel/SHA256SUMS.gpg", 0o644)
    try? FileManager.default.copyItem(atPath: TrustKeys.dir + "/release.gpg", toPath: dir + "/release.gpg")
    manifest(
      files.keys.sorted().map {
        "{id: \($0.replacingOccurrences(of: ".", with: "-")), url: '\(server.base)/rel/\($0)', destination: \($0)\(server.entryKeys)}"
      }, extra: "defaults: {checksums: {url: SHA256SUMS, signature: SHA256SUMS.gpg, keyring: release.gpg}}")
    let first = try apply(env: server.environment)
    #expect(first.run.status == 0, "\(server.name): \(first.run.stderr)")
    #expect(first.count("installed") == files.count, "\(server.name)")
    for (name, bytes) in files { #expect(out(name).map(sha256Hex) == sha256Hex(bytes), "\(server.name): \(name)") }
    let id = TrustKeys.keyID("good@example.org")
    let checks = first.tasks["m/big-iso"]?["checks"] as? [String] ?? []
    #expect(checks.contains { $0.contains("signed by 0x\(id)") }, "\(server.name): \(checks)")
    let second = try apply(env: server.environment)
    #expect(second.run.status == 0 && second.count("unchanged") == files.count, "\(server.name): \(second.run.stderr)")
    return (first, second)
  }

  /// nginx's log of a path: the statuses it answered.
  func statuses(_ nginx: NginxServer, _ path: String) -> [String] {
    let log = (try? String(contentsOfFile: nginx.dir + "/origin.log", encoding: .utf8)) ?? ""
    return log.split(separator: "\n").filter { $0.hasSuffix(" " + path) }.map { String($0.split(separator: " ")[0]) }
  }

  @Test func overTLSAndHTTP2() throws {
    let nginx = try NginxServer(tls: TestCA())
    _ = try signedLayout(nginx)
    #expect(statuses(nginx, "/rel/SHA256SUMS") == ["200", "304"])
    #expect(statuses(nginx, "/rel/SHA256SUMS.gpg") == ["200", "304"])
    let log = (try? String(contentsOfFile: nginx.dir + "/access.log", encoding: .utf8)) ?? ""
    #expect(log.contains("HTTP/2.0 200 GET /rel/SHA256SUMS "), "the list came over HTTP/2: \(log.prefix(600))")
  }

  @Test func throughSquidCaching() throws {
    let nginx = try NginxServer()
    _ = try signedLayout(ThroughSquid(origin: nginx, squid: try Squid(), viaEnvironment: false))
    #expect(statuses(nginx, "/rel/SHA256SUMS").first == "200")
  }

  @Test func throughSquidToTLS() throws {
    let nginx = try NginxServer(tls: TestCA())
    _ = try signedLayout(ThroughSquid(origin: nginx, squid: try Squid(), viaEnvironment: true))
    #expect(statuses(nginx, "/rel/SHA256SUMS") == ["200", "304"])
  }

  /// The entry's headers reach the list on its own origin, never a list on
  /// another origin, nor the other origin a redirect leads to.
  @Test func headersGoOnlyToTheFilesOrigin() throws {
    let origin = try FaultServer()
    let other = try FaultServer()
    let v = testBytes(3000, seed: 51)
    origin.put("f.bin", v)
    origin.put("SUMS", Array(sumLine(v, "f.bin").utf8))
    other.put("SUMS", Array(sumLine(v, "f.bin").utf8))
    origin.routes([
      "/f.bin": ["file": "f.bin", "etag": "\"f\"", "require": ["x-token": "s3cret"]],
      "/SUMS": ["file": "SUMS", "require": ["x-token": "s3cret"]],
      "/moved/SUMS": ["redirect": ["status": 302, "location": "\(other.base)/SUMS"]],
    ])
    other.routes(["/SUMS": ["file": "SUMS"]])
    manifest([
      "{id: a, url: '\(origin.base)/f.bin', destination: a.bin, headers: {X-Token: '${TOKEN}'}, checksums: {url: SUMS}}",
      "{id: b, url: '\(origin.base)/f.bin', destination: b.bin, headers: {X-Token: '${TOKEN}'}, checksums: {url: '\(other.base)/SUMS'}}",
      "{id: c, url: '\(origin.base)/f.bin', destination: c.bin, headers: {X-Token: '${TOKEN}'}, checksums: {url: moved/SUMS}}",
    ])
    let r = try apply(env: ["TOKEN": "s3cret"])
    #expect(r.run.status == 0 && r.count("installed") == 3, "\(r.run.stderr)")
    #expect(origin.requests("/SUMS").allSatisfy { $0.headers["x-token"] == "s3cret" })
    #expect(origin.requests("/moved/SUMS").first?.headers["x-token"] == "s3cret")
    let elsewhere = other.requests("/SUMS")
    #expect(elsewhere.count == 2, "b's list, and c's after its redirect")
    #expect(elsewhere.allSatisfy { $0.headers["x-token"] == nil }, "\(elsewhere.map(\.headers))")
    #expect(!r.run.stdout.contains("s3cret") && !r.run.stderr.contains("s3cret"))
  }
}
