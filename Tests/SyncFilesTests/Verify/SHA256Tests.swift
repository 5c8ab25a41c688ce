import CCrypto
import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The streaming hasher against `sha256sum`, below and far above the size
/// at which it hands the hashing to the shared thread (1 MiB here, so a few
/// MiB cross it; the default is crossed too).
@Suite struct SHA256Tests {
  /// `bytes` in irregular pieces (1 byte up to 700 KiB), as a network would
  /// deliver them, each with its offset.
  func inPieces(_ bytes: [UInt8], _ each: (UnsafeRawBufferPointer, Int) -> Void) {
    let sizes = [1, 7, 16_384, 262_144, 700_001, 3, 65_537]
    var at = 0
    var k = 0
    bytes.withUnsafeBytes { all in
      while at < all.count {
        let n = min(sizes[k % sizes.count], all.count - at)
        each(UnsafeRawBufferPointer(rebasing: all[at..<at + n]), at)
        at += n
        k += 1
      }
    }
  }

  func feed(_ h: SHA256Hasher, _ bytes: [UInt8]) {
    inPieces(bytes) { piece, _ in h.update(piece) }
  }

  /// Hands over to the shared thread after 1 MiB, so bodies of a few MiB exercise the ring.
  func small() -> SHA256Hasher { SHA256Hasher(inlineLimit: 1 << 20) }

  /// A hasher makes its libcrypto context on first use (most tasks of a steady
  /// run never hash a byte): unused, reset before any byte, or reused, it
  /// still gives the right digests.
  @Test func aHasherUnusedOrResetBeforeAnyByteGivesTheRightDigests() {
    let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    #expect(SHA256Hasher().finish() == empty)
    let h = SHA256Hasher()
    h.reset()
    h.update(Array("abc".utf8))
    #expect(h.finish() == abc)
    h.update(Array("abc".utf8))
    #expect(h.finish() == abc)
    #expect(h.finish() == empty)
  }

  @Test func smallAndLargeBodiesMatchSha256sum() {
    let h = small()
    for (count, seed) in [(0, 1), (1000, 2), (1 << 20, 3), (21 << 20, 4)] {
      let bytes = testBytes(count, seed: UInt64(seed))
      feed(h, bytes)
      #expect(h.finish() == sha256Hex(bytes), "\(count) bytes")
    }
    let big = testBytes(Int(SHA256Hasher.defaultInlineLimit) + 5 << 20, seed: 9)
    let h2 = SHA256Hasher()
    feed(h2, big)
    #expect(h2.finish() == sha256Hex(big), "past the default limit")
  }

  @Test func aResetInTheMiddleOfALargeBodyStartsOver() {
    let h = small()
    let discarded = testBytes(9 << 20, seed: 5)
    let body = testBytes(6 << 20, seed: 6)
    feed(h, discarded)
    h.reset()
    feed(h, body)
    #expect(h.finish() == sha256Hex(body))
    // And the same hasher serves the next, small, body inline.
    h.update([0x61, 0x62, 0x63])
    #expect(h.finish() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  }

  @Test func aResumedPartialIsHashedFromItsFileThenContinued() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let bytes = testBytes(5 << 20, seed: 7)
    let path = dir + "/partial"
    let held = 3 << 20
    try Data(bytes[..<held]).write(to: URL(fileURLWithPath: path))
    let fd = open(path, O_RDONLY)
    defer { close(fd) }
    let h = small()
    #expect(h.update(fd: fd, length: Int64(held)))
    feed(h, Array(bytes[held...]))
    #expect(h.finish() == sha256Hex(bytes))
    #expect(!h.update(fd: fd, length: Int64(held + 1)), "a file shorter than claimed is refused")
  }

  /// The transfer thread's pattern (issue 15, W2): pieces of eight bodies in
  /// turn, all past the inline limit, so the pieces of different hashers
  /// alternate in the one shared ring; each digest is its own body's. A
  /// hasher dropped with bytes still in the ring waits for them (its
  /// context outlives them), and the others are not disturbed.
  @Test func interleavedBodiesInTheSharedRingEachGetTheirOwnDigest() {
    let bodies = (0..<8).map { testBytes(2 << 20 + $0 * 4099, seed: UInt64(30 + $0)) }
    let hashers = bodies.map { _ in SHA256Hasher(inlineLimit: 64 << 10) }
    var dropped: SHA256Hasher? = SHA256Hasher(inlineLimit: 0)
    let piece = 48_000
    for at in stride(from: 0, to: bodies.map(\.count).max()!, by: piece) {
      for (h, b) in zip(hashers, bodies) where at < b.count {
        b.withUnsafeBytes { h.update(UnsafeRawBufferPointer(rebasing: $0[at..<min(at + piece, b.count)])) }
      }
      if at == 10 * piece { dropped = nil } else { dropped?.update(Array(bodies[0][0..<piece])) }
    }
    #expect(dropped == nil)
    for (h, b) in zip(hashers, bodies).reversed() { #expect(h.finish() == sha256Hex(b)) }
  }

  @Test func manyHashersAtOnceEachGetTheirOwnDigest() async {
    let bodies = (0..<6).map { testBytes(3 << 20, seed: UInt64(10 + $0)) }
    let digests = await withTaskGroup(of: (Int, String).self) { group in
      for (i, b) in bodies.enumerated() {
        group.addTask {
          let h = small()
          feed(h, b)
          return (i, h.finish() ?? "unreadable")
        }
      }
      var out = [String](repeating: "", count: bodies.count)
      for await (i, d) in group { out[i] = d }
      return out
    }
    #expect(digests == bodies.map(sha256Hex))
  }

  /// Writes `bytes` to a new file at `path` in the pieces `feed` uses, each
  /// handed to `h` as written there (read back by the shared thread past
  /// the inline limit).
  func writeAndFeed(_ h: SHA256Hasher, _ bytes: [UInt8], path: String) throws -> FileReader {
    let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    #expect(fd >= 0)
    defer { close(fd) }
    let reader = try #require(FileReader(duplicating: fd))
    inPieces(bytes) { piece, at in
      #expect(pwrite(fd, piece.baseAddress, piece.count, off_t(at)) == piece.count)
      h.update(piece, writtenAt: Int64(at), in: reader)
    }
    return reader
  }

  /// Issue 15, W3: past the inline limit the hashing thread reads written
  /// bytes back from the file instead of being handed a copy; the digest is
  /// the file's, with another hasher's ring bytes in between, and the file's
  /// own descriptor closed (and its number reused) before the hashing ends.
  @Test func bytesWrittenToAFileAreReadBackForTheDigest() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let body = testBytes(9 << 20, seed: 41)
    let other = testBytes(5 << 20, seed: 42)
    let h = small()
    let g = small()
    feed(g, Array(other[..<(2 << 20)]))
    let reader = try writeAndFeed(h, body, path: dir + "/a")
    feed(g, Array(other[(2 << 20)...]))
    // A new file takes the number the writer's descriptor had.
    let reused = open(dir + "/b", O_RDWR | O_CREAT, 0o600)
    defer { close(reused) }
    #expect(write(reused, "not the body", 12) == 12)
    #expect(h.finish() == sha256Hex(body))
    #expect(g.finish() == sha256Hex(other))
    // Ranges completed out of order are handed over as ranges to read back.
    h.update(Array(body[..<1000]))
    h.update(readingBack: 1000..<Int64(body.count), from: reader)
    #expect(h.finish() == sha256Hex(body))
  }

  /// A range that cannot be read back gives no digest (never one of other
  /// bytes), says why, and the hasher serves the next body afresh.
  @Test func aRangeThatCannotBeReadBackGivesNoDigest() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let body = testBytes(3 << 20, seed: 43)
    let h = small()
    let reader = try writeAndFeed(h, body, path: dir + "/a")
    h.update(readingBack: Int64(body.count)..<Int64(body.count + 10), from: reader)
    h.update(readingBack: Int64(body.count + 10)..<Int64(body.count + 20), from: reader)
    #expect(h.finish() == nil)
    #expect(h.unreadable == .short)
    let folder = open(dir, O_RDONLY | O_DIRECTORY)
    defer { close(folder) }
    let notAFile = try #require(FileReader(duplicating: folder))
    h.update(readingBack: 0..<10, from: notAFile)
    #expect(h.finish() == nil)
    #expect(h.unreadable == .errno(Errno(EISDIR)))
    feed(h, body)
    #expect(h.finish() == sha256Hex(body))
    #expect(h.unreadable == nil)
  }

  /// A body that arrives 16 KiB at a time (HTTP/2's frames), each piece
  /// written and handed over after the thread has caught up: the thread
  /// wakes for each `readSize` of them, not for each piece (issue 15: 256
  /// MiB over TLS cost 22,002 `futex` calls). Whatever is owed when someone
  /// waits is hashed at once, however little, and the digest is the body's.
  @Test func theThreadWakesForBatchesNotForEachPiece() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let piece = 16 << 10
    let count = 64
    let body = testBytes(piece * count + 100, seed: 44)
    let fd = open(dir + "/a", O_RDWR | O_CREAT, 0o600)
    defer { close(fd) }
    #expect(write(fd, body, body.count) == body.count)
    let reader = try #require(FileReader(duplicating: fd))
    let ring = HashRing()
    let context = HashContext()
    var last: Int64 = 0
    for k in 0..<count {
      last = ring.feed(context, file: reader, Int64(k * piece)..<Int64((k + 1) * piece))
      usleep(1_000)  // time enough to hash one piece and wait again
    }
    last = ring.feed(context, file: reader, Int64(count * piece)..<Int64(body.count))
    ring.wait(until: last)
    // 1 MiB and 100 bytes: four full batches and the rest for the waiter.
    #expect(ring.wakeups <= 6, "woke \(ring.wakeups) times for \(count + 1) pieces")
    #expect(ring.unhashedFileBytes == 0)
    var digest = [UInt8](repeating: 0, count: 32)
    _ = sf_sha256_final(context.ctx, &digest)
    #expect(digest.map { String(format: "%02x", $0) }.joined() == sha256Hex(body))
    // Less than a batch, with a waiter: hashed at once, no wait for more.
    let small = HashContext()
    ring.wait(until: ring.feed(small, file: reader, 0..<10))
    #expect(ring.unhashedFileBytes == 0)
  }

  /// Ranges of a context whose earlier range could not be read are skipped,
  /// and nothing stays owed for them, also for a range lengthened by a
  /// feeder while the thread skipped it: a count that drifted up would in
  /// the end hold every feeder waiting for room that never comes.
  @Test func skippedRangesLeaveNothingOwed() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let folder = open(dir, O_RDONLY | O_DIRECTORY)
    defer { close(folder) }
    let notAFile = try #require(FileReader(duplicating: folder))
    let ring = HashRing()
    let context = HashContext()
    var last: Int64 = 0
    for i in 0..<100_000 { last = ring.feed(context, file: notAFile, Int64(i * 10)..<Int64(i * 10 + 10)) }
    ring.wait(until: last)
    #expect(context.unreadable == .errno(Errno(EISDIR)))
    #expect(ring.unhashedFileBytes == 0)
  }
}
