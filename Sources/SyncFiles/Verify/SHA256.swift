internal import CCrypto

#if canImport(Glibc)
  import Glibc
#endif

/// Streaming SHA-256 over libcrypto. Feed bytes as they arrive; `finish`
/// gives the digest. Not thread-safe: one owner at a time.
///
/// A body's first `inlineLimit` bytes (since the last reset) are hashed in
/// the caller's thread; what follows is copied into one bounded ring that
/// all hashers share, and one thread hashes it, piece by piece in the order
/// handed over (`HashRing`). So a download's receive-and-write and its
/// hashing overlap on two cores instead of adding up on the transfer
/// thread. Small bodies stay inline: a copy would cost more than the hash.
/// (Before, each large body had a thread and a ring of its own, which made
/// 64 bodies of 4 MiB slower than hashing inline; one shared thread and
/// ring do not: issue 15, W2.) `finish`, `reset` and `deinit` first wait
/// until this hasher's bytes in the ring are hashed.
public final class SHA256Hasher {
  /// Bytes hashed inline before the hashing moves to the shared thread.
  public static let defaultInlineLimit: Int64 = 256 << 10
  public let inlineLimit: Int64

  /// Made on first use: a run builds a hasher for every task, and in a
  /// steady run most tasks never hash a byte (their answer is a 304).
  private var made: State?
  private var state: State {
    if let made { return made }
    guard let c = sf_sha256_new() else { fatalError("libcrypto cannot create a SHA-256 context") }
    let s = State(ctx: c)
    made = s
    return s
  }
  private var fedSinceReset: Int64 = 0
  /// The ring's position after this hasher's last piece, while it has pieces there.
  private var pending: Int64?

  public init(inlineLimit: Int64 = SHA256Hasher.defaultInlineLimit) {
    self.inlineLimit = inlineLimit
  }

  deinit { drain() }

  public func update(_ buffer: UnsafeRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    fedSinceReset += Int64(buffer.count)
    if pending != nil || fedSinceReset > inlineLimit {
      pending = HashRing.shared.feed(state.ctx, buffer)
    } else {
      _ = sf_sha256_update(state.ctx, base, buffer.count)
    }
  }

  public func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  /// Waits until every byte handed to the ring for this hasher is hashed;
  /// the context is then the owner's alone again.
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
    _ = sf_sha256_reset(made.ctx)
  }

  /// The digest as lower-case hex; the hasher is reset afterwards.
  public func finish() -> String {
    drain()
    var out = [UInt8](repeating: 0, count: 32)
    _ = sf_sha256_final(state.ctx, &out)
    reset()
    var hex = [UInt8]()
    hex.reserveCapacity(64)
    for b in out { Hex.append(UInt64(b), digits: 2, to: &hex) }
    return String(decoding: hex, as: UTF8.self)
  }

  /// Feeds the first `length` bytes of an open file (a partial being resumed).
  /// Returns false on a read error or when the file is shorter.
  /// SHA-256 (hex) of the first `size` bytes of a file, never read through a
  /// symlink; nil when it cannot be read.
  public static func digest(ofFileAt path: String, size: Int64) -> String? {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    let hasher = SHA256Hasher()
    return hasher.update(fd: fd, length: size) ? hasher.finish() : nil
  }

  public func update(fd: Int32, from start: Int64 = 0, length: Int64) -> Bool {
    var buf = [UInt8](repeating: 0, count: Int(min(1 << 20, max(length, 1))))
    var done: Int64 = 0
    while done < length {
      let want = Int(min(Int64(buf.count), length - done))
      let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(start + done)) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { return false }
      buf.withUnsafeBytes { update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      done += Int64(n)
    }
    return true
  }

  /// The libcrypto context, freed with the hasher (after its ring bytes are hashed).
  private final class State {
    let ctx: OpaquePointer
    init(ctx: OpaquePointer) { self.ctx = ctx }
    deinit { sf_sha256_free(ctx) }
  }
}

/// The bytes hashers hand over past their inline limit, and the one thread
/// that hashes them, each piece into its own hasher's context, in the order
/// handed over. The ring is bounded (`capacity`): a feeder that outruns the
/// hashing waits for room. Any thread may feed, one at a time; the feeder
/// copies into [tail, head + capacity) and the thread hashes [head, tail),
/// both without the lock, and each only then moves its end.
final class HashRing: @unchecked Sendable {
  static let shared = HashRing()
  static let capacity: Int64 = 4 << 20

  private let lock = Lock()
  private let feeding = Lock()
  private var ring: UnsafeMutableRawPointer?
  /// Ring positions (bytes since the start): hashed up to head, handed over up to tail.
  private var head: Int64 = 0
  private var tail: Int64 = 0
  /// Whose bytes lie where: each piece's context and the position it ends at.
  private var pieces: [(ctx: OpaquePointer, end: Int64)] = []
  private var next = 0

  /// Copies `buffer` in for `ctx`; returns the position after it. The copy
  /// is made without the ring's lock, so the hashing thread takes its next
  /// piece meanwhile; feeders take turns (`feeding`), so the room one copies
  /// into is its own.
  func feed(_ ctx: OpaquePointer, _ buffer: UnsafeRawBufferPointer) -> Int64 {
    feeding.locked {
      var done = 0
      var end: Int64 = 0
      while done < buffer.count {
        let (to, room) = lock.locked { () -> (UnsafeMutableRawPointer, Int) in
          if ring == nil {
            ring = .allocate(byteCount: Int(Self.capacity), alignment: 64)
            startThread { [self] in work() }
          }
          while tail - head == Self.capacity { lock.wait(until: nil) }
          let at = Int(tail % Self.capacity)
          return (ring!.advanced(by: at), min(Int(Self.capacity - (tail - head)), Int(Self.capacity) - at))
        }
        let n = min(room, buffer.count - done)
        to.copyMemory(from: buffer.baseAddress!.advanced(by: done), byteCount: n)
        done += n
        end = lock.locked {
          tail += Int64(n)
          if next < pieces.count, pieces[pieces.count - 1].ctx == ctx {
            pieces[pieces.count - 1].end = tail
          } else {
            pieces.append((ctx, tail))
          }
          lock.signal()
          return tail
        }
      }
      return end
    }
  }

  /// Waits until every byte before `position` is hashed.
  func wait(until position: Int64) {
    lock.locked {
      while head < position { lock.wait(until: nil) }
    }
  }

  private func work() {
    while true {
      let (ctx, from, n) = lock.locked { () -> (OpaquePointer, UnsafeMutableRawPointer, Int) in
        while next == pieces.count { lock.wait(until: nil) }
        let at = Int(head % Self.capacity)
        let n = min(Int(pieces[next].end - head), Int(Self.capacity) - at)
        return (pieces[next].ctx, ring!.advanced(by: at), n)
      }
      _ = sf_sha256_update(ctx, from, n)
      lock.locked {
        head += Int64(n)
        if head == pieces[next].end { next += 1 }
        if next == pieces.count {
          pieces.removeAll(keepingCapacity: true)
          next = 0
        }
        lock.signal()
      }
    }
  }
}
