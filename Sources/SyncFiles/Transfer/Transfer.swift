internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// Per-transfer state, confined to the engine thread once handed to it (a
/// first request may be set up by the thread that starts the transfer).
final class Transfer {
  let spec: TransferSpec
  let done: @Sendable (TransferResult) -> Void
  unowned let engine: TransferEngine
  var easy: EasyRequest?
  var hops = 0
  var partial: PartialFile?
  var status = 0
  /// The fields the engine reads of the current response's headers.
  var fields = ResponseFields()
  var decided = false
  var writing = false
  /// The first bytes of an error status's body, for a source that reads it.
  var errorBody: [UInt8] = []
  static let errorBodyLimit = 16 << 10
  var received: Int64 = 0
  var resumedFrom: Int64 = 0
  var head: ResponseHead?
  var failure: TransferOutcome?
  var validators: Validators?
  var rangeTotal: Int64?
  var retryAfter: Int64?
  /// The final response came over HTTP/1.x (where a body may end at the close).
  var http1 = false
  /// The URL of the current request (after redirects).
  var url = ""
  var notes: [String] = []
  // One range of a segmented transfer (SPEC §8.3):
  var group: SegmentGroup?
  /// `Range` and `If-Range` lines (nil: the lead, or one stream).
  var rangeHeaders: [String]?
  /// A fresh transfer of an entry that asks for ranges asks for its first
  /// piece only, up to this offset: its answer shows whether ranges work
  /// and the whole size, and no request runs past a byte another range owns.
  var firstPiece: Int64?
  /// The first piece cannot be continued by ranges (no strong validator):
  /// the whole file is asked for again, by the same transfer.
  var askWhole = false
  /// This whole body was handed over to ranges before a byte was written (`SegmentGroup.handOver`).
  var handedOver = false
  /// Body bytes that arrived and were not written.
  var discarded: Int64 = 0
  var rangeStart: Int64 = 0
  /// Where this range stops writing (moved down when another steals its tail).
  var rangeEnd: Int64 = 0
  /// What the request asked the server to send up to.
  var requestEnd: Int64 = 0
  var written: Int64 = 0
  /// Where the journal last heard this range had reached (`SegmentGroup.journal`).
  var claimed: Int64 = 0
  var reachedEnd = false
  /// A range answered with the whole file before any range was confirmed,
  /// or a mirror's range that disagreed.
  var declined = false
  /// Which of its group's sources this range asks (0: the first server).
  var source = 0
  var next: Int64 { rangeStart + written }
  /// When the body held in memory began (its partial `isHeld`).
  var heldSince = 0.0
  /// The largest body held in memory: what the hasher hashes inline.
  static let holdLimit = SHA256Hasher.defaultInlineLimit
  /// How long a body is held before it is written out: a kill loses no more
  /// than this much of a slow body's progress.
  static let holdSeconds = 0.1

  init(spec: TransferSpec, done: @escaping @Sendable (TransferResult) -> Void, engine: TransferEngine) {
    self.spec = spec
    self.done = done
    self.engine = engine
    partial = spec.partial
  }

  func reset(easy: EasyRequest, hops: Int) {
    self.easy = easy
    self.hops = hops
    status = 0
    fields.removeAll()
    decided = false
    writing = false
    errorBody.removeAll()
  }

  func result(_ outcome: TransferOutcome) -> TransferResult {
    if let p = partial, p.isHeld, p.size > 0, outcome.keepsPartial {
      // Bytes a later try or run may resume from: in a file, journaled.
      do { try writeOut(p) } catch { p.discard() }
    }
    var r = TransferResult(
      id: spec.id, outcome: outcome, status: status, received: received + discarded, resumedFrom: resumedFrom,
      head: head, validators: validators, partial: partial, hasher: spec.hasher, notes: notes)
    r.discarded = discarded
    r.errorBody = errorBody
    return r
  }

  func header(_ name: ResponseFields.Name) -> String? { fields[name] }

  /// The version this response is of. An object store's ETag names one
  /// upload of the object (S3: the MD5 of a single-part body), whatever its
  /// date: a Last-Modified within a second of the answer must not make it
  /// untrusted, as it does for a web server's ETag made of a file's time and size.
  private func responseValidators() -> Validators {
    if spec.signing != nil { return Validators(etag: header(.etag), lastModified: nil, date: nil) }
    return Validators(etag: header(.etag), lastModified: header(.lastModified), date: header(.date))
  }

  /// The final response's headers are in: decide what its body is for
  /// (`ResponseVerdict` says what the answer means). Returns false to abort
  /// the transfer (`failure` says why).
  func decide() -> Bool {
    decided = true
    if !spec.isFile { validators = responseValidators() }
    if let ra = header(.retryAfter) { retryAfter = HTTPDate.retryAfter(ra) }
    let contentRange = header(.contentRange).flatMap(ContentRange.parse)
    if status == 416 { rangeTotal = contentRange?.total }
    let answer = ResponseVerdict.Answer(
      status: status, contentRange: contentRange, contentLength: header(.contentLength).flatMap { Int64($0) },
      contentEncoding: header(.contentEncoding), validators: validators)
    switch ResponseVerdict.of(answer, to: asked()) {
    case .noBody:
      return true  // 3xx, 304, 416, errors: the body is not the file; it is dropped.
    case .refuse(let e):
      failure = .failed(e)
      return false
    case .restart(let why):
      failure = .restart(why)
      return false
    case .range(let a):
      writing = group?.decide(self, a) ?? false
      return writing
    case .firstPiece(let total, let end):
      guard startFirstPiece(end: end) else { return false }
      return begin(offset: 0, total: total, length: answer.contentLength, restarted: false)
    case .continues(let start, let total):
      return begin(offset: start, total: total, length: answer.contentLength, restarted: false)
    case .whole(let length):
      do {
        let restarted = try startWholeBody(length: length)
        return begin(offset: 0, total: length, length: length, restarted: restarted)
      } catch {
        failure = .failed(.partialFile(error))
        return false
      }
    }
  }

  /// What this request asked for, for `ResponseVerdict`.
  private func asked() -> ResponseVerdict.Request {
    let asked: ResponseVerdict.Asked
    if let g = group, rangeHeaders != nil {
      asked = .range(start: rangeStart, total: g.total, ifRange: g.ifRange)
    } else if firstPiece != nil && (partial?.size ?? 0) == 0 {
      asked = .firstPiece
    } else {
      asked = .stream(partial: partial?.size, ifRange: spec.request.ifRange)
    }
    return ResponseVerdict.Request(
      asked: asked, isFile: spec.isFile, signed: spec.signing != nil, maxBytes: spec.maxBytes)
  }

  /// The body is the file's bytes from `offset`: its head is journaled, and
  /// a whole body may still become ranges. False: it is not written here.
  private func begin(offset: Int64, total: Int64?, length: Int64?, restarted: Bool) -> Bool {
    resumedFrom = offset
    var h = ResponseHead(
      status: status, validators: validators ?? Validators(etag: nil, lastModified: nil, dateIsStrong: false),
      totalBytes: total, offset: offset, restarted: restarted)
    let chunked = header(.transferEncoding)?.lowercased().contains("chunked") ?? false
    h.lengthUnknown = !spec.isFile && http1 && length == nil && !chunked
    if status == 200 { h.storeSHA256 = header(.checksumSHA256) }
    head = h
    // A held body is journaled when it is written out, if it ever is before its install.
    if partial?.isHeld != true { spec.onBody(h) }
    writing = true
    if !h.lengthUnknown && offset == 0 { engine.considerSegments(self, total: total) }
    if status == 200 && firstPiece != nil {
      notes.append("segments: the server answered a range request with the whole file; fetched as one stream")
    }
    // Handed over to ranges (`SegmentGroup.handOver`), or to be asked for
    // whole: this body is not written.
    return failure == nil && !handedOver && !askWhole
  }

  /// The first piece answered 206: a new partial, and the piece ends at
  /// `end`. False, with `failure` set, when the partial cannot be made.
  func startFirstPiece(end: Int64) -> Bool {
    do {
      if partial == nil { partial = try PartialFile(root: spec.root, relative: spec.relative, resume: false) }
    } catch {
      failure = .failed(.partialFile(error))
      return false
    }
    firstPiece = end
    return true
  }

  /// A whole body (not a resume): what the partial held, if anything, is of
  /// no use now (true: bytes were dropped). With no partial yet, a small
  /// body of known length is held in memory until it completes, unless a
  /// verifier must read its file.
  func startWholeBody(length: Int64?) throws(InstallError) -> Bool {
    if let p = partial {
      guard p.size > 0 else { return false }
      spec.onDrop?()
      try p.truncate()
      spec.hasher.reset()
      return true
    }
    if spec.mayHoldBody, !spec.isFile, status == 200, let length, length <= Self.holdLimit {
      partial = try PartialFile(holding: spec.root, relative: spec.relative, capacity: Int(length))
      heldSince = monotonicSeconds()
    } else {
      partial = try PartialFile(root: spec.root, relative: spec.relative, resume: false)
    }
    return false
  }

  /// A held body goes to its file: journaled first, as every partial is
  /// before it holds a byte of its version. Its bytes are hashed now, ahead
  /// of those written after them.
  func writeOut(_ p: PartialFile) throws(InstallError) {
    if let head { spec.onBody(head) }
    p.hashHeld(into: spec.hasher)
    try p.materialize()
  }

  /// Body bytes: counted, capped by max_bytes, hashed and appended to the partial.
  func write(_ buffer: UnsafeRawBufferPointer) -> Bool {
    if !decided && !decide() {
      if handedOver, let g = group { g.discard(buffer.count) } else { discarded += Int64(buffer.count) }
      return false
    }
    guard writing else {
      if status >= 400 && errorBody.count < Self.errorBodyLimit {
        errorBody.append(contentsOf: buffer.prefix(Self.errorBodyLimit - errorBody.count))
      }
      return true
    }
    if let g = group { return g.write(self, buffer) }
    guard let p = partial else {
      failure = .failed(.engine("a body arrived without a partial file"))
      return false
    }
    guard engine.admit(buffer.count, self) else { return false }
    if let max = spec.maxBytes, p.size + Int64(buffer.count) > max {
      failure = .failed(.tooLarge(limit: max, announced: nil))
      return false
    }
    let at = p.size
    do {
      if p.isHeld && (at + Int64(buffer.count) > Self.holdLimit || monotonicSeconds() - heldSince > Self.holdSeconds) {
        try writeOut(p)
      }
      try p.write(buffer)
    } catch {
      failure = .failed(.partialFile(error))
      return false
    }
    // Held bytes are hashed when verified or written out (`PartialFile.hashHeld`).
    if !p.isHeld { spec.hasher.update(buffer, writtenAt: at, in: p.reader) }
    received += Int64(buffer.count)
    engine.count(buffer.count)
    return true
  }
}

let transferHeaderCallback: sf_curl_data_cb = { ptr, size, count, userdata in
  let n = size * count
  guard let ptr, let userdata else { return n }
  let t = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
  let line = UnsafeRawBufferPointer(start: ptr, count: n)
  if let code = statusLineCode(line) {
    t.fields.removeAll()
    t.status = code
    t.http1 = n >= 6 && line[5] == UInt8(ascii: "1")
    t.decided = false
  } else if (n == 2 && line[0] == 0x0D && line[1] == 0x0A) || (n == 1 && line[0] == 0x0A) {
    // End of a response's headers; 1xx responses are interim.
    if t.status >= 200 && !t.decided && !t.decide() { return 0 }
  } else {
    t.fields.take(line)
  }
  return n
}

let transferWriteCallback: sf_curl_data_cb = { ptr, size, count, userdata in
  let n = size * count
  guard let ptr, let userdata else { return n }
  let t = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
  let buffer = UnsafeRawBufferPointer(start: ptr, count: n)
  if t.write(buffer) { return n }
  // Not admitted under the rate cap: pause; libcurl delivers the same bytes again later.
  return t.failure == nil && t.writing && !t.reachedEnd ? sf_writefunc_pause : 0
}
