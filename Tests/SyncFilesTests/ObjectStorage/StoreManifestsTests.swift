import Foundation
import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The manifests Docs/object-storage.md gives for each store validate, and
/// address the store as the page says: virtual host on AWS, the endpoint
/// and then the bucket elsewhere.
@Suite struct StoreManifestsTests {
  @Test func eachStoresManifestValidatesAndAddressesTheStoreAsDocumented() throws {
    let page = try String(contentsOfFile: packageRoot + "/Docs/object-storage.md", encoding: .utf8)
    let heading = try #require(page.range(of: "## Manifests for other stores"))
    let table = page[heading.lowerBound...]
    let rows = table.split(separator: "\n").filter { $0.hasPrefix("| ") && $0.contains("`{") }
    #expect(rows.count == 5, "AWS, MinIO, R2, GCS and B2: \(rows)")
    for row in rows {
      let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      let s3 = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
      let yaml =
        "version: 1\nname: m\nroot: /srv\nfiles:\n  - {id: a, url: 's3://b/k.bin', destination: a, s3: \(s3)}\n"
      let (m, d) = decode(yaml)
      #expect(errors(d).isEmpty, "\(cells[0]): \(d)")
      let options = try #require(m?.files.first?.network.s3)
      let keys = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "HOME": "/nonexistent"]
      let settings = try S3Settings.resolve(environment: keys, readFile: { _ in nil }, options: options).get()
      let url = settings.url(bucket: "b", key: "k.bin")
      if let endpoint = options.endpoint {
        #expect(url == endpoint + "/b/k.bin", "\(cells[0]): \(url)")
      } else {
        #expect(url == "https://b.s3.\(options.region ?? "").amazonaws.com/k.bin", "\(cells[0]): \(url)")
      }
    }
  }
}
