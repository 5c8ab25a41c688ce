import Foundation
import Testing

/// TLS against nginx with a CA made for the test (SPEC §8.1): trust from the
/// manifest or the environment, failures that name their cause, mutual TLS,
/// and HTTP/2 transfers sharing one connection.
@Suite struct TLSTests {
  /// No CA from the environment of the test runner: each test says its own.
  static let noTrust = ["CURL_CA_BUNDLE": "", "SSL_CERT_FILE": "", "SSL_CERT_DIR": ""]

  final class Folder {
    let dir = makeTempDir()
    deinit { try? FileManager.default.removeItem(atPath: dir) }

    func manifest(_ entries: [String], defaults: String = "") {
      write(
        "version: 1\nname: t\nroot: out\njournal: state/journal\n\(defaults)files:\n"
          + entries.map { "  - " + $0 }.joined(separator: "\n") + "\n", to: dir + "/t.yaml")
    }

    func apply(_ args: [String] = [], env: [String: String] = TLSTests.noTrust) throws -> ApplyResult {
      try ApplyResult(run(["apply", "--format", "json"] + args + ["t.yaml"], cwd: dir, env: env))
    }
  }

  func served(_ server: NginxServer, _ name: String = "a.bin") -> [UInt8] {
    let a = testBytes(20_000, seed: 9)
    server.put(name, a, mtime: timeFromNow(-3600))
    return a
  }

  @Test func anUntrustedCertificateSaysSoAndNeverMentionsSSH() throws {
    let server = try NginxServer(tls: TestCA())
    _ = served(server)
    let f = Folder()
    f.manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    let r = try f.apply()
    #expect(r.run.status == 1)
    let error = r.string("t/a", "error") ?? ""
    #expect(error.contains("certificate is not trusted") && error.contains("tls.ca_file"), "\(error)")
    #expect(!error.contains("SSH"))
  }

  @Test func theCAComesFromTheManifestOrFromTheEnvironmentAsCurlReadsIt() throws {
    let ca = try TestCA()
    let server = try NginxServer(tls: ca)
    let a = served(server)
    let hashed = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: hashed) }
    try shell(["cp", ca.caFile, hashed + "/ca.pem"])
    try shell(["openssl", "rehash", hashed])
    let ways: [(String, String, [String: String])] = [
      ("tls.ca_file", ", tls: {ca_file: '\(ca.caFile)'}", Self.noTrust),
      ("tls.ca_path", ", tls: {ca_path: '\(hashed)'}", Self.noTrust),
      ("CURL_CA_BUNDLE", "", Self.noTrust.merging(["CURL_CA_BUNDLE": ca.caFile]) { $1 }),
      ("SSL_CERT_FILE", "", Self.noTrust.merging(["SSL_CERT_FILE": ca.caFile]) { $1 }),
      ("SSL_CERT_DIR", "", Self.noTrust.merging(["SSL_CERT_DIR": hashed]) { $1 }),
    ]
    for (way, keys, env) in ways {
      let f = Folder()
      f.manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}\(keys)}"])
      let r = try f.apply(env: env)
      let got = readBytes(f.dir + "/out/a.bin") == a
      #expect(r.run.status == 0 && got, "\(way): \(r.run.stdout)")
    }
  }

  @Test func aNameMismatchAndAnExpiredCertificateSayWhich() throws {
    let cases: [(TestCA, String)] = [
      (try TestCA(serverNames: "DNS:only.example"), "does not name the host"),
      (try TestCA(expired: true), "has expired"),
    ]
    for (ca, says) in cases {
      let server = try NginxServer(tls: ca)
      _ = served(server)
      let f = Folder()
      f.manifest([
        "{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}, tls: {ca_file: '\(ca.caFile)'}}"
      ])
      let r = try f.apply()
      let error = r.string("t/a", "error") ?? ""
      #expect(r.run.status == 1 && error.contains(says), "\(says): \(error)")
      #expect(readBytes(f.dir + "/out/a.bin") == nil)
    }
  }

  @Test func mutualTLSSendsTheClientCertificate() throws {
    let ca = try TestCA()
    let server = try NginxServer(tls: ca, extra: "ssl_client_certificate \(ca.caFile); ssl_verify_client on;")
    let a = served(server)
    let f = Folder()
    let trust = "tls: {ca_file: '\(ca.caFile)'}"
    f.manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}, \(trust)}"])
    let without = try f.apply()
    #expect(without.run.status == 1 && without.int("t/a", "http_status") == 400, "\(without.run.stdout)")

    let key = ca.privateKeyCopy()
    let identity = "tls: {ca_file: '\(ca.caFile)', client_cert: '\(ca.certFile)', client_key: '\(key)'}"
    f.manifest(["{id: b, url: '\(server.base)/a.bin', destination: b.bin, \(identity)}"])
    let with = try f.apply()
    let got = readBytes(f.dir + "/out/b.bin") == a
    #expect(with.run.status == 0 && got, "\(with.run.stdout)")

    // A private key that others can read is refused at its line.
    let open = ca.privateKeyCopy(mode: 0o644)
    f.manifest(["{id: b, url: '\(server.base)/a.bin', destination: b.bin, tls: {client_key: '\(open)'}}"])
    let v = try run(["validate", "t.yaml"], cwd: f.dir)
    #expect(v.status == 2 && v.stderr.contains("t.yaml:6:") && v.stderr.contains("client_key"), "\(v.stderr)")
  }

  /// SPEC §8.1: over HTTP/2, transfers to one origin share one connection.
  @Test func http2TransfersShareOneConnection() throws {
    let ca = try TestCA()
    let server = try NginxServer(tls: ca)
    let count = 60
    for i in 0..<count { server.put("f\(i).bin", testBytes(16_384, seed: UInt64(i)), mtime: timeFromNow(-3600)) }
    let f = Folder()
    f.manifest(
      (0..<count).map { "{id: f\($0), url: '\(server.base)/f\($0).bin', destination: f\($0).bin}" },
      defaults: "defaults: {tls: {ca_file: '\(ca.caFile)'}}\n")
    let r = try f.apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    let gets = server.accessLog.filter { $0.contains("GET /f") }
    #expect(gets.count == count)
    #expect(gets.allSatisfy { $0.contains(" HTTP/2.0 ") }, "\(gets.prefix(3))")
    let connections = Set(gets.map { $0.split(separator: " ")[0] })
    #expect(connections.count == 1, "connections used: \(connections.count)")
  }

  /// An HTTP/1.1 server over TLS that closes each connection after two
  /// requests (the run opens about 20 connections, four at a time), and
  /// keeps sessions for clients to resume.
  func closingServer(_ ca: TestCA, files count: Int) throws -> NginxServer {
    let server = try NginxServer(
      tls: ca, http2: false, extra: "keepalive_requests 2; ssl_session_cache shared:tls:1m;")
    for i in 0..<count { server.put("f\(i).bin", testBytes(4_096, seed: UInt64(i)), mtime: timeFromNow(-3600)) }
    return server
  }

  func manifest(_ f: Folder, _ server: NginxServer, _ ca: TestCA, files count: Int) {
    f.manifest(
      (0..<count).map { "{id: f\($0), url: '\(server.base)/f\($0).bin', destination: f\($0).bin}" },
      defaults: "limits: {parallel: 4, per_host: 4}\ndefaults: {tls: {ca_file: '\(ca.caFile)'}}\n")
  }

  /// Issue 15 (TLS session reuse): the handles of a run share their TLS
  /// sessions, so a new connection resumes one. Each handle kept its own
  /// before: every handle's first connection was a full handshake (8 of 22
  /// here, where curl makes one).
  @Test func newConnectionsResumeTheRunsTLSSession() throws {
    let ca = try TestCA()
    let server = try closingServer(ca, files: 40)
    let f = Folder()
    manifest(f, server, ca, files: 40)
    let r = try f.apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    let (full, resumed) = server.handshakes
    #expect(full + resumed >= 20)
    // Four transfers may begin before any session exists; none after.
    #expect(full <= 4, "full handshakes: \(full), resumed: \(resumed)")
  }

  /// A shared session never lends one entry's client certificate to
  /// another: with TLS 1.3 a resumed session keeps the identity it was made
  /// with, so a request without a certificate over a session made with one
  /// would reach the server as the certificate's holder. The server answers
  /// 409 to a request for `open/` that presents one, 403 to `mine/` without,
  /// and closes each connection after one request: every transfer is a new
  /// handshake, full or resumed.
  @Test func aSharedSessionNeverLendsAClientCertificate() throws {
    let ca = try TestCA()
    let rules =
      "keepalive_requests 1; ssl_session_cache shared:tls:1m; ssl_client_certificate \(ca.caFile); "
      + "ssl_verify_client optional; location /open/ { if ($ssl_client_verify = SUCCESS) { return 409; } } "
      + "location /mine/ { if ($ssl_client_verify != SUCCESS) { return 403; } }"
    let server = try NginxServer(tls: ca, http2: false, extra: rules)
    let count = 12
    for i in 0..<count {
      server.put("open/f\(i).bin", testBytes(4_096, seed: UInt64(i)), mtime: timeFromNow(-3600))
      server.put("mine/f\(i).bin", testBytes(4_096, seed: UInt64(100 + i)), mtime: timeFromNow(-3600))
    }
    let key = ca.privateKeyCopy()
    let identity = "tls: {ca_file: '\(ca.caFile)', client_cert: '\(ca.certFile)', client_key: '\(key)'}"
    let trust = "tls: {ca_file: '\(ca.caFile)'}"
    let f = Folder()
    f.manifest(
      (0..<count).flatMap {
        [
          "{id: m\($0), url: '\(server.base)/mine/f\($0).bin', destination: m\($0).bin, \(identity)}",
          "{id: o\($0), url: '\(server.base)/open/f\($0).bin', destination: o\($0).bin, \(trust)}",
        ]
      }, defaults: "limits: {parallel: 2, per_host: 2}\n")
    let r = try f.apply()
    #expect(r.run.status == 0, "\(r.run.stdout)")
    let statuses = server.accessLog.compactMap { $0.split(separator: " ").dropFirst(2).first }
    #expect(statuses.count == 2 * count && statuses.allSatisfy { $0 == "200" }, "\(server.accessLog)")
    // Sessions were resumed, so the rule above was put to the test.
    #expect(server.handshakes.resumed > 0, "\(server.handshakes)")
  }

  /// Nor does a session made under one entry's trust spare another entry
  /// the check of its own: a resumed handshake verifies no certificate, so
  /// an entry that trusts another CA must still refuse the server, however
  /// many sessions the entries before it left.
  @Test func aSharedSessionNeverSkipsAnotherEntrysTrust() throws {
    let ca = try TestCA()
    let stranger = try TestCA()
    let server = try NginxServer(
      tls: ca, http2: false, extra: "keepalive_requests 1; ssl_session_cache shared:tls:1m;")
    for i in 0..<6 { server.put("f\(i).bin", testBytes(4_096, seed: UInt64(i)), mtime: timeFromNow(-3600)) }
    let f = Folder()
    f.manifest(
      (0..<5).map {
        "{id: a\($0), url: '\(server.base)/f\($0).bin', destination: a\($0).bin, tls: {ca_file: '\(ca.caFile)'}}"
      }
        + [
          "{id: z, url: '\(server.base)/f5.bin', destination: z.bin, retry: {attempts: 1}, tls: {ca_file: '\(stranger.caFile)'}}"
        ], defaults: "limits: {parallel: 1, per_host: 1}\n")
    let r = try f.apply()
    #expect(r.run.status == 1)
    #expect((0..<5).allSatisfy { r.string("t/a\($0)", "outcome") == "installed" }, "\(r.run.stdout)")
    #expect(r.string("t/z", "outcome") == "failed", "\(r.run.stdout)")
    #expect((r.string("t/z", "error") ?? "").contains("certificate is not trusted"), "\(r.run.stdout)")
    #expect(server.handshakes.resumed > 0, "\(server.handshakes)")
  }

  /// Twelve hosts (loopback addresses 127.0.0.1-12 of one nginx), three
  /// files each, interleaved, every connection closed after one request:
  /// 36 handshakes. libcurl keeps 8 sessions in a share, so one share for
  /// the run made each host's session gone by its next turn (36 full).
  func manyHosts(_ f: Folder) throws -> NginxServer {
    let hosts = (1...12).map { "127.0.0.\($0)" }
    let ca = try TestCA(serverNames: hosts.map { "IP:\($0)" }.joined(separator: ",") + ",DNS:localhost")
    let server = try NginxServer(
      tls: ca, http2: false, extra: "keepalive_requests 1; ssl_session_cache shared:tls:1m;",
      alsoOn: Array(hosts.dropFirst()))
    for i in 0..<3 { server.put("f\(i).bin", testBytes(4_096, seed: UInt64(i)), mtime: timeFromNow(-3600)) }
    f.manifest(
      (0..<3).flatMap { i in
        hosts.indices.map { h in
          "{id: h\(h)f\(i), url: 'https://\(hosts[h]):\(server.port)/f\(i).bin', destination: h\(h)/f\(i).bin}"
        }
      }, defaults: "limits: {parallel: 12, per_host: 1}\ndefaults: {tls: {ca_file: '\(ca.caFile)'}}\n")
    return server
  }

  /// Each host's sessions are kept apart: one full handshake per host.
  @Test func sessionsOfManyHostsAreAllKept() throws {
    let f = Folder()
    let server = try manyHosts(f)
    let r = try f.apply()
    #expect(r.run.status == 0, "\(r.run.stderr)")
    let (full, resumed) = server.handshakes
    #expect(full + resumed == 36)
    #expect(full == 12, "full handshakes: \(full), resumed: \(resumed)")
  }

  /// And so for `plan --remote`'s probes.
  @Test func remotePlanKeepsTheSessionsOfManyHosts() throws {
    let f = Folder()
    let server = try manyHosts(f)
    let r = try run(["plan", "--remote", "--format", "json", "t.yaml"], cwd: f.dir, env: Self.noTrust)
    #expect(r.status == 0, "\(r.stderr)")
    let (full, resumed) = server.handshakes
    #expect(full + resumed == 36)
    #expect(full == 12, "full handshakes: \(full), resumed: \(resumed)")
  }

  /// `plan --remote` made a handle per HEAD: every connection was a full handshake.
  @Test func remotePlanProbesResumeTheirTLSSession() throws {
    let ca = try TestCA()
    let server = try closingServer(ca, files: 40)
    let f = Folder()
    manifest(f, server, ca, files: 40)
    let r = try run(["plan", "--remote", "--format", "json", "t.yaml"], cwd: f.dir, env: Self.noTrust)
    #expect(r.status == 0, "\(r.stderr)")
    let (full, resumed) = server.handshakes
    #expect(full + resumed >= 20)
    #expect(full <= 4, "full handshakes: \(full), resumed: \(resumed)")
  }
}
