import Foundation

/// A test folder holding one manifest (`m.yaml`, root `out`, journal `state/journal`)
/// and the built binary run on it.
protocol ApplyWorkspace {
  var dir: String { get }
}

extension ApplyWorkspace {
  /// Writes m.yaml with these file entries (YAML flow mappings, one per line).
  func manifest(_ files: [String], extra: String = "") {
    write(
      """
      version: 1
      name: m
      root: out
      journal: state/journal
      \(extra)
      files:
      \(files.map { "  - " + $0 }.joined(separator: "\n"))

      """, to: dir + "/m.yaml")
  }

  func apply(_ args: [String] = [], env: [String: String] = [:]) throws -> ApplyResult {
    try ApplyResult(run(["apply", "--format", "json"] + args + ["m.yaml"], cwd: dir, env: env))
  }

  func out(_ name: String) -> [UInt8]? { readBytes(dir + "/out/" + name) }
  func partialExists(_ name: String) -> Bool {
    FileManager.default.fileExists(atPath: dir + "/out/." + name + ".syncfiles-partial")
  }
}
