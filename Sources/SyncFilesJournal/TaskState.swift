import SyncFilesCore
import SyncFilesManifest

/// What the journal remembers about one task between runs.
public struct TaskState: Sendable, Hashable {
  public enum Outcome: String, Sendable, Hashable {
    case installed, unchanged, failed, interrupted
  }

  /// The installed destination as syncfiles left it.
  public struct Installed: Sendable, Hashable {
    public var size: Int64
    /// Modification time in nanoseconds since the epoch, to notice edits behind our back.
    public var mtimeNs: Int64
    public var etag: String?
    public var lastModified: String?
    public var sha256: String?
    /// `lastModified` was a strong date when received (journals before v1.1: false).
    public var dateIsStrong: Bool
    public init(
      size: Int64, mtimeNs: Int64, etag: String? = nil, lastModified: String? = nil, sha256: String? = nil,
      dateIsStrong: Bool = false
    ) {
      self.size = size
      self.mtimeNs = mtimeNs
      self.etag = etag
      self.lastModified = lastModified
      self.sha256 = sha256
      self.dateIsStrong = dateIsStrong
    }
    public var validators: Validators {
      get { Validators(etag: etag, lastModified: lastModified, dateIsStrong: dateIsStrong) }
      set {
        etag = newValue.etag
        lastModified = newValue.lastModified
        dateIsStrong = newValue.dateIsStrong
      }
    }
  }

  /// Partial data held for a resume, and the validators it was started under.
  public struct Partial: Sendable, Hashable {
    public var path: String
    public var offset: Int64
    public var totalBytes: Int64?
    public var etag: String?
    public var lastModified: String?
    /// `lastModified` was a strong date when received (journals before v1.1: false).
    public var dateIsStrong: Bool
    /// A segmented partial (SPEC §8.3): the file is as long as the whole and
    /// holds exactly these bytes; nil for one stream, which holds `0..<size`.
    public var ranges: ByteRanges?
    /// The boot `ranges` was recorded in: unflushed bytes it names may have
    /// been lost by a power cut since, when the machine booted again (`BootID`).
    public var boot: String?
    /// Of `ranges`, those known flushed to disk (recorded after an
    /// `fdatasync`): what a later boot may trust.
    public var durable: ByteRanges?

    /// The ranges a resume may trust in boot `now`: all in the boot that
    /// recorded them (a kill keeps the page cache), only the flushed ones
    /// after a reboot. Journals without a boot are trusted as before.
    public func trustedRanges(boot now: String) -> ByteRanges? {
      guard let ranges else { return nil }
      guard let boot, boot != now else { return ranges }
      return durable ?? ByteRanges()
    }

    public init(
      path: String, offset: Int64, totalBytes: Int64? = nil, etag: String? = nil, lastModified: String? = nil,
      dateIsStrong: Bool = false
    ) {
      self.path = path
      self.offset = offset
      self.totalBytes = totalBytes
      self.etag = etag
      self.lastModified = lastModified
      self.dateIsStrong = dateIsStrong
    }
    public var validators: Validators {
      Validators(etag: etag, lastModified: lastModified, dateIsStrong: dateIsStrong)
    }
  }

  public var id: String
  /// Fingerprint of the manifest entry that produced this state (url, destination, checks).
  public var fingerprint: String?
  public var lastCheck: Timestamp?
  /// Schedules count from the last successful check.
  public var lastSuccess: Timestamp?
  public var lastOutcome: Outcome?
  public var lastError: String?
  public var lastBytes: Int64?
  public var httpStatus: Int?
  public var installed: Installed?
  public var partial: Partial?
  /// Consecutive failed runs.
  public var failures: Int = 0
  public var backoffUntil: Timestamp?
  /// This file's `on_change` is owed: set with the install that changed it,
  /// cleared once the hook succeeded (SPEC §8.2).
  public var changeHookPending = false
  /// Its manifest's `on_complete` is owed for this file's change.
  public var completeHookPending = false
  /// When `syncfiles rollback` put a kept version back: the task is held
  /// until `rollback --release` (SPEC §10.4).
  public var rolledBack: Timestamp?

  public init(id: String) { self.id = id }
}

extension TaskState {
  package var json: JSONValue {
    typealias K = RecordKey.Task
    var o: [(String, JSONValue)] = [("t", .string("task")), ("id", .string(id))]
    func put(_ k: K, _ v: JSONValue?) { if let v { o.append((k.text, v)) } }
    put(.fingerprint, fingerprint.map(JSONValue.string))
    put(.lastCheck, lastCheck.map { .string($0.rfc3339) })
    put(.lastSuccess, lastSuccess.map { .string($0.rfc3339) })
    put(.outcome, lastOutcome.map { .string($0.rawValue) })
    put(.error, lastError.map(JSONValue.string))
    put(.bytes, lastBytes.map(JSONValue.int))
    put(.httpStatus, httpStatus.map { .int(Int64($0)) })
    put(.installed, installed?.json)
    put(.partial, partial?.json)
    put(.failures, failures > 0 ? .int(Int64(failures)) : nil)
    put(.backoffUntil, backoffUntil.map { .string($0.rfc3339) })
    put(.onChangePending, changeHookPending ? .bool(true) : nil)
    put(.onCompletePending, completeHookPending ? .bool(true) : nil)
    put(.rolledBack, rolledBack.map { .string($0.rfc3339) })
    return .object(o)
  }

  package init?(json v: JSONValue) {
    typealias K = RecordKey.Task
    guard v["t"]?.stringValue == "task", let id = v["id"]?.stringValue else { return nil }
    self.init(id: id)
    func time(_ k: K) -> Timestamp? { v[k.text]?.stringValue.flatMap(Timestamp.parseRFC3339) }
    fingerprint = v[K.fingerprint.text]?.stringValue
    lastCheck = time(.lastCheck)
    lastSuccess = time(.lastSuccess)
    lastOutcome = v[K.outcome.text]?.stringValue.flatMap(Outcome.init(rawValue:))
    lastError = v[K.error.text]?.stringValue
    lastBytes = v[K.bytes.text]?.intValue
    httpStatus = v[K.httpStatus.text]?.intValue.map { Int($0) }
    installed = v[K.installed.text].flatMap(Installed.init(json:))
    partial = v[K.partial.text].flatMap(Partial.init(json:))
    failures = Int(v[K.failures.text]?.intValue ?? 0)
    backoffUntil = time(.backoffUntil)
    changeHookPending = v[K.onChangePending.text]?.boolValue ?? false
    completeHookPending = v[K.onCompletePending.text]?.boolValue ?? false
    rolledBack = time(.rolledBack)
  }

  /// `[[start, end], ...]`; a pair that is not two ordered non-negative
  /// integers makes the whole list unusable: it then holds nothing, so the
  /// partial is still known to be segmented (never read as one stream) and
  /// every byte is fetched again.
  static func ranges(_ list: [JSONValue]) -> ByteRanges {
    var out = ByteRanges()
    for item in list {
      guard case .array(let pair) = item, pair.count == 2, let a = pair[0].intValue, let b = pair[1].intValue,
        a >= 0, a <= b
      else { return ByteRanges() }
      out.insert(a..<b)
    }
    return out
  }
}

extension TaskState.Installed {
  package var json: JSONValue {
    typealias K = RecordKey.Installed
    var o: [(String, JSONValue)] = [(K.size.text, .int(size)), (K.mtimeNs.text, .int(mtimeNs))]
    if let etag { o.append((K.etag.text, .string(etag))) }
    if let lastModified { o.append((K.lastModified.text, .string(lastModified))) }
    if let sha256 { o.append((K.sha256.text, .string(sha256))) }
    if dateIsStrong { o.append((K.dateIsStrong.text, .bool(true))) }
    return .object(o)
  }

  package init?(json i: JSONValue) {
    typealias K = RecordKey.Installed
    guard let size = i[K.size.text]?.intValue, let m = i[K.mtimeNs.text]?.intValue else { return nil }
    self.init(
      size: size, mtimeNs: m, etag: i[K.etag.text]?.stringValue, lastModified: i[K.lastModified.text]?.stringValue,
      sha256: i[K.sha256.text]?.stringValue, dateIsStrong: i[K.dateIsStrong.text]?.boolValue ?? false)
  }
}

extension TaskState.Partial {
  package var json: JSONValue {
    typealias K = RecordKey.Partial
    var o: [(String, JSONValue)] = [(K.path.text, .string(path)), (K.offset.text, .int(offset))]
    if let totalBytes { o.append((K.total.text, .int(totalBytes))) }
    if let etag { o.append((K.etag.text, .string(etag))) }
    if let lastModified { o.append((K.lastModified.text, .string(lastModified))) }
    if dateIsStrong { o.append((K.dateIsStrong.text, .bool(true))) }
    if let ranges { o.append((K.ranges.text, Self.json(ranges))) }
    if let boot { o.append((K.boot.text, .string(boot))) }
    if let durable { o.append((K.durable.text, Self.json(durable))) }
    return .object(o)
  }

  package static func json(_ r: ByteRanges) -> JSONValue {
    .array(r.ranges.map { .array([.int($0.lowerBound), .int($0.upperBound)]) })
  }

  package init?(json p: JSONValue) {
    typealias K = RecordKey.Partial
    guard let path = p[K.path.text]?.stringValue, let off = p[K.offset.text]?.intValue else { return nil }
    self.init(
      path: path, offset: off, totalBytes: p[K.total.text]?.intValue, etag: p[K.etag.text]?.stringValue,
      lastModified: p[K.lastModified.text]?.stringValue, dateIsStrong: p[K.dateIsStrong.text]?.boolValue ?? false)
    // A list that is not one holds nothing: the partial is still known to be segmented.
    if let r = p[K.ranges.text] {
      if case .array(let list) = r { ranges = TaskState.ranges(list) } else { ranges = ByteRanges() }
    }
    boot = p[K.boot.text]?.stringValue
    if let d = p[K.durable.text] {
      if case .array(let list) = d { durable = TaskState.ranges(list) } else { durable = ByteRanges() }
    }
  }
}
