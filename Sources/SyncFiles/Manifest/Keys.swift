/// A key of a file entry (or of `defaults`), by its place in `Keys.file`:
/// the decoder looks each one up in every entry, and most are absent.
enum FileKey: Int, CaseIterable {
  case id, url, mirrors, destination, expectedBytes, maxBytes, sha256, schedule, notBefore
  case discretionary, headers, mode, retry, timeout, onChange, verify, tls, proxy, netrc
  case segments, cacheMaxAge, s3, include, exclude, prune, pruneMax

  /// The key as written in a manifest.
  var name: String { Keys.file[rawValue] }
  /// Its bit in a set of present keys.
  var bit: UInt64 { 1 << UInt64(rawValue) }

  /// The keys that are an entry's own values; every other key makes its
  /// options (`EntryOptions`).
  static let entryValues: UInt64 = [FileKey.id, .url, .destination, .expectedBytes, .sha256, .notBefore].reduce(
    UInt64(0)
  ) { $0 | $1.bit }

  /// The slots (`Fields`: six bits a key, ten keys a word) of every key
  /// outside `entryValues`: an entry with none of them set keeps the
  /// default options, told by two tests instead of a look at each key.
  static let optionSlots: (UInt64, UInt64, UInt64) = allCases.reduce((0, 0, 0)) { words, k in
    guard entryValues & k.bit == 0 else { return words }
    let m = UInt64(63) << UInt64(k.rawValue % 10 * 6)
    switch k.rawValue / 10 {
    case 0: return (words.0 | m, words.1, words.2)
    case 1: return (words.0, words.1 | m, words.2)
    default: return (words.0, words.1, words.2 | m)
    }
  }

  /// The key written `name`, found by its length and then at most three
  /// comparisons (the decoder asks for every key of every entry: a large manifest has
  /// 500,000; a scan of `Keys.file` compared up to twenty).
  init?(named name: String) {
    let found: FileKey?
    switch name.utf8.count {
    case 2: found = name == "id" ? .id : .s3
    case 3: found = name == "url" ? .url : .tls
    case 4: found = .mode
    case 5: found = name == "retry" ? .retry : name == "proxy" ? .proxy : name == "netrc" ? .netrc : .prune
    case 6: found = name == "sha256" ? .sha256 : .verify
    case 7:
      switch name.utf8.first {
      case UInt8(ascii: "m"): found = .mirrors
      case UInt8(ascii: "h"): found = .headers
      case UInt8(ascii: "t"): found = .timeout
      case UInt8(ascii: "i"): found = .include
      default: found = .exclude
      }
    case 8: found = name == "schedule" ? .schedule : .segments
    case 9: found = name == "max_bytes" ? .maxBytes : name == "on_change" ? .onChange : .pruneMax
    case 10: found = .notBefore
    case 11: found = .destination
    case 13: found = name == "discretionary" ? .discretionary : .cacheMaxAge
    case 14: found = .expectedBytes
    default: found = nil
    }
    guard let found, found.name == name else { return nil }
    self = found
  }
}

/// The keys of the manifest format (SPEC §4), per context.
enum Keys {
  static let top = [
    "version", "name", "root", "journal", "metrics", "defaults", "limits", "conditions", "hooks", "files",
  ]
  static let file = [
    "id", "url", "mirrors", "destination", "expected_bytes", "max_bytes", "sha256", "schedule", "not_before",
    "discretionary", "headers", "mode", "retry", "timeout", "on_change", "verify", "tls", "proxy", "netrc",
    "segments", "cache_max_age", "s3", "include", "exclude", "prune", "prune_max",
  ]
  /// Keys that name one particular file and so cannot have a default.
  static let perFileOnly = ["id", "url", "mirrors", "destination", "sha256"]
  /// Keys of a prefix entry (a url ending in `/`), which select and prune its objects.
  static let prefixOnly = ["include", "exclude", "prune"]
  static let retry = ["attempts", "backoff", "max_backoff"]
  static let timeout = ["connect", "stall"]
  static let limits = ["parallel", "per_host", "rate", "deadline", "segments"]
  static let conditions = ["window", "ac_power"]
  static let hooks = ["on_complete"]
  static let verify = ["plugin", "with"]
  static let tls = ["ca_file", "ca_path", "client_cert", "client_key"]
  static let s3 = ["region", "endpoint", "addressing", "profile", "page_size"]

  /// Where a key belongs when it is used in the wrong place.
  static func home(of key: String) -> String? {
    if limits.contains(key) { return "limits" }
    if conditions.contains(key) { return "conditions" }
    if hooks.contains(key) { return "hooks" }
    if retry.contains(key) { return "retry" }
    if timeout.contains(key) { return "timeout" }
    if tls.contains(key) { return "tls" }
    if file.contains(key) { return "a file entry (under files:)" }
    if top.contains(key) { return "the top level of the manifest" }
    return nil
  }

  /// Headers syncfiles sets itself for resume and revalidation.
  static let managedHeaders = [
    "range", "if-range", "if-none-match", "if-modified-since", "if-match", "if-unmodified-since",
    "accept-encoding", "content-length", "transfer-encoding", "host", "connection", "te", "upgrade",
  ]
}
