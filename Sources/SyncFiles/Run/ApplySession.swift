import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// `syncfiles apply` behind a few calls, for the CLI (or any other caller):
/// open the journal, gather the facts, plan, merge the run's limits, run,
/// write the metrics. The subcommand only maps flags in and exit codes out.
///
///     let session = try ApplySession(manifests: set.manifests, journalPath: path, plan: options)
///     let runner = session.runner(plugins: plugins, options: session.runOptions(flags))
///     let report = runner.run()
///     session.writeMetrics(report, flag: nil)
public final class ApplySession {
  public let manifests: [Manifest]
  public let journal: SessionJournal
  public let plan: SessionPlan
  /// What the journal's opening repaired (a torn tail, damage inside), to say once.
  public let recovered: String?

  /// Takes the journal's lock (`JournalError.locked` if another apply holds
  /// it), reads it, gathers the facts and plans, as `syncfiles plan` would.
  /// `prefetched`: the journal read while the manifests loaded (`JournalPrefetch`).
  /// `list`: lists a prefix entry now (`PrefixListings.list`); without it a
  /// prefix expands from the journal's last listing, as an offline plan does.
  public init(
    manifests: [Manifest], journalPath: String, plan options: PlanOptions, prefetched: JournalPrefetch? = nil,
    list: ((FileEntry) -> PrefixSource)? = nil
  ) throws(JournalError) {
    let writer = try JournalWriter(path: journalPath, prefetched: prefetched)
    writer.reserveStates(manifests.reduce(0) { $0 + $1.files.count })
    recovered = writer.recovered
    journal = SessionJournal(writer)
    let expanded = Self.expand(manifests, journal: journal, only: options.only, list: list)
    self.manifests = expanded.manifests
    var facts = FactGatherer.gather(for: expanded.manifests, journal: journal.tasks, now: Timestamp.current())
    facts.listed = expanded.listed
    var plan = Planner.plan(
      manifests: expanded.manifests, journal: journal.tasks, facts: facts, options: options, journalPath: journalPath)
    plan.prefixes = expanded.prefixes
    self.plan = plan
  }

  /// Each prefix entry made into its objects' entries; a listing made now is
  /// recorded in the journal (when its objects changed) for offline plans.
  static func expand(
    _ manifests: [Manifest], journal: SessionJournal, only: [String], list: ((FileEntry) -> PrefixSource)?
  ) -> PrefixExpansion.Result {
    let prefixes = PrefixListings.entries(manifests, only: only)
    guard !prefixes.isEmpty else { return PrefixExpansion.Result(manifests: manifests) }
    var sources: [String: PrefixSource] = [:]
    for e in prefixes {
      let id = e.qualifiedID
      let source = list?(e) ?? journal.listing(id).map(PrefixSource.recorded) ?? .unlisted
      if case .listed(let l) = source { journal.record(listing: l, of: id) }
      sources[id] = source
    }
    return PrefixExpansion.expand(manifests, sources: sources, journal: journal.tasks, only: only)
  }

  /// What the command line asks for over the manifests' `limits`.
  public struct Flags: Sendable {
    public var parallel: Int?
    /// A rate or a timetable (`--rate`).
    public var rate: RateCap?
    public var deadline: TimeSpan?
    /// `SYNCFILES_GROUP_COMMIT=0`: one fsync per file instead of one syncfs per group.
    public var groupCommit = true
    public init() {}
  }

  /// The run's options: a flag's parallel wins over `limits.parallel`; of two
  /// rates or deadlines (flag and limits) the smaller holds.
  public func runOptions(_ flags: Flags) -> RunOptions {
    let limits = plan.limits
    var o = RunOptions(
      parallel: flags.parallel ?? limits.parallel ?? Limits.defaultParallel,
      perHost: limits.perHost ?? Limits.defaultPerHost)
    o.rate = RateCap.least(flags.rate, limits.rate)
    o.segments = limits.segments ?? Limits.defaultSegments
    o.deadline = [flags.deadline, limits.deadline].compactMap { $0 }.min().map { Double($0.seconds) }
    o.groupCommit = flags.groupCommit
    return o
  }

  public func runner(plugins: PluginRegistry, options: RunOptions) -> Runner {
    Runner(plan: plan, manifests: manifests, journal: journal, plugins: plugins, options: options)
  }

  /// SPEC §8.4: after every apply that ran (exit 0, 1 or 75), to the
  /// manifests' `metrics` files, or to `flag` (an absolute path) instead.
  /// A file that cannot be written is returned, never fatal: the run's own outcome stands.
  public func writeMetrics(_ report: RunReport, flag: String?) -> [MetricsWriteError] {
    let finished = Timestamp.current()
    let journalNow = journal.tasks
    var failures: [MetricsWriteError] = []
    for target in RunMetrics.targets(flag: flag, manifests: manifests) {
      let m = RunMetrics(report: report, journal: journalNow, ids: target.ids, finished: finished)
      do throws(MetricsWriteError) { try m.write(to: target.path) } catch { failures.append(error) }
    }
    return failures
  }
}
