import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// `plan --horizon` (SPEC §8.4): every run due in [now, now + horizon), from
/// the plan, the schedules and each task's `expected_bytes` as its upper
/// bound. Pure: the plan, the manifests' conditions and the disks in; no clock.
public struct Forecast: Sendable {
  /// The tasks due at one instant.
  public struct Run: Sendable, Hashable {
    public var time: Timestamp
    public var tasks: [String] = []
    /// Sum of the known sizes.
    public var bytes: Int64 = 0
    /// Tasks without `expected_bytes` (counted as 0 in `bytes`).
    public var unknownSizes = 0
  }

  public struct Day: Sendable, Hashable {
    /// `YYYY-MM-DD`, UTC.
    public var date: String
    public var runs = 0
    public var tasks = 0
    public var bytes: Int64 = 0
  }

  public struct Hour: Sendable, Hashable {
    public var start: Timestamp
    public var bytes: Int64
    public var tasks: Int
  }

  public var from: Timestamp
  public var until: Timestamp
  public var runs: [Run] = []
  public var warnings: [String] = []

  public var totalBytes: Int64 { runs.reduce(0) { $0 + $1.bytes } }
  public var unknownSizes: Int { runs.reduce(0) { $0 + $1.unknownSizes } }

  /// The clock hour (UTC) with the most bytes due; ties go to the earlier hour.
  public var busiestHour: Hour? {
    var hours: [Int64: Hour] = [:]
    for r in runs {
      let start = r.time.seconds - ((r.time.seconds % 3600) + 3600) % 3600
      hours[start, default: Hour(start: Timestamp(seconds: start), bytes: 0, tasks: 0)].bytes += r.bytes
      hours[start]!.tasks += r.tasks.count
    }
    return hours.values.max { a, b in a.bytes != b.bytes ? a.bytes < b.bytes : a.start > b.start }
  }

  /// Runs per UTC day, in order.
  public var days: [Day] {
    var out: [Day] = []
    for r in runs {
      let date = Forecast.dayKey(r.time)
      if out.last?.date != date { out.append(Day(date: date)) }
      out[out.count - 1].runs += 1
      out[out.count - 1].tasks += r.tasks.count
      out[out.count - 1].bytes += r.bytes
    }
    return out
  }

  static func date(_ y: Int, _ m: Int, _ d: Int) -> String {
    func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return "\(y)-\(two(m))-\(two(d))"
  }
}

extension Forecast {
  /// Occurrences counted per task at most; a schedule of every minute over a
  /// year would be half a million.
  public static let occurrenceCap = 10_000
  /// This many tasks due at one instant by cron is a herd worth a warning.
  public static let herdSize = 5

  /// What the context of a forecast provides: conditions per manifest name,
  /// the session rate, the disks, and the local UTC offset at a time.
  public struct Context {
    public var conditions: [String: Conditions]
    public var rate: RateCap?
    public var disks: [String: DiskFact]
    public var utcOffset: (Timestamp) -> Int64
    public init(
      conditions: [String: Conditions], rate: RateCap?, disks: [String: DiskFact],
      utcOffset: @escaping (Timestamp) -> Int64
    ) {
      self.conditions = conditions
      self.rate = rate
      self.disks = disks
      self.utcOffset = utcOffset
    }
  }

  public init(plan: SessionPlan, horizon: TimeSpan, context: Context) {
    self.init(from: plan.now, until: plan.now + horizon)
    var byTime: [Int64: Run] = [:]
    for i in plan.tasks.indices where plan.tasks[i].selected {
      let t = plan.tasks[i]
      let conditions = context.conditions[Forecast.manifestName(of: t.id)] ?? Conditions()
      let times = occurrences(t, window: t.entry.discretionary ? conditions.window : nil, offset: context.utcOffset)
      if times.count == Forecast.occurrenceCap {
        warnings.append("\(t.id): due more than \(Forecast.occurrenceCap) times in the horizon; only those are counted")
      }
      for (n, time) in times.enumerated() {
        let bytes = n == 0 && t.action == .resume ? t.bytesToTransfer : t.entry.expectedBytes
        byTime[time.seconds, default: Run(time: time)].tasks.append(t.id)
        byTime[time.seconds]!.bytes += bytes ?? 0
        if bytes == nil { byTime[time.seconds]!.unknownSizes += 1 }
      }
      if let w = windowWarning(t, conditions: conditions, rate: context.rate) { warnings.append(w) }
    }
    runs = byTime.keys.sorted().map { byTime[$0]! }
    warnings += herdWarnings(plan)
    warnings += diskWarnings(plan, disks: context.disks)
  }

  static func manifestName(of id: String) -> String { String(id.prefix { $0 != "/" }) }

  /// When the task runs in [from, until): first as the plan says, then as
  /// its schedule repeats; a discretionary task waits for its window.
  func occurrences(_ t: PlannedTask, window: TimeWindow?, offset: (Timestamp) -> Int64) -> [Timestamp] {
    var next: Timestamp? = t.runs ? from : t.nextDue
    var out: [Timestamp] = []
    while let due = next, out.count < Forecast.occurrenceCap {
      let at = window.map { Forecast.windowStart($0, atOrAfter: due, offset: offset(due)) } ?? due
      guard at < until else { break }
      out.append(at)
      next = Planner.nextAfterRun(t.entry.schedule, now: at)
    }
    return out
  }

  /// `t` when it lies inside the (local-time) window, else the window's next start.
  static func windowStart(_ w: TimeWindow, atOrAfter t: Timestamp, offset: Int64) -> Timestamp {
    let local = t.seconds + offset
    let secondOfDay = ((local % 86_400) + 86_400) % 86_400
    let minute = Int(secondOfDay / 60)
    guard !w.contains(minuteOfDay: minute) else { return t }
    let minutes = (w.startMinute - minute + 1440) % 1440
    return Timestamp(seconds: t.seconds - secondOfDay % 60 + Int64(minutes) * 60)
  }

  /// SPEC §8.4, §10.4: a discretionary task whose bytes cannot pass inside
  /// its window at `limits.rate`, a timetable's rates minute by minute.
  func windowWarning(_ t: PlannedTask, conditions: Conditions, rate: RateCap?) -> String? {
    guard t.entry.discretionary, let w = conditions.window, let rate, let bytes = t.entry.expectedBytes else {
      return nil
    }
    let minutes = (w.endMinute - w.startMinute + 1440) % 1440
    guard let capacity = rate.capacity(fromMinute: w.startMinute, minutes: minutes), bytes > capacity else {
      return nil
    }
    return
      "\(t.id): \(ByteSize.format(bytes)) cannot pass inside its window \(w) (\(TimeSpan.minutes(Int64(minutes)))) at limits.rate \(rate), which moves at most \(ByteSize.format(capacity))"
  }

  /// Tasks whose cron schedules fire at the same minute: the top-of-the-hour herd.
  func herdWarnings(_ plan: SessionPlan) -> [String] {
    var cron = Set<String>()
    for i in plan.tasks.indices {
      if case .cron = plan.tasks[i].entry.schedule { cron.insert(plan.tasks[i].id) }
    }
    var seen = Set<Int>()
    var out: [String] = []
    for r in runs {
      let herd = r.tasks.filter(cron.contains)
      let minute = Int((r.time.seconds % 86_400) / 60)
      guard herd.count >= Forecast.herdSize, !seen.contains(minute) else { continue }
      seen.insert(minute)
      let shown = herd.prefix(3).joined(separator: ", ")
      out.append(
        "\(herd.count) tasks fire by cron at the same minute, \(r.time.rfc3339) (\(shown), …): spread their minutes, or let the timer's RandomizedDelaySec spread the machines"
      )
    }
    return out
  }

  /// A day whose bytes due on one file system exceed its free space now.
  func diskWarnings(_ plan: SessionPlan, disks: [String: DiskFact]) -> [String] {
    var diskOf: [String: DiskFact] = [:]
    var expected: [String: Int64] = [:]
    for i in plan.tasks.indices {
      diskOf[plan.tasks[i].id] = disks[Paths.folder(of: plan.tasks[i].entry.destinationPath)]
      expected[plan.tasks[i].id] = plan.tasks[i].entry.expectedBytes
    }
    var perDay: [String: [UInt64: (disk: DiskFact, bytes: Int64)]] = [:]
    for r in runs {
      let day = Self.dayKey(r.time)
      for id in r.tasks {
        guard let d = diskOf[id] else { continue }
        perDay[day, default: [:]][d.device, default: (d, 0)].bytes += expected[id] ?? 0
      }
    }
    var out: [String] = []
    var warned = Set<UInt64>()
    for day in perDay.keys.sorted() {
      for (device, due) in perDay[day]!.sorted(by: { $0.key < $1.key })
      where due.bytes > due.disk.freeBytes && !warned.contains(device) {
        warned.insert(device)
        out.append(
          "\(day): \(ByteSize.format(due.bytes)) due for \(due.disk.mountPoint), which has \(ByteSize.format(due.disk.freeBytes)) free now"
        )
      }
    }
    return out
  }

  static func dayKey(_ t: Timestamp) -> String {
    let c = t.civil
    return date(c.year, c.month, c.day)
  }
}
