import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Machines behind one Squid (SPEC §9.3): a change costs the origin one
/// transfer, not one per machine, and `cache_max_age` lets the cache answer
/// an unchanged sweep alone. Each node is a folder with its own journal.
@Suite(.serialized) struct FleetCacheTests {
  static let nodes = 4

  /// A node's manifest `n.yaml` with one file entry.
  func writeNode(_ dir: String, entry: String) {
    write("version: 1\nname: n\nroot: out\njournal: state/journal\nfiles:\n  - \(entry)\n", to: dir + "/n.yaml")
  }

  func sweep(_ dirs: [String]) throws {
    for d in dirs {
      let r = try run(["apply", "--quiet", "--force", "n.yaml"], cwd: d)
      #expect(r.status == 0, "\(r.stderr)")
    }
  }

  /// Bodies the origin sent for `path` (status 200 in nginx's log).
  func originBodies(_ origin: NginxServer, _ path: String) -> Int {
    origin.accessLog.filter { $0.contains(" 200 GET \(path) ") }.count
  }

  func originRequests(_ origin: NginxServer, _ path: String) -> Int {
    origin.accessLog.filter { $0.contains(" GET \(path) ") }.count
  }

  @Test func aChangeCostsTheOriginOneTransferAndCacheMaxAgeSparesItTheSweep() throws {
    let squid = try Squid()
    let origin = try NginxServer()
    let v1 = testBytes(200_000, seed: 80)
    let v2 = testBytes(200_000, seed: 81)
    origin.put("a.bin", v1, mtime: timeFromNow(-7200))
    var dirs: [String] = []
    for _ in 0..<Self.nodes {
      let d = makeTempDir()
      dirs.append(d)
      writeNode(d, entry: "{id: a, url: '\(origin.base)/a.bin', destination: a.bin, proxy: '\(squid.url)'}")
    }
    defer { for d in dirs { try? FileManager.default.removeItem(atPath: d) } }
    try sweep(dirs)
    #expect(dirs.allSatisfy { readBytes($0 + "/out/a.bin") == v1 })

    // A change, then every node, one after another.
    origin.put("a.bin", v2, mtime: timeFromNow(-3600))
    let before = originBodies(origin, "/a.bin")
    try sweep(dirs)
    #expect(dirs.allSatisfy { readBytes($0 + "/out/a.bin") == v2 }, "every node has the new version")
    let sent = originBodies(origin, "/a.bin") - before
    print("fleet | squid, \(Self.nodes) nodes, a change | the origin sent the new file \(sent) time(s)")
    #expect(sent == 1, "the origin sent the changed file \(sent) times for \(Self.nodes) nodes")

    // An unchanged sweep with cache_max_age: the cache answers alone.
    for d in dirs {
      let text = try String(contentsOfFile: d + "/n.yaml", encoding: .utf8)
      write(
        text.replacingOccurrences(of: "destination: a.bin,", with: "destination: a.bin, cache_max_age: 5m,"),
        to: d + "/n.yaml")
    }
    let asked = originRequests(origin, "/a.bin")
    try sweep(dirs)
    let more = originRequests(origin, "/a.bin") - asked
    print("fleet | squid, \(Self.nodes) nodes, unchanged, cache_max_age 5m | origin requests \(more)")
    #expect(more == 0, "the origin was asked \(more) times")
    let plan = try run(["plan", "--format", "json", "--force", "n.yaml"], cwd: dirs[0])
    #expect(plan.stdout.contains("\"cache_max_age\":300"), "\(plan.stdout)")
  }

  /// A file that `auto` would fetch in ranges goes through a proxy as one
  /// stream, and the report's warnings and `-v` say why (SPEC §9.3).
  @Test func aLargeFileThroughAProxyIsOneStreamAndTheReportSaysSo() throws {
    let squid = try Squid()
    let origin = try NginxServer()
    let big = testBytes(64 << 20, seed: 82)
    origin.put("big.bin", big, mtime: timeFromNow(-7200))
    let d = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: d) }
    writeNode(d, entry: "{id: big, url: '\(origin.base)/big.bin', destination: big.bin, proxy: '\(squid.url)'}")
    let r = try run(["apply", "-v", "--format", "json", "n.yaml"], cwd: d)
    #expect(r.status == 0, "\(r.stderr)")
    let whole = readBytes(d + "/out/big.bin") == big  // not the arrays: a failure would print them
    #expect(whole)
    #expect(r.stdout.contains(SegmentPolicy.proxyNote), "the report: \(r.stdout)")
    #expect(r.stderr.contains("n/big: " + SegmentPolicy.proxyNote), "-v")
    #expect(!origin.accessLog.contains { $0.contains("206") }, "no range was asked for")
  }

  /// Through a proxy, a strong date goes alone; cache_max_age sets max-age.
  @Test func theRequestThroughAProxyNamesTheDateAlone() {
    let v = Validators(etag: "\"e\"", lastModified: "Sat, 21 Nov 2026 10:00:00 GMT", dateIsStrong: true)
    let direct = RequestPolicy.revalidate(installed: v, localMtime: nil)
    #expect(direct.headerLines(partialSize: 0).contains("If-None-Match: \"e\""))
    let proxied = RequestPolicy.revalidate(installed: v, localMtime: nil, throughProxy: true, cacheMaxAge: 300)
    let lines = proxied.headerLines(partialSize: 0)
    #expect(lines == ["If-Modified-Since: Sat, 21 Nov 2026 10:00:00 GMT", "Cache-Control: max-age=300"], "\(lines)")
    // A weak date is never trusted, through a proxy or not: the whole file, from the origin.
    let weak = Validators(etag: "\"e\"", lastModified: "Sat, 21 Nov 2026 10:00:00 GMT", dateIsStrong: false)
    let w = RequestPolicy.revalidate(installed: weak, localMtime: nil, throughProxy: true)
    #expect(w.headerLines(partialSize: 0) == ["Cache-Control: no-cache", "Pragma: no-cache"])
  }

  @Test func proxyRouteReadsTheVariablesAsCurlDoes() {
    let r = ProxyRoute(environment: ["http_proxy": "http://p:3128", "no_proxy": "internal.example, .corp"])
    #expect(r.used(scheme: "http", host: "data.example.org", setting: nil))
    #expect(!r.used(scheme: "https", host: "data.example.org", setting: nil), "https_proxy is not set")
    #expect(!r.used(scheme: "http", host: "internal.example", setting: nil))
    #expect(!r.used(scheme: "http", host: "a.corp", setting: nil))
    #expect(!r.used(scheme: "http", host: "data.example.org", setting: ProxySetting.none))
    let upper = ProxyRoute(environment: ["HTTP_PROXY": "http://p:3128"])
    #expect(!upper.used(scheme: "http", host: "x", setting: nil), "curl ignores HTTP_PROXY for http")
  }
}
