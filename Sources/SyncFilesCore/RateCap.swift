#if canImport(Glibc)
  import Glibc
#endif

/// The session's bandwidth cap (`--rate`, `limits.rate`, SPEC §10.4): one
/// rate, or a timetable by time of day in rclone's `--bwlimit` syntax,
/// `"08:00,512K 18:00,10M 23:30,off"`, in local time. Each entry holds from
/// its time to the next; before the day's first, the last one still holds
/// (the table wraps around midnight). `off` is no cap.
public struct RateCap: Sendable, Hashable, CustomStringConvertible {
  public struct Step: Sendable, Hashable {
    /// Minutes after local midnight.
    public var minute: Int
    /// Bytes per second; nil: no cap.
    public var rate: Int64?
  }

  /// Sorted by minute, at least one; a single step at minute 0 is a constant cap.
  public let steps: [Step]

  public static func constant(_ rate: Int64) -> RateCap { RateCap(steps: [Step(minute: 0, rate: rate)]) }

  init(steps: [Step]) { self.steps = steps }

  public var isConstant: Bool { steps.count == 1 }

  /// The cap at `minute` of the local day.
  public func rate(atMinute minute: Int) -> Int64? {
    (steps.last { $0.minute <= minute } ?? steps.last!).rate
  }

  /// The cap now (local time).
  public func rate(at epochSeconds: Int64) -> Int64? {
    rate(atMinute: Self.localSecondOfDay(epochSeconds) / 60)
  }

  /// Seconds from `epochSeconds` to the next boundary; nil for a constant cap.
  public func secondsToNextChange(from epochSeconds: Int64) -> Int? {
    guard !isConstant else { return nil }
    let second = Self.localSecondOfDay(epochSeconds)
    let next = steps.first { $0.minute * 60 > second }?.minute ?? (steps[0].minute + 24 * 60)
    return next * 60 - second
  }

  /// The bytes the cap lets through in `minutes` from `minute` of the local
  /// day; nil when some of that time has no cap.
  public func capacity(fromMinute minute: Int, minutes: Int) -> Int64? {
    var total: Int64 = 0
    var m = 0
    while m < minutes {
      guard let r = rate(atMinute: (minute + m) % (24 * 60)) else { return nil }
      total += r * 60
      m += 1
    }
    return total
  }

  /// The lower of two caps, either of which may be absent.
  public static func least(_ a: RateCap?, _ b: RateCap?) -> RateCap? {
    guard let a else { return b }
    guard let b else { return a }
    return a.least(b)
  }

  /// The lower of two caps at every time of day (the most restrictive wins).
  public func least(_ other: RateCap) -> RateCap {
    let minutes = Set(steps.map(\.minute) + other.steps.map(\.minute)).sorted()
    var out: [Step] = []
    for m in minutes {
      let rates = [rate(atMinute: m), other.rate(atMinute: m)].compactMap { $0 }
      let r = rates.min()
      if out.last?.rate != r || out.isEmpty { out.append(Step(minute: m, rate: r)) }
    }
    if out.count > 1 && out.allSatisfy({ $0.rate == out[0].rate }) { out = [Step(minute: 0, rate: out[0].rate)] }
    return RateCap(steps: out)
  }

  /// As written: `20 MiB/s`, or the timetable's entries.
  public var description: String {
    func size(_ r: Int64?) -> String { r.map { ByteSize.format($0) + "/s" } ?? "off" }
    if isConstant { return size(steps[0].rate) }
    return steps.map { s in
      let hm = "\(s.minute / 60 < 10 ? "0" : "")\(s.minute / 60):\(s.minute % 60 < 10 ? "0" : "")\(s.minute % 60)"
      return "\(hm),\(size(s.rate))"
    }.joined(separator: " ")
  }

  /// A rate (`20MB/s`, `10M`) or a timetable (`"08:00,512K 18:00,10M 23:30,off"`).
  public static func parse(_ text: String) -> Result<RateCap, UnitError> {
    let entries = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
    guard entries.contains(where: { $0.contains(",") }) else {
      return ByteSize.parseRate(text).flatMap { r in
        r > 0 ? .success(.constant(r)) : .failure(UnitError("a rate must be more than 0 bytes per second"))
      }
    }
    var steps: [Step] = []
    for e in entries {
      let parts = e.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2, let minute = ClockTime.minute(parts[0]) else {
        return .failure(UnitError("timetable entry '\(e)' is not HH:MM,RATE (as in 08:00,512K or 23:30,off)"))
      }
      var rate: Int64? = nil
      if parts[1].lowercased() != "off" {
        switch ByteSize.parseRate(String(parts[1])) {
        case .success(let r) where r > 0: rate = r
        case .success:
          return .failure(UnitError("timetable entry '\(e)': a rate must be more than 0; write off for no cap"))
        case .failure(let f): return .failure(UnitError("timetable entry '\(e)': \(f.message)"))
        }
      }
      if steps.contains(where: { $0.minute == minute }) {
        return .failure(UnitError("timetable names \(parts[0]) twice"))
      }
      steps.append(Step(minute: minute, rate: rate))
    }
    return .success(RateCap(steps: steps.sorted { $0.minute < $1.minute }))
  }

  /// Seconds since local midnight at `epochSeconds` (the zone from TZ, as localtime reads it).
  public static func localSecondOfDay(_ epochSeconds: Int64) -> Int {
    var t = time_t(epochSeconds)
    var tmv = tm()
    localtime_r(&t, &tmv)
    return Int(tmv.tm_hour) * 3600 + Int(tmv.tm_min) * 60 + Int(tmv.tm_sec)
  }
}
