internal import CCrypto
import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// A hasher's libcrypto context, freed with the hasher (after the shared
/// thread has hashed its pieces), and what went wrong reading its ranges back.
public final class HashContext: @unchecked Sendable {
  public enum ReadFailure: Sendable, Equatable {
    case errno(Errno)
    /// The file ended before the range handed over.
    case short
  }

  package let ctx: OpaquePointer
  /// Set by the shared thread under the ring's lock; read by the owner after `wait`.
  package var unreadable: ReadFailure?

  package init() {
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
package final class HashRing: @unchecked Sendable {
  package static let shared = HashRing()
  package static let capacity: Int64 = 4 << 20
  package static let fileLagLimit: Int64 = 32 << 20
  /// What the thread reads a file range into, a piece at a time.
  package static let readSize = 256 << 10

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
  package var wakeups: Int { lock.locked { wokeUp } }
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
          if !batched { lock.broadcast() }
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
      if !batched { lock.broadcast() }
      return done + Int64(pieces.count - 1)
    }
  }

  /// File bytes handed over and not yet hashed (or skipped).
  var unhashedFileBytes: Int64 { lock.locked { fileLag } }

  /// Waits until piece `number` and every one before it are hashed.
  func wait(until number: Int64) {
    lock.locked {
      drainers += 1
      lock.broadcast()  // the thread may be waiting for a fuller batch
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
    lock.broadcast()
  }
}
