import SyncFilesCore

#if canImport(Glibc)
  import Glibc
#endif

/// The keys that say how a file's requests reach its server (SPEC §8.1):
/// `tls`, `proxy`, `netrc` and `s3`. Each is allowed in `defaults`.
extension FileKeySpec {
  package static let networkKeys: [FileKeySpec] = [
    FileKeySpec(
      key: .tls, name: "tls", scope: .defaultable,
      type: "mapping", defaultText: "the environment, as curl reads it", example: "`tls: {ca_file: ca.pem}`",
      rule: "verification cannot be turned off",
      schema: ##"{"$ref": "#/$defs/tls"}"##,
      children: [
        Child(
          name: "ca_file", type: "path", defaultText: "none", example: "`ca_file: /etc/ssl/internal.pem`",
          rule: "PEM bundle trusted instead of the system store"),
        Child(
          name: "ca_path", type: "path", defaultText: "none", example: "`ca_path: /etc/ssl/certs`",
          rule: "folder of hashed certificates"),
        Child(
          name: "client_cert", type: "path", defaultText: "none", example: "`client_cert: me.pem`",
          rule: "mutual TLS"),
        Child(
          name: "client_key", type: "path", defaultText: "none", example: "`client_key: me.key`",
          rule: "a key readable by others is an error"),
      ],
      decode: { d, node, label, r in r.tls = d.decodeTLS(node, label) },
      merge: { r, d in if let dt = d.tls { r.tls = (r.tls ?? TLSOptions()).over(dt) } }),
    .value(
      .proxy, "proxy", \.proxy,
      type: "URL or `none`", default: "the proxy variables", example: "`proxy: http://squid:3128`",
      rule: "credentials in it are secrets",
      schema: ##"{"$ref": "#/$defs/proxy"}"##
    ) { d, node, label in d.decodeProxy(node, label) },
    .value(
      .netrc, "netrc", \.netrc,
      type: "`true` or a path", default: "off", example: "`netrc: true`",
      rule:
        "`$NETRC`, else `~/.netrc`; credentials go only to the machine named; a file readable by others is an error",
      schema: ##"{"$ref": "#/$defs/netrc"}"##
    ) { d, node, label in d.decodeNetrc(node, label) },
    FileKeySpec(
      key: .s3, name: "s3", scope: .defaultable,
      type: "mapping", defaultText: "the environment and the AWS files",
      example: "`s3: {endpoint: https://minio.example:9000}`",
      rule: "where an `s3://` url goes ([object storage](object-storage.md))",
      schema: ##"{"$ref": "#/$defs/s3"}"##,
      children: [
        Child(
          name: "region", type: "region name", defaultText: "`AWS_REGION`, the profile's, else us-east-1",
          example: "`region: eu-west-1`", rule: "signs the requests"),
        Child(
          name: "endpoint", type: "http(s) URL",
          defaultText: "`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's, else AWS's",
          example: "`endpoint: https://minio.example:9000`", rule: "MinIO, R2, Ceph, a GCS interoperability host"),
        Child(
          name: "addressing", type: "`path` or `virtual`",
          defaultText: "`path` for another endpoint, `virtual` for AWS",
          example: "`addressing: virtual`", rule: "`ENDPOINT/BUCKET/KEY` or `BUCKET.HOST/KEY`"),
        Child(
          name: "profile", type: "name", defaultText: "`AWS_PROFILE`, else `default`", example: "`profile: reader`",
          rule: "its keys sign, over `AWS_ACCESS_KEY_ID`"),
        Child(
          name: "page_size", type: "1–1000", defaultText: "1000", example: "`page_size: 500`",
          rule: "keys a prefix's listing asks for per request (`max-keys`)"),
      ],
      decode: { d, node, label, r in r.s3 = d.decodeS3(node, label) },
      merge: { r, d in if let ds = d.s3 { r.s3 = (r.s3 ?? S3Options()).over(ds) } }),
  ]
}

extension ManifestDecoder {
  /// `tls: {ca_file, ca_path, client_cert, client_key}`.
  mutating func decodeTLS(_ node: YAMLNode, _ what: String) -> TLSOptions? {
    guard let tf = fields(node, what, allowed: Keys.tls) else { return nil }
    var t = TLSOptions()
    t.caFile = tf["ca_file"].flatMap { existingPath($0.value, "\(what).ca_file", folder: false) }
    t.caPath = tf["ca_path"].flatMap { existingPath($0.value, "\(what).ca_path", folder: true) }
    t.clientCert = tf["client_cert"].flatMap { existingPath($0.value, "\(what).client_cert", folder: false) }
    if let k = tf["client_key"], let path = existingPath(k.value, "\(what).client_key", folder: false) {
      t.clientKey = path
      checkPrivate(key: path, at: k.value.mark, "\(what).client_key")
    }
    return t
  }

  /// Rules that involve two keys, checked once the entry is merged with `defaults`.
  mutating func checkNetwork(_ n: NetworkOptions, marks: KeyedFields<SourceMark>) {
    let t = n.tls
    if (t.clientCert == nil) != (t.clientKey == nil) {
      error(
        marks[.tls], "tls needs both client_cert and client_key for mutual TLS (one of them is missing)")
    }
  }

  /// A file or folder named in the manifest, relative to the manifest's folder, that must exist.
  mutating func existingPath(
    _ node: YAMLNode, _ what: String, folder wantFolder: Bool, expected: String? = nil
  ) -> String? {
    guard let raw = string(node, what), let e = expand(node, raw, what) else { return nil }
    guard !e.revealed.isEmpty else {
      error(node.mark, "\(what) is empty")
      return nil
    }
    let path = Paths.normalize(e.revealed, relativeTo: folder)
    var st = stat()
    guard stat(path, &st) == 0 else {
      error(node.mark, "\(what) '\(e.template)' cannot be read: \(String(cString: strerror(errno)))")
      return nil
    }
    let isFolder = (st.st_mode & S_IFMT) == S_IFDIR
    if isFolder != wantFolder {
      error(
        node.mark,
        "\(what) '\(e.template)' is \(isFolder ? "a folder" : "not a folder"); expected \(expected ?? (wantFolder ? "a folder of hashed certificates" : "a PEM file"))"
      )
      return nil
    }
    return path
  }

  /// A private key others can read is a key no longer private.
  private mutating func checkPrivate(key path: String, at mark: SourceMark, _ what: String) {
    var st = stat()
    guard stat(path, &st) == 0 else { return }
    if st.st_mode & 0o004 != 0 {
      let mode = String(st.st_mode & 0o777, radix: 8)
      error(mark, "\(what) '\(path)' is readable by every user (mode \(mode)); chmod o-r it, as 0600 or 0640")
    }
  }

  /// `s3: {region, endpoint, addressing, profile}` (SPEC §9.4).
  mutating func decodeS3(_ node: YAMLNode, _ what: String) -> S3Options? {
    guard let sf = fields(node, what, allowed: Keys.s3) else { return nil }
    var s = S3Options()
    if let n = sf["region"]?.value, let v = string(n, "\(what).region") {
      if v.isEmpty
        || v.utf8.contains(where: { !($0 == 0x2D || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0)) })
      {
        error(n.mark, "\(what).region must be a region name such as eu-west-1 (lower-case letters, digits, -)")
      } else {
        s.region = v
      }
    }
    if let n = sf["endpoint"]?.value, var v = string(n, "\(what).endpoint") {
      while v.hasSuffix("/") { v.removeLast() }
      let scheme = v.firstRange(of: "://").map { v[..<$0.lowerBound].lowercased() }
      if scheme != "http" && scheme != "https" || v.utf8.count <= (scheme?.utf8.count ?? 0) + 3 {
        error(n.mark, "\(what).endpoint must be an http(s) URL such as https://minio.example:9000")
      } else {
        s.endpoint = v
      }
    }
    if let n = sf["addressing"]?.value, let v = string(n, "\(what).addressing") {
      s.addressing = S3Options.Addressing(rawValue: v)
      if s.addressing == nil { error(n.mark, "\(what).addressing must be path or virtual, not '\(v)'") }
    }
    if let n = sf["profile"]?.value, let v = string(n, "\(what).profile") { s.profile = v }
    if let n = sf["page_size"]?.value { s.pageSize = integer(n, "\(what).page_size", range: 1...1000) }
    return s
  }

  /// `proxy: URL` or `proxy: none`.
  mutating func decodeProxy(_ node: YAMLNode, _ what: String) -> ProxySetting? {
    guard let raw = string(node, what) else { return nil }
    if raw == "none" { return ProxySetting.none }
    guard let e = expand(node, raw, what) else { return nil }
    let value = e.revealed
    let schemes = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]
    guard let sep = value.firstRange(of: "://"), schemes.contains(value[..<sep.lowerBound].lowercased()),
      value[sep.upperBound...].contains(where: { $0 != "/" })
    else {
      error(
        node.mark,
        "\(what) must be 'none' or a proxy URL such as http://proxy.example:3128 (schemes: \(schemes.joined(separator: ", ")))"
      )
      return nil
    }
    if value.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
      error(node.mark, "\(what) contains a space or control character; percent-encode it")
      return nil
    }
    // Credentials written in the URL itself are secrets too.
    let authority = value[sep.upperBound...].prefix { $0 != "/" }
    if let at = authority.lastIndex(of: "@") {
      let userinfo = authority[..<at]
      if let colon = userinfo.firstIndex(of: ":") {
        addSecret(String(userinfo[userinfo.index(after: colon)...]))
      }
      if !e.hasSecret {
        warning(
          node.mark,
          "\(what) holds credentials written in the manifest; take them from the environment, as in http://${PROXY_USER}:${PROXY_PASSWORD}@proxy:3128"
        )
      }
    }
    return .url(e)
  }

  /// `netrc: true` (`$NETRC`, else `~/.netrc`), `netrc: false`, or a path.
  mutating func decodeNetrc(_ node: YAMLNode, _ what: String) -> NetrcSetting? {
    if case .scalar(let s, .plain) = node.kind, ["true", "false", "True", "False", "TRUE", "FALSE"].contains(s) {
      guard s.lowercased() == "true" else { return .off }
      // The file `netrc: true` reads is held to the same rule as one named by path.
      let standard =
        environment["NETRC"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["HOME"].map { $0 + "/.netrc" }
      if let standard { checkPrivate(key: standard, at: node.mark, what) }
      return .standard
    }
    guard let path = existingPath(node, what, folder: false) else { return nil }
    checkPrivate(key: path, at: node.mark, what)
    return .file(path)
  }
}
