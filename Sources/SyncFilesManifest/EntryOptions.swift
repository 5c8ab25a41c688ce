import SyncFilesCore

public struct RetryPolicy: Sendable, Hashable {
  /// Every try, including the first.
  public var attempts: Int = 4
  public var backoff: TimeSpan = .seconds(2)
  public var maxBackoff: TimeSpan = .minutes(10)
  public init() {}
  public init(attempts: Int, backoff: TimeSpan, maxBackoff: TimeSpan) {
    self.attempts = attempts
    self.backoff = backoff
    self.maxBackoff = maxBackoff
  }

  /// The wait before retry `k` (1 for the first): `backoff` doubled for each
  /// retry after the first, times a jitter between half and all of it (`unit`
  /// in [0, 1), so that many clients do not retry in step), at least the
  /// server's Retry-After, at most `max_backoff`. The one retry formula, for
  /// transfers and for listings.
  public func delay(beforeRetry k: Int, retryAfter: Double?, unit: Double) -> Double {
    Self.delay(
      backoff: Double(backoff.seconds), maxBackoff: Double(maxBackoff.seconds), beforeRetry: k,
      retryAfter: retryAfter, unit: unit)
  }

  /// `backoff` doubled for each pass after the first: the one backoff
  /// formula, for the run's retries, the listings' and the journal's hold.
  public static func doubled(_ backoff: Double, pass k: Int) -> Double {
    backoff * Double(1 << min(max(k, 1) - 1, 30))
  }

  public static func delay(
    backoff: Double, maxBackoff: Double, beforeRetry k: Int, retryAfter: Double?, unit: Double
  ) -> Double {
    var d = doubled(backoff, pass: k) * (0.5 + unit * 0.5)
    if let retryAfter { d = max(d, retryAfter) }
    return min(d, maxBackoff)
  }
}

public struct Timeouts: Sendable, Hashable {
  public var connect: TimeSpan = .seconds(30)
  /// Abort when fewer than 1 KiB/s arrive for this long.
  public var stall: TimeSpan = .seconds(60)
  public init() {}
}

public struct Header: Sendable, Hashable {
  public var name: String
  public var value: ExpandedString
}

/// TLS settings of a file entry (`tls:`); absolute paths. Unset keys fall
/// back to the environment as curl reads it, then the system store.
public struct TLSOptions: Sendable, Hashable {
  public var caFile: String? = nil
  public var caPath: String? = nil
  public var clientCert: String? = nil
  public var clientKey: String? = nil
  public init() {}
  public var isEmpty: Bool { caFile == nil && caPath == nil && clientCert == nil && clientKey == nil }

  /// These keys, each one not set taken from `d` (an entry over `defaults`).
  func over(_ d: TLSOptions) -> TLSOptions {
    var t = self
    t.caFile = caFile ?? d.caFile
    t.caPath = caPath ?? d.caPath
    t.clientCert = clientCert ?? d.clientCert
    t.clientKey = clientKey ?? d.clientKey
    return t
  }
}

/// `proxy:` of a file entry; absent means the environment decides.
public enum ProxySetting: Sendable, Hashable {
  /// `proxy: none`: no proxy, whatever the environment says.
  case none
  /// A proxy URL (credentials in it are secrets).
  case url(ExpandedString)
}

/// `netrc:` of a file entry (absent or `false`: not read).
public enum NetrcSetting: Sendable, Hashable {
  /// `netrc: false`, also over a `defaults` that says true.
  case off
  /// `netrc: true`: `$NETRC`, else `~/.netrc`, read when the transfer starts.
  case standard
  /// `netrc: PATH` (absolute).
  case file(String)
}

/// How a file entry's requests reach the server: TLS trust, proxy, credentials file.
public struct NetworkOptions: Sendable, Hashable {
  public var tls = TLSOptions()
  public var proxy: ProxySetting? = nil
  public var netrc: NetrcSetting? = nil
  /// `s3:` (SPEC §9.4): where an `s3://` URL goes, over what the environment says.
  public var s3 = S3Options()
  public init() {}
}

/// The manifest's `s3:` keys; nil leaves each to the environment and the
/// AWS files (`S3Settings.resolve`).
public struct S3Options: Sendable, Hashable {
  public enum Addressing: String, Sendable, Hashable, CaseIterable { case path, virtual }
  public var region: String? = nil
  /// `scheme://host[:port]`.
  public var endpoint: String? = nil
  public var addressing: Addressing? = nil
  public var profile: String? = nil
  /// Keys a listing asks for per request (`max-keys`, 1…1000; nil: 1,000).
  public var pageSize: Int? = nil
  public init() {}

  /// These keys, each one not set taken from `d` (an entry over `defaults`).
  func over(_ d: S3Options) -> S3Options {
    var s = self
    s.region = region ?? d.region
    s.endpoint = endpoint ?? d.endpoint
    s.addressing = addressing ?? d.addressing
    s.profile = profile ?? d.profile
    s.pageSize = pageSize ?? d.pageSize
    return s
  }
}

public struct VerifySpec: Sendable, Hashable {
  public var plugin: String
  public var with: JSONValue
  /// Where the plugin executable was found.
  public var executable: String
}

/// What an entry rarely sets for itself: mostly inherited from `defaults`,
/// so entries with equal options share one box (`FileEntry.Values.options`).
public struct EntryOptions: Sendable, Hashable {
  public var mirrors: [SourceURL] = []
  public var maxBytes: Int64? = nil
  public var schedule: Schedule = .always
  public var discretionary: Bool = false
  public var headers: [Header] = []
  /// Permission bits, e.g. 0o644.
  public var mode: UInt32? = nil
  public var retry = RetryPolicy()
  public var timeout = Timeouts()
  public var onChange: [String]? = nil
  public var verify: [VerifySpec] = []
  public var network = NetworkOptions()
  /// `segments` (SPEC §8.3): nil is `auto`.
  public var segments: Int? = nil
  /// `cache_max_age` (SPEC §9.3): how old a cache's copy may be when it
  /// answers a revalidation (`Cache-Control: max-age`); 0 asks the origin.
  public var cacheMaxAge = TimeSpan(seconds: 0)
  /// `rate` (SPEC §10.4): this file's cap in bytes per second, under the session's.
  public var rate: Int64? = nil
  /// `checksums` and `signature` (SPEC §10.2): who vouches for the bytes.
  public var checksums: ChecksumSource? = nil
  public var signature: FileSignature? = nil
  /// `keep_versions` (SPEC §10.4): versions before the current one kept for `rollback`.
  public var keepVersions = 0
  /// Nothing limits or checks what is installed: no `max_bytes`, verifier, list or signature.
  var isUnbounded: Bool { maxBytes == nil && verify.isEmpty && checksums == nil && signature == nil }
  /// Set for a prefix (a url ending in `/`, SPEC §9.4): the entry stands
  /// for every object under it, and is expanded before planning.
  public var prefix: PrefixOptions? = nil
  public init() {}
}

/// What a prefix entry takes of the objects under it.
public struct PrefixOptions: Sendable, Hashable {
  /// Globs over the key below the prefix (`*` stops at `/`, `**` does not); empty: every key.
  public var include: [String] = []
  public var exclude: [String] = []
  /// Remove files this entry installed whose objects are gone from a complete listing.
  public var prune = false
  /// At most this much removed by one run's prune, or nothing is (SPEC §10.3).
  public var pruneMax = PruneLimit.default
  public init(include: [String] = [], exclude: [String] = [], prune: Bool = false) {
    self.include = include
    self.exclude = exclude
    self.prune = prune
  }
}

/// `prune_max`: how many of the files a prefix installed one run may remove.
public enum PruneLimit: Sendable, Hashable {
  case count(Int)
  /// A share of the installed files, 0 to 100.
  case percent(Double)

  public static let `default` = PruneLimit.percent(50)

  /// `10` or `50%` (a fraction such as `12.5%` too).
  package static func parse(_ text: String) -> PruneLimit? {
    if text.hasSuffix("%") {
      guard let p = Double(text.dropLast()), p >= 0, p <= 100, p.isFinite else { return nil }
      return .percent(p)
    }
    guard let n = Int(text), n >= 0 else { return nil }
    return .count(n)
  }

  /// Whether removing `removing` of `installed` files is allowed. One file
  /// may always go: the guard is against emptying a folder, not against
  /// an object deleted upstream.
  public func allows(removing: Int, of installed: Int) -> Bool {
    guard removing > 1 else { return true }
    switch self {
    case .count(let n): return removing <= n
    case .percent(let p): return Double(removing) <= Double(installed) * p / 100
    }
  }

  /// As written in a manifest.
  public var text: String {
    switch self {
    case .count(let n): return "\(n)"
    case .percent(let p): return p == p.rounded() ? "\(Int(p))%" : "\(p)%"
    }
  }
}
