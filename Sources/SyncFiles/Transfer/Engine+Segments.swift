internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

// Whether a transfer becomes ranges: the bounded first piece, and a whole body handed over.
extension TransferEngine {
  /// Where the first request of a fresh transfer stops, when its entry asks
  /// for ranges (`segments: 2` or more): its piece is bounded, so it never
  /// runs into a piece another range asks for. Nil: the whole file.
  func firstPiece(_ s: TransferSpec) -> Int64? {
    guard (s.segments ?? 1) > 1, rangeCap > 1, !s.isFile, s.held == nil, (s.partial?.size ?? 0) == 0,
      s.request.ifRange == nil
    else { return nil }
    return SegmentGroup.minimumSplit
  }

  /// A whole body is about to begin (in a callback): fetch it in ranges
  /// instead when the file is large enough, the version strong and ranges
  /// offered; the body is then not written (`SegmentGroup.handOver`).
  func considerSegments(_ t: Transfer, total: Int64?) {
    let s = t.spec
    guard s.segments != 1, !s.isFile, s.held == nil, let p = t.partial, let total else { return }
    // The first piece answered 206: the ranges go on from its end.
    if t.status == 206, let end = t.firstPiece { return continueFirstPiece(t, end: end, total: total, partial: p) }
    guard t.status == 200, t.firstPiece == nil else { return }
    let n = min(s.segments ?? SegmentPolicy.forSize(total), rangeCap)
    guard n > 1 else { return }
    let asked = s.segments.map { "segments: \($0) asked; fetched as one stream: " }
    let offersRanges = t.header(.acceptRanges)?.lowercased().contains("bytes") ?? false
    guard let v = t.validators, let ifRange = v.ifRange, offersRanges, total >= 2 * SegmentGroup.minimumSplit else {
      if let asked {
        let why =
          !offersRanges
          ? "the server does not offer byte ranges (no Accept-Ranges: bytes)"
          : t.validators?.ifRange == nil
            ? "no strong validator (ETag, or a strong Last-Modified) to keep the ranges of one version"
            : "the file is smaller than two ranges of \(ByteSize.format(SegmentGroup.minimumSplit))"
        t.notes.append(asked + why)
      }
      return
    }
    let size = ByteRanges.pieceSize(total: total, ranges: n, minimum: SegmentGroup.minimumSplit)
    let parts = ByteRanges.pieces([0..<total], size: size)
    let g = SegmentGroup(
      engine: self, spec: s, done: t.done, partial: p, total: total, validators: v, ifRange: ifRange,
      url: t.url, held: ByteRanges(), hashed: 0, wanted: min(n, parts.count), confirmed: false)
    if let failure = g.prepare(missing: parts) {
      t.failure = failure
      return
    }
    g.handOver(from: t)
    groups.append(g)
  }

  /// The first piece answered 206 and the file is larger: the pieces after
  /// it as ranges of one version, or the whole file once more when no
  /// strong validator names one.
  func continueFirstPiece(_ t: Transfer, end: Int64, total: Int64, partial p: PartialFile) {
    let s = t.spec
    guard end < total else { return }  // the first piece is the whole file
    guard let v = t.validators, let ifRange = v.ifRange else {
      t.askWhole = true
      t.notes.append(
        "segments: \(s.segments ?? 1) asked; fetched as one stream: no strong validator (ETag, or a strong Last-Modified) to keep the ranges of one version"
      )
      return
    }
    let n = min(s.segments ?? 1, rangeCap)
    let size = ByteRanges.pieceSize(total: total, ranges: n, minimum: SegmentGroup.minimumSplit)
    let parts = ByteRanges.pieces([end..<total], size: size)
    let g = SegmentGroup(
      engine: self, spec: s, done: t.done, partial: p, total: total, validators: v, ifRange: ifRange,
      url: t.url, held: ByteRanges(), hashed: 0, wanted: min(n, parts.count + 1), confirmed: true)
    if let failure = g.prepare(missing: parts) {
      t.failure = failure
      return
    }
    g.adopt(first: t, end: end)
    groups.append(g)
  }
}
