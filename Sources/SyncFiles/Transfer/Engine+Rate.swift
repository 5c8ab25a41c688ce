internal import CCurl

// The aggregate rate cap: transfers paused and resumed by the `RateLimiter`.
extension TransferEngine {
  /// True when `n` more bytes fit under the cap now; false pauses the transfer.
  func admit(_ n: Int, _ t: Transfer) -> Bool {
    guard bucket != nil else { return true }
    if bucket!.take(n, now: monotonicSeconds()) { return true }
    paused.append(t)
    return false
  }

  /// Resumes paused transfers once the bucket has room (each may pause again at once).
  func unpause() {
    guard !paused.isEmpty else { return }
    let waiting = paused
    paused.removeAll()
    for t in waiting {
      guard let easy = t.easy else { continue }
      curl_easy_pause(easy.handle, sf_pause_cont)
    }
  }
}
