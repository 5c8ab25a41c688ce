// Over 400 lines: the hashing of a transfer, from the bytes' arrival (ring, reader) to the digest, which share one buffer discipline.
internal import CCrypto

#if canImport(Glibc)
  import Glibc
#endif

/// Streaming SHA-256 over libcrypto. Feed bytes as they arrive; `finish`
/// gives the digest. Not thread-safe: one owner at a time.
///
/// A body's first `inlineLimit` bytes (since the last reset) are hashed in
/// the caller's thread; what follows is handed to one thread that all
/// hashers share (`HashRing`), which hashes every hasher's pieces in the
/// order handed over. So a download's receive-and-write and its hashing
/// overlap on two cores instead of adding up on the transfer thread. Small
/// bodies stay inline: a hand-over would cost more than the hash.
///
/// A piece is handed over either as bytes (copied into a bounded ring) or,
/// for bytes already written to a file, as a range of that file, which the
/// hashing thread reads back itself (`update(_:writtenAt:in:)`,
/// `update(readingBack:from:)`): the transfer thread then copies nothing
/// (a 1 GiB file: a sixth of its time was that copy and the read-back of
/// ranges that completed out of order). A range that cannot be read back
/// makes `finish` return nil: never a digest of other bytes.
/// `finish`, `reset` and `deinit` first wait until this hasher's pieces are
/// hashed.
public final class SHA256Hasher {
  /// Bytes hashed inline before the hashing moves to the shared thread.
  public static let defaultInlineLimit: Int64 = 256 << 10
  public let inlineLimit: Int64

  /// Made on first use: a run builds a hasher for every task, and in a
  /// steady run most tasks never hash a byte (their answer is a 304).
  private var made: HashContext?
  private var context: HashContext {
    if let made { return made }
    let c = HashContext()
    made = c
    return c
  }
  private var fedSinceReset: Int64 = 0
  /// The shared thread's number for this hasher's last piece, while it has pieces there.
  private var pending: Int64?

  public init(inlineLimit: Int64 = SHA256Hasher.defaultInlineLimit) {
    self.inlineLimit = inlineLimit
  }

  deinit { drain() }

  /// Past the inline limit (or behind pieces already handed over), bytes go to the shared thread.
  private func handsOver(_ count: Int) -> Bool {
    fedSinceReset += Int64(count)
    return pending != nil || fedSinceReset > inlineLimit
  }

  public func update(_ buffer: UnsafeRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    if handsOver(buffer.count) {
      pending = HashRing.shared.feed(context, buffer)
    } else {
      _ = sf_sha256_update(context.ctx, base, buffer.count)
    }
  }

  public func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  /// `buffer` was just written at `offset` of the file `file` reads: hashed
  /// here while under the inline limit, else read back from the file by
  /// the shared thread (no copy on the caller's thread).
  /// (`file` is asked for only then; without one, the bytes are copied over.)
  public func update(
    _ buffer: UnsafeRawBufferPointer, writtenAt offset: Int64, in file: @autoclosure () -> FileReader?
  ) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    if handsOver(buffer.count) {
      if let f = file() {
        pending = HashRing.shared.feed(context, file: f, offset..<(offset + Int64(buffer.count)))
      } else {
        pending = HashRing.shared.feed(context, buffer)
      }
    } else {
      _ = sf_sha256_update(context.ctx, base, buffer.count)
    }
  }

  /// Bytes of a file, already written, that the shared thread reads back and
  /// hashes after everything handed over before them.
  public func update(readingBack range: Range<Int64>, from file: FileReader) {
    guard !range.isEmpty else { return }
    fedSinceReset += Int64(range.count)
    pending = HashRing.shared.feed(context, file: file, range)
  }

  /// Waits until every piece handed over for this hasher is hashed; the
  /// context is then the owner's alone again.
  private func drain() {
    guard let p = pending else { return }
    HashRing.shared.wait(until: p)
    pending = nil
  }

  /// Starts over (a server that ignored Range sends the whole body again).
  public func reset() {
    guard let made else { return }  // nothing fed yet: already as new
    drain()
    fedSinceReset = 0
    made.unreadable = nil
    _ = sf_sha256_reset(made.ctx)
  }

  /// The digest as lower-case hex, or nil when a range handed over could not
  /// be read back (`unreadable` says why); the hasher is reset afterwards.
  public func finish() -> String? {
    drain()
    if let made, made.unreadable != nil {
      unreadable = made.unreadable
      reset()
      return nil
    }
    unreadable = nil
    var out = [UInt8](repeating: 0, count: 32)
    _ = sf_sha256_final(context.ctx, &out)
    reset()
    var hex = [UInt8]()
    hex.reserveCapacity(64)
    for b in out { Hex.append(UInt64(b), digits: 2, to: &hex) }
    return String(decoding: hex, as: UTF8.self)
  }

  /// Why the last `finish` gave no digest: the errno of the read back that
  /// failed, or nil for a file shorter than the bytes said written to it.
  public private(set) var unreadable: HashContext.ReadFailure?

  /// SHA-256 (hex) of the first `size` bytes of a file, never read through a
  /// symlink; nil when it cannot be read.
  public static func digest(ofFileAt path: String, size: Int64) -> String? {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    let hasher = SHA256Hasher()
    return hasher.update(fd: fd, length: size) ? hasher.finish() : nil
  }

  /// Feeds `length` bytes of an open file from `start`, read here (a
  /// partial being resumed). Returns false on a read error or when the file
  /// is shorter.
  public func update(fd: Int32, from start: Int64 = 0, length: Int64) -> Bool {
    var buf = [UInt8](repeating: 0, count: Int(min(1 << 20, max(length, 1))))
    var done: Int64 = 0
    while done < length {
      let want = Int(min(Int64(buf.count), length - done))
      let failed = buf.withUnsafeMutableBytes {
        FileReader.read(fd, into: $0.baseAddress!, count: want, at: start + done)
      }
      guard failed == nil else { return false }
      buf.withUnsafeBytes { update(UnsafeRawBufferPointer(rebasing: $0[0..<want])) }
      done += Int64(want)
    }
    return true
  }
}

/// A descriptor of its own for reading a file back (a duplicate, so the
/// file's owner may close its own at any time): closed when the last piece
/// and owner let go of it, so a number reused for another file is never
/// read in its place.
public final class FileReader: @unchecked Sendable {
  let fd: Int32

  /// Nil when no descriptor is left (EMFILE): the caller hashes inline.
  public init?(duplicating fd: Int32) {
    let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
    guard copy >= 0 else { return nil }
    self.fd = copy
  }

  deinit { close(fd) }

  /// Reads `count` bytes at `offset` into `to`, all of them: the errno of a
  /// failed read, `.short` when the file ends first.
  func read(into to: UnsafeMutableRawPointer, count: Int, at offset: Int64) -> HashContext.ReadFailure? {
    Self.read(fd, into: to, count: count, at: offset)
  }

  /// `read(into:count:at:)` on any descriptor.
  static func read(_ fd: Int32, into to: UnsafeMutableRawPointer, count: Int, at offset: Int64)
    -> HashContext.ReadFailure?
  {
    var done = 0
    while done < count {
      let n = pread(fd, to.advanced(by: done), count - done, off_t(offset + Int64(done)))
      if n < 0 && errno == EINTR { continue }
      if n < 0 { return .errno(Errno(errno)) }
      if n == 0 { return .short }
      done += n
    }
    return nil
  }
}

/// A hasher's libcrypto context, freed with the hasher (after the shared
/// thread has hashed its pieces), and what went wrong reading its ranges back.
public final class HashContext: @unchecked Sendable {
  public enum ReadFailure: Sendable, Equatable {
    case errno(Errno)
    /// The file ended before the range handed over.
    case short
  }

  let ctx: OpaquePointer
  /// Set by the shared thread under the ring's lock; read by the owner after `wait`.
  var unreadable: ReadFailure?

  init() {
    guard let c = sf_sha256_new() else { fatalError("libcrypto cannot create a SHA-256 context") }
    ctx = c
  }

  deinit { sf_sha256_free(ctx) }
}

/// The pieces hashers hand over, and the one thread that hashes them, each
/// into its own hasher's context, in the order handed over. A piece is
/// bytes in a bounded ring (`capacity`; a feeder that outruns the hashing
/// waits for room) or a range of a file the thread reads back (at most
/// `fileLagLimit` bytes of them unhashed, so the pages are still in the
/// page cache when they are read). Any thread may feed, one at a time; the
/// feeder copies into [tail, head + capacity) and the thread hashes
/// [head, tail), both without the lock, and each only then moves its end.
final class HashRing: @unchecked Sendable {
  static let shared = HashRing()
  static let capacity: Int64 = 4 << 20
  static let fileLagLimit: Int64 = 32 << 20
  /// What the thread reads a file range into, a piece at a time.
  static let readSize = 256 << 10

  private enum Source {
    /// Ring bytes up to this ring position.
    case ring(end: Int64)
    /// A file's bytes [offset, end) not yet hashed.
    case file(FileReader, offset: Int64, end: Int64)
  }

  private let lock = Lock()
  private let feeding = Lock()
  private var started = false
  private var ring: UnsafeMutableRawPointer?
  /// Ring positions (bytes since the start): hashed up to head, handed over up to tail.
  private var head: Int64 = 0
  private var tail: Int64 = 0
  /// File bytes handed over and not yet hashed.
  private var fileLag: Int64 = 0
  /// Whose bytes are where, in order; `next` is the one being hashed.
  private var pieces: [(context: HashContext, source: Source)] = []
  private var next = 0
  /// Pieces finished before `pieces[0]`: a piece's number is `done + index`.
  private var done: Int64 = 0
  /// Callers in `wait(until:)`: the thread then hashes whatever is handed
  /// over, however little (see `batched`).
  private var drainers = 0
  /// Times the thread woke to bytes after waiting for them (tests).
  var wakeups: Int { lock.locked { wokeUp } }
  private var wokeUp = 0

  /// Bytes handed over and not yet hashed, in the ring and in files.
  private var owed: Int64 { tail - head + fileLag }

  /// Whether the thread waits for more: it waits until `readSize` bytes are
  /// owed, or someone waits for them. Woken for every piece, it would hash
  /// each as it came and sleep again: a body over HTTP/2 arrives 16 KiB at
  /// a time, and each piece would cost two wake-ups and a read of its own.
  private var batched: Bool { drainers == 0 && owed < Int64(Self.readSize) }

  private func startIfNeeded() {
    guard !started else { return }
    started = true
    startThread { [self] in work() }
  }

  /// Copies `buffer` in for `context`; returns the number of its last piece.
  /// The copy is made without the ring's lock, so the hashing thread takes
  /// its next piece meanwhile; feeders take turns (`feeding`), so the room
  /// one copies into is its own.
  func feed(_ context: HashContext, _ buffer: UnsafeRawBufferPointer) -> Int64 {
    feeding.locked {
      var copied = 0
      var number: Int64 = 0
      while copied < buffer.count {
        let (to, room) = lock.locked { () -> (UnsafeMutableRawPointer, Int) in
          startIfNeeded()
          if ring == nil { ring = .allocate(byteCount: Int(Self.capacity), alignment: 64) }
          while tail - head == Self.capacity { lock.wait(until: nil) }
          let at = Int(tail % Self.capacity)
          return (ring!.advanced(by: at), min(Int(Self.capacity - (tail - head)), Int(Self.capacity) - at))
        }
        let n = min(room, buffer.count - copied)
        to.copyMemory(from: buffer.baseAddress!.advanced(by: copied), byteCount: n)
        copied += n
        number = lock.locked {
          tail += Int64(n)
          if next < pieces.count, pieces[pieces.count - 1].context === context,
            case .ring = pieces[pieces.count - 1].source
          {
            pieces[pieces.count - 1].source = .ring(end: tail)
          } else {
            pieces.append((context, .ring(end: tail)))
          }
          if !batched { lock.signal() }
          return done + Int64(pieces.count - 1)
        }
      }
      return number
    }
  }

  /// Hands over `range` of `file` for `context`; returns the number of its
  /// piece. Waits while the thread is more than `fileLagLimit` behind.
  func feed(_ context: HashContext, file: FileReader, _ range: Range<Int64>) -> Int64 {
    lock.locked {
      startIfNeeded()
      while fileLag >= Self.fileLagLimit { lock.wait(until: nil) }
      fileLag += Int64(range.count)
      if next < pieces.count, pieces[pieces.count - 1].context === context,
        case .file(let f, let offset, let end) = pieces[pieces.count - 1].source, f === file,
        end == range.lowerBound
      {
        pieces[pieces.count - 1].source = .file(f, offset: offset, end: range.upperBound)
      } else {
        pieces.append((context, .file(file, offset: range.lowerBound, end: range.upperBound)))
      }
      if !batched { lock.signal() }
      return done + Int64(pieces.count - 1)
    }
  }

  /// File bytes handed over and not yet hashed (or skipped).
  var unhashedFileBytes: Int64 { lock.locked { fileLag } }

  /// Waits until piece `number` and every one before it are hashed.
  func wait(until number: Int64) {
    lock.locked {
      drainers += 1
      lock.signal()  // the thread may be waiting for a fuller batch
      while done + Int64(next) <= number { lock.wait(until: nil) }
      drainers -= 1
    }
  }

  /// One step of the thread's work, taken under the lock and done without it.
  private enum Step {
    case bytes(HashContext, UnsafeMutableRawPointer, Int)
    case file(HashContext, FileReader, offset: Int64, count: Int)
    /// A file range of a context whose earlier range could not be read: its digest is lost anyway.
    case skip
  }

  private func work() {
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.readSize, alignment: 64)
    while true {
      let step = lock.locked { () -> Step in
        if next == pieces.count || batched {
          while next == pieces.count || batched { lock.wait(until: nil) }
          wokeUp += 1
        }
        let piece = pieces[next]
        switch piece.source {
        case .ring(let end):
          let at = Int(head % Self.capacity)
          return .bytes(piece.context, ring!.advanced(by: at), min(Int(end - head), Int(Self.capacity) - at))
        case .file(let f, let offset, let end):
          if piece.context.unreadable != nil { return .skip }
          return .file(piece.context, f, offset: offset, count: Int(min(end - offset, Int64(Self.readSize))))
        }
      }
      var failure: HashContext.ReadFailure?
      switch step {
      case .bytes(let c, let from, let n): _ = sf_sha256_update(c.ctx, from, n)
      case .file(let c, let f, let offset, let n):
        failure = f.read(into: buffer, count: n, at: offset)
        if failure == nil { _ = sf_sha256_update(c.ctx, buffer, n) }
      case .skip: break
      }
      lock.locked { advance(past: step, failure: failure) }
    }
  }

  /// Moves past what `step` hashed (under the lock), and on to the next piece
  /// when this one is done.
  private func advance(past step: Step, failure: HashContext.ReadFailure?) {
    var finished = false
    switch step {
    case .bytes(_, _, let n):
      head += Int64(n)
      if case .ring(let end) = pieces[next].source { finished = head == end }
    case .file(let c, let f, let offset, let n):
      guard case .file(_, _, let end) = pieces[next].source else { break }
      if let failure {
        c.unreadable = failure
        fileLag -= end - offset
        finished = true
      } else {
        fileLag -= Int64(n)
        pieces[next].source = .file(f, offset: offset + Int64(n), end: end)
        finished = offset + Int64(n) == end
      }
    case .skip:
      // What the piece holds now: a feeder may have lengthened it meanwhile.
      if case .file(_, let offset, let end) = pieces[next].source { fileLag -= end - offset }
      finished = true
    }
    if finished { next += 1 }
    if next == pieces.count {
      done += Int64(pieces.count)
      pieces.removeAll(keepingCapacity: true)
      next = 0
    }
    lock.signal()
  }
}
