import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Decodes manifest text as if it were the file /m/test.yaml (no disk, no plugins).
func decode(
  _ yaml: String, env: [String: String] = [:], plugins: [String] = [], path: String = "/m/test.yaml"
) -> (Manifest?, [Diagnostic]) {
  let loader = ManifestLoader(
    environment: env, plugins: PluginLocator(searchPath: plugins), workingDirectory: "/m")
  return loader.decode(Array(yaml.utf8), path: "test.yaml", absolutePath: path)
}

/// A manifest with one file entry and `extra` lines added to that entry
/// (each line indented by 4 spaces; the first extra line is line 8, column 5).
func entry(_ extra: String...) -> String { entry(lines: extra) }

func entry(lines extra: [String]) -> String {
  var s = """
    version: 1
    name: t
    root: /srv
    files:
      - id: a
        url: https://example.org/a
        destination: a.bin

    """
  for line in extra { s += "    " + line + "\n" }
  return s
}

func errors(_ d: [Diagnostic]) -> [Diagnostic] { d.filter { $0.severity == .error } }
func warnings(_ d: [Diagnostic]) -> [Diagnostic] { d.filter { $0.severity == .warning } }

/// A fresh temporary folder, removed by the caller with `cleanup`.
func makeTempDir() -> String {
  let dir = FileManager.default.temporaryDirectory
    .appendingPathComponent("syncfiles-tests-\(UUID().uuidString)").path
  try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
  return dir
}

func write(_ text: String, to path: String) {
  write(Array(text.utf8), to: path)
}

func write(_ bytes: [UInt8], to path: String) {
  let folder = (path as NSString).deletingLastPathComponent
  try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
  try! Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The package's root folder (this file is Tests/SyncFilesTests/Support/TestSupport.swift).
let packageRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<4 { url.deleteLastPathComponent() }
  return url.path
}()

/// Reads a child's output until its first newline (or end of file).
func firstLine(of pipe: Pipe) -> String {
  var text = ""
  while !text.contains("\n") {
    let chunk = pipe.fileHandleForReading.availableData
    if chunk.isEmpty { break }
    text += String(decoding: chunk, as: UTF8.self)
  }
  return text
}

/// A seeded generator, so a test's random cases repeat from run to run.
typealias SplitMix = SplitMix64
