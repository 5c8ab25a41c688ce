import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// `syncfiles-source-SCHEME`: an executable that fetches URLs of a scheme the
/// core does not speak (SPEC §7). Called as `syncfiles-source-SCHEME fetch`
/// with one JSON request on stdin; it appends to `partial_path` and prints one
/// JSON result line. The core still verifies, installs and journals.
public final class ExternalSource: SourcePlugin {
  public static let protocolVersion = 1
  public let info: PluginInfo
  let executable: String

  public init(scheme: String, executable: String) {
    self.executable = executable
    info = PluginInfo(
      kind: .source, name: scheme, path: executable, protocolVersion: Self.protocolVersion,
      summary: "serves \(scheme): URLs (\(PluginLocator.sourceExecutable(scheme: scheme)) fetch)")
  }

  public func makeTransport(_ options: TransportOptions) -> (any Transport)? {
    ExternalTransport(source: self)
  }
}

/// One run's calls to an external source: a thread per call, each watched
/// for progress (`timeout.stall`) and for a stop (deadline, signal).
final class ExternalTransport: Transport, Sendable {
  let source: ExternalSource
  private struct Calls {
    /// Raised by `stopAll`: a call of an earlier generation stops.
    var generation = 0
    var running = 0
    var received: Int64 = 0
  }
  private let calls = Locked(Calls())

  init(source: ExternalSource) {
    self.source = source
  }

  func start(_ spec: TransferSpec, done: @escaping @Sendable (TransferResult) -> Void) {
    let gen = calls.withLock { c in
      c.running += 1
      return c.generation
    }
    startThread { [self] in
      let r = fetch(spec, generation: gen)
      done(r)
      calls.update { $0.running -= 1 }
    }
  }

  func stopAll() { calls.withLock { $0.generation += 1 } }

  func shutdown() {
    stopAll()
    calls.wait(for: { $0.running == 0 }, then: { _ in })
  }

  var bytesReceived: Int64 { calls.withLock { $0.received } }

  private var name: String { PluginLocator.sourceExecutable(scheme: source.info.name) }

  /// One call of the plugin: the request in, the partial watched while it
  /// runs, what it wrote checked, its answer read (SPEC §7).
  private func fetch(_ spec: TransferSpec, generation gen: Int) -> TransferResult {
    var result = TransferResult(id: spec.id, outcome: .complete, hasher: spec.hasher)
    // A held partial stays with the result even when it cannot be cut back.
    result.partial = spec.partial
    let partial: PartialFile
    do throws(InstallError) { partial = try openPartial(spec) } catch {
      return result.failing(.partialFile(error))
    }
    result.partial = partial
    let offset = partial.size
    result.resumedFrom = offset
    let destinationBefore = FileIdentity(path: partial.destination)
    let run = runPlugin(spec, partial: partial, offset: offset, generation: gen)
    if let failure = misplacedWrites(partial, offset: offset, destinationBefore: destinationBefore) {
      return result.discarding(partial).failing(.plugin(failure))
    }
    result.received = partial.size - offset

    let (last, answer) = Self.answer(run)
    if let v = answer?["protocol"], v.intValue != Int64(ExternalSource.protocolVersion) {
      return result.discarding(partial).failing(.plugin(otherProtocol(v)))
    }
    // A plugin's validators are its own word (no Date to weigh them by).
    let now = Validators(
      etag: answer?["etag"]?.stringValue, lastModified: answer?["last_modified"]?.stringValue, dateIsStrong: true)
    result.validators = now
    // Bytes appended under another version than those held cannot be kept.
    if offset > 0, result.received > 0, let before = spec.request.ifRange, before != now.ifRange {
      result = result.discarding(partial)
      result.outcome =
        run.stoppedBecause == .runStopping
        ? .stopped : .restart("\(name): the source's version changed during a resume")
      return result
    }
    if partial.size > 0 && now.ifRange != nil {
      let head = ResponseHead(
        status: 0, validators: now, totalBytes: answer?["size"]?.intValue, offset: offset, restarted: false)
      result.head = head
      // The journal learns which version the partial's bytes belong to: they can be resumed.
      spec.onBody(head)
    }
    if run.stoppedBecause == .runStopping {
      result.outcome = .stopped
      return result
    }
    guard run.status != nil else {
      return result.failing(.plugin(.couldNotStart(plugin: name, detail: run.stderrSuffix)))
    }
    if run.timedOut || run.stoppedBecause != nil {
      return result.failing(
        .plugin(.stopped(plugin: name, how: run.failure(timeout: 7 * 86400), detail: run.stderrSuffix)))
    }
    guard let answer else { return result.failing(.plugin(noAnswer(run, last: last))) }
    return outcome(answer, run: run, spec: spec, partial: partial, result: result)
  }

  /// One JSON object: the last line it printed that is not empty (a plugin
  /// stopped by SIGTERM may still print one, naming what it wrote), and that
  /// line as it was, for messages.
  static func answer(_ run: Subprocess.Result) -> (last: String, answer: JSONValue?) {
    let lines = String(decoding: run.stdout, as: UTF8.self).split(whereSeparator: \.isNewline)
    let last = lines.last { !$0.allSatisfy(\.isWhitespace) }.map(String.init) ?? ""
    let parsed = try? JSONValue.parse(last)
    if case .object = parsed { return (last, parsed) }
    return (last, nil)
  }

  private func otherProtocol(_ v: JSONValue) -> PluginError {
    .brokeProtocol(
      plugin: name,
      what: "answered in protocol \(v.serialized()); this syncfiles speaks protocol \(ExternalSource.protocolVersion)",
      retryable: false)
  }

  /// The partial to fill: the one held (cut to empty when its version is
  /// unknown: it cannot be continued), or a new one.
  private func openPartial(_ spec: TransferSpec) throws(InstallError) -> PartialFile {
    guard let held = spec.partial else {
      return try PartialFile(root: spec.root, relative: spec.relative, resume: false)
    }
    if held.size > 0 && spec.request.ifRange == nil { try held.truncate() }
    return held
  }

  /// Runs `fetch` with the request on stdin, watched about ten times a
  /// second: stopped runs, and no growth of the partial for `timeout.stall`.
  private func runPlugin(_ spec: TransferSpec, partial: PartialFile, offset: Int64, generation gen: Int)
    -> Subprocess.Result
  {
    let stall = Double(spec.stall.seconds)
    var lastSize = offset
    var lastGrowth = monotonicSeconds()
    let run = Subprocess.run(
      [source.executable, "fetch"],
      environment: ["SYNCFILES_TASK_ID": spec.id, "SYNCFILES_PLUGIN_PROTOCOL": "\(ExternalSource.protocolVersion)"],
      stdin: Array((Self.request(spec, partial: partial, offset: offset).serialized() + "\n").utf8),
      timeout: 7 * 86400, captureStdout: true,
      watch: { [self] in
        if calls.withLock({ $0.generation }) != gen { return .runStopping }
        let now = monotonicSeconds()
        let size = partial.currentSize()
        if size != lastSize {
          calls.withLock { $0.received += size - lastSize }
          lastSize = size
          lastGrowth = now
        } else if now - lastGrowth >= stall {
          return .watcher("made no progress for \(Subprocess.Result.seconds(stall)) (timeout.stall)")
        }
        return nil
      })
    let size = partial.currentSize()
    calls.withLock { $0.received += size - lastSize }
    return run
  }

  /// The request line: where to write, from which offset, and the validators
  /// it may compare against (the partial's version when continuing it, else
  /// the installed file's, to answer not_modified).
  static func request(_ spec: TransferSpec, partial: PartialFile, offset: Int64) -> JSONValue {
    var validators: [(String, JSONValue)] = []
    switch spec.request.condition {
    case .resume(_, let held):
      if let e = held.etag { validators.append(("etag", .string(e))) }
      if let l = held.lastModified { validators.append(("last_modified", .string(l))) }
    case .ifNoneMatch(let e, _): validators.append(("etag", .string(e)))
    case .ifModifiedSince(let d): validators.append(("last_modified", .string(d)))
    case .none: break
    }
    let headers: [(String, JSONValue)] = spec.headers.map { line in
      let colon = line.firstIndex(of: ":") ?? line.endIndex
      let value = colon < line.endIndex ? String(line[line.index(after: colon)...]).trimmingWhitespace() : ""
      return (String(line[..<colon]), .string(value))
    }
    return .object([
      ("protocol", .int(Int64(ExternalSource.protocolVersion))), ("task", .string(spec.id)),
      ("url", .string(spec.url)), ("partial_path", .string(PartialFile.path(for: partial.destination))),
      ("offset", .int(offset)), ("validators", .object(validators)), ("headers", .object(headers)),
    ])
  }

  /// Whatever it says, it must have written only through the partial's own
  /// name, and never below the offset it was given. Nil when it did so.
  private func misplacedWrites(_ partial: PartialFile, offset: Int64, destinationBefore: FileIdentity)
    -> PluginError?
  {
    if !FileIdentity(path: partial.destination).sameData(as: destinationBefore) {
      return .brokeProtocol(
        plugin: name,
        what: "changed \(partial.destination) itself while it ran; a source plugin may write only to partial_path",
        retryable: false)
    }
    do throws(InstallError) { try partial.adoptExternalWrites() } catch {
      return .brokeProtocol(plugin: name, what: "wrote outside its partial_path: \(error.message)", retryable: false)
    }
    guard partial.size >= offset else {
      return .brokeProtocol(
        plugin: name, what: "cut the partial file below the offset it was given; starting over", retryable: true)
    }
    return nil
  }

  /// No result line: how it ended decides whether trying again may help.
  private func noAnswer(_ run: Subprocess.Result, last: String) -> PluginError {
    let code = run.status ?? 0
    if code != 0 {
      let how = code > 128 ? "crashed (\(run.failure(timeout: 0)))" : "failed (exit \(code))"
      return .ended(plugin: name, how: how, detail: run.stderrSuffix, retryable: code == 75 || code > 128)
    }
    let shown = last.isEmpty ? "nothing" : "'\(String(last.prefix(120)))'"
    return .brokeProtocol(
      plugin: name, what: "printed no JSON result (the last line of its stdout must be one JSON object; got \(shown))",
      retryable: false)
  }

  /// What its result says: complete (the bytes are hashed as written),
  /// not_modified, or failed.
  private func outcome(
    _ answer: JSONValue, run: Subprocess.Result, spec: TransferSpec, partial: PartialFile, result: TransferResult
  ) -> TransferResult {
    var result = result
    let status = answer["status"]?.stringValue
    if status != "failed" && run.status != 0 {
      return result.failing(
        .plugin(
          .brokeProtocol(
            plugin: name, what: "exited \(run.status ?? -1) after reporting '\(status ?? "?")'\(run.stderrSuffix)",
            retryable: false)))
    }
    switch status {
    case "complete":
      if let n = answer["bytes"]?.intValue, n != result.received {
        return result.discarding(partial).failing(
          .plugin(
            .brokeProtocol(
              plugin: name, what: "reported \(n) bytes but the partial file grew by \(result.received)", retryable: true
            )))
      }
      // Hash what is in the file now: the plugin wrote it, not us.
      spec.hasher.reset()
      guard partial.hashExisting(into: spec.hasher) else {
        return result.failing(.plugin(.unreadablePartial(path: partial.destination)))
      }
      result.outcome = .complete
      return result
    case "not_modified":
      result = result.discarding(partial)
      result.outcome = .notModified
      return result
    case "failed":
      let retryable = answer["retryable"].map { $0 == .bool(true) } ?? false
      let errorText = answer["error"]?.stringValue.map { $0.isEmpty ? nil : $0 } ?? nil
      let why = errorText ?? (run.stderr.isEmpty ? "failed" : run.stderr)
      return result.failing(.plugin(.reported(plugin: name, why: why, retryable: retryable)))
    default:
      let said = answer["status"]?.serialized() ?? "nothing"
      return result.failing(
        .plugin(
          .brokeProtocol(
            plugin: name, what: "answered status \(said); expected complete, not_modified or failed", retryable: false))
      )
    }
  }
}

extension TransferResult {
  /// This result, failed.
  func failing(_ failure: TransferError) -> TransferResult {
    var r = self
    r.outcome = .failed(failure)
    return r
  }

  /// This result without its partial, which is removed.
  func discarding(_ partial: PartialFile) -> TransferResult {
    partial.discard()
    var r = self
    r.partial = nil
    return r
  }
}
