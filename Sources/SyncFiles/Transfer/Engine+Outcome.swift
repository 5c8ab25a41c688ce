internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

// How a transfer ended: libcurl's code and the status, as a `TransferOutcome`.
extension TransferEngine {
  /// Takes a transfer off libcurl without reporting it (a segmented
  /// transfer's group reports the file once).
  func detach(_ t: Transfer) {
    guard let easy = t.easy else { return }
    multi.remove(easy)
    active[easy.handle] = nil
    paused.removeAll { $0.transfer === t }
    t.easy = nil
    // Reset by whoever takes it next (`takeHandle`), most often the runner's thread.
    retired.append((easy, t))
  }

  func finish(_ t: Transfer, _ outcome: TransferOutcome) {
    if let g = t.group { return g.finish(outcome) }
    detach(t)
    results.append((t.done, t.result(outcome)))
  }

  func deliver() {
    if !retired.isEmpty {
      lock.locked { spare.append(contentsOf: retired) }
      retired.removeAll()
    }
    let batch = results
    results.removeAll()
    for (done, r) in batch { done(r) }
  }

  func completed(_ t: Transfer, code: CURLcode) {
    guard let easy = t.easy else { return }
    if let g = t.group {
      let outcome = rangeOutcome(t, code: code, easy: easy)
      detach(t)
      return g.ended(t, outcome: outcome)
    }
    let status = easy.info(CURLINFO_RESPONSE_CODE)
    t.status = status
    if let verbose, !t.spec.isFile,
      let line = sharing.note(host: t.spec.host, version: easy.info(CURLINFO_HTTP_VERSION), perHost: admission.perHost)
    {
      verbose("\(t.spec.id): \(line)")
    }
    let redirect = easy.infoString(CURLINFO_REDIRECT_URL)
    let unmet = easy.info(CURLINFO_CONDITION_UNMET)
    let fileTime = easy.infoOff(CURLINFO_FILETIME_T)
    if t.spec.isFile && fileTime >= 0 {
      // A local file's time is as strong as it is old: the same rule, with now as the date.
      let lm = HTTPDate.format(Timestamp(seconds: fileTime))
      t.validators = Validators(etag: nil, lastModified: lm, date: HTTPDate.format(Timestamp.current()))
    }
    if let failure = t.failure { return finish(t, failure) }
    if t.askWhole {
      // The first piece could not be continued as ranges: ask for the whole file.
      t.askWhole = false
      t.firstPiece = nil
      detach(t)
      return begin(t, url: t.url, hops: t.hops)
    }
    if code != CURLE_OK { return finish(t, CurlFailure.outcome(code: code, easy: easy)) }
    if t.spec.isFile {
      return finish(t, unmet != 0 ? .notModified : .complete)
    }
    finish(t, status: status, redirect: redirect)
  }

  /// An HTTP transfer that ended cleanly, by its final status
  /// (`ResponseVerdict.ended`): the file, not modified, a redirect to
  /// follow, or an answer that fails the try.
  func finish(_ t: Transfer, status: Int, redirect: String?) {
    if let outcome = ResponseVerdict.ended(
      status: status, conditional: t.spec.request.isConditional, rangeTotal: t.rangeTotal, retryAfter: t.retryAfter)
    {
      return finish(t, outcome)
    }
    switch Redirect.decide(status: status, location: redirect, hops: t.hops) {
    case .follow(let next)?:
      detach(t)
      begin(t, url: next, hops: t.hops + 1)
    case .refuse(let why)?:
      finish(t, .failed(.unusableAnswer(why, retryable: false)))
    case nil:
      finish(t, .failed(.unusableAnswer("unexpected HTTP status \(status)", retryable: false)))
    }
  }

  /// How one range of a segmented transfer ended.
  func rangeOutcome(_ t: Transfer, code: CURLcode, easy: EasyRequest) -> TransferOutcome {
    if t.reachedEnd { return .complete }
    if let failure = t.failure { return failure }
    if code != CURLE_OK { return CurlFailure.outcome(code: code, easy: easy) }
    return ResponseVerdict.rangeEnded(status: easy.info(CURLINFO_RESPONSE_CODE), retryAfter: t.retryAfter)
  }
}
