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

  /// Examples/trust/README.md: the signed list and the minisign signature
  /// vouch for both files, the report names the keys, and a changed line in
  /// the list or a changed byte in the image is refused, the old file kept.
  @Test func theTrustExampleDoesWhatItsReadmeSays() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let copy = dir + "/trust"
    try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
    for f in ["trust.yaml", "release", "keys"] {
      try FileManager.default.copyItem(atPath: packageRoot + "/Examples/trust/" + f, toPath: copy + "/" + f)
    }
    let v = try run(["validate", "trust"], cwd: dir)
    #expect(v.status == 0 && v.stdout == "ok: 1 manifest, 2 files, 0 warnings\n", "\(v.stdout)\(v.stderr)")
    let first = try ApplyResult(run(["apply", "--format", "json", "trust"], cwd: dir))
    #expect(first.count("installed") == 2, "\(first.run.stderr)")
    let checks = (first.tasks["trust/tool"]?["checks"] as? [String] ?? []).joined(separator: "\n")
    #expect(checks.contains("signed by 0x4CF042EF404F0073"), "\(checks)")
    #expect(checks.contains("signature: minisign key 703A74332DCD550F"), "\(checks)")
    let installed = readBytes(copy + "/out/os.img")
    write((readBytes(copy + "/release/os.img") ?? []) + [0x0A], to: copy + "/release/os.img")
    let changed = try ApplyResult(run(["apply", "--force", "--format", "json", "trust"], cwd: dir))
    #expect(changed.run.status == 1 && changed.string("trust/image", "error")?.contains("SHA-256 mismatch") == true)
    let sums = try String(contentsOfFile: copy + "/release/SHA256SUMS", encoding: .utf8)
    write("0" + sums.dropFirst(), to: copy + "/release/SHA256SUMS")
    let forged = try ApplyResult(run(["apply", "--force", "--format", "json", "trust"], cwd: dir))
    #expect(forged.string("trust/image", "error")?.contains("bad signature") == true, "\(forged.run.stdout)")
    #expect(readBytes(copy + "/out/os.img") == installed, "the old file is kept byte for byte")
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
