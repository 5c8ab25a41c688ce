import CCurl
import CYAML

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
}
