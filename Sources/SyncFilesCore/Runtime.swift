internal import CCurl
internal import CYAML

#if canImport(Glibc)
  import Glibc
#endif

/// Versions of syncfiles and the C libraries it runs on.
public enum Runtime {
  public static let version = "0.1.0"

  public static var curlVersion: String { String(cString: sf_curl_version_string()) }

  public static var libraries: String {
    var major: Int32 = 0
    var minor: Int32 = 0
    var patch: Int32 = 0
    yaml_get_version(&major, &minor, &patch)
    let curl = curlVersion
    let ssl = String(cString: sf_curl_ssl_version_string())
    return "libcurl \(curl)\(ssl.isEmpty ? "" : " (\(ssl))"), libyaml \(major).\(minor).\(patch)"
  }

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
