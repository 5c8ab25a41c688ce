/// The values of a file entry's keys (or of `defaults`), each checked where
/// it is written.
extension ManifestDecoder {
  /// Decodes the keys of a file entry (or of `defaults`), each on its own.
  mutating func decodeFileFields(_ node: YAMLNode, isDefaults: Bool) -> FileFields? {
    let what = isDefaults ? "defaults" : "a file entry"
    guard case .mapping(let pairs) = node.kind else {
      error(node.mark, "\(what) must be a mapping with at least id, url and destination, found \(node.kindName)")
      return nil
    }
    if isDefaults {
      for p in pairs {
        if let k = p.key.scalarText, Keys.perFileOnly.contains(k) {
          error(p.key.mark, "'\(k)' names one file and cannot have a default; set it in each file entry")
        }
        if let k = p.key.scalarText, Keys.prefixOnly.contains(k) {
          error(
            p.key.mark,
            "'\(k)' selects the objects of one prefix and cannot have a default; set it in the prefix's entry")
        }
      }
    }
    // Defaults are checked against every file key: those that name one file
    // were reported above and are dropped here.
    guard let f = fileFields(isDefaults ? filtered(node, dropping: Keys.perFileOnly + Keys.prefixOnly) : node, what)
    else { return nil }
    var r = FileFields()
    r.marks = f.mapValues(\.mark)
    let label = { (key: String) in isDefaults ? "defaults.\(key)" : key }

    decodeSource(f, into: &r)
    decodeSizes(f, into: &r, label: label)
    decodeWhen(f, into: &r, label: label)
    decodePatience(f, into: &r, label: label)
    if let p = f[.discretionary] { r.discretionary = bool(p, label("discretionary")) }
    if let p = f[.segments] { r.segments = decodeSegments(p, label("segments")) }
    if let p = f[.cacheMaxAge] { r.cacheMaxAge = duration(p, label("cache_max_age"), positive: false) }
    if let p = f[.headers] { r.headers = decodeHeaders(p, label("headers")) }
    if let p = f[.mode] { r.mode = decodeMode(p, label("mode")) }
    if let p = f[.onChange] { r.onChange = command(p, label("on_change")) }
    if let p = f[.verify] { r.verify = decodeVerify(p, label("verify")) }
    decodeNetwork(f, into: &r, label: label)
    if let p = f[.include] { r.include = globs(p, "include") }
    if let p = f[.exclude] { r.exclude = globs(p, "exclude") }
    if let p = f[.prune] { r.prune = bool(p, "prune") }
    if let p = f[.pruneMax] { r.pruneMax = decodePruneMax(p, label("prune_max")) }
    return r
  }

  /// `prune_max`: a count of files (`10`) or a share of those the prefix installed (`50%`).
  mutating func decodePruneMax(_ node: YAMLNode, _ what: String) -> PruneLimit? {
    guard let text = string(node, what) else { return nil }
    if let limit = PruneLimit.parse(text) { return limit }
    error(
      node.mark,
      "\(what) must be a count of files such as 10, or a percentage from 0% to 100% such as 50%, found '\(text)'")
    return nil
  }

  /// `include` or `exclude`: a glob, or a list of them, over the keys below a prefix.
  mutating func globs(_ node: YAMLNode, _ what: String) -> [String]? {
    let items: [YAMLNode]
    switch node.kind {
    case .sequence(let list): items = list
    case .scalar where !node.isNull: items = [node]
    default:
      error(node.mark, "\(what) must be a glob or a list of globs such as ['*.bin', 'v2/**'], found \(node.kindName)")
      return nil
    }
    var out: [String] = []
    for item in items {
      guard let g = string(item, "each glob of \(what)") else { return nil }
      if g.isEmpty || g.hasPrefix("/") {
        error(item.mark, "\(what) glob '\(g)' matches keys below the prefix, so it cannot be empty or start with /")
        return nil
      }
      out.append(g)
    }
    return out
  }

  /// id, url, mirrors and destination: where the file comes from and goes.
  mutating func decodeSource(_ f: Fields<YAMLNode>, into r: inout FileFields) {
    if let p = f[.id], let s = string(p, "id") {
      if isIdentifier(s) {
        r.id = s
      } else {
        error(p.mark, "id '\(s)' may use only letters, digits, '.', '_' and '-'")
      }
    }
    if let p = f[.url] { r.url = url(p, "url") }
    if let p = f[.mirrors] {
      if case .sequence(let items) = p.kind {
        var list: [SourceURL] = []
        for item in items { if let u = url(item, "mirror") { list.append(u) } }
        r.mirrors = list
      } else {
        error(p.mark, "mirrors must be a list of URLs, found \(p.kindName)")
      }
    }
    if let p = f[.destination], let s = string(p, "destination") {
      // Confined to root in makeEntry, once root is known.
      r.destination = (s, p.mark)
    }
  }

  /// expected_bytes, max_bytes and sha256: what the bytes must be.
  mutating func decodeSizes(_ f: Fields<YAMLNode>, into r: inout FileFields, label: (String) -> String) {
    if let p = f[.expectedBytes] { r.expectedBytes = size(p, label("expected_bytes")) }
    if let p = f[.maxBytes] {
      r.maxBytes = size(p, label("max_bytes"))
      if r.maxBytes == 0 {
        error(p.mark, "\(label("max_bytes")) of 0 would abort every transfer")
        r.maxBytes = nil
      }
    }
    if let p = f[.sha256], let s = string(p, "sha256") {
      let hex = s.lowercased()
      if hex.count == 64 && hex.allSatisfy({ $0.isHexDigit }) {
        r.sha256 = hex
      } else if hex.count == 64, let (i, c) = hex.enumerated().first(where: { !$0.element.isHexDigit }) {
        error(
          p.mark,
          "sha256 must be 64 hexadecimal digits (as printed by sha256sum); character \(i + 1) is '\(c)', not a hexadecimal digit"
        )
      } else {
        error(
          p.mark,
          "sha256 must be 64 hexadecimal digits (as printed by sha256sum), found \(s.count) character\(s.count == 1 ? "" : "s")"
        )
      }
    }
  }

  /// schedule and not_before: when the file is due.
  mutating func decodeWhen(_ f: Fields<YAMLNode>, into r: inout FileFields, label: (String) -> String) {
    if let p = f[.schedule], let s = string(p, label("schedule")) {
      switch Schedule.parse(s) {
      case .success(let sch):
        if case .cron(let c) = sch, c.next(after: Timestamp(year: 2024, month: 1, day: 1)) == nil {
          error(p.mark, "schedule '\(s)' never fires (no such date)")
        } else {
          r.schedule = sch
          if let gap = sch.shortestInterval, gap < .minutes(15) {
            warning(
              p.mark,
              "schedule '\(s)' is due as often as every \(gap); more often than 15m costs servers and links for little gain"
            )
          }
        }
      case .failure(let e): error(p.mark, "\(label("schedule")): \(e.message)")
      }
    }
    if let p = f[.notBefore], let s = string(p, label("not_before")) {
      if let t = Timestamp.parseRFC3339(s) {
        r.notBefore = t
      } else {
        error(
          p.mark,
          "\(label("not_before")) '\(s)' is not an RFC 3339 date-time such as 2026-12-01T00:00:00Z")
      }
    }
  }

  /// retry and timeout: how long to keep trying.
  mutating func decodePatience(_ f: Fields<YAMLNode>, into r: inout FileFields, label: (String) -> String) {
    if let p = f[.retry], let rf = fields(p, label("retry"), allowed: Keys.retry) {
      if let a = rf["attempts"] { r.attempts = integer(a.value, label("retry.attempts"), range: 1...100) }
      if let b = rf["backoff"] { r.backoff = duration(b.value, label("retry.backoff")) }
      if let m = rf["max_backoff"] {
        r.maxBackoff = duration(m.value, label("retry.max_backoff"))
        r.marks["max_backoff"] = m.value.mark
      }
    }
    if let p = f[.timeout], let tf = fields(p, label("timeout"), allowed: Keys.timeout) {
      if let c = tf["connect"] { r.connect = duration(c.value, label("timeout.connect")) }
      if let s = tf["stall"] { r.stall = duration(s.value, label("timeout.stall")) }
    }
  }

  /// A mapping without some keys (already reported), so they are not reported twice.
  func filtered(_ node: YAMLNode, dropping keys: [String]) -> YAMLNode {
    guard case .mapping(let pairs) = node.kind else { return node }
    var n = node
    n.kind = .mapping(pairs.filter { !keys.contains($0.key.scalarText ?? "") })
    return n
  }

  mutating func decodeHeaders(_ node: YAMLNode, _ what: String) -> [Header]? {
    guard case .mapping(let pairs) = node.kind else {
      error(node.mark, "\(what) must be a mapping of header names to values, found \(node.kindName)")
      return nil
    }
    var out: [Header] = []
    var seen: [String: SourceMark] = [:]
    for p in pairs {
      guard let name = p.key.scalarText, !p.key.isNull else {
        error(p.key.mark, "header names in \(what) must be plain words")
        continue
      }
      let isToken =
        !name.isEmpty
        && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "!#$%&'*+-.^_`|~".contains($0)) }
      guard isToken else {
        error(p.key.mark, "'\(name)' is not a valid HTTP header name")
        continue
      }
      let lower = name.lowercased()
      if let first = seen[lower] {
        error(p.key.mark, "header '\(name)' is set twice in \(what) (first at line \(first.line))")
        continue
      }
      seen[lower] = p.key.mark
      if Keys.managedHeaders.contains(lower) {
        error(
          p.key.mark, "header '\(name)' is managed by syncfiles (resume, revalidation and encoding) and cannot be set")
        continue
      }
      guard let raw = string(p.value, "header '\(name)'"), let value = expand(p.value, raw, "header '\(name)'") else {
        continue
      }
      if value.revealed.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0.value == 0 }) {
        error(
          p.value.mark,
          "header '\(name)' contains a line break or NUL\(value.hasSecret ? " after ${VAR} expansion" : ""), which would inject headers"
        )
        continue
      }
      let sensitive =
        ["authorization", "proxy-authorization", "cookie"].contains(lower)
        || ["token", "secret", "api-key", "apikey", "password"].contains(where: { lower.contains($0) })
      if sensitive && !value.hasSecret && !raw.isEmpty {
        warning(
          p.value.mark,
          "header '\(name)' holds a secret written in the manifest; take it from the environment, as in \"Bearer ${TOKEN}\", so it never reaches output or the journal"
        )
      }
      out.append(Header(name: name, value: value))
    }
    return out
  }

  mutating func decodeMode(_ node: YAMLNode, _ what: String) -> UInt32? {
    guard case .scalar(var s, _) = node.kind, !node.isNull else {
      error(node.mark, "\(what) must be octal permission bits such as \"0644\", found \(node.kindName)")
      return nil
    }
    let original = s
    if s.lowercased().hasPrefix("0o") { s = String(s.dropFirst(2)) }
    guard (3...4).contains(s.count) || (s.count == 5 && s.hasPrefix("0")),
      s.allSatisfy({ ("0"..."7").contains($0) }), let v = UInt32(s, radix: 8), v <= 0o7777
    else {
      error(node.mark, "\(what) '\(original)' is not octal permission bits such as \"0644\" or \"0755\"")
      return nil
    }
    if v & 0o7000 != 0 {
      // A file from the network must never become setuid, setgid or sticky (SPEC §8.2).
      error(
        node.mark,
        "\(what) '\(original)' sets the setuid, setgid or sticky bit; a downloaded file may not have them (use \"\(octalMode(v & 0o777))\")"
      )
      return nil
    }
    if v & 0o002 != 0 {
      warning(node.mark, "\(what) '\(original)' lets every user write the file")
    }
    return v
  }

  mutating func decodeVerify(_ node: YAMLNode, _ what: String) -> [VerifySpec]? {
    guard case .sequence(let items) = node.kind else {
      error(node.mark, "\(what) must be a list such as [{plugin: gpg, with: {...}}], found \(node.kindName)")
      return nil
    }
    var out: [VerifySpec] = []
    for item in items {
      guard let f = fields(item, "a verify entry", allowed: Keys.verify) else { continue }
      guard let p = f["plugin"] else {
        error(item.mark, "a verify entry needs 'plugin: NAME'")
        continue
      }
      guard let name = string(p.value, "verify plugin") else { continue }
      guard isIdentifier(name) else {
        error(p.value.mark, "verify plugin name '\(name)' may use only letters, digits, '.', '_' and '-'")
        continue
      }
      let executable = PluginLocator.verifierExecutable(name: name)
      guard let path = plugins.verifierLocation(named: name) else {
        error(
          p.value.mark,
          "verify plugin '\(name)' not found: looked for an executable '\(executable)' in SYNCFILES_PLUGIN_PATH and PATH"
        )
        continue
      }
      var with = JSONValue.object([])
      if let w = f["with"] {
        if case .mapping = w.value.kind {
          with = json(w.value)
        } else if !w.value.isNull {
          error(w.value.mark, "'with' of a verify entry must be a mapping, found \(w.value.kindName)")
          continue
        }
      }
      out.append(VerifySpec(plugin: name, with: with, executable: path))
    }
    return out
  }

  /// A YAML subtree as JSON for a plugin (plain scalars typed as YAML 1.2 core).
  func json(_ node: YAMLNode) -> JSONValue {
    switch node.kind {
    case .scalar(let s, let style):
      if node.isNull { return .null }
      if style == .plain {
        if ["true", "True", "TRUE"].contains(s) { return .bool(true) }
        if ["false", "False", "FALSE"].contains(s) { return .bool(false) }
        if let i = Int64(s) { return .int(i) }
        if s.contains("."), let d = Double(s), d.isFinite { return .double(d) }
      }
      return .string(s)
    case .sequence(let items): return .array(items.map(json))
    case .mapping(let pairs): return .object(pairs.map { ($0.key.scalarText ?? "", json($0.value)) })
    }
  }
}
