import SyncFilesCore
import SyncFilesManifest

/// One object a listing found under a prefix.
public struct ListedObject: Sendable, Hashable {
  /// The key below the prefix: `v2/a.bin` for `models/v2/a.bin` under `models/`.
  public var key: String
  public var size: Int64
  /// The ETag as a GET of the object answers it (quoted).
  public var etag: String?
  public var lastModified: String?
  public init(key: String, size: Int64, etag: String? = nil, lastModified: String? = nil) {
    self.key = key
    self.size = size
    self.etag = etag
    self.lastModified = lastModified
  }
}

/// Every object under a prefix, each page read: a listing cut short is a
/// failure, never a shorter listing (pruning trusts what is absent here).
public struct PrefixListing: Sendable, Hashable {
  /// Sorted by key.
  public var objects: [ListedObject]
  public var listedAt: Timestamp
  /// Requests it took (pages); 0 for a listing read back from the journal.
  public var requests: Int
  public init(objects: [ListedObject], listedAt: Timestamp, requests: Int) {
    self.objects = objects.sorted { $0.key < $1.key }
    self.listedAt = listedAt
    self.requests = requests
  }

  /// Same objects, whenever and however listed.
  public func sameObjects(as other: PrefixListing?) -> Bool { other?.objects == objects }
}
