import SyncFilesCore
import SyncFilesManifest

#if canImport(Glibc)
  import Glibc
#endif

/// Task records written and read as bytes, without a JSON tree in between
/// (a steady run reads every record of the journal and writes one
/// per task). `TaskState.json` and `TaskState(json:)` stay the definition:
/// the writer here makes the same bytes as `json.bytes()`, and the reader
/// (`RecordReading.swift`)
/// takes only the shape that writer makes (its keys in its order, its value
/// types, no white space, no `\u` escape, no segmented ranges). Anything
/// else returns nil, and the general JSON parser reads the record.
extension TaskState {
  /// The record, byte for byte as `json.bytes()` writes it, written
  /// through a cursor into room sized for it beforehand.
  package func recordBytes() -> [UInt8] {
    if !hasCursorRecord { return json.bytes() }
    var times = RFC3339Text()
    return [UInt8](unsafeUninitializedCapacity: recordRoom) { room, count in
      count = writeRecord(into: room, times: &times)
    }
  }

  /// Whether `writeRecord` writes this state's record (all but a segmented
  /// partial's, which rare records take through the tree).
  package var hasCursorRecord: Bool { partial?.ranges == nil }

  /// Writes the record into `room`, at least `recordRoom` bytes, and gives
  /// its length. Only where `hasCursorRecord`. `times` keeps the text of the
  /// last time written, for the next record's.
  func writeRecord(into room: UnsafeMutableBufferPointer<UInt8>, times: inout RFC3339Text) -> Int {
    var w = RecordWriter(out: ByteCursor(room), times: times)
    defer { times = w.times }
    w.out.put(Self.recordStart)
    JSONValue.writeString(id, to: &w.out)
    w.string(.fingerprint, fingerprint)
    w.time(.lastCheck, lastCheck)
    w.time(.lastSuccess, lastSuccess)
    w.string(.outcome, lastOutcome?.rawValue)
    w.string(.error, lastError)
    w.int(.bytes, lastBytes)
    w.int(.httpStatus, httpStatus.map { Int64($0) })
    if let i = installed {
      typealias K = RecordKey.Installed
      w.open(.installed, first: K.size.name)
      JSONValue.writeInt(i.size, to: &w.out)
      w.int(K.mtimeNs.name, i.mtimeNs)
      w.string(K.etag.name, i.etag)
      w.string(K.lastModified.name, i.lastModified)
      w.string(K.sha256.name, i.sha256)
      w.flag(K.dateIsStrong.name, i.dateIsStrong)
      w.out.put(UInt8(ascii: "}"))
    }
    if let p = partial {
      typealias K = RecordKey.Partial
      w.open(.partial, first: K.path.name)
      JSONValue.writeString(p.path, to: &w.out)
      w.int(K.offset.name, p.offset)
      w.int(K.total.name, p.totalBytes)
      w.string(K.etag.name, p.etag)
      w.string(K.lastModified.name, p.lastModified)
      w.flag(K.dateIsStrong.name, p.dateIsStrong)
      w.out.put(UInt8(ascii: "}"))
    }
    w.int(.failures, failures > 0 ? Int64(failures) : nil)
    w.time(.backoffUntil, backoffUntil)
    w.flag(.onChangePending, changeHookPending)
    w.flag(.onCompletePending, completeHookPending)
    w.time(.rolledBack, rolledBack)
    w.out.put(UInt8(ascii: "}"))
    return w.out.count
  }

  /// Room for any record `recordBytes` writes: its keys and punctuation (under
  /// 400 bytes), each string escaped at worst (six bytes for one: `\u0001`)
  /// and quoted, 21 bytes for each number and 40 for each time.
  var recordRoom: Int {
    func room(_ s: String?) -> Int { 6 * (s?.utf8.count ?? 0) + 2 }
    let strings =
      room(id) + room(fingerprint) + room(lastOutcome?.rawValue) + room(lastError) + room(installed?.etag)
      + room(installed?.lastModified) + room(installed?.sha256) + room(partial?.path) + room(partial?.etag)
      + room(partial?.lastModified)
    return 512 + strings + 8 * 21 + 4 * 40
  }

  /// How every record the writer makes begins; its id follows.
  static let recordStart: StaticString = #"{"t":"task","id":"#
}

/// What a journal writer keeps from one record to the next: the room a
/// record is written into, and the text of the last time written.
package struct RecordScratch {
  package var room: [UInt8] = []
  package var times = RFC3339Text()
}

/// The RFC 3339 text of the last time written, kept to be copied again: the
/// records of one run mostly share the second of their check and success
/// (a steady run writes two times for each of thousands of tasks).
package struct RFC3339Text {
  private var seconds: Int64?
  /// Its 20 bytes (`2026-11-22T03:00:00Z`) and 4 spare.
  private var text: (UInt64, UInt64, UInt64) = (0, 0, 0)

  /// Appends `t` as `Timestamp.appendRFC3339` does.
  package mutating func append(_ t: Timestamp, to out: inout ByteCursor) {
    // Kept only for 1970-01-01 to 9999-12-31, whose texts are 20 bytes.
    guard (0...253_402_300_799).contains(t.seconds) else { return t.appendRFC3339(to: &out) }
    if seconds != t.seconds {
      withUnsafeMutableBytes(of: &text) { b in
        var c = ByteCursor(b.bindMemory(to: UInt8.self))
        t.appendRFC3339(to: &c)
      }
      seconds = t.seconds
    }
    withUnsafeBytes(of: &text) { out.put(UnsafeBufferPointer(rebasing: $0.bindMemory(to: UInt8.self)[..<20])) }
  }
}

/// Appends `,"key":value` for the values that are present.
private struct RecordWriter {
  package var out: ByteCursor
  package var times: RFC3339Text

  /// `,"key":{"first":`: a nested object opened, its first key named.
  mutating func open(_ k: RecordKey.Task, first: StaticString) {
    name(k.name)
    out.put(UInt8(ascii: "{"))
    out.put(UInt8(ascii: "\""))
    out.put(first)
    out.put(UInt8(ascii: "\""))
    out.put(UInt8(ascii: ":"))
  }

  package mutating func time(_ k: RecordKey.Task, _ v: Timestamp?) { time(k.name, v) }
  mutating func string(_ k: RecordKey.Task, _ v: String?) { string(k.name, v) }
  mutating func int(_ k: RecordKey.Task, _ v: Int64?) { int(k.name, v) }
  mutating func flag(_ k: RecordKey.Task, _ v: Bool) { flag(k.name, v) }

  mutating func name(_ k: StaticString) {
    out.put(UInt8(ascii: ","))
    out.put(UInt8(ascii: "\""))
    out.put(k)
    out.put(UInt8(ascii: "\""))
    out.put(UInt8(ascii: ":"))
  }

  /// A time as `json` writes it: its RFC 3339 text, which never needs an escape.
  mutating func time(_ k: StaticString, _ v: Timestamp?) {
    guard let v else { return }
    name(k)
    out.put(UInt8(ascii: "\""))
    times.append(v, to: &out)
    out.put(UInt8(ascii: "\""))
  }

  mutating func string(_ k: StaticString, _ v: String?) {
    guard let v else { return }
    name(k)
    JSONValue.writeString(v, to: &out)
  }

  mutating func int(_ k: StaticString, _ v: Int64?) {
    guard let v else { return }
    name(k)
    JSONValue.writeInt(v, to: &out)
  }

  /// Written only when true, as `json` does.
  mutating func flag(_ k: StaticString, _ v: Bool) {
    guard v else { return }
    name(k)
    out.put("true")
  }
}
