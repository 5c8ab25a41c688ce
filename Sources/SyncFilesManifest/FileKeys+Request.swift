import SyncFilesCore

/// The keys that say how a file's requests are made, how long they are
/// tried, what checks the bytes and what runs after.
extension FileKeySpec {
  package static let requestKeys: [FileKeySpec] =
    [
      FileKeySpec(
        key: .headers, name: "headers", scope: .defaultable,
        type: "mapping", defaultText: "none", example: "`headers: {Authorization: \"Bearer ${TOKEN}\"}`",
        rule: "sent only to the URL's own origin; over plain http a credential is a warning",
        schema: ##"{"$ref": "#/$defs/headers"}"##,
        decode: { d, node, label, r in r.headers = d.decodeHeaders(node, label) },
        merge: { r, d in
          // Header by header: the entry's own win, case-insensitively.
          guard let dh = d.headers else { return }
          let own = Set((r.headers ?? []).map { $0.name.lowercased() })
          r.headers = (r.headers ?? []) + dh.filter { !own.contains($0.name.lowercased()) }
        }),
      .value(
        .mode, "mode", \.mode,
        type: "octal string", default: "`\"0644\"`", example: "`mode: \"0640\"`",
        rule: "held on every apply; setuid, setgid and sticky bits are errors",
        schema: ##"{"$ref": "#/$defs/mode"}"##
      ) { d, node, label in d.decodeMode(node, label) },
      FileKeySpec(
        key: .retry, name: "retry", scope: .defaultable,
        type: "mapping", defaultText: "see below", example: "`retry: {attempts: 3}`", rule: "",
        schema: ##"{"$ref": "#/$defs/retry"}"##,
        children: [
          Child(
            name: "attempts", type: "integer", defaultText: "4", example: "`attempts: 5`",
            rule: "every try, the first included"),
          Child(
            name: "backoff", type: "duration", defaultText: "2s", example: "`backoff: 30s`",
            rule: "the k-th retry waits backoff·2^(k-1), with jitter; also the hold across runs"),
          Child(
            name: "max_backoff", type: "duration", defaultText: "10m", example: "`max_backoff: 1h`",
            rule: "caps both waits"),
        ],
        decode: { d, node, label, r in d.decodeRetry(node, label, into: &r) },
        merge: { r, d in
          r.attempts = r.attempts ?? d.attempts
          r.backoff = r.backoff ?? d.backoff
          r.maxBackoff = r.maxBackoff ?? d.maxBackoff
        }),
      FileKeySpec(
        key: .timeout, name: "timeout", scope: .defaultable,
        type: "mapping", defaultText: "see below", example: "`timeout: {connect: 15s}`", rule: "",
        schema: ##"{"$ref": "#/$defs/timeout"}"##,
        children: [
          Child(name: "connect", type: "duration", defaultText: "30s", example: "`connect: 15s`", rule: ""),
          Child(
            name: "stall", type: "duration", defaultText: "60s", example: "`stall: 2m`",
            rule: "abort when under 1 KiB/s for that long"),
        ],
        decode: { d, node, label, r in d.decodeTimeout(node, label, into: &r) },
        merge: { r, d in
          r.connect = r.connect ?? d.connect
          r.stall = r.stall ?? d.stall
        }),
      .value(
        .onChange, "on_change", \.onChange,
        type: "command as a list", default: "none", example: "`on_change: [\"systemctl\", \"reload\", \"nginx\"]`",
        rule: "after this file was installed with bytes that differ from before",
        schema: ##"{"$ref": "#/$defs/command"}"##
      ) { d, node, label in d.command(node, label) },
      FileKeySpec(
        key: .verify, name: "verify", scope: .defaultable,
        type: "list of `{plugin, with}`", defaultText: "none", example: "`verify: [{plugin: gpg, with: {key: k.asc}}]`",
        rule: "each runs `syncfiles-verify-NAME` before install",
        schema: ##"{"$ref": "#/$defs/verify"}"##,
        children: [
          Child(
            name: "plugin", type: "name", defaultText: "required in an item", example: "`plugin: gpg`",
            rule: "the executable `syncfiles-verify-NAME` must exist"),
          Child(
            name: "with", type: "mapping", defaultText: "none", example: "`with: {key: k.asc}`",
            rule: "handed to the plugin as JSON"),
        ],
        decode: { d, node, label, r in r.verify = d.decodeVerify(node, label) },
        merge: { r, d in r.verify = r.verify ?? d.verify }),
    ] + networkKeys + [
      .value(
        .cacheMaxAge, "cache_max_age", \.cacheMaxAge,
        type: "duration", default: "0s", example: "`cache_max_age: 5m`",
        rule:
          "how old a shared cache's copy may be when it answers a revalidation (`Cache-Control: max-age`): the staleness it allows; 0 makes every cache ask the origin ([service](service.md#fleets-behind-one-cache))",
        schema: ##"{"$ref": "#/$defs/duration"}"##
      ) { d, node, label in d.duration(node, label, positive: false) },
      .value(
        .segments, "segments", \.segments,
        type: "`auto`, 1, or 2–16", default: "`auto`", example: "`segments: 8`",
        rule:
          "byte ranges at once, each on a connection of its own; `auto` is 4 from 64 MiB ([large files](large-files.md))",
        schema: ##"{"anyOf": [{"const": "auto"}, {"type": "integer", "minimum": 1, "maximum": 16}]}"##
      ) { d, node, label in d.decodeSegments(node, label) },
      .value(
        .keepVersions, "keep_versions", \.keepVersions,
        type: "integer 0–100", default: "0", example: "`keep_versions: 3`",
        rule:
          "the versions before the current one, kept whole in `.syncfiles-versions/` beside it (same file system, the oldest pruned first) for `syncfiles rollback`",
        schema: ##"{"type": "integer", "minimum": 0, "maximum": 100}"##
      ) { d, node, label in d.integer(node, label, range: 0...100) },
      .value(
        .rate, "rate", \.rate,
        type: "size per second", default: "none", example: "`rate: 2MB/s`",
        rule:
          "caps this file's transfer, under `limits.rate` and `--rate`; the ranges of a segmented file share it",
        schema: ##"{"$ref": "#/$defs/rate"}"##
      ) { d, node, label in d.decodeRate(node, label) },
    ]
}

extension ManifestDecoder {
  /// A rate in bytes per second, more than 0 (`20MB/s`, `10M`, `500000`).
  package mutating func decodeRate(_ node: YAMLNode, _ what: String) -> Int64? {
    guard let s = scalarText(node, what) else { return nil }
    switch ByteSize.parseRate(s) {
    case .success(let v) where v > 0: return v
    case .success: error(node.mark, "\(what) must be more than 0 bytes per second")
    case .failure(let e): error(node.mark, "\(what): \(e.message)")
    }
    return nil
  }

  /// `limits.rate`: a rate, or a timetable by time of day (`"08:00,512K 18:00,off"`).
  package mutating func decodeRateCap(_ node: YAMLNode, _ what: String) -> RateCap? {
    guard let s = scalarText(node, what) else { return nil }
    switch RateCap.parse(s) {
    case .success(let cap): return cap
    case .failure(let e):
      error(node.mark, "\(what): \(e.message)")
      return nil
    }
  }

  /// retry: how many tries, and how long between them.
  package mutating func decodeRetry(_ node: YAMLNode, _ what: String, into r: inout FileFields) {
    guard let rf = fields(node, what, allowed: Keys.retry) else { return }
    if let a = rf["attempts"] { r.attempts = integer(a.value, "\(what).attempts", range: 1...100) }
    if let b = rf["backoff"] { r.backoff = duration(b.value, "\(what).backoff") }
    if let m = rf["max_backoff"] {
      r.maxBackoff = duration(m.value, "\(what).max_backoff")
      r.maxBackoffMark = m.value.mark
    }
  }

  /// timeout: how long a connection and a silence may last.
  package mutating func decodeTimeout(_ node: YAMLNode, _ what: String, into r: inout FileFields) {
    guard let tf = fields(node, what, allowed: Keys.timeout) else { return }
    if let c = tf["connect"] { r.connect = duration(c.value, "\(what).connect") }
    if let s = tf["stall"] { r.stall = duration(s.value, "\(what).stall") }
  }
}
