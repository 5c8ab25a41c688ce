import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private func t(_ s: String) -> Timestamp { Timestamp.parseRFC3339(s)! }

private func cron(_ s: String) throws -> CronExpression { try CronExpression.parse(s).get() }

private func next(_ expr: String, after: String) throws -> String? {
  try cron(expr).next(after: t(after))?.rfc3339
}

@Suite struct CronNextFireTests {
  @Test func everyMinuteIsStrictlyAfter() throws {
    #expect(try next("* * * * *", after: "2026-11-21T19:00:00Z") == "2026-11-21T19:01:00Z")
    #expect(try next("* * * * *", after: "2026-11-21T19:00:59Z") == "2026-11-21T19:01:00Z")
  }

  @Test func dailyAtThree() throws {
    #expect(try next("0 3 * * *", after: "2026-11-21T19:00:00Z") == "2026-11-22T03:00:00Z")
    #expect(try next("0 3 * * *", after: "2026-11-22T02:59:59Z") == "2026-11-22T03:00:00Z")
    #expect(try next("0 3 * * *", after: "2026-11-22T03:00:00Z") == "2026-11-23T03:00:00Z")
  }

  @Test func monthEnds() throws {
    // The 31st skips 30-day months and February.
    #expect(try next("0 0 31 * *", after: "2026-04-01T00:00:00Z") == "2026-05-31T00:00:00Z")
    #expect(try next("0 0 31 * *", after: "2026-05-31T00:00:00Z") == "2026-07-31T00:00:00Z")
    #expect(try next("0 0 30 * *", after: "2026-01-30T00:00:00Z") == "2026-03-30T00:00:00Z")
    // Year end rolls over.
    #expect(try next("59 23 31 12 *", after: "2026-12-31T23:59:00Z") == "2027-12-31T23:59:00Z")
    #expect(try next("0 0 1 * *", after: "2026-12-15T00:00:00Z") == "2027-01-01T00:00:00Z")
  }

  @Test func leapYears() throws {
    #expect(try next("0 0 29 2 *", after: "2025-01-01T00:00:00Z") == "2028-02-29T00:00:00Z")
    #expect(try next("0 12 29 2 *", after: "2024-02-29T12:00:00Z") == "2028-02-29T12:00:00Z")
    // 2100 is not a leap year: from 2096 the next 29 February is in 2104.
    #expect(try next("0 0 29 2 *", after: "2096-03-01T00:00:00Z") == "2104-02-29T00:00:00Z")
    // 2000 was (divisible by 400).
    #expect(try next("0 0 29 2 *", after: "1999-01-01T00:00:00Z") == "2000-02-29T00:00:00Z")
  }

  @Test func neverFiring() throws {
    #expect(try next("0 0 31 2 *", after: "2026-01-01T00:00:00Z") == nil)
    #expect(try next("0 0 30 2 *", after: "2026-01-01T00:00:00Z") == nil)
  }

  @Test func dayOfMonthOrDayOfWeekWhenBothRestricted() throws {
    // Vixie rule: "on the 13th OR on Fridays". 2026-11-21 is a Saturday.
    let e = "0 0 13 * 5"
    #expect(try next(e, after: "2026-11-21T00:00:00Z") == "2026-11-27T00:00:00Z")  // Friday 27th
    #expect(try next(e, after: "2026-11-27T00:00:00Z") == "2026-12-04T00:00:00Z")  // Friday
    #expect(try next(e, after: "2026-12-11T00:00:00Z") == "2026-12-13T00:00:00Z")  // Sunday the 13th
  }

  @Test func dayOfMonthAndDayOfWeekWhenOneIsStar() throws {
    // Only Fridays (day-of-month is '*').
    #expect(try next("0 0 * * 5", after: "2026-11-21T00:00:00Z") == "2026-11-27T00:00:00Z")
    // A field starting with '*' counts as unrestricted: every other day AND Friday.
    // (The OR rule would give the 23rd, an odd day.)
    #expect(try next("0 0 */2 * 5", after: "2026-11-21T00:00:00Z") == "2026-11-27T00:00:00Z")
    #expect(try next("0 0 */2 * 5", after: "2026-11-27T00:00:00Z") == "2026-12-11T00:00:00Z")
  }

  @Test func listsRangesStepsAndNames() throws {
    #expect(try next("15,45 * * * *", after: "2026-11-21T19:20:00Z") == "2026-11-21T19:45:00Z")
    #expect(try next("*/20 * * * *", after: "2026-11-21T19:41:00Z") == "2026-11-21T20:00:00Z")
    #expect(try next("10-20/5 * * * *", after: "2026-11-21T19:16:00Z") == "2026-11-21T19:20:00Z")
    #expect(try next("5/30 * * * *", after: "2026-11-21T19:06:00Z") == "2026-11-21T19:35:00Z")
    #expect(try next("0 9 * * MON-FRI", after: "2026-11-21T00:00:00Z") == "2026-11-23T09:00:00Z")
    #expect(try next("0 0 1 JAN,jul *", after: "2026-02-01T00:00:00Z") == "2026-07-01T00:00:00Z")
    // 7 is Sunday, like 0.
    #expect(try next("0 0 * * 7", after: "2026-11-21T00:00:00Z") == "2026-11-22T00:00:00Z")
    #expect(try next("0 0 * * sun", after: "2026-11-21T00:00:00Z") == "2026-11-22T00:00:00Z")
  }

  @Test func macros() throws {
    #expect(try next("@daily", after: "2026-11-21T19:00:00Z") == "2026-11-22T00:00:00Z")
    #expect(try next("@hourly", after: "2026-11-21T19:00:00Z") == "2026-11-21T20:00:00Z")
    #expect(try next("@weekly", after: "2026-11-21T19:00:00Z") == "2026-11-22T00:00:00Z")
    #expect(try next("@monthly", after: "2026-11-21T19:00:00Z") == "2026-12-01T00:00:00Z")
    #expect(try next("@yearly", after: "2026-11-21T19:00:00Z") == "2027-01-01T00:00:00Z")
  }

  @Test(arguments: [
    "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 13 *",
    "* * * * 8", "5-1 * * * *", "*/0 * * * *", "1,,2 * * * *", "a * * * *", "* * * FOO *", "@never",
    "1/2/3 * * * *",
  ])
  func rejectsMalformed(_ text: String) {
    #expect(throws: UnitError.self) { try CronExpression.parse(text).get() }
  }

  @Test func shortestInterval() throws {
    #expect(try cron("*/5 * * * *").shortestInterval() == .minutes(5))
    #expect(try cron("0,10 3 * * *").shortestInterval() == .minutes(10))
    #expect(try cron("0 * * * *").shortestInterval() == .hours(1))
    #expect(try cron("0 3 * * *").shortestInterval() == .hours(24))
  }
}

@Suite struct ScheduleParsingTests {
  @Test func kinds() throws {
    #expect(try Schedule.parse("once").get() == .once)
    #expect(try Schedule.parse("every 6h").get() == .every(.hours(6)))
    #expect(try Schedule.parse("every 1h30m").get() == .every(.minutes(90)))
    guard case .cron(let c) = try Schedule.parse("0 3 * * *").get() else {
      Issue.record("not a cron schedule")
      return
    }
    #expect(c.source == "0 3 * * *")
  }

  @Test(arguments: ["every", "every 0s", "every 6", "every six hours", "sometimes", ""])
  func rejects(_ text: String) {
    #expect(throws: UnitError.self) { try Schedule.parse(text).get() }
  }
}

@Suite struct WindowTests {
  @Test func plainWindow() throws {
    let w = try TimeWindow.parse("01:00-06:00").get()
    #expect(w.contains(minuteOfDay: 60))
    #expect(w.contains(minuteOfDay: 359))
    #expect(!w.contains(minuteOfDay: 360))
    #expect(!w.contains(minuteOfDay: 59))
  }

  @Test func wrapsMidnight() throws {
    let w = try TimeWindow.parse("22:30-02:00").get()
    #expect(w.contains(minuteOfDay: 22 * 60 + 30))
    #expect(w.contains(minuteOfDay: 0))
    #expect(w.contains(minuteOfDay: 119))
    #expect(!w.contains(minuteOfDay: 120))
    #expect(!w.contains(minuteOfDay: 12 * 60))
    #expect(w.description == "22:30-02:00")
  }

  @Test(arguments: ["01:00", "1-6", "25:00-06:00", "01:60-02:00", "03:00-03:00", "01:00-06:00-07:00", "ab:cd-01:00"])
  func rejects(_ text: String) {
    #expect(throws: UnitError.self) { try TimeWindow.parse(text).get() }
  }
}
