import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
internal import CCrypto

#if canImport(Glibc)
  import Glibc
#endif

/// An object's bytes against what its store recorded at upload (SPEC
/// §9.4), for `s3://` entries: the store's SHA-256 when it sent one
/// (`x-amz-checksum-sha256`, asked for with `x-amz-checksum-mode`), compared
/// with the digest taken as the bytes arrived; else, for a single-part
/// upload, its ETag, which is the MD5 of the bytes (32 hex digits, no `-`).
/// A mismatch is a body damaged on the way: the object is fetched again.
/// The report's `checks` says which comparison ran.
public struct ObjectChecksumVerifier: VerifierPlugin {
  public let info = PluginInfo(
    kind: .verifier, name: "s3-checksum", path: nil, protocolVersion: 1,
    summary: "an s3 object's stored SHA-256, or the MD5 its ETag names")

  public init() {}

  public func applies(to entry: FileEntry) -> Bool { entry.url.scheme == "s3" }

  public func verify(_ input: VerifyInput) -> VerifyVerdict {
    if let stored = input.storeSHA256 {
      guard let hex = Base64.hex(stored) else {
        return .refetch("the store sent x-amz-checksum-sha256 '\(stored)', which is not a SHA-256 in base64")
      }
      guard hex == input.sha256 else {
        return .refetch("the bytes' SHA-256 is \(input.sha256), the store recorded \(hex) (x-amz-checksum-sha256)")
      }
      return .passed(check: "x-amz-checksum-sha256")
    }
    guard let md5 = Self.md5(ofETag: input.etag) else { return .accept(warnings: []) }
    guard let got = Self.md5(ofFileAt: input.path) else {
      return .refetch("the partial file of \(input.entry.destinationPath) could not be read back for its MD5")
    }
    guard got == md5 else { return .refetch("the bytes' MD5 is \(got), the ETag names \(md5)") }
    return .passed(check: "etag-md5")
  }

  /// The MD5 an ETag names: 32 lower-case hex digits in quotes (a
  /// multipart upload's ETag ends in `-N` and names no digest of the bytes).
  static func md5(ofETag etag: String?) -> String? {
    guard var e = etag else { return nil }
    if e.hasPrefix("\"") && e.hasSuffix("\"") && e.count >= 2 { e = String(e.dropFirst().dropLast()) }
    let hex = e.lowercased()
    guard hex.utf8.count == 32, hex.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
    else { return nil }
    return hex
  }

  static func md5(ofFileAt path: String) -> String? {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    guard let ctx = sf_md5_new() else { return nil }
    defer { sf_sha256_free(ctx) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n >= 0 else { return nil }
      if n == 0 { break }
      _ = buffer.withUnsafeBytes { sf_sha256_update(ctx, $0.baseAddress, n) }
    }
    var out = [UInt8](repeating: 0, count: 16)
    guard out.withUnsafeMutableBufferPointer({ sf_sha256_final(ctx, $0.baseAddress) }) == 1 else { return nil }
    return Hex.string(out)
  }
}

/// Standard base64 (RFC 4648 §4) decoded to lower-case hex; nil when `text`
/// is not base64 of 32 bytes.
enum Base64 {
  static func hex(_ text: String) -> String? {
    var bits: UInt32 = 0
    var count = 0
    var bytes: [UInt8] = []
    for c in text.utf8 where c != UInt8(ascii: "=") {
      let v: UInt8
      switch c {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = c - UInt8(ascii: "A")
      case UInt8(ascii: "a")...UInt8(ascii: "z"): v = c - UInt8(ascii: "a") + 26
      case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0") + 52
      case UInt8(ascii: "+"): v = 62
      case UInt8(ascii: "/"): v = 63
      default: return nil
      }
      bits = bits << 6 | UInt32(v)
      count += 6
      if count >= 8 {
        count -= 8
        bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
      }
    }
    return bytes.count == 32 ? Hex.string(bytes) : nil
  }
}
