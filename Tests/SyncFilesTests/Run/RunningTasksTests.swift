import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The run's collection of tasks that transfer (`RunningTasks`): a task is
/// made when first needed, the same one is handed out while it runs, and it
/// is let go when it ends.
@Suite struct RunningTasksTests {
  let entry: FileEntry? = decode(SyncFilesTests.entry(lines: [])).0?.files.first

  func make(_ number: Int, _ position: Int) -> RunningTask {
    let planned = PlannedTask(entry: entry!, action: .download, reason: "")
    return RunningTask(
      number: number, position: position, planned: planned, manifest: 0,
      life: TaskLifecycle(sources: ["u"], retry: .init(attempts: 1, backoff: 1, maxBackoff: 1), seed: 1),
      report: TaskReport(id: planned.id, url: "u", destination: "d", action: .download, outcome: .skipped, reason: ""))
  }

  @Test func aTaskIsMadeOnFirstUseAndTheSameOneIsHandedOutWhileItRuns() throws {
    try #require(entry != nil)
    var tasks = RunningTasks(positions: [3, 7, 9])
    #expect(tasks.count == 3 && tasks.live(1) == nil && tasks.running.isEmpty, "nothing is made up front")
    var made = 0
    let first = tasks.task(1) {
      made += 1; return make($0, $1)
    }
    #expect(first?.number == 1 && first?.position == 7 && made == 1)
    let again = tasks.task(1) {
      made += 1; return make($0, $1)
    }
    #expect(again === first && made == 1)
    #expect(tasks.live(1) === first && tasks.running.count == 1)
  }

  @Test func anEndedTaskIsLetGoAndNeverMadeAgain() throws {
    try #require(entry != nil)
    var tasks = RunningTasks(positions: [0, 1])
    guard let t = tasks.task(0, make: make) else {
      Issue.record("no task made")
      return
    }
    tasks.end(t)
    #expect(tasks.hasEnded(0) && !tasks.hasEnded(1))
    #expect(tasks.live(0) == nil && tasks.running.isEmpty)
    #expect(tasks.task(0, make: make) == nil, "an ended task is not begun again")
  }
}
