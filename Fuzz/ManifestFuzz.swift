import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
// libFuzzer entry point over the manifest loader: YAML parsing, every
// validation rule, ${VAR} expansion and the session checks. Built by
// Fuzz/run.sh with `swiftc -sanitize=fuzzer,address` together with the
// loader's sources (SwiftPM cannot link a fuzzer executable, see DESIGN.md).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let loader = ManifestLoader(
    environment: ["DATA_TOKEN": "secret-token", "HOME": "/home/fuzz"],
    plugins: PluginLocator(searchPath: []), workingDirectory: "/fuzz")
  let (manifest, diagnostics) = loader.decode(bytes, path: "fuzz.yaml", absolutePath: "/fuzz/fuzz.yaml")
  // Exercise what the CLI does with the results, too.
  var set = ManifestSet()
  if let manifest { set.manifests = [manifest] }
  set.diagnostics = diagnostics
  loader.checkSession(&set)
  set.diagnostics += ManifestLoader.destinationConflicts(set)
  let report = ValidationReport(set: set)
  _ = report.json.serialized()
  for d in report.sortedDiagnostics {
    _ = ValidationReport.text(d, sourceLine: "source line")
    // A secret from the environment must never reach a diagnostic.
    if d.message.contains("secret-token") { fatalError("secret leaked into a diagnostic: \(d)") }
  }
  return 0
}
