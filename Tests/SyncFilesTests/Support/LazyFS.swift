import Foundation

/// LazyFS (Vendor/lazyfs, built by scripts/setup into .build-lazyfs): a FUSE
/// file system with a page cache of its own that it drops on command, as a
/// power cut drops every write not yet flushed. `disk` is the folder below
/// it (what survives a cut), `mount` what syncfiles sees.
final class LazyFS {
  let dir = makeTempDir()
  var disk: String { dir + "/disk" }
  var mount: String { dir + "/mnt" }
  private var fifo: String { dir + "/faults.fifo" }
  private var doneFifo: String { dir + "/done.fifo" }
  var log: String { dir + "/lazyfs.log" }
  private var process: Process?
  /// The read end of LazyFS's "done" FIFO, open while it runs: its FIFO
  /// reader opens the write end first and waits until someone reads.
  private var doneFD: Int32 = -1

  static var binary: String { packageRoot + "/.build-lazyfs/src/lazyfs/build/lazyfs" }

  struct Unavailable: Error, CustomStringConvertible {
    var description: String
  }

  /// A fault to fire at an operation (LazyFS's `clear` injection with
  /// `crash`): the daemon drops its cache and dies before or after the
  /// `occurrence`-th `op` on `path` (a path on the disk side).
  struct Fault: CustomStringConvertible {
    var op: String
    var path: String
    var to: String?
    var timing: String
    var occurrence: Int
    var description: String {
      "\(timing) \(op) #\(occurrence) of \((path as NSString).lastPathComponent)"
        + (to.map { " to \(($0 as NSString).lastPathComponent)" } ?? "")
    }
  }

  init() throws {
    guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
      throw Unavailable(description: "LazyFS is not built at \(Self.binary): run scripts/setup")
    }
    for d in [disk, mount] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
    try start()
  }

  deinit {
    unmount()
    try? FileManager.default.removeItem(atPath: dir)
  }

  /// Mounts it (again), optionally with one fault armed, and with every
  /// operation logged when `logging`.
  func start(fault: Fault? = nil, logging: Bool = false) throws {
    unmount()
    var injection = ""
    if let f = fault, !(f.timing == "before" && f.occurrence == 1) {
      // `before` counts the operations already seen: occurrence k fires before the (k+1)-th.
      let n = f.timing == "before" ? f.occurrence - 1 : f.occurrence
      injection = """
        [[injection]]
        type="clear-cache"
        from="\(f.path)"
        \(f.to.map { "to=\"\($0)\"" } ?? "")
        timing="\(f.timing)"
        op="\(f.op)"
        occurrence=\(n)
        crash=true

        """
    }
    try? FileManager.default.removeItem(atPath: log)
    write(
      """
      [faults]
      fifo_path="\(fifo)"
      fifo_path_completed="\(doneFifo)"
      [cache]
      apply_eviction=false
      [cache.simple]
      custom_size="128mb"
      blocks_per_page=1
      [filesystem]
      log_all_operations=\(logging)
      logfile="\(log)"
      \(injection)
      """, to: dir + "/lazyfs.toml")
    let p = Process()
    p.executableURL = URL(fileURLWithPath: Self.binary)
    p.arguments = [
      mount, "--config-path", dir + "/lazyfs.toml", "-o", "allow_other", "-o", "modules=subdir", "-o",
      "subdir=" + disk, "-f",
    ]
    _ = FileManager.default.createFile(atPath: dir + "/lazyfs.out", contents: nil)
    p.standardOutput = FileHandle(forWritingAtPath: dir + "/lazyfs.out")
    p.standardError = p.standardOutput
    try p.run()
    process = p
    let start = Date()
    while !isMounted {
      guard p.isRunning, Date().timeIntervalSince(start) < 10 else {
        let said = (try? String(contentsOfFile: dir + "/lazyfs.out", encoding: .utf8)) ?? ""
        let cfg = (try? String(contentsOfFile: dir + "/lazyfs.toml", encoding: .utf8)) ?? ""
        throw Unavailable(description: "LazyFS did not mount at \(mount): \(said.suffix(2000)) \(cfg)")
      }
      Thread.sleep(forTimeInterval: 0.01)
    }
    doneFD = open(doneFifo, O_RDONLY | O_NONBLOCK)
    if let f = fault, f.timing == "before" && f.occurrence == 1 {
      // The first occurrence: the FIFO's crash command fires at the first match.
      let to = f.to.map { "::to_rgx=" + Self.literal($0) } ?? ""
      send("lazyfs::crash::timing=before::op=\(f.op)::from_rgx=\(Self.literal(f.path))\(to)")
      // The FIFO is read on a thread of LazyFS's own: wait until it has taken the fault.
      let start = Date()
      while !logText.contains("VALID crash fault") && Date().timeIntervalSince(start) < 5 {
        Thread.sleep(forTimeInterval: 0.01)
      }
    }
  }

  /// `text` as a regular expression (std::regex, ECMAScript) that matches it alone.
  static func literal(_ text: String) -> String {
    text.map { $0.isLetter || $0.isNumber ? String($0) : "[\($0)]" }.joined()
  }

  var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

  var isMounted: Bool {
    var a = stat()
    var b = stat()
    return stat(mount, &a) == 0 && stat(dir, &b) == 0 && a.st_dev != b.st_dev
  }

  /// Mount points in the mount table.
  private var mounts: [String] {
    let text = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { l in l.split(separator: " ").dropFirst().first.map(String.init) }
  }

  /// Whether the daemon died (a fault fired).
  var crashed: Bool { process.map { !$0.isRunning } ?? true }

  /// The power goes: every write not flushed is lost, and the file system goes away.
  func cutPower() {
    if !crashed {
      let fd = doneFD
      send("lazyfs::clear-cache")
      // Wait until LazyFS says the cache is dropped (at most 10 s).
      var buf = [UInt8](repeating: 0, count: 256)
      let start = Date()
      var said = ""
      while fd >= 0 && !said.contains("finished") && Date().timeIntervalSince(start) < 10 {
        let n = read(fd, &buf, buf.count)
        if n > 0 { said += String(decoding: buf[0..<n], as: UTF8.self) } else { Thread.sleep(forTimeInterval: 0.005) }
      }
    }
    unmount()
  }

  func unmount() {
    guard let p = process else { return }
    // Also when the daemon died: its mount stays, answering ENOTCONN, until unmounted.
    if mounts.contains(mount) { _ = try? shell(["fusermount3", "-u", "-z", mount]) }
    let start = Date()
    while p.isRunning && Date().timeIntervalSince(start) < 5 { Thread.sleep(forTimeInterval: 0.01) }
    if p.isRunning { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    process = nil
    if doneFD >= 0 { close(doneFD) }
    doneFD = -1
  }

  /// Writes a command to the fault FIFO, once LazyFS's reader has it open.
  private func send(_ command: String) {
    var fd = open(fifo, O_WRONLY | O_NONBLOCK)
    let start = Date()
    while fd < 0 && errno == ENXIO && Date().timeIntervalSince(start) < 5 {
      Thread.sleep(forTimeInterval: 0.005)
      fd = open(fifo, O_WRONLY | O_NONBLOCK)
    }
    guard fd >= 0 else { return }
    _ = (command + "\n").withCString { write(fd, $0, strlen($0)) }
    close(fd)
  }

  /// The write, fsync and rename operations LazyFS logged (with `logging`),
  /// as faults of each kind and path, counted in order.
  func loggedOperations() -> [Fault] {
    let text = logText
    var seen: [String: Int] = [:]
    var out: [Fault] = []
    for line in text.split(separator: "\n") {
      guard let r = line.range(of: "[lazyfs.ops]: lfs_") else { continue }
      let call = line[r.upperBound...]
      guard let paren = call.firstIndex(of: "(") else { continue }
      let op = String(call[..<paren])
      guard ["write", "fsync", "rename"].contains(op) else { continue }
      let args = call[call.index(after: paren)...].dropLast()
      var fields: [String: String] = [:]
      for a in args.split(separator: ",") {
        let kv = a.split(separator: "=", maxSplits: 1)
        if kv.count == 2 { fields[kv[0].trimmingCharacters(in: .whitespaces)] = String(kv[1]) }
      }
      guard let path = fields["path"] ?? fields["from"] else { continue }
      let key = op + " " + path + " " + (fields["to"] ?? "")
      seen[key, default: 0] += 1
      out.append(Fault(op: op, path: path, to: fields["to"], timing: "after", occurrence: seen[key]!))
    }
    return out
  }
}
