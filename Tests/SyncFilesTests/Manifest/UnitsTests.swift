import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

@Suite struct SizeTests {
  @Test(arguments: [
    ("500", Int64(500)), ("0", 0), ("4.5KiB", 4608), ("10MiB", 10_485_760), ("4.7GB", 4_700_000_000),
    ("1kb", 1000), ("1 KiB", 1024), ("2TiB", 2 << 40), ("1.5MB", 1_500_000), ("12B", 12),
    ("0.5GiB", 536_870_912), (" 4\tKIB ", 4096), ("3 b", 3), ("1.25 mib", 1_310_720),
  ])
  func parsesSIAndIEC(text: String, bytes: Int64) throws {
    #expect(try ByteSize.parse(text).get() == bytes)
  }

  @Test(arguments: [
    "", "-1", "-4KiB", "KiB", "4.5.1KiB", "10 parsecs", "1e6", "99999999999999999999", "8EiB", "4 K iB", "4KiBs",
    "4.KiB", "4Kí",
  ])
  func rejectsMalformed(text: String) {
    #expect(throws: UnitError.self) { try ByteSize.parse(text).get() }
  }

  @Test func namesTheUnitItDoesNotKnow() {
    for (text, unit) in [("4 K iB", "K iB"), ("7 parsecs ", "parsecs"), ("4Kí", "Kí")] {
      guard case .failure(let e) = ByteSize.parse(text) else {
        Issue.record("\(text) parsed")
        continue
      }
      #expect(e.message.contains("unknown unit '\(unit)'"))
    }
  }

  @Test func rates() throws {
    #expect(try ByteSize.parseRate("500000").get() == 500_000)
    #expect(try ByteSize.parseRate("20MB").get() == 20_000_000)
    #expect(try ByteSize.parseRate("20MB/s").get() == 20_000_000)
    #expect(throws: UnitError.self) { try ByteSize.parseRate("20MB/h").get() }
  }

  /// curl's suffixes (SPEC §9.5): one letter, 1024-based, in either case.
  @Test func curlSuffixes() throws {
    #expect(try ByteSize.parseRate("10M").get() == 10 << 20)
    #expect(try ByteSize.parseRate("300K").get() == 300 << 10)
    #expect(try ByteSize.parseRate("1g/s").get() == 1 << 30)
    #expect(try ByteSize.parse("1.5M").get() == 3 << 19)
    #expect(try ByteSize.parse("2T").get() == 2 << 40)
  }

  @Test func formatsHumanSizes() {
    #expect(ByteSize.format(512) == "512 B")
    #expect(ByteSize.format(4608) == "4.5 KiB")
    #expect(ByteSize.format(100 << 20) == "100 MiB")
  }
}

@Suite struct DurationTests {
  @Test(arguments: [
    ("30s", Int64(30)), ("15m", 900), ("6h", 21_600), ("1d", 86_400), ("1w", 604_800), ("1h30m", 5400),
    ("1d2h3m4s", 93_784), ("0s", 0), ("90M", 5400),
  ])
  func parses(text: String, seconds: Int64) throws {
    #expect(try TimeSpan.parse(text).get().seconds == seconds)
  }

  @Test(arguments: ["", "30", "-5m", "h", "1x", "30m1h", "1h1h", "5 m", "1.5h", "9999999999999999999w"])
  func rejects(text: String) {
    #expect(throws: UnitError.self) { try TimeSpan.parse(text).get() }
  }

  @Test func suggestsAUnitForABareNumber() {
    guard case .failure(let e) = TimeSpan.parse("30") else {
      Issue.record("accepted a bare number")
      return
    }
    #expect(e.message.contains("did you mean '30s'"))
  }

  @Test func printsCanonically() {
    #expect(TimeSpan(seconds: 5400).description == "1h30m")
    #expect(TimeSpan(seconds: 0).description == "0s")
  }
}

@Suite struct TimestampTests {
  @Test func parsesRFC3339() throws {
    #expect(Timestamp.parseRFC3339("1970-01-01T00:00:00Z")?.seconds == 0)
    #expect(Timestamp.parseRFC3339("2026-12-01T00:00:00Z")?.rfc3339 == "2026-12-01T00:00:00Z")
    #expect(Timestamp.parseRFC3339("2026-12-01T01:30:00+01:30")?.rfc3339 == "2026-12-01T00:00:00Z")
    #expect(Timestamp.parseRFC3339("2026-12-01t00:00:00.123z")?.rfc3339 == "2026-12-01T00:00:00Z")
    #expect(Timestamp.parseRFC3339("2024-02-29T12:00:00-05:00")?.rfc3339 == "2024-02-29T17:00:00Z")
    #expect(Timestamp.parseRFC3339("1969-12-31T23:59:59Z")?.seconds == -1)
    #expect(Timestamp.parseRFC3339("2026-12-01 00:00:00Z")?.rfc3339 == "2026-12-01T00:00:00Z")
    #expect(Timestamp.parseRFC3339(String("x2026-12-01T00:00:00Z".dropFirst()))?.rfc3339 == "2026-12-01T00:00:00Z")
    #expect(Timestamp.parseRFC3339("2026-12-01T05:00:00.999-05:00")?.rfc3339 == "2026-12-01T10:00:00Z")
  }

  @Test(arguments: [
    "2026-12-01", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z", "2026-12-01T24:00:00Z",
    "2026-12-01T00:00:00", "2026-12-01T00:00:00+0100", "26-12-01T00:00:00Z", "2026-12-01T00:00:00Z ",
    "tomorrow", "2026-12-01T00:00:00.Z", "2026-12-01T00:00:00.5", "2026-12-01T00:00:00+24:00",
    "2026-12-01T00:00:00+01:60", "2026-12-01X00:00:00Z", "2026-12-01T00:00:00+01", "2026-12-01T0a:00:00Z",
  ])
  func rejects(text: String) {
    #expect(Timestamp.parseRFC3339(text) == nil)
  }

  @Test func civilRoundTripsAcrossCenturies() {
    for days in stride(from: -800_000, through: 800_000, by: 997) {
      let (y, m, d) = Timestamp.civilFromDays(days)
      #expect(Timestamp.daysFromCivil(y, m, d) == days)
    }
    #expect(Timestamp(year: 2000, month: 2, day: 29).civil.weekday == 2)  // a Tuesday
  }
}

/// Two sizes in one message read differently when they differ.
@Suite struct SizePairTests {
  @Test func exactBytesWhenTheRoundedFormsWouldReadTheSame() {
    #expect(ByteSize.format(3881, beside: 3858) == ("3881 B", "3858 B"))
    #expect(ByteSize.format(5000, beside: 3858) == ("4.9 KiB", "3.8 KiB"))
    #expect(ByteSize.format(3858, beside: 3858) == ("3.8 KiB", "3.8 KiB"))
  }
}
