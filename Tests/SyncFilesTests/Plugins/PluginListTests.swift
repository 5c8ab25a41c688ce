import Foundation
import Testing

/// `syncfiles plugins`: the built-ins, then what the search path holds.
@Suite struct PluginListTests {
  @Test func listsBuiltInsAndExternalsFirstFoundWins() throws {
    let dir = makeTempDir()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let exe = [
      "a/syncfiles-source-gs", "a/syncfiles-verify-gpg", "b/syncfiles-source-gs", "b/syncfiles-source-http",
    ]
    for name in exe + ["b/syncfiles-verify-notexec", "b/unrelated"] {
      write("#!/bin/sh\nexit 0\n", to: dir + "/" + name)
    }
    for name in exe { chmod(dir + "/" + name, 0o755) }
    let env = ["SYNCFILES_PLUGIN_PATH": "\(dir)/a:\(dir)/b", "PATH": ""]
    let r = try run(["plugins", "--format", "json"], env: env)
    #expect(r.status == 0, "\(r.stderr)")
    let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
    let rows = object?["plugins"] as? [[String: Any]] ?? []
    func row(_ kind: String, _ name: String, _ path: String?) -> [String: Any]? {
      rows.first { $0["kind"] as? String == kind && $0["name"] as? String == name && ($0["path"] as? String) == path }
    }
    for (kind, name) in [
      ("source", "http"), ("source", "https"), ("source", "file"), ("source", "s3"), ("verifier", "size"),
      ("verifier", "s3-checksum"),
      ("verifier", "sha256"),
      ("hook", "on_change"), ("hook", "on_complete"),
    ] {
      let b = row(kind, name, nil)
      #expect(b?["built_in"] as? Bool == true, "\(kind) \(name)")
      #expect(b?["protocol"] as? Int == 1)
    }
    #expect(row("source", "gs", "\(dir)/a/syncfiles-source-gs")?["shadowed_by"] is NSNull)
    #expect(row("verifier", "gpg", "\(dir)/a/syncfiles-verify-gpg")?["protocol"] as? Int == 1)
    #expect(
      row("source", "gs", "\(dir)/b/syncfiles-source-gs")?["shadowed_by"] as? String == "\(dir)/a/syncfiles-source-gs")
    #expect(row("source", "http", "\(dir)/b/syncfiles-source-http")?["shadowed_by"] as? String == "built in")
    #expect(rows.count == 13, "not executable and unrelated files are not plugins: \(rows)")
    #expect(object?["search_path"] as? [String] == ["\(dir)/a", "\(dir)/b"])

    let text = try run(["plugins"], env: env)
    #expect(text.status == 0)
    #expect(text.stdout.hasPrefix("KIND"))
    #expect(text.stdout.contains("\(dir)/b/syncfiles-source-gs (hidden by \(dir)/a/syncfiles-source-gs)"))
  }
}
