import SyncFilesCore

/// A value in a box that copies share until one of them is changed (copy
/// on write); equal when the boxes are the same or the values are equal.
public struct SharedValue<Value> {
  private final class Box {
    // Written only through a SharedValue that holds the sole reference
    // (`_modify` below), so no access to a box can overlap a write to it:
    // the run-time exclusivity check, on every read of every entry's
    // field, could never fail here (it was a few percent of a steady run's work).
    @exclusivity(unchecked) package var value: Value
    package init(_ value: Value) { self.value = value }
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
  public static func == (a: SharedValue, b: SharedValue) -> Bool { a.sharesBox(with: b) || a.box.value == b.box.value }
  public func hash(into h: inout Hasher) { box.value.hash(into: &h) }
}

/// One file entry, merged over `defaults` and checked. Its values sit in
/// one shared box (copy on write): plans, facts and tasks pass entries
/// around by the hundred thousand, and copying the box is one reference
/// count where copying the values was one per string and list. The options
/// most entries inherit unchanged sit in a second box that those entries
/// share.
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
    /// Where `destination` starts in `destinationPath`: one text for both,
    /// not a second string per entry.
    package let destinationStart: UInt32
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
    package let idStart: UInt32
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
    // Without an optional's padding, as every entry holds them: -1 for no
    // expected size (sizes are not negative), Int64.min for no not_before.
    private var storedExpected: Int64 = -1
    private var notBeforeSeconds = Int64.min

    package static let defaultOptions = SharedValue(EntryOptions())

    package init(
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

  package init(_ values: Values) { box = SharedValue(values) }

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
  /// A rate or a timetable by time of day (SPEC §10.4).
  public var rate: RateCap? = nil
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
      out.rate = RateCap.least(out.rate, l.rate)
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
  /// `notify` (SPEC §10.4): the monitor to ping when a run begins and ends.
  public var notify: SourceURL? = nil
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
  public init() {}
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
