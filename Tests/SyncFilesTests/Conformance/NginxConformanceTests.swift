import Foundation
import Testing

/// nginx (the Debian package) on a free loopback port, started by the test
/// and stopped by its pid: downloads, 304 revalidation with its ETags, a
/// resume with Range + If-Range after a deadline, a changed file.
final class Nginx {
  let dir = makeTempDir()
  let port: Int
  private var daemon: Daemon!

  init() throws {
    let bin = try installed(["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"], package: "nginx")
    port = try freePort()
    try FileManager.default.createDirectory(atPath: dir + "/www", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: dir + "/tmp", withIntermediateDirectories: true)
    chmod(dir, 0o755)
    let d = dir
    let temps = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(d)/tmp/\($0);" }
    write(
      """
      daemon off;
      pid \(dir)/nginx.pid;
      error_log \(dir)/error.log;
      events { worker_connections 256; }
      http {
        access_log \(dir)/access.log;
        \(temps.joined(separator: "\n  "))
        server { listen 127.0.0.1:\(port); root \(dir)/www; }
      }

      """, to: dir + "/nginx.conf")
    daemon = try Daemon(
      bin, ["-p", dir, "-c", dir + "/nginx.conf", "-e", dir + "/error.log"], port: port, name: "nginx",
      log: dir + "/error.log")
  }

  var log: String { (try? String(contentsOfFile: dir + "/error.log", encoding: .utf8)) ?? "" }

  deinit {
    daemon = nil
    try? FileManager.default.removeItem(atPath: dir)
  }

  func put(_ path: String, _ bytes: [UInt8]) {
    let full = dir + "/www/" + path
    try? FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: full, contents: Data(bytes), attributes: [.posixPermissions: 0o644])
  }
}

@Suite struct NginxConformanceTests {
  @Test func downloadRevalidateResumeAndChangeAgainstNginx() throws {
    let nginx = try Nginx()
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let a = testBytes(5_000_000, seed: 31)
    let b = testBytes(10_000, seed: 32)
    let big = testBytes(12_000_000, seed: 33)
    nginx.put("a.bin", a)
    nginx.put("sub/b.txt", b)
    nginx.put("big.bin", big)
    let base = "http://127.0.0.1:\(nginx.port)"
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
    #expect(first.run.status == 0, "\(first.run.stderr) \(nginx.log)")
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
    Thread.sleep(forTimeInterval: 1.1)  // a new Last-Modified second, so the ETag changes
    nginx.put("sub/b.txt", b2)
    let changed = try apply()
    #expect(changed.run.status == 0)
    #expect(changed.outcome("n/b") == "installed")
    #expect(changed.outcome("n/a") == "unchanged")
    #expect(readBytes(dir + "/out/x/y/b.txt") == b2)
  }
}
