import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Records the journal holds back reach the file in order, at a flush, at
/// the writer's end and through a compaction.
@Suite final class JournalBatchTests {
  let dir = makeTempDir()
  var path: String { dir + "/journal" }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func state(_ id: String, _ bytes: Int64) -> TaskState {
    var s = TaskState(id: id)
    s.lastBytes = bytes
    return s
  }

  @Test func heldBackRecordsReachTheFileAtFlushInOrder() throws {
    let w = try JournalWriter(path: path)
    try w.record(state("m/a", 1), flush: false)
    try w.record(state("m/b", 2), flush: false)
    // Not yet written: a reader sees nothing of them.
    #expect(try JournalReader.read(path: path).tasks.isEmpty)
    // A record that flushes writes the held ones first: the last of a task still wins.
    try w.record(state("m/a", 3))
    let c = try JournalReader.read(path: path)
    #expect(c.records == 3)
    #expect(c.tasks["m/a"]?.lastBytes == 3)
    #expect(c.tasks["m/b"]?.lastBytes == 2)
    try w.record(state("m/b", 4), flush: false)
    try w.sync()
    #expect(try JournalReader.read(path: path).tasks["m/b"]?.lastBytes == 4)
  }

  @Test func aWriterGoneWritesWhatItHeld() throws {
    do {
      let w = try JournalWriter(path: path)
      try w.record(state("m/a", 5), flush: false)
    }
    #expect(try JournalReader.read(path: path).tasks["m/a"]?.lastBytes == 5)
  }

  @Test func compactionKeepsHeldBackStates() throws {
    let w = try JournalWriter(path: path)
    try w.record(state("m/a", 1))
    try w.record(state("m/a", 2), flush: false)
    try w.compact()
    try w.flush()
    let c = try JournalReader.read(path: path)
    #expect(c.records == 1)
    #expect(c.tasks["m/a"]?.lastBytes == 2)
  }
}
