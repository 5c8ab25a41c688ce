import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

@Suite struct ValidationReportTests {
  @Test func caretSitsUnderTheColumn() {
    let d = Diagnostic(
      file: "m.yaml", mark: SourceMark(line: 5, column: 5), severity: .error, message: "unknown key 'destinaton'")
    #expect(
      ValidationReport.text(d, sourceLine: "    destinaton: a.bin")
        == "m.yaml:5:5: error: unknown key 'destinaton'\n    destinaton: a.bin\n    ^")
    // Tabs in the line are kept so the caret lines up in a terminal.
    let t = Diagnostic(file: "m.yaml", mark: SourceMark(line: 1, column: 3), severity: .warning, message: "w")
    #expect(ValidationReport.text(t, sourceLine: "\tx y") == "m.yaml:1:3: warning: w\n\tx y\n\t ^")
    // Without a source line (not a terminal) only the message.
    #expect(ValidationReport.text(d, sourceLine: nil) == "m.yaml:5:5: error: unknown key 'destinaton'")
  }

  @Test func diagnosticsSortByFileThenPosition() {
    var set = ManifestSet()
    set.diagnostics = [
      Diagnostic(file: "a.yaml", mark: SourceMark(line: 9, column: 1), severity: .error, message: "3"),
      Diagnostic(file: "b.yaml", mark: SourceMark(line: 1, column: 1), severity: .error, message: "4"),
      Diagnostic(file: "a.yaml", mark: SourceMark(line: 2, column: 7), severity: .warning, message: "2"),
      Diagnostic(file: "a.yaml", mark: nil, severity: .error, message: "1"),
    ]
    let r = ValidationReport(set: set)
    #expect(r.sortedDiagnostics.map(\.message) == ["1", "2", "3", "4"])
    #expect(r.summary == "invalid: 3 errors, 1 warning")
  }

  @Test func jsonEscapesEverythingItMust() {
    let v = JSONValue.object([
      ("s", .string("quote\" back\\ nl\n tab\t ctl\u{1} uni é /")), ("n", .null), ("i", .int(-3)),
      ("a", .array([.bool(true), .double(1.5)])),
    ])
    #expect(
      v.serialized() == #"{"s":"quote\" back\\ nl\n tab\t ctl\u0001 uni é /","n":null,"i":-3,"a":[true,1.5]}"#)
  }
}
