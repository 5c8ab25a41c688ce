import Foundation
import Testing

/// `plan --remote` against a real HTTP server on loopback (Python's
/// http.server: HEAD with Content-Length and Last-Modified, 304 for
/// If-Modified-Since), through libcurl.
@Suite final class RemotePlanTests {
  let dir = makeTempDir()
  var server: Process?
  let log = Pipe()
  deinit {
    stopServer()
    try? FileManager.default.removeItem(atPath: dir)
  }

  /// SIGKILL: the child may inherit a blocked SIGTERM from the test runner's threads.
  func stopServer() {
    guard let p = server, p.isRunning else { return }
    kill(p.processIdentifier, SIGKILL)
    p.waitUntilExit()
  }

  /// Starts the server on a free loopback port and returns the port.
  func startServer() throws -> Int {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", dir + "/www"]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = log
    try p.run()
    server = p
    // Only the child writes: close our copies so reads see end-of-file when it exits.
    try out.fileHandleForWriting.close()
    try log.fileHandleForWriting.close()
    // "Serving HTTP on 127.0.0.1 port 43567 (http://127.0.0.1:43567/) ..."
    let text = firstLine(of: out)
    let words = text.split(separator: " ")
    guard let i = words.firstIndex(of: "port"), i + 1 < words.count, let port = Int(words[i + 1]) else {
      throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no port in: \(text)"])
    }
    return port
  }

  @Test func refinesSizesAndChangedUnchangedWithoutBodies() throws {
    write(String(repeating: "x", count: 1000), to: dir + "/www/a.bin")
    write(String(repeating: "y", count: 300), to: dir + "/www/b.bin")
    // b is already present locally, newer than the server's copy: a conditional HEAD gets 304.
    write(String(repeating: "y", count: 300), to: dir + "/out/b.bin")
    try FileManager.default.setAttributes(
      [.modificationDate: Date().addingTimeInterval(3600)], ofItemAtPath: dir + "/out/b.bin")
    let port = try startServer()
    write(
      """
      version: 1
      name: m
      root: out
      journal: state/journal
      files:
        - {id: a, url: 'http://127.0.0.1:\(port)/a.bin', destination: a.bin, expected_bytes: 1, max_bytes: 1MiB}
        - {id: b, url: 'http://127.0.0.1:\(port)/b.bin', destination: b.bin, max_bytes: 1MiB}
        - {id: c, url: 'http://127.0.0.1:\(port)/missing.bin', destination: c.bin, max_bytes: 1MiB}

      """, to: dir + "/m.yaml")
    let offline = try run(["plan", "--format", "json", "m.yaml"], cwd: dir)
    let remote = try run(["plan", "--remote", "--format", "json", "m.yaml"], cwd: dir)
    #expect(remote.status == 0, "\(remote.stderr)")
    func tasks(_ r: Run) throws -> [String: [String: Any]] {
      let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
      return Dictionary(uniqueKeysWithValues: (o["tasks"] as! [[String: Any]]).map { ($0["id"] as! String, $0) })
    }
    let before = try tasks(offline)
    let after = try tasks(remote)
    #expect(before["m/a"]?["bytes_to_transfer"] as? Int == 1)
    #expect(after["m/a"]?["bytes_to_transfer"] as? Int == 1000)
    #expect(before["m/b"]?["action"] as? String == "revalidate")
    #expect(after["m/b"]?["reason"] as? String == "unchanged on the server (304): nothing to transfer")
    #expect(after["m/c"]?["reason"] as? String == "destination missing (remote check failed: HTTP 404)")
    // Nothing was written and no body was asked for.
    #expect(!FileManager.default.fileExists(atPath: dir + "/out/a.bin"))
    stopServer()
    let requests = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      .split(separator: "\n").filter { $0.contains("HTTP/1.1\"") }
    #expect(requests.count == 3, "\(requests)")
    #expect(requests.allSatisfy { $0.contains("\"HEAD /") }, "\(requests)")
  }
}
