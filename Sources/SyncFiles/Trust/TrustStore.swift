import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// Why a file's lists and signatures do not vouch for it (SPEC §10.2).
enum TrustFailure: Error, Sendable {
  /// A list or signature could not be fetched, after the entry's retries.
  case fetch(url: String, why: String)
  /// A check ran and failed; `what` names the list or signature when the error does not.
  case rejected(VerifyError, what: String?)
  /// The run stopped before the list or signature arrived.
  case stopped(url: String)

  var message: String {
    switch self {
    case .fetch(let url, let why): return "cannot fetch \(url): \(why)"
    case .rejected(let e, let what?): return "\(what): \(e.message)"
    case .rejected(let e, nil): return e.message
    case .stopped(let url): return "the run stopped before \(url) arrived"
    }
  }
}

/// One run's checksum lists and signatures: each url fetched once, by a few
/// threads of its own while the files transfer, and each signed list
/// verified once from its bytes. Copies are kept in `folder` (beside the
/// journal) for the next run's conditional requests.
final class TrustStore: Sendable {
  let folder: String?
  let environment: NetworkEnvironment
  let verbose: (@Sendable (String) -> Void)?
  /// Fetches running at once.
  static let workers = 4

  private enum Slot: Sendable {
    case queued(TrustFetch)
    case running
    case done(Result<TrustFetch.Fetched, TrustFailure>)
  }
  private struct State: Sendable {
    var slots: [String: Slot] = [:]
    var queue: [String] = []
    var workers = 0
    var requests = 0
    /// Called once a url's fetch is done.
    var waiters: [String: [@Sendable () -> Void]] = [:]
    var stopping = false
  }
  private let state = Locked(State())
  /// Verified lists (the signed content) by list, signature and keyring; the run thread only.
  private let lists = Locked<[String: Result<VerifiedList, TrustFailure>]>([:])

  struct VerifiedList: Sendable {
    var content: [UInt8]
    /// "signed by …", "clearsigned by …", or "unsigned".
    var how: String
  }

  init(folder: String?, environment: NetworkEnvironment, verbose: (@Sendable (String) -> Void)?) {
    self.folder = folder
    self.environment = environment
    self.verbose = verbose
  }

  /// Requests made for lists and signatures in this run.
  var requests: Int { state.withLock { $0.requests } }

  /// Starts fetching `f` unless this run already has.
  func want(_ f: TrustFetch) {
    let start = state.withLock { s -> Bool in
      guard s.slots[f.url] == nil else { return false }
      s.slots[f.url] = .queued(f)
      s.queue.append(f.url)
      guard s.workers < Self.workers else { return false }
      s.workers += 1
      return true
    }
    if start { startThread { [self] in work() } }
  }

  /// The first of `fetches` not yet done, if any.
  func pending(_ fetches: [TrustFetch]) -> TrustFetch? {
    state.withLock { s in
      fetches.first { f in
        if case .done = s.slots[f.url] { return false } else { return true }
      }
    }
  }

  /// Calls `done` (on a thread of the store) once `f` is fetched, or at
  /// once when it already is. The run loop waits so, never blocking on a fetch.
  func whenFetched(_ f: TrustFetch, _ done: @escaping @Sendable () -> Void) {
    want(f)
    let now = state.withLock { s -> Bool in
      if case .done = s.slots[f.url] { return true }
      s.waiters[f.url, default: []].append(done)
      return false
    }
    if now { done() }
  }

  /// The run stops: fetches waiting out a backoff end at once.
  func stop() { state.update { $0.stopping = true } }

  /// Waits `seconds` for a retry, or less when the run stops; false then.
  private func pause(_ seconds: Double) -> Bool {
    let end = monotonicSeconds() + min(seconds, 3600)
    return state.wait(until: end, for: { $0.stopping }, then: { !$0.stopping })
  }

  /// The bytes of `f`, fetched once per run (waiting for a fetch in flight).
  func bytes(_ f: TrustFetch) -> Result<TrustFetch.Fetched, TrustFailure> {
    want(f)
    return state.wait(
      for: { if case .done = $0.slots[f.url] { return true } else { return false } },
      then: { s in
        guard case .done(let r) = s.slots[f.url] else { return .failure(.fetch(url: f.display, why: "not fetched")) }
        return r
      })
  }

  /// Waits for every fetch this run started (a list asked for by a task
  /// whose file did not change is still revalidated, and kept).
  func finish() {
    state.wait(for: { $0.workers == 0 }, then: { _ in })
  }

  private func work() {
    while true {
      let next = state.withLock { s -> TrustFetch? in
        while let url = s.queue.first {
          s.queue.removeFirst()
          if case .queued(let f) = s.slots[url] {
            s.slots[url] = .running
            return f
          }
        }
        s.workers -= 1
        return nil
      }
      guard let f = next else {
        state.update { _ in }  // wakes finish()
        return
      }
      let r = f.run(keptIn: folder, environment: environment, verbose: verbose, pause: pause)
      let waiting = state.update { s in
        s.slots[f.url] = .done(r)
        s.requests += (try? r.get())?.requests ?? 1
        return s.waiters.removeValue(forKey: f.url) ?? []
      }
      for w in waiting { w() }
    }
  }

  /// The list's content once its signature (if any) is checked, once per run.
  func verifiedList(key: String, _ make: () -> Result<VerifiedList, TrustFailure>) -> Result<
    VerifiedList, TrustFailure
  > {
    if let r = lists.withLock({ $0[key] }) { return r }
    let r = make()
    lists.withLock { $0[key] = r }
    return r
  }
}
