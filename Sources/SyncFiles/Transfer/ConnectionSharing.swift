internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// What `per_host` counted on each host, for `--verbose`: connections on
/// HTTP/1.1, streams on one connection over HTTP/2 (SPEC §9.1). Said once
/// per host, at the first answer that shows its protocol. Engine thread only.
struct ConnectionSharing {
  private var said: Set<String> = []

  /// The line to log for `host` after an answer over `version`
  /// (`CURLINFO_HTTP_VERSION`), or nil when it was said already or the
  /// answer shows no HTTP version (a file, a failed connection).
  mutating func note(host: String, version: Int, perHost: Int) -> String? {
    guard version != 0, !said.contains(host) else { return nil }
    said.insert(host)
    if version >= CURL_HTTP_VERSION_2_0 {
      return "* \(host) speaks HTTP/2: its transfers share one connection, per_host (\(perHost)) counts streams"
    }
    return "* \(host) speaks HTTP/1.x: one transfer per connection, per_host (\(perHost)) counts connections"
  }
}
