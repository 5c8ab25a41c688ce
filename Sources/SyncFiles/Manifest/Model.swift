/// A string from the manifest after `${VAR}` expansion. Its description is
/// the text as written (with `${VAR}` intact), so printing it can never leak
/// a value taken from the environment; `revealed` is for the transfer only.
public struct ExpandedString: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// The text as written in the manifest.
  public let template: String
  private let value: String
  /// True when any `${VAR}` was substituted.
  public let hasSecret: Bool

  public init(template: String, value: String, hasSecret: Bool) {
    self.template = template
    self.value = value
    self.hasSecret = hasSecret
  }

  public init(plain: String) {
    self.init(template: plain, value: plain, hasSecret: false)
  }

  /// The expanded value, to hand to libcurl or a plugin. Never print it.
  public var revealed: String { value }
  public var description: String { template }
  public var debugDescription: String { template }
  public var customMirror: Mirror { Mirror(self, children: ["template": template]) }
}

/// A validated source URL.
public struct SourceURL: Sendable, Hashable, CustomStringConvertible {
  // A text with no `${VAR}` is kept in two parts: up to its last `/`, a
  // string the URLs of one folder share, and the rest, most often short
  // enough to need no allocation (a manifest of 100,000 entries: 80 bytes of text an entry became
  // none). One with a variable keeps its expanded text in a box.
  private let head: String
  private let tail: String
  private let expanded: SharedValue<ExpandedString>?
  /// `http`, `https` or `file` by number (no string of its own), 0 for a
  /// plugin's scheme, read from the text when asked.
  private let schemeCode: UInt8
  /// Whether the text shown hides a password (a URL with userinfo).
  private let hidesPassword: Bool
  /// The port, 0 for none (a URL's port is 1-65535): two bytes, not an
  /// optional's sixteen, in each of a manifest's entries.
  private let storedPort: UInt16
  /// Lower-case host (empty for `file:`).
  public let host: String

  /// `sharedHead`: the head of a URL made before; this one's head is that
  /// string when they are equal, and becomes it otherwise.
  public init(
    scheme: String, text: ExpandedString, host: String, port: Int?, hidesPassword: Bool,
    sharedHead: inout String
  ) {
    if text.hasSecret || text.revealed != text.template {
      (head, tail, expanded) = ("", "", SharedValue(text))
    } else {
      var whole = text.template
      (head, tail) = whole.withUTF8 { b in
        let cut = (b.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
        let h = UnsafeBufferPointer(rebasing: b[..<cut])
        if !sharedHead.hasBytes(h) { sharedHead = String(decoding: h, as: UTF8.self) }
        return (sharedHead, String(decoding: UnsafeBufferPointer(rebasing: b[cut...]), as: UTF8.self))
      }
      expanded = nil
    }
    switch scheme {
    case "http": schemeCode = 1
    case "https": schemeCode = 2
    case "file": schemeCode = 3
    default: schemeCode = 0
    }
    self.hidesPassword = hidesPassword
    self.storedPort = port.map { UInt16(clamping: $0) } ?? 0
    self.host = host
  }

  public init(scheme: String, text: ExpandedString, host: String, port: Int?, hidesPassword: Bool) {
    var head = ""
    self.init(scheme: scheme, text: text, host: host, port: port, hidesPassword: hidesPassword, sharedHead: &head)
  }

  /// The URL to fetch (after expansion; relative `file:` URLs made absolute).
  public var text: ExpandedString { expanded?.value ?? ExpandedString(plain: String(head, nil, tail)) }

  public static func == (a: SourceURL, b: SourceURL) -> Bool {
    a.text == b.text && a.schemeCode == b.schemeCode && a.hidesPassword == b.hidesPassword
      && a.storedPort == b.storedPort && a.host == b.host
  }

  public func hash(into h: inout Hasher) {
    h.combine(text)
    h.combine(host)
    h.combine(storedPort)
  }

  /// Lower-case scheme: `http`, `https`, `file`, or a plugin's scheme.
  public var scheme: String {
    switch schemeCode {
    case 1: return "http"
    case 2: return "https"
    case 3: return "file"
    default:
      let value = text.revealed
      return String(value[..<(value.firstIndex(of: ":") ?? value.endIndex)]).lowercased()
    }
  }

  /// Explicit or default port (nil where the scheme has none).
  public var port: Int? { storedPort == 0 ? nil : Int(storedPort) }

  /// For display: as written, with `${VAR}` intact and any password hidden.
  public var display: String { display(of: text) }

  /// `display`, given `text` already made (a URL kept in two parts is
  /// joined anew each time `text` is asked for).
  public func display(of text: ExpandedString) -> String {
    hidesPassword ? Self.hidingPassword(text.template) : text.template
  }

  /// `display` in two parts that join to it, made with no new string when
  /// the URL keeps its text in two (a fingerprint is fed part by part).
  public func withDisplayParts<R>(_ body: (String, String) -> R) -> R {
    guard expanded == nil, !hidesPassword else { return body(display, "") }
    return body(head, tail)
  }

  /// `scheme://host:port`, the origin headers are confined to.
  public var origin: String {
    port.map { "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)"
  }

  public var description: String { display }
  public var isBuiltIn: Bool { PluginLocator.libcurlSchemes.contains(scheme) }
  /// This prefix's url with an object's key below it appended, as listed
  /// (the source encodes it for its requests).
  public func appending(_ key: String, sharedHead: inout String) -> SourceURL {
    let t = text
    return SourceURL(
      scheme: scheme,
      text: ExpandedString(template: t.template + key, value: t.revealed + key, hasSecret: t.hasSecret), host: host,
      port: port, hidesPassword: hidesPassword, sharedHead: &sharedHead)
  }

  /// A prefix (SPEC §9.4): a url ending in `/` of a source that lists
  /// (every scheme but http, https and file, whose urls name one resource).
  public var namesPrefix: Bool { !isBuiltIn && text.template.hasSuffix("/") }

  /// The userinfo of a URL as written (`user:pw` of `https://user:pw@host/`).
  static func userinfo(_ shown: String) -> Substring {
    guard let colon = shown.firstIndex(of: ":") else { return "" }
    let afterColon = shown[shown.index(after: colon)...]
    guard afterColon.hasPrefix("//") else { return "" }
    let rest = afterColon.dropFirst(2)
    let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
    guard let at = rest[..<end].lastIndex(of: "@") else { return "" }
    return rest[..<at]
  }

  /// `https://user:pw@host/` → `https://user:***@host/` (variables stay as written).
  static func hidingPassword(_ shown: String) -> String {
    let user = userinfo(shown)
    guard let colon = user.firstIndex(of: ":"), !user.contains("${") else { return shown }
    var out = shown
    out.replaceSubrange(user.index(after: colon)..<user.endIndex, with: "***")
    return out
  }
}

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
  public init(include: [String] = [], exclude: [String] = [], prune: Bool = false) {
    self.include = include
    self.exclude = exclude
    self.prune = prune
  }
}

/// A value in a box that copies share until one of them is changed (copy
/// on write); equal when the boxes are the same or the values are equal.
public struct SharedValue<Value> {
  private final class Box {
    // Written only through a SharedValue that holds the sole reference
    // (`_modify` below), so no access to a box can overlap a write to it:
    // the run-time exclusivity check, on every read of every entry's
    // field, could never fail here (it was a few percent of a steady run's work).
    @exclusivity(unchecked) var value: Value
    init(_ value: Value) { self.value = value }
  }
  private var box: Box

  public init(_ value: Value) { box = Box(value) }

  public var value: Value {
    get { box.value }
    // In place when this is the box's only holder; else on a copy of its own.
    _modify {
      if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
      yield &box.value
    }
  }

  /// True when both hold the same box (not only equal values).
  public func sharesBox(with other: SharedValue) -> Bool { box === other.box }
}

extension SharedValue: @unchecked Sendable where Value: Sendable {}

extension SharedValue: Equatable, Hashable where Value: Hashable {
  public static func == (a: SharedValue, b: SharedValue) -> Bool { a.box === b.box || a.box.value == b.box.value }
  public func hash(into h: inout Hasher) { box.value.hash(into: &h) }
}

/// One file entry, merged over `defaults` and checked. Its values sit in
/// one shared box (copy on write): plans, facts and tasks pass entries
/// around by the hundred thousand, and copying the box is one reference
/// count where copying the values was one per string and list. The options
/// most entries inherit unchanged sit in a second box that those entries
/// share (a manifest of 100,000 entries: 536 bytes of values per entry became 240).
@dynamicMemberLookup
public struct FileEntry: Sendable, Hashable {
  public struct Values: Sendable, Hashable {
    /// `manifest-name/id`, unique in a session.
    public let qualifiedID: String
    /// The entry's own id: the end of `qualifiedID` (one text for both).
    public var id: String {
      Self.text(of: qualifiedID, from: idStart)
    }
    public var url: SourceURL
    /// Absolute, normalized path: the root, a slash, then `destination`.
    public let destinationPath: String
    /// Where `destination` starts in `destinationPath`: one text for both
    /// (a manifest of 100,000 entries: a second string was 80 bytes an entry).
    let destinationStart: UInt32
    /// Normalized, relative to the manifest's root (`tables/iris.csv`).
    public var destination: String {
      Self.text(of: destinationPath, from: destinationStart)
    }

    /// The end of `s` from its byte `start`, copied from its bytes in place
    /// (through the generic UTF-8 view it cost far more, and a
    /// request's destination is asked for at every try).
    private static func text(of s: String, from start: UInt32) -> String {
      s.withUTF8Bytes { String(decoding: UnsafeBufferPointer(rebasing: $0[Int(start)...]), as: UTF8.self) }
    }
    /// Where `id` starts in `qualifiedID`.
    let idStart: UInt32
    /// Where the entry starts, and where its destination is written.
    public var mark: SourceMark
    public var destinationMark: SourceMark
    public var expectedBytes: Int64? {
      get { storedExpected < 0 ? nil : storedExpected }
      set { storedExpected = newValue ?? -1 }
    }
    /// Lower-case hex.
    public var sha256: String? = nil
    public var notBefore: Timestamp? {
      get { notBeforeSeconds == .min ? nil : Timestamp(seconds: notBeforeSeconds) }
      set { notBeforeSeconds = newValue?.seconds ?? .min }
    }
    public var options = Values.defaultOptions
    // Without an optional's padding (an entry holds these 100,000 times in
    // a manifest of 100,000 entries): -1 for no expected size (sizes are not negative), Int64.min for
    // no not_before.
    private var storedExpected: Int64 = -1
    private var notBeforeSeconds = Int64.min

    static let defaultOptions = SharedValue(EntryOptions())

    init(
      qualifiedID: String, idStart: Int, url: SourceURL, destinationPath: String, destinationStart: Int,
      mark: SourceMark, destinationMark: SourceMark
    ) {
      self.qualifiedID = qualifiedID
      self.idStart = UInt32(idStart)
      self.url = url
      self.destinationPath = destinationPath
      self.destinationStart = UInt32(destinationStart)
      self.mark = mark
      self.destinationMark = destinationMark
    }
  }

  private var box: SharedValue<Values>

  init(_ values: Values) { box = SharedValue(values) }

  public var values: Values { box.value }

  public subscript<T>(dynamicMember key: WritableKeyPath<Values, T>) -> T {
    get { box.value[keyPath: key] }
    set { box.value[keyPath: key] = newValue }
  }

  public subscript<T>(dynamicMember key: KeyPath<Values, T>) -> T { box.value[keyPath: key] }

  /// The options (`entry.retry`, `entry.mode`, …), read through their shared box.
  public subscript<T>(dynamicMember key: WritableKeyPath<EntryOptions, T>) -> T {
    get { box.value.options.value[keyPath: key] }
    set { box.value.options.value[keyPath: key] = newValue }
  }

  public static func == (a: FileEntry, b: FileEntry) -> Bool { a.box == b.box }
  public func hash(into h: inout Hasher) { box.hash(into: &h) }
}

public struct Limits: Sendable, Hashable {
  public var parallel: Int? = nil
  public var perHost: Int? = nil
  /// Bytes per second.
  public var rate: Int64? = nil
  public var deadline: TimeSpan? = nil
  /// `limits.segments` (SPEC §8.3): ranges in flight in the session.
  public var segments: Int? = nil
  public init() {}

  public static let defaultParallel = 8
  public static let defaultSegments = 16
  public static let defaultPerHost = 6

  /// Session limits: where manifests disagree, the most restrictive wins.
  public static func merged(_ all: [Limits]) -> Limits {
    var out = Limits()
    func least<T: Comparable>(_ a: T?, _ b: T?) -> T? {
      switch (a, b) {
      case (nil, nil): return nil
      case (let x?, nil): return x
      case (nil, let y?): return y
      case (let x?, let y?): return Swift.min(x, y)
      }
    }
    for l in all {
      out.parallel = least(out.parallel, l.parallel)
      out.perHost = least(out.perHost, l.perHost)
      out.rate = least(out.rate, l.rate)
      out.deadline = least(out.deadline, l.deadline)
      out.segments = least(out.segments, l.segments)
    }
    return out
  }
}

public struct Conditions: Sendable, Hashable {
  public var window: TimeWindow? = nil
  public var acPower: Bool = false
  public init() {}
  public var isEmpty: Bool { window == nil && !acPower }
}

public struct Manifest: Sendable, Hashable {
  /// The path as the user named it (used in diagnostics).
  public var path: String
  /// Absolute path of the manifest file.
  public var absolutePath: String
  public var name: String
  /// Absolute, normalized.
  public var root: String
  /// Absolute journal path from the manifest's `journal` key, if any.
  public var journal: String?
  public var journalMark: SourceMark? = nil
  /// Absolute path of the Prometheus text file from the `metrics` key (SPEC §8.4).
  public var metrics: String? = nil
  public var limits = Limits()
  public var conditions = Conditions()
  public var onComplete: [String]? = nil
  public var files: [FileEntry] = []
  /// Values substituted from the environment (`${VAR}`): masked in every
  /// message a plugin or server may echo them into.
  public var secrets = Secrets()

  /// `text` with every secret of this manifest replaced by `<redacted>`.
  public func redacting(_ text: String) -> String { secrets.redacting(text) }
}

/// Values substituted from the environment. Never printed, dumped or
/// reflected: only used to mask them in text.
public struct Secrets: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  private var values: Set<String> = []

  public init(_ values: Set<String> = []) { self.values = values }

  /// The secrets of all these manifests, to mask in text that may touch any of them.
  public init(all: [Secrets]) { values = all.reduce(into: []) { $0.formUnion($1.values) } }

  public var isEmpty: Bool { values.isEmpty }
  public var description: String { "<\(values.count) secret value(s)>" }
  public var debugDescription: String { description }
  public var customMirror: Mirror { Mirror(self, children: ["count": values.count]) }

  public func redacting(_ text: String) -> String { masking(text, with: "<redacted>") }

  /// `text` with every secret value replaced by `mark`.
  public func masking(_ text: String, with mark: String) -> String {
    var out = text
    for value in values where out.contains(value) { out = out.replacingAll(value, with: mark) }
    return out
  }
}

/// Everything one call reads: all manifests of the session and what was wrong with them.
public struct ManifestSet: Sendable {
  public var manifests: [Manifest] = []
  public var diagnostics: [Diagnostic] = []
  public var hasErrors: Bool { diagnostics.hasErrors }
  public var limits: Limits { Limits.merged(manifests.map(\.limits)) }
  public var fileCount: Int { manifests.reduce(0) { $0 + $1.files.count } }
  /// Every manifest's secrets: a session check's message can name paths of two manifests.
  public var secrets: Secrets { Secrets(all: manifests.map(\.secrets)) }

  /// `found`, with every secret of the session masked: the session's checks
  /// work on expanded paths (a `${VAR}` in `root:` or `journal:`).
  func masked(_ found: [Diagnostic]) -> [Diagnostic] {
    let secrets = self.secrets
    guard !secrets.isEmpty else { return found }
    return found.map { d in
      var d = d
      d.message = secrets.redacting(d.message)
      return d
    }
  }
}
