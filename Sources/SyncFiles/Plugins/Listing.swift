import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
// MARK: - Listing: a capability a source may offer
// (what a listing found, `PrefixListing`, is in Journal/, which keeps the last one)

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
  /// The entry's `retry`: a page is retried as a transfer is.
  public var retry: RetryPolicy
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
    retry = entry.retry
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
