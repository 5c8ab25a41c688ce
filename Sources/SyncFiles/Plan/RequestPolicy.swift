import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// The request a task's next try sends: resume, revalidate or fetch whole.
/// Computed once per task by the planner (shown by `plan`, probed by
/// `plan --remote`, sent by the engine); the runner asks for a new one only
/// when a try of this run left partial data behind.
public struct RequestPolicy: Sendable, Hashable {
  public enum Condition: Sendable, Hashable {
    /// Send the whole file.
    case none
    /// `Range: bytes=OFFSET-` and `If-Range`: the rest, only if still the
    /// version `held` names (its `ifRange` is never nil here).
    case resume(offset: Int64, held: Validators)
    /// `If-None-Match`: the file only if its ETag changed; with
    /// `If-Modified-Since` too when a strong date is known, because a cache
    /// such as Squid answers 304 to a revalidation only when asked with a
    /// date (origins that know ETags ignore the date, RFC 9110 §13.1.3).
    case ifNoneMatch(String, since: String?)
    /// `If-Modified-Since`: the file only if changed since this (strong) date.
    case ifModifiedSince(String)
  }

  /// What caches in between are told.
  public enum CacheDirective: Sendable, Hashable {
    /// Nothing: a first download may come from a fresh cached copy.
    case none
    /// `Cache-Control: max-age=0`: check with the origin before answering
    /// (SPEC §8.1), for requests whose validators can be trusted.
    case revalidate
    /// `Cache-Control: no-cache` and `Pragma: no-cache`: fetch from the origin
    /// whole. A cache would revalidate with its own copy's weak date and
    /// serve that copy (seen with Squid), so a weak date asks for a reload.
    case reload
  }

  public var condition: Condition
  public var caches: CacheDirective
  /// With `revalidate`: how old a cache's copy may be when it answers
  /// (`cache_max_age`, SPEC §9.3), in seconds; 0 makes it ask the origin.
  public var maxAge: Int64 = 0
  /// Why this request, in words for `plan`.
  public var note: String

  public init(condition: Condition, caches: CacheDirective, note: String) {
    self.condition = condition
    self.caches = caches
    self.note = note
  }

  public static let whole = RequestPolicy(condition: .none, caches: .none, note: "unconditional GET")

  /// Continue partial data of `size` bytes received under `held`, when that
  /// version can be named; nil when it cannot (the data must be discarded).
  public static func resume(size: Int64, held: Validators) -> RequestPolicy? {
    guard size > 0, held.ifRange != nil else { return nil }
    let kind = held.etag != nil ? "strong ETag" : "strong Last-Modified"
    return RequestPolicy(
      condition: .resume(offset: size, held: held), caches: .revalidate,
      note: "Range from byte \(size) with If-Range (\(kind))")
  }

  /// Check an installed file: conditional when its validators can be
  /// trusted, else the whole file (identical bytes then count as unchanged).
  /// `localMtime` (seconds) stands in for a file the journal does not know.
  /// Through a proxy (`throughProxy`) a strong date is sent alone: a shared
  /// cache then answers from its own copy, which it revalidates with the
  /// origin once per change, where an old `If-None-Match` would be passed
  /// on and make the origin send the whole file to every client (SPEC §9.3).
  public static func revalidate(
    installed: Validators?, localMtime: Int64?, throughProxy: Bool = false, cacheMaxAge: Int64 = 0
  ) -> RequestPolicy {
    var p = revalidating(installed: installed, localMtime: localMtime, throughProxy: throughProxy)
    if p.caches == .revalidate {
      p.maxAge = max(0, cacheMaxAge)
      if cacheMaxAge > 0 { p.note += "; a cache may answer from a copy up to \(cacheMaxAge) s old (cache_max_age)" }
    }
    return p
  }

  private static func revalidating(installed: Validators?, localMtime: Int64?, throughProxy: Bool) -> RequestPolicy {
    if let v = installed {
      if throughProxy, v.canRevalidate, v.dateIsStrong, let d = v.lastModified {
        return RequestPolicy(
          condition: .ifModifiedSince(d), caches: .revalidate,
          note: "If-Modified-Since alone (through a proxy: its cache answers from its own copy)")
      }
      if v.canRevalidate, let e = v.etag {
        let since = v.dateIsStrong ? v.lastModified : nil
        return RequestPolicy(
          condition: .ifNoneMatch(e, since: since), caches: .revalidate,
          note: since == nil ? "If-None-Match" : "If-None-Match and If-Modified-Since")
      }
      if v.canRevalidate, let d = v.lastModified {
        return RequestPolicy(
          condition: .ifModifiedSince(d), caches: .revalidate, note: "If-Modified-Since (strong Last-Modified)")
      }
      let why = v.hasWeakDate ? "installed under a weak Last-Modified" : "no validator recorded"
      return RequestPolicy(condition: .none, caches: .reload, note: "unconditional GET (\(why))")
    }
    if let m = localMtime {
      return RequestPolicy(
        condition: .ifModifiedSince(HTTPDate.format(Timestamp(seconds: m))), caches: .revalidate,
        note: "If-Modified-Since the file's modification time")
    }
    return RequestPolicy(condition: .none, caches: .reload, note: "unconditional GET")
  }

  /// True when a 304 answers this request legitimately.
  public var isConditional: Bool {
    switch condition {
    case .ifNoneMatch, .ifModifiedSince: return true
    case .none, .resume: return false
    }
  }

  /// The `If-Range` value of a resume.
  public var ifRange: String? {
    if case .resume(_, let held) = condition { return held.ifRange }
    return nil
  }

  /// The request header lines for HTTP. A resume asks for the bytes after
  /// what the partial holds now (`partialSize`), which the caller knows best.
  public func headerLines(partialSize: Int64) -> [String] {
    // Made for every request: one allocation for the list, one per line
    // (an interpolation would grow each line's buffer).
    var lines: [String] = []
    lines.reserveCapacity(4)
    switch condition {
    case .none: break
    case .resume(_, let held):
      lines.append("Range: bytes=\(partialSize)-")
      if let v = held.ifRange { lines.append("If-Range: " + v) }
    case .ifNoneMatch(let e, let since):
      lines.append("If-None-Match: " + e)
      if let since { lines.append("If-Modified-Since: " + since) }
    case .ifModifiedSince(let d): lines.append("If-Modified-Since: " + d)
    }
    switch caches {
    case .none: break
    case .revalidate: lines.append(maxAge == 0 ? "Cache-Control: max-age=0" : "Cache-Control: max-age=\(maxAge)")
    case .reload: lines += ["Cache-Control: no-cache", "Pragma: no-cache"]
    }
    return lines
  }
}
