import SyncFilesCore

/// The keys that say which file an entry is, where it goes, what its bytes
/// must be and when it is due.
extension FileKeySpec {
  package static let sourceKeys: [FileKeySpec] = [
    .value(
      .id, "id", \.id, scope: .perFile, required: true, makesOptions: false,
      type: "`[A-Za-z0-9._-]+`", default: "required", example: "`id: iris`",
      rule: "unique in the manifest",
      schema: ##"{"$ref": "#/$defs/identifier"}"##
    ) { d, node, _ in d.decodeID(node) },
    .value(
      .url, "url", \.url, scope: .perFile, required: true, makesOptions: false,
      type: "http, https, file, s3, or a plugin's scheme", default: "required",
      example: "`url: https://data.example.org/iris.csv`",
      rule:
        "a scheme no plugin serves is an error naming the executable looked for; an `s3://` (or plugin) url ending in `/` is a prefix: one task per object below it",
      schema: ##"{"$ref": "#/$defs/url"}"##
    ) { d, node, label in d.url(node, label) },
    .value(
      .mirrors, "mirrors", \.mirrors, scope: .perFile,
      type: "list of URLs", default: "none", example: "`mirrors: [https://mirror.example.net/iris.csv]`",
      rule: "tried in order when `url` fails; http(s) mirrors that agree serve ranges of one file",
      schema: ##"{"type": "array", "items": {"$ref": "#/$defs/url"}}"##
    ) { d, node, _ in d.decodeMirrors(node) },
    .value(
      .destination, "destination", \.destination, scope: .perFile, required: true, makesOptions: false,
      type: "relative path", default: "required", example: "`destination: tables/iris.csv`",
      rule:
        "inside `root`, no `..`; two entries with one destination are an error. A prefix's is a folder and may end in `/` (`models/`); a file entry may lie inside it, and two prefixes' folders may not nest",
      schema: ##"{"type": "string", "minLength": 1}"##
    ) { d, node, label in
      // Confined to root in makeEntry, once root is known.
      d.string(node, label).map { (relative: $0, mark: node.mark) }
    },
    .value(
      .expectedBytes, "expected_bytes", \.expectedBytes, makesOptions: false,
      type: "size", default: "none (a warning)", example: "`expected_bytes: 4.5KiB`",
      rule:
        "upper bound for plan totals, ETA and the disk preflight; 64 MiB or more asks for ranges under `segments: auto`",
      schema: ##"{"$ref": "#/$defs/size"}"##
    ) { d, node, label in d.size(node, label) },
    .value(
      .maxBytes, "max_bytes", \.maxBytes,
      type: "size", default: "none", example: "`max_bytes: 10MiB`",
      rule: "a transfer that passes it is aborted, nothing installed",
      schema: ##"{"$ref": "#/$defs/size"}"##
    ) { d, node, label in d.decodeMaxBytes(node, label) },
    .value(
      .sha256, "sha256", \.sha256, scope: .perFile, makesOptions: false,
      type: "64 hex digits", default: "none", example: "`sha256: 3f2a…`",
      rule: "verified before install; a destination that already holds it is up to date without a transfer",
      schema: ##"{"type": "string", "pattern": "^[0-9a-fA-F]{64}$"}"##
    ) { d, node, _ in d.decodeSHA256(node) },
    .value(
      .schedule, "schedule", \.schedule,
      type: "`once`, `every DURATION`, or 5-field cron", default: "revalidate on every apply",
      example: "`schedule: \"0 3 * * *\"`",
      rule: "more often than 15m is a warning",
      schema: ##"{"$ref": "#/$defs/schedule"}"##
    ) { d, node, label in d.decodeSchedule(node, label) },
    .value(
      .notBefore, "not_before", \.notBefore, makesOptions: false,
      type: "RFC 3339 time", default: "none", example: "`not_before: 2026-12-01T00:00:00Z`",
      rule: "never starts earlier",
      schema: ##"{"$ref": "#/$defs/timestamp"}"##
    ) { d, node, label in d.decodeNotBefore(node, label) },
    .value(
      .discretionary, "discretionary", \.discretionary,
      type: "boolean", default: "false", example: "`discretionary: true`",
      rule: "runs only while `conditions` hold",
      schema: ##"{"type": "boolean"}"##
    ) { d, node, label in d.bool(node, label) },
  ]
}

extension ManifestDecoder {
  package mutating func decodeID(_ node: YAMLNode) -> String? {
    guard let s = string(node, "id") else { return nil }
    guard isIdentifier(s) else {
      error(node.mark, "id '\(s)' may use only letters, digits, '.', '_' and '-'")
      return nil
    }
    return s
  }

  package mutating func decodeMirrors(_ node: YAMLNode) -> [SourceURL]? {
    guard case .sequence(let items) = node.kind else {
      error(node.mark, "mirrors must be a list of URLs, found \(node.kindName)")
      return nil
    }
    var list: [SourceURL] = []
    for item in items { if let u = url(item, "mirror") { list.append(u) } }
    return list
  }

  mutating func decodeMaxBytes(_ node: YAMLNode, _ what: String) -> Int64? {
    let n = size(node, what)
    if n == 0 {
      error(node.mark, "\(what) of 0 would abort every transfer")
      return nil
    }
    return n
  }

  mutating func decodeSHA256(_ node: YAMLNode) -> String? {
    guard let s = string(node, "sha256") else { return nil }
    let hex = s.lowercased()
    if hex.count == 64 && hex.allSatisfy({ $0.isHexDigit }) { return hex }
    if hex.count == 64, let (i, c) = hex.enumerated().first(where: { !$0.element.isHexDigit }) {
      error(
        node.mark,
        "sha256 must be 64 hexadecimal digits (as printed by sha256sum); character \(i + 1) is '\(c)', not a hexadecimal digit"
      )
    } else {
      error(
        node.mark,
        "sha256 must be 64 hexadecimal digits (as printed by sha256sum), found \(s.count) character\(s.count == 1 ? "" : "s")"
      )
    }
    return nil
  }

  mutating func decodeSchedule(_ node: YAMLNode, _ what: String) -> Schedule? {
    guard let s = string(node, what) else { return nil }
    switch Schedule.parse(s) {
    case .success(let sch):
      if case .cron(let c) = sch, c.next(after: Timestamp(year: 2024, month: 1, day: 1)) == nil {
        error(node.mark, "schedule '\(s)' never fires (no such date)")
        return nil
      }
      if let gap = sch.shortestInterval, gap < .minutes(15) {
        warning(
          node.mark,
          "schedule '\(s)' is due as often as every \(gap); more often than 15m costs servers and links for little gain"
        )
      }
      return sch
    case .failure(let e):
      error(node.mark, "\(what): \(e.message)")
      return nil
    }
  }

  mutating func decodeNotBefore(_ node: YAMLNode, _ what: String) -> Timestamp? {
    guard let s = string(node, what) else { return nil }
    guard let t = Timestamp.parseRFC3339(s) else {
      error(node.mark, "\(what) '\(s)' is not an RFC 3339 date-time such as 2026-12-01T00:00:00Z")
      return nil
    }
    return t
  }
}
