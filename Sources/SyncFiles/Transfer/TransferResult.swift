import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// The response a body belongs to.
public struct ResponseHead: Sendable {
  public var status: Int
  /// The version the body is of (with the strength of its date).
  public var validators: Validators
  /// Size of the whole file, when the server says.
  public var totalBytes: Int64?
  /// Where this body starts in the file.
  public var offset: Int64
  /// True when partial data held before was dropped (the server sent the whole file).
  public var restarted: Bool
  /// HTTP/1 without Content-Length or chunking: only the closing connection
  /// marked the end, so a cut connection looks like a complete body.
  public var lengthUnknown = false
  /// The whole object's SHA-256 as its store recorded it at upload
  /// (`x-amz-checksum-sha256`, base64), sent with a whole body only.
  public var storeSHA256: String? = nil
}

public enum TransferOutcome: Sendable, Equatable {
  /// The whole file is in the partial.
  case complete
  /// 304, or a file: URL not modified.
  case notModified
  /// 416 to a resume: the partial may already be complete.
  case rangeNotSatisfiable(total: Int64?)
  /// An HTTP error status.
  case http(status: Int, retryAfter: Int64?)
  case failed(TransferError)
  /// The partial's bytes cannot be continued: discard them and start over.
  case restart(String)
  /// Stopped by `stopAll` (deadline, signal): the partial is kept for a resume.
  case stopped
}

extension TransferOutcome {
  /// Ends after which the partial's bytes may be resumed: a stop, or a
  /// failure another try may get past.
  var keepsPartial: Bool {
    switch self {
    case .stopped: return true
    case .failed(let e): return e.isRetryable
    default: return false
    }
  }

  /// An HTTP status worth another try: timeout, too many requests, server errors.
  public static func isTransient(status: Int) -> Bool { status == 408 || status == 429 || status >= 500 }

  /// Trying again may help: a retryable failure or a transient status.
  public var isTransient: Bool {
    switch self {
    case .failed(let e): return e.isRetryable
    case .http(let status, _): return Self.isTransient(status: status)
    default: return false
    }
  }
}

public struct TransferResult: @unchecked Sendable {
  public var id: String
  public var outcome: TransferOutcome
  public var status: Int = 0
  /// Body bytes written by this transfer.
  public var received: Int64 = 0
  /// Offset the body started at (0 unless resumed).
  public var resumedFrom: Int64 = 0
  public var head: ResponseHead?
  /// Validators of the final response, also for 304s.
  public var validators: Validators?
  /// The partial (open) if one was created or resumed.
  public var partial: PartialFile?
  public var hasher: SHA256Hasher
  /// A segmented transfer: the bytes its partial holds (all of them when complete).
  public var ranges: ByteRanges? = nil
  /// Of a segmented transfer: bytes from 0 the hasher has taken in.
  public var hashed: Int64 = 0
  /// How many ranges ran at once (1: one stream).
  public var segments = 1
  /// Body bytes that arrived and were not kept (counted in `received`).
  public var discarded: Int64 = 0
  /// Why a transfer asked for in ranges ran as one stream, said once.
  public var notes: [String] = []
  /// False when the run stopped while the transfer still waited for a slot:
  /// no request was sent.
  public var began = true
  /// The first bytes of an error status's body (S3 names its error there).
  public var errorBody: [UInt8] = []
}
