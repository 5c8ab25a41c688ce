import SyncFilesCore

/// Why a checksum list or a signature does not vouch for a file (the Verify
/// module's one error, SPEC §10.2). `message` is for people only; code
/// decides on the case.
public enum VerifyError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The list has no line for the name.
  case noLine(name: String, list: String)
  /// The list's line for the name has a digest weaker than SHA-256 (or one not accepted).
  case weakDigest(name: String, list: String, algorithm: String)
  /// Two lines name the file with different digests of one algorithm.
  case conflictingLines(name: String, list: String)
  /// The bytes' digest is not the one the list names.
  case digestMismatch(algorithm: String, list: String, expected: String, got: String)
  /// An OpenPGP signature that does not match what it signs.
  case badSignature(keyID: String?)
  case expiredKey(keyID: String)
  case revokedKey(keyID: String)
  case expiredSignature(keyID: String)
  /// Signed by a key the keyring does not hold.
  case unknownKey(keyID: String, keyring: String)
  /// A list with a keyring and no signature that is not clearsigned.
  case notClearsigned(list: String)
  /// A signature or key that cannot be read as its format (minisign, signify, cosign, OpenPGP).
  case malformed(what: String, why: String)
  /// A signature made by another key than the one given (minisign and signify name theirs).
  case otherKey(tool: String, signedBy: String, given: String)
  /// A tool the check needs is missing, or failed to run.
  case toolFailed(tool: String, why: String)
  /// The file could not be read back to check it.
  case unreadable(path: String, errno: Errno)

  public var message: String {
    switch self {
    case .noLine(let name, let list): return "no line for '\(name)' in \(list)"
    case .weakDigest(let name, let list, let algorithm):
      return "\(list) names '\(name)' by \(algorithm), which is not accepted: only SHA-256 and SHA-512 are"
    case .conflictingLines(let name, let list): return "\(list) names '\(name)' twice, with different digests"
    case .digestMismatch(let algorithm, let list, let expected, let got):
      return "\(algorithm) mismatch: \(list) names \(expected), the bytes are \(got)"
    case .badSignature(let id?): return "bad signature (key 0x\(id))"
    case .badSignature(nil): return "bad signature"
    case .expiredKey(let id): return "key 0x\(id) has expired"
    case .revokedKey(let id): return "key 0x\(id) is revoked"
    case .expiredSignature(let id): return "the signature by key 0x\(id) has expired"
    case .unknownKey(let id, let keyring): return "key 0x\(id) not in keyring \(keyring)"
    case .notClearsigned(let list):
      return "\(list) is not clearsigned, and no signature is given: add checksums.signature (its detached signature)"
    case .malformed(let what, let why): return "\(what) \(why)"
    case .otherKey(let tool, let signedBy, let given):
      return "the \(tool) signature is by key \(signedBy), not by the key given (\(given))"
    case .toolFailed(let tool, let why): return "\(tool): \(why)"
    case .unreadable(let path, let e): return "cannot read \(path) to check it: \(e.text)"
    }
  }

  public var description: String { message }
}
