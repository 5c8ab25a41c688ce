import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// OpenPGP signatures, checked by `gpgv` as apt checks them: against one
/// keyring only, with its machine-readable status lines (`--status-fd`)
/// read for the verdict, never its exit status alone (gpgv exits 0 for a
/// signature by an expired or revoked key). No OpenPGP packet is parsed
/// here; an armored keyring is only un-armored (base64, RFC 4880 §6),
/// since gpgv reads binary keyrings only.
public enum OpenPGP {
  /// Who made a good signature: the signing key's long id and its primary key's fingerprint.
  public struct Signer: Sendable, Hashable {
    public var keyID: String
    public var fingerprint: String
    /// "0xKEYID (fingerprint FPR)", for the report.
    public var described: String { "0x\(keyID) (fingerprint \(fingerprint))" }
  }

  /// The gpgv run: at most this long.
  static let timeout = 60.0

  /// What a detached signature signs: a file, or bytes held in memory (a checksum list).
  public enum Signed: Sendable {
    case file(String)
    case bytes([UInt8])
  }

  /// A detached signature of `data`.
  public static func verifyDetached(signature: [UInt8], data: Signed, keyring: String) -> Result<[Signer], VerifyError>
  {
    withScratch { dir in
      let sig = dir + "/signature"
      var path = dir + "/signed"
      switch data {
      case .file(let p): path = p
      case .bytes(let b):
        guard FileIO.writeNew(b, to: path) else {
          return .failure(.toolFailed(tool: "gpgv", why: "cannot write \(path)"))
        }
      }
      guard FileIO.writeNew(signature, to: sig) else {
        return .failure(.toolFailed(tool: "gpgv", why: "cannot write \(sig)"))
      }
      return run(["--", sig, path], keyring: keyring, dir: dir).map(\.signers)
    }
  }

  /// A clearsigned text (`-----BEGIN PGP SIGNED MESSAGE-----`): the content
  /// gpgv says was signed (never the text around it), and who signed.
  public static func verifyClearsigned(_ text: [UInt8], keyring: String) -> Result<
    (content: [UInt8], signers: [Signer]), VerifyError
  > {
    withScratch { dir in
      let input = dir + "/signed"
      let output = dir + "/content"
      guard FileIO.writeNew(text, to: input) else {
        return .failure(.toolFailed(tool: "gpgv", why: "cannot write \(input)"))
      }
      switch run(["--output", output, "--", input], keyring: keyring, dir: dir) {
      case .failure(let e): return .failure(e)
      case .success(let r):
        guard case .success(let content) = FileIO.readAll(output, limit: 64 << 20) else {
          return .failure(.toolFailed(tool: "gpgv", why: "wrote no signed content"))
        }
        return .success((content, r.signers))
      }
    }
  }

  /// Whether a list is clearsigned (its first line is the armor's).
  public static func isClearsigned(_ text: [UInt8]) -> Bool {
    let start = text.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    return start.starts(with: "-----BEGIN PGP SIGNED MESSAGE-----".utf8)
  }

  private static func run(_ args: [String], keyring: String, dir: String) -> Result<
    (signers: [Signer], status: String), VerifyError
  > {
    let ring: String
    switch usableKeyring(keyring, dir: dir) {
    case .success(let r): ring = r
    case .failure(let e): return .failure(e)
    }
    let argv = ["gpgv", "--homedir", dir, "--status-fd", "1", "--keyring", ring] + args
    let r = Subprocess.run(argv, environment: ["LC_ALL": "C"], timeout: timeout, captureStdout: true)
    guard r.status != nil, !r.timedOut else {
      return .failure(.toolFailed(tool: "gpgv", why: "\(r.failure(timeout: timeout)) (is gpgv installed?)"))
    }
    let status = String(decoding: r.stdout, as: UTF8.self)
    return verdict(status: status, exitStatus: r.status ?? -1, keyring: keyring, stderr: r.stderr).map {
      ($0, status)
    }
  }

  /// The verdict of gpgv's status lines (GnuPG's doc/DETAILS). Any bad,
  /// expired or revoked signature fails; else at least one good and valid
  /// signature passes (others by keys not in the keyring are passed over,
  /// as apt passes them over); else the first key missing is named.
  package static func verdict(status: String, exitStatus: Int32, keyring: String, stderr: String = "") -> Result<
    [Signer], VerifyError
  > {
    var good: [String] = []
    var valid: [String] = []
    var missing: String? = nil
    var couldNotCheck = false
    for line in status.split(separator: "\n") where line.hasPrefix("[GNUPG:] ") {
      let f = line.dropFirst(9).split(separator: " ").map(String.init)
      guard let tag = f.first else { continue }
      let id = f.count > 1 ? f[1] : "?"
      switch tag {
      case "BADSIG": return .failure(.badSignature(keyID: id))
      case "EXPKEYSIG": return .failure(.expiredKey(keyID: id))
      case "REVKEYSIG": return .failure(.revokedKey(keyID: id))
      case "EXPSIG": return .failure(.expiredSignature(keyID: id))
      case "GOODSIG": good.append(id)
      case "VALIDSIG": valid.append(f.count >= 11 ? f[10] : id)
      case "NO_PUBKEY": missing = missing ?? id
      case "ERRSIG": couldNotCheck = true
      default: continue
      }
    }
    if exitStatus == 0 && !good.isEmpty && good.count == valid.count {
      return .success(zip(good, valid).map { Signer(keyID: $0, fingerprint: $1) })
    }
    if let missing { return .failure(.unknownKey(keyID: missing, keyring: keyring)) }
    let said = stderr.split(separator: "\n").last.map { ": \($0)" } ?? ""
    if couldNotCheck { return .failure(.toolFailed(tool: "gpgv", why: "the signature could not be checked\(said)")) }
    return .failure(.malformed(what: "the OpenPGP signature", why: "holds no signature gpgv could read\(said)"))
  }

  /// The keyring as gpgv reads it: a binary one as it is, an armored one
  /// un-armored into `dir`.
  static func usableKeyring(_ path: String, dir: String) -> Result<String, VerifyError> {
    guard case .success(let bytes) = FileIO.readAll(path, limit: 64 << 20) else {
      return .failure(.malformed(what: "keyring \(path)", why: "cannot be read"))
    }
    guard isArmored(bytes) else { return .success(path) }
    guard let binary = dearmored(bytes), !binary.isEmpty else {
      return .failure(.malformed(what: "keyring \(path)", why: "is armored but its base64 does not decode"))
    }
    let out = dir + "/keyring.gpg"
    guard FileIO.writeNew(binary, to: out) else {
      return .failure(.toolFailed(tool: "gpgv", why: "cannot write \(out)"))
    }
    return .success(out)
  }

  static func isArmored(_ bytes: [UInt8]) -> Bool {
    let start = bytes.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    return start.starts(with: "-----BEGIN PGP".utf8)
  }

  /// The bytes of every armored block in `text`: the header lines up to
  /// the first blank line are skipped, the CRC line (`=…`) ends the data.
  package static func dearmored(_ text: [UInt8]) -> [UInt8]? {
    var out: [UInt8] = []
    enum Where { case outside, headers, data }
    var at = Where.outside
    var data = ""
    for raw in String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
      let line = raw.hasSuffix("\r") ? raw.dropLast() : raw[...]
      switch at {
      case .outside where line.hasPrefix("-----BEGIN PGP"): at = .headers
      case .outside: continue
      case .headers: if line.trimmingSpaces().isEmpty { at = .data }
      case .data:
        if line.hasPrefix("-----END PGP") || line.hasPrefix("=") {
          guard let bytes = Base64.decode(data) else { return nil }
          out += bytes
          data = ""
          at = .outside
        } else {
          data += line
        }
      }
    }
    return out
  }

  /// `body` with a private folder of its own, removed after.
  static func withScratch<T>(_ body: (String) -> Result<T, VerifyError>) -> Result<T, VerifyError> {
    let base = (getenv("TMPDIR").map { String(cString: $0) }).flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template = Array((base + "/syncfiles-gpgv-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
      return .failure(.toolFailed(tool: "gpgv", why: "cannot make a folder in \(base): \(Errno(errno).text)"))
    }
    let dir = String(cString: made)
    defer { FileIO.removeTree(dir) }
    return body(dir)
  }
}
