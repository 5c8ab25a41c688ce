import Foundation

/// moto's S3-compatible server on a free loopback port, with signature
/// checking on (through `moto_s3_server.py`, which checks percent-encoded
/// query values as S3 does), and a user whose keys may do anything.
final class MotoS3 {
  let port: Int
  private var daemon: Daemon!
  private let dir = makeTempDir()
  let accessKey: String
  let secretKey: String
  var endpoint: String { "http://127.0.0.1:\(port)" }
  private static var support: String { packageRoot + "/Tests/SyncFilesTests/Support/" }

  init() throws {
    port = try freePort()
    // The first three calls (user, policy, key) are unsigned; every later one is checked.
    // Its request log (werkzeug's, on stderr) is kept: tests count the requests a run made.
    let log = dir + "/moto.log"
    daemon = try Daemon(
      "/bin/sh",
      [
        "-c",
        "INITIAL_NO_AUTH_ACTION_COUNT=3 exec python3 '\(Self.support)moto_s3_server.py' -H 127.0.0.1 -p \(port) 2>>'\(log)'",
      ],
      port: port, name: "moto_server", log: log)
    let keys =
      try shell(["python3", Self.support + "s3fixture.py", "http://127.0.0.1:\(port)", "keys"])
      .split(separator: "\n").last.map { $0.split(separator: " ").map(String.init) } ?? []
    guard keys.count == 2 else {
      throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "moto gave no keys: \(keys)"])
    }
    (accessKey, secretKey) = (keys[0], keys[1])
  }

  /// Puts `bytes` at `key` in `bucket` (made if needed), with its SHA-256
  /// stored by the server when `checksum`; returns the ETag.
  @discardableResult
  func put(_ bucket: String, _ key: String, _ bytes: [UInt8], checksum: Bool = false) throws -> String {
    let file = dir + "/upload"
    write(bytes, to: file)
    let out = try shell(
      ["python3", Self.support + "s3fixture.py", endpoint, "put", accessKey, secretKey, bucket, key, file]
        + (checksum ? ["sha256"] : []))
    return out.split(separator: "\n").last.map(String.init) ?? ""
  }

  /// Puts `count` objects `PREFIX0000.bin`, … of `size` bytes each (byte i
  /// of object n is (i × 31 + n) mod 251), in one call.
  func putMany(_ bucket: String, prefix: String, count: Int, size: Int) throws {
    _ = try shell(
      [
        "python3", Self.support + "s3fixture.py", endpoint, "putmany", accessKey, secretKey, bucket, prefix, "\(count)",
        "\(size)",
      ])
  }

  /// The bytes `putMany` gave object `n`.
  static func manyBytes(_ n: Int, size: Int) -> [UInt8] { (0..<size).map { UInt8(($0 * 31 + n) % 251) } }

  func delete(_ bucket: String, _ key: String) throws {
    _ = try shell(["python3", Self.support + "s3fixture.py", endpoint, "delete", accessKey, secretKey, bucket, key])
  }

  /// The request lines the server has logged so far (`GET /data?list-type=2… HTTP/1.1`).
  func requestLines() -> [String] {
    let log = (try? String(contentsOfFile: dir + "/moto.log", encoding: .utf8)) ?? ""
    return log.split(separator: "\n").compactMap { line in
      guard let open = line.firstRange(of: "\""), let close = line[open.upperBound...].firstRange(of: "\"") else {
        return nil
      }
      return String(line[open.upperBound..<close.lowerBound])
    }
  }

  /// The variables a node sets to reach this server (no real ~/.aws read).
  func environment(home: String) -> [String: String] {
    [
      "AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey, "AWS_ENDPOINT_URL": endpoint,
      "AWS_REGION": "us-east-1", "HOME": home, "AWS_PROFILE": "", "AWS_SESSION_TOKEN": "",
    ]
  }

  deinit {
    daemon = nil
    try? FileManager.default.removeItem(atPath: dir)
  }
}
