import SyncFilesCore

/// Turns one manifest's YAML tree into validated values, collecting every
/// problem (not just the first) as a diagnostic with its line and column.
package struct ManifestDecoder {
  /// The path as the user named it, for diagnostics.
  package let file: String
  /// Absolute path of the manifest file.
  package let absolutePath: String
  package let environment: [String: String]
  package let plugins: any PluginCatalog
  package var diagnostics: [Diagnostic] = []
  /// Values substituted from the environment: no diagnostic may contain one.
  private(set) var substituted: Set<String> = []
  /// Stop reporting after this many problems in one manifest.
  package let maxDiagnostics = 500
  private var suppressed = 0
  /// The options of recent entries: an entry with equal options shares their
  /// box (most entries inherit every option from `defaults`).
  package var recentOptions: [SharedValue<EntryOptions>] = []
  /// The last host read from a URL: entries of one server share its text.
  package var lastHost = ""
  /// The part before the last `/` of the last URL: most entries of a
  /// manifest share it (`SourceURL` keeps it once).
  package var lastURLHead = ""

  package init(file: String, absolutePath: String, environment: [String: String], plugins: any PluginCatalog) {
    self.file = file
    self.absolutePath = absolutePath
    self.environment = environment
    self.plugins = plugins
  }

  package var folder: String { Paths.folder(of: absolutePath) }

  // MARK: - Reporting

  mutating func report(_ severity: Severity, _ mark: SourceMark?, _ message: String) {
    if diagnostics.count >= maxDiagnostics {
      suppressed += 1
      return
    }
    // Last line of defence: messages are built from the text as written, but
    // should any part of an expanded value slip in, it is masked here.
    var text = message
    for value in substituted where text.contains(value) {
      text = text.replacingAll(value, with: "<redacted>")
    }
    diagnostics.append(Diagnostic(file: file, mark: mark, severity: severity, message: text))
  }

  mutating func error(_ mark: SourceMark?, _ message: String) { report(.error, mark, message) }
  /// A value written in the manifest that must be masked like a `${VAR}` (a proxy password).
  mutating func addSecret(_ value: String) { if value.count >= 4 { substituted.insert(value) } }
  mutating func warning(_ mark: SourceMark?, _ message: String) { report(.warning, mark, message) }

  /// A warning whose message is built only if it will be kept: a large
  /// manifest can warn about every entry, and past the cap building the
  /// message would be the whole cost. (`message` must not capture the decoder.)
  mutating func warning(_ mark: SourceMark?, lazy message: () -> String) {
    if diagnostics.count >= maxDiagnostics {
      suppressed += 1
      return
    }
    report(.warning, mark, message())
  }

  mutating func finish() {
    if suppressed > 0 {
      diagnostics.append(
        Diagnostic(
          file: file, mark: nil, severity: diagnostics.hasErrors ? .error : .warning,
          message: "\(suppressed) more problems not shown"))
      suppressed = 0
    }
  }

  // MARK: - Structure

  /// The pairs of a mapping by key, after reporting non-mappings, non-scalar
  /// keys, duplicate keys and unknown keys (with a "did you mean").
  mutating func fields(_ node: YAMLNode, _ what: String, allowed: [String], suggestFrom: [String]? = nil)
    -> Fields<YAMLPair>?
  {
    var out = Fields<YAMLPair>()
    let checked = eachKnownPair(
      node, what, suggestFrom: suggestFrom ?? allowed, known: { k in allowed.contains { sameKey($0, k) } ? k : nil },
      isSet: { out[$0] != nil }, take: { k, pair in out.append(new: k, pair) })
    return checked ? out : nil
  }

  /// The values of a file entry (or of `defaults`) by key, checked as
  /// `fields` checks them against the file keys. Only the values are kept: a
  /// pair costs twice a value to copy, and the decoder reads each one it finds.
  mutating func fileFields(_ node: YAMLNode, _ what: String) -> KeyedFields<YAMLNode>? {
    var out = KeyedFields<YAMLNode>()
    let checked = eachKnownPair(
      node, what, suggestFrom: FileKeySpec.names, known: FileKey.init(named:), isSet: { out[$0] != nil },
      take: { k, pair in out.append(new: k, pair.value) })
    return checked ? out : nil
  }

  /// Hands `take` each pair of a mapping whose key is `known` and not yet
  /// set, reporting the others; false when `node` is not a mapping.
  private mutating func eachKnownPair<Key>(
    _ node: YAMLNode, _ what: String, suggestFrom: [String], known: (String) -> Key?, isSet: (Key) -> Bool,
    take: (Key, YAMLPair) -> Void
  ) -> Bool {
    guard case .mapping(let pairs) = node.kind else {
      error(node.mark, "\(what) must be a mapping, found \(node.kindName)")
      return false
    }
    // By index: iterating would copy each pair, key and value.
    for i in pairs.indices {
      guard case .scalar(let key, _) = pairs[i].key.kind else {
        error(pairs[i].key.mark, "keys in \(what) must be plain words, found \(pairs[i].key.kindName)")
        continue
      }
      guard let k = known(key) else {
        unknownKey(key, at: pairs[i].key.mark, in: what, allowed: suggestFrom)
        continue
      }
      // Only known keys are kept, so only they can be duplicates.
      if isSet(k) {
        // The key's first pair is the one kept: the first of its name.
        let first = pairs.first { if case .scalar(let k, _) = $0.key.kind { k == key } else { false } }
        error(pairs[i].key.mark, "duplicate key '\(key)' in \(what) (first set at line \(first?.key.mark.line ?? 0))")
        continue
      }
      take(k, pairs[i])
    }
    return true
  }

  mutating func unknownKey(_ key: String, at mark: SourceMark, in what: String, allowed: [String]) {
    var message = "unknown key '\(key)' in \(what)"
    if let s = Suggest.closest(to: key, in: allowed) {
      message += "; did you mean '\(s)'?"
    } else if let home = Keys.home(of: key) {
      message += "; '\(key)' belongs in \(home)"
    } else {
      message += " (expected one of: \(allowed.joined(separator: ", ")))"
    }
    error(mark, message)
  }

  // MARK: - ${VAR} expansion

  /// Expands `${NAME}` from the environment; `$${` writes a literal `${`.
  /// Unset variables are errors pointing at the reference itself.
  mutating func expand(_ node: YAMLNode, _ text: String, _ what: String) -> ExpandedString? {
    guard text.containsByte(where: { $0 == UInt8(ascii: "$") }) else { return ExpandedString(plain: text) }
    var out = ""
    var substituted = false
    var ok = true
    let chars = Array(text)
    var i = 0
    while i < chars.count {
      let c = chars[i]
      if c == "$", i + 2 < chars.count, chars[i + 1] == "$", chars[i + 2] == "{" {
        out += "${"
        i += 3
        continue
      }
      if c == "$", i + 1 < chars.count, chars[i + 1] == "{" {
        guard let close = chars[(i + 2)...].firstIndex(of: "}") else {
          error(markInScalar(node, offset: i), "'${' in \(what) is not closed with '}'")
          return nil
        }
        let name = String(chars[(i + 2)..<close])
        let validName =
          !name.isEmpty && name.first.map { $0 == "_" || ($0.isASCII && $0.isLetter) } == true
          && name.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
        if !validName {
          error(
            markInScalar(node, offset: i),
            "'${\(name)}' in \(what) is not a variable name (letters, digits and _, not starting with a digit)")
          ok = false
        } else if let value = environment[name] {
          out += value
          substituted = true
          if value.count >= 4 { self.substituted.insert(value) }
        } else {
          error(markInScalar(node, offset: i), "environment variable \(name) is not set (used in \(what))")
          ok = false
        }
        i = close + 1
        continue
      }
      out.append(c)
      i += 1
    }
    return ok ? ExpandedString(template: text, value: out, hasSecret: substituted) : nil
  }

  /// The position of a character inside a one-line plain or quoted scalar.
  func markInScalar(_ node: YAMLNode, offset: Int) -> SourceMark {
    guard case .scalar(let s, let style) = node.kind, !s.contains("\n"), !s.contains("\\"), style != .block
    else { return node.mark }
    return SourceMark(line: node.mark.line, column: node.mark.column + offset + (style == .quoted ? 1 : 0))
  }

  // MARK: - URLs

  /// Checks a URL value (after `${VAR}` expansion) and reads its scheme,
  /// host and port; messages never show what a variable produced.
  mutating func url(_ node: YAMLNode, _ what: String) -> SourceURL? {
    guard let raw = string(node, what), let expanded = expand(node, raw, what) else { return nil }
    let value = expanded.revealed
    let shown = expanded.template
    if value.isEmpty {
      error(node.mark, "\(what) is empty")
      return nil
    }
    // By bytes: in UTF-8 these scalars are exactly the bytes <= 0x20 and 0x7F.
    if value.containsByte(where: { $0 <= 0x20 || $0 == 0x7F }) {
      error(
        node.mark,
        "\(what) '\(shown)' contains a space or control character\(expanded.hasSecret ? " (after ${VAR} expansion)" : ""); percent-encode it"
      )
      return nil
    }
    func isSchemeByte(_ b: UInt8) -> Bool {
      (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2B || b == 0x2E
        || b == 0x2D
    }
    guard let colon = value.utf8.firstIndex(of: 0x3A),
      let first = value.utf8.first, (first >= 0x61 && first <= 0x7A) || (first >= 0x41 && first <= 0x5A),
      value.utf8[..<colon].allSatisfy(isSchemeByte)
    else {
      error(node.mark, "\(what) '\(shown)' has no scheme: expected http://, https:// or file://")
      return nil
    }
    let scheme = String(value[..<colon]).lowercasedIfNeeded()
    let rest = value[value.index(after: colon)...]
    switch scheme {
    case "http", "https": return httpURL(node, what, scheme: scheme, rest: rest, expanded: expanded)
    case "file": return fileURL(node, what, rest: rest, expanded: expanded)
    default: return pluginURL(node, what, scheme: scheme, rest: rest, expanded: expanded)
    }
  }

  private mutating func httpURL(
    _ node: YAMLNode, _ what: String, scheme: String, rest: Substring, expanded: ExpandedString
  ) -> SourceURL? {
    let (shown, secret) = (expanded.template, expanded.hasSecret)
    guard rest.withUTF8Bytes({ $0.count >= 2 && $0[0] == 0x2F && $0[1] == 0x2F }) else {
      error(node.mark, "\(what) '\(shown)' must start with \(secret ? "a scheme and //" : scheme + "://")")
      return nil
    }
    guard let auth = authority(rest.dropFirst(2), node: node, what: what, shown: shown, secret: secret) else {
      return nil
    }
    guard !auth.host.isEmpty else {
      error(node.mark, "\(what) '\(shown)' has no host")
      return nil
    }
    let port = auth.port ?? (scheme == "https" ? 443 : 80)
    if let user = auth.userinfo, user.contains(":") && !SourceURL.userinfo(shown).contains("${") {
      warning(
        node.mark,
        "\(what) carries a password in clear; send credentials in a header from the environment, as in headers: { Authorization: \"Basic ${CREDENTIALS}\" }"
      )
    }
    return SourceURL(
      scheme: scheme, text: expanded, host: auth.host.lowercasedIfNeeded(), port: port,
      hidesPassword: auth.userinfo != nil, sharedHead: &lastURLHead)
  }

  /// `file:///abs`, `file://localhost/abs`, `file:/abs`, or (an extension)
  /// `file:rel/path`, relative to the manifest's folder.
  private mutating func fileURL(_ node: YAMLNode, _ what: String, rest: Substring, expanded: ExpandedString)
    -> SourceURL?
  {
    let shown = expanded.template
    var path: String
    if rest.hasPrefix("//") {
      let afterSlashes = rest.dropFirst(2)
      let slash = afterSlashes.firstIndex(of: "/") ?? afterSlashes.endIndex
      let host = afterSlashes[..<slash]
      if !host.isEmpty && host.lowercased() != "localhost" {
        // A part of the expanded URL is hidden when a ${VAR} may have produced it.
        let named = expanded.hasSecret ? "(after ${VAR} expansion)" : "'\(host)'"
        error(node.mark, "\(what) '\(shown)': file URLs name a local path; host \(named) is not supported")
        return nil
      }
      path = String(afterSlashes[slash...])
    } else if rest.hasPrefix("/") {
      path = String(rest)
    } else {
      guard !rest.isEmpty else {
        error(node.mark, "\(what) '\(shown)' names no file")
        return nil
      }
      // `rest` is already percent-encoded (it is a URL reference); the folder is not.
      let encodedFolder = String(Paths.fileURL(forAbsolutePath: folder).dropFirst("file://".count))
      path = Paths.normalize(String(rest), relativeTo: encodedFolder)
      let text = ExpandedString(template: expanded.template, value: "file://" + path, hasSecret: expanded.hasSecret)
      return SourceURL(scheme: "file", text: text, host: "", port: nil, hidesPassword: false)
    }
    if path.isEmpty || path == "/" || path.hasSuffix("/") {
      error(node.mark, "\(what) '\(shown)' names a folder, not a file")
      return nil
    }
    let text = ExpandedString(template: expanded.template, value: "file://" + path, hasSecret: expanded.hasSecret)
    return SourceURL(scheme: "file", text: text, host: "", port: nil, hidesPassword: false)
  }

  /// A scheme a source plugin serves; its host and port when it has an authority.
  private mutating func pluginURL(
    _ node: YAMLNode, _ what: String, scheme: String, rest: Substring, expanded: ExpandedString
  ) -> SourceURL? {
    let (shown, secret) = (expanded.template, expanded.hasSecret)
    let executable = PluginLocator.sourceExecutable(scheme: scheme)
    if !plugins.servesScheme(scheme) {
      error(
        node.mark,
        secret
          ? "\(what) '\(shown)': no plugin serves its scheme (after ${VAR} expansion) (built in: \(plugins.builtInSchemes.joined(separator: ", ")))"
          : "no plugin serves '\(scheme):' URLs: looked for an executable '\(executable)' in SYNCFILES_PLUGIN_PATH and PATH (built in: \(plugins.builtInSchemes.joined(separator: ", ")))"
            + (Suggest.closest(to: scheme, in: plugins.builtInSchemes).map { "; did you mean '\($0):'?" } ?? "")
      )
      return nil
    }
    var host = ""
    var port: Int? = nil
    if rest.hasPrefix("//"),
      let auth = authority(rest.dropFirst(2), node: node, what: what, shown: shown, secret: secret)
    {
      host = auth.host.lowercased()
      port = auth.port
    }
    return SourceURL(scheme: scheme, text: expanded, host: host, port: port, hidesPassword: true)
  }

  private mutating func authority(
    _ s: Substring, node: YAMLNode, what: String, shown: String, secret: Bool
  ) -> (userinfo: String?, host: String, port: Int?)? {
    // Found in one pass over the bytes in place: searching the string's
    // views piece by piece costs more than the rest of decoding an entry's URL.
    var s = s
    return s.withUTF8 { bytes in
      let parts = AuthorityParts(bytes)
      func text(_ r: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[r]), as: UTF8.self) }
      switch parts.problem {
      case .unclosedIPv6?:
        error(node.mark, "\(what) '\(shown)' has an unclosed IPv6 address")
        return nil
      case .afterIPv6?:
        error(node.mark, "\(what) '\(shown)' has a malformed host")
        return nil
      case .forbiddenInHost?:
        error(node.mark, "\(what) '\(shown)' has a malformed host\(secret ? "" : " '\(text(parts.host))'")")
        return nil
      case .badPort?:
        let p = parts.port.map(text) ?? ""
        error(node.mark, "\(what) '\(shown)' has an invalid port\(secret ? "" : " '\(p)'") (1-65535)")
        return nil
      case nil:
        break
      }
      // Most entries of a manifest name one server: they share its text.
      let host = UnsafeBufferPointer(rebasing: bytes[parts.host])
      if !lastHost.hasBytes(host) { lastHost = String(decoding: host, as: UTF8.self) }
      return (parts.userinfo.map(text), lastHost, parts.portNumber)
    }
  }
}
