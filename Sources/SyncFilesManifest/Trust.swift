import SyncFilesCore

/// Where a file of trust (a checksum list, a signature) is fetched from: a
/// URL, or a path resolved against the entry's own url (`SHA256SUMS` beside
/// the file), so that one `checksums` in `defaults` serves every entry.
public enum TrustLocation: Sendable, Hashable {
  case url(SourceURL)
  /// Relative to the entry's url, as a link in a page at that url would be.
  case relative(String)

  /// The URL to ask and the one to show (its secrets masked), for an entry at `base`.
  public func resolved(against base: SourceURL) -> (url: String, display: String) {
    switch self {
    case .url(let u): return (u.text.revealed, u.display)
    case .relative(let path):
      return (Self.join(base.text.revealed, path), Self.join(base.display, path))
    }
  }

  /// `path` resolved against `base` (RFC 3986 §5.2 for the cases a
  /// manifest writes: a name, a relative path, or an absolute path).
  static func join(_ base: String, _ path: String) -> String {
    var head = base
    if let q = head.firstIndex(where: { $0 == "?" || $0 == "#" }) { head = String(head[..<q]) }
    // `scheme://authority/path`, or `scheme:path` (a relative file: URL as shown).
    let pathStart: String.Index
    if let schemeEnd = head.firstRange(of: "://") {
      pathStart = head[schemeEnd.upperBound...].firstIndex(of: "/") ?? head.endIndex
    } else if let colon = head.firstIndex(of: ":") {
      pathStart = head.index(after: colon)
    } else {
      return path
    }
    if path.hasPrefix("/") { return String(head[..<pathStart]) + path }
    let folderEnd = head[pathStart...].lastIndex(of: "/").map { head.index(after: $0) } ?? pathStart
    var parts = String(head[pathStart..<folderEnd]).split(separator: "/", omittingEmptySubsequences: false)
      .map(String.init)
    if parts.last == "" { parts.removeLast() }
    for p in path.split(separator: "/", omittingEmptySubsequences: false) {
      switch p {
      case ".": continue
      case "..": if parts.count > 1 { parts.removeLast() }
      default: parts.append(String(p))
      }
    }
    let joined = parts.joined(separator: "/")
    let rooted = head[pathStart...].hasPrefix("/") || head[..<pathStart].hasSuffix("//") || pathStart == head.endIndex
    return String(head[..<pathStart]) + (joined.hasPrefix("/") || !rooted ? joined : "/" + joined)
  }
}

/// `checksums` (SPEC §10.2): a list of digests, optionally signed, that
/// names the file's digest.
public struct ChecksumSource: Sendable, Hashable {
  public var list: TrustLocation
  /// A detached OpenPGP signature of the list.
  public var signature: TrustLocation?
  /// OpenPGP public keys (absolute path): with no `signature`, the list must be clearsigned.
  public var keyring: String?
  /// The name looked up in the list; nil: the last segment of the entry's url path.
  public var name: String?
  /// Whether the entry (or `defaults`) that wrote it named the list's `url`.
  package var ownURL = false
  public init(list: TrustLocation) {
    self.list = list
    ownURL = true
  }
}

/// The key that checks a signature of the file itself.
public enum SignatureKey: Sendable, Hashable {
  /// OpenPGP public keys, binary or armored (absolute path).
  case keyring(String)
  /// A minisign public key, as its base64 line (from the manifest or its file).
  case minisign(String)
  /// A signify public key file's base64 line.
  case signify(String)
  /// A PEM public key file (cosign `sign-blob`), absolute path.
  case cosign(String)

  /// The key's name in a manifest.
  public var keyName: String {
    switch self {
    case .keyring: return "keyring"
    case .minisign: return "minisign_key"
    case .signify: return "signify_key"
    case .cosign: return "cosign_key"
    }
  }
}

/// `signature` (SPEC §10.2): a detached signature of the file, and its key.
public struct FileSignature: Sendable, Hashable {
  public var url: TrustLocation
  public var key: SignatureKey
  public init(url: TrustLocation, key: SignatureKey) {
    self.url = url
    self.key = key
  }
}
