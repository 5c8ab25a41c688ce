import Foundation
import Testing

/// `-v` on a release URL that redirects to a presigned object URL: the
/// signature and credential in the query are masked in the `Location`
/// line and in the request line that follows it (SPEC §10.3).
@Suite final class PresignedVerboseTests: ApplyWorkspace {
  let server: FaultServer
  let dir = makeTempDir()

  init() throws { server = try FaultServer() }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func verboseMasksAPresignedURLsCredentials() throws {
    server.put("obj.bin", testBytes(1000, seed: 65))
    let presigned =
      "/obj.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIASECRETCRED%2F20261201&X-Amz-Expires=60&X-Amz-Signature=deadbeefsecretsig"
    server.routes([
      "/release.bin": ["redirect": ["location": "http://127.0.0.1:\(server.port)\(presigned)"]],
      "/obj.bin": ["file": "obj.bin"],
    ])
    manifest(["{id: r, url: '\(server.base)/release.bin', destination: r.bin}"])
    let r = try apply(["-v"])
    #expect(r.run.status == 0, "\(r.run.stderr)")
    #expect(out("r.bin") == testBytes(1000, seed: 65))
    #expect(r.run.stderr.contains("X-Amz-Signature=***"), "\(r.run.stderr)")
    #expect(r.run.stderr.contains("X-Amz-Expires=60"), "other parameters stay")
    for secret in ["AKIASECRETCRED", "deadbeefsecretsig"] {
      #expect(!r.run.stderr.contains(secret), "\(secret) in: \(r.run.stderr)")
      #expect(!r.run.stdout.contains(secret), "\(secret) in the report")
    }
  }
}
