internal import CCrypto
import SyncFilesCore

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
