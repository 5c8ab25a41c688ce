import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// One transfer for the engine: where to fetch from, what to send, where the
/// bytes go. Built by the runner; handed to the engine thread and back.
///
/// A class of constants, not a struct: made whole once, then only read, by
/// every thread after the runner's. Each copy of a struct of some twenty
/// fields (a try makes four: the hand-over, the engine's transfer, the
/// set-up) retains and releases each of its strings, arrays and closures; a
/// reference is retained once. Constants, as a field a class lets anyone
/// set is checked for overlapping access each time it is read.
public final class TransferSpec: @unchecked Sendable {
  public let id: String
  /// The URL to fetch (expanded: never print it).
  public let url: String
  /// Manifest headers, `Name: value` (expanded: never print them).
  public let headers: [String]
  /// Lower-case URL scheme.
  public let scheme: String
  /// The host `per_host` counts this transfer under (the task's URL's, redirects included).
  public let host: String
  public var isFile: Bool { scheme == "file" }
  /// Where a partial file is created when a body arrives.
  public let root: String
  public let relative: String
  /// An open partial being resumed: its size is the offset asked for.
  public let partial: PartialFile?
  /// Hashes every byte of the partial, those held before included.
  public let hasher: SHA256Hasher
  /// What to ask for: a resume, a conditional request or the whole file.
  public let request: RequestPolicy
  /// TLS trust, proxy and netrc of the entry.
  public let network: NetworkOptions
  /// Values to mask in `--verbose` output.
  public let secrets: Secrets
  public let maxBytes: Int64?
  /// The entry's own cap in bytes per second (`rate`), under the session's.
  public let rate: Int64?
  public let connectTimeout: TimeSpan
  public let stall: TimeSpan
  /// What its handle's options depend on besides the URL, made once here
  /// (`TransferEngine.requestShape` says whether it may keep them).
  let shape: RequestShape
  /// Called on the engine thread when a body is about to be written (after
  /// the partial was created or cut back, before its first byte), so that
  /// the journal knows the partial's validators before it holds any byte.
  public let onBody: @Sendable (ResponseHead) -> Void
  /// Ranges at once (SPEC §8.3): nil is `auto` (4 from 64 MiB), 1 one stream.
  public let segments: Int?
  /// Mirrors that may serve ranges of a segmented transfer: the URL to ask
  /// (expanded: never print it) and the URL to name in messages.
  public let mirrors: [(url: String, name: String)]
  /// Ranges held since an earlier run: the transfer asks only for the rest.
  public let held: HeldRanges?
  /// Called on the engine thread with the bytes a segmented partial holds
  /// (and the whole size), before the first range lands and as they grow;
  /// true when they were flushed first. Nil ranges: the partial is one
  /// stream again (its held prefix).
  public let onRanges: (@Sendable (ByteRanges?, Int64, Bool) -> Void)?
  /// Called on the engine thread before bytes the partial held are dropped
  /// (cut back for a whole new body): the journal stops claiming them first.
  public let onDrop: (@Sendable () -> Void)?
  /// A small whole body may be held in memory until it completes
  /// (`PartialFile.init(holding:relative:capacity:)`): false when a verifier
  /// reads the partial's file before the install.
  public let mayHoldBody: Bool
  /// Signed by libcurl (object storage); nil for a plain request.
  public let signing: RequestSigning?

  public init(
    id: String, url: String, headers: [String] = [], scheme: String, host: String = "", root: String,
    relative: String, partial: PartialFile? = nil, hasher: SHA256Hasher, request: RequestPolicy = .whole,
    network: NetworkOptions = NetworkOptions(), secrets: Secrets = Secrets(), maxBytes: Int64? = nil,
    rate: Int64? = nil, connectTimeout: TimeSpan, stall: TimeSpan, onBody: @escaping @Sendable (ResponseHead) -> Void,
    segments: Int? = 1, mirrors: [(url: String, name: String)] = [], held: HeldRanges? = nil,
    onRanges: (@Sendable (ByteRanges?, Int64, Bool) -> Void)? = nil, mayHoldBody: Bool = false,
    onDrop: (@Sendable () -> Void)? = nil, signing: RequestSigning? = nil
  ) {
    self.id = id
    self.url = url
    self.headers = headers
    self.scheme = scheme
    self.host = host
    self.root = root
    self.relative = relative
    self.partial = partial
    self.hasher = hasher
    self.request = request
    self.network = network
    self.secrets = secrets
    self.maxBytes = maxBytes
    self.rate = rate
    self.connectTimeout = connectTimeout
    self.stall = stall
    self.shape = RequestShape(network: network, connectTimeout: connectTimeout, stall: stall)
    self.onBody = onBody
    self.segments = segments
    self.mirrors = mirrors
    self.held = held
    self.onRanges = onRanges
    self.mayHoldBody = mayHoldBody
    self.onDrop = onDrop
    self.signing = signing
  }

  /// This transfer sent to `url` instead, signed, with `headers` more and
  /// `secrets` more to mask (a source that maps its URLs onto HTTP).
  public func sent(to url: String, signing: RequestSigning, headers more: [String], secrets: Secrets) -> TransferSpec {
    TransferSpec(
      id: id, url: url, headers: headers + more, scheme: scheme, host: host, root: root, relative: relative,
      partial: partial, hasher: hasher, request: request, network: network,
      secrets: Secrets(all: [self.secrets, secrets]),
      maxBytes: maxBytes, rate: rate, connectTimeout: connectTimeout, stall: stall, onBody: onBody,
      segments: segments,
      mirrors: [], held: held, onRanges: onRanges, mayHoldBody: mayHoldBody, onDrop: onDrop, signing: signing)
  }
}

/// Where a source that maps its URLs onto HTTP sends one, and how it signs
/// it: the URL to ask, the signing, header lines to add, values to mask.
public struct SignedTarget: Sendable {
  public var url: String
  public var signing: RequestSigning
  public var headers: [String]
  public var secrets: Secrets
  public init(url: String, signing: RequestSigning, headers: [String], secrets: Secrets) {
    self.url = url
    self.signing = signing
    self.headers = headers
    self.secrets = secrets
  }
}

/// How libcurl signs a request: AWS Signature Version 4
/// (`CURLOPT_AWS_SIGV4`), which S3 and the stores that speak its API check.
public struct RequestSigning: Sendable, Hashable {
  /// `aws:amz:REGION:s3`.
  public var provider: String
  /// `ACCESS_KEY_ID:SECRET_ACCESS_KEY` (never print it).
  public var credentials: String
  /// The header a resume names its version with: S3 has no `If-Range`,
  /// and answers a changed object's `If-Match` with 412.
  public var resumeHeader = "If-Match"

  public init(provider: String, credentials: String) {
    self.provider = provider
    self.credentials = credentials
  }

  /// A request that is not signed (a checksum list on a web server).
  public static let unsigned = RequestSigning(provider: "", credentials: "")
  public var isUnsigned: Bool { provider.isEmpty }
}

/// A segmented partial held for a resume: its bytes, size and version.
public struct HeldRanges: Sendable {
  public var ranges: ByteRanges
  public var total: Int64
  public var validators: Validators
  /// Bytes from 0 the task's hasher has already taken in.
  public var hashed: Int64
  public init(ranges: ByteRanges, total: Int64, validators: Validators, hashed: Int64) {
    self.ranges = ranges
    self.total = total
    self.validators = validators
    self.hashed = hashed
  }
}
