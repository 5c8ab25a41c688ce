import SyncFilesCore
import SyncFilesManifest

/// A prefix entry's last complete listing as a journal record (SPEC §9.4):
/// `{"t":"listing","id":"m/models","at":"…","requests":3,"objects":[["v2/a.bin",1234,"\"etag\"","Sat, …"],…]}`.
/// Offline `plan` reads it back; `prune` never does (it needs a listing of this run).
extension PrefixListing {
  package func record(id: String) -> JSONValue {
    .object([
      ("t", .string("listing")), ("id", .string(id)), ("at", .string(listedAt.rfc3339)),
      ("requests", .int(Int64(requests))),
      (
        "objects",
        .array(
          objects.map { o in
            .array([
              .string(o.key), .int(o.size), o.etag.map(JSONValue.string) ?? .null,
              o.lastModified.map(JSONValue.string) ?? .null,
            ])
          })
      ),
    ])
  }

  /// The listing in a record, and whose it is; nil for any other record.
  package static func record(json v: JSONValue) -> (String, PrefixListing)? {
    guard v["t"]?.stringValue == "listing", let id = v["id"]?.stringValue,
      let at = v["at"]?.stringValue.flatMap(Timestamp.parseRFC3339), case .array(let items)? = v["objects"]
    else { return nil }
    var objects: [ListedObject] = []
    objects.reserveCapacity(items.count)
    for item in items {
      guard case .array(let f) = item, f.count == 4, let key = f[0].stringValue, let size = f[1].intValue else {
        return nil
      }
      objects.append(ListedObject(key: key, size: size, etag: f[2].stringValue, lastModified: f[3].stringValue))
    }
    return (id, PrefixListing(objects: objects, listedAt: at, requests: Int(v["requests"]?.intValue ?? 0)))
  }
}
