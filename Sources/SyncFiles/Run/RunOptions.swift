import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

public struct RunOptions: Sendable {
  public var parallel: Int
  public var perHost: Int
  /// Aggregate bytes per second.
  public var rate: RateCap?
  /// `limits.segments`: byte ranges in flight in the session.
  public var segments = Limits.defaultSegments
  /// Stop after this many seconds (exit 75), counted from `clock.start`.
  public var deadline: Double?
  /// The apply's steps before the run (`load`, `plan`); nil: the run starts its own clock.
  public var clock: RunClock?
  /// Group commits of many small files (one syncfs per group); off = one fsync per file.
  public var groupCommit = true
  public var hookTimeout: Double = 600
  public var verifyTimeout: Double = 600
  /// CA bundle, CA folder and netrc file named by the environment.
  public var environment = NetworkEnvironment()
  /// `--verbose`: every request and response header, secrets as `***`.
  public var verbose: (@Sendable (String) -> Void)? = nil
  /// Plain log lines (stderr in the CLI); nil (`--quiet`): none is even made.
  public var log: (@Sendable (String) -> Void)? = nil
  /// Called about five times a second while transfers run (a live progress line).
  public var tick: (@Sendable (RunProgress) -> Void)? = nil

  public init(parallel: Int, perHost: Int, rate: RateCap? = nil, deadline: Double? = nil) {
    self.parallel = parallel
    self.perHost = perHost
    self.rate = rate
    self.deadline = deadline
  }
}

public struct RunProgress: Sendable {
  public var done: Int
  public var total: Int
  public var bytes: Int64
  public var expectedBytes: Int64
  public var active: Int
  public var elapsed: Double
  /// Ids of tasks being fetched, the longest running first (two at most).
  public var current: [String] = []
}
