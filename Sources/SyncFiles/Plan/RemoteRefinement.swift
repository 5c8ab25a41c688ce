/// `plan --remote`: what the servers say, folded into the plan. The
/// probing is `RemoteProbe`'s (Transfer); this part is pure, so a plan with
/// given answers is a unit test.
public enum RemoteRefinement {
  /// One HEAD per task that would run over http(s), with the plan's request policy.
  /// A URL libcurl does not serve is probed only when `mapped` sends it to
  /// HTTP (object storage); one it cannot map gets its reason.
  public static func requests(
    _ plan: SessionPlan, secrets: Secrets,
    mapped: (@Sendable (SourceURL, NetworkOptions) -> Result<SignedTarget, RemoteProbe.MappingFailure>?)? = nil
  ) -> (requests: [RemoteProbe.Request], failed: [String: RemoteFact]) {
    var out: [RemoteProbe.Request] = []
    var failed: [String: RemoteFact] = [:]
    for t in plan.tasks where t.runs {
      var r = RemoteProbe.Request(
        id: t.id, url: t.entry.url, headers: t.entry.headers, policy: t.request,
        connectTimeout: t.entry.timeout.connect, network: t.entry.network, secrets: secrets)
      if !t.entry.url.isBuiltIn {
        switch mapped?(t.entry.url, t.entry.network) {
        case nil: continue
        case .failure(let f)?:
          failed[t.id] = RemoteFact(status: 0, error: f.message)
          continue
        case .success(let target)?: r.target = target
        }
      }
      out.append(r)
    }
    return (out, failed)
  }

  /// Asks the servers, then refines: sizes of downloads, changed or unchanged
  /// for revalidations, a changed version behind a partial. Never transfers a body.
  public static func refine(
    _ plan: SessionPlan, facts: Facts, secrets: Secrets, options: RemoteProbe.Options
  ) -> SessionPlan {
    let (asked, failed) = requests(plan, secrets: secrets, mapped: options.mapped)
    let answers = RemoteProbe.probe(asked, options: options).merging(failed) { a, _ in a }
    return refine(plan, answers: answers, facts: facts)
  }

  /// The plan with the servers' answers (keyed by task id) folded in.
  public static func refine(_ plan: SessionPlan, answers: [String: RemoteFact], facts: Facts) -> SessionPlan {
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
    out.disk = Planner.diskChecks(out.tasks, facts: facts)
    return out
  }
}
