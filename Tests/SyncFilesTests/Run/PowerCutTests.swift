import Foundation
import Testing

/// Power cuts under LazyFS (SPEC §9.2): the root and the journal live on a
/// file system that forgets every write not flushed when the power goes.
/// After each cut, as after a reboot:
/// - every destination is absent or one whole version that was served;
/// - every task a finished run reported installed is still there, whole;
/// - the journal reads, and each byte it says a partial holds is on disk;
/// - the next apply converges and leaves no partial behind.
/// SYNCFILES_CUTS sets the random cuts (default 50, as in CI);
/// `scripts/power-cut N` runs more.
@Suite(.serialized) struct PowerCutTests {
  static var randomCuts: Int { Int(ProcessInfo.processInfo.environment["SYNCFILES_CUTS"] ?? "") ?? 50 }

  /// Five files installed and reported so survive a cut that follows the
  /// report. syncfs flushes nothing on FUSE: the group commit lost them all.
  @Test func filesReportedInstalledSurviveACut() throws {
    let w = try PowerCutWorld(small: 5, large: 0)
    let r = try w.apply()
    #expect(r.exit == 0 && r.outcomes.values.allSatisfy { $0 == "installed" }, "\(r.outcomes)")
    w.promise(r)
    w.cutPower()
    try w.fs.start()
    w.check()
    #expect(w.counts.lost == 0 && w.counts.torn == 0, "\(w.counts)")
    let status = try run(["status", "--format", "json", "m.yaml"], cwd: w.dir, env: w.env)
    #expect(status.status == 0 && !status.stdout.contains("\"partial\":{"), "\(status.stdout)")
  }

  /// A cut before and after each write, fsync and rename of a small run
  /// that replaces three small files and a segmented one.
  @Test func systematicCuts() throws {
    let w = try PowerCutWorld(small: 3, large: 1, largeSize: 1_500_000)
    let first = try w.apply()
    #expect(first.exit == 0, "\(first.stderr)")
    w.promise(first)
    w.serve(1)
    // The run to cut, recorded once: which operations it makes, on which paths.
    let snapshot = try w.snapshotThenLog()
    let recorded = try w.apply()
    #expect(recorded.exit == 0, "\(recorded.stderr)")
    let points = Self.sample(w.fs.loggedOperations())
    #expect(points.count >= 12, "too few operations recorded: \(points)")
    var fired = 0
    var notFired: [String] = []
    for base in points {
      for timing in ["before", "after"] {
        var f = base
        f.timing = timing
        try w.restore(snapshot)
        w.promised = Set(w.names)  // the snapshot's run installed every file
        try w.fs.start(fault: f)
        let r = try w.apply()
        guard w.fs.crashed else {
          notFired.append(f.description)  // the operation did not come this time
          continue
        }
        fired += 1
        w.counts.cuts += 1
        w.counts.midTransfer += 1
        w.promise(r)
        w.cutPower()
        try w.fs.start()
        w.check(at: f.description)
        try w.converge(at: f.description)
      }
    }
    print("power-cut | systematic | \(points.count * 2) points, \(fired) fired | \(w.counts)")
    print("power-cut | systematic | not reached: \(notFired.joined(separator: "; "))")
    #expect(fired >= points.count, "most faults should fire: \(fired) of \(points.count * 2)")
    #expect(w.counts.damage == 0, "\(w.counts) \(w.failures)")
  }

  /// A cut before and after each operation of a rollback (SPEC §10.4):
  /// after it the destination is one whole version, the journal reads, and
  /// `rollback --release` then an apply converge on the version served.
  @Test func aRollbackSurvivesACutAtEachStep() throws {
    let w = try PowerCutWorld(small: 1, large: 0, entryKeys: ", keep_versions: 2")
    let name = w.names[0]
    let id = "m/" + name.replacingOccurrences(of: ".", with: "_")
    _ = try w.apply()
    w.serve(1)
    let second = try w.apply()
    #expect(second.exit == 0 && second.outcomes.values.allSatisfy { $0 == "installed" }, "\(second.stderr)")
    let snapshot = try w.snapshotThenLog()
    let recorded = try run(["rollback", id, "m.yaml"], cwd: w.dir, env: w.env)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let points = Self.sample(w.fs.loggedOperations())
    #expect(points.count >= 4, "too few operations recorded: \(points)")
    var fired = 0
    var torn: [String] = []
    for base in points {
      for timing in ["before", "after"] {
        var f = base
        f.timing = timing
        try w.restore(snapshot)
        try w.fs.start(fault: f)
        _ = try run(["rollback", id, "m.yaml"], cwd: w.dir, env: w.env)
        guard w.fs.crashed else { continue }
        fired += 1
        w.cutPower()
        try w.fs.start()
        let now = readBytes(w.fs.mount + "/out/" + name)
        if now != w.versions[0][name] && now != w.versions[1][name] { torn.append(f.description) }
        let status = try run(["status", "--format", "json", "m.yaml"], cwd: w.dir, env: w.env)
        #expect(status.status == 0, "the journal reads after \(f.description): \(status.stderr)")
        _ = try run(["rollback", "--release", id, "m.yaml"], cwd: w.dir, env: w.env)
        let after = try w.apply()
        #expect(after.exit == 0, "after \(f.description): \(after.stderr)")
        #expect(readBytes(w.fs.mount + "/out/" + name) == w.versions[1][name], "converged after \(f.description)")
      }
    }
    print("power-cut | rollback | \(points.count * 2) points, \(fired) fired, torn or mixed \(torn.count)")
    #expect(fired >= points.count, "most faults should fire: \(fired) of \(points.count * 2)")
    #expect(torn.isEmpty, "the destination was no whole version after: \(torn)")
  }

  /// Cuts at random moments of runs over 150 small and 3 large files (in
  /// ranges), with the versions served changing every 10 cuts.
  @Test func randomCuts() throws {
    let w = try PowerCutWorld(small: 150, large: 3, largeSize: 3_000_000)
    let first = try w.apply()
    #expect(first.exit == 0, "\(first.stderr)")
    w.promise(first)
    var rng = SystemRandomNumberGenerator()
    for round in 0..<Self.randomCuts {
      if round % 10 == 0 { w.serve(round % 20 == 0 ? 1 : 0) }
      let p = try w.start()
      Thread.sleep(forTimeInterval: Double.random(in: 0.02...0.8, using: &rng))
      if p.isRunning {
        w.counts.midTransfer += 1
        kill(p.process.processIdentifier, SIGKILL)
        p.process.waitUntilExit()
      } else {
        p.process.waitUntilExit()
        w.promise(p.result())
      }
      w.counts.cuts += 1
      w.cutPower()
      try w.fs.start()
      w.check(at: "random cut \(round)")
      if round % 5 == 4 { try w.converge(at: "after random cut \(round)") }
    }
    try w.converge(at: "the end")
    print("power-cut | random | \(w.counts)")
    #expect(w.counts.midTransfer > Self.randomCuts / 2, "most cuts should land while apply runs")
    #expect(w.counts.damage == 0, "\(w.counts) \(w.failures)")
  }

  /// Every fsync and rename, and up to five writes of each path (the first
  /// two, the middle, the last two).
  static func sample(_ ops: [LazyFS.Fault]) -> [LazyFS.Fault] {
    var byKey: [String: [LazyFS.Fault]] = [:]
    var order: [String] = []
    for o in ops {
      let key = o.op + " " + o.path
      if byKey[key] == nil { order.append(key) }
      byKey[key, default: []].append(o)
    }
    return order.flatMap { key -> [LazyFS.Fault] in
      let all = byKey[key]!
      guard all[0].op == "write", all.count > 5 else { return all }
      let n = all.count
      return Set([0, 1, n / 2, n - 2, n - 1]).sorted().map { all[$0] }
    }
  }
}

/// The counts `scripts/power-cut` prints.
struct PowerCutCounts: CustomStringConvertible {
  var cuts = 0
  var midTransfer = 0
  var torn = 0
  var lost = 0
  var badClaims = 0
  var failedConvergences = 0
  var damage: Int { torn + lost + badClaims + failedConvergences }
  var description: String {
    "cuts \(cuts), mid-transfer \(midTransfer), torn or mixed \(torn), lost installs \(lost), journal claims not on disk \(badClaims), failed convergences \(failedConvergences)"
  }
}

/// A manifest outside LazyFS whose root and journal are on it, the fault
/// server serving two versions of every file, and the promises made so far.
final class PowerCutWorld {
  let fs: LazyFS
  let server: FaultServer
  let dir = makeTempDir()
  var names: [String] = []
  /// Two versions of each file; `serving` is the one the server has now.
  var versions: [[String: [UInt8]]] = [[:], [:]]
  var serving = 0
  /// Files a finished run reported installed (or unchanged): they must stay whole.
  var promised: Set<String> = []
  var counts = PowerCutCounts()
  var failures: [String] = []
  /// The machine's boot, as syncfiles sees it (`SYNCFILES_BOOT_ID`): a power
  /// cut is a reboot, which LazyFS does not do, so a cut makes a new one.
  var boot = UUID().uuidString
  var env: [String: String] { ["SYNCFILES_BOOT_ID": boot] }

  /// The disk as it is now, copied aside; then LazyFS again, logging the
  /// operations of the run to cut.
  func snapshotThenLog() throws -> String {
    fs.unmount()
    let snapshot = dir + "/snapshot"
    try shell(["cp", "-a", fs.disk, snapshot])
    try fs.start(logging: true)
    return snapshot
  }

  /// The disk back as `snapshotThenLog` copied it (LazyFS stopped).
  func restore(_ snapshot: String) throws {
    fs.unmount()
    try shell(["rm", "-rf", fs.disk])
    try shell(["cp", "-a", snapshot, fs.disk])
  }

  /// The power goes, and the machine boots again.
  func cutPower() {
    fs.cutPower()
    boot = UUID().uuidString
  }

  init(small: Int, large: Int, largeSize: Int = 0, entryKeys: String = "") throws {
    fs = try LazyFS()
    server = try FaultServer()
    var entries: [String] = []
    for i in 0..<(large + small) {
      let isLarge = i < large
      let name = isLarge ? "big\(i).bin" : "f\(i).bin"
      names.append(name)
      let size = isLarge ? largeSize : 2_000 + i * 300
      versions[0][name] = testBytes(size, seed: UInt64(300 + i))
      versions[1][name] = testBytes(size + (isLarge ? 0 : 7), seed: UInt64(600 + i))
      // No sha256: a torn or zero-filled partial would be installed as it is, and seen.
      entries.append(
        "  - {id: \(name.replacingOccurrences(of: ".", with: "_")), url: '\(server.base)/\(name)', destination: \(name)\(isLarge ? ", segments: 4" : "")\(entryKeys)}"
      )
    }
    write(
      "version: 1\nname: m\nroot: \(fs.mount)/out\njournal: \(fs.mount)/state/journal\nfiles:\n"
        + entries.joined(separator: "\n") + "\n", to: dir + "/m.yaml")
    serve(0)
  }

  deinit { try? FileManager.default.removeItem(atPath: dir) }

  func serve(_ v: Int) {
    serving = v
    var routes: [String: [String: Any]] = [:]
    for (name, bytes) in versions[v] {
      server.put("v\(v)-\(name)", bytes)
      var r: [String: Any] = ["file": "v\(v)-\(name)", "etag": "\"v\(v)-\(name)\""]
      if bytes.count > 1_000_000 { r["trickle_bps"] = 2_000_000 }
      routes["/" + name] = r
    }
    server.routes(routes)
  }

  struct Running {
    let process: Process
    let out: String
    var isRunning: Bool { process.isRunning }
    func result() -> Result {
      let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
      var outcomes: [String: String] = [:]
      if let o = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
        let tasks = o["tasks"] as? [[String: Any]]
      {
        for t in tasks {
          if let id = t["id"] as? String, let oc = t["outcome"] as? String { outcomes[id] = oc }
        }
      }
      return Result(exit: process.terminationStatus, outcomes: outcomes, stderr: "")
    }
  }

  struct Result {
    var exit: Int32
    /// Outcome by file name.
    var outcomes: [String: String]
    var stderr: String
  }

  func start() throws -> Running {
    let out = dir + "/report.json"
    _ = FileManager.default.createFile(atPath: out, contents: nil)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: try syncfilesBinary())
    p.arguments = ["apply", "--format", "json", "m.yaml"]
    p.currentDirectoryURL = URL(fileURLWithPath: dir)
    p.environment = ProcessInfo.processInfo.environment.merging(env) { $1 }
    p.standardOutput = FileHandle(forWritingAtPath: out)
    p.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try p.run()
    return Running(process: p, out: out)
  }

  func apply() throws -> Result {
    let r = try run(["apply", "--format", "json", "m.yaml"], cwd: dir, env: env)
    var outcomes: [String: String] = [:]
    if let o = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
      let tasks = o["tasks"] as? [[String: Any]]
    {
      for t in tasks {
        if let id = t["id"] as? String, let oc = t["outcome"] as? String { outcomes[id] = oc }
      }
    }
    return Result(exit: r.status, outcomes: outcomes, stderr: r.stderr)
  }

  func name(ofTask id: String) -> String? {
    names.first { "m/" + $0.replacingOccurrences(of: ".", with: "_") == id }
  }

  /// A finished run's report: what it says is installed is a promise.
  func promise(_ r: Result) {
    for (id, outcome) in r.outcomes where outcome == "installed" || outcome == "unchanged" {
      if let n = name(ofTask: id) { promised.insert(n) }
    }
  }

  func fail(_ kind: WritableKeyPath<PowerCutCounts, Int>, _ what: String) {
    counts[keyPath: kind] += 1
    if failures.count < 20 { failures.append(what) }
  }

  /// The invariants after a cut (the file system mounted again).
  func check(at point: String = "") {
    for name in names {
      let got = readBytes(fs.mount + "/out/" + name)
      if got == nil {
        if promised.contains(name) { fail(\.lost, "\(point): \(name) was reported installed and is gone") }
      } else if got != versions[0][name] && got != versions[1][name] {
        fail(\.torn, "\(point): \(name) is no whole version (\(got?.count ?? 0) bytes)")
      }
    }
    checkJournalClaims(at: point)
  }

  /// Each partial the journal names holds what it claims: the ranges it
  /// lists, or (one stream) a prefix of the version it was started under.
  func checkJournalClaims(at point: String) {
    let status = try? run(["status", "--format", "json", "m.yaml"], cwd: dir, env: env)
    if status?.status != 0 { fail(\.badClaims, "\(point): status failed: \(status?.stderr ?? "")") }
    let text = String(decoding: readBytes(fs.mount + "/state/journal") ?? [], as: UTF8.self)
    var latest: [String: [String: Any]] = [:]
    for line in text.split(separator: "\n").dropFirst() {
      let parts = line.split(separator: " ", maxSplits: 2)
      guard parts.count == 3,
        let o = try? JSONSerialization.jsonObject(with: Data(parts[2].utf8)) as? [String: Any],
        let id = o["id"] as? String
      else { continue }
      latest[id] = o
    }
    for (id, record) in latest {
      guard let p = record["partial"] as? [String: Any], let path = p["path"] as? String,
        let etag = p["etag"] as? String, let name = name(ofTask: id),
        let bytes = readBytes(path)
      else { continue }
      let v = etag.hasPrefix("\"v1-") ? 1 : 0
      let served = versions[v][name] ?? []
      // Ranges recorded in an earlier boot hold only where they were flushed (`durable`).
      let sameBoot = p["boot"] as? String == boot
      if let claimed = p["ranges"] as? [[Int]] {
        let ranges = sameBoot || p["boot"] == nil ? claimed : (p["durable"] as? [[Int]] ?? [])
        for r in ranges where r.count == 2 {
          let ok = r[1] <= bytes.count && r[1] <= served.count && bytes[r[0]..<r[1]] == served[r[0]..<r[1]]
          if !ok { fail(\.badClaims, "\(point): \(name)'s partial lacks bytes \(r[0])-\(r[1]) the journal claims") }
        }
      } else if bytes.count > served.count || bytes[...] != served[0..<bytes.count] {
        fail(\.badClaims, "\(point): \(name)'s partial (\(bytes.count) bytes) is no prefix of its version")
      }
    }
  }

  /// The next apply converges: every file the version served, no partial left.
  func converge(at point: String) throws {
    let r = try apply()
    let whole = names.allSatisfy { readBytes(fs.mount + "/out/" + $0) == versions[serving][$0] }
    let left = ((try? FileManager.default.contentsOfDirectory(atPath: fs.mount + "/out")) ?? []).filter {
      $0.hasSuffix(".syncfiles-partial")
    }
    if r.exit != 0 || !whole || !left.isEmpty {
      fail(\.failedConvergences, "\(point): exit \(r.exit), whole \(whole), partials \(left) \(r.stderr)")
    }
    promised = Set(names)
  }
}
