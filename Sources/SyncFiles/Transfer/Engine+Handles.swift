internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

// The handle pool: easy handles reused across requests, made ready on the caller's thread.
extension TransferEngine {
  /// A transfer with its first request set up, its slot freed when its
  /// result is handed on; nil when no handle is spare and `handleCap` are
  /// made (the engine sets it up when it begins: a caller that starts
  /// thousands at once does not make a handle for each).
  func prepared(_ spec: TransferSpec, _ done: @escaping @Sendable (TransferResult) -> Void) -> Transfer? {
    let shape = requestShape(spec, url: spec.url)
    guard let easy = takeSpare(for: shape) ?? newHandle(under: handleCap) else { return nil }
    let t = Transfer(spec: spec, done: releasing(done, host: spec.host), engine: self)
    t.firstPiece = firstPiece(spec)
    configure(t, easy: easy, url: spec.url, hops: 0, shape: shape)
    return t
  }

  /// A spare handle, made ready on the calling thread for a request of
  /// `shape`, if one is free.
  func takeSpare(for shape: RequestShape?) -> EasyRequest? {
    guard let (easy, last) = lock.locked({ spare.popLast() }) else { return nil }
    // Callbacks may fire while the handle is reset: its last transfer stays alive until after it.
    withExtendedLifetime(last) { easy.recycle(for: shape) }
    return easy
  }

  /// How the engine used its handles and its thread, said under `-v` when
  /// it ends (and read by the tests that hold it to reuse).
  var stats: EngineStats {
    lock.locked {
      EngineStats(
        handlesMade: made, handleResets: spare.reduce(0) { $0 + $1.easy.resets }, setUpByEngine: engineSetUps,
        startWakes: wakes)
    }
  }

  /// A spare handle, else a new one.
  func takeHandle(for shape: RequestShape?) -> EasyRequest? {
    takeSpare(for: shape) ?? newHandle(under: .max)
  }

  /// A new handle while fewer than `cap` were made; nil past it, or when libcurl cannot make one.
  func newHandle(under cap: Int) -> EasyRequest? {
    let reserved = lock.locked { () -> Bool in
      guard made < cap else { return false }
      made += 1
      return true
    }
    guard reserved else { return nil }
    guard let easy = EasyRequest() else {
      lock.locked { made -= 1 }
      return nil
    }
    return easy
  }
}

/// How an engine used its handles and its thread in its life.
struct EngineStats: Sendable, Hashable {
  /// Handles made: as many as ran at once, not one per request.
  var handlesMade: Int
  /// `curl_easy_reset` calls of the spare handles (all of them, when no
  /// transfer runs or waits): none between requests of one shape.
  var handleResets: Int
  /// Transfers the engine set up itself as they began, for want of a handle when handed over.
  var setUpByEngine: Int
  /// Wake-ups `start` sent the engine's thread.
  var startWakes: Int

  var text: String {
    "\(handlesMade) handles made, \(handleResets) reset between requests of another shape, \(setUpByEngine) transfers set up on the engine's thread, \(startWakes) wake-ups"
  }
}
