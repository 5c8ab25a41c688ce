import CCurl

#if canImport(Glibc)
  import Glibc
#endif

/// What a server says about a task's URL without sending its body.
public struct RemoteFact: Sendable, Hashable {
  /// HTTP status of the final response (0 for file: URLs or when none arrived).
  public var status: Int
  public var contentLength: Int64?
  public var validators = Validators(etag: nil, lastModified: nil, dateIsStrong: false)
  /// Why the check failed, when it did.
  public var error: String?
}

/// `plan --remote`: one HEAD (conditional where a validator is known) per
/// task through one libcurl multi handle, at most `parallel` at a time.
/// Redirects (at most 10, http/https only) are followed here rather than by
/// libcurl, so that manifest headers are sent only to the origin of the URL
/// being fetched.
public enum RemoteProbe {
  public struct Request: Sendable {
    public var id: String
    public var url: SourceURL
    public var headers: [Header]
    /// The task's request policy: its conditions are sent (never its Range).
    public var policy: RequestPolicy
    public var connectTimeout: TimeSpan
    public var network: NetworkOptions
    public var secrets: Secrets
  }

  /// How the probe reaches servers, as `apply` does.
  public struct Options: Sendable {
    public var parallel: Int
    public var timeout: TimeSpan = .seconds(30)
    public var environment = NetworkEnvironment()
    public var verbose: (@Sendable (String) -> Void)? = nil
    public init(parallel: Int) { self.parallel = parallel }
  }

  public static func probe(_ requests: [Request], options: Options) -> [String: RemoteFact] {
    let parallel = options.parallel
    var results: [String: RemoteFact] = [:]
    guard CurlGlobal.ready, let multi = curl_multi_init() else {
      for r in requests { results[r.id] = RemoteFact(status: 0, error: "libcurl could not start") }
      return results
    }
    defer { curl_multi_cleanup(multi) }

    struct Active {
      var request: Request
      var url: String
      var hops: Int
      var easy: EasyRequest
    }
    var pending = requests[...]
    var active: [UnsafeMutableRawPointer: Active] = [:]

    func start(_ r: Request, url: String, hops: Int) {
      guard let easy = EasyRequest() else {
        results[r.id] = RemoteFact(status: 0, error: "libcurl could not create a handle")
        return
      }
      let isFile = r.url.scheme == "file"
      easy.configure(
        url: url, entryOrigin: origin(of: r.url.text.revealed), isFile: isFile, network: r.network,
        environment: options.environment, connectTimeout: r.connectTimeout)
      if let log = options.verbose { easy.trace(VerboseSink(id: r.id, secrets: r.secrets, log: log)) }
      easy.set(CURLOPT_NOBODY, 1)
      easy.set(CURLOPT_TIMEOUT, Int(options.timeout.seconds))
      if !isFile {
        var lines = ["Accept-Encoding: identity"]
        // Manifest headers go only to the origin of the task's own URL.
        if origin(of: url) == origin(of: r.url.text.revealed) {
          lines += r.headers.map { "\($0.name): \($0.value.revealed)" }
        }
        // The conditions of the task's request; a resume's Range is not asked for by a HEAD.
        var policy = r.policy
        if case .resume = policy.condition { policy.condition = .none }
        lines += policy.headerLines(partialSize: 0)
        easy.setHeaders(lines)
      }
      _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_HEADERFUNCTION, headerCallback)
      _ = sf_easy_setopt_pointer(easy.handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(easy).toOpaque())
      _ = sf_easy_setopt_data_cb(easy.handle, CURLOPT_WRITEFUNCTION, discardCallback)
      active[easy.handle] = Active(request: r, url: url, hops: hops, easy: easy)
      curl_multi_add_handle(multi, easy.handle)
    }

    func refill() {
      while active.count < max(1, parallel), let r = pending.popFirst() {
        start(r, url: r.url.text.revealed, hops: 0)
      }
    }

    refill()
    while !active.isEmpty {
      var running: Int32 = 0
      curl_multi_perform(multi, &running)
      var left: Int32 = 0
      while let msg = curl_multi_info_read(multi, &left) {
        guard sf_msg_is_done(msg) != 0, let handle = sf_msg_easy(msg), let a = active[handle] else { continue }
        let code = sf_msg_result(msg)
        curl_multi_remove_handle(multi, handle)
        active[handle] = nil
        let r = a.request
        if code != CURLE_OK {
          if case .failed(let text, _) = CurlFailure.outcome(code: code, easy: a.easy) {
            results[r.id] = RemoteFact(status: 0, error: text)
          }
          continue
        }
        let status = a.easy.info(CURLINFO_RESPONSE_CODE)
        if (300..<400).contains(status) && status != 304, let next = a.easy.infoString(CURLINFO_REDIRECT_URL) {
          if a.hops >= 10 {
            results[r.id] = RemoteFact(status: status, error: "more than 10 redirects")
          } else if !(next.lowercased().hasPrefix("http://") || next.lowercased().hasPrefix("https://")) {
            results[r.id] = RemoteFact(status: status, error: "redirect to a scheme other than http/https refused")
          } else {
            start(r, url: next, hops: a.hops + 1)
          }
          continue
        }
        let length = a.easy.infoOff(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        var fact = RemoteFact(
          status: status, contentLength: length >= 0 ? length : nil,
          validators: Validators(
            etag: a.easy.header("ETag"), lastModified: a.easy.header("Last-Modified"), date: a.easy.header("Date")))
        if status >= 400 { fact.error = "HTTP \(status)" }
        results[r.id] = fact
      }
      refill()
      if !active.isEmpty {
        curl_multi_poll(multi, nil, 0, 1000, nil)
      }
    }
    return results
  }

  /// `scheme://host:port` of an absolute http(s) URL, lower-cased.
  static func origin(of url: String) -> String {
    guard let r = url.firstRange(of: "://") else { return "" }
    let scheme = url[..<r.lowerBound].lowercased()
    let rest = url[r.upperBound...]
    let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
    var auth = rest[..<end]
    if let at = auth.lastIndex(of: "@") { auth = auth[auth.index(after: at)...] }
    var host = String(auth)
    var port = scheme == "https" ? 443 : 80
    if let c = auth.lastIndex(of: ":"), !auth.hasSuffix("]"), let p = Int(auth[auth.index(after: c)...]) {
      host = String(auth[..<c])
      port = p
    }
    return "\(scheme)://\(host.lowercased()):\(port)"
  }

}

extension Planner {
  /// Refines a plan with what the servers say (`plan --remote`): sizes of
  /// downloads, changed or unchanged for revalidations, a changed version
  /// behind a partial. Never transfers a body.
  public static func refine(
    _ plan: SessionPlan, facts: Facts, secrets: Secrets, options: RemoteProbe.Options
  ) -> SessionPlan {
    var requests: [RemoteProbe.Request] = []
    for t in plan.tasks where t.runs && t.entry.url.isBuiltIn {
      requests.append(
        RemoteProbe.Request(
          id: t.id, url: t.entry.url, headers: t.entry.headers, policy: t.request,
          connectTimeout: t.entry.timeout.connect, network: t.entry.network, secrets: secrets))
    }
    let answers = RemoteProbe.probe(requests, options: options)
    var out = plan
    for i in out.tasks.indices {
      guard let f = answers[out.tasks[i].id] else { continue }
      var t = out.tasks[i]
      if let err = f.error {
        t.reason += " (remote check failed: \(err))"
      } else if f.status == 304 {
        t.reason = "unchanged on the server (304): nothing to transfer"
        t.bytesToTransfer = 0
      } else {
        switch t.action {
        case .download:
          if let n = f.contentLength { t.bytesToTransfer = n }
        case .resume:
          // The version the partial was started under, as If-Range would name it.
          let same = t.request.ifRange.flatMap { f.validators.names(ifRange: $0) } ?? false
          if !same {
            t.action = .download
            t.resumeOffset = 0
            t.reason = "the server's version changed since the partial was started — will start over"
            t.bytesToTransfer = f.contentLength ?? t.entry.expectedBytes
          } else if let n = f.contentLength {
            t.bytesToTransfer = max(0, n - t.resumeOffset)
          }
        case .revalidate:
          t.reason = "changed on the server" + (f.contentLength.map { ": \(ByteSize.format($0)) to transfer" } ?? "")
          t.bytesToTransfer = f.contentLength ?? t.entry.expectedBytes
        default: break
        }
      }
      out.tasks[i] = t
    }
    out.disk = diskChecks(out.tasks, facts: facts)
    return out
  }
}
