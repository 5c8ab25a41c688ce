import Foundation
import Testing

/// The matrix's "mixed sizes on one host" column (SPEC §9.1): a large file
/// the server sends slowly (`/slow/`, about 1 MiB/s) beside twelve small
/// ones, all from one host. Every small file is installed while the large
/// one still runs; none waits for its connection.
@Suite(.serialized) struct MixedSizesMatrixTests {
  static let smallCount = 12

  /// `sharing`: what `-v` must say `per_host` counted on the host.
  func mixedSizes(_ server: WebServer, sharing: String = "connections") throws {
    let s = server.name
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let big = testBytes(1_400_000, seed: 40)
    let small = (0..<Self.smallCount).map { testBytes(4_096, seed: UInt64(41 + $0)) }
    let old = timeFromNow(-3600)
    server.put("slow/big.bin", big, mtime: old)
    for (k, b) in small.enumerated() { server.put("s\(k).bin", b, mtime: old) }
    let entries =
      ["  - {id: big, url: '\(server.base)/slow/big.bin', destination: big.bin\(server.entryKeys)}"]
      + (0..<Self.smallCount).map {
        "  - {id: s\($0), url: '\(server.base)/s\($0).bin', destination: s\($0).bin\(server.entryKeys)}"
      }
    write(
      "version: 1\nname: t\nroot: out\njournal: state/journal\nlimits: {parallel: 8, per_host: 6}\nfiles:\n"
        + entries.joined(separator: "\n") + "\n", to: dir + "/t.yaml")
    let log = dir + "/stderr.log"
    let p = try startInBackground(["apply", "-v", "--quiet", "t.yaml"], cwd: dir, env: server.environment, stderr: log)
    // Watch the folder: the moment every small file is there, is the large one still running?
    let start = Date()
    var allSmall = false
    var bigWasThere = false
    while Date().timeIntervalSince(start) < 30 && p.isRunning {
      allSmall = (0..<Self.smallCount).allSatisfy { FileManager.default.fileExists(atPath: dir + "/out/s\($0).bin") }
      if allSmall {
        bigWasThere = FileManager.default.fileExists(atPath: dir + "/out/big.bin")
        break
      }
      Thread.sleep(forTimeInterval: 0.01)
    }
    let smallAt = Date().timeIntervalSince(start)
    p.waitUntilExit()
    let bigAt = Date().timeIntervalSince(start)
    #expect(p.terminationStatus == 0, "\(s): exit \(p.terminationStatus)")
    #expect(allSmall && !bigWasThere, "\(s): the small files waited for the large one")
    #expect(readBytes(dir + "/out/big.bin") == big, "\(s): the large file")
    let smallOK = (0..<Self.smallCount).allSatisfy { readBytes(dir + "/out/s\($0).bin") == small[$0] }
    #expect(smallOK, "\(s): the small files")
    let verbose = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    #expect(verbose.contains("per_host (6) counts \(sharing)"), "\(s): -v does not say how per_host counted")
    print(
      "matrix | \(s) | mixed sizes on one host | \(Self.smallCount) small files in \(String(format: "%.2f", smallAt)) s, the large one in \(String(format: "%.2f", bigAt)) s"
    )
  }

  @Test func nginx() throws { try mixedSizes(NginxServer()) }
  @Test func nginxTLSAndHTTP2() throws { try mixedSizes(NginxServer(tls: TestCA()), sharing: "streams") }
  @Test func apache() throws { try mixedSizes(ApacheServer()) }
  @Test func apacheTLS() throws { try mixedSizes(ApacheServer(tls: TestCA())) }
  @Test func lighttpd() throws { try mixedSizes(LighttpdServer()) }
  @Test func pythonHTTPServer() throws { try mixedSizes(PythonServer()) }
  @Test func squidCachingPlainHTTP() throws {
    try mixedSizes(ThroughSquid(origin: NginxServer(), squid: Squid(), viaEnvironment: false))
  }
  @Test func squidConnectToTLS() throws {
    try mixedSizes(
      ThroughSquid(origin: NginxServer(tls: TestCA()), squid: Squid(), viaEnvironment: true), sharing: "streams")
  }
}
