import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The run's summary: counts by outcome, bytes, and a row for each task that
/// moved bytes or failed (none for the unchanged ones).
@Suite struct RunReportTests {
  func task(_ id: String, _ outcome: TaskOutcome, bytes: Int64 = 0, error: String? = nil) -> TaskReport {
    var t = TaskReport(
      id: id, url: "http://h/\(id)", destination: "/d/\(id)", action: .download, outcome: outcome, reason: "")
    t.bytesTransferred = bytes
    t.attempts = 1
    t.error = error
    return t
  }

  @Test func countsBytesAndRowsComeFromEveryTask() {
    let report = RunReport(
      session: "s", started: Timestamp(seconds: 0), journal: "j",
      tasks: [
        task("m/a", .installed, bytes: 2048), task("m/b", .unchanged), task("m/c", .failed, error: "HTTP 404"),
        task("m/d", .unchanged), task("m/e", .installed, bytes: 1024),
      ], stopped: nil, elapsed: 0.5)
    #expect(report.count(.installed) == 2 && report.count(.unchanged) == 2 && report.count(.failed) == 1)
    #expect(report.count(.waiting) == 0)
    #expect(report.bytesTransferred == 3072)
    #expect(report.exitCode == 1)
    let text = report.text
    #expect(
      text.hasSuffix(
        "5 tasks: 2 installed, 2 unchanged, 1 failed, 0 waiting, 0 interrupted, 0 skipped; 3 KiB transferred in 0.5s"),
      "\(text)")
    let rows = text.split(separator: "\n").filter { $0.hasPrefix("m/") }
    #expect(rows.map { String($0.prefix(3)) } == ["m/a", "m/c", "m/e"], "\(text)")
    #expect(rows[1].contains("HTTP 404"))
  }
}
