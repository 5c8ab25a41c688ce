internal import CCrypto
import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// A zsync control file as `zsyncmake` 0.6.2 writes it (SPEC §10.1): text
/// headers, a blank line, then per block its weak rolling sum (the last
/// `rsumBytes` of `a` and `b`, 16 bits each, big-endian) and the first
/// `checksumBytes` of its MD4, a short last block zero-padded for both.
public struct ZsyncIndex: Sendable, Equatable {
  public var filename: String?
  public var mtime: String?
  public var blockSize: Int
  public var length: Int64
  /// Consecutive blocks a match needs, weak-sum bytes, strong-sum bytes.
  public var seqMatches: Int
  public var rsumBytes: Int
  public var checksumBytes: Int
  public var urls: [String]
  /// Lower-case hex of the whole file's SHA-1.
  public var sha1: String
  /// `rsumBytes + checksumBytes` per block.
  public var blocks: [UInt8]

  public var blockCount: Int { Int((length + Int64(blockSize) - 1) / Int64(blockSize)) }

  /// The hash lengths `zsyncmake` chooses for a file (its formulas, so that
  /// clients size their tables as for its own files).
  public static func hashLengths(length: Int64, blockSize: Int) -> (seq: Int, rsum: Int, checksum: Int) {
    let len = Double(max(length, 1))
    let bs = Double(blockSize)
    // Blocks in whole numbers, as zsyncmake divides its integers.
    let whole = Double(max(length, 1) / Int64(blockSize))
    // One block matches alone; more need two consecutive blocks to match.
    let seq: Double = length > Int64(blockSize) ? 2 : 1
    var rsum = Int((7.9 + ((log(len) + log(bs)) / log(2) - 8.6) / seq) / 8)
    rsum = min(4, max(2, rsum))
    var checksum = Int((7.9 + (20 + (log(len) + log(1 + whole)) / log(2)) / seq) / 8)
    let checksum2 = Int((7.9 + (20 + log(1 + whole) / log(2))) / 8)
    checksum = max(checksum, checksum2)
    return (Int(seq), rsum, checksum)
  }

  /// The rolling sum of one whole block (`a`: the bytes' sum; `b`: each
  /// byte weighted by its distance from the block's end), modulo 2^16.
  public static func rsum(_ block: UnsafeRawBufferPointer) -> (a: UInt16, b: UInt16) {
    var a: UInt16 = 0
    var b: UInt16 = 0
    var weight = UInt16(truncatingIfNeeded: block.count)
    for c in block {
      a &+= UInt16(c)
      b &+= weight &* UInt16(c)
      weight &-= 1
    }
    return (a, b)
  }

  /// The index of the file at `path`, read once from its start.
  public static func make(fileAt path: String, blockSize: Int, url: String, filename: String) -> Result<
    ZsyncIndex, VerifyError
  > {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(.unreadable(path: path, errno: Errno(errno))) }
    defer { close(fd) }
    var st = stat()
    fstat(fd, &st)
    let size = Int64(st.st_size)
    let (seq, rsumBytes, checksumBytes) = hashLengths(length: size, blockSize: blockSize)
    guard let sha = sf_sha1_new() else { return .failure(.toolFailed(tool: "libcrypto", why: "no SHA-1")) }
    defer { sf_sha256_free(sha) }
    var blocks: [UInt8] = []
    blocks.reserveCapacity(Int((size + Int64(blockSize) - 1) / Int64(blockSize)) * (rsumBytes + checksumBytes))
    var buffer = [UInt8](repeating: 0, count: blockSize)
    var md4 = [UInt8](repeating: 0, count: 16)
    var total: Int64 = 0
    while true {
      var got = 0
      while got < blockSize {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, blockSize - got) }
        if n < 0 && errno == EINTR { continue }
        guard n >= 0 else { return .failure(.unreadable(path: path, errno: Errno(errno))) }
        if n == 0 { break }
        got += n
      }
      if got == 0 { break }
      total += Int64(got)
      _ = buffer.withUnsafeBytes { sf_sha256_update(sha, $0.baseAddress, got) }
      // A short last block is summed as if zero-padded.
      for i in got..<blockSize { buffer[i] = 0 }
      let (a, b) = buffer.withUnsafeBytes { rsum($0) }
      let weak: [UInt8] = [UInt8(a >> 8), UInt8(a & 0xFF), UInt8(b >> 8), UInt8(b & 0xFF)]
      blocks += weak.suffix(rsumBytes)
      guard
        buffer.withUnsafeBytes({ p in
          md4.withUnsafeMutableBufferPointer { sf_md4(p.baseAddress, blockSize, $0.baseAddress) }
        }) == 1
      else {
        return .failure(
          .toolFailed(tool: "libcrypto", why: "MD4 is unavailable (OpenSSL's legacy provider is missing)"))
      }
      blocks += md4.prefix(checksumBytes)
      if got < blockSize { break }
    }
    var digest = [UInt8](repeating: 0, count: 64)
    let n = digest.withUnsafeMutableBufferPointer { sf_digest_final(sha, $0.baseAddress) }
    guard n == 20 else { return .failure(.toolFailed(tool: "libcrypto", why: "SHA-1 could not be finished")) }
    return .success(
      ZsyncIndex(
        filename: filename, mtime: Self.mtime(Int64(st.st_mtim.tv_sec)), blockSize: blockSize, length: total,
        seqMatches: seq, rsumBytes: rsumBytes, checksumBytes: checksumBytes, urls: [url],
        sha1: Hex.string(Array(digest.prefix(20))), blocks: blocks))
  }

  /// The control file's bytes, headers in `zsyncmake`'s order.
  public var bytes: [UInt8] {
    var text = "zsync: 0.6.2\n"
    if let filename { text += "Filename: \(filename)\n" }
    if let mtime { text += "MTime: \(mtime)\n" }
    text += "Blocksize: \(blockSize)\nLength: \(length)\nHash-Lengths: \(seqMatches),\(rsumBytes),\(checksumBytes)\n"
    for u in urls { text += "URL: \(u)\n" }
    text += "SHA-1: \(sha1)\n\n"
    return Array(text.utf8) + blocks
  }

  /// `Wed, 02 Dec 2026 05:56:07 +0000`, as zsyncmake's strftime writes it
  /// in UTC: an HTTP date with the zone as a number.
  static func mtime(_ seconds: Int64) -> String {
    String(HTTPDate.format(Timestamp(seconds: seconds)).dropLast(3)) + "+0000"
  }

}

extension ZsyncIndex {
  /// Why a fetched control file cannot be used (SPEC §10.1): each says what
  /// is wrong with it, and none costs more memory than its blocks need.
  public enum ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAnIndex
    case missingHeader(String)
    case badHeader(name: String, value: String)
    case blockSize(Int)
    case tooLarge(length: Int64, maxBytes: Int64)
    /// The block table is not `blocks × (rsum + checksum)` bytes.
    case blockTable(expected: Int64, got: Int)
    case compressed

    public var description: String {
      switch self {
      case .notAnIndex: return "it is not a zsync control file (no 'zsync:' first line)"
      case .missingHeader(let h): return "it has no \(h) header"
      case .badHeader(let name, let value): return "its \(name) header '\(value)' cannot be read"
      case .blockSize(let b): return "its block size \(b) is not a power of two from 512 B to 1 MiB"
      case .tooLarge(let l, let m): return "it describes \(l) bytes, more than max_bytes (\(m))"
      case .blockTable(let e, let g):
        return g > e
          ? "it holds \(g) bytes of block checksums where its Length needs \(e)"
          : "its block checksums stop after \(g) bytes where its Length needs \(e)"
      case .compressed: return "it describes a gzip file's content (Z-Map2), which is not supported"
      }
    }
  }

  /// A control file's bytes, checked: headers first (at most 64 KiB of
  /// them), then exactly as many block bytes as `Length` and `Blocksize` need.
  public static func parse(_ bytes: [UInt8], maxBytes: Int64? = nil) -> Result<ZsyncIndex, ParseError> {
    let headLimit = min(bytes.count, 64 << 10)
    guard let end = bytes[..<headLimit].firstRange(of: [0x0A, 0x0A]) else {
      return .failure(bytes.starts(with: Array("zsync:".utf8)) ? .missingHeader("end of headers") : .notAnIndex)
    }
    let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).split(separator: "\n")
    guard let first = lines.first, first.hasPrefix("zsync:") else { return .failure(.notAnIndex) }
    var fields: [String: String] = [:]
    var urls: [String] = []
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let key = String(line[..<colon])
      let value = String(line[line.index(after: colon)...]).trimmingSpaces()
      if key == "URL" { urls.append(value) } else { fields[key] = value }
    }
    if fields["Z-Map2"] != nil { return .failure(.compressed) }
    func number(_ name: String) -> Result<Int64, ParseError> {
      guard let v = fields[name] else { return .failure(.missingHeader(name)) }
      guard let n = Int64(v), n >= 0 else { return .failure(.badHeader(name: name, value: v)) }
      return .success(n)
    }
    let blockSize: Int64
    let length: Int64
    switch (number("Blocksize"), number("Length")) {
    case (.failure(let e), _), (_, .failure(let e)): return .failure(e)
    case (.success(let b), .success(let l)): (blockSize, length) = (b, l)
    }
    guard blockSize >= 512, blockSize <= 1 << 20, blockSize & (blockSize - 1) == 0 else {
      return .failure(.blockSize(Int(clamping: blockSize)))
    }
    if let maxBytes, length > maxBytes { return .failure(.tooLarge(length: length, maxBytes: maxBytes)) }
    guard let h = fields["Hash-Lengths"] else { return .failure(.missingHeader("Hash-Lengths")) }
    let parts = h.split(separator: ",").compactMap { Int($0) }
    guard parts.count == 3, (1...2).contains(parts[0]), (1...4).contains(parts[1]), (3...16).contains(parts[2]) else {
      return .failure(.badHeader(name: "Hash-Lengths", value: h))
    }
    guard let sha1 = fields["SHA-1"]?.lowercased(), sha1.utf8.count == 40, Hex.bytes(sha1) != nil else {
      return .failure(fields["SHA-1"].map { .badHeader(name: "SHA-1", value: $0) } ?? .missingHeader("SHA-1"))
    }
    let count = (length + blockSize - 1) / blockSize
    let expected = count * Int64(parts[1] + parts[2])
    let table = bytes.count - end.upperBound
    guard Int64(table) == expected else { return .failure(.blockTable(expected: expected, got: table)) }
    return .success(
      ZsyncIndex(
        filename: fields["Filename"], mtime: fields["MTime"], blockSize: Int(blockSize), length: length,
        seqMatches: parts[0], rsumBytes: parts[1], checksumBytes: parts[2], urls: urls, sha1: sha1,
        blocks: Array(bytes[end.upperBound...])))
  }
}
