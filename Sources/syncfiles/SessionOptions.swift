import ArgumentParser
import SyncFiles
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

#if canImport(Glibc)
  import Glibc
#endif

/// Options of every command that reads manifests and a journal.
struct SessionOptions: ParsableArguments {
  @Option(
    help:
      "The journal file (default: $SYNCFILES_JOURNAL, the manifests' journal key, else $STATE_DIRECTORY/journal, as root /var/lib/syncfiles/journal, else $XDG_STATE_HOME/syncfiles/journal, ~/.local/state/syncfiles/journal).",
    completion: .file()
  )
  var journal: String?

  @Option(help: "Output format on stdout: text or json.")
  var format: OutputFormat = .text

  @Option(help: "Evaluate schedules, not_before, backoff and windows as if it were TIME (RFC 3339).")
  var now: String?

  /// The options as plain values.
  var settings: SessionSettings { SessionSettings(journal: journal, format: format, now: now) }
}

/// `SessionOptions` as plain values, which the commands hand to the library.
struct SessionSettings: Equatable {
  var journal: String? = nil
  var format: OutputFormat = .text
  var now: String? = nil

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
  /// The destinations' check, when it runs beside the planning (`plan`):
  /// `planAndFacts` waits for it before it returns.
  var destinations: DestinationCheck? = nil

  /// Loads and checks the manifests (exit 2 with every error on stderr when
  /// any is invalid) and reads the journal without locking it.
  /// `deferDestinations`: the destinations are checked on a thread of their
  /// own while the caller plans (`planAndFacts` reports their errors).
  static func load(paths: [String], options: SessionSettings, deferDestinations: Bool = false) throws -> LoadedSession {
    let (set, path, destinations) = try manifests(
      paths: paths, options: options, prefetch: nil, deferDestinations: deferDestinations)
    let contents: JournalFormat.Contents
    do {
      contents = try JournalReader.read(path: path)
    } catch {
      Output.error("syncfiles: \(error.message)")
      throw ExitCode(ExitStatus.usage.rawValue)
    }
    if let note = contents.damageNote(path: path, rewritten: false) { Output.error("syncfiles: \(note)") }
    return LoadedSession(set: set, journalPath: path, journal: contents, destinations: destinations)
  }

  /// Loads and checks the manifests (exit 2 with every error on stderr when
  /// any is invalid) and resolves the journal's path.
  /// `prefetch`: started on the journal's path as soon as it is known (the
  /// flag or the environment at once, else the first manifest that names one).
  static func manifests(
    paths: [String], options: SessionSettings, plugins: PluginRegistry? = nil, prefetch: JournalPrefetch? = nil
  ) throws -> (ManifestSet, String) {
    let (set, path, _) = try manifests(
      paths: paths, options: options, plugins: plugins, prefetch: prefetch, deferDestinations: false)
    return (set, path)
  }

  private static func manifests(
    paths: [String], options: SessionSettings, plugins: PluginRegistry? = nil, prefetch: JournalPrefetch?,
    deferDestinations: Bool
  ) throws -> (ManifestSet, String, DestinationCheck?) {
    let env = Runtime.environment
    let cwd = Runtime.workingDirectory
    var loader = ManifestLoader(environment: env, plugins: plugins, workingDirectory: cwd)
    if let prefetch {
      // The flag and the environment win over any manifest's key: then the path is known at once.
      if options.journal?.isEmpty == false || env["SYNCFILES_JOURNAL"]?.isEmpty == false {
        if let path = try? JournalLocation.resolve(
          flag: options.journal, environment: env, manifests: [], isRoot: getuid() == 0, workingDirectory: cwd)
        {
          prefetch.start(path: path)
        }
      }
      loader.onJournalKey = { prefetch.start(path: $0) }
    }
    var set = deferDestinations ? loader.loadDeferringDestinations(paths: paths) : loader.load(paths: paths)
    Output.mask(set.secrets)
    var destinations: DestinationCheck? = nil
    if deferDestinations {
      // With errors already, every error is shown at once, as without deferring.
      if set.hasErrors {
        set.diagnostics += ManifestLoader.destinationConflicts(set)
      } else {
        destinations = DestinationCheck(set)
      }
    }
    if set.hasErrors { try refuse(set) }
    do throws(JournalError) {
      let path = try JournalLocation.resolve(
        flag: options.journal, environment: env, manifests: set.manifests, isRoot: getuid() == 0,
        workingDirectory: cwd)
      return (set, path, destinations)
    } catch {
      Output.error("syncfiles: \(error.message)")
      throw ExitCode(ExitStatus.usage.rawValue)
    }
  }

  /// Every error on stderr, and exit 2: nothing is done with invalid manifests.
  private static func refuse(_ set: ManifestSet) throws -> Never {
    for d in ValidationReport(set: set).sortedDiagnostics where d.severity == .error {
      Output.error(d.description)
    }
    Output.error("nothing was done: fix the errors above (`syncfiles validate` shows warnings too)")
    throw ExitCode(ExitStatus.usage.rawValue)
  }

  /// Waits for a deferred destination check; its errors end the command as
  /// any other manifest error would (exit 2, nothing shown but the errors).
  func requireSoundDestinations() throws {
    guard let destinations else { return }
    let conflicts = destinations.wait()
    guard !conflicts.isEmpty else { return }
    var set = set
    set.diagnostics += conflicts
    try Self.refuse(set)
  }

  /// `digests: false` (status): no destination is hashed for adoption.
  func plan(
    now: Timestamp, options: PlanOptions, remote: Bool = false, verbose: Bool = false, digests: Bool = true
  ) throws -> SessionPlan {
    try planAndFacts(now: now, options: options, remote: remote, verbose: verbose, digests: digests).plan
  }

  /// The plan, and the facts it was made from (the forecast reads their disks).
  func planAndFacts(
    now: Timestamp, options: PlanOptions, remote: Bool = false, verbose: Bool = false, digests: Bool = true
  ) throws -> (plan: SessionPlan, facts: Facts) {
    let expanded = expandPrefixes(now: now, only: options.only, remote: remote, verbose: verbose)
    var facts = FactGatherer.gather(for: expanded.manifests, journal: journal.tasks, now: now, digests: digests)
    facts.listed = expanded.listed
    var plan = Planner.plan(
      manifests: expanded.manifests, journal: journal.tasks, facts: facts, options: options, journalPath: journalPath)
    plan.prefixes = expanded.prefixes
    try requireSoundDestinations()
    guard remote else { return (plan, facts) }
    var probe = RemoteProbe.Options(parallel: plan.limits.parallel ?? Limits.defaultParallel)
    probe.environment = NetworkEnvironment(environment: Runtime.environment)
    if verbose { probe.verbose = { Output.error($0) } }
    let env = Runtime.environment
    probe.mapped = { url, network in
      S3Source.probeTarget(url: url.text.revealed, options: network.s3, environment: env).map {
        $0.mapError { RemoteProbe.MappingFailure($0.message) }
      }
    }
    let refined = RemoteRefinement.refine(
      plan, facts: facts, journal: journal.tasks, secrets: Secrets(all: set.manifests.map(\.secrets)), options: probe)
    return (refined, facts)
  }

  /// Prefix entries made into their objects' entries: from the journal's
  /// last listings, or with `--remote` listed now.
  func expandPrefixes(now: Timestamp, only: [String], remote: Bool, verbose: Bool) -> PrefixExpansion.Result {
    let sources: [String: PrefixSource]
    if remote {
      var options = PrefixListings.Options(now: now)
      options.environment = NetworkEnvironment(environment: Runtime.environment)
      if verbose { options.verbose = { Output.error($0) } }
      let plugins = PluginRegistry.standard(locator: PluginLocator(environment: Runtime.environment))
      sources = PrefixListings.listed(set.manifests, plugins: plugins, options: options, only: only)
    } else {
      sources = PrefixListings.recorded(set.manifests, journal: journal.listings, only: only)
    }
    return PrefixExpansion.expand(set.manifests, sources: sources, journal: journal.tasks, only: only)
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
