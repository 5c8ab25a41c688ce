import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Samples of a metrics file as prometheus_client's own parser reads it.
struct ParsedMetrics {
  var samples: [String: Double]
  var types: [String: String]

  init(file: String) throws {
    let r = try run([packageRoot + "/Tests/SyncFilesTests/Support/promparse.py", file], tool: "python3")
    guard r.status == 0 else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: r.stderr]) }
    let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] ?? [:]
    samples = (o["samples"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.doubleValue }
    types = o["types"] as? [String: String] ?? [:]
  }

  subscript(_ name: String, task task: String? = nil) -> Double? {
    samples[task.map { "\(name){task=\($0)}" } ?? name]
  }
}

/// SPEC §8.4 metrics: a Prometheus text file after every apply.
@Suite final class MetricsTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  var metricsFile: String { dir + "/metrics/syncfiles.prom" }

  @Test func everyApplyWritesTheFileAParserReads() throws {
    let a = testBytes(5_000, seed: 1)
    server.put("a.bin", a)
    server.routes(["/a.bin": ["file": "a.bin", "etag": "\"v1\""], "/gone.bin": ["status": 404]])
    manifest(
      [
        "{id: a, url: '\(server.base)/a.bin', destination: a.bin, headers: {Authorization: 'Bearer ${TOKEN}'}}",
        "{id: gone, url: '\(server.base)/gone.bin', destination: gone.bin, retry: {attempts: 1}}",
      ], extra: "metrics: metrics/syncfiles.prom")
    let env = ["TOKEN": "tok-3b1f9e"]
    let before = Date().timeIntervalSince1970.rounded(.down)
    let first = try apply(env: env)
    #expect(first.run.status == 1)
    var m = try ParsedMetrics(file: metricsFile)
    #expect(m["syncfiles_last_run_exit_code"] == 1)
    #expect((m["syncfiles_last_run_timestamp_seconds"] ?? 0) >= before)
    #expect(m["syncfiles_last_run_bytes_transferred"] == 5_000)
    #expect((m["syncfiles_last_run_duration_seconds"] ?? -1) >= 0)
    #expect(m["syncfiles_task_bytes", task: "m/a"] == 5_000)
    #expect((m["syncfiles_task_last_success_timestamp_seconds", task: "m/a"] ?? 0) >= before)
    #expect(m["syncfiles_task_last_success_timestamp_seconds", task: "m/gone"] == 0)
    #expect(m["syncfiles_task_consecutive_failures", task: "m/gone"] == 1)
    #expect(m["syncfiles_task_consecutive_failures", task: "m/a"] == 0)
    #expect(m.types["syncfiles_task_bytes"] == "gauge")

    let second = try apply(["--force"], env: env)
    #expect(second.run.status == 1)
    m = try ParsedMetrics(file: metricsFile)
    #expect(m["syncfiles_task_consecutive_failures", task: "m/gone"] == 2)
    #expect(m["syncfiles_last_run_bytes_transferred"] == 0, "the 304 moved nothing")
    #expect(m["syncfiles_task_bytes", task: "m/a"] == 5_000, "the installed size stays")

    let text = try String(contentsOfFile: metricsFile, encoding: .utf8)
    #expect(!text.contains("tok-3b1f9e"))
    let left = try FileManager.default.contentsOfDirectory(atPath: dir + "/metrics")
    #expect(left == ["syncfiles.prom"], "no temporary file left: \(left)")
    let perms = try FileManager.default.attributesOfItem(atPath: metricsFile)[.posixPermissions] as? Int
    #expect(perms == 0o644)
  }

  @Test func theFlagOverridesTheKeyAndAStoppedRunIsRecorded() throws {
    server.put("slow.bin", testBytes(200_000, seed: 2))
    server.routes(["/slow.bin": ["file": "slow.bin", "etag": "\"s\"", "trickle_bps": 20_000]])
    manifest(["{id: slow, url: '\(server.base)/slow.bin', destination: slow.bin}"], extra: "metrics: metrics/key.prom")
    let r = try apply(["--deadline", "1s", "--metrics", "flag.prom"])
    #expect(r.run.status == 75)
    #expect(!FileManager.default.fileExists(atPath: dir + "/metrics/key.prom"))
    let m = try ParsedMetrics(file: dir + "/flag.prom")
    #expect(m["syncfiles_last_run_exit_code"] == 75)
    #expect(m["syncfiles_task_bytes", task: "m/slow"] == 0, "nothing installed yet")
    #expect((m["syncfiles_task_last_run_bytes_transferred", task: "m/slow"] ?? 0) > 0)
  }

  @Test func aMetricsFileThatCannotBeWrittenIsAWarningNotAFailure() throws {
    server.put("a.bin", testBytes(100, seed: 3))
    server.routes(["/a.bin": ["file": "a.bin"]])
    write("not a folder", to: dir + "/blocker")
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"], extra: "metrics: blocker/m.prom")
    let r = try apply()
    #expect(r.run.status == 0 && r.outcome("m/a") == "installed")
    #expect(
      r.run.stderr.contains("warning: cannot create metrics file \(dir)/blocker/m.prom: Not a directory"),
      "\(r.run.stderr)")
  }

  @Test func labelValuesAreEscaped() {
    #expect(RunMetrics.labels(["task": "a\"b\\c\nd"]) == #"{task="a\"b\\c\nd"}"#)
    #expect(RunMetrics.decimal(1.5) == "1.500" && RunMetrics.decimal(0.0004) == "0.000")
  }
}
