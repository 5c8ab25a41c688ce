internal import CCrypto
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

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
    guard case .success(let d) = FileDigest.compute(.md5, ofFileAt: path) else { return nil }
    return Hex.string(d)
  }

}
