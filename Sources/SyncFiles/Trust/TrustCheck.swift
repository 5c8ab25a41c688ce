import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// The checks of `checksums` and `signature` on a complete partial file
/// (SPEC §10.2): what to fetch for an entry, and whether what was fetched
/// vouches for the bytes. Each passed check is named for the report, with
/// the key that signed.
struct TrustCheck {
  let store: TrustStore
  let entry: FileEntry
  let secrets: Secrets

  /// Whether the entry declares any check of this kind.
  static func applies(to e: FileEntry) -> Bool { e.checksums != nil || e.signature != nil }

  /// The lists and signatures the entry needs, to fetch while the file transfers.
  var fetches: [TrustFetch] {
    var out: [TrustFetch] = []
    if let c = entry.checksums {
      out.append(fetch(c.list))
      if let s = c.signature { out.append(fetch(s)) }
    }
    if let s = entry.signature { out.append(fetch(s.url)) }
    return out
  }

  func fetch(_ location: TrustLocation) -> TrustFetch {
    let (url, display) = location.resolved(against: entry.url)
    return TrustFetch(
      url: url, display: display, entryURL: entry.url.text.revealed,
      headers: entry.headers.map { "\($0.name): \($0.value.revealed)" }, network: entry.network, secrets: secrets,
      retry: entry.retry, connectTimeout: entry.timeout.connect)
  }

  /// The checks passed, in order; or why the file is not to be installed.
  func run(partial path: String, sha256: String) -> Result<[String], TrustFailure> {
    var passed: [String] = []
    if let c = entry.checksums {
      switch checkList(c, partial: path, sha256: sha256) {
      case .success(let line): passed.append(line)
      case .failure(let f): return .failure(f)
      }
    }
    if let s = entry.signature {
      switch checkSignature(s, partial: path, sha256: sha256) {
      case .success(let line): passed.append(line)
      case .failure(let f): return .failure(f)
      }
    }
    return .success(passed)
  }

  /// The list's line for the file, from a list whose signature holds.
  func checkList(_ c: ChecksumSource, partial path: String, sha256: String) -> Result<String, TrustFailure> {
    let list = fetch(c.list)
    let listName = Self.lastSegment(of: list.display)
    let signature = c.signature.map(fetch)
    let key = [list.url, signature?.url ?? "", c.keyring ?? ""].joined(separator: "\n")
    let verified = store.verifiedList(key: key) { verify(list: list, named: listName, signature, keyring: c.keyring) }
    guard case .success(let v) = verified else { return verified.map { _ in "" } }
    let name = c.name ?? Self.fileName(of: entry.url)
    let digests: [ChecksumList.Digest]
    switch ChecksumList.digests(in: v.content, for: name, list: listName) {
    case .success(let d): digests = d
    case .failure(let e): return .failure(.rejected(e, what: nil))
    }
    for d in digests {
      let got: String
      switch d.algorithm {
      case .sha256: got = sha256
      case .sha512:
        switch FileDigest.compute(.sha512, ofFileAt: path) {
        case .success(let bytes): got = Hex.string(bytes)
        case .failure(let e): return .failure(.rejected(e, what: nil))
        }
      }
      guard got == d.hex else {
        return .failure(
          .rejected(
            .digestMismatch(algorithm: d.algorithm.rawValue, list: listName, expected: d.hex, got: got), what: nil))
      }
    }
    let algorithms = digests.map(\.algorithm.rawValue).joined(separator: " and ")
    return .success("checksums: \(algorithms) of '\(name)' in \(list.display), \(v.how)")
  }

  /// The list's bytes, and the content its signature vouches for.
  func verify(list: TrustFetch, named listName: String, _ signature: TrustFetch?, keyring: String?) -> Result<
    TrustStore.VerifiedList, TrustFailure
  > {
    let bytes: [UInt8]
    switch store.bytes(list) {
    case .success(let f): bytes = f.bytes
    case .failure(let e): return .failure(e)
    }
    guard let keyring else { return .success(.init(content: bytes, how: "unsigned")) }
    if let signature {
      let sig: [UInt8]
      switch store.bytes(signature) {
      case .success(let f): sig = f.bytes
      case .failure(let e): return .failure(e)
      }
      switch OpenPGP.verifyDetached(signature: sig, data: .bytes(bytes), keyring: keyring) {
      case .success(let signers): return .success(.init(content: bytes, how: "signed by \(Self.names(signers))"))
      case .failure(let e): return .failure(.rejected(e, what: "signature of \(listName)"))
      }
    }
    guard OpenPGP.isClearsigned(bytes) else { return .failure(.rejected(.notClearsigned(list: listName), what: nil)) }
    switch OpenPGP.verifyClearsigned(bytes, keyring: keyring) {
    case .success(let r): return .success(.init(content: r.content, how: "clearsigned by \(Self.names(r.signers))"))
    case .failure(let e): return .failure(.rejected(e, what: "signature of \(listName)"))
    }
  }

  /// The file's own detached signature, by the one key given.
  func checkSignature(_ s: FileSignature, partial path: String, sha256: String) -> Result<String, TrustFailure> {
    let f = fetch(s.url)
    let sig: [UInt8]
    switch store.bytes(f) {
    case .success(let fetched): sig = fetched.bytes
    case .failure(let e): return .failure(e)
    }
    let r: Result<String, VerifyError>
    switch s.key {
    case .keyring(let ring):
      r = OpenPGP.verifyDetached(signature: sig, data: .file(path), keyring: ring).map { "OpenPGP \(Self.names($0))" }
    case .minisign(let key): r = SignedBlob.minisign(signature: sig, key: key, file: path)
    case .signify(let key): r = SignedBlob.signify(signature: sig, key: key, file: path)
    case .cosign(let pemPath):
      switch FileIO.readAll(pemPath, limit: 1 << 16) {
      case .success(let pem):
        r = SignedBlob.cosign(
          signature: sig, pem: pem, keyName: Self.lastSegment(of: pemPath), sha256: sha256)
      case .failure(let e): r = .failure(.malformed(what: "cosign_key \(pemPath)", why: e.message))
      }
    }
    switch r {
    case .success(let signer): return .success("signature: \(signer), \(f.display)")
    case .failure(let e): return .failure(.rejected(e, what: "signature \(Self.lastSegment(of: f.display))"))
    }
  }

  /// The checks a download of `e` will run, as `plan` lists them (SPEC §10.2).
  static func planned(for e: FileEntry) -> [String] {
    var out: [String] = []
    if e.sha256 != nil { out.append("sha256") }
    if let c = e.checksums {
      let list = c.list.resolved(against: e.url).display
      let how =
        c.keyring.map { ring in
          c.signature.map { "signed (\($0.resolved(against: e.url).display)), keyring \(ring)" }
            ?? "clearsigned, keyring \(ring)"
        } ?? "unsigned"
      out.append("checksums \(list) for '\(c.name ?? fileName(of: e.url))', \(how)")
    }
    if let s = e.signature {
      let kind: String
      switch s.key {
      case .keyring(let ring): kind = "OpenPGP, keyring \(ring)"
      case .minisign: kind = "minisign"
      case .signify(let path): kind = "signify, key \(path)"
      case .cosign(let path): kind = "cosign, key \(path)"
      }
      out.append("signature \(s.url.resolved(against: e.url).display), \(kind)")
    }
    for v in e.verify { out.append("verify \(v.plugin)") }
    return out
  }

  static func names(_ signers: [OpenPGP.Signer]) -> String {
    signers.map(\.described).joined(separator: " and ")
  }

  /// The name a list gives the file by default: the last segment of its url's path, percent-decoded.
  static func fileName(of url: SourceURL) -> String {
    var path = url.text.revealed
    if let q = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<q]) }
    return PercentText.decode(lastSegment(of: path))
  }

  static func lastSegment(of text: String) -> String {
    var t = Substring(text)
    if let q = t.firstIndex(where: { $0 == "?" || $0 == "#" }) { t = t[..<q] }
    return t.split(separator: "/").last.map(String.init) ?? String(t)
  }
}
