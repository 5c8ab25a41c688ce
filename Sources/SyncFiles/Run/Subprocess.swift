import CLinux

#if canImport(Glibc)
  import Glibc
#endif

/// Runs hooks and verifier plugins: argv (never a shell), extra environment,
/// optional stdin, a timeout; stdout goes to our stderr (our stdout carries
/// only results), stderr is captured. The child starts with default signal
/// handling and an empty signal mask, and inherits no lock (every descriptor
/// syncfiles opens is close-on-exec).
public enum Subprocess {
  public struct Result: Sendable {
    /// Exit status, or 128+signal when killed; nil when it could not start.
    public var status: Int32?
    public var stderr: String
    public var timedOut: Bool
    public var succeeded: Bool { status == 0 && !timedOut }
  }

  public static func run(
    _ argv: [String], environment extra: [String: String], stdin input: [UInt8]? = nil, timeout: Double
  ) -> Result {
    guard let exe = argv.first else { return Result(status: nil, stderr: "empty command", timedOut: false) }
    var inPipe: [Int32] = [-1, -1]
    var errPipe: [Int32] = [-1, -1]
    guard sf_pipe_cloexec(&inPipe) == 0, sf_pipe_cloexec(&errPipe) == 0 else {
      return Result(status: nil, stderr: "cannot create a pipe: \(errnoText())", timedOut: false)
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
    posix_spawn_file_actions_adddup2(&actions, 2, 1)
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
    var attr = posix_spawnattr_t()
    posix_spawnattr_init(&attr)
    defer { posix_spawnattr_destroy(&attr) }
    var none = sigset_t()
    sigemptyset(&none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for s in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT] { sigaddset(&defaults, s) }
    posix_spawnattr_setsigmask(&attr, &none)
    posix_spawnattr_setsigdefault(&attr, &defaults)
    posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

    var env: [String: String] = [:]
    var e = environ
    while let p = e.pointee {
      let kv = String(cString: p)
      if let eq = kv.firstIndex(of: "=") { env[String(kv[..<eq])] = String(kv[kv.index(after: eq)...]) }
      e += 1
    }
    for (k, v) in extra { env[k] = v }
    let cArgs = argv.map { strdup($0) } + [nil]
    let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for p in cArgs { free(p) }
      for p in cEnv { free(p) }
    }
    var pid: pid_t = 0
    let rc = posix_spawnp(&pid, exe, &actions, &attr, cArgs, cEnv)
    close(inPipe[0])
    close(errPipe[1])
    guard rc == 0 else {
      close(inPipe[1])
      close(errPipe[0])
      return Result(status: nil, stderr: "cannot run \(exe): \(String(cString: strerror(rc)))", timedOut: false)
    }
    if let input {
      // A child that does not read its stdin must not block us: write what the pipe takes.
      _ = fcntl(inPipe[1], F_SETFL, O_NONBLOCK)
      _ = input.withUnsafeBytes { write(inPipe[1], $0.baseAddress, $0.count) }
    }
    close(inPipe[1])

    var captured: [UInt8] = []
    let end = monotonicSeconds() + timeout
    var timedOut = false
    var buf = [UInt8](repeating: 0, count: 4096)
    while true {
      let left = end - monotonicSeconds()
      if left <= 0 {
        timedOut = true
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        break
      }
      var pfd = pollfd(fd: errPipe[0], events: Int16(POLLIN), revents: 0)
      let r = poll(&pfd, 1, Int32(min(left, 1) * 1000))
      if r < 0 && errno == EINTR { continue }
      if r > 0 {
        let n = buf.withUnsafeMutableBytes { read(errPipe[0], $0.baseAddress, 4096) }
        if n <= 0 { break }
        if captured.count < 64 * 1024 { captured += buf[0..<n] }
      }
    }
    close(errPipe[0])
    var status: Int32 = 0
    while true {
      if timedOut {
        if waitpid(pid, &status, 0) >= 0 || errno != EINTR { break }
        continue
      }
      // stderr closed: the child is ending; still bound the wait by the timeout.
      let w = waitpid(pid, &status, WNOHANG)
      if w == pid || (w < 0 && errno != EINTR) { break }
      if monotonicSeconds() > end {
        timedOut = true
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        continue
      }
      usleep(2000)
    }
    let code: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    let text = String(decoding: captured, as: UTF8.self).trimmingWhitespace()
    return Result(status: code, stderr: text, timedOut: timedOut)
  }
}
