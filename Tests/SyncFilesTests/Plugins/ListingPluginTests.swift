import Foundation
import Testing

/// Listing as a capability an external source offers (SPEC §9.4): a
/// plugin that answers `list` serves prefixes through the same expansion,
/// journal and prune as `s3://`; one that does not fails the prefix, and
/// only it.
@Suite final class ListingPluginTests: ApplyWorkspace {
  let dir = makeTempDir()
  var data: String { dir + "/data" }

  init() {
    try? FileManager.default.createDirectory(atPath: dir + "/plugins", withIntermediateDirectories: true)
    // `tree://PATH/` lists the files below data/PATH; `fetch` copies one.
    let script = """
      #!/usr/bin/env python3
      import json, os, sys
      req = json.loads(sys.stdin.readline())
      root = "\(dir)/data/" + req["url"].split("://", 1)[1]
      if sys.argv[1] == "list":
          objs = []
          for top, _, names in os.walk(root):
              for n in names:
                  p = os.path.join(top, n)
                  st = os.stat(p)
                  objs.append({"key": os.path.relpath(p, root), "size": st.st_size, "etag": '"%d"' % st.st_mtime_ns})
          print(json.dumps({"protocol": 1, "status": "complete", "objects": objs}))
      else:
          with open(root, "rb") as f, open(req["partial_path"], "ab") as out:
              out.write(f.read())
          print(json.dumps({"status": "complete", "etag": '"%d"' % os.stat(root).st_mtime_ns}))
      """
    write(script, to: dir + "/plugins/syncfiles-source-tree")
    chmod(dir + "/plugins/syncfiles-source-tree", 0o755)
    write("#!/bin/sh\necho 'usage: fetch' >&2; exit 2\n", to: dir + "/plugins/syncfiles-source-flat")
    chmod(dir + "/plugins/syncfiles-source-flat", 0o755)
  }
  deinit { try? FileManager.default.removeItem(atPath: dir) }

  var env: [String: String] { ["SYNCFILES_PLUGIN_PATH": dir + "/plugins"] }

  @Test func aPluginThatListsServesAPrefixAndOneThatDoesNotFailsOnlyItsPrefix() throws {
    write(Array("one".utf8), to: data + "/set/a.txt")
    write(Array("two".utf8), to: data + "/set/sub/b.txt")
    manifest([
      "{id: set, url: 'tree://set/', destination: set, prune: true}",
      "{id: flat, url: 'flat://x/', destination: flat}",
    ])
    let first = try apply([], env: env)
    #expect(first.outcome("m/set/a.txt") == "installed" && first.outcome("m/set/sub/b.txt") == "installed")
    #expect(out("set/sub/b.txt") == Array("two".utf8))
    let prefixes = first.object["prefixes"] as? [[String: Any]] ?? []
    let flat = prefixes.first { $0["id"] as? String == "m/flat" }?["error"] as? String ?? ""
    #expect(flat.contains("syncfiles-source-flat gave no listing"), "\(flat)")
    #expect(first.run.status == 1, "a prefix that cannot be listed fails the run")

    try FileManager.default.removeItem(atPath: data + "/set/a.txt")
    manifest(["{id: set, url: 'tree://set/', destination: set, prune: true}"])
    let second = try apply([], env: env)
    #expect(second.run.status == 0, "\(second.run.stdout)")
    #expect(out("set/a.txt") == nil, "pruned: its object is gone from the plugin's listing")
    #expect(second.outcome("m/set/sub/b.txt") == "skipped", "unchanged in the listing: no fetch")
  }
}
