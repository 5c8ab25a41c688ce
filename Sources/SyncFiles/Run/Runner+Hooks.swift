import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

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
    var owedByManifest: [Int: [String]] = [:]
    for (n, t) in plan.tasks.enumerated() where t.selected {
      let owed = journal.owedHooks(t.id)
      let m = manifestIndex(of: t)
      if owed.complete { owedByManifest[m, default: []].append(t.id) }
      guard owed.change else { continue }
      let err = run(.fileChanged(t.entry, manifest: manifests[m]))
      reports[n].hookError = err
      if err == nil { journal.update(t.id) { $0.changeHookPending = false } }
    }
    for (m, owed) in owedByManifest.sorted(by: { $0.key < $1.key }) {
      guard run(.manifestChanged(manifests[m], changed: owed)) == nil else { continue }
      for id in owed { journal.update(id) { $0.completeHookPending = false } }
    }
    return errors
  }
}
