import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// What `apply` puts on the wire (SPEC §8.1), seen by the fault server:
/// cache directives, conditions, netrc credentials and where they go,
/// `--verbose` with secrets masked, proxies from the environment and `proxy: none`.
@Suite final class RequestsOnTheWireTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()
  /// Journal and outputs, for "the secret is nowhere" checks.
  var everything: String {
    String(decoding: readBytes(dir + "/state/journal") ?? [], as: UTF8.self)
  }

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func aRevalidationAsksCachesToCheckWithTheOriginAndSendsBothValidators() throws {
    let a = testBytes(10_000, seed: 1)
    server.put("a.bin", a)
    let lm = "Sat, 21 Nov 2026 10:00:00 GMT"  // days before the server's Date: strong
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\"", "last_modified": lm]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"])
    let first = try apply()
    #expect(first.outcome("m/a") == "installed", "\(first.run.stderr)")
    let second = try apply()
    #expect(second.outcome("m/a") == "unchanged" && second.int("m/a", "http_status") == 304)
    let reqs = server.requests("/a.bin")
    #expect(reqs.count == 2)
    #expect(reqs[0].headers["cache-control"] == nil, "a first download may come from a fresh cached copy")
    #expect(reqs[1].headers["cache-control"] == "max-age=0")
    #expect(reqs[1].headers["if-none-match"] == "\"v1\"")
    #expect(reqs[1].headers["if-modified-since"] == lm)
  }

  @Test func aFileInstalledUnderAWeakDateIsFetchedWholeFromTheOriginAndSameBytesAreUnchanged() throws {
    let a = testBytes(10_000, seed: 2)
    server.put("a.bin", a)
    // A Last-Modified no earlier than the response's Date: weak (RFC 9110 §8.8.2.2).
    let weak = HTTPDateForTests.format(Date(timeIntervalSinceNow: 60))
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"w\"", "last_modified": weak]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, on_change: [touch, changed]}"])
    #expect(try apply().outcome("m/a") == "installed")
    let plan = try run(["plan", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("weak Last-Modified"), "plan shows why: \(plan.stdout)")
    try? FileManager.default.removeItem(atPath: dir + "/changed")
    let second = try apply()
    #expect(second.outcome("m/a") == "unchanged" && second.int("m/a", "http_status") == 200, "\(second.run.stdout)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/changed"), "identical bytes fire no on_change")
    let last = try #require(server.requests("/a.bin").last)
    #expect(last.headers["if-none-match"] == nil && last.headers["if-modified-since"] == nil)
    #expect(last.headers["cache-control"] == "no-cache" && last.headers["pragma"] == "no-cache")
  }

  @Test func a304ToAnUnconditionalRequestFailsAndInstallsNothing() throws {
    server.routes(["/a.bin": ["always_304": true]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    let r = try apply()
    #expect(r.run.status == 1)
    #expect(r.outcome("m/a") == "failed")
    #expect(r.string("m/a", "error")?.contains("not conditional") == true, "\(r.run.stdout)")
    #expect(out("a.bin") == nil && !partialExists("a.bin"))
  }

  /// netrc credentials: sent to the machine the file names, on the entry's
  /// origin only (not after a redirect to another), and never shown.
  @Test func netrcCredentialsGoOnlyToTheirOriginAndAreNeverShown() throws {
    let a = testBytes(5_000, seed: 3)
    server.put("a.bin", a)
    let password = "pw-\(UUID().uuidString)"
    let basic = "Basic " + Data("alice:\(password)".utf8).base64EncodedString()
    server.routes([
      "/a.bin": ["file": "a.bin", "require": ["authorization": basic]],
      "/r": ["redirect": ["location": "http://localhost:\(server.port)/c"]],
      "/c": ["file": "a.bin"],
    ])
    let netrc = dir + "/netrc"
    write(
      "machine 127.0.0.1 login alice password \(password)\nmachine localhost login alice password \(password)\n",
      to: netrc)
    chmod(netrc, 0o600)
    manifest([
      "{id: a, url: '\(server.base)/a.bin', destination: a.bin, netrc: netrc}",
      "{id: r, url: '\(server.base)/r', destination: r.bin, netrc: netrc}",
    ])
    let r = try apply(["--verbose"])
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(out("a.bin") == a && out("r.bin") == a)
    #expect(server.requests("/r").first?.headers["authorization"] == basic)
    #expect(server.requests("/c").first?.headers["authorization"] == nil, "a redirect to another origin gets none")
    #expect(r.run.stderr.contains("Authorization: ***"), "verbose shows that it was sent")
    let seen = r.run.stdout + r.run.stderr + everything
    #expect(!seen.contains(password) && !seen.contains(basic))

    // Without netrc the server says 401, and the error says so.
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: b.bin, retry: {attempts: 1}}"])
    let no = try apply()
    #expect(no.run.status == 1 && no.int("m/a", "http_status") == 401)

    // `netrc: true` reads $NETRC.
    // (A new id: the failed one waits out its backoff.)
    manifest(["{id: c, url: '\(server.base)/a.bin', destination: c.bin, netrc: true}"])
    let env = try apply(env: ["NETRC": netrc])
    #expect(env.run.status == 0 && out("c.bin") == a, "\(env.run.stdout)")
  }

  @Test func aNetrcFileOthersCanReadIsRefused() throws {
    write("machine 127.0.0.1 login a password b\n", to: dir + "/netrc")
    chmod(dir + "/netrc", 0o644)
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, netrc: netrc}"])
    let r = try run(["validate", "m.yaml"], cwd: dir)
    #expect(r.status == 2)
    #expect(r.stderr.contains("m.yaml:") && r.stderr.contains("readable by every user"), "\(r.stderr)")
    // `netrc: true` is held to the same rule, for $NETRC and for ~/.netrc (it passed, and was used).
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, netrc: true}"])
    let viaVariable = try run(["validate", "m.yaml"], cwd: dir, env: ["NETRC": dir + "/netrc"])
    #expect(viaVariable.status == 2 && viaVariable.stderr.contains("readable by every user"), "\(viaVariable.stderr)")
    try FileManager.default.moveItem(atPath: dir + "/netrc", toPath: dir + "/.netrc")
    let viaHome = try run(["validate", "m.yaml"], cwd: dir, env: ["HOME": dir, "NETRC": ""])
    #expect(viaHome.status == 2 && viaHome.stderr.contains("readable by every user"), "\(viaHome.stderr)")
    chmod(dir + "/.netrc", 0o600)
    let privateOne = try run(["validate", "m.yaml"], cwd: dir, env: ["HOME": dir, "NETRC": ""])
    #expect(privateOne.status == 0, "\(privateOne.stderr)")
  }

  @Test func verboseShowsEveryHeaderWithSecretsMasked() throws {
    let a = testBytes(1_000, seed: 4)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\""]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, headers: {X-Token: '${SF_TOKEN}'}}"])
    let token = "tok-\(UUID().uuidString)"
    let r = try apply(["-v"], env: ["SF_TOKEN": token])
    #expect(r.run.status == 0)
    let err = r.run.stderr
    for line in ["m/a: > GET /a.bin HTTP/1.1", "m/a: > X-Token: ***", "m/a: < HTTP/1.1 200", "m/a: < ETag: \"v1\""] {
      #expect(err.contains(line), "verbose lacks \(line): \(err)")
    }
    #expect(!(r.run.stdout + err + everything).contains(token))
    // Without -v, no headers.
    let quiet = try apply(env: ["SF_TOKEN": token])
    #expect(!quiet.run.stderr.contains("> GET"))
  }

  @Test func proxiesComeFromTheEnvironmentAndProxyNoneGoesDirect() throws {
    let a = testBytes(1_000, seed: 5)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin"]])
    let dead = "http://127.0.0.1:\(try freePort())"
    let env = ["http_proxy": dead, "no_proxy": "", "NO_PROXY": ""]
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    let viaProxy = try apply(env: env)
    #expect(viaProxy.run.status == 1, "http_proxy from the environment is used")
    // (A new id: the failed one waits out its backoff.)
    manifest(["{id: b, url: '\(server.base)/a.bin', destination: a.bin, proxy: none}"])
    let direct = try apply(env: env)
    #expect(direct.run.status == 0 && out("a.bin") == a, "\(direct.run.stdout)")
    // ALL_PROXY alone is libcurl's last resort, and is still used.
    manifest(["{id: c, url: '\(server.base)/a.bin', destination: c.bin, retry: {attempts: 1}}"])
    let viaAll = try apply(env: ["ALL_PROXY": dead, "no_proxy": "", "NO_PROXY": ""])
    #expect(viaAll.run.status == 1, "ALL_PROXY from the environment is used")
  }

  /// With no proxy variable set, libcurl is told "no proxy" once, instead of
  /// reading five variables for each request; any variable, even empty,
  /// leaves the choice to libcurl.
  @Test func noProxyVariableMeansNoProxyAndAnyLeavesItToLibcurl() {
    #expect(NetworkEnvironment(environment: ["HOME": "/root", "no_proxy": "x"]).proxyVariablesAbsent)
    for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
      #expect(!NetworkEnvironment(environment: [name: ""]).proxyVariablesAbsent, "\(name)")
    }
    #expect(!NetworkEnvironment().proxyVariablesAbsent, "an environment not read is not known to be empty")
  }
}

/// IMF-fixdate for test routes.
enum HTTPDateForTests {
  static func format(_ d: Date) -> String {
    let f = DateFormatter()
    f.locale = Locale(identifier: "en_US_POSIX")
    f.timeZone = TimeZone(identifier: "GMT")
    f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return f.string(from: d)
  }
}

/// A body encoded despite `Accept-Encoding: identity` is refused, never
/// installed encoded (SPEC §8.2); it was installed as gzip before.
@Suite final class EncodedBodyTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func aGzipBodyDespiteIdentityIsRefusedAndTheOldFileKept() throws {
    let a = testBytes(20_000, seed: 1)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin"]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    #expect(try apply().outcome("m/a") == "installed")
    server.put("b.bin", testBytes(20_000, seed: 2))
    server.routes(["/a.bin": ["file": "b.bin", "gzip": true]])
    let r = try apply(["--force"])
    #expect(r.run.status == 1 && r.outcome("m/a") == "failed")
    #expect(r.string("m/a", "error")?.contains("Content-Encoding: gzip") == true, "\(r.run.stdout)")
    #expect(out("a.bin") == a, "the old file is kept")
    #expect(!partialExists("a.bin"))
  }
}

/// HTTP/1 bodies whose end only the closing connection marks (SPEC §8.2):
/// installed with a warning, refused when the same version had another size.
@Suite final class CloseDelimitedBodyTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func aBodyEndedByTheCloseWarnsAndIsRefusedWhenCutShortOfAKnownSize() throws {
    let a = testBytes(100_000, seed: 1)
    server.put("a.bin", a)
    let v1: [String: Any] = ["file": "a.bin", "etag": "\"v1\"", "last_modified": "Sat, 21 Nov 2026 10:00:00 GMT"]
    server.routes(["/a.bin": v1.merging(["close_delimited": true]) { $1 }])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    let first = try apply()
    #expect(first.outcome("m/a") == "installed" && out("a.bin") == a, "\(first.run.stdout)")
    let warnings = (first.tasks["m/a"]?["warnings"] as? [String]) ?? []
    #expect(warnings.contains { $0.contains("only by closing the connection") }, "\(warnings)")

    // The same version, cut at 40,000 bytes: its size is known, so it is refused.
    try FileManager.default.removeItem(atPath: dir + "/out/a.bin")
    server.routes(["/a.bin": v1.merging(["close_delimited": true, "close_after": 40_000]) { $1 }])
    let cut = try apply()
    #expect(cut.run.status == 1 && cut.outcome("m/a") == "failed", "\(cut.run.stdout)")
    #expect(cut.string("m/a", "error")?.contains("cut short") == true)
    #expect(out("a.bin") == nil && !partialExists("a.bin"))
  }
}

/// A 1 MB header line: a clear failure, not "Out of memory" alone (SPEC §8.2).
@Suite final class HugeHeaderTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func aMegabyteHeaderLineFailsClearlyAndInstallsNothing() throws {
    server.put("a.bin", testBytes(1_000, seed: 1))
    server.routes(["/a.bin": ["file": "a.bin", "huge_header": 1_000_000]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    let r = try apply()
    #expect(r.run.status == 1 && r.outcome("m/a") == "failed")
    let error = r.string("m/a", "error") ?? ""
    #expect(error.contains("header line past libcurl's 100 KiB limit"), "\(error)")
    #expect(out("a.bin") == nil && !partialExists("a.bin"))
  }
}
