import Foundation

/// The fault-injecting HTTP server (faultserver.py beside this file) on a
/// free loopback port, in a temp folder of its own. Routes are rewritten
/// between requests to change content, validators and faults; every request
/// is logged for assertions.
final class FaultServer {
  let dir: String
  let port: Int
  private let process: Process

  init() throws {
    dir = makeTempDir()
    try FileManager.default.createDirectory(atPath: dir + "/data", withIntermediateDirectories: true)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-u", packageRoot + "/Tests/SyncFilesTests/Support/faultserver.py", dir]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle(forWritingAtPath: "/dev/null")
    try p.run()
    try out.fileHandleForWriting.close()
    let text = firstLine(of: out)
    guard text.hasPrefix("port "), let port = Int(text.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
    else {
      p.terminate()
      throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "fault server said: \(text)"])
    }
    self.port = port
    process = p
  }

  deinit {
    // SIGKILL: the child may inherit a blocked SIGTERM from the test runner's threads.
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    try? FileManager.default.removeItem(atPath: dir)
  }

  var base: String { "http://127.0.0.1:\(port)" }

  /// Stores a body the routes can serve.
  func put(_ name: String, _ bytes: [UInt8]) {
    _ = FileManager.default.createFile(atPath: dir + "/data/" + name, contents: Data(bytes))
  }

  /// Replaces every route (atomically: the server re-reads them per request).
  func routes(_ r: [String: [String: Any]]) {
    let data = try! JSONSerialization.data(withJSONObject: r)
    _ = FileManager.default.createFile(atPath: dir + "/routes.tmp", contents: data)
    rename(dir + "/routes.tmp", dir + "/routes.json")
  }

  struct Request {
    var n: Int
    var method: String
    var path: String
    var headers: [String: String]
    /// A POST's body, as text.
    var body = ""
    /// Requests the server was serving when this one arrived, itself included.
    var inFlight = 0
  }

  /// Requests seen so far, optionally for one path.
  func requests(_ path: String? = nil) -> [Request] {
    guard let text = try? String(contentsOfFile: dir + "/requests.jsonl", encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap { line in
      guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
      let r = Request(
        n: o["n"] as? Int ?? 0, method: o["method"] as? String ?? "", path: o["path"] as? String ?? "",
        headers: o["headers"] as? [String: String] ?? [:], body: o["body"] as? String ?? "",
        inFlight: o["in_flight"] as? Int ?? 0)
      return path == nil || r.path == path ? r : nil
    }
  }
}

/// Deterministic bytes for test bodies (a different `seed` gives a different version).
func testBytes(_ count: Int, seed: UInt64) -> [UInt8] {
  var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
  return (0..<count).map { _ in
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    return UInt8(truncatingIfNeeded: x)
  }
}

func readBytes(_ path: String) -> [UInt8]? {
  FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

func sha256Hex(_ bytes: [UInt8]) -> String {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  p.arguments = ["sha256sum"]
  let i = Pipe()
  let o = Pipe()
  p.standardInput = i
  p.standardOutput = o
  try! p.run()
  i.fileHandleForWriting.write(Data(bytes))
  try! i.fileHandleForWriting.close()
  let out = o.fileHandleForReading.readDataToEndOfFile()
  p.waitUntilExit()
  return String(String(decoding: out, as: UTF8.self).prefix(64))
}

/// The JSON object `apply --format json` printed, and its tasks by id.
/// An apply whose stdout was no JSON object: what it printed instead.
struct NotJSON: Error, CustomStringConvertible {
  var status: Int32
  var stdout: String
  var stderr: String
  var description: String { "exit \(status), stdout not JSON: \(stdout.prefix(500))\nstderr: \(stderr.prefix(2000))" }
}

struct ApplyResult {
  var run: Run
  var object: [String: Any]
  var tasks: [String: [String: Any]]

  init(_ run: Run) throws {
    self.run = run
    guard let parsed = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] else {
      throw NotJSON(status: run.status, stdout: run.stdout, stderr: run.stderr)
    }
    object = parsed
    let list = object["tasks"] as? [[String: Any]] ?? []
    tasks = Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as! String, $0) })
  }

  func outcome(_ id: String) -> String? { tasks[id]?["outcome"] as? String }
  func int(_ id: String, _ key: String) -> Int? { tasks[id]?[key] as? Int }
  func string(_ id: String, _ key: String) -> String? { tasks[id]?[key] as? String }
  /// Tasks with this outcome.
  func count(_ outcome: String) -> Int { tasks.values.filter { $0["outcome"] as? String == outcome }.count }
}
