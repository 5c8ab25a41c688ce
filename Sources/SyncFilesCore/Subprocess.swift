internal import CLinux

#if canImport(Glibc)
  import Glibc
#endif

/// Runs hooks and plugins: argv (never a shell), extra environment, optional
/// stdin, a timeout. stdout is captured when asked (a plugin's result line),
/// else it goes to our stderr (our stdout carries only results); stderr is
/// captured. The child starts in a process group of its own with default
/// signal handling and an empty signal mask, and inherits no lock (every
/// descriptor syncfiles opens is close-on-exec).
public enum Subprocess {
  /// Why `watch` stops a child before its end.
  public enum StopReason: Sendable, Hashable {
    /// The run is stopping (a signal, the deadline): what was done is kept.
    case runStopping
    /// The watcher's own reason, in a user's words ("made no progress for 30s").
    case watcher(String)
  }

  public struct Result: Sendable {
    /// Exit status, or 128+signal when killed; nil when it could not start.
    public var status: Int32?
    public var stderr: String
    public var timedOut: Bool
    /// Captured stdout (at most 1 MiB), when asked for.
    public var stdout: [UInt8] = []
    /// Why `watch` had it stopped, if it did.
    public var stoppedBecause: StopReason? = nil
    public var succeeded: Bool { status == 0 && !timedOut && stoppedBecause == nil }

    /// "timed out after 10s", "exit 3", "killed by signal 9", "could not start".
    public func failure(timeout: Double) -> String {
      if timedOut { return "timed out after \(Self.seconds(timeout))" }
      switch stoppedBecause {
      case .runStopping?: return "stopped"
      case .watcher(let why)?: return why
      case nil: break
      }
      guard let s = status else { return "could not start" }
      return s > 128 ? "killed by signal \(s - 128)" : "exit \(s)"
    }

    /// ": what it printed on stderr", or nothing.
    public var stderrSuffix: String { stderr.isEmpty ? "" : ": \(stderr)" }

    package static func seconds(_ t: Double) -> String {
      t == t.rounded() ? "\(Int(t))s" : "\((t * 10).rounded() / 10)s"
    }
  }

  /// Runs `argv` to its end. `watch`, when given, is asked about ten times a
  /// second; a reason it returns stops the child's whole process group
  /// (SIGTERM, then SIGKILL two seconds later).
  public static func run(
    _ argv: [String], environment extra: [String: String], stdin input: [UInt8]? = nil, timeout: Double,
    captureStdout: Bool = false, watch: (() -> StopReason?)? = nil
  ) -> Result {
    let child: Child
    do throws(SubprocessError) { child = try spawn(argv, environment: extra, captureStdout: captureStdout) } catch {
      return Result(status: nil, stderr: error.message, timedOut: false)
    }
    if let input { offer(input, to: child.stdin) }
    close(child.stdin)
    var guardian = Guardian(pid: child.pid, end: monotonicSeconds() + timeout, watch: watch)
    var result = Result(status: nil, stderr: "", timedOut: false)
    let captured = drain(child, into: &result, guardian: &guardian)
    var status: Int32 = 0
    while true {
      // The pipes closed: the child is ending; still bound the wait.
      let w = waitpid(child.pid, &status, WNOHANG)
      if w == child.pid || (w < 0 && errno != EINTR) { break }
      _ = guardian.check()
      usleep(2000)
    }
    result.timedOut = guardian.timedOut
    result.stoppedBecause = guardian.stoppedBecause
    result.status = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    result.stderr = String(decoding: captured, as: UTF8.self).trimmingWhitespace()
    return result
  }

  /// A started child: its pid and our ends of its pipes.
  struct Child {
    var pid: pid_t
    var stdin: Int32
    var stderr: Int32
    var stdout: Int32?
  }

  /// Starts `argv` in a process group of its own, with default signal
  /// handling, stdin and stderr piped, stdout piped or sent to our stderr.
  static func spawn(_ argv: [String], environment extra: [String: String], captureStdout: Bool)
    throws(SubprocessError) -> Child
  {
    guard let exe = argv.first else { throw .emptyCommand }
    var inPipe: [Int32] = [-1, -1]
    var errPipe: [Int32] = [-1, -1]
    var outPipe: [Int32] = [-1, -1]
    guard sf_pipe_cloexec(&inPipe) == 0, sf_pipe_cloexec(&errPipe) == 0,
      !captureStdout || sf_pipe_cloexec(&outPipe) == 0
    else {
      let e = Errno(errno)
      for fd in inPipe + errPipe + outPipe where fd >= 0 { close(fd) }
      throw .pipe(e)
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
    posix_spawn_file_actions_adddup2(&actions, captureStdout ? outPipe[1] : 2, 1)
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
    var attr = posix_spawnattr_t()
    posix_spawnattr_init(&attr)
    defer { posix_spawnattr_destroy(&attr) }
    setAttributes(&attr)

    var env = Runtime.environment
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
    if captureStdout { close(outPipe[1]) }
    guard rc == 0 else {
      close(inPipe[1])
      close(errPipe[0])
      if captureStdout { close(outPipe[0]) }
      throw .spawn(command: exe, errno: Errno(rc))
    }
    return Child(pid: pid, stdin: inPipe[1], stderr: errPipe[0], stdout: captureStdout ? outPipe[0] : nil)
  }

  /// Writes what the pipe to a child's stdin takes of `input`, at once. A
  /// child that does not read its stdin must not block us, and one that
  /// has already exited must not kill us: the write to a pipe nobody reads
  /// raises SIGPIPE in this thread, which is blocked around it and taken
  /// back if it came, so that the write fails with EPIPE instead.
  package static func offer(_ input: [UInt8], to fd: Int32) {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var before = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &before)
    let n = input.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    if n < 0 && errno == EPIPE {
      var now = timespec()
      _ = sigtimedwait(&pipeSignal, nil, &now)
    }
    pthread_sigmask(SIG_SETMASK, &before, nil)
  }

  /// A child's start: a process group of its own, an empty signal mask,
  /// default handling of the signals syncfiles catches, and the scheduling
  /// policy syncfiles was given rather than the run's (`ThreadPolicy`).
  private static func setAttributes(_ attr: inout posix_spawnattr_t) {
    var none = sigset_t()
    sigemptyset(&none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for s in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT] { sigaddset(&defaults, s) }
    posix_spawnattr_setsigmask(&attr, &none)
    posix_spawnattr_setsigdefault(&attr, &defaults)
    var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP
    if let policy = ThreadPolicy.forChild {
      var priority = sched_param()
      posix_spawnattr_setschedpolicy(&attr, policy)
      posix_spawnattr_setschedparam(&attr, &priority)
      flags |= POSIX_SPAWN_SETSCHEDULER
    }
    posix_spawnattr_setflags(&attr, Int16(flags))
  }

  /// Reads the child's stderr (kept up to 64 KiB, returned) and stdout (up
  /// to 1 MiB, into `result`) until both close, stopping the child when it
  /// overstays; closes both.
  static func drain(_ child: Child, into result: inout Result, guardian: inout Guardian) -> [UInt8] {
    var captured: [UInt8] = []
    var open = [child.stderr] + (child.stdout.map { [$0] } ?? [])
    var buf = [UInt8](repeating: 0, count: 65536)
    while !open.isEmpty {
      // Something that escaped the group may hold the pipes: do not wait for it.
      if guardian.check() { break }
      var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      let r = poll(&fds, nfds_t(fds.count), guardian.pollMilliseconds)
      if r < 0 && errno == EINTR { continue }
      for f in fds where f.revents != 0 {
        let n = buf.withUnsafeMutableBytes { read(f.fd, $0.baseAddress, $0.count) }
        if n <= 0 {
          open.removeAll { $0 == f.fd }
          continue
        }
        if f.fd == child.stderr {
          if captured.count < 64 * 1024 { captured += buf[0..<n] }
        } else if result.stdout.count < 1 << 20 {
          result.stdout += buf[0..<n]
        }
      }
    }
    close(child.stderr)
    if let out = child.stdout { close(out) }
    return captured
  }

  /// Stops a child that overstays its timeout or that `watch` wants stopped:
  /// SIGTERM to its process group, SIGKILL two seconds later.
  struct Guardian {
    let pid: pid_t
    let end: Double
    let watch: (() -> StopReason?)?
    var killAt: Double? = nil
    var timedOut = false
    var stoppedBecause: StopReason? = nil

    /// Stops or kills the child when it is time; true once SIGKILL has had
    /// two seconds (nothing left to wait for).
    mutating func check() -> Bool {
      let now = monotonicSeconds()
      if let k = killAt {
        if now >= k { kill(-pid, SIGKILL) }
        return now >= k + 2
      }
      if now >= end {
        stop(nil)
      } else if let why = watch?() {
        stop(why)
      }
      return false
    }

    mutating func stop(_ why: StopReason?) {
      guard killAt == nil else { return }
      if let why { stoppedBecause = why } else { timedOut = true }
      kill(-pid, SIGTERM)
      killAt = monotonicSeconds() + 2
    }

    /// Up to a second when only the timeout is watched; a tenth otherwise.
    var pollMilliseconds: Int32 {
      watch == nil && killAt == nil ? Int32(min(max(end - monotonicSeconds(), 0), 1) * 1000) : 100
    }
  }
}
