internal import CCrypto
import SyncFilesCore

/// Signatures of a file by the tools that sign releases without OpenPGP
/// (SPEC §10.2): minisign, OpenBSD's signify and cosign's `sign-blob`. The
/// cryptography is libcrypto's (Ed25519, BLAKE2b-512, ECDSA); only the
/// files' layouts are read here. Each returns who signed, for the report.
public enum SignedBlob {
  /// A minisign signature (`.minisig`) of the file at `path` by `key` (the
  /// public key's base64 line). Both signatures are checked: the file's
  /// (over its BLAKE2b-512 for `ED`, the bytes for legacy `Ed`) and the
  /// global one over the trusted comment.
  public static func minisign(signature: [UInt8], key: String, file path: String) -> Result<String, VerifyError> {
    guard let pub = keyBytes(key), pub.count == 42, pub[0] == 0x45, pub[1] == 0x64 else {
      return .failure(.malformed(what: "the minisign key", why: "is not a minisign public key (base64 of 42 bytes)"))
    }
    let lines = signature.split(separator: UInt8(ascii: "\n")).map {
      String(decoding: $0, as: UTF8.self).trimmingSpaces()
    }
    let prefix = "trusted comment: "
    guard lines.count >= 4, lines[0].hasPrefix("untrusted comment:"), lines[2].hasPrefix(prefix),
      let sig = Base64.decode(lines[1]), sig.count == 74, let global = Base64.decode(lines[3]), global.count == 64
    else {
      return .failure(.malformed(what: "the minisign signature", why: "is not a minisign signature file (four lines)"))
    }
    let keyID = minisignID(Array(pub[2..<10]))
    guard sig[2..<10] == pub[2..<10] else {
      return .failure(.otherKey(tool: "minisign", signedBy: minisignID(Array(sig[2..<10])), given: keyID))
    }
    let pk = Array(pub[10..<42])
    let fileSig = Array(sig[10..<74])
    let verdict: Result<Int32, VerifyError>
    switch (sig[0], sig[1]) {
    case (0x45, 0x44):  // "ED": the file's BLAKE2b-512
      verdict = FileDigest.compute(.blake2b512, ofFileAt: path).map { ed25519(pk, fileSig, $0) }
    case (0x45, 0x64):  // "Ed": the file itself
      verdict = FileDigest.withMappedFile(path) { ed25519(pk, fileSig, $0) }
    default:
      return .failure(.malformed(what: "the minisign signature", why: "uses an algorithm other than Ed25519"))
    }
    switch verdict {
    case .failure(let e): return .failure(e)
    case .success(let r) where r != 1: return .failure(.badSignature(keyID: keyID))
    case .success: break
    }
    let comment = Array(lines[2].dropFirst(prefix.count).utf8)
    guard ed25519(pk, global, fileSig + comment) == 1 else {
      return .failure(.malformed(what: "the minisign signature's trusted comment", why: "does not match its signature"))
    }
    return .success("minisign key \(keyID)")
  }

  /// A signify signature (`.sig`) of the whole file at `path` by the public key line `key`.
  public static func signify(signature: [UInt8], key: String, file path: String) -> Result<String, VerifyError> {
    guard let pub = keyBytes(key), pub.count == 42, pub[0] == 0x45, pub[1] == 0x64 else {
      return .failure(.malformed(what: "the signify key", why: "is not a signify public key (base64 of 42 bytes)"))
    }
    let lines = signature.split(separator: UInt8(ascii: "\n")).map {
      String(decoding: $0, as: UTF8.self).trimmingSpaces()
    }
    guard lines.count >= 2, lines[0].hasPrefix("untrusted comment:"), let sig = Base64.decode(lines[1]),
      sig.count == 74, sig[0] == 0x45, sig[1] == 0x64
    else {
      return .failure(.malformed(what: "the signify signature", why: "is not a signify signature file"))
    }
    let keyID = Hex.string(Array(pub[2..<10]))
    guard sig[2..<10] == pub[2..<10] else {
      return .failure(.otherKey(tool: "signify", signedBy: Hex.string(Array(sig[2..<10])), given: keyID))
    }
    let pk = Array(pub[10..<42])
    let fileSig = Array(sig[10..<74])
    switch FileDigest.withMappedFile(path, { ed25519(pk, fileSig, $0) }) {
    case .failure(let e): return .failure(e)
    case .success(let r) where r != 1: return .failure(.badSignature(keyID: keyID))
    case .success: return .success("signify key \(keyID)")
    }
  }

  /// A cosign `sign-blob` signature (base64 of a DER ECDSA signature of the
  /// file's SHA-256) by the P-256 public key in `pem` (the file `keyName`).
  public static func cosign(signature: [UInt8], pem: [UInt8], keyName: String, sha256 hex: String)
    -> Result<String, VerifyError>
  {
    let text = String(decoding: signature, as: UTF8.self).trimmingSpaces()
    guard let der = Base64.decode(text) ?? (signature.first == 0x30 ? signature : nil), !der.isEmpty else {
      return .failure(.malformed(what: "the cosign signature", why: "is not base64 of a DER signature"))
    }
    guard let digest = Hex.bytes(hex), digest.count == 32 else {
      return .failure(.malformed(what: "the file's SHA-256", why: "is not 64 hex digits"))
    }
    guard let key = pem.withUnsafeBytes({ sf_pem_public_key($0.baseAddress, $0.count) }) else {
      return .failure(.malformed(what: "cosign_key \(keyName)", why: "is not a PEM public key"))
    }
    defer { sf_pkey_free(key) }
    guard sf_pkey_is_p256(key) == 1 else {
      return .failure(.malformed(what: "cosign_key \(keyName)", why: "is not an ECDSA P-256 key"))
    }
    let r = der.withUnsafeBufferPointer { s in
      digest.withUnsafeBufferPointer { sf_pkey_verify_sha256(key, s.baseAddress, s.count, $0.baseAddress) }
    }
    guard r == 1 else { return .failure(.badSignature(keyID: nil)) }
    return .success("cosign key \(keyName) (ECDSA P-256)")
  }

  /// minisign shows a key id as the eight bytes read as a little-endian number, in hex.
  static func minisignID(_ bytes: [UInt8]) -> String {
    Hex.string(bytes.reversed()).uppercased()
  }

  static func keyBytes(_ line: String) -> [UInt8]? { Base64.decode(line.trimmingSpaces()) }

  static func ed25519(_ pk: [UInt8], _ sig: [UInt8], _ message: [UInt8]) -> Int32 {
    message.withUnsafeBytes { ed25519(pk, sig, $0) }
  }

  static func ed25519(_ pk: [UInt8], _ sig: [UInt8], _ message: UnsafeRawBufferPointer) -> Int32 {
    pk.withUnsafeBufferPointer { p in
      sig.withUnsafeBufferPointer { s in
        sf_ed25519_verify(
          p.baseAddress, s.baseAddress, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
      }
    }
  }
}
