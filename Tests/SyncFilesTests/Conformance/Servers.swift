import Foundation

/// A web server of the conformance matrix, serving files from `docroot`.
protocol WebServer: AnyObject {
  var name: String { get }
  /// `http://127.0.0.1:PORT` (or https).
  var base: String { get }
  var docroot: String { get }
  /// Extra manifest lines for each file entry (TLS trust, proxy).
  var entryKeys: String { get }
  /// Environment for syncfiles (proxy variables).
  var environment: [String: String] { get }
  /// Whether the server honours Range (Python's http.server does not).
  var honoursRange: Bool { get }
}

/// Every server of the matrix sends the files under `/slow/` at about
/// 1 MiB/s a connection (a busy mirror's cap), the rest at full speed.
let slowRateKiB = 1024

extension WebServer {
  var entryKeys: String { "" }
  var environment: [String: String] { [:] }
  var honoursRange: Bool { true }

  /// Writes a file to serve, with its modification time set to the nanosecond.
  func put(_ path: String, _ bytes: [UInt8], mtime: timespec) {
    let full = docroot + "/" + path
    try? FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let tmp = full + ".tmp"
    write(bytes, to: tmp)
    chmod(tmp, 0o644)
    var times = [timespec(tv_sec: mtime.tv_sec, tv_nsec: mtime.tv_nsec), mtime]
    utimensat(AT_FDCWD, tmp, &times, 0)
    rename(tmp, full)
  }
}

/// Seconds since the epoch, as a timespec `offset` seconds from now.
func timeFromNow(_ offset: Int) -> timespec {
  var now = timespec()
  clock_gettime(CLOCK_REALTIME, &now)
  return timespec(tv_sec: now.tv_sec + offset, tv_nsec: 0)
}

/// Runs a command to completion; throws with its output when it fails.
@discardableResult
func shell(_ args: [String], cwd: String? = nil) throws -> String {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  p.arguments = args
  if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
  let out = Pipe()
  p.standardOutput = out
  p.standardError = out
  try p.run()
  let data = out.fileHandleForReading.readDataToEndOfFile()
  p.waitUntilExit()
  let text = String(decoding: data, as: UTF8.self)
  guard p.terminationStatus == 0 else {
    throw CocoaError(
      .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(args.joined(separator: " ")) failed: \(text)"])
  }
  return text
}

/// A certificate authority made for one test, and a server certificate it
/// signed for 127.0.0.1 and localhost (openssl, EC keys: fast to make).
final class TestCA {
  let dir = makeTempDir()
  var caFile: String { dir + "/ca.pem" }
  var certFile: String { dir + "/server.pem" }
  var keyFile: String { dir + "/server.key" }

  /// `expired`: the server certificate's validity ended in 2020 (signed with
  /// `openssl ca`, which takes explicit dates).
  init(serverNames: String = "IP:127.0.0.1,DNS:localhost", expired: Bool = false) throws {
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    try shell(
      ["openssl", "req", "-x509"] + ec + [
        "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=syncfiles test CA",
      ], cwd: dir)
    try shell(
      ["openssl", "req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=test"], cwd: dir)
    write("subjectAltName=\(serverNames)\nbasicConstraints=CA:FALSE\n", to: dir + "/ext.cnf")
    if expired {
      try signExpired()
    } else {
      try shell(
        [
          "openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
          "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf",
        ], cwd: dir)
    }
    chmod(dir, 0o755)
    chmod(keyFile, 0o644)  // the server's workers read it; a test key, never a real one
  }

  private func signExpired() throws {
    write(
      """
      [ca]
      default_ca = test
      [test]
      database = index.txt
      new_certs_dir = .
      certificate = ca.pem
      private_key = ca.key
      serial = serial
      default_md = sha256
      policy = any
      [any]
      commonName = supplied

      """, to: dir + "/ca.cnf")
    write("", to: dir + "/index.txt")
    write("01\n", to: dir + "/serial")
    try shell(
      [
        "openssl", "ca", "-batch", "-config", "ca.cnf", "-in", "server.csr", "-out", "server.pem", "-notext",
        "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-extfile", "ext.cnf",
      ], cwd: dir)
  }

  /// A copy of the server's key that only its owner reads, for use as a client key.
  func privateKeyCopy(mode: mode_t = 0o600) -> String {
    let path = dir + "/client-\(mode).key"
    write(readBytes(keyFile) ?? [], to: path)
    chmod(path, mode)
    return path
  }

  deinit { try? FileManager.default.removeItem(atPath: dir) }
}

/// nginx on loopback, plain or with TLS and HTTP/2; its access log names
/// the connection (`$connection`) and protocol of every request.
/// The lines every nginx of the tests starts with: in the foreground, its
/// pid and error log in `dir`.
func nginxPreamble(_ dir: String) -> String {
  "daemon off;\npid \(dir)/nginx.pid;\nerror_log \(dir)/error.log;\nevents { worker_connections 1024; }"
}

/// nginx's temporary folders, in `dir` (the defaults are the system's).
func nginxTempPaths(_ dir: String) -> String {
  ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(dir)/\($0);" }.joined(separator: " ")
}

final class NginxServer: WebServer {
  let dir = makeTempDir()
  let port: Int
  let tls: TestCA?
  private var daemon: Daemon!
  var name: String { tls == nil ? "nginx" : "nginx TLS+HTTP/2" }
  var base: String { "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)" }
  var docroot: String { dir + "/www" }
  var entryKeys: String { tls.map { ", tls: {ca_file: '\($0.caFile)'}" } ?? "" }

  /// `extra`: more directives for the server block (client certificates, auth).
  /// `alsoOn`: more addresses to listen on, same port (a test network's,
  /// or other loopback addresses: other hosts to a client).
  /// `http2`: with `tls`, offer HTTP/2 (false: HTTP/1.1 only, one request
  /// at a time on each connection).
  init(
    tls: TestCA? = nil, http2: Bool = true, limitRate: String? = nil, extra: String = "", alsoOn: [String] = []
  ) throws {
    let bin = try installed(["/usr/sbin/nginx"], package: "nginx")
    self.tls = tls
    port = try freePort()
    try FileManager.default.createDirectory(atPath: dir + "/www", withIntermediateDirectories: true)
    chmod(dir, 0o755)
    let p = port
    let suffix = tls == nil ? "" : " ssl\(http2 ? " http2" : "")"
    let listen =
      (["127.0.0.1"] + alsoOn).map { "listen \($0):\(p)\(suffix);" }.joined(separator: " ")
      + (tls.map { " ssl_certificate \($0.certFile); ssl_certificate_key \($0.keyFile);" } ?? "")
    write(
      """
      \(nginxPreamble(dir))
      http {
        \(nginxTempPaths(dir))
        log_format conn '$connection $server_protocol $status $request';
        access_log \(dir)/access.log conn;
        log_format tls '$connection $ssl_session_reused';
        access_log \(dir)/tls.log tls;
        log_format bytes '$body_bytes_sent $status $http_range';
        access_log \(dir)/bytes.log bytes;
        log_format origin '$status $body_bytes_sent $uri';
        access_log \(dir)/origin.log origin;
        keepalive_requests 10000;
        http2_max_requests 10000;
        server {
          \(listen) root \(dir)/www; \(limitRate.map { "limit_rate \($0);" } ?? "") \(extra)
          location /slow/ { limit_rate \(slowRateKiB)k; }
        }
      }

      """, to: dir + "/nginx.conf")
    daemon = try Daemon(
      bin, ["-p", dir, "-c", dir + "/nginx.conf", "-e", dir + "/error.log"], port: port, name: "nginx",
      log: dir + "/error.log")
  }

  var errorLog: String { (try? String(contentsOfFile: dir + "/error.log", encoding: .utf8)) ?? "" }

  /// Access log lines: connection number, protocol, status, request line.
  var accessLog: [String] {
    ((try? String(contentsOfFile: dir + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
  }

  /// Body bytes sent for requests that asked for `Range` or not, in all (a
  /// request cut short by the client counts what was sent until then).
  var bodyBytesSent: Int {
    let lines = ((try? String(contentsOfFile: dir + "/bytes.log", encoding: .utf8)) ?? "").split(separator: "\n")
    return lines.reduce(0) { $0 + (Int($1.split(separator: " ").first ?? "") ?? 0) }
  }

  /// Every request served, in order: status, body bytes sent, path.
  var served: [(status: Int, bytes: Int, path: String)] {
    let text = (try? String(contentsOfFile: dir + "/origin.log", encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { line in
      let f = line.split(separator: " ", maxSplits: 2)
      guard f.count == 3, let status = Int(f[0]), let bytes = Int(f[1]) else { return nil }
      return (status, bytes, String(f[2]))
    }
  }

  /// TLS handshakes by the connections that served a request: full ones,
  /// and those that resumed an earlier session (`$ssl_session_reused`).
  var handshakes: (full: Int, resumed: Int) {
    let lines = ((try? String(contentsOfFile: dir + "/tls.log", encoding: .utf8)) ?? "").split(separator: "\n")
    var reused: [Substring: Bool] = [:]
    for line in lines {
      let f = line.split(separator: " ")
      if f.count == 2 { reused[f[0]] = f[1] == "r" }
    }
    let resumed = reused.values.filter { $0 }.count
    return (reused.count - resumed, resumed)
  }

  deinit {
    daemon = nil
    try? FileManager.default.removeItem(atPath: dir)
  }
}

/// Apache httpd 2.4 (event MPM, static files only) on loopback.
final class ApacheServer: WebServer {
  let dir = makeTempDir()
  let port: Int
  private var daemon: Daemon!
  let tls: TestCA?
  var name: String { tls == nil ? "Apache httpd" : "Apache httpd TLS (HTTP/1.1)" }
  var base: String { "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)" }
  var docroot: String { dir + "/www" }
  var entryKeys: String { tls.map { ", tls: {ca_file: '\($0.caFile)'}" } ?? "" }

  /// `tls`: HTTPS with HTTP/1.1 only (no mod_http2), so ALPN says http/1.1.
  init(tls: TestCA? = nil) throws {
    let bin = try installed(["/usr/sbin/apache2"], package: "apache2")
    self.tls = tls
    port = try freePort()
    try FileManager.default.createDirectory(atPath: docroot, withIntermediateDirectories: true)
    chmod(dir, 0o755)
    let modules = "/usr/lib/apache2/modules"
    let ssl =
      tls.map {
        """
        LoadModule socache_shmcb_module \(modules)/mod_socache_shmcb.so
        LoadModule ssl_module \(modules)/mod_ssl.so
        SSLEngine on
        SSLCertificateFile \($0.certFile)
        SSLCertificateKeyFile \($0.keyFile)
        SSLSessionCache shmcb:\(dir)/ssl_scache(512000)
        """
      } ?? ""
    write(
      """
      ServerRoot \(dir)
      ServerName 127.0.0.1
      Listen 127.0.0.1:\(port)
      LoadModule mpm_event_module \(modules)/mod_mpm_event.so
      LoadModule authz_core_module \(modules)/mod_authz_core.so
      LoadModule mime_module \(modules)/mod_mime.so
      LoadModule env_module \(modules)/mod_env.so
      LoadModule ratelimit_module \(modules)/mod_ratelimit.so
      \(ssl)
      TypesConfig /dev/null
      User www-data
      Group www-data
      PidFile \(dir)/httpd.pid
      ErrorLog \(dir)/error.log
      DefaultRuntimeDir \(dir)
      Mutex file:\(dir) default
      DocumentRoot \(docroot)
      <Directory \(docroot)>
        Require all granted
      </Directory>
      <Location /slow/>
        SetOutputFilter RATE_LIMIT
        SetEnv rate-limit \(slowRateKiB)
      </Location>

      """, to: dir + "/httpd.conf")
    daemon = try Daemon(
      bin, ["-DFOREGROUND", "-f", dir + "/httpd.conf"], port: port, name: "apache2", log: dir + "/error.log")
  }

  deinit {
    daemon = nil
    try? FileManager.default.removeItem(atPath: dir)
  }
}

/// lighttpd on loopback.
final class LighttpdServer: WebServer {
  let dir = makeTempDir()
  let port: Int
  private var daemon: Daemon!
  let name = "lighttpd"
  var base: String { "http://127.0.0.1:\(port)" }
  var docroot: String { dir + "/www" }

  init() throws {
    let bin = try installed(["/usr/sbin/lighttpd"], package: "lighttpd")
    port = try freePort()
    try FileManager.default.createDirectory(atPath: docroot, withIntermediateDirectories: true)
    write(
      """
      server.document-root = "\(docroot)"
      server.bind = "127.0.0.1"
      server.port = \(port)
      server.errorlog = "\(dir)/error.log"
      mimetype.assign = ("" => "application/octet-stream")
      # Its default stat cache serves the old version for up to a second after
      # a change (seen); the matrix changes files within milliseconds.
      server.stat-cache-engine = "disable"
      $HTTP["url"] =~ "^/slow/" { connection.kbytes-per-second = \(slowRateKiB) }

      """, to: dir + "/lighttpd.conf")
    daemon = try Daemon(
      bin, ["-D", "-f", dir + "/lighttpd.conf"], port: port, name: "lighttpd", log: dir + "/error.log")
  }

  deinit {
    daemon = nil
    try? FileManager.default.removeItem(atPath: dir)
  }
}

/// Python's http.server: Last-Modified and If-Modified-Since, no ETag, no Range.
final class PythonServer: WebServer {
  let dir = makeTempDir()
  let port: Int
  private var daemon: Daemon!
  let name = "Python http.server"
  var base: String { "http://127.0.0.1:\(port)" }
  var docroot: String { dir + "/www" }
  var honoursRange: Bool { false }

  init() throws {
    port = try freePort()
    try FileManager.default.createDirectory(atPath: docroot, withIntermediateDirectories: true)
    // http.server's own handler, with the copy of files under /slow/ paced.
    let script = """
      import functools, http.server, sys, time
      class H(http.server.SimpleHTTPRequestHandler):
          def copyfile(self, src, dst):
              if not self.path.startswith("/slow/"):
                  return super().copyfile(src, dst)
              while chunk := src.read(\(slowRateKiB * 1024 / 10)):
                  dst.write(chunk); dst.flush(); time.sleep(0.1)
      http.server.test(HandlerClass=functools.partial(H, directory=sys.argv[1]),
                       ServerClass=http.server.ThreadingHTTPServer, port=int(sys.argv[2]), bind="127.0.0.1")
      """
    daemon = try Daemon(
      "/usr/bin/env", ["python3", "-c", script, docroot, "\(port)"], port: port, name: "http.server", log: "/dev/null")
  }

  deinit {
    daemon = nil
    try? FileManager.default.removeItem(atPath: dir)
  }
}

/// Squid as a caching forward proxy on loopback (memory cache only).
final class Squid {
  let dir = makeTempDir()
  let port: Int
  private var daemon: Daemon!
  var url: String { "http://127.0.0.1:\(port)" }

  /// `fleet`: the tested fleet configuration of `Docs/fleet/squid.conf`
  /// (collapsed forwarding, whole objects for ranges); else a plain cache.
  init(fleet: Bool = false) throws {
    let bin = try installed(["/usr/sbin/squid"], package: "squid")
    port = try freePort()
    chmod(dir, 0o777)  // squid drops to its own user and writes its logs here
    let config = fleet ? try fleetConfig("squid.conf", ["@PORT@": "\(port)", "@DIR@": dir]) : plainConfig
    write(config, to: dir + "/squid.conf")
    daemon = try Daemon(bin, ["-N", "-f", dir + "/squid.conf"], port: port, name: "squid", log: dir + "/cache.log")
  }

  private var plainConfig: String {
    """
    http_port 127.0.0.1:\(port)
    pid_filename \(dir)/squid.pid
    cache_log \(dir)/cache.log
    access_log stdio:\(dir)/access.log squid
    cache_store_log none
    coredump_dir \(dir)
    cache_mem 64 MB
    maximum_object_size_in_memory 32 MB
    maximum_object_size 32 MB
    visible_hostname syncfiles-test
    shutdown_lifetime 0 seconds
    http_access allow localhost
    http_access deny all

    """
  }

  /// Access log lines (`TCP_MISS/200`, `TCP_REFRESH_MODIFIED/200`, `TCP_TUNNEL/200 … CONNECT`…).
  var accessLog: [String] {
    ((try? String(contentsOfFile: dir + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
  }

  deinit {
    daemon = nil
    try? FileManager.default.removeItem(atPath: dir)
  }
}

/// A configuration shipped in `Docs/fleet/`, with the test's values put
/// in place of its `@NAME@` placeholders (the docs show it as tested).
func fleetConfig(_ name: String, _ values: [String: String]) throws -> String {
  var text = try String(contentsOfFile: packageRoot + "/Docs/fleet/" + name, encoding: .utf8)
  for (k, v) in values { text = text.replacingOccurrences(of: k, with: v) }
  return text
}

/// nginx as a caching mirror (`proxy_cache`) in front of an origin, with
/// the tested configuration of `Docs/fleet/nginx-cache.conf`.
final class NginxCache {
  let dir = makeTempDir()
  let port: Int
  private var daemon: Daemon!
  var base: String { "http://127.0.0.1:\(port)" }

  init(origin: String) throws {
    let bin = try installed(["/usr/sbin/nginx"], package: "nginx")
    port = try freePort()
    let cache = try fleetConfig("nginx-cache.conf", ["@PORT@": "\(port)", "@DIR@": dir, "@ORIGIN@": origin])
    write(
      """
      \(nginxPreamble(dir))
      http {
        \(nginxTempPaths(dir))
        log_format cache '$status $upstream_cache_status $body_bytes_sent $uri';
        access_log \(dir)/access.log cache;
      \(cache)
      }

      """, to: dir + "/nginx.conf")
    daemon = try Daemon(
      bin, ["-p", dir, "-c", dir + "/nginx.conf", "-e", dir + "/error.log"], port: port, name: "nginx cache",
      log: dir + "/error.log")
  }

  /// Access log lines: status, cache status (HIT, MISS, EXPIRED, UPDATING…), bytes, path.
  var accessLog: [String] {
    ((try? String(contentsOfFile: dir + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
  }

  deinit {
    daemon = nil
    try? FileManager.default.removeItem(atPath: dir)
  }
}

/// An origin reached through Squid: plain http through its cache (manifest
/// `proxy:`), or https through CONNECT (`https_proxy` in the environment).
final class ThroughSquid: WebServer {
  let origin: WebServer
  let squid: Squid
  let viaEnvironment: Bool
  var name: String { "Squid → \(origin.name)" }
  var base: String { origin.base }
  var docroot: String { origin.docroot }
  var entryKeys: String { origin.entryKeys + (viaEnvironment ? "" : ", proxy: '\(squid.url)'") }
  var environment: [String: String] {
    viaEnvironment ? ["https_proxy": squid.url, "HTTPS_PROXY": squid.url, "no_proxy": "", "NO_PROXY": ""] : [:]
  }

  init(origin: WebServer, squid: Squid, viaEnvironment: Bool) {
    self.origin = origin
    self.squid = squid
    self.viaEnvironment = viaEnvironment
  }
}
