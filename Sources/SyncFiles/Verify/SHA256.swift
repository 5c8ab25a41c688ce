internal import CCrypto

#if canImport(Glibc)
  import Glibc
#endif

/// Streaming SHA-256 over libcrypto. Feed bytes as they arrive; `finish`
/// gives the digest. Not thread-safe: one owner at a time.
///
/// Bodies are hashed in the caller's thread until more than `inlineLimit`
/// bytes have arrived since the last reset; then the hasher copies what
/// follows into a bounded ring and hashes it on a thread of its own, so a
/// large download's receive-and-write and its hashing overlap instead of
/// adding up. Smaller bodies stay inline: when many of them transfer at once
/// every core is busy already, and a thread would only add a copy (measured:
/// 64 × 4 MiB ran slower with a thread per body). The ring bounds memory (`ringBytes`); a feeder that outruns
/// the hashing waits for room. `finish` stops the thread and frees the ring.
public final class SHA256Hasher {
  /// Bytes hashed inline before the hashing moves to its own thread.
  public static let defaultInlineLimit: Int64 = 16 << 20
  public let inlineLimit: Int64
  static let ringBytes = 4 << 20

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
  private var threaded = false

  public init(inlineLimit: Int64 = SHA256Hasher.defaultInlineLimit) {
    self.inlineLimit = inlineLimit
  }

  deinit { made?.stop() }

  public func update(_ buffer: UnsafeRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    fedSinceReset += Int64(buffer.count)
    if !threaded && fedSinceReset > inlineLimit {
      threaded = true
      state.startWorker()
    }
    if threaded {
      state.feed(buffer)
    } else {
      _ = sf_sha256_update(state.ctx, base, buffer.count)
    }
  }

  public func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  /// Starts over (a server that ignored Range sends the whole body again).
  public func reset() {
    guard let made else { return }  // nothing fed yet: already as new
    if threaded { made.drain() }
    fedSinceReset = 0
    _ = sf_sha256_reset(made.ctx)
  }

  /// The digest as lower-case hex; the hasher is reset afterwards.
  public func finish() -> String {
    if threaded {
      // Drained, the thread and its ring go: a finished hasher holds no memory.
      state.stop()
      threaded = false
    }
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

  /// The context and the ring the feeder and the hashing thread share. The
  /// feeder writes ring bytes [tail, head + capacity); the worker reads
  /// [head, tail) without the lock (the feeder never writes there) and only
  /// then moves head. The context belongs to the worker while bytes are in
  /// the ring and to the owner once it has drained.
  private final class State: @unchecked Sendable {
    let ctx: OpaquePointer
    private let lock = Lock()
    private var ring: UnsafeMutableRawPointer? = nil
    private var head: Int64 = 0
    private var tail: Int64 = 0
    /// Bumped to stop the current worker (it exits once the ring is empty).
    private var generation = 0
    private var running = false

    init(ctx: OpaquePointer) { self.ctx = ctx }

    deinit {
      sf_sha256_free(ctx)
      ring?.deallocate()
    }

    func startWorker() {
      let mine = lock.locked { () -> Int? in
        guard !running else { return nil }
        running = true
        if ring == nil { ring = .allocate(byteCount: SHA256Hasher.ringBytes, alignment: 64) }
        return generation
      }
      if let mine { startThread { [self] in work(generation: mine) } }
    }

    func feed(_ buffer: UnsafeRawBufferPointer) {
      let capacity = Int64(SHA256Hasher.ringBytes)
      var done = 0
      while done < buffer.count {
        let (to, room) = lock.locked { () -> (UnsafeMutableRawPointer, Int) in
          while tail - head == capacity { lock.wait(until: nil) }
          let at = Int(tail % capacity)
          return (ring!.advanced(by: at), min(Int(capacity - (tail - head)), Int(capacity) - at))
        }
        let n = min(room, buffer.count - done)
        to.copyMemory(from: buffer.baseAddress!.advanced(by: done), byteCount: n)
        done += n
        lock.locked {
          tail += Int64(n)
          lock.signal()
        }
      }
    }

    /// Waits until every byte fed has been hashed.
    func drain() {
      lock.locked {
        while head != tail { lock.wait(until: nil) }
      }
    }

    /// Drains, then stops the worker and frees the ring.
    func stop() {
      lock.locked {
        while head != tail { lock.wait(until: nil) }
        guard running else { return }
        running = false
        generation += 1
        ring?.deallocate()
        ring = nil
        head = 0
        tail = 0
        lock.signal()
      }
    }

    private func work(generation mine: Int) {
      let capacity = Int64(SHA256Hasher.ringBytes)
      while true {
        let next = lock.locked { () -> (UnsafeMutableRawPointer, Int)? in
          while head == tail && generation == mine { lock.wait(until: nil) }
          if generation != mine { return nil }
          let at = Int(head % capacity)
          return (ring!.advanced(by: at), min(Int(tail - head), Int(capacity) - at))
        }
        guard let (from, n) = next else { return }
        _ = sf_sha256_update(ctx, from, n)
        lock.locked {
          head += Int64(n)
          lock.signal()
        }
      }
    }
  }
}
