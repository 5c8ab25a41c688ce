// MARK: - Listing: a capability a source may offer

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

/// Why a prefix could not be listed, in words: the source's own error, the prefix, and what to do.
public struct ListingFailure: Error, Sendable, Hashable {
  public var message: String
  public init(_ message: String) { self.message = message }
}

/// What a listing needs of the prefix entry and of the run.
public struct ListingRequest: Sendable {
  /// The prefix entry's `name/id`.
  public var id: String
  public var url: SourceURL
  public var network: NetworkOptions
  public var headers: [Header]
  public var connectTimeout: TimeSpan
  public var environment = NetworkEnvironment()
  /// `--verbose`: request and response headers, masked.
  public var verbose: (@Sendable (String) -> Void)? = nil
  public var now: Timestamp
  public init(entry: FileEntry, now: Timestamp) {
    id = entry.qualifiedID
    url = entry.url
    network = entry.network
    headers = entry.headers
    connectTimeout = entry.timeout.connect
    self.now = now
  }
}

/// A source that can say which objects lie under a prefix (SPEC §9.4): what
/// an entry whose url ends in `/` needs of its source. Built in for `s3`;
/// an external source offers it by answering `list` (Docs/plugins.md).
public protocol PrefixLister: SourcePlugin {
  /// Blocks until every page is read, or fails.
  func list(_ request: ListingRequest) -> Result<PrefixListing, ListingFailure>
}
