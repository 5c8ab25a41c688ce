import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The request policy and the weak-date rule (RFC 9110 §8.8.2.2, SPEC §8.1): pure, no server.
@Suite struct RequestPolicyTests {
  let t0 = "Sat, 21 Nov 2026 10:00:00 GMT"
  let t1 = "Sat, 21 Nov 2026 10:00:01 GMT"

  @Test func aDateIsStrongOnlyAtLeastOneSecondBeforeTheResponsesDate() {
    #expect(Validators.isStrong(lastModified: t0, date: t1))
    #expect(!Validators.isStrong(lastModified: t0, date: t0))  // the same second: weak
    #expect(!Validators.isStrong(lastModified: t1, date: t0))  // a date in the future: weak
    #expect(!Validators.isStrong(lastModified: t0, date: nil))  // no Date to weigh it by
    #expect(!Validators.isStrong(lastModified: "yesterday", date: t1))
  }

  @Test func versionsAreComparedOnlyOnTrustedValidators() {
    let strong = Validators(etag: "\"a\"", lastModified: t0, dateIsStrong: true)
    #expect(strong.names(ifRange: "\"a\"") == true && strong.names(ifRange: "\"b\"") == false)
    #expect(strong.names(ifRange: t0) == true && strong.names(ifRange: t1) == false)
    #expect(Validators(etag: nil, lastModified: t0, dateIsStrong: true).names(ifRange: "\"a\"") == nil)
    #expect(strong.isSameVersion(as: strong))
    #expect(!strong.isSameVersion(as: Validators(etag: "\"b\"", lastModified: t0, dateIsStrong: true)))
    #expect(!strong.isSameVersion(as: Validators(etag: "\"a\"", lastModified: t0, dateIsStrong: false)))
    let dated = Validators(etag: nil, lastModified: t0, dateIsStrong: true)
    #expect(dated.isSameVersion(as: dated))
    #expect(!dated.isSameVersion(as: Validators(etag: nil, lastModified: t0, dateIsStrong: false)))
  }

  @Test func ifRangeTakesAStrongETagOrAStrongDateAndNothingWeak() {
    func v(_ etag: String?, _ lm: String?, date: String?) -> String? {
      Validators(etag: etag, lastModified: lm, date: date).ifRange
    }
    #expect(v("\"a\"", t0, date: t1) == "\"a\"")
    #expect(v("\"a\"", nil, date: t1) == "\"a\"")
    #expect(v("W/\"a\"", t0, date: t1) == nil)  // never a weak ETag, nor the date beside one
    #expect(v(nil, t0, date: t1) == t0)
    #expect(v(nil, t0, date: t0) == nil)  // a weak date alone
    // An ETag beside a weak date is no stronger than it (nginx: mtime second + size).
    #expect(v("\"5f-1000\"", t0, date: t0) == nil)
    #expect(v(nil, nil, date: t1) == nil)
  }

  @Test func resumeSendsRangeAndIfRangeAndAsksCachesToCheck() throws {
    let held = Validators(etag: "\"a\"", lastModified: t0, dateIsStrong: true)
    let p = try #require(RequestPolicy.resume(size: 500, held: held))
    #expect(p.headerLines(partialSize: 700) == ["Range: bytes=700-", "If-Range: \"a\"", "Cache-Control: max-age=0"])
    #expect(!p.isConditional)
    #expect(RequestPolicy.resume(size: 0, held: held) == nil)
    #expect(RequestPolicy.resume(size: 500, held: Validators(etag: nil, lastModified: t0, dateIsStrong: false)) == nil)
  }

  @Test func revalidationIsConditionalOnlyOnTrustedValidators() {
    let etag = RequestPolicy.revalidate(
      installed: Validators(etag: "\"a\"", lastModified: t0, dateIsStrong: true), localMtime: nil)
    // The strong date goes along: Squid answers 304 to a revalidation only when asked with a date.
    #expect(
      etag.headerLines(partialSize: 0) == [
        "If-None-Match: \"a\"", "If-Modified-Since: \(t0)", "Cache-Control: max-age=0",
      ])
    #expect(etag.isConditional)
    let etagOnly = RequestPolicy.revalidate(
      installed: Validators(etag: "\"a\"", lastModified: nil, dateIsStrong: false), localMtime: nil)
    #expect(etagOnly.headerLines(partialSize: 0) == ["If-None-Match: \"a\"", "Cache-Control: max-age=0"])

    let date = RequestPolicy.revalidate(
      installed: Validators(etag: nil, lastModified: t0, dateIsStrong: true), localMtime: nil)
    #expect(date.headerLines(partialSize: 0) == ["If-Modified-Since: \(t0)", "Cache-Control: max-age=0"])

    // Installed under a weak date (with or without an ETag): the whole file, from the origin.
    for e in [nil, "\"a\""] {
      let weak = RequestPolicy.revalidate(
        installed: Validators(etag: e, lastModified: t0, dateIsStrong: false), localMtime: nil)
      #expect(weak.condition == .none)
      #expect(weak.headerLines(partialSize: 0) == ["Cache-Control: no-cache", "Pragma: no-cache"])
      #expect(weak.note.contains("weak Last-Modified"))
      #expect(!weak.isConditional)
    }

    let unknown = RequestPolicy.revalidate(installed: nil, localMtime: 1_700_000_000)
    #expect(unknown.condition == .ifModifiedSince("Tue, 14 Nov 2023 22:13:20 GMT"))
  }

  @Test func theJournalRemembersWhetherEachDateWasStrong() throws {
    var s = TaskState(id: "m/a")
    s.installed = .init(size: 1, mtimeNs: 2, lastModified: t0, dateIsStrong: true)
    s.partial = .init(path: "/p", offset: 3, lastModified: t1, dateIsStrong: false)
    let back = try #require(TaskState(json: s.json))
    #expect(back.installed?.dateIsStrong == true)
    #expect(back.partial?.dateIsStrong == false)
    #expect(back == s)
  }
}
