import Foundation
import Testing

/// The offline examples the README and `Examples/` describe, run as a
/// reader would follow them, each claim checked against what happens.
@Suite struct DocExamplesTests {
  /// Examples/quickstart/README.md: apply, apply --force (unchanged), then
  /// an edited source fails its sha256 and the old file is kept byte for byte.
  @Test func theQuickstartDoesWhatItsReadmeSays() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let copy = dir + "/quickstart"
    try FileManager.default.createDirectory(atPath: copy + "/data", withIntermediateDirectories: true)
    for f in ["quickstart.yaml", "data/iris.csv", "data/hello.txt"] {
      try FileManager.default.copyItem(atPath: packageRoot + "/Examples/quickstart/" + f, toPath: copy + "/" + f)
    }
    let v = try run(["validate", "quickstart"], cwd: dir)
    #expect(v.status == 0 && v.stdout == "ok: 1 manifest, 2 files, 0 warnings\n", "\(v.stdout)\(v.stderr)")
    let first = try ApplyResult(run(["apply", "--format", "json", "quickstart"], cwd: dir))
    #expect(first.outcome("quickstart/iris") == "installed" && first.outcome("quickstart/hello") == "installed")
    let again = try ApplyResult(run(["apply", "--force", "--format", "json", "quickstart"], cwd: dir))
    #expect(again.outcome("quickstart/iris") == "unchanged", "\(again.run.stdout)")
    let installed = readBytes(copy + "/out/tables/iris.csv")
    write(Array("edited\n".utf8), to: copy + "/data/iris.csv")
    let broken = try ApplyResult(run(["apply", "--force", "--format", "json", "quickstart"], cwd: dir))
    #expect(broken.run.status == 1, "\(broken.run.stdout)")
    #expect(broken.outcome("quickstart/iris") == "failed")
    #expect(readBytes(copy + "/out/tables/iris.csv") == installed, "the old file is kept byte for byte")
  }

  /// README.md's "A mistake is reported": its manifest with `destinaton`
  /// gives exactly the lines the README shows.
  @Test func theReadmesValidateExamplePrintsWhatItShows() throws {
    let readme = try String(contentsOfFile: packageRoot + "/README.md", encoding: .utf8)
    let yaml = try #require(
      readme.firstRange(of: "```yaml\n").flatMap { start in
        readme[start.upperBound...].firstRange(of: "```").map { String(readme[start.upperBound..<$0.lowerBound]) }
      })
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    write(yaml.replacingOccurrences(of: "destination: tables", with: "destinaton: tables"), to: dir + "/broken.yaml")
    let r = try run(["validate", "broken.yaml"], cwd: dir)
    #expect(r.status == 2)
    let shown = try #require(
      readme.firstRange(of: "$ syncfiles validate broken.yaml").map { start in
        readme[start.upperBound...].split(separator: "\n").dropFirst().prefix { !$0.hasPrefix("```") }
      })
    let printed = r.stderr.split(separator: "\n").filter { $0.contains(": error: ") }
    #expect(Array(shown) == printed, "README: \(shown), validate: \(printed)")
  }
}
