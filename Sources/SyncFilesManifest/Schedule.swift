import SyncFilesCore

/// When a task is due (SPEC §4 "Schedules").
public enum Schedule: Sendable, Hashable, CustomStringConvertible {
  /// No schedule: revalidate on every `apply`.
  case always
  /// Fetch only while the destination is missing.
  case once
  /// Due when this much time has passed since the last successful check.
  case every(TimeSpan)
  /// Due when a fire time of the expression has passed since the last successful check.
  case cron(CronExpression)

  public var description: String {
    switch self {
    case .always: return "every apply"
    case .once: return "once"
    case .every(let d): return "every \(d)"
    case .cron(let c): return "cron \(c.source)"
    }
  }

  public static func parse(_ text: String) -> Result<Schedule, UnitError> {
    let s = text.trimmingSpaces()
    let lower = s.lowercased()
    if lower == "once" { return .success(.once) }
    if lower.hasPrefix("every ") || lower == "every" {
      let rest = String(s.dropFirst(5)).trimmingSpaces()
      if rest.isEmpty { return .failure(.init("schedule 'every' needs a duration, as in 'every 6h'")) }
      switch TimeSpan.parse(rest) {
      case .success(let d):
        if d.seconds <= 0 { return .failure(.init("schedule '\(s)' must be longer than 0s")) }
        return .success(.every(d))
      case .failure(let e): return .failure(.init("schedule '\(s)': \(e.message)"))
      }
    }
    switch CronExpression.parse(s) {
    case .success(let c): return .success(.cron(c))
    case .failure(let e): return .failure(e)
    }
  }

  /// The shortest gap between two consecutive due times, where it can be known.
  public var shortestInterval: TimeSpan? {
    switch self {
    case .always, .once: return nil
    case .every(let d): return d
    case .cron(let c): return c.shortestInterval()
    }
  }
}

/// A 5-field cron expression (minute hour day-of-month month day-of-week),
/// evaluated in UTC. Supports `*`, lists, ranges, steps, month and weekday
/// names (JAN–DEC, SUN–SAT; 0 and 7 are Sunday) and the macros `@hourly`,
/// `@daily`/`@midnight`, `@weekly`, `@monthly`, `@yearly`/`@annually`.
/// Day-of-month and day-of-week follow the Vixie cron rule: when both fields
/// are restricted (neither starts with `*`) a day matches if EITHER matches.
public struct CronExpression: Sendable, Hashable {
  public let source: String
  package let minutes: UInt64  // bits 0…59
  package let hours: UInt32  // bits 0…23
  package let daysOfMonth: UInt32  // bits 1…31
  package let months: UInt16  // bits 1…12
  package let daysOfWeek: UInt8  // bits 0…6
  package let domStar: Bool
  package let dowStar: Bool

  package static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
  package static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
  package static let macros: [String: String] = [
    "@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
  ]

  public static func parse(_ text: String) -> Result<CronExpression, UnitError> {
    let source = text.trimmingSpaces()
    var expr = source
    if source.hasPrefix("@") {
      guard let m = macros[source.lowercased()] else {
        return .failure(.init("unknown schedule macro '\(source)' (use @hourly, @daily, @weekly, @monthly or @yearly)"))
      }
      expr = m
    }
    let fields = expr.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    guard fields.count == 5 else {
      return .failure(
        .init(
          "malformed schedule '\(source)': expected 'once', 'every DURATION' or a cron expression of 5 fields "
            + "(minute hour day-of-month month day-of-week), found \(fields.count) field\(fields.count == 1 ? "" : "s")"
            + (meant(source).map { "; did you mean '\($0)'?" } ?? "")
        ))
    }
    do {
      let mi = try field(fields[0], name: "minute", range: 0...59, names: nil)
      let h = try field(fields[1], name: "hour", range: 0...23, names: nil)
      let dom = try field(fields[2], name: "day-of-month", range: 1...31, names: nil)
      let mo = try field(fields[3], name: "month", range: 1...12, names: monthNames, nameBase: 1)
      var dow = try field(fields[4], name: "day-of-week", range: 0...7, names: dayNames, nameBase: 0)
      if dow & (1 << 7) != 0 { dow = (dow & ~(1 << 7)) | 1 }  // 7 is Sunday
      let c = CronExpression(
        source: source, minutes: mi, hours: UInt32(h), daysOfMonth: UInt32(dom), months: UInt16(mo),
        daysOfWeek: UInt8(dow), domStar: fields[2].hasPrefix("*"), dowStar: fields[4].hasPrefix("*"))
      return .success(c)
    } catch let e as UnitError {
      return .failure(.init("malformed schedule '\(source)': \(e.message)"))
    } catch {
      return .failure(.init("malformed schedule '\(source)'"))
    }
  }

  /// What a one-word schedule most likely meant: `15m` is `every 15m`,
  /// `daily` is `@daily`, `every6h` is `every 6h`.
  package static func meant(_ source: String) -> String? {
    let word = source.lowercased()
    if case .success = TimeSpan.parse(word) { return "every " + word }
    if word.hasPrefix("every"), case .success = TimeSpan.parse(String(word.dropFirst(5))) {
      return "every " + word.dropFirst(5)
    }
    let names = ["hourly", "daily", "weekly", "monthly", "yearly"]
    if let n = Suggest.closest(to: word.hasPrefix("@") ? String(word.dropFirst()) : word, in: names) { return "@" + n }
    return nil
  }

  private static func value(_ s: Substring, name: String, range: ClosedRange<Int>, names: [String]?, nameBase: Int)
    throws -> Int
  {
    if let n = Int(s) {
      guard range.contains(n) else {
        throw UnitError("\(name) value \(n) is outside \(range.lowerBound)-\(range.upperBound)")
      }
      return n
    }
    if let names, let i = names.firstIndex(of: s.lowercased()) { return i + nameBase }
    throw UnitError("\(name) field has '\(s)', which is not a number\(names == nil ? "" : " or a name")")
  }

  private static func field(
    _ text: String, name: String, range: ClosedRange<Int>, names: [String]?, nameBase: Int = 0
  ) throws -> UInt64 {
    var mask: UInt64 = 0
    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
      if part.isEmpty { throw UnitError("\(name) field '\(text)' has an empty list item") }
      let pieces = part.split(separator: "/", omittingEmptySubsequences: false)
      guard pieces.count <= 2 else { throw UnitError("\(name) field '\(part)' has more than one '/'") }
      var step = 1
      if pieces.count == 2 {
        guard let s = Int(pieces[1]), s >= 1 else {
          throw UnitError("\(name) field '\(part)': step '\(pieces[1])' must be a whole number of 1 or more")
        }
        step = s
      }
      let base = pieces[0]
      var lo: Int
      var hi: Int
      if base == "*" {
        lo = range.lowerBound
        hi = range.upperBound
        if name == "day-of-week" { hi = 6 }
      } else if let dash = base.firstIndex(of: "-") {
        lo = try value(base[..<dash], name: name, range: range, names: names, nameBase: nameBase)
        hi = try value(base[base.index(after: dash)...], name: name, range: range, names: names, nameBase: nameBase)
        guard lo <= hi else { throw UnitError("\(name) range '\(base)' runs backwards") }
      } else {
        lo = try value(base, name: name, range: range, names: names, nameBase: nameBase)
        // `5/15` means from 5 to the end, every 15.
        hi = pieces.count == 2 ? (name == "day-of-week" ? 6 : range.upperBound) : lo
      }
      var v = lo
      while v <= hi {
        mask |= 1 << UInt64(v)
        v += step
      }
    }
    return mask
  }

  package func dayMatches(day: Int, weekday: Int) -> Bool {
    let domMatch = daysOfMonth & (1 << UInt32(day)) != 0
    let dowMatch = daysOfWeek & (1 << UInt8(weekday)) != 0
    return (domStar || dowStar) ? (domMatch && dowMatch) : (domMatch || dowMatch)
  }

  /// The first fire time strictly after `t`, or nil if none within 10 years
  /// (an expression such as `0 0 31 2 *` never fires).
  public func next(after t: Timestamp) -> Timestamp? {
    // Start at the next whole minute.
    let start = (floorDiv(t.seconds, 60) + 1) * 60
    var days = Int(floorDiv(start, 86_400))
    let secOfDay = Int(start - Int64(days) * 86_400)
    var hour = secOfDay / 3600
    var minute = (secOfDay / 60) % 60
    let lastDay = days + 366 * 10
    while days <= lastDay {
      let (y, m, d) = Timestamp.civilFromDays(days)
      if months & (1 << UInt16(m)) == 0 {
        // Jump to the first day of the next month.
        days += Timestamp.daysInMonth(y, m) - d + 1
        hour = 0
        minute = 0
        continue
      }
      if !dayMatches(day: d, weekday: Timestamp.weekday(days: days)) {
        days += 1
        hour = 0
        minute = 0
        continue
      }
      while hour < 24 {
        if hours & (1 << UInt32(hour)) != 0 {
          var mi = minute
          while mi < 60 {
            if minutes & (1 << UInt64(mi)) != 0 {
              return Timestamp(seconds: Int64(days) * 86_400 + Int64(hour * 3600 + mi * 60))
            }
            mi += 1
          }
        }
        hour += 1
        minute = 0
      }
      days += 1
      hour = 0
      minute = 0
    }
    return nil
  }

  /// The latest fire time at or before `t`, or nil if none in about ten
  /// years. Looks back in doubling windows, so it walks few fire times.
  public func latest(atOrBefore t: Timestamp) -> Timestamp? {
    var window: Int64 = 60
    while window <= 366 * 10 * 86_400 {
      if var f = next(after: Timestamp(seconds: t.seconds - window)), f <= t {
        while let g = next(after: f), g <= t { f = g }
        return f
      }
      window *= 2
    }
    return nil
  }

  /// The gap between the two latest fire times at or before `t` (SPEC §8.4:
  /// a cron task's schedule interval for `status --check`).
  public func latestInterval(atOrBefore t: Timestamp) -> TimeSpan? {
    guard let last = latest(atOrBefore: t), let before = latest(atOrBefore: Timestamp(seconds: last.seconds - 1))
    else { return nil }
    return TimeSpan(seconds: last.seconds - before.seconds)
  }

  /// The shortest gap between consecutive fire times seen over about eight
  /// days from a fixed reference (enough to see every minute/hour/weekday
  /// pattern), or nil when it fires less than twice in that span.
  public func shortestInterval() -> TimeSpan? {
    var t = Timestamp(year: 2024, month: 1, day: 1)
    let end = t.seconds + 8 * 86_400
    var previous: Timestamp? = nil
    var best: Int64? = nil
    var count = 0
    while let n = next(after: t), n.seconds <= end, count < 20_000 {
      if let p = previous {
        let gap = n.seconds - p.seconds
        best = min(best ?? gap, gap)
        if gap <= 60 { break }
      }
      previous = n
      t = n
      count += 1
    }
    return best.map { TimeSpan(seconds: $0) }
  }
}

/// A daily window of local wall-clock time, `01:00-06:00`; may wrap midnight.
public struct TimeWindow: Sendable, Hashable, CustomStringConvertible {
  public let startMinute: Int
  public let endMinute: Int

  public var description: String {
    func f(_ m: Int) -> String {
      let h = m / 60
      let mi = m % 60
      return (h < 10 ? "0" : "") + String(h) + ":" + (mi < 10 ? "0" : "") + String(mi)
    }
    return "\(f(startMinute))-\(f(endMinute))"
  }

  /// Whether a minute of the day (0…1439) lies inside; the end is exclusive.
  public func contains(minuteOfDay m: Int) -> Bool {
    if startMinute < endMinute { return m >= startMinute && m < endMinute }
    return m >= startMinute || m < endMinute
  }

  public static func parse(_ text: String) -> Result<TimeWindow, UnitError> {
    let s = text.trimmingSpaces()
    let parts = s.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, let a = ClockTime.minute(parts[0], endOfDay: true),
      let b = ClockTime.minute(parts[1], endOfDay: true)
    else {
      return .failure(.init("malformed window '\(s)': expected HH:MM-HH:MM in local time, as in \"01:00-06:00\""))
    }
    let start = a % 1440
    let end = b % 1440
    if start == end { return .failure(.init("window '\(s)' is empty: its start and end are the same time")) }
    return .success(TimeWindow(startMinute: start, endMinute: end))
  }
}
