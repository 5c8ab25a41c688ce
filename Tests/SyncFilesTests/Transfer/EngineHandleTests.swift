import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

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

  func spec(
    _ name: String, host: String = "127.0.0.1", headers: [String] = [], network: NetworkOptions = NetworkOptions(),
    url: String? = nil
  ) -> TransferSpec {
    Self.spec(server: server, root: dir, name, host: host, headers: headers, network: network, url: url)
  }

  static func spec(
    server: FaultServer, root: String, _ name: String, host: String = "127.0.0.1", headers: [String] = [],
    network: NetworkOptions = NetworkOptions(), url: String? = nil, mayHoldBody: Bool = false
  ) -> TransferSpec {
    TransferSpec(
      id: name, url: url ?? "\(server.base)/\(name)", headers: headers, scheme: "http", host: host, root: root,
      relative: name, hasher: SHA256Hasher(), network: network, connectTimeout: .seconds(10), stall: .seconds(30),
      onBody: { _ in }, mayHoldBody: mayHoldBody)
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
    #expect(engine.stats.handlesMade <= 6, "\(engine.stats.handlesMade) handles for \(names.count) requests")
    // Each set up on this thread, none by the engine as it began.
    #expect(engine.stats.setUpByEngine == 0, "\(engine.stats.setUpByEngine) set up by the engine")
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
      let s = spec(n, host: "warm\(k)")
      engine.start(s) { first.add($0) }
    }
    Thread.sleep(forTimeInterval: 0.3)
    engine.stopAll()
    #expect(first.wait(for: warm.count).count == warm.count)
    #expect(engine.stats.handlesMade == 2)
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
      let s = spec(n, host: "q\(k)")
      engine.start(s) { later.add($0) }
    }
    let all = later.wait(for: 2)
    engine.shutdown()
    for n in quick {
      let r = try #require(all[n], "\(n) has no result")
      #expect(r.outcome == .complete && r.received == 5_000, "\(n): \(r.outcome)")
      #expect(r.hasher.finish() == sha256Hex(bytes[n]!))
    }
    #expect(engine.stats.handlesMade == 2, "the stopped transfers' handles serve the later ones")
  }

  /// A transfer handed over while every slot is taken sends no wake-up, and
  /// one handed over during the engine's turn (here from the result of the
  /// one before, on the engine's thread, as the runner answers results) is
  /// taken at the end of that turn: not after the engine's one-second wait,
  /// with nothing left running to end it (issue 15, W4).
  @Test func aTransferHandedOverWhileEverySlotIsTakenBeginsWithoutAWakeUp() throws {
    let names = (0..<5).map { "c\($0).bin" }
    let bytes = serve(names, size: 2_000)
    let engine = try #require(TransferEngine(perHost: 1, rate: nil, parallel: 1))
    let results = Results()
    let specs = names.map { spec($0) }
    @Sendable func chain(_ k: Int) {
      engine.start(specs[k]) { r in
        results.add(r)
        if k + 1 < specs.count { chain(k + 1) }
      }
    }
    let began = Date()
    chain(0)
    let all = results.wait(for: names.count)
    let took = Date().timeIntervalSince(began)
    engine.shutdown()
    for n in names {
      let r = try #require(all[n], "\(n) has no result")
      #expect(r.outcome == .complete && r.received == 2_000, "\(n): \(r.outcome)")
      #expect(r.hasher.finish() == sha256Hex(bytes[n]!))
    }
    // Each of the four handed over in a turn would wait a second for the engine.
    #expect(took < 2.0, "five chained transfers took \(took) s")
    // Only the first found a slot free; the others came while the one slot was taken.
    #expect(engine.stats.startWakes == 1, "\(engine.stats.startWakes) wake-ups")
  }

  /// One request at a time on one handle, each waited for.
  func one(_ engine: TransferEngine, _ s: TransferSpec) throws -> TransferResult {
    let results = Results()
    engine.start(s) { results.add($0) }
    return try #require(results.wait(for: 1)[s.id], "\(s.id) has no result")
  }

  @Test func requestsOfOneShapeKeepTheHandlesOptionsAndSendOnlyTheirOwnLines() throws {
    let names = (0..<20).map { "s\($0).bin" }
    let bytes = serve(names, size: 2_000)
    let engine = try #require(TransferEngine(perHost: 2, rate: nil, parallel: 2))
    for (k, n) in names.enumerated() {
      let s = spec(n, headers: ["X-Seq: \(k)"])
      let r = try one(engine, s)
      #expect(r.outcome == .complete && r.received == 2_000, "\(n): \(r.outcome)")
      #expect(r.hasher.finish() == sha256Hex(bytes[n]!))
    }
    // The first request of a handle finds it new; every later one finds the options of its shape.
    #expect(engine.stats.handlesMade == 1)
    #expect(engine.stats.handleResets == 0, "\(engine.stats.handleResets) resets between requests of one shape")
    engine.shutdown()
    for (k, n) in names.enumerated() {
      let seen = server.requests("/" + n).map { $0.headers["x-seq"] }
      #expect(seen == ["\(k)"], "\(n) carried its own line, and no other request's")
    }
  }

  @Test func aRequestOfAnotherShapeGetsNoneOfTheOptionsOfTheOneBefore() throws {
    let names = ["a.bin", "b.bin", "c.bin", "d.bin", "e.bin"]
    _ = serve(names, size: 1_000)
    let netrc = dir + "/netrc"
    try "machine 127.0.0.1 login user password pass\n".write(toFile: netrc, atomically: true, encoding: .utf8)
    // One handle for all five, each request waited for.
    let engine = try #require(TransferEngine(perHost: 1, rate: nil, parallel: 1))
    var proxied = NetworkOptions()
    proxied.proxy = .url(
      ExpandedString(template: "http://127.0.0.1:9", value: "http://127.0.0.1:9", hasSecret: false))
    #expect(
      try one(engine, spec("a.bin", network: proxied)).outcome != .complete,
      "a dead proxy fails the request that names it")
    #expect(try one(engine, spec("b.bin")).outcome == .complete, "the next request goes direct")
    #expect(try one(engine, spec("c.bin")).outcome == .complete)
    var netrcOptions = NetworkOptions()
    netrcOptions.netrc = .file(netrc)
    let withNetrc = spec("d.bin", network: netrcOptions)
    #expect(try one(engine, withNetrc).outcome == .complete)
    #expect(try one(engine, spec("e.bin")).outcome == .complete)
    // Reset before b (other proxy), d (netrc) and e (after netrc); not before c, b's shape.
    #expect(engine.stats.handlesMade == 1)
    #expect(engine.stats.handleResets == 3)
    engine.shutdown()
    #expect(server.requests("/a.bin").isEmpty, "a never reached the server")
    #expect(server.requests("/d.bin").first?.headers["authorization"] != nil, "netrc gave d its login")
    #expect(server.requests("/e.bin").first.map { $0.headers["authorization"] == nil } == true, "e sent no login")
  }

  @Test func aRedirectToAnotherOriginNeverFindsNetrcOnAHandle() throws {
    _ = serve(["n0.bin", "n1.bin"], size: 1_000)
    server.routes([
      "/n0.bin": ["file": "n0.bin"], "/n1.bin": ["file": "n1.bin"],
      "/r": ["redirect": ["location": "http://localhost:\(server.port)/c"]], "/c": ["file": "n0.bin"],
    ])
    let netrc = dir + "/netrc"
    try "machine 127.0.0.1 login user password pass\nmachine localhost login user password pass\n"
      .write(toFile: netrc, atomically: true, encoding: .utf8)
    func withNetrc(_ name: String) -> TransferSpec {
      var options = NetworkOptions()
      options.netrc = .file(netrc)
      return spec(name, network: options)
    }
    let engine = try #require(TransferEngine(perHost: 2, rate: nil, parallel: 2))
    // Two at once: two handles, each last set up with netrc for this origin.
    let first = Results()
    for n in ["n0.bin", "n1.bin"] { engine.start(withNetrc(n)) { first.add($0) } }
    #expect(first.wait(for: 2).values.allSatisfy { $0.outcome == .complete })
    // The redirect's second request takes the other spare handle.
    let r = try one(engine, withNetrc("r"))
    engine.shutdown()
    #expect(r.outcome == .complete, "\(r.outcome)")
    #expect(server.requests("/r").first?.headers["authorization"] != nil, "its own origin gets the login")
    #expect(server.requests("/c").first.map { $0.headers["authorization"] == nil } == true, "another origin none")
  }

  @Test func aUserInTheURLIsACredentialOfItsRequestAlone() throws {
    _ = serve(["u.bin", "v.bin"], size: 1_000)
    let engine = try #require(TransferEngine(perHost: 1, rate: nil, parallel: 1))
    let withUser = spec("u.bin", url: "http://user:pass@127.0.0.1:\(server.port)/u.bin")
    #expect(try one(engine, withUser).outcome == .complete)
    #expect(try one(engine, spec("v.bin")).outcome == .complete)
    engine.shutdown()
    #expect(server.requests("/u.bin").first?.headers["authorization"] != nil)
    #expect(server.requests("/v.bin").first.map { $0.headers["authorization"] == nil } == true)
    #expect(TransferEngine.namesUser("http://u:p@host/f"))
    #expect(TransferEngine.namesUser("https://u@host:8443"))
    #expect(!TransferEngine.namesUser("http://host/a@b"))
    #expect(!TransferEngine.namesUser("http://host?x=a@b"))
    #expect(!TransferEngine.namesUser("http://host#a@b"))
    #expect(!TransferEngine.namesUser("http://127.0.0.1:8080/f.bin"))
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
    let s = EngineHandleTests.spec(server: server, root: dir, name, mayHoldBody: true)
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
