#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Finds external plugin executables: first in `SYNCFILES_PLUGIN_PATH`
/// (colon-separated folders), then on `PATH`, like git and kubectl subcommands.
public struct PluginLocator: Sendable, Hashable {
  public var searchPath: [String]

  public init(searchPath: [String]) {
    self.searchPath = searchPath
  }

  public init(environment: [String: String]) {
    let own = (environment["SYNCFILES_PLUGIN_PATH"] ?? "").split(separator: ":").map(String.init)
    let path = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
    self.init(searchPath: (own + path).filter { !$0.isEmpty })
  }

  public static func sourceExecutable(scheme: String) -> String { "syncfiles-source-\(scheme)" }
  public static func verifierExecutable(name: String) -> String { "syncfiles-verify-\(name)" }

  /// The first executable regular file named `name` on the search path.
  public func find(_ name: String) -> String? {
    for dir in searchPath {
      let candidate = dir.hasSuffix("/") ? dir + name : dir + "/" + name
      var st = stat()
      guard stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 else {
        continue
      }
      return candidate
    }
    return nil
  }
}

extension PluginLocator {
  /// Names of the executable regular files in `dir` that look like plugins, sorted.
  package static func executables(in dir: String) -> [String] {
    var names: [String] = []
    for name in FileIO.listFolder(dir) ?? [] {
      guard name.hasPrefix("syncfiles-source-") || name.hasPrefix("syncfiles-verify-") else { continue }
      let path = dir.hasSuffix("/") ? dir + name : dir + "/" + name
      var st = stat()
      guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(path, X_OK) == 0 else { continue }
      names.append(name)
    }
    return names.sorted()
  }
}
