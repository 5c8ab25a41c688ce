internal import CLinux
import SyncFilesCore
import SyncFilesManifest

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The journal: one append-only file of records, each one line
/// `LENGTH CRC32 JSON\n` after a header line `syncfiles-journal 1`.
/// A record holds the whole latest state of one task, so the last record
/// of a task wins and compaction keeps one record per task.
///
/// A torn or damaged line (bad length, bad checksum, no newline at the end)
/// is skipped when reading; a writer first cuts a torn tail off.
public enum JournalFormat {
  public static let header = "syncfiles-journal 1\n"

  /// The encoded line for one task's record.
  package static func line(_ state: TaskState) -> [UInt8] {
    var out: [UInt8] = []
    var scratch = RecordScratch()
    appendLine(state, to: &out, scratch: &scratch)
    return out
  }

  /// The encoded line for one record.
  package static func line(_ payload: JSONValue) -> [UInt8] {
    var out: [UInt8] = []
    payload.bytes().withUnsafeBufferPointer { appendLine(body: $0, to: &out) }
    return out
  }

  /// Appends the line of `state`'s record to `out`. The record is written
  /// into `scratch` first, whose room is kept from one record to the next:
  /// a line costs no allocation of its own and one copy (a steady run
  /// writes one for every task).
  package static func appendLine(_ state: TaskState, to out: inout [UInt8], scratch: inout RecordScratch) {
    guard state.hasCursorRecord else {
      return state.recordBytes().withUnsafeBufferPointer { appendLine(body: $0, to: &out) }
    }
    let room = state.recordRoom
    if scratch.room.count < room { scratch.room = [UInt8](repeating: 0, count: max(room, 2 * scratch.room.count)) }
    scratch.room.withUnsafeMutableBufferPointer { b in
      let n = state.writeRecord(into: b, times: &scratch.times)
      appendLine(body: UnsafeBufferPointer(rebasing: b[..<n]), to: &out)
    }
  }

  /// Appends `LENGTH CRC32 BODY\n`.
  private static func appendLine(body: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
    let crc = CRC32.checksum(UnsafeRawBufferPointer(body))
    JSONValue.writeInt(Int64(body.count), to: &out)
    out.append(0x20)
    Hex.append(UInt64(crc), digits: 8, to: &out)
    out.append(0x20)
    out.append(contentsOf: body)
    out.append(0x0A)
  }

  public struct Contents: Sendable {
    public var tasks: [String: TaskState] = [:]
    /// The last complete listing of each prefix entry, by the entry's `name/id`.
    public var listings: [String: PrefixListing] = [:]
    /// Records that could not be read (torn tail, damage), skipped.
    public var dropped = 0
    /// Of those, lines with good records after them: damage inside the
    /// file, not a write cut short at its end.
    public var damagedInside = 0
    /// Lines after the last good record: a write cut short (a crash, a full disk).
    public var tornTail: Int { dropped - damagedInside }
    /// The first line was not the header, but records after it checked out.
    public var headerDamaged = false
    /// Records read, including superseded ones.
    public var records = 0
    /// Bytes up to the end of the last good line (where a writer appends).
    public var validLength = 0
  }
}
