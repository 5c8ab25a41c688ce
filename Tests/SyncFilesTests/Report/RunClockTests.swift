import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The apply's steps (`phases` in the JSON report and the metrics).
@Suite struct RunClockTests {
  @Test func eachStepLastsFromTheOneBeforeAndTheyAddUpToTheElapsedTime() {
    var c = RunClock(start: 100)
    c.end(.load, at: 100.25)
    c.end(.plan, at: 100.5)
    c.end(.start, at: 101)
    c.end(.transfers, at: 103)
    c.end(.finish, at: 103.5)
    #expect(c.phases.map(\.name) == RunClock.steps)
    #expect(c.phases.map(\.seconds) == [0.25, 0.25, 0.5, 2, 0.5])
    #expect(c.elapsed == 3.5)
  }

  @Test func aStepEndsOnceAndNoTransferMeansNoTimeInTransfers() {
    var c = RunClock(start: 10)
    c.end(.start, at: 11)
    c.end(.start, at: 12)  // a later transfer began: the step had already ended
    c.end(.transfers, at: 11)
    c.end(.finish, at: 13)
    #expect(
      c.phases == [
        RunPhase(name: "start", seconds: 1), RunPhase(name: "transfers", seconds: 0),
        RunPhase(name: "finish", seconds: 2),
      ])
    #expect(c.elapsed == 3)
  }

  @Test func endingTheTransfersBeforeAnyBeganEndsTheStartAtTheSameInstant() {
    var c = RunClock(start: monotonicSeconds())
    c.endTransfers()
    #expect(c.phases.map(\.name) == ["start", "transfers"])
    #expect(c.phases[1].seconds == 0)
  }

  @Test func aClockWithNoStepEndedHasTakenNoTime() {
    let c = RunClock(start: 5)
    #expect(c.phases.isEmpty && c.elapsed == 0)
  }
}
