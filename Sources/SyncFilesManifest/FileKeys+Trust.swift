import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// The keys that say who vouches for a file's bytes (SPEC §10.2): a
/// checksum list, signed or not, and a signature of the file itself.
extension FileKeySpec {
  package static let trustKeys: [FileKeySpec] = [
    FileKeySpec(
      key: .checksums, name: "checksums", scope: .defaultable,
      type: "mapping", defaultText: "none", example: "`checksums: {url: SHA256SUMS, keyring: keys/release.gpg}`",
      rule:
        "the file's line in a checksum list must match before install ([trust](trust.md)); an entry's `url` here replaces the defaults' list whole",
      schema: ##"{"$ref": "#/$defs/checksums"}"##,
      children: [
        Child(
          name: "url", type: "URL, or a path beside the file's url", defaultText: "required",
          example: "`url: SHA256SUMS`",
          rule: "coreutils (`HEX  NAME`) or BSD (`SHA256 (NAME) = HEX`); SHA-256 or SHA-512"),
        Child(
          name: "signature", type: "URL, or a path beside the file's url", defaultText: "none",
          example: "`signature: SHA256SUMS.gpg`",
          rule: "a detached OpenPGP signature of the list, checked with `keyring`"),
        Child(
          name: "keyring", type: "path", defaultText: "none", example: "`keyring: keys/release.gpg`",
          rule: "OpenPGP public keys, binary or armored; without `signature` the list must be clearsigned"),
        Child(
          name: "name", type: "text", defaultText: "the last segment of the url's path", example: "`name: os.iso`",
          rule: "the name looked up in the list; a leading `./` is ignored on both sides"),
      ],
      decode: { d, node, label, r in r.checksums = d.decodeChecksums(node, label) },
      merge: { r, d in
        guard let dc = d.checksums else { return }
        r.checksums = r.checksums.map { $0.over(dc) } ?? dc
      }),
    FileKeySpec(
      key: .signature, name: "signature", scope: .perFile,
      type: "mapping", defaultText: "none",
      example: "`signature: {url: tool.tar.gz.minisig, minisign_key: RWQ…}`",
      rule: "a detached signature of the file, checked before install with exactly one key ([trust](trust.md))",
      schema: ##"{"$ref": "#/$defs/signature"}"##,
      children: [
        Child(
          name: "url", type: "URL, or a path beside the file's url", defaultText: "required",
          example: "`url: tool.tar.gz.minisig`", rule: "fetched once per run, revalidated as a file"),
        Child(
          name: "keyring", type: "path", defaultText: "none", example: "`keyring: keys/release.gpg`",
          rule: "an OpenPGP detached signature (`.sig`, `.asc`, `.gpg`)"),
        Child(
          name: "minisign_key", type: "key or path", defaultText: "none", example: "`minisign_key: RWQf6LRC…`",
          rule: "a minisign public key, or its `.pub` file; the trusted comment is checked too"),
        Child(
          name: "signify_key", type: "path", defaultText: "none", example: "`signify_key: keys/release.pub`",
          rule: "an OpenBSD signify public key file"),
        Child(
          name: "cosign_key", type: "path", defaultText: "none", example: "`cosign_key: cosign.pub`",
          rule: "a PEM public key; the signature is `cosign sign-blob`'s (base64 ECDSA over SHA-256)"),
      ],
      decode: { d, node, label, r in r.signature = d.decodeSignature(node, label) },
      merge: { r, d in if r.signature == nil { r.signature = d.signature } }),
  ]
}

extension ChecksumSource {
  /// This entry's keys over the defaults': a `url` of its own is another
  /// list, which takes nothing of the defaults' signature or keyring.
  func over(_ d: ChecksumSource) -> ChecksumSource {
    if ownURL { return self }
    var c = self
    c.list = d.list
    c.ownURL = d.ownURL
    c.signature = signature ?? d.signature
    c.keyring = keyring ?? d.keyring
    c.name = name ?? d.name
    return c
  }
}

extension ManifestDecoder {
  /// `checksums: {url, signature, keyring, name}`.
  mutating func decodeChecksums(_ node: YAMLNode, _ what: String) -> ChecksumSource? {
    let allowed = Keys.checksums
    guard let f = fields(node, what, allowed: allowed) else { return nil }
    var c = ChecksumSource(list: .relative(""))
    c.ownURL = false
    if let n = f["url"]?.value {
      guard let list = trustLocation(n, "\(what).url") else { return nil }
      c.list = list
      c.ownURL = true
    }
    if let n = f["signature"]?.value { c.signature = trustLocation(n, "\(what).signature") }
    if let n = f["keyring"]?.value { c.keyring = keyringPath(n, "\(what).keyring") }
    if let sig = f["signature"], c.keyring == nil, f["keyring"] == nil {
      error(sig.value.mark, "\(what).signature needs keyring: the OpenPGP public keys that may sign the list")
    }
    if let n = f["name"]?.value, let name = string(n, "\(what).name") {
      if name.isEmpty { error(n.mark, "\(what).name is empty") } else { c.name = name }
    }
    return c
  }

  /// `signature: {url, keyring | minisign_key | signify_key | cosign_key}`.
  mutating func decodeSignature(_ node: YAMLNode, _ what: String) -> FileSignature? {
    let allowed = Keys.signature
    guard let f = fields(node, what, allowed: allowed) else { return nil }
    let keyNames = allowed.filter { $0 != "url" && f[$0] != nil }
    guard let urlNode = f["url"]?.value else {
      error(node.mark, "\(what) needs url: the signature file (tool.tar.gz.minisig, or its URL)")
      return nil
    }
    guard keyNames.count == 1, let keyName = keyNames.first, let keyNode = f[keyName]?.value else {
      let choices = "keyring, minisign_key, signify_key or cosign_key"
      error(
        node.mark,
        keyNames.isEmpty
          ? "\(what) needs one key to check it with: \(choices)"
          : "\(what) names \(keyNames.count) keys (\(keyNames.joined(separator: ", "))); give exactly one of \(choices)"
      )
      return nil
    }
    guard let url = trustLocation(urlNode, "\(what).url") else { return nil }
    let label = "\(what).\(keyName)"
    let key: SignatureKey?
    switch keyName {
    case "keyring": key = keyringPath(keyNode, label).map(SignatureKey.keyring)
    case "minisign_key": key = minisignKey(keyNode, label).map(SignatureKey.minisign)
    case "signify_key": key = signifyKey(keyNode, label).map(SignatureKey.signify)
    default:
      key = existingPath(keyNode, label, folder: false, expected: "a PEM public key file").map(SignatureKey.cosign)
    }
    return key.map { FileSignature(url: url, key: $0) }
  }

  /// An absolute http(s) or file URL, or a path beside the entry's url.
  mutating func trustLocation(_ node: YAMLNode, _ what: String) -> TrustLocation? {
    guard let raw = string(node, what) else { return nil }
    guard raw.contains("://") else {
      if raw.isEmpty || raw.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) || raw.contains("$") {
        error(node.mark, "\(what) '\(raw)' must be a URL, or a path beside the file's url such as SHA256SUMS")
        return nil
      }
      return .relative(raw)
    }
    guard let u = url(node, what) else { return nil }
    guard ["http", "https", "file"].contains(u.scheme) else {
      error(node.mark, "\(what) must be an http, https or file URL, not \(u.scheme)://")
      return nil
    }
    return .url(u)
  }

  /// A keyring file that exists and is not empty.
  mutating func keyringPath(_ node: YAMLNode, _ what: String) -> String? {
    guard let path = existingPath(node, what, folder: false, expected: "a file of OpenPGP public keys") else {
      return nil
    }
    var st = stat()
    if stat(path, &st) == 0 && st.st_size == 0 {
      error(node.mark, "\(what) '\(path)' is empty; export the keys with gpg --export KEYID > FILE")
      return nil
    }
    return path
  }

  /// A minisign public key as its base64 line, written inline or in a `.pub` file.
  mutating func minisignKey(_ node: YAMLNode, _ what: String) -> String? {
    guard let raw = string(node, what) else { return nil }
    if SignedKeyText.isKey(raw, algorithm: "Ed") { return raw }
    guard let path = existingPath(node, what, folder: false, expected: "a minisign public key or its file") else {
      return nil
    }
    return keyLine(in: path, node, what, tool: "minisign")
  }

  /// A signify public key file's base64 line.
  mutating func signifyKey(_ node: YAMLNode, _ what: String) -> String? {
    guard let path = existingPath(node, what, folder: false, expected: "a signify public key file") else {
      return nil
    }
    return keyLine(in: path, node, what, tool: "signify")
  }

  /// The key line of a minisign or signify public key file (an untrusted comment, then the key).
  private mutating func keyLine(in path: String, _ node: YAMLNode, _ what: String, tool: String) -> String? {
    let bytes: [UInt8]
    switch FileIO.readAll(path, limit: 4096) {
    case .success(let b): bytes = b
    case .failure(let f):
      error(node.mark, "\(what) '\(path)' \(f.message)")
      return nil
    }
    let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
    if let line = lines.first(where: { SignedKeyText.isKey(String($0), algorithm: "Ed") }) { return String(line) }
    error(node.mark, "\(what) '\(path)' holds no \(tool) public key (a base64 line after the untrusted comment)")
    return nil
  }
}

/// The public keys of minisign and signify: base64 of a two-byte algorithm
/// (`Ed`), an eight-byte key id and a 32-byte Ed25519 key.
public enum SignedKeyText {
  public static func isKey(_ text: String, algorithm: String) -> Bool {
    guard let b = Base64.decode(text.trimmingSpaces()), b.count == 42 else { return false }
    return b[0] == algorithm.utf8.first && b[1] == algorithm.utf8.dropFirst().first
  }
}
