import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
// libFuzzer entry point over what syncfiles reads from response headers:
// header lookup, Content-Range, HTTP dates (Last-Modified, Date,
// Retry-After) and the validators built from them. Built by
// `Fuzz/run.sh SECONDS headers` without libcurl.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  let lines = text.split(separator: "\n").map { String($0) + "\r\n" }
  let etag = headerValue("ETag", in: lines)
  let lastModified = headerValue("Last-Modified", in: lines)
  let date = headerValue("Date", in: lines)
  // The engine's one-pass fields must read what headerValue reads.
  var fields = ResponseFields()
  for line in lines { Array(line.utf8).withUnsafeBytes { fields.take($0) } }
  for name in ResponseFields.Name.allCases {
    let text = name.text.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    if fields[name] != headerValue(text, in: lines) {
      fatalError("ResponseFields and headerValue disagree on \(text)")
    }
  }
  for line in lines { _ = Array(line.utf8).withUnsafeBytes { statusLineCode($0) } }
  let v = Validators(etag: etag, lastModified: lastModified, date: date)
  _ = v.ifRange
  _ = v.hasWeakDate
  if let range = headerValue("Content-Range", in: lines).flatMap(ContentRange.parse) {
    guard range.start >= 0, range.end.map({ $0 >= range.start }) ?? true else {
      fatalError("Content-Range parsed into an impossible range: \(range)")
    }
  }
  for value in [lastModified, date, headerValue("Retry-After", in: lines)].compactMap({ $0 }) {
    if let t = HTTPDate.parse(value), HTTPDate.parse(HTTPDate.format(t)) != t {
      fatalError("an HTTP date does not survive formatting: \(value)")
    }
    if let wait = HTTPDate.retryAfter(value, now: Timestamp(seconds: 1_800_000_000)), wait < 0 {
      fatalError("Retry-After gave a negative wait: \(value)")
    }
  }
  return 0
}
