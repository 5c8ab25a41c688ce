import SyncFilesCore
import SyncFilesManifest

#if canImport(Glibc)
  import Glibc
#endif

/// Reads and decodes the journal on another thread while the manifests
/// load (`apply` read the two one after the other before its first
/// request). It creates nothing and takes no lock: an invalid manifest still
/// leaves no journal behind. `JournalWriter` takes the lock and uses this
/// decoding only when the file is as it was read, so what another process
/// wrote in between is never missed: the file's identity when it was
/// settled (below), else its bytes, read again.
///
/// Settled: its last change (ctime, mtime) at least `settle` before the read
/// began. A write after the read then gives a later ctime, whatever the
/// file system's clock granularity, and a same-size write in place is seen
/// as surely as an append. A file changed just before the read is read
/// again under the lock and compared byte for byte.
public final class JournalPrefetch: Sendable {
  private struct State {
    package var started: String?
    package var done = false
    package var bytes: [UInt8]?
    package var contents: JournalFormat.Contents?
    /// The file as read, when it was settled then (nil: compare the bytes).
    package var identity: FileIdentity?
  }
  private let state = Locked(State())
  package static let settle: Int64 = 50_000_000  // ns

  public init() {}

  /// Starts reading the journal at `path`, once: later calls (another path
  /// the manifests name) are ignored, and `JournalWriter` checks the path.
  public func start(path: String) {
    let first = state.withLock { s in
      guard s.started == nil else { return false }
      s.started = path
      return true
    }
    guard first else { return }
    startThread { [state] in
      let (read, settled) = Self.read(path)
      let decoded = read.flatMap { JournalFormat.decode($0) }
      state.update { s in
        s.bytes = read
        s.contents = decoded
        s.identity = settled
        s.done = true
      }
    }
  }

  /// The file's bytes, and its identity if it was settled and unchanged
  /// while read. A file only: a missing journal, or anything else there, is
  /// left to the writer.
  private static func read(_ path: String) -> ([UInt8]?, FileIdentity?) {
    let began = Timestamp.currentNanoseconds()
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return (nil, nil) }
    defer { close(fd) }
    guard let before = FileIdentity(fd: fd), before.isRegular,
      case .success(let b) = FileIO.readAll(fd: fd, size: Int(before.size), limit: Int.max)
    else { return (nil, nil) }
    let after = FileIdentity(fd: fd)
    let settled = after == before && Int64(b.count) == before.size && before.changedNs < began - settle
    return (b, settled ? before : nil)
  }

  /// Waits until a started prefetch has read the file (its readers, and
  /// tests that order their writes after it).
  func waitUntilRead() {
    state.wait(for: { $0.started == nil || $0.done }, then: { _ in })
  }

  /// The decoding of `path` when the file is still as a settled prefetch
  /// found it (`now`: its identity under the lock); nil otherwise. Waits
  /// for the prefetch to end; what it held stays for `contents(path:matching:)`.
  func contents(path: String, unchangedSince now: FileIdentity?) -> JournalFormat.Contents? {
    waitUntilRead()
    return state.withLock { s in
      guard s.started == path else { return nil }
      guard let identity = s.identity, let now, identity == now, let contents = s.contents else { return nil }
      s.bytes = nil
      s.contents = nil
      return contents
    }
  }

  /// The decoding of `current`, when a prefetch of `path` read exactly these
  /// bytes; nil otherwise (then the caller decodes them itself). Waits for
  /// the prefetch to end, and drops what it held.
  func contents(path: String, matching current: [UInt8]) -> JournalFormat.Contents? {
    waitUntilRead()
    let taken: ([UInt8], JournalFormat.Contents)? = state.withLock { s in
      guard s.started == path else { return nil }
      defer {
        s.bytes = nil
        s.contents = nil
      }
      guard let bytes = s.bytes, let contents = s.contents else { return nil }
      return (bytes, contents)
    }
    guard let (read, decoded) = taken, read.count == current.count else { return nil }
    let same = read.withUnsafeBytes { a in
      current.withUnsafeBytes { b in a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
    }
    return same ? decoded : nil
  }
}
