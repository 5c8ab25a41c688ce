import Foundation
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
import Testing

/// A link of our own between network namespaces: syncfiles in `client`,
/// nginx in the test's namespace, and between them lossylink.py in `middle`
/// bridging two veth pairs with a delay each way, random loss, and outages
/// on request (the kernel has no netem).
///
///     client: c0 198.18.N.1 ─ middle: mc ⇄ lossylink ⇄ ms ─ here: s0 198.18.N.2
final class SlowLink {
  private static let counter = Locked(0)
  let client: String
  let middle: String
  let hostSide: String
  let clientAddress: String
  let serverAddress: String
  private var forwarder: Process?

  init(delayMs: Int, loss: Double) throws {
    let n = Self.counter.withLock {
      $0 += 1; return $0
    }
    let tag = "\(getpid() % 10000)x\(n)"
    client = "sfc\(tag)"
    middle = "sfm\(tag)"
    hostSide = "sfs\(tag)"
    let subnet = "198.18.\(Int(getpid() % 200) + n)"
    clientAddress = subnet + ".1"
    serverAddress = subnet + ".2"
    do {
      try build()
      try startForwarder(delayMs: delayMs, loss: loss)
    } catch {
      tearDown()
      throw error
    }
  }

  private func build() throws {
    try shell(["ip", "netns", "add", client])
    try shell(["ip", "netns", "add", middle])
    try shell(["ip", "link", "add", "c0", "netns", client, "type", "veth", "peer", "name", "mc", "netns", middle])
    try shell(["ip", "link", "add", hostSide, "type", "veth", "peer", "name", "ms", "netns", middle])
    try shell(["ip", "-n", client, "addr", "add", clientAddress + "/24", "dev", "c0"])
    try shell(["ip", "addr", "add", serverAddress + "/24", "dev", hostSide])
    // Frames must fit the MTU and carry their own checksums to cross a user-space bridge.
    let offloads = ["tx", "off", "tso", "off", "gso", "off", "gro", "off"]
    try shell(["ip", "netns", "exec", client, "ethtool", "-K", "c0"] + offloads)
    try shell(["ip", "netns", "exec", middle, "ethtool", "-K", "mc"] + offloads)
    try shell(["ip", "netns", "exec", middle, "ethtool", "-K", "ms"] + offloads)
    try shell(["ethtool", "-K", hostSide] + offloads)
    for (ns, dev) in [(client, "lo"), (client, "c0"), (middle, "mc"), (middle, "ms")] {
      try shell(["ip", "-n", ns, "link", "set", dev, "up"])
    }
    try shell(["ip", "link", "set", hostSide, "up"])
  }

  private func startForwarder(delayMs: Int, loss: Double) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = [
      "ip", "netns", "exec", middle, "python3", "-u", packageRoot + "/Tests/SyncFilesTests/Support/lossylink.py",
      "mc", "ms", "--delay-ms", "\(delayMs)", "--loss", "\(loss)",
    ]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try p.run()
    forwarder = p
    let said = firstLine(of: out)
    guard said.hasPrefix("ready") else {
      throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "lossylink.py said: \(said)"])
    }
  }

  /// Every frame dropped from now until `endOutage`.
  func startOutage() { signalForwarder(SIGUSR1) }
  func endOutage() { signalForwarder(SIGUSR2) }
  private func signalForwarder(_ s: Int32) {
    if let p = forwarder { kill(p.processIdentifier, s) }
  }

  private func tearDown() {
    if let p = forwarder {
      kill(p.processIdentifier, SIGKILL)
      p.waitUntilExit()
    }
    // Deleting a namespace deletes its veth ends, and with them their peers.
    _ = try? shell(["ip", "netns", "del", client])
    _ = try? shell(["ip", "netns", "del", middle])
  }

  deinit { tearDown() }

  /// Starts `syncfiles ARGS` inside the client namespace; output to files in `dir`.
  func startSyncfiles(_ args: [String], cwd dir: String) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["ip", "netns", "exec", client, try syncfilesBinary()] + args
    p.currentDirectoryURL = URL(fileURLWithPath: dir)
    _ = FileManager.default.createFile(atPath: dir + "/stdout", contents: nil)
    _ = FileManager.default.createFile(atPath: dir + "/stderr", contents: nil)
    p.standardOutput = FileHandle(forWritingAtPath: dir + "/stdout")
    p.standardError = FileHandle(forWritingAtPath: dir + "/stderr")
    try p.run()
    return p
  }
}

/// 100 ms round trips, 2 % loss each way, and an outage mid-transfer: the
/// file converges to its sha256 within its retries (issue 11).
@Suite(.serialized) struct SlowLinkTests {
  struct Outcome {
    var result: ApplyResult
    var bytesOK: Bool
    var seconds: Double
  }

  /// Applies one file of `size` bytes over a fresh link, with an outage of
  /// `outage` seconds once `outageAt` bytes arrived.
  func transfer(size: Int, outage: Double, outageAt: Int, entryKeys: String) throws -> Outcome {
    let link = try SlowLink(delayMs: 50, loss: 0.02)
    let server = try NginxServer(alsoOn: [link.serverAddress])
    let body = testBytes(size, seed: 77)
    server.put("big.bin", body, mtime: timeFromNow(-3600))
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let url = "http://\(link.serverAddress):\(server.port)/big.bin"
    write(
      """
      version: 1
      name: s
      root: out
      journal: state/journal
      files:
        - {id: big, url: '\(url)', destination: big.bin, sha256: \(sha256Hex(body))\(entryKeys)}

      """, to: dir + "/s.yaml")
    let start = Date()
    let p = try link.startSyncfiles(["apply", "--format", "json", "--deadline", "170s", "s.yaml"], cwd: dir)
    let partial = dir + "/out/.big.bin.syncfiles-partial"
    while p.isRunning && Date().timeIntervalSince(start) < 60 {
      let held = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0
      if held >= outageAt { break }
      Thread.sleep(forTimeInterval: 0.05)
    }
    link.startOutage()
    Thread.sleep(forTimeInterval: outage)
    link.endOutage()
    while p.isRunning && Date().timeIntervalSince(start) < 180 { Thread.sleep(forTimeInterval: 0.2) }
    if p.isRunning { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    let out = String(decoding: readBytes(dir + "/stdout") ?? [], as: UTF8.self)
    let err = String(decoding: readBytes(dir + "/stderr") ?? [], as: UTF8.self)
    let result = try ApplyResult(Run(status: p.terminationStatus, stdout: out, stderr: err))
    return Outcome(
      result: result, bytesOK: readBytes(dir + "/out/big.bin") == body, seconds: Date().timeIntervalSince(start))
  }

  @Test func aFiveSecondOutageOnALossyLinkConverges() throws {
    let o = try transfer(size: 6_000_000, outage: 5, outageAt: 1_000_000, entryKeys: "")
    #expect(o.result.run.status == 0, "\(o.result.run.stdout) \(o.result.run.stderr)")
    #expect(o.bytesOK, "the installed file differs")
    print(
      "slow link | 100 ms RTT, 2 % loss, 5 s outage | \(o.seconds) s, attempts \(o.result.int("s/big", "attempts") ?? 0)"
    )
  }

  /// Longer than the stall timeout: the try is cut, the next ones fail to
  /// connect during the outage, and a later one resumes where it stopped.
  @Test func aTwentySecondOutageIsCutByTheStallTimeoutAndResumed() throws {
    let keys = ", timeout: {stall: 10s, connect: 5s}, retry: {attempts: 10, backoff: 1s, max_backoff: 4s}"
    let o = try transfer(size: 6_000_000, outage: 20, outageAt: 1_000_000, entryKeys: keys)
    let r = o.result
    #expect(r.run.status == 0, "\(r.run.stdout) \(r.run.stderr)")
    #expect(o.bytesOK, "the installed file differs")
    #expect((r.int("s/big", "attempts") ?? 0) >= 2, "the stall timeout cut the first try")
    #expect((r.int("s/big", "resumed_from") ?? 0) > 0, "the last try resumed: \(r.run.stdout)")
    print(
      "slow link | 100 ms RTT, 2 % loss, 20 s outage, stall 10s | \(o.seconds) s, attempts \(r.int("s/big", "attempts") ?? 0), resumed from \(r.int("s/big", "resumed_from") ?? 0)"
    )
  }
}
