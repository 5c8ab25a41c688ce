import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Every transition of a task's life after planning (`TaskLifecycle`): pure,
/// no server, no clock, no file.
@Suite struct TaskLifecycleTests {
  typealias L = TaskLifecycle

  func life(_ sources: [String] = ["http://a/f"], attempts: Int = 3, backoff: Double = 10, max: Double = 300)
    -> L
  {
    L(sources: sources, retry: .init(attempts: attempts, backoff: backoff, maxBackoff: max), seed: 42)
  }

  /// A life whose first try is running.
  func running(_ sources: [String] = ["http://a/f"], attempts: Int = 3) -> L {
    var l = life(sources, attempts: attempts)
    _ = l.handle(.slot)
    return l
  }

  func waitSeconds(_ actions: [L.Action]) -> Double? {
    for a in actions { if case .waitToRetry(let s) = a { return s } }
    return nil
  }

  // MARK: queued

  @Test func aSlotStartsTheFirstTryOnTheURL() {
    var l = life(["http://a/f", "http://m/f"])
    #expect(l.handle(.slot) == [.startTry(source: 0)])
    #expect(l.state == .transferring)
    #expect(l.tries == 1)
  }

  /// The transport held the try until the run stopped: the task is "not
  /// started", as if it had never been handed over.
  @Test func aTryThatNeverBeganBeforeTheStopIsNotStarted() {
    var l = running()
    #expect(l.handle(.stop(reason: "deadline")) == [])
    #expect(
      l.handle(.tried(.neverBegan)) == [.notStarted("not started: the run stopped (deadline)"), .end(.interrupted)])
    #expect(l.tries == 0)
  }

  @Test func aTryThatNeverBeganWithoutAStopGoesBackToTheQueue() {
    var l = running()
    #expect(l.handle(.tried(.neverBegan)) == [.requeue])
    #expect(l.state == .queued && l.tries == 0)
  }

  @Test func copiedBytesGoStraightToTheInstaller() {
    var l = life()
    #expect(l.handle(.copied) == [.install])
    #expect(l.state == .installing)
  }

  @Test func aStopBeforeAnyTryLeavesTheTaskDueWithoutAJournalRecord() {
    var l = life()
    #expect(
      l.handle(.stop(reason: "SIGTERM")) == [.notStarted("not started: the run stopped (SIGTERM)"), .end(.interrupted)])
    #expect(l.state == .finished(.interrupted))
  }

  @Test func aStopWhileQueuedAfterATryInterruptsIt() {
    var l = running(["http://a/f", "http://m/f"])
    _ = l.handle(.tried(.http(status: 503, retryAfter: nil)))  // on to the mirror, queued again
    #expect(l.state == .queued)
    #expect(
      l.handle(.stop(reason: "deadline")) == [.interrupt("stopped (deadline) before the next try"), .end(.interrupted)])
  }

  @Test func anEventTheStateDoesNotExpectChangesNothing() {
    var l = life()
    #expect(l.handle(.retryDue) == [])
    #expect(l.handle(.tried(.complete)) == [])
    #expect(l.handle(.installed(failure: nil)) == [])
    #expect(l == life())
  }

  // MARK: transferring

  @Test func aTryThatCannotBeSetUpFailsTheTaskForGood() {
    var l = running()
    #expect(l.handle(.couldNotStart("no plugin")) == [.fail("no plugin"), .end(.failed)])
  }

  @Test func aCompleteTryIsVerified() {
    var l = running()
    #expect(l.handle(.tried(.complete)) == [.verify])
    #expect(l.state == .verifying)
  }

  @Test func a416WhenThePartialIsWholeIsVerifiedNotRefetched() {
    var l = running()
    #expect(l.handle(.tried(.rangeNotSatisfiable(partialIsWhole: true))) == [.verify])
  }

  @Test func a416OtherwiseStartsOver() {
    var l = running()
    let why = "the server cannot continue the partial (416); starting over"
    #expect(
      l.handle(.tried(.rangeNotSatisfiable(partialIsWhole: false))) == [
        .discardPartial, .log(why), .warn(why), .requeue,
      ])
    #expect(l.state == .queued)
    #expect(l.restarts == 1)
  }

  @Test func notModifiedIsRecordedUnchanged() {
    var l = running()
    #expect(l.handle(.tried(.notModified)) == [.recordUnchanged, .end(.unchanged)])
    #expect(l.state == .finished(.unchanged))
  }

  @Test func aStoppedTryIsInterrupted() {
    var l = running()
    #expect(l.handle(.tried(.stopped)) == [.interrupt("stopped before the transfer finished"), .end(.interrupted)])
  }

  @Test func startingOverGivesUpAfterThreeRestartsNamingTheCauseOnce() {
    var l = running()
    let cause = "the server resumed at byte 50010 instead of 50000"
    let why = cause + "; starting over"
    for _ in 1...3 {
      #expect(l.handle(.tried(.restart(cause))).last == .requeue)
      #expect(l.handle(.slot) == [.startTry(source: 0)])
    }
    #expect(
      l.handle(.tried(.restart(cause))) == [
        .discardPartial, .log(why), .withdrawWarning(why),
        .fail(
          "the server resumed at byte 50010 instead of 50000; gave up after starting over 3 times"),
        .end(.failed),
      ])
  }

  @Test func aTransientStatusWaitsOutABackoffWithJitterThenRetriesTheURL() {
    var l = running(attempts: 3)
    let a = l.handle(.tried(.http(status: 503, retryAfter: nil)))
    let s = waitSeconds(a)
    #expect(s != nil && s! >= 5 && s! < 10)  // half to all of the 10 s backoff
    #expect(a.first == .log("HTTP 503 from http://a/f; retry 1 of 2 in \(Int(s!.rounded(.up)))s"))
    #expect(l.state == .waitingToRetry)
    #expect(l.pass == 2)
    #expect(l.handle(.retryDue) == [.requeue])
    #expect(l.handle(.slot) == [.startTry(source: 0)])
    // The second wait doubles the base: 10 to 20 s.
    let s2 = waitSeconds(l.handle(.tried(.http(status: 500, retryAfter: nil))))
    #expect(s2 != nil && s2! >= 10 && s2! < 20)
  }

  @Test func retryAfterIsHonouredUpToMaxBackoff() {
    var l = running()
    #expect(waitSeconds(l.handle(.tried(.http(status: 429, retryAfter: 120)))) == 120)
    var m = running()
    #expect(waitSeconds(m.handle(.tried(.http(status: 429, retryAfter: 9000)))) == 300)
  }

  @Test func theAttemptsSpentFailTheTaskKeepingAResumablePartial() {
    var l = running(attempts: 2)
    _ = l.handle(.tried(.failed("connection reset", retryable: true, discardPartial: false)))
    _ = l.handle(.retryDue)
    _ = l.handle(.slot)
    #expect(
      l.handle(.tried(.failed("connection reset", retryable: true, discardPartial: false))) == [
        .fail("connection reset (after 2 attempts)"), .end(.failed),
      ])
    var one = running(attempts: 1)
    #expect(
      one.handle(.tried(.http(status: 503, retryAfter: nil))).first
        == .fail("HTTP 503 from http://a/f (after 1 attempt)"))
  }

  // MARK: what a task that ends keeps of its partial

  @Test func theAttemptsSpentKeepAResumablePartialAndDiscardAnyOther() {
    func spent(_ held: L.PartialHeld) -> [L.Action] {
      var l = running(attempts: 1)
      return l.handle(.tried(.failed("connection reset", retryable: true, discardPartial: false), partial: held))
    }
    let fail: [L.Action] = [.fail("connection reset (after 1 attempt)"), .end(.failed)]
    #expect(spent(.resumable) == fail)
    #expect(spent(.unresumable) == [.discardPartial] + fail)
    #expect(spent(.none) == fail)
  }

  @Test func aPermanentFailureDiscardsEvenAResumablePartial() {
    var l = running()
    #expect(
      l.handle(.tried(.http(status: 404, retryAfter: nil), partial: .resumable)) == [
        .discardPartial, .fail("HTTP 404 from http://a/f"), .end(.failed),
      ])
    #expect(l.partial == .none)
  }

  @Test func aStopKeepsAResumablePartialAndDiscardsAnyOther() {
    var kept = running()
    #expect(
      kept.handle(.tried(.stopped, partial: .resumable)) == [
        .interrupt("stopped before the transfer finished"), .end(.interrupted),
      ])
    var dropped = running()
    #expect(
      dropped.handle(.tried(.stopped, partial: .unresumable)) == [
        .discardPartial, .interrupt("stopped before the transfer finished"), .end(.interrupted),
      ])
  }

  /// The partial a failed try left is still the task's while it waits to
  /// retry: a stop then keeps it if a resume can continue it.
  @Test func aPartialHeldWhileWaitingToRetryIsKeptOrDiscardedByTheStop() {
    var l = running()
    _ = l.handle(.tried(.http(status: 503, retryAfter: nil), partial: .resumable))
    #expect(l.state == .waitingToRetry && l.partial == .resumable)
    #expect(
      l.handle(.stop(reason: "SIGTERM")) == [
        .interrupt("stopped (SIGTERM) while waiting to retry"), .end(.interrupted),
      ])
    var m = running()
    _ = m.handle(.tried(.http(status: 503, retryAfter: nil), partial: .unresumable))
    #expect(m.handle(.retryPastDeadline).first == .discardPartial)
  }

  @Test func bytesHandedToTheInstallerAreNotTheTasksToDiscard() {
    var l = running()
    _ = l.handle(.tried(.complete, partial: .resumable))
    #expect(l.handle(.verified(.accepted)) == [.install])
    #expect(l.partial == .none)
    #expect(
      l.handle(.installed(failure: "No space left on device")) == [.fail("No space left on device"), .end(.failed)])
  }

  @Test func aPermanentFailureOnTheOnlySourceFailsAtOnce() {
    var l = running()
    #expect(
      l.handle(.tried(.http(status: 404, retryAfter: nil))) == [
        .fail("HTTP 404 from http://a/f"), .end(.failed),
      ])
    #expect(l.permanent == [0])
  }

  @Test func tooLargeDiscardsThePartialBeforeFailing() {
    var l = running()
    let why = "more than max_bytes 1 KiB arrived; aborted, nothing installed"
    #expect(
      l.handle(.tried(.failed(why, retryable: false, discardPartial: true))) == [
        .discardPartial, .fail(why), .end(.failed),
      ])
  }

  @Test func aFailureMovesToTheNextMirrorAtOnceThenWrapsAfterABackoff() {
    var l = running(["http://a/f", "http://m/f"])
    #expect(
      l.handle(.tried(.http(status: 503, retryAfter: nil))) == [
        .log("HTTP 503 from http://a/f; trying mirror http://m/f"), .requeue,
      ])
    #expect(l.source == 1)
    #expect(l.handle(.slot) == [.startTry(source: 1)])
    let a = l.handle(.tried(.http(status: 503, retryAfter: nil)))
    #expect(waitSeconds(a) != nil)
    #expect(l.source == 0)  // the next pass starts again at the url
  }

  @Test func aSourceThatFailedForGoodIsNotTriedInLaterPasses() {
    var l = running(["http://a/f", "http://m/f"])
    _ = l.handle(.tried(.http(status: 404, retryAfter: nil)))  // the url: gone for good
    _ = l.handle(.slot)
    _ = l.handle(.tried(.http(status: 503, retryAfter: nil)))  // the mirror: transient
    #expect(l.source == 1)
    _ = l.handle(.retryDue)
    #expect(l.handle(.slot) == [.startTry(source: 1)])
    // Both failed for good: the task fails without waiting.
    #expect(
      l.handle(.tried(.http(status: 410, retryAfter: nil))) == [
        .fail("HTTP 410 from http://m/f"), .end(.failed),
      ])
  }

  @Test func aStopDuringATryTurnsItsFailureIntoAnInterruption() {
    var l = running()
    #expect(l.handle(.stop(reason: "SIGINT")) == [])
    #expect(l.state == .transferring)
    #expect(
      l.handle(.tried(.failed("timeout", retryable: true, discardPartial: false))) == [
        .interrupt("timeout"), .end(.interrupted),
      ])
  }

  @Test func aStopDuringATryThatMustStartOverInterruptsInsteadOfRequeueing() {
    var l = running()
    _ = l.handle(.stop(reason: "SIGINT"))
    let cause = "the server's version changed during a resume (If-Range was not honoured)"
    let why = cause + "; starting over"
    #expect(
      l.handle(.tried(.restart(cause))) == [
        .discardPartial, .log(why), .interrupt("stopped (SIGINT) before starting over"), .end(.interrupted),
      ])
  }

  // MARK: waitingToRetry

  @Test func aRetryPastTheDeadlineIsInterrupted() {
    var l = running()
    _ = l.handle(.tried(.http(status: 503, retryAfter: nil)))
    #expect(
      l.handle(.retryPastDeadline) == [.interrupt("deadline reached while waiting to retry"), .end(.interrupted)])
  }

  @Test func aStopWhileWaitingToRetryInterruptsAtOnce() {
    var l = running()
    _ = l.handle(.tried(.http(status: 503, retryAfter: nil)))
    #expect(
      l.handle(.stop(reason: "SIGTERM")) == [
        .interrupt("stopped (SIGTERM) while waiting to retry"), .end(.interrupted),
      ])
    #expect(l.handle(.retryDue) == [])  // a late timer changes nothing
  }

  // MARK: verifying

  func verifying() -> L {
    var l = running()
    _ = l.handle(.tried(.complete))
    return l
  }

  @Test func acceptedBytesAreInstalled() {
    var l = verifying()
    #expect(l.handle(.verified(.accepted)) == [.install])
    #expect(l.state == .installing)
  }

  @Test func theSameBytesAsInstalledChangeNothing() {
    var l = verifying()
    #expect(l.handle(.verified(.sameAsInstalled)) == [.discardPartial, .recordUnchanged, .end(.unchanged)])
  }

  @Test func aVerifierAskingForTheFileAgainStartsOver() {
    var l = verifying()
    let why = "size mismatch; starting over"
    #expect(l.handle(.verified(.refetch("size mismatch"))) == [.discardPartial, .log(why), .warn(why), .requeue])
  }

  @Test func aRejectionKeepsTheOldFile() {
    var l = verifying()
    #expect(
      l.handle(.verified(.rejected("sha256 mismatch"))) == [
        .discardPartial, .fail("sha256 mismatch; the old file is kept"), .end(.failed),
      ])
  }

  @Test func aRejectedFirstDownloadSpeaksOfNoOldFile() {
    var l = verifying()
    l.hadDestination = false
    #expect(
      l.handle(.verified(.rejected("sha256 mismatch"))) == [.discardPartial, .fail("sha256 mismatch"), .end(.failed)])
  }

  @Test func aBodyCutShortIsRefusedButMayBeTriedAgainNextRun() {
    var l = verifying()
    #expect(l.handle(.verified(.cutShort("cut"))) == [.discardPartial, .fail("cut"), .end(.failed)])
  }

  /// Checks that could not run before the stop (a signature on its way):
  /// a resumable complete partial stays for the next run, which checks it.
  @Test func checksCutOffByAStopKeepAResumablePartial() {
    var kept = running()
    _ = kept.handle(.tried(.complete, partial: .resumable))
    #expect(
      kept.handle(.verified(.stopped("stopped before SUMS arrived"))) == [
        .interrupt("stopped before SUMS arrived"), .end(.interrupted),
      ])
    var unnamed = running()
    _ = unnamed.handle(.tried(.complete, partial: .unresumable))
    #expect(unnamed.handle(.verified(.stopped("s"))).first == .discardPartial)
  }

  @Test func aCompleteTryWithoutAPartialFails() {
    var l = verifying()
    #expect(
      l.handle(.verified(.noPartial)) == [
        .fail("the transfer completed without a partial file"), .end(.failed),
      ])
  }

  // MARK: installing and finished

  @Test func anInstallIsRecorded() {
    var l = verifying()
    _ = l.handle(.verified(.accepted))
    #expect(l.handle(.stop(reason: "SIGTERM")) == [])  // an install in flight completes
    #expect(l.handle(.installed(failure: nil)) == [.recordInstalled, .end(.installed)])
    #expect(l.isFinished)
  }

  @Test func aFailedInstallFailsTheTaskForGood() {
    var l = verifying()
    _ = l.handle(.verified(.accepted))
    #expect(
      l.handle(.installed(failure: "cannot flush x: No space left on device")) == [
        .fail("cannot flush x: No space left on device"), .end(.failed),
      ])
  }

  @Test func aFinishedTaskIgnoresEverything() {
    var l = running()
    _ = l.handle(.tried(.notModified))
    let done = l
    for e: L.Event in [
      .slot, .copied, .tried(.complete), .verified(.accepted), .retryDue, .retryPastDeadline,
      .installed(failure: nil), .couldNotStart("x"),
    ] {
      #expect(l.handle(e) == [])
    }
    #expect(l == done)
  }

  // MARK: the backoff

  @Test func theBackoffDoublesPerPassAndTheJitterIsRepeatableForASeed() {
    #expect(L.doubled(10, pass: 1) == 10)
    #expect(L.doubled(10, pass: 3) == 40)
    #expect(L.doubled(10, pass: 0) == 10)
    var a = life()
    var b = life()
    #expect(a.backoff(afterPass: 1, retryAfter: nil) == b.backoff(afterPass: 1, retryAfter: nil))
    var delays = Set<Double>()
    for _ in 0..<20 { delays.insert(a.backoff(afterPass: 1, retryAfter: nil)) }
    #expect(delays.count > 10)  // jitter, not a constant
    #expect(delays.allSatisfy { $0 >= 5 && $0 < 10 })
  }
}
