import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Issue 13's hostile servers: each ends with a clear outcome, nothing
/// installed that should not be, and no partial left that cannot be resumed.
@Suite final class HostileServerTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// A Content-Length longer than the body, closed cleanly: never installed
  /// short; the bytes received are resumed on the retry.
  @Test func aBodyShorterThanItsContentLengthIsResumedNeverInstalledShort() throws {
    let a = testBytes(100_000, seed: 1)
    server.put("a", a)
    server.routes(["/a.bin": ["file": "a", "etag": "\"a\"", "short_body": 60_000, "drop_times": 1]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 2, backoff: 1s}}"])
    let r = try apply()
    #expect(r.run.status == 0 && out("a.bin") == a, "\(r.run.stdout)")
    #expect(server.requests("/a.bin").last?.headers["range"] == "bytes=60000-")
    #expect(r.int("m/a", "resumed_from") == 60_000)
  }

  @Test func aBodyThatIsAlwaysShortFailsAndKeepsItsBytesForAResume() throws {
    let a = testBytes(100_000, seed: 2)
    server.put("a", a)
    server.routes(["/a.bin": ["file": "a", "etag": "\"a\"", "short_body": 60_000]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    let r = try apply()
    #expect(r.run.status == 1 && r.outcome("m/a") == "failed")
    #expect(out("a.bin") == nil, "nothing installed")
    #expect(partialExists("a.bin"), "the 60,000 bytes are kept for a resume")
  }

  /// An endless chunked body stops at max_bytes: failed, no partial, promptly.
  @Test func anEndlessChunkedBodyStopsAtMaxBytes() throws {
    server.put("a", testBytes(10, seed: 3))
    server.routes(["/a.bin": ["file": "a", "endless_chunked": true]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, max_bytes: 2MB, retry: {attempts: 1}}"])
    let started = Date()
    let r = try apply()
    #expect(r.run.status == 1 && r.outcome("m/a") == "failed")
    #expect((r.string("m/a", "error") ?? "").contains("max_bytes"), "\(r.string("m/a", "error") ?? "")")
    #expect(out("a.bin") == nil && !partialExists("a.bin"))
    #expect(Date().timeIntervalSince(started) < 30)
  }

  /// 10,000 header lines (about 170 KB): the response is read and the body
  /// installed, or the try fails with words; never a crash.
  @Test func tenThousandHeadersAreHandled() throws {
    let a = testBytes(5_000, seed: 4)
    server.put("a", a)
    server.routes(["/a.bin": ["file": "a", "etag": "\"a\"", "many_headers": 10_000]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    let r = try apply()
    #expect(r.run.status == 0 && r.outcome("m/a") == "installed" && out("a.bin") == a, "\(r.run.stdout)")
  }

  /// Found by reading the date parser for the header fuzz target: a
  /// Last-Modified with a twelve-digit year overflowed the calendar
  /// arithmetic and crashed apply (signal 4). Such a date is now no date.
  @Test func aDateFromTheFarFutureIsIgnoredNotACrash() throws {
    let a = testBytes(3_000, seed: 6)
    server.put("a", a)
    server.routes(["/a.bin": ["file": "a", "last_modified": "Sun, 06 Nov 999999999999 08:49:37 GMT"]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"])
    let r = try apply()
    #expect(r.run.status == 0 && r.outcome("m/a") == "installed" && out("a.bin") == a, "\(r.run.stderr)")
    #expect(HTTPDate.parse("Sun, 06 Nov 999999999999 08:49:37 GMT") == nil)
    #expect(HTTPDate.parse("Fri, 30 Feb 2026 08:49:37 GMT") == nil)
    #expect(HTTPDate.parse("Sat, 01 Jan 10000 00:00:00 GMT") == nil)
    #expect(
      HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")
        == Timestamp(year: 1994, month: 11, day: 6, hour: 8, minute: 49, second: 37))
  }

  /// A redirect to file:///etc/passwd is refused: only http and https are followed.
  @Test func aRedirectToALocalFileIsRefused() throws {
    server.routes(["/a.bin": ["redirect": ["status": 302, "location": "file:///etc/passwd"]]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin, retry: {attempts: 1}}"])
    let r = try apply()
    #expect(r.run.status == 1 && r.outcome("m/a") == "failed")
    let error = r.string("m/a", "error") ?? ""
    #expect(error.contains("file"), "\(error)")
    #expect(out("a.bin") == nil && !partialExists("a.bin"))
  }
}
