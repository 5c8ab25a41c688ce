import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
// libFuzzer entry point over the journal reader: framing (length, CRC-32),
// the JSON parser and the task records, including a damaged header. Built by
// Fuzz/run.sh journal together with the journal's sources.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  // The input as one record's body: what the fast reader takes, the JSON tree takes as the same state.
  if let fast = bytes.withUnsafeBufferPointer(TaskState.fastRecord) {
    guard let v = try? JSONValue.parse(bytes: bytes[...]), TaskState(json: v) == fast else {
      fatalError("the fast record reader took what the JSON reader reads otherwise")
    }
  }
  guard let c = JournalFormat.decode(bytes) else { return 0 }
  // What the CLI does with what it read: the note, and each record written back.
  _ = c.damageNote(path: "/fuzz/journal", rewritten: false)
  for (id, t) in c.tasks {
    guard t.recordBytes() == t.json.bytes() else { fatalError("record \(id) written two ways differs") }
    let line = JournalFormat.line(t)
    // A record read back from its own line is the same record.
    guard let again = JournalFormat.decode(Array(JournalFormat.header.utf8) + line), again.tasks[id] == t else {
      fatalError("record \(id) does not survive a round trip")
    }
  }
  return 0
}
