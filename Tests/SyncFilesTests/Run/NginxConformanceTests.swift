import Foundation
import Testing

/// nginx (the Debian package) on a free loopback port, started by the test
/// and stopped by its pid: downloads, 304 revalidation with its ETags, a
/// resume with Range + If-Range after a deadline, a changed file.
final class Nginx {
  let dir = makeTempDir()
  let port: Int
  private let process: Process

  static var binary: String? {
    ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
  }

  init() throws {
    guard let bin = Nginx.binary else {
      throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "nginx is not installed (scripts/setup)"])
    }
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
    let p = Process()
    p.executableURL = URL(fileURLWithPath: bin)
    p.arguments = ["-p", dir, "-c", dir + "/nginx.conf", "-e", dir + "/error.log"]
    p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    p.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try p.run()
    process = p
    // Ready when the port accepts connections.
    for _ in 0..<100 {
      if canConnect(port) { return }
      Thread.sleep(forTimeInterval: 0.05)
    }
    throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "nginx did not start: \(log)"])
  }

  var log: String { (try? String(contentsOfFile: dir + "/error.log", encoding: .utf8)) ?? "" }

  deinit {
    // Stopped by its pid: the master (our child) ends its workers on SIGQUIT/SIGTERM; SIGKILL as a last resort.
    kill(process.processIdentifier, SIGTERM)
    for _ in 0..<40 where process.isRunning { Thread.sleep(forTimeInterval: 0.05) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    try? FileManager.default.removeItem(atPath: dir)
  }

  func put(_ path: String, _ bytes: [UInt8]) {
    let full = dir + "/www/" + path
    try? FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: full, contents: Data(bytes), attributes: [.posixPermissions: 0o644])
  }
}

func freePort() throws -> Int {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(fd) }
  var addr = sockaddr_in()
  addr.sin_family = sa_family_t(AF_INET)
  addr.sin_addr.s_addr = inet_addr("127.0.0.1")
  addr.sin_port = 0
  var len = socklen_t(MemoryLayout<sockaddr_in>.size)
  let ok = withUnsafeMutablePointer(to: &addr) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0
    }
  }
  guard ok else { throw CocoaError(.fileReadUnknown) }
  return Int(UInt16(bigEndian: addr.sin_port))
}

func canConnect(_ port: Int) -> Bool {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(fd) }
  var addr = sockaddr_in()
  addr.sin_family = sa_family_t(AF_INET)
  addr.sin_addr.s_addr = inet_addr("127.0.0.1")
  addr.sin_port = UInt16(port).bigEndian
  return withUnsafePointer(to: &addr) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
    }
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
