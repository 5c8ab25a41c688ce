import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The JSON Schema in manifests/ (for editors) and the parser (for syncfiles)
/// must give the same verdict on every sample and every invalid manifest.
/// The schema side runs Python's jsonschema (Draft 2020-12), which
/// `.ci/run` and the README's test command install.
@Suite struct SchemaAgreementTests {
  static let samples = packageRoot + "/manifests/samples"
  static let invalid = packageRoot + "/manifests/invalid"

  func yamlFiles(_ dir: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".yaml") }.sorted()
      .map { dir + "/" + $0 }
  }

  func schemaVerdicts(_ files: [String]) throws -> [String: Bool] {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", packageRoot + "/manifests/check-schema.py"] + files
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0, "check-schema.py failed: is python3 with jsonschema and PyYAML installed?")
    return try JSONSerialization.jsonObject(with: data) as? [String: Bool] ?? [:]
  }

  func parserVerdict(_ file: String) -> Bool {
    let loader = ManifestLoader(
      environment: ["DATA_TOKEN": "t", "MODELS_API_KEY": "k"], plugins: PluginLocator(searchPath: []),
      workingDirectory: "/")
    return !loader.load(paths: [file]).hasErrors
  }

  @Test func samplesAreValidForBoth() throws {
    let files = try yamlFiles(Self.samples) + [packageRoot + "/Examples/quickstart/quickstart.yaml"]
    #expect(files.count >= 5)
    let schema = try schemaVerdicts(files)
    for f in files {
      #expect(parserVerdict(f), "parser rejects \(f)")
      #expect(schema[f] == true, "schema rejects \(f)")
    }
  }

  @Test func invalidManifestsAreInvalidForBoth() throws {
    let files = try yamlFiles(Self.invalid)
    #expect(files.count >= 15)
    let schema = try schemaVerdicts(files)
    for f in files {
      #expect(!parserVerdict(f), "parser accepts \(f)")
      #expect(schema[f] == false, "schema accepts \(f)")
    }
  }
}
