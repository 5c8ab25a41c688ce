internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// One GET whose answer is held in memory (a page of an object store's
/// listing), on the calling thread, with the trust, proxy and timeouts
/// every request of the entry has. Redirects are not followed: a listing
/// that moves is an error to report, not a place to send a signature.
public enum SmallGet {
  public struct Answer: Sendable {
    public var status: Int
    public var body: [UInt8]
    /// The answer's Retry-After, in seconds.
    public var retryAfter: Double? = nil
    /// Its ETag, Last-Modified and Date.
    public var validators: Validators? = nil
    /// Where a redirect points.
    public var location: String? = nil
  }

  public struct Options: Sendable {
    public var network: NetworkOptions
    public var environment: NetworkEnvironment
    public var connectTimeout: TimeSpan
    /// The whole request, answer included.
    public var timeout = TimeSpan.seconds(120)
    /// A larger answer is refused (a listing page of 1,000 keys is about 300 KB).
    public var limit = 32 << 20
    public var verbose: (@Sendable (String) -> Void)? = nil
    public var id = ""
    /// Request lines that make it conditional (`If-None-Match: "v1"`).
    public var conditions: [String] = []
    /// The URL whose origin alone hears the manifest's headers (nil: the target's own).
    public var entryURL: String? = nil
    /// A body to POST (a monitor's ping), sent with `conditions` as its headers.
    public var body: [UInt8]? = nil
    /// Overrides `timeout` to the millisecond (a ping's share of its 10 s).
    public var timeoutMilliseconds: Int? = nil
    public init(network: NetworkOptions, environment: NetworkEnvironment, connectTimeout: TimeSpan) {
      self.network = network
      self.environment = environment
      self.connectTimeout = connectTimeout
    }
  }

  /// The answer, or why none came (libcurl's words).
  public static func fetch(_ t: SignedTarget, options o: Options) -> Result<Answer, TransferError> {
    guard let easy = EasyRequest() else {
      return .failure(.engine("libcurl could not create a handle"))
    }
    let entryURL = o.entryURL ?? t.url
    easy.configure(
      url: t.url, entryURL: entryURL, isFile: t.url.hasPrefix("file:"), network: o.network,
      environment: o.environment, connectTimeout: o.connectTimeout)
    if let ms = o.timeoutMilliseconds {
      easy.set(CURLOPT_TIMEOUT_MS, max(1, ms))
      easy.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, ms))
    } else {
      easy.set(CURLOPT_TIMEOUT, Int(o.timeout.seconds))
    }
    if let body = o.body {
      easy.set(CURLOPT_POST, 1)
      _ = sf_easy_setopt_off(easy.handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
      // COPYPOSTFIELDS: libcurl keeps its own copy, so the array lives only for the call.
      _ = body.withUnsafeBytes {
        sf_easy_setopt_pointer(easy.handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
      }
    }
    if let log = o.verbose { easy.trace(VerboseSink(id: o.id, secrets: t.secrets, log: log)) }
    easy.setRequestHeaders(url: t.url, entryURL: entryURL, manifest: t.headers, conditions: o.conditions)
    if !t.signing.isUnsigned { easy.sign(t.signing) }
    let sink = BodySink(limit: o.limit)
    let box = Unmanaged.passRetained(sink)
    defer { box.release() }
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_HEADERFUNCTION, headerCallback)
    _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(easy).toOpaque())
    _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_WRITEFUNCTION, bodyCallback)
    _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_WRITEDATA, box.toOpaque())
    let code = curl_easy_perform(easy.handle)
    if sink.overflowed {
      return .failure(
        .unusableAnswer("the answer was larger than \(ByteSize.format(Int64(o.limit)))", retryable: false))
    }
    guard code == CURLE_OK else {
      if case .failed(let f) = CurlFailure.outcome(code: code, easy: easy) { return .failure(f) }
      return .failure(.network(code: Int(code.rawValue), message: "the request failed", retryable: true))
    }
    var answer = Answer(status: easy.info(CURLINFO_RESPONSE_CODE), body: sink.bytes)
    answer.validators = Validators(
      etag: easy.header("ETag"), lastModified: easy.header("Last-Modified"), date: easy.header("Date"))
    answer.location = easy.infoString(CURLINFO_REDIRECT_URL)
    let after = easy.infoOff(CURLINFO_RETRY_AFTER)
    if after > 0 { answer.retryAfter = Double(after) }
    return .success(answer)
  }
}

/// The bytes of an answer, up to a limit.
private final class BodySink {
  let limit: Int
  var bytes: [UInt8] = []
  var overflowed = false
  init(limit: Int) { self.limit = limit }
}

private let bodyCallback: sf_curl_data_cb = { ptr, size, count, userdata in
  let n = size * count
  guard let ptr, let userdata else { return n }
  let sink = Unmanaged<BodySink>.fromOpaque(userdata).takeUnretainedValue()
  guard sink.bytes.count + n <= sink.limit else {
    sink.overflowed = true
    return 0
  }
  sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: ptr, count: n))
  return n
}
