import Foundation

/// A server the tests start on a free loopback port (nginx, Apache, an
/// rsync daemon), ready once the port accepts connections, and stopped by
/// its own process group — never by name, so servers others run are left
/// alone. Spawned and reaped here rather than through Foundation's
/// `Process`: Apache's workers ignore SIGTERM and outlive a master whose exit
/// `Process` did not always notice, which left a test waiting for ever.
final class Daemon {
  private let pid: pid_t

  init(_ binary: String, _ arguments: [String], port: Int, name: String, log: String) throws {
    pid = try spawnInOwnGroup(binary, arguments)
    for _ in 0..<100 {
      if canConnect(port) { return }
      Thread.sleep(forTimeInterval: 0.05)
    }
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    stop()
    throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(name) did not start: \(text)"])
  }

  deinit { stop() }

  /// SIGTERM to the group (a master ends its workers), then SIGKILL to
  /// whatever of the group is left after two seconds; the master is reaped.
  private func stop() {
    kill(-pid, SIGTERM)
    var status: Int32 = 0
    var reaped = false
    for _ in 0..<40 {
      let r = waitpid(pid, &status, WNOHANG)
      if r == pid || (r == -1 && errno == ECHILD) {
        reaped = true
        break
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
    kill(-pid, SIGKILL)
    if !reaped { _ = waitpid(pid, &status, 0) }
  }
}

/// Starts `binary` as the leader of a new process group, with stdin and
/// stdout on /dev/null and stderr kept (servers log to their own files).
func spawnInOwnGroup(_ binary: String, _ arguments: [String]) throws -> pid_t {
  var attr = posix_spawnattr_t()
  posix_spawnattr_init(&attr)
  defer { posix_spawnattr_destroy(&attr) }
  posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP))
  posix_spawnattr_setpgroup(&attr, 0)
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
  let argv = ([binary] + arguments).map { strdup($0) } + [nil]
  defer { argv.forEach { free($0) } }
  var pid: pid_t = 0
  let rc = posix_spawn(&pid, binary, &actions, &attr, argv, environ)
  guard rc == 0 else {
    throw CocoaError(
      .fileReadUnknown,
      userInfo: [NSLocalizedDescriptionKey: "cannot start \(binary): \(String(cString: strerror(rc)))"])
  }
  return pid
}

/// The first installed of these executables, or an error naming what to install.
func installed(_ candidates: [String], package: String) throws -> String {
  guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
    throw CocoaError(
      .fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "\(package) is not installed (run scripts/setup)"])
  }
  return found
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
