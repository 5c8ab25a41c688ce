import SyncFilesCore

/// The values of a file entry's keys (or of `defaults`), each checked where
/// it is written.
extension ManifestDecoder {
  /// Decodes the keys of a file entry (or of `defaults`), each on its own.
  package mutating func decodeFileFields(_ node: YAMLNode, isDefaults: Bool) -> FileFields? {
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
    // Each key is decoded by its own declaration, in the order written.
    f.forEach { key, node in
      let spec = key.spec
      spec.decode(&self, node, isDefaults ? "defaults.\(spec.name)" : spec.name, &r)
      if spec.makesOptions { r.setsOptions = true }
    }
    return r
  }

  /// A mapping without some keys (already reported), so they are not reported twice.
  package func filtered(_ node: YAMLNode, dropping keys: [String]) -> YAMLNode {
    guard case .mapping(let pairs) = node.kind else { return node }
    var n = node
    n.kind = .mapping(pairs.filter { !keys.contains($0.key.scalarText ?? "") })
    return n
  }

  package mutating func decodeHeaders(_ node: YAMLNode, _ what: String) -> [Header]? {
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

  package mutating func decodeMode(_ node: YAMLNode, _ what: String) -> UInt32? {
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

  package mutating func decodeVerify(_ node: YAMLNode, _ what: String) -> [VerifySpec]? {
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
  package func json(_ node: YAMLNode) -> JSONValue {
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
