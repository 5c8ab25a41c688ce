import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// What a thread of its own returned.
private final class ResultBox<T>: @unchecked Sendable { var value: T? = nil }

/// The run's threads under SCHED_BATCH, and what is left as it was.
@Suite struct ThreadPolicyTests {
  /// Field 41 (`policy`) of a `/proc/.../stat` line.
  static func policy(inStat line: String) -> Int32? {
    guard let close = line.lastIndex(of: ")") else { return nil }
    let fields = line[line.index(after: close)...].split(separator: " ")
    // Fields from the third on follow the name's ")": field 41 is the 39th of them.
    return fields.count > 38 ? Int32(fields[38]) : nil
  }

  /// Runs `body` on a thread of its own (a policy set there dies with it) and waits for it.
  static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    startThread {
      box.value = body()
      done.signal()
    }
    done.wait()
    return box.value!
  }

  @Test func aRunsThreadsAreBatchedAndTheCallerIsRestoredAfter() {
    let seen = Self.onOwnThread { () -> [Int32] in
      let before = sched_getscheduler(0)
      let (inside, started) = ThreadPolicy.batched { () -> (Int32, Int32) in
        let child = Self.onOwnThread { sched_getscheduler(0) }
        return (sched_getscheduler(0), child)
      }
      return [before, inside, started, sched_getscheduler(0)]
    }
    #expect(seen == [ThreadPolicy.normal, ThreadPolicy.batch, ThreadPolicy.batch, ThreadPolicy.normal])
  }

  @Test func aThreadUnderAnotherPolicyIsLeftAsItIs() {
    _ = ThreadPolicy.original
    let inside = Self.onOwnThread { () -> Int32 in
      var p = sched_param()
      guard sched_setscheduler(0, 5 /* SCHED_IDLE */, &p) == 0 else { return -1 }
      return ThreadPolicy.batched { sched_getscheduler(0) }
    }
    #expect(inside == 5)
  }

  /// Hooks and plugins run under the policy syncfiles was given, not the run's.
  @Test func aChildStartedDuringARunGetsTheNormalPolicy() {
    let policies = Self.onOwnThread { () -> [Int32?] in
      let read = {
        let r = Subprocess.run(["/bin/cat", "/proc/self/stat"], environment: [:], timeout: 10, captureStdout: true)
        return Self.policy(inStat: String(decoding: r.stdout, as: UTF8.self))
      }
      let during = ThreadPolicy.batched { read() }
      return [during, read()]
    }
    #expect(policies == [ThreadPolicy.normal, ThreadPolicy.normal])
  }
}
