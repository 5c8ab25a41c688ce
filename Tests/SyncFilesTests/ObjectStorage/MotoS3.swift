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
    daemon = try Daemon(
      "/usr/bin/env",
      [
        "INITIAL_NO_AUTH_ACTION_COUNT=3", "python3", Self.support + "moto_s3_server.py", "-H", "127.0.0.1", "-p",
        "\(port)",
      ],
      port: port, name: "moto_server", log: "/dev/null")
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
