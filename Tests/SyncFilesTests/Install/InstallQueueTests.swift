import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The install thread's groups: what it is woken for, and what each group holds.
@Suite final class InstallQueueTests {
  let dir = makeTempDir()
  var root: String { dir + "/root" }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// The groups handed back, each as the sorted indices it installed.
  final class Groups: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [[Int]] = []
    func add(_ done: [InstallQueue.Done]) {
      lock.lock()
      list.append(done.map(\.index).sorted())
      lock.unlock()
    }
    var all: [[Int]] {
      lock.lock()
      defer { lock.unlock() }
      return list
    }
    /// Waits (at most `seconds`) until `n` files are installed.
    func wait(for n: Int, seconds: Double) -> Bool {
      let end = Date().addingTimeInterval(seconds)
      while all.joined().count < n && Date() < end { usleep(2_000) }
      return all.joined().count >= n
    }
  }

  func item(_ i: Int) throws -> InstallQueue.Item {
    let p = try PartialFile(root: root, relative: "f\(i).txt", resume: false)
    try p.write(Array("file \(i)".utf8))
    return InstallQueue.Item(index: i, partial: p, mode: nil)
  }

  @Test func filesAddedWhileAGroupGathersAreInstalledTogether() throws {
    let groups = Groups()
    let q = InstallQueue(group: true, gather: 0.3) { groups.add($0) }
    for i in 0..<5 { q.add(try item(i)) }
    #expect(groups.wait(for: 5, seconds: 10))
    q.shutdown()
    #expect(groups.all == [[0, 1, 2, 3, 4]])
    for i in 0..<5 {
      #expect((try? String(contentsOfFile: root + "/f\(i).txt", encoding: .utf8)) == "file \(i)")
    }
  }

  /// Only the first file and the one that fills a group wake the thread; a
  /// full group must not wait out the gathering.
  @Test func aFullGroupIsInstalledWithoutWaitingOutTheGathering() throws {
    let groups = Groups()
    let q = InstallQueue(group: true, gather: 60, groupLimit: 4) { groups.add($0) }
    let started = Date()
    for i in 0..<4 { q.add(try item(i)) }
    #expect(groups.wait(for: 4, seconds: 20))
    #expect(Date().timeIntervalSince(started) < 20)
    #expect(groups.all == [[0, 1, 2, 3]])
    // The next file starts a group of its own, installed at shutdown.
    q.add(try item(4))
    q.shutdown()
    #expect(groups.all == [[0, 1, 2, 3], [4]])
  }

  /// When no transfer is in flight the runner closes the group: the files
  /// gathered so far are installed without waiting out the gathering, and
  /// the next file gathers again.
  @Test func aClosedGroupIsInstalledWithoutWaitingOutTheGathering() throws {
    let groups = Groups()
    let q = InstallQueue(group: true, gather: 60) { groups.add($0) }
    let started = Date()
    for i in 0..<2 { q.add(try item(i)) }
    q.closeGroup()
    #expect(groups.wait(for: 2, seconds: 20))
    #expect(Date().timeIntervalSince(started) < 20)
    #expect(groups.all == [[0, 1]])
    // A file added after the close gathers again: it waits for the shutdown.
    q.add(try item(2))
    usleep(100_000)
    #expect(groups.all == [[0, 1]])
    q.shutdown()
    #expect(groups.all == [[0, 1], [2]])
  }

  @Test func aFileAddedToAnIdleQueueIsInstalled() throws {
    let groups = Groups()
    let q = InstallQueue(group: false) { groups.add($0) }
    q.add(try item(0))
    #expect(groups.wait(for: 1, seconds: 10))
    usleep(20_000)  // the thread back to waiting for a first file
    q.add(try item(1))
    #expect(groups.wait(for: 2, seconds: 10))
    q.shutdown()
    #expect(groups.all == [[0], [1]])
  }
}
