import ArgumentParser
import SyncFiles

#if canImport(Glibc)
  import Glibc
#endif

/// Options of every command that reads manifests and a journal.
struct SessionOptions: ParsableArguments {
  @Option(
    help:
      "The journal file (default: $SYNCFILES_JOURNAL, the manifests' journal key, else ~/.local/state/syncfiles/journal)."
  )
  var journal: String?

  @Option(help: "Output format on stdout: text or json.")
  var format: OutputFormat = .text

  @Option(help: "Evaluate schedules, not_before, backoff and windows as if it were TIME (RFC 3339).")
  var now: String?

  func clock() throws -> Timestamp {
    guard let now else { return Timestamp.current() }
    guard let t = Timestamp.parseRFC3339(now) else {
      throw ValidationError("--now '\(now)' is not an RFC 3339 time such as 2026-11-22T03:00:00Z")
    }
    return t
  }
}

/// Manifests, journal path and journal contents for one command.
struct LoadedSession {
  var set: ManifestSet
  var journalPath: String
  var journal: JournalFormat.Contents

  /// Loads and checks the manifests (exit 2 with every error on stderr when
  /// any is invalid) and reads the journal without locking it.
  static func load(paths: [String], options: SessionOptions) throws -> LoadedSession {
    let (set, path) = try manifests(paths: paths, options: options)
    let contents: JournalFormat.Contents
    do {
      contents = try JournalReader.read(path: path)
    } catch {
      Output.error("syncfiles: \(error.message)")
      throw ExitCode(2)
    }
    if let note = contents.damageNote(path: path, rewritten: false) { Output.error("syncfiles: \(note)") }
    return LoadedSession(set: set, journalPath: path, journal: contents)
  }

  /// Loads and checks the manifests (exit 2 with every error on stderr when
  /// any is invalid) and resolves the journal's path.
  /// `prefetch`: started on the journal's path as soon as it is known (the
  /// flag or the environment at once, else the first manifest that names one).
  static func manifests(
    paths: [String], options: SessionOptions, plugins: PluginRegistry? = nil, prefetch: JournalPrefetch? = nil
  ) throws -> (ManifestSet, String) {
    let env = Runtime.environment
    let cwd = Runtime.workingDirectory
    var loader = ManifestLoader(environment: env, plugins: plugins, workingDirectory: cwd)
    if let prefetch {
      // The flag and the environment win over any manifest's key: then the path is known at once.
      if options.journal?.isEmpty == false || env["SYNCFILES_JOURNAL"]?.isEmpty == false {
        prefetch.start(
          path: JournalLocation.resolve(
            flag: options.journal, environment: env, manifests: [], isRoot: getuid() == 0, workingDirectory: cwd))
      }
      loader.onJournalKey = { prefetch.start(path: $0) }
    }
    let set = loader.load(paths: paths)
    if set.hasErrors {
      for d in ValidationReport(set: set).sortedDiagnostics where d.severity == .error {
        Output.error(d.description)
      }
      Output.error("nothing was done: fix the errors above (`syncfiles validate` shows warnings too)")
      throw ExitCode(2)
    }
    let path = JournalLocation.resolve(
      flag: options.journal, environment: env, manifests: set.manifests, isRoot: getuid() == 0, workingDirectory: cwd)
    return (set, path)
  }

  /// `digests: false` (status): no destination is hashed for adoption.
  func plan(
    now: Timestamp, options: PlanOptions, remote: Bool = false, verbose: Bool = false, digests: Bool = true
  ) -> SessionPlan {
    planAndFacts(now: now, options: options, remote: remote, verbose: verbose, digests: digests).plan
  }

  /// The plan, and the facts it was made from (the forecast reads their disks).
  func planAndFacts(
    now: Timestamp, options: PlanOptions, remote: Bool = false, verbose: Bool = false, digests: Bool = true
  ) -> (plan: SessionPlan, facts: Facts) {
    let facts = FactGatherer.gather(for: set.manifests, journal: journal.tasks, now: now, digests: digests)
    let plan = Planner.plan(
      manifests: set.manifests, journal: journal.tasks, facts: facts, options: options, journalPath: journalPath)
    guard remote else { return (plan, facts) }
    var probe = RemoteProbe.Options(parallel: plan.limits.parallel ?? Limits.defaultParallel)
    probe.environment = NetworkEnvironment(environment: Runtime.environment)
    if verbose { probe.verbose = { Output.error($0) } }
    let refined = RemoteRefinement.refine(
      plan, facts: facts, secrets: Secrets(all: set.manifests.map(\.secrets)), options: probe)
    return (refined, facts)
  }

  /// `plan --horizon`: the runs due from the plan's now on.
  func forecast(_ plan: SessionPlan, facts: Facts, horizon: TimeSpan) -> Forecast {
    var conditions: [String: Conditions] = [:]
    for m in set.manifests { conditions[m.name] = m.conditions }
    let context = Forecast.Context(
      conditions: conditions, rate: plan.limits.rate, disks: facts.disks, utcOffset: FactGatherer.utcOffset(at:))
    return Forecast(plan: plan, horizon: horizon, context: context)
  }
}
