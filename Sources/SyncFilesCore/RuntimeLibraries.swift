internal import CCurl
internal import CYAML

#if canImport(Glibc)
  import Glibc
#endif

/// The C libraries syncfiles runs on (the rest of `Runtime` needs neither).
extension Runtime {
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
