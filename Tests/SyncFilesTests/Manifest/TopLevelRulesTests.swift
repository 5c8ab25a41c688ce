import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

private let oneFile = """
  files:
    - id: a
      url: https://example.org/a
      destination: a.bin
      sha256: \(String(repeating: "0", count: 64))
      expected_bytes: 10

  """

private func top(_ lines: String) -> String { "version: 1\n" + lines + oneFile }

@Suite struct TopLevelRulesTests {
  @Test func version() {
    var (_, d) = decode("version: 2\n" + oneFile)
    #expect(errors(d).first?.message == "unsupported manifest version 2: this syncfiles reads version 1")
    #expect(errors(d).first?.mark == SourceMark(line: 1, column: 10))
    (_, d) = decode("version: '1'\n" + oneFile)
    #expect(errors(d).first?.message.contains("must be the number 1") == true)
    (_, d) = decode(oneFile)
    #expect(errors(d).first?.message.contains("missing required key 'version'") == true)
    (_, d) = decode("version: 1\n" + oneFile)
    #expect(d.isEmpty, "\(d)")
  }

  @Test func nameDefaultsToTheFileName() throws {
    var (m, d) = decode(top(""), path: "/m/datasets.yaml")
    #expect(m?.name == "datasets")
    #expect(m?.files.first?.qualifiedID == "datasets/a")
    (m, d) = decode(top("name: mirror\n"))
    #expect(m?.files.first?.qualifiedID == "mirror/a")
    (m, d) = decode(top("name: 'a b'\n"))
    #expect(errors(d).first?.mark == SourceMark(line: 2, column: 7))
    (m, d) = decode(top(""), path: "/m/my data.yaml")
    #expect(errors(d).first?.message.contains("taken from the file name") == true)
  }

  @Test func rootAndJournalResolveAgainstTheManifestFolder() throws {
    var (m, _) = decode(top("root: mirror/../out\njournal: state/journal\n"), path: "/etc/sf/m.yaml")
    #expect(m?.root == "/etc/sf/out")
    #expect(m?.journal == "/etc/sf/state/journal")
    #expect(m?.files.first?.destinationPath == "/etc/sf/out/a.bin")
    (m, _) = decode(top(""), path: "/etc/sf/m.yaml")
    #expect(m?.root == "/etc/sf")
    (m, _) = decode(top("root: ~/mirror\n"), env: ["HOME": "/home/u"])
    #expect(m?.root == "/home/u/mirror")
    (m, _) = decode(top("root: ${DATA}/x\n"), env: ["DATA": "/data"])
    #expect(m?.root == "/data/x")
  }

  @Test func unknownTopLevelKeys() {
    var (_, d) = decode(top("limit: {parallel: 2}\n"))
    #expect(errors(d).first?.message == "unknown key 'limit' in the manifest; did you mean 'limits'?")
    #expect(errors(d).first?.mark == SourceMark(line: 2, column: 1))
    (_, d) = decode(top("schedule: every 6h\n"))
    #expect(errors(d).first?.message.contains("belongs in a file entry") == true)
    (_, d) = decode(top("zzz: 1\n"))
    #expect(errors(d).first?.message.contains("expected one of: version") == true)
  }

  @Test func filesMustBeAList() {
    var (_, d) = decode("version: 1\nfiles: {a: 1}\n")
    #expect(errors(d).first?.message.contains("files must be a list") == true)
    (_, d) = decode("version: 1\n")
    #expect(errors(d).first?.message.contains("missing required key 'files'") == true)
    (_, d) = decode("version: 1\nfiles: []\n")
    #expect(errors(d).isEmpty && warnings(d).first?.message.contains("files is empty") == true)
    (_, d) = decode("- a\n- b\n")
    #expect(errors(d).first?.message == "the manifest must be a mapping, found a list")
    (_, d) = decode("")
    #expect(errors(d).first?.message.contains("manifest is empty") == true)
  }

  @Test func limits() throws {
    var (m, d) = decode(top("limits: { parallel: 4, per_host: 2, rate: 20MB/s, deadline: 30m }\n"))
    #expect(errors(d).isEmpty)
    #expect(m?.limits.parallel == 4 && m?.limits.perHost == 2)
    #expect(m?.limits.rate == .constant(20_000_000) && m?.limits.deadline == .minutes(30))
    (_, d) = decode(top("limits: { parallel: 0 }\n"))
    #expect(errors(d).first?.mark == SourceMark(line: 2, column: 21))
    (_, d) = decode(top("limits: { rate: fast }\n"))
    #expect(errors(d).first?.message.contains("limits.rate: malformed size") == true)
    (_, d) = decode(top("limits: { deadline: 30 }\n"))
    #expect(errors(d).first?.message.contains("needs a unit") == true)
    (_, d) = decode(top("limits: { parallel: 2, per_host: 4 }\n"))
    #expect(warnings(d).first?.message.contains("has no effect") == true)
  }

  @Test func sessionLimitsMostRestrictiveWins() {
    var a = Limits()
    a.parallel = 8
    a.rate = .constant(1000)
    var b = Limits()
    b.parallel = 2
    b.deadline = .minutes(5)
    let m = Limits.merged([a, b, Limits()])
    #expect(m.parallel == 2 && m.rate == .constant(1000) && m.deadline == .minutes(5) && m.perHost == nil)
  }

  @Test func conditionsAndDiscretionary() {
    var (m, d) = decode(
      top("conditions: { window: \"22:00-02:00\", ac_power: true }\n")
        .replacingFirst("expected_bytes: 10", with: "expected_bytes: 10\n    discretionary: true"))
    #expect(errors(d).isEmpty && warnings(d).isEmpty, "\(d)")
    #expect(m?.conditions.window?.description == "22:00-02:00" && m?.conditions.acPower == true)
    (_, d) = decode(top("conditions: { window: \"2am-6am\" }\n"))
    #expect(errors(d).first?.message.contains("HH:MM-HH:MM") == true)
    (_, d) = decode(top("conditions: { ac_power: 1 }\n"))
    #expect(errors(d).first?.message.contains("true or false") == true)
    (_, d) = decode(top("").replacingFirst("expected_bytes: 10", with: "expected_bytes: 10\n    discretionary: true"))
    #expect(warnings(d).first?.message.contains("discretionary has no effect") == true)
  }

  @Test func hooks() {
    var (m, d) = decode(top("hooks: { on_complete: [/usr/local/bin/notify, datasets] }\n"))
    #expect(errors(d).isEmpty)
    #expect(m?.onComplete == ["/usr/local/bin/notify", "datasets"])
    (_, d) = decode(top("hooks: { on_complete: notify datasets }\n"))
    #expect(errors(d).first?.message.contains("[\"notify\", \"datasets\"]") == true)
    (_, d) = decode(top("hooks: { on_change: [x] }\n"))
    #expect(
      errors(d).first?.message == "unknown key 'on_change' in hooks; 'on_change' belongs in a file entry (under files:)"
    )
  }

  @Test func defaultsApplyUnlessTheFileSetsThem() throws {
    let text = """
      version: 1
      defaults:
        schedule: every 6h
        retry: { attempts: 5, backoff: 30s, max_backoff: 1h }
        headers: { Accept: text/csv, X-Team: data }
        expected_bytes: 1KiB
        max_bytes: 1MiB
      files:
        - id: a
          url: https://example.org/a
          destination: a
        - id: b
          url: https://example.org/b
          destination: b
          schedule: once
          retry: { attempts: 3 }
          headers: { accept: application/json }

      """
    let (m, d) = decode(text)
    #expect(errors(d).isEmpty, "\(d)")
    let a = try #require(m?.files.first)
    let b = try #require(m?.files.last)
    #expect(a.schedule == .every(.hours(6)) && b.schedule == .once)
    #expect(a.retry == RetryPolicy(attempts: 5, backoff: .seconds(30), maxBackoff: .hours(1)))
    // Mapping-valued keys merge key by key.
    #expect(b.retry == RetryPolicy(attempts: 3, backoff: .seconds(30), maxBackoff: .hours(1)))
    #expect(b.headers.map { "\($0.name)=\($0.value)" } == ["accept=application/json", "X-Team=data"])
    #expect(a.expectedBytes == 1024 && b.maxBytes == 1 << 20)
  }

  @Test func defaultsCannotNameOneFile() {
    let (_, d) = decode("version: 1\ndefaults:\n  url: https://x/\n  destinaton: a\n" + oneFile)
    #expect(
      errors(d).map(\.message) == [
        "'url' names one file and cannot have a default; set it in each file entry",
        "unknown key 'destinaton' in defaults; did you mean 'destination'?",
      ])
  }

  @Test func defaultsErrorsAreReportedOnce() {
    let (_, d) = decode(
      "version: 1\ndefaults:\n  schedule: every 6\n" + oneFile
        + "  - id: b\n    url: https://example.org/b\n    destination: b\n")
    #expect(errors(d).count == 1)
    #expect(errors(d).first?.mark == SourceMark(line: 3, column: 13))
  }

  @Test func duplicateKeys() {
    let (_, d) = decode("version: 1\nversion: 1\n" + oneFile)
    #expect(errors(d).first?.message == "duplicate key 'version' in the manifest (first set at line 1)")
  }

  @Test func anchorsAndMergeKeysInManifests() throws {
    let text = """
      version: 1
      x-common: &common
        schedule: every 6h
      files:
        - <<: *common
          id: a
          url: https://example.org/a
          destination: a

      """
    // Unknown top-level keys are errors, even ones used as anchors' homes.
    let (_, d) = decode(text)
    #expect(errors(d).first?.message.contains("unknown key 'x-common'") == true)
    let ok = text.replacingFirst(
      "x-common: &common\n  schedule: every 6h\n", with: "defaults: &common\n  schedule: every 6h\n")
    let (m, d2) = decode(ok)
    #expect(errors(d2).isEmpty, "\(d2)")
    #expect(m?.files.first?.schedule == .every(.hours(6)))
  }
}

@Suite struct SecretsTests {
  @Test func headerValuesExpandFromTheEnvironmentAndNeverPrint() throws {
    let secret = "s3cr3t-value-XYZ"
    let (m, d) = decode(entry("headers: { Authorization: \"Bearer ${DATA_TOKEN}\" }"), env: ["DATA_TOKEN": secret])
    #expect(errors(d).isEmpty)
    let h = try #require(m?.files.first?.headers.first)
    #expect(h.value.revealed == "Bearer " + secret)
    #expect(h.value.hasSecret)
    #expect("\(h.value)" == "Bearer ${DATA_TOKEN}")
    #expect(String(reflecting: h.value) == "Bearer ${DATA_TOKEN}")
    #expect(!String(describing: h).contains(secret))
    #expect(!String(describing: m!).contains(secret))
    var dumped = ""
    dump(m!, to: &dumped)
    #expect(!dumped.contains(secret))
  }

  @Test func unsetVariablesPointAtTheReference() {
    let (_, d) = decode(entry("headers: { Authorization: \"Bearer ${DATA_TOKEN}\" }"))
    #expect(errors(d).first?.message == "environment variable DATA_TOKEN is not set (used in header 'Authorization')")
    // `    headers: { Authorization: "Bearer ${` — the `$` is at column 39.
    #expect(errors(d).first?.mark == SourceMark(line: 8, column: 39))
  }

  @Test func urlsExpandButDisplayTheTemplate() throws {
    let (m, d) = decode(
      entry().replacingFirst("url: https://example.org/a", with: "url: https://example.org/a?key=${K}"),
      env: ["K": "hidden"])
    #expect(errors(d).isEmpty)
    let u = try #require(m?.files.first?.url)
    #expect(u.text.revealed == "https://example.org/a?key=hidden")
    #expect(u.display == "https://example.org/a?key=${K}")
    #expect(u.origin == "https://example.org:443")
  }

  @Test func escapesAndMalformedReferences() {
    var (m, d) = decode(entry("headers: { X-Literal: \"cost $${PRICE}\" }"))
    #expect(m?.files.first?.headers.first?.value.revealed == "cost ${PRICE}")
    (_, d) = decode(entry("headers: { X-A: \"${UNCLOSED\" }"))
    #expect(errors(d).first?.message.contains("not closed") == true)
    (_, d) = decode(entry("headers: { X-A: \"${1BAD}\" }"))
    #expect(errors(d).first?.message.contains("not a variable name") == true)
  }

  @Test func headerInjectionThroughAVariableIsRefusedWithoutPrintingIt() {
    let (_, d) = decode(entry("headers: { X-A: \"${V}\" }"), env: ["V": "ok\r\nX-Evil: injected-SECRET"])
    #expect(errors(d).first?.message.contains("line break") == true)
    #expect(!d.contains { $0.message.contains("SECRET") })
  }

  /// Found by the fuzzer: a variable's value forming part of a URL's scheme,
  /// host or port must not be quoted back in the error.
  @Test func partsOfURLsMadeFromSecretsAreNotQuoted() {
    let secret = "secret-token"
    let urls = [
      "${T}htt-us://example:verify-r--", "https://${T}@/a", "https://ex${T}:0/a", "https://h:${T}/a",
      "file://${T}/a", "https://h/${T} x", "s3${T}://b/k",
    ]
    for u in urls {
      let (_, d) = decode(entry().replacingFirst("url: https://example.org/a", with: "url: '\(u)'"), env: ["T": secret])
      #expect(!errors(d).isEmpty, "\(u) accepted")
      #expect(!d.contains { $0.message.contains(secret) }, "\(u): \(d)")
    }
  }

  @Test func literalSecretsWarn() {
    var (_, d) = decode(entry("headers: { Authorization: \"Bearer abc\" }"))
    #expect(warnings(d).contains { $0.message.contains("secret written in the manifest") })
    (_, d) = decode(entry("headers: { Authorization: \"Bearer ${T}\" }"), env: ["T": "x"])
    #expect(!warnings(d).contains { $0.message.contains("secret written in the manifest") })
  }

  @Test func passwordsInURLsAreHiddenFromDisplay() throws {
    let (m, d) = decode(entry().replacingFirst("url: https://example.org/a", with: "url: https://u:pw@example.org/a"))
    #expect(warnings(d).contains { $0.message.contains("password in clear") })
    #expect(m?.files.first?.url.display == "https://u:***@example.org/a")
  }
}

@Suite struct WarningTests {
  @Test func frequentSchedules() {
    var (_, d) = decode(entry("schedule: every 5m"))
    #expect(warnings(d).contains { $0.message.contains("more often than 15m") && $0.mark?.line == 8 })
    (_, d) = decode(entry("schedule: \"*/10 * * * *\""))
    #expect(warnings(d).contains { $0.message.contains("every 10m") })
    (_, d) = decode(entry("schedule: every 15m", "sha256: " + String(repeating: "0", count: 64), "expected_bytes: 1"))
    #expect(warnings(d).isEmpty, "\(d)")
  }

  @Test func unboundedHTTPS() {
    var (_, d) = decode(entry("expected_bytes: 1"))
    #expect(
      warnings(d).map(\.message) == ["nothing bounds or verifies what 'a' installs: add sha256, or at least max_bytes"])
    (_, d) = decode(entry("expected_bytes: 1", "max_bytes: 1MiB"))
    #expect(warnings(d).isEmpty)
  }

  @Test func missingExpectedBytesIsSummarizedPastTen() {
    var text = "version: 1\nfiles:\n"
    for i in 0..<25 {
      text += "  - {id: f\(i), url: 'https://example.org/\(i)', destination: f\(i), max_bytes: 1MiB}\n"
    }
    let (_, d) = decode(text)
    let w = warnings(d).filter { $0.message.contains("expected_bytes") }
    #expect(w.count == 11)
    #expect(w.last?.message == "15 more files have no expected_bytes (25 in all)")
  }

  @Test func thousandsOfTinyFiles() {
    var text = "version: 1\nfiles:\n"
    for i in 0..<1000 {
      text +=
        "  - {id: f\(i), url: 'https://example.org/\(i)', destination: f\(i), expected_bytes: 1KiB, max_bytes: 4KiB}\n"
    }
    let (m, d) = decode(text)
    #expect(m?.files.count == 1000)
    #expect(
      warnings(d).map(\.message) == [
        "1000 files of at most 64 KiB in one manifest: each costs a request, a sync and a rename; consider serving them as one archive"
      ])
  }

  @Test func worldWritableMode() {
    let (_, d) = decode(entry("mode: \"0666\""))
    #expect(warnings(d).contains { $0.message.contains("every user write") })
  }
}
