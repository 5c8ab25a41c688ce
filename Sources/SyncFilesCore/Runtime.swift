#if canImport(Glibc)
  import Glibc
#endif

/// What syncfiles knows of its process: its version, environment and
/// working directory (`RuntimeLibraries.swift` adds the C libraries').
public enum Runtime {
  public static let version = "0.1.0"

  /// This process's environment, read from `environ` (no Foundation: it
  /// would cost every run its start-up time and a few MiB of memory).
  public static var environment: [String: String] {
    var env: [String: String] = [:]
    var e = environ
    while let p = e.pointee {
      let kv = String(cString: p)
      if let eq = kv.utf8.firstIndex(of: UInt8(ascii: "=")) {
        let key = String(kv[..<eq])
        if env[key] == nil { env[key] = String(kv[kv.utf8.index(after: eq)...]) }
      }
      e += 1
    }
    return env
  }

  /// The working directory (`/` if it cannot be read, e.g. it was removed).
  public static var workingDirectory: String {
    guard let p = getcwd(nil, 0) else { return "/" }
    defer { free(p) }
    return String(cString: p)
  }
}
