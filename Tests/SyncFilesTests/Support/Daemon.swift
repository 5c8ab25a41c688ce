import Foundation

/// A server the tests start on a free loopback port (nginx, an rsync daemon),
/// ready once the port accepts connections, and stopped by its own pid —
/// never by name, so servers others run are left alone.
final class Daemon {
  private let process: Process

  init(_ binary: String, _ arguments: [String], port: Int, name: String, log: String) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: binary)
    p.arguments = arguments
    p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    p.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try p.run()
    process = p
    for _ in 0..<100 {
      if canConnect(port) { return }
      Thread.sleep(forTimeInterval: 0.05)
    }
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    stop()
    throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(name) did not start: \(text)"])
  }

  deinit { stop() }

  /// SIGTERM (a master ends its workers), SIGKILL as a last resort.
  private func stop() {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGTERM)
    for _ in 0..<40 where process.isRunning { Thread.sleep(forTimeInterval: 0.05) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
  }
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
