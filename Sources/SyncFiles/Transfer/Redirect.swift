import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// The one redirect rule, for `apply` and `plan --remote` alike. libcurl
/// follows no redirect itself: each hop is a new request, so the manifest's
/// headers go only to the origin of the task's own URL.
enum Redirect: Equatable {
  /// Ask the next URL.
  case follow(String)
  /// Refused, and why, in a user's words.
  case refuse(String)

  static let maxHops = 10

  /// Nil when the response is not a redirect (not 3xx, or a 304).
  static func decide(status: Int, location: String?, hops: Int) -> Redirect? {
    guard (300..<400).contains(status), status != 304 else { return nil }
    guard let next = location else { return .refuse("HTTP \(status) redirect without a Location") }
    let lower = next.lowercased()
    guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
      let scheme = next.split(separator: ":", maxSplits: 1).first.map(String.init) ?? next
      return .refuse("redirect refused: the target's scheme is '\(scheme)' (only http and https are followed)")
    }
    guard hops < maxHops else { return .refuse("more than \(maxHops) redirects") }
    return .follow(next)
  }
}
