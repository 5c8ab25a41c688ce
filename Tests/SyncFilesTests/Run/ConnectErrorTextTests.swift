import Foundation
import Testing

/// A connection refused is said once, in libcurl's words, not three times.
@Suite final class ConnectErrorTextTests: ApplyWorkspace {
  let dir = makeTempDir()
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  @Test func aRefusedConnectionIsSaidOnce() throws {
    manifest(["{id: a, url: 'http://127.0.0.1:9/a', destination: a, retry: {attempts: 1}}"])
    let r = try apply()
    let error = r.string("m/a", "error") ?? ""
    #expect(error.components(separatedBy: "Couldn't connect to server").count == 2, "\(error)")
  }
}
