#if canImport(Glibc)
  import Glibc
#endif

/// Reads and decodes the journal on another thread while the manifests
/// load (issue 15: `apply` read the two one after the other before its first
/// request). It creates nothing and takes no lock: an invalid manifest still
/// leaves no journal behind. `JournalWriter` takes the lock, reads the file
/// again, and uses this decoding only when the bytes are the same, so what
/// another process wrote in between is never missed.
public final class JournalPrefetch: @unchecked Sendable {
  private let lock = Lock()
  private var started: String?
  private var done = false
  private var bytes: [UInt8]?
  private var contents: JournalFormat.Contents?

  public init() {}

  /// Starts reading the journal at `path`, once: later calls (another path
  /// the manifests name) are ignored, and `JournalWriter` checks the path.
  public func start(path: String) {
    let first = lock.locked {
      guard started == nil else { return false }
      started = path
      return true
    }
    guard first else { return }
    startThread { [self] in
      var st = stat()
      var read: [UInt8]? = nil
      var decoded: JournalFormat.Contents? = nil
      // A file only: a missing journal, or anything else there, is left to the writer.
      if stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
        case .success(let b) = FileIO.readAll(path, limit: Int.max)
      {
        read = b
        decoded = JournalFormat.decode(b)
      }
      lock.locked {
        bytes = read
        contents = decoded
        done = true
        lock.signal()
      }
    }
  }

  /// Waits until a started prefetch has read the file (tests order their writes after it).
  func waitUntilRead() {
    lock.locked {
      while started != nil && !done { lock.wait(until: nil) }
    }
  }

  /// The decoding of `current`, when a prefetch of `path` read exactly these
  /// bytes; nil otherwise (then the caller decodes them itself). Waits for
  /// the prefetch to end, and drops what it held.
  func contents(path: String, matching current: [UInt8]) -> JournalFormat.Contents? {
    let taken: ([UInt8], JournalFormat.Contents)? = lock.locked {
      guard started == path else { return nil }
      while !done { lock.wait(until: nil) }
      defer {
        bytes = nil
        contents = nil
      }
      guard let bytes, let contents else { return nil }
      return (bytes, contents)
    }
    guard let (read, decoded) = taken, read.count == current.count else { return nil }
    let same = read.withUnsafeBytes { a in
      current.withUnsafeBytes { b in a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
    }
    return same ? decoded : nil
  }
}
