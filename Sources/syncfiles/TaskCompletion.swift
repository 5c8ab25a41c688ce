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

/// Shell completion of `--only`: the task ids of the manifests already on
/// the command line (`name/id`; a prefix's objects are not listed).
enum TaskCompletion {
  static let kind = CompletionKind.custom { words, _, typed in ids(words: words, typed: typed) }

  /// Options whose next word is their value, not a manifest.
  static let valued: Set<String> = [
    "--journal", "--format", "--now", "--only", "--parallel", "--rate", "--deadline", "--progress", "--metrics",
    "--horizon", "--max-late",
  ]

  static func ids(words: [String], typed: String) -> [String] {
    var paths: [String] = []
    var previous = ""
    for w in words.dropFirst() {
      defer { previous = w }
      guard !w.hasPrefix("-"), !valued.contains(previous), access(w, R_OK) == 0 else { continue }
      paths.append(w)
    }
    guard !paths.isEmpty else { return [] }
    let loader = ManifestLoader(environment: Runtime.environment, workingDirectory: Runtime.workingDirectory)
    let set = loader.load(paths: paths)
    return set.manifests.flatMap { $0.files.map(\.qualifiedID) }.filter { $0.hasPrefix(typed) }
  }
}
