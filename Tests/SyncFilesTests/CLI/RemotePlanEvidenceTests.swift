import Foundation
import Testing

/// `plan --remote` calls a file changed only with evidence (SPEC §10.3): a
/// file installed under a weak Last-Modified is checked unconditionally,
/// and a 200 that names the same version and size cannot tell.
@Suite final class RemotePlanEvidenceTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func aWeakDateAnsweredWithTheSameVersionCannotTellAndAChangedSizeIsChanged() throws {
    // A Last-Modified later than the response's Date is never strong.
    let future = HTTPDateForTests.format(Date().addingTimeInterval(3600))
    server.put("a.bin", testBytes(2000, seed: 66))
    server.routes(["/a.bin": ["file": "a.bin", "last_modified": future]])
    manifest(["{id: a, url: '\(server.base)/a.bin', destination: a.bin}"])
    #expect(try apply().outcome("m/a") == "installed")
    var plan = try run(["plan", "--remote", "m.yaml"], cwd: dir)
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("cannot tell without fetching"), "\(plan.stdout)")
    #expect(!plan.stdout.contains("changed on the server"), "\(plan.stdout)")

    server.put("a.bin", testBytes(2500, seed: 67))
    plan = try run(["plan", "--remote", "m.yaml"], cwd: dir)
    #expect(plan.stdout.contains("changed on the server: 2500 B, installed 2000 B"), "\(plan.stdout)")
  }
}
