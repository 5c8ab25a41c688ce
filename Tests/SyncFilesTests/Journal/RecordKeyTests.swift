import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Each key of a task record is spelled once, and a record with every
/// field set reads back the same through the tree and through the bytes.
@Suite struct RecordKeyTests {
  @Test func eachKeyIsSpelledOnceInItsObject() {
    let task = RecordKey.Task.allCases.map(\.text)
    let installed = RecordKey.Installed.allCases.map(\.text)
    let partial = RecordKey.Partial.allCases.map(\.text)
    for names in [task, installed, partial] {
      #expect(Set(names).count == names.count, "\(names)")
      #expect(!names.contains("t") && !names.contains("id"), "the record's own keys stay apart: \(names)")
    }
  }

  @Test func aRecordWithEveryFieldReadsBackTheSameBothWays() throws {
    var t = TaskState(id: "m/every")
    t.fingerprint = "fp1"
    t.lastCheck = Timestamp(year: 2026, month: 12, day: 2)
    t.lastSuccess = Timestamp(year: 2026, month: 12, day: 1)
    t.lastOutcome = .installed
    t.lastError = "an \"error\""
    t.lastBytes = 1234
    t.httpStatus = 200
    t.installed = TaskState.Installed(
      size: 10, mtimeNs: 20, etag: "\"e\"", lastModified: "Wed, 02 Dec 2026 00:00:00 GMT", sha256: "ab",
      dateIsStrong: true)
    t.partial = TaskState.Partial(
      path: ".p", offset: 5, totalBytes: 10, etag: "\"e\"", lastModified: "x", dateIsStrong: true)
    t.failures = 2
    t.backoffUntil = Timestamp(year: 2026, month: 12, day: 3)
    t.changeHookPending = true
    t.completeHookPending = true
    let bytes = t.recordBytes()
    #expect(bytes == t.json.bytes(), "the byte writer writes what the tree writes")
    let viaBytes = try #require(bytes.withUnsafeBufferPointer { TaskState.fastRecord($0) })
    let viaTree = try #require(TaskState(json: try JSONValue.parse(String(decoding: bytes, as: UTF8.self))))
    #expect(viaBytes.json == t.json && viaTree.json == t.json)
  }
}
