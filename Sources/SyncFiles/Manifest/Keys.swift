/// A key of a file entry (or of `defaults`), by its place in `Keys.file`:
/// the decoder looks each one up in every entry, and most are absent.
enum FileKey: Int, CaseIterable {
  case id, url, mirrors, destination, expectedBytes, maxBytes, sha256, schedule, notBefore
  case discretionary, headers, mode, retry, timeout, onChange, verify, tls, proxy, netrc
  case segments

  /// The key as written in a manifest.
  var name: String { Keys.file[rawValue] }
  /// Its bit in a set of present keys.
  var bit: UInt64 { 1 << UInt64(rawValue) }
}

/// The keys of the manifest format (SPEC §4), per context.
enum Keys {
  static let top = [
    "version", "name", "root", "journal", "metrics", "defaults", "limits", "conditions", "hooks", "files",
  ]
  static let file = [
    "id", "url", "mirrors", "destination", "expected_bytes", "max_bytes", "sha256", "schedule", "not_before",
    "discretionary", "headers", "mode", "retry", "timeout", "on_change", "verify", "tls", "proxy", "netrc",
    "segments",
  ]
  /// Keys that name one particular file and so cannot have a default.
  static let perFileOnly = ["id", "url", "mirrors", "destination", "sha256"]
  static let retry = ["attempts", "backoff", "max_backoff"]
  static let timeout = ["connect", "stall"]
  static let limits = ["parallel", "per_host", "rate", "deadline", "segments"]
  static let conditions = ["window", "ac_power"]
  static let hooks = ["on_complete"]
  static let verify = ["plugin", "with"]
  static let tls = ["ca_file", "ca_path", "client_cert", "client_key"]

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
