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

  public init(id: String) { self.id = id }
}

extension TaskState {
  var json: JSONValue {
    var o: [(String, JSONValue)] = [("t", .string("task")), ("id", .string(id))]
    func put(_ k: String, _ v: JSONValue?) { if let v { o.append((k, v)) } }
    put("fp", fingerprint.map(JSONValue.string))
    put("last_check", lastCheck.map { .string($0.rfc3339) })
    put("last_success", lastSuccess.map { .string($0.rfc3339) })
    put("outcome", lastOutcome.map { .string($0.rawValue) })
    put("error", lastError.map(JSONValue.string))
    put("bytes", lastBytes.map(JSONValue.int))
    put("http_status", httpStatus.map { .int(Int64($0)) })
    if let i = installed {
      var io: [(String, JSONValue)] = [("size", .int(i.size)), ("mtime_ns", .int(i.mtimeNs))]
      if let e = i.etag { io.append(("etag", .string(e))) }
      if let l = i.lastModified { io.append(("last_modified", .string(l))) }
      if let s = i.sha256 { io.append(("sha256", .string(s))) }
      if i.dateIsStrong { io.append(("lm_strong", .bool(true))) }
      o.append(("installed", .object(io)))
    }
    if let p = partial {
      var po: [(String, JSONValue)] = [("path", .string(p.path)), ("offset", .int(p.offset))]
      if let t = p.totalBytes { po.append(("total", .int(t))) }
      if let e = p.etag { po.append(("etag", .string(e))) }
      if let l = p.lastModified { po.append(("last_modified", .string(l))) }
      if p.dateIsStrong { po.append(("lm_strong", .bool(true))) }
      if let r = p.ranges {
        po.append(("ranges", .array(r.ranges.map { .array([.int($0.lowerBound), .int($0.upperBound)]) })))
      }
      if let b = p.boot { po.append(("boot", .string(b))) }
      if let d = p.durable {
        po.append(("durable", .array(d.ranges.map { .array([.int($0.lowerBound), .int($0.upperBound)]) })))
      }
      o.append(("partial", .object(po)))
    }
    if failures > 0 { o.append(("failures", .int(Int64(failures)))) }
    put("backoff_until", backoffUntil.map { .string($0.rfc3339) })
    if changeHookPending { o.append(("on_change_pending", .bool(true))) }
    if completeHookPending { o.append(("on_complete_pending", .bool(true))) }
    return .object(o)
  }

  init?(json v: JSONValue) {
    guard v["t"]?.stringValue == "task", let id = v["id"]?.stringValue else { return nil }
    self.init(id: id)
    func time(_ k: String) -> Timestamp? { v[k]?.stringValue.flatMap(Timestamp.parseRFC3339) }
    fingerprint = v["fp"]?.stringValue
    lastCheck = time("last_check")
    lastSuccess = time("last_success")
    lastOutcome = v["outcome"]?.stringValue.flatMap(Outcome.init(rawValue:))
    lastError = v["error"]?.stringValue
    lastBytes = v["bytes"]?.intValue
    httpStatus = v["http_status"]?.intValue.map { Int($0) }
    if let i = v["installed"], let size = i["size"]?.intValue, let m = i["mtime_ns"]?.intValue {
      installed = Installed(
        size: size, mtimeNs: m, etag: i["etag"]?.stringValue, lastModified: i["last_modified"]?.stringValue,
        sha256: i["sha256"]?.stringValue, dateIsStrong: i["lm_strong"]?.boolValue ?? false)
    }
    if let p = v["partial"], let path = p["path"]?.stringValue, let off = p["offset"]?.intValue {
      partial = Partial(
        path: path, offset: off, totalBytes: p["total"]?.intValue, etag: p["etag"]?.stringValue,
        lastModified: p["last_modified"]?.stringValue, dateIsStrong: p["lm_strong"]?.boolValue ?? false)
      if let r = p["ranges"] {
        if case .array(let list) = r { partial?.ranges = Self.ranges(list) } else { partial?.ranges = ByteRanges() }
      }
      partial?.boot = p["boot"]?.stringValue
      if let d = p["durable"] {
        if case .array(let list) = d { partial?.durable = Self.ranges(list) } else { partial?.durable = ByteRanges() }
      }
    }
    failures = Int(v["failures"]?.intValue ?? 0)
    backoffUntil = time("backoff_until")
    changeHookPending = v["on_change_pending"]?.boolValue ?? false
    completeHookPending = v["on_complete_pending"]?.boolValue ?? false
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
