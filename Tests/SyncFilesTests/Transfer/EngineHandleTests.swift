import Foundation
import Testing

@testable import SyncFiles

/// The engine's handles (issue 15, W4): a request is set up on the thread
/// that starts it with a spare handle, handles are reused and never made one
/// per request, and transfers still waiting for a slot when the run stops
/// give their handles back. Against the fault server, over loopback.
@Suite final class EngineHandleTests {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  /// Results as they arrive on the engine thread, for the test's thread to wait on.
  final class Results: @unchecked Sendable {
    private let lock = NSCondition()
    private var byID: [String: TransferResult] = [:]
    func add(_ r: TransferResult) {
      lock.lock()
      byID[r.id] = r
      lock.broadcast()
      lock.unlock()
    }
    /// All `n` results, or what came within `seconds`.
    func wait(for n: Int, seconds: Double = 30) -> [String: TransferResult] {
      let until = Date(timeIntervalSinceNow: seconds)
      lock.lock()
      defer { lock.unlock() }
      while byID.count < n && lock.wait(until: until) {}
      return byID
    }
  }

  func spec(_ name: String) -> TransferSpec { Self.spec(server: server, root: dir, name) }

  static func spec(server: FaultServer, root: String, _ name: String) -> TransferSpec {
    let s = TransferSpec(
      id: name, url: "\(server.base)/\(name)", headers: [], scheme: "http", root: root, relative: name,
      partial: nil, hasher: SHA256Hasher(), connectTimeout: .seconds(10), stall: .seconds(30), onBody: { _ in })
    s.host = "127.0.0.1"
    return s
  }

  func serve(_ names: [String], size: Int, trickle: Int? = nil) -> [String: [UInt8]] {
    var bytes: [String: [UInt8]] = [:]
    var routes: [String: [String: Any]] = [:]
    for (k, n) in names.enumerated() {
      bytes[n] = testBytes(size, seed: UInt64(k + 1))
      server.put(n, bytes[n]!)
      routes["/" + n] = ["file": n, "etag": "\"\(n)\""].merging(trickle.map { ["trickle_bps": $0] } ?? [:]) { a, _ in a
      }
    }
    server.routes(routes)
    return bytes
  }

  @Test func handlesAreReusedAcrossRequestsAndEveryBodyArrivesWhole() throws {
    let names = (0..<40).map { "f\($0).bin" }
    let bytes = serve(names, size: 3_000)
    let engine = try #require(TransferEngine(perHost: 3, rate: nil, parallel: 3))
    let results = Results()
    // As the runner does: a few ahead of the slots at first, then one more as each ends.
    var next = 0
    for _ in 0..<6 {
      engine.start(spec(names[next])) { results.add($0) }
      next += 1
    }
    while next < names.count {
      _ = results.wait(for: next - 5)
      engine.start(spec(names[next])) { results.add($0) }
      next += 1
    }
    let all = results.wait(for: names.count)
    engine.shutdown()
    #expect(all.count == names.count)
    for n in names {
      let r = try #require(all[n], "\(n) has no result")
      #expect(r.outcome == .complete && r.status == 200 && r.received == 3_000, "\(n): \(r.outcome)")
      #expect(r.hasher.finish() == sha256Hex(bytes[n]!), "\(n): the bytes hashed are the file's")
    }
    // One handle per request would be 40; the slots and the transfers handed over ahead need at most 6.
    #expect(engine.handlesMade <= 6, "\(engine.handlesMade) handles for \(names.count) requests")
    #expect(server.requests().count == names.count)
  }

  @Test func aTransferWaitingForASlotWhenStoppedNeverBeganAndItsHandleServesLaterOnes() throws {
    let warm = ["w0.bin", "w1.bin"]
    let slow = ["slow0.bin", "slow1.bin"]
    let quick = ["q0.bin", "q1.bin"]
    _ = serve(warm + slow, size: 40_000, trickle: 4_000)
    let engine = try #require(TransferEngine(perHost: 1, rate: nil, parallel: 2))
    // Two transfers at once (two host keys), so that two spare handles are free after them.
    let first = Results()
    for (k, n) in warm.enumerated() {
      let s = spec(n)
      s.host = "warm\(k)"
      engine.start(s) { first.add($0) }
    }
    Thread.sleep(forTimeInterval: 0.3)
    engine.stopAll()
    #expect(first.wait(for: warm.count).count == warm.count)
    #expect(engine.handlesMade == 2)
    // Both set up on this thread with those handles; the second waits for its host's one slot.
    let results = Results()
    for n in slow { engine.start(spec(n)) { results.add($0) } }
    Thread.sleep(forTimeInterval: 0.3)
    engine.stopAll()
    let stopped = results.wait(for: slow.count)
    #expect(stopped.values.allSatisfy { $0.outcome == .stopped })
    #expect(stopped[slow[0]]?.began == true && stopped[slow[1]]?.began == false, "only the first had a slot")
    #expect(server.requests("/" + slow[1]).isEmpty, "the waiting transfer sent nothing")

    // One transfer per host key, both set up here with the two spare handles
    // (one of them the waiting transfer's) and both begun at once: a third
    // handle would be made if the waiting transfer had kept its own.
    let bytes = serve(quick, size: 5_000)
    let later = Results()
    for (k, n) in quick.enumerated() {
      let s = spec(n)
      s.host = "q\(k)"
      engine.start(s) { later.add($0) }
    }
    let all = later.wait(for: 2)
    engine.shutdown()
    for n in quick {
      let r = try #require(all[n], "\(n) has no result")
      #expect(r.outcome == .complete && r.received == 5_000, "\(n): \(r.outcome)")
      #expect(r.hasher.finish() == sha256Hex(bytes[n]!))
    }
    #expect(engine.handlesMade == 2, "the stopped transfers' handles serve the later ones")
  }
}

/// A small body held in memory is hashed by the thread that verifies it or
/// writes it out, once, not by the engine thread as it arrives (issue 15).
@Suite final class HeldBodyHashTests {
  let server: FaultServer
  let dir = makeTempDir()
  let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func fetch(_ name: String, _ bytes: [UInt8], trickle: Int? = nil) throws -> TransferResult {
    server.put(name, bytes)
    var route: [String: Any] = ["file": name, "etag": "\"\(name)\""]
    if let trickle { route["trickle_bps"] = trickle }
    server.routes(["/" + name: route])
    let engine = try #require(TransferEngine(perHost: 1, rate: nil, parallel: 1))
    defer { engine.shutdown() }
    let s = EngineHandleTests.spec(server: server, root: dir, name)
    s.mayHoldBody = true
    let results = EngineHandleTests.Results()
    engine.start(s) { results.add($0) }
    return try #require(results.wait(for: 1)[name])
  }

  @Test func aHeldBodyReachesItsVerifierUnhashedAndIsHashedThereOnce() throws {
    let bytes = testBytes(16_384, seed: 7)
    let r = try fetch("small.bin", bytes)
    #expect(r.outcome == .complete)
    let p = try #require(r.partial)
    #expect(p.isHeld, "16 KiB of known length is held in memory")
    p.hashHeld(into: r.hasher)
    p.hashHeld(into: r.hasher)
    #expect(r.hasher.finish() == sha256Hex(bytes), "the held bytes, hashed once")
    // The engine thread fed the hasher nothing.
    let again = try fetch("small2.bin", bytes)
    #expect(again.hasher.finish() == empty)
  }

  @Test func aHeldBodyWrittenOutMidwayIsHashedBeforeTheBytesAfterIt() throws {
    // Held for more than 0.1 s, the body goes to its file partway through.
    let bytes = testBytes(30_000, seed: 8)
    let r = try fetch("slow.bin", bytes, trickle: 40_000)
    #expect(r.outcome == .complete)
    let p = try #require(r.partial)
    #expect(!p.isHeld, "written out while it arrived")
    p.hashHeld(into: r.hasher)
    #expect(r.hasher.finish() == sha256Hex(bytes))
    #expect(readBytes(dir + "/.slow.bin.syncfiles-partial") == bytes)
  }
}
