import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// Where an `s3://` request goes and whose keys sign it, found as the AWS
/// CLI finds them (SPEC §9.4):
/// - keys: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (and
///   `AWS_SESSION_TOKEN`), else the profile's in the shared credentials
///   file (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`), else
///   in the config file (`AWS_CONFIG_FILE`, else `~/.aws/config`);
/// - the profile: `AWS_PROFILE`, else `default`;
/// - the region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's
///   `region`, else `us-east-1`;
/// - the endpoint: `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's
///   `endpoint_url`, else AWS's own for the region. Another endpoint (MinIO,
///   a test server) is addressed by path (`/BUCKET/KEY`), AWS's by virtual
///   host (`BUCKET.s3.REGION.amazonaws.com`).
/// The manifest's `s3:` keys come first: a `profile` there reads that
/// profile's keys (as the CLI's `--profile` does, over the key variables),
/// and `addressing` chooses path or virtual-host addressing.
/// Pure: the caller gives the environment and a way to read a file.
public struct S3Settings: Sendable, Hashable {
  public var region: String
  /// `scheme://host[:port]`, no trailing slash; nil for AWS.
  public var endpoint: String?
  public var accessKey: String
  public var secretKey: String
  public var sessionToken: String?
  public var profile: String
  /// Where the keys were found, for messages (never the keys).
  public var keysFrom: String
  /// `ENDPOINT/BUCKET/KEY` rather than `BUCKET.HOST/KEY`.
  public var pathStyle: Bool

  /// Why no settings could be made.
  public enum Problem: Error, Sendable, Hashable {
    case noCredentials(profile: String, looked: [String])
    case incompleteKeys(from: String)

    public var message: String {
      switch self {
      case .noCredentials(let p, let looked):
        return
          "no AWS credentials for profile \(p): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add the profile to \(looked.joined(separator: " or "))"
      case .incompleteKeys(let from):
        return "\(from) holds an access key id or a secret access key without the other"
      }
    }
  }

  public static func resolve(
    environment env: [String: String], readFile: (String) -> String?, options: S3Options = S3Options()
  ) -> Result<S3Settings, Problem> {
    func value(_ k: String) -> String? { env[k].flatMap { $0.isEmpty ? nil : $0 } }
    let profile = options.profile ?? value("AWS_PROFILE") ?? "default"
    let home = value("HOME") ?? "/root"
    let credentialsPath = value("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials"
    let configPath = value("AWS_CONFIG_FILE") ?? home + "/.aws/config"
    let credentials = readFile(credentialsPath).map { INI.sections($0)[profile] ?? [:] } ?? [:]
    let configName = profile == "default" ? "default" : "profile " + profile
    let config = readFile(configPath).map { INI.sections($0)[configName] ?? [:] } ?? [:]

    var keys: (String, String, String?, String)?
    let fromVariables =
      options.profile == nil
      ? ("AWS_ACCESS_KEY_ID", value("AWS_ACCESS_KEY_ID"), value("AWS_SECRET_ACCESS_KEY"), value("AWS_SESSION_TOKEN"))
      : ("AWS_ACCESS_KEY_ID", nil, nil, nil)
    for (from, id, secret, token) in [
      fromVariables,
      (
        credentialsPath, credentials["aws_access_key_id"], credentials["aws_secret_access_key"],
        credentials["aws_session_token"]
      ),
      (configPath, config["aws_access_key_id"], config["aws_secret_access_key"], config["aws_session_token"]),
    ] {
      if id == nil && secret == nil { continue }
      guard let id, let secret else { return .failure(.incompleteKeys(from: from)) }
      keys = (id, secret, token, from)
      break
    }
    guard let (id, secret, token, from) = keys else {
      return .failure(.noCredentials(profile: profile, looked: [credentialsPath, configPath]))
    }
    let region =
      options.region ?? value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? config["region"] ?? "us-east-1"
    var endpoint =
      options.endpoint ?? value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL") ?? config["endpoint_url"]
    while endpoint?.hasSuffix("/") == true { endpoint?.removeLast() }
    return .success(
      S3Settings(
        region: region, endpoint: endpoint, accessKey: id, secretKey: secret, sessionToken: token,
        profile: profile, keysFrom: from, pathStyle: options.addressing.map { $0 == .path } ?? (endpoint != nil)))
  }

  /// The request for `key` in `bucket`: its URL, its signing, the headers S3
  /// wants (the empty body's SHA-256, the checksum asked for, the session
  /// token) and the values to mask.
  public func target(bucket: String, key: String) -> SignedTarget {
    var headers = ["x-amz-content-sha256: \(S3Object.emptyBodySHA256)", "x-amz-checksum-mode: ENABLED"]
    if let token = sessionToken { headers.append("x-amz-security-token: \(token)") }
    return SignedTarget(
      url: url(bucket: bucket, key: key),
      signing: RequestSigning(provider: "aws:amz:\(region):s3", credentials: "\(accessKey):\(secretKey)"),
      headers: headers, secrets: Secrets(Set([secretKey] + (sessionToken.map { [$0] } ?? []))))
  }

  /// The HTTPS URL of `key` in `bucket`, each path segment percent-encoded
  /// as SigV4 requires (unreserved bytes kept, `/` kept between segments).
  public func url(bucket: String, key: String) -> String {
    let path = key.split(separator: "/", omittingEmptySubsequences: false).map { S3Settings.encode($0) }
      .joined(separator: "/")
    let base = endpoint ?? "https://s3.\(region).amazonaws.com"
    if pathStyle { return "\(base)/\(S3Settings.encode(bucket[...]))/\(path)" }
    guard let sep = base.firstRange(of: "://") else { return "\(base)/\(path)" }
    return "\(base[..<sep.upperBound])\(bucket).\(base[sep.upperBound...])/\(path)"
  }

  static func encode(_ s: Substring) -> String {
    var out = ""
    for b in s.utf8 {
      switch b {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(b))
      default:
        out += "%" + String(b >> 4, radix: 16, uppercase: true) + String(b & 15, radix: 16, uppercase: true)
      }
    }
    return out
  }
}

/// The INI files of the AWS CLI: `[section]` headers, `key = value` lines,
/// `#` and `;` comments. Nested settings (indented lines) are skipped.
enum INI {

  static func sections(_ text: String) -> [String: [String: String]] {
    var out: [String: [String: String]] = [:]
    var current: String?
    for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
      if raw.first == " " || raw.first == "\t" { continue }
      let line = raw.trimmingSpaces()
      if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
      if line.hasPrefix("[") && line.hasSuffix("]") {
        current = line.dropFirst().dropLast().trimmingSpaces()
        continue
      }
      guard let section = current, let eq = line.firstIndex(of: "=") else { continue }
      let key = line[..<eq].trimmingSpaces().lowercased()
      let value = line[line.index(after: eq)...].trimmingSpaces()
      out[section, default: [:]][key] = value
    }
    return out
  }
}
