extension Runner {
  /// The hooks the journal says are owed (SPEC §8.2): `on_change` for each
  /// file whose change has not yet been hooked successfully, then
  /// `on_complete` once per manifest with such a file. A hook that fails
  /// stays owed and runs again on the next apply, even if nothing changes
  /// then; one that succeeds is cleared and never runs again for that change.
  /// Failures are reported, never fatal to others.
  func runHooks() -> [String] {
    var errors: [String] = []
    func run(_ event: HookEvent) -> String? {
      var first: String? = nil
      for hook in plugins.hooks {
        guard let r = hook.run(event, timeout: options.hookTimeout), let err = r.error else { continue }
        options.log?("syncfiles: \(err)")
        errors.append(err)
        first = first ?? err
      }
      return first
    }
    var owedByManifest: [Int: [Int]] = [:]
    for i in jobs.indices where plan.tasks[i].selected {
      let id = plan.tasks[i].id
      let owed = journal.owedHooks(id)
      if owed.complete { owedByManifest[jobs[i].manifest, default: []].append(i) }
      guard owed.change else { continue }
      let err = run(.fileChanged(plan.tasks[i].entry, manifest: manifests[jobs[i].manifest]))
      reports[i].hookError = err
      if err == nil { journal.update(id) { $0.changeHookPending = false } }
    }
    for (m, owed) in owedByManifest.sorted(by: { $0.key < $1.key }) {
      guard run(.manifestChanged(manifests[m], changed: owed.map { plan.tasks[$0].id })) == nil else { continue }
      for i in owed { journal.update(plan.tasks[i].id) { $0.completeHookPending = false } }
    }
    return errors
  }
}
