import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// What an answer means for the file (`ResponseVerdict`), for each kind of
/// request: pure, no server. The conformance and hostile-server suites
/// check the same rules through libcurl against real servers.
@Suite struct ResponseVerdictTests {
  typealias V = ResponseVerdict

  let etag = "\"v1\""

  func answer(
    _ status: Int, range: (Int64, Int64?, Int64?)? = nil, length: Int64? = nil, encoding: String? = nil,
    etag: String? = "\"v1\""
  ) -> V.Answer {
    V.Answer(
      status: status, contentRange: range.map { (start: $0.0, end: $0.1, total: $0.2) }, contentLength: length,
      contentEncoding: encoding, validators: Validators(etag: etag, lastModified: nil, dateIsStrong: false))
  }

  func whole(_ maxBytes: Int64? = nil) -> V.Request {
    V.Request(asked: .stream(partial: nil, ifRange: nil), maxBytes: maxBytes)
  }

  func resume(from size: Int64) -> V.Request { V.Request(asked: .stream(partial: size, ifRange: etag)) }

  func range(from start: Int64, of total: Int64) -> V.Request {
    V.Request(asked: .range(start: start, total: total, ifRange: etag))
  }

  // MARK: one stream

  @Test func aWholeBodyIsTheFileAndItsLengthTheSize() {
    #expect(V.of(answer(200, length: 500), to: whole()) == .whole(length: 500))
    #expect(
      V.of(answer(0), to: V.Request(asked: .stream(partial: nil, ifRange: nil), isFile: true)) == .whole(length: nil))
  }

  @Test func answersThatAreNotTheFileHaveNoBody() {
    for status in [301, 304, 404, 416, 500, 503] {
      #expect(V.of(answer(status), to: resume(from: 10)) == .noBody, "\(status)")
    }
  }

  @Test func aBodyLargerThanMaxBytesIsRefusedBeforeAByteIsWritten() {
    #expect(V.of(answer(200, length: 2048), to: whole(1024)) == .refuse(.tooLarge(limit: 1024, announced: 2048)))
    #expect(V.of(answer(200, length: 1024), to: whole(1024)) == .whole(length: 1024))
    // A resume's size is its Content-Range total.
    var r = resume(from: 10)
    r.maxBytes = 100
    #expect(V.of(answer(206, range: (10, 199, 200)), to: r) == .refuse(.tooLarge(limit: 100, announced: 200)))
  }

  @Test func anEncodedBodyIsNeverTheFile() {
    guard case .refuse(let e) = V.of(answer(200, length: 10, encoding: "gzip"), to: whole()) else {
      Issue.record("an encoded body was accepted")
      return
    }
    #expect(e.message.contains("Content-Encoding: gzip"))
    #expect(V.of(answer(200, length: 10, encoding: "Identity"), to: whole()) == .whole(length: 10))
  }

  // MARK: a resume

  @Test func aResumeContinuesWhereThePartialEndsUnderItsVersion() {
    #expect(V.of(answer(206, range: (100, 999, 1000)), to: resume(from: 100)) == .continues(start: 100, total: 1000))
    // The server honoured If-Range: a validator it left out counts as the same.
    #expect(
      V.of(answer(206, range: (100, 999, 1000), etag: nil), to: resume(from: 100))
        == .continues(start: 100, total: 1000))
    // A 200 to a resume is the whole file again.
    #expect(V.of(answer(200, length: 1000), to: resume(from: 100)) == .whole(length: 1000))
  }

  @Test func aResumeAnsweredElsewhereOrForAnotherVersionStartsOver() {
    #expect(
      V.of(answer(206, range: (90, 999, 1000)), to: resume(from: 100))
        == .restart("the server resumed at byte 90 instead of 100"))
    #expect(
      V.of(answer(206), to: resume(from: 100)) == .restart("the server answered 206 without a usable Content-Range"))
    #expect(
      V.of(answer(206, range: (100, 999, 1000), etag: "\"v2\""), to: resume(from: 100))
        == .restart("the server's version changed during a resume (If-Range was not honoured)"))
    #expect(
      V.of(answer(206, range: (0, 9, 10)), to: whole())
        == .restart("the server answered 206 without a usable Content-Range"))
  }

  /// S3 has no If-Range: a resume names its version with If-Match, and a
  /// changed object answers 412.
  @Test func aSignedResumeAnswered412StartsOverAndAnUnsigned412IsAnError() {
    var signed = resume(from: 100)
    signed.signed = true
    guard case .restart(let why) = V.of(answer(412), to: signed) else {
      Issue.record("a 412 to If-Match did not start over")
      return
    }
    #expect(why.contains("412 Precondition Failed to If-Match"))
    #expect(V.of(answer(412), to: resume(from: 100)) == .noBody)
    var fresh = whole()
    fresh.signed = true
    #expect(V.of(answer(412), to: fresh) == .noBody, "nothing was named: the status is the answer")
  }

  // MARK: ranges

  @Test func theFirstPieceGivesTheWholeSizeAndWhereItEnds() {
    let first = V.Request(asked: .firstPiece)
    #expect(
      V.of(answer(206, range: (0, 4_194_303, 100_000_000)), to: first)
        == .firstPiece(total: 100_000_000, end: 4_194_304))
    #expect(V.of(answer(206, range: (0, 999, 1000)), to: first) == .firstPiece(total: 1000, end: 1000))
    #expect(V.of(answer(200, length: 1000), to: first) == .whole(length: 1000))
    #expect(
      V.of(answer(206, range: (0, 999, nil)), to: first)
        == .restart("the server answered the first piece without a usable Content-Range"))
  }

  @Test func aRangeIsTheBytesAskedForOfTheGroupsSizeAndVersion() {
    let r = range(from: 4000, of: 10000)
    #expect(V.of(answer(206, range: (4000, 6999, 10000)), to: r) == .range(.asked))
    #expect(V.of(answer(206, range: (4000, 6999, 10000), etag: nil), to: r) == .range(.asked))
    #expect(
      V.of(answer(206, range: (4000, 6999, 10000), etag: "\"v2\""), to: r)
        == .range(.mismatch("the server's version changed during a segmented transfer")))
    #expect(
      V.of(answer(206, range: (0, 6999, 10000)), to: r)
        == .range(.mismatch("the server answered the range from byte 4000 of 10000 with bytes 0-…/10000")))
    #expect(
      V.of(answer(206, range: (4000, 6999, 12000)), to: r)
        == .range(.mismatch("the server answered the range from byte 4000 of 10000 with bytes 4000-…/12000")))
    #expect(
      V.of(answer(206), to: r)
        == .range(.mismatch("the server answered the range from byte 4000 of 10000 with no Content-Range")))
  }

  @Test func aRangeAnsweredWithTheWholeFileSaysWhetherItIsTheSameVersion() {
    let r = range(from: 4000, of: 10000)
    #expect(V.of(answer(200, length: 10000), to: r) == .range(.whole(sameVersion: true)))
    #expect(V.of(answer(200, length: 10000, etag: "\"v2\""), to: r) == .range(.whole(sameVersion: false)))
    #expect(V.of(answer(200, length: 10000, etag: nil), to: r) == .range(.whole(sameVersion: false)))
    #expect(V.of(answer(503), to: r) == .noBody, "an error's body is dropped; the completion says what it was")
  }

  // MARK: how a request ended

  @Test func theFinalStatusSaysHowARequestEnded() {
    func ended(_ s: Int, conditional: Bool = true) -> TransferOutcome? {
      V.ended(status: s, conditional: conditional, rangeTotal: 700, retryAfter: 5)
    }
    #expect(ended(200) == .complete && ended(206) == .complete)
    #expect(ended(304) == .notModified)
    #expect(
      ended(304, conditional: false)
        == .failed(
          .unusableAnswer(
            "the server answered 304 Not Modified to a request that was not conditional", retryable: true)))
    #expect(ended(416) == .rangeNotSatisfiable(total: 700))
    #expect(ended(302) == nil, "a redirect is the engine's to follow")
    #expect(ended(503) == .http(status: 503, retryAfter: 5))
    #expect(ended(102) == .failed(.unusableAnswer("unexpected HTTP status 102", retryable: false)))
    #expect(V.rangeEnded(status: 206, retryAfter: nil) == .complete)
    #expect(V.rangeEnded(status: 429, retryAfter: 2) == .http(status: 429, retryAfter: 2))
    #expect(
      V.rangeEnded(status: 304, retryAfter: nil)
        == .failed(.unusableAnswer("HTTP 304 to a range request", retryable: false)))
  }
}
