import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
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
    _ plan: SessionPlan, facts: Facts, journal: [String: TaskState], secrets: Secrets, options: RemoteProbe.Options
  ) -> SessionPlan {
    let (asked, failed) = requests(plan, secrets: secrets, mapped: options.mapped)
    let answers = RemoteProbe.probe(asked, options: options).merging(failed) { a, _ in a }
    return refine(plan, answers: answers, facts: facts, journal: journal)
  }

  /// The plan with the servers' answers (keyed by task id) folded in.
  public static func refine(
    _ plan: SessionPlan, answers: [String: RemoteFact], facts: Facts, journal: [String: TaskState] = [:]
  ) -> SessionPlan {
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
          t.reason = revalidated(f, asked: t.request, installed: journal[t.id]?.installed)
          t.bytesToTransfer = f.contentLength ?? t.entry.expectedBytes
        default: break
        }
      }
      out.tasks[i] = t
    }
    out.disk = Planner.diskChecks(out.tasks, facts: facts)
    return out
  }

  /// What a 200 to a revalidation says (SPEC §10.3). To a conditional
  /// request it means changed. To an unconditional one (a file installed
  /// under a weak date) only a changed validator or size is evidence;
  /// otherwise the plan cannot tell without fetching.
  static func revalidated(_ f: RemoteFact, asked: RequestPolicy, installed: TaskState.Installed?) -> String {
    let size = f.contentLength.map { ": \(ByteSize.format($0)) to transfer" } ?? ""
    if asked.isConditional { return "changed on the server" + size }
    if let i = installed {
      if let now = f.validators.etag, let was = i.etag, now != was {
        return "changed on the server: ETag \(now), installed \(was)" + size
      }
      if let n = f.contentLength, n != i.size {
        return "changed on the server: \(n) B, installed \(i.size) B"
      }
      if let now = f.validators.lastModified, let was = i.lastModified, now != was {
        return "changed on the server: Last-Modified \(now), installed \(was)" + size
      }
    }
    return
      "cannot tell without fetching: installed under a weak Last-Modified, and the server names the same version and size; apply fetches it and keeps it unchanged if the bytes are identical"
  }
}
