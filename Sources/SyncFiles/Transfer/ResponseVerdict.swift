import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// What an answer means for the file (SPEC §8.2, §8.3): the one home of the
/// rules that read a status, a `Content-Range` and the version an answer
/// names, for one stream, a resume, the first piece of ranges and a range.
/// Pure: the transfer (`Transfer.decide`), its segment group
/// (`SegmentGroup.decide`) and the engine's completion act on it.
enum ResponseVerdict: Equatable {
  /// The body is not the file (a redirect, 304, 416, an error status): it is
  /// dropped, and how the request ended says what the answer was.
  case noBody
  /// The whole file from byte 0 (what a partial held is dropped).
  case whole(length: Int64?)
  /// The rest of the partial, from `start`.
  case continues(start: Int64, total: Int64?)
  /// The first piece of a file fetched in ranges, up to `end`, of `total` bytes.
  case firstPiece(total: Int64, end: Int64)
  /// The answer to a range of a segmented transfer; its group decides what follows.
  case range(RangeAnswer)
  /// The answer's bytes cannot continue the partial: the file starts over.
  case restart(String)
  /// The answer can never be installed.
  case refuse(TransferError)

  enum RangeAnswer: Equatable {
    /// The bytes asked for, of the group's size and version.
    case asked
    /// The whole file instead; `sameVersion`: of the version the group's validator names.
    case whole(sameVersion: Bool)
    /// Other bytes, another size or another version, in words.
    case mismatch(String)
  }

  /// The headers of an answer that the verdict reads.
  struct Answer {
    var status: Int
    var contentRange: (start: Int64, end: Int64?, total: Int64?)?
    var contentLength: Int64? = nil
    var contentEncoding: String? = nil
    /// The version the answer names (nil for a local file).
    var validators: Validators? = nil
  }

  /// What the request asked for.
  enum Asked {
    /// The file, or the rest of a partial of `partial` bytes named by `ifRange`.
    case stream(partial: Int64?, ifRange: String?)
    /// The first piece of a file that may be fetched in ranges.
    case firstPiece
    /// The bytes from `start` of a file of `total` bytes, under `ifRange`.
    case range(start: Int64, total: Int64, ifRange: String)
  }

  /// What the request was sent with, beside what it asked for.
  struct Request {
    var asked: Asked
    /// A `file:` URL: no status, no headers, always the whole file.
    var isFile = false
    /// Signed for an object store, where `If-Match` names the version and
    /// a changed object answers 412.
    var signed = false
    var maxBytes: Int64? = nil
  }

  /// What the answer's headers mean, before a byte of its body.
  static func of(_ a: Answer, to r: Request) -> ResponseVerdict {
    if a.status == 412, r.signed, r.asked.namesAVersion {
      return .restart("the object changed since the partial was received (412 Precondition Failed to If-Match)")
    }
    guard r.isFile || a.status == 200 || a.status == 206 else { return .noBody }
    if !r.isFile, let encoding = a.contentEncoding, encoding.lowercased() != "identity" {
      // Checksums and the file are the bytes as stored: an encoded body is never installed (SPEC §8.2).
      return .refuse(
        .unusableAnswer(
          "the server sent the body with Content-Encoding: \(encoding) although syncfiles asked for identity; refused, nothing installed",
          retryable: false))
    }
    let verdict: ResponseVerdict
    switch r.asked {
    case .range(let start, let total, let ifRange):
      return .range(range(a, start: start, total: total, ifRange: ifRange))
    case .firstPiece:
      verdict = a.status == 206 ? firstPiece(a) : .whole(length: a.contentLength)
    case .stream(let partial, let ifRange):
      verdict = a.status == 206 ? resumed(a, partial: partial, ifRange: ifRange) : .whole(length: a.contentLength)
    }
    if let max = r.maxBytes, let total = verdict.total, total > max {
      return .refuse(.tooLarge(limit: max, announced: total))
    }
    return verdict
  }

  /// The size of the whole file, as the answer says.
  var total: Int64? {
    switch self {
    case .whole(let length): return length
    case .continues(_, let total): return total
    case .firstPiece(let total, _): return total
    default: return nil
    }
  }

  /// A 206 to a resume: it must continue the partial where it ends, under
  /// the version the partial was started with.
  private static func resumed(_ a: Answer, partial: Int64?, ifRange: String?) -> ResponseVerdict {
    guard let held = partial, let cr = a.contentRange else {
      return .restart("the server answered 206 without a usable Content-Range")
    }
    guard cr.start == held else { return .restart("the server resumed at byte \(cr.start) instead of \(held)") }
    // The server honoured If-Range, so a validator it left out counts as the same.
    if let ifRange, let now = a.validators, !(now.names(ifRange: ifRange) ?? true) {
      return .restart("the server's version changed during a resume (If-Range was not honoured)")
    }
    return .continues(start: cr.start, total: cr.total)
  }

  /// The first piece answered 206: the whole size comes from `Content-Range`.
  private static func firstPiece(_ a: Answer) -> ResponseVerdict {
    guard let cr = a.contentRange, cr.start == 0, let whole = cr.total else {
      return .restart("the server answered the first piece without a usable Content-Range")
    }
    return .firstPiece(total: whole, end: min(whole, (cr.end ?? (whole - 1)) + 1))
  }

  /// A range other than the lead: the bytes asked for, of the same size and
  /// version; the whole file instead; or an answer that cannot be used.
  private static func range(_ a: Answer, start: Int64, total: Int64, ifRange: String) -> RangeAnswer {
    let named = a.validators?.names(ifRange: ifRange)
    guard a.status == 206 else { return .whole(sameVersion: named == true) }
    guard let cr = a.contentRange, cr.start == start, cr.total == total else {
      let said =
        a.contentRange.map { "bytes \($0.start)-…/\($0.total.map(String.init) ?? "*")" } ?? "no Content-Range"
      return .mismatch("the server answered the range from byte \(start) of \(total) with \(said)")
    }
    // A validator the answer left out counts as the same: it honoured If-Range.
    return named ?? true ? .asked : .mismatch("the server's version changed during a segmented transfer")
  }

  /// How a request ended that libcurl completed cleanly, by its final status.
  /// Nil: a redirect, which the engine follows or refuses (`Redirect`).
  static func ended(status: Int, conditional: Bool, rangeTotal: Int64?, retryAfter: Int64?) -> TransferOutcome? {
    switch status {
    case 200, 206: return .complete
    case 304 where !conditional:
      // Nothing was asked to be compared: such a 304 says nothing about the file (SPEC §8.2).
      return .failed(
        .unusableAnswer("the server answered 304 Not Modified to a request that was not conditional", retryable: true))
    case 304: return .notModified
    case 416: return .rangeNotSatisfiable(total: rangeTotal)
    case 300..<400: return nil
    case 400..<600: return .http(status: status, retryAfter: retryAfter)
    default: return .failed(.unusableAnswer("unexpected HTTP status \(status)", retryable: false))
    }
  }

  /// How one range of a segmented transfer ended, by its final status.
  static func rangeEnded(status: Int, retryAfter: Int64?) -> TransferOutcome {
    switch status {
    case 200, 206: return .complete
    case 400..<600: return .http(status: status, retryAfter: retryAfter)
    default: return .failed(.unusableAnswer("HTTP \(status) to a range request", retryable: false))
    }
  }
}

extension ResponseVerdict.Asked {
  /// The request named the version it wants (`If-Range`, or `If-Match` when signed).
  var namesAVersion: Bool {
    switch self {
    case .stream(_, let ifRange): return ifRange != nil
    case .firstPiece: return false
    case .range: return true
    }
  }
}
