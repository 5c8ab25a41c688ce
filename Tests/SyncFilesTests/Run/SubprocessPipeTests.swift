import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// A child that exited before reading its stdin costs its request, never
/// the process: the write fails with EPIPE instead of raising SIGPIPE
/// (under load, a source plugin that exits at once killed apply with it).
@Suite struct SubprocessPipeTests {
  @Test func aWriteToAPipeNobodyReadsFailsWithoutASignal() {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    close(fds[0])  // the reader is gone, as a child that exited at once
    Subprocess.offer(Array(repeating: 0x61, count: 1000), to: fds[1])
    close(fds[1])
    // Still running: without the fix SIGPIPE ended this test process here.
    var pending = sigset_t()
    sigpending(&pending)
    #expect(sigismember(&pending, SIGPIPE) == 0, "no SIGPIPE left pending")
  }

  @Test func aChildThatExitsAtOnceIsAFailureNotADeath() {
    let r = Subprocess.run(
      ["/bin/sh", "-c", "exec 0<&-; exit 3"], environment: [:], stdin: Array(repeating: 0x62, count: 200_000),
      timeout: 10)
    #expect(r.status == 3)
  }
}
