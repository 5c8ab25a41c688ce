import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// Docs/manifest.md names every key the loader accepts, under its full
/// path, and no key it does not (SPEC §9.5); the man page of the format
/// names them too.
@Suite struct ManifestReferenceTests {
  /// Every key path the loader accepts, from `Keys`.
  static var accepted: Set<String> {
    var all = Set(Keys.top + Keys.file)
    for (parent, keys) in [
      ("limits", Keys.limits), ("conditions", Keys.conditions), ("hooks", Keys.hooks), ("retry", Keys.retry),
      ("timeout", Keys.timeout), ("tls", Keys.tls), ("verify", Keys.verify),
      ("s3", Keys.s3), ("checksums", Keys.checksums), ("signature", Keys.signature),
    ] {
      for k in keys { all.insert(parent + "." + k) }
    }
    return all
  }

  /// The key paths in the first column of the reference's tables.
  static func documented() throws -> Set<String> {
    let text = try String(contentsOfFile: packageRoot + "/Docs/manifest.md", encoding: .utf8)
    var keys = Set<String>()
    for line in text.split(separator: "\n") where line.hasPrefix("| `") {
      let cell = line.dropFirst(3).prefix { $0 != "`" }
      keys.insert(String(cell))
    }
    return keys
  }

  @Test func theReferenceNamesEveryAcceptedKeyAndNoOther() throws {
    let documented = try Self.documented()
    let missing = Self.accepted.subtracting(documented).sorted()
    let unknown = documented.subtracting(Self.accepted).sorted()
    #expect(missing.isEmpty, "accepted but not in Docs/manifest.md: \(missing)")
    #expect(unknown.isEmpty, "in Docs/manifest.md but not accepted: \(unknown)")
  }

  /// Each key documented is accepted by `validate` in a manifest, in its place.
  @Test func everyKeyOfTheSchemaIsDocumented() throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: packageRoot + "/manifests/syncfiles.schema.json"))
    let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let top = try #require(schema["properties"] as? [String: Any])
    let documented = try Self.documented()
    for key in top.keys where !key.hasPrefix("$") {
      #expect(documented.contains(key), "the schema's \(key) is not in Docs/manifest.md")
    }
  }

  @Test func theFormatsManPageNamesEveryKey() throws {
    let page = try String(contentsOfFile: packageRoot + "/Docs/syncfiles-manifest.5", encoding: .utf8)
    for key in Self.accepted {
      let leaf = String(key.split(separator: ".").last!)
      #expect(page.contains(leaf.replacingOccurrences(of: "_", with: "_")), "syncfiles-manifest(5) lacks \(key)")
    }
  }

  /// Every link of the README and the manual points at a file in the
  /// repository that exists; none leaves it (SPEC §9.5).
  @Test func noLinkLeavesTheRepository() throws {
    let docs = try FileManager.default.contentsOfDirectory(atPath: packageRoot + "/Docs").filter { $0.hasSuffix(".md") }
    let pages = ["README.md", "Benchmarks/README.md"] + docs.map { "Docs/" + $0 }
    let link = try Regex(#"\]\(([^)\s]+)\)"#)
    for page in pages {
      let text = try String(contentsOfFile: packageRoot + "/" + page, encoding: .utf8)
      let folder = (page as NSString).deletingLastPathComponent
      for m in text.matches(of: link) {
        let target = String(m.output[1].substring ?? "")
        #expect(!target.contains("://"), "\(page) links outside: \(target)")
        let file = String(target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
        guard !file.isEmpty, !target.contains("://") else { continue }
        let path = ((packageRoot + "/" + folder) as NSString).appendingPathComponent(file)
        let inside = (path as NSString).standardizingPath.hasPrefix(packageRoot)
        #expect(
          inside && FileManager.default.fileExists(atPath: path),
          "\(page) links to \(target): no such file in the repository")
      }
    }
  }
}
