import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// The steps of `apply` after its session is open, for a frontend: what to
/// say before the run, the run itself with its signals watched, and the
/// metrics file after. The frontend parses its flags, loads the manifests,
/// and shows what it is handed.
extension ApplySession {
  /// What a frontend says before the run: a journal recovered, and each
  /// disk that looks too small for what the run expects to write.
  public var notices: [String] {
    var out: [String] = []
    if let recovered { out.append(recovered) }
    for d in plan.disk where !d.ok {
      out.append(
        "warning: \(d.path) has \(ByteSize.format(d.freeBytes)) free, the run expects to need \(ByteSize.format(d.neededBytes)); transfers that run out of space fail and keep the old files"
      )
    }
    return out
  }

  /// Runs the plan. SIGINT or SIGTERM stops it cleanly; a second one leaves
  /// at once (exit 75: the journal is consistent at every instant), after
  /// `say` told why. `ended` is called as the run ends (a progress line
  /// cleared); then the metrics file (`flag`: `--metrics`, over the
  /// manifests' key), whose failures `say` hears as warnings.
  public func run(
    plugins: PluginRegistry, options: RunOptions, metrics flag: String?, say: @escaping @Sendable (String) -> Void,
    ended: () -> Void = {}
  ) -> RunReport {
    let runner = runner(plugins: plugins, options: options)
    SignalWatcher.watch { signal in
      if runner.stopRequested {
        say("\(signal) again: exiting at once")
        _exit(ExitStatus.stoppedEarly.rawValue)
      }
      runner.stop(signal)
    }
    let report = runner.run()
    ended()
    for failure in writeMetrics(report, flag: flag) { say("warning: \(failure)") }
    return report
  }
}
