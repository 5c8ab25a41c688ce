internal import CCurl
import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify

/// A libcurl failure in words a user can act on: TLS failures name their
/// cause (untrusted issuer, name mismatch, expired, handshake), decided on
/// libcurl's code and OpenSSL's verification result, never on text.
enum CurlFailure {
  /// OpenSSL `X509_V_ERR_*` codes (CURLINFO_SSL_VERIFYRESULT).
  static let untrustedIssuer: Set<Int> = [2, 18, 19, 20, 21, 27]
  static let expired = 10
  static let notYetValid = 9
  static let revoked = 23
  static let hostnameMismatch = 62
  /// `X509_V_ERR_UNSPECIFIED`: OpenSSL found the chain good and libcurl's
  /// own host name check refused the certificate (seen with libcurl 7.88 on
  /// Debian 12, whose check runs after OpenSSL's, so the result is not 62).
  static let checkedByLibcurl = 1

  static func outcome(code: CURLcode, easy: EasyRequest) -> TransferOutcome {
    let detail = easy.errorDetail
    let base = String(cString: curl_easy_strerror(code))
    let libcurl = detail.isEmpty ? base : detail
    switch code {
    case CURLE_PEER_FAILED_VERIFICATION:
      return failed(
        certificateProblem(easy.info(CURLINFO_SSL_VERIFYRESULT)) + " (\(libcurl))", retryable: false, code: code)
    case CURLE_SSL_CONNECT_ERROR:
      return failed("TLS handshake failed (\(libcurl))", retryable: true, code: code)
    case CURLE_SSL_CACERT_BADFILE:
      return failed(
        "the trusted CA certificates could not be read: check tls.ca_file / tls.ca_path, CURL_CA_BUNDLE, SSL_CERT_FILE and SSL_CERT_DIR (\(libcurl))",
        retryable: false, code: code)
    case CURLE_SSL_CERTPROBLEM:
      return failed(
        "the client certificate (tls.client_cert) could not be used (\(libcurl))", retryable: false, code: code)
    case CURLE_OUT_OF_MEMORY:
      // What a hostile server's giant header line gets from libcurl (its limit is 100 KiB a header).
      return failed(
        "the response could not be held: a header line past libcurl's 100 KiB limit, or no memory left (\(libcurl))",
        retryable: false, code: code)
    case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_FILE_COULDNT_READ_FILE, CURLE_REMOTE_FILE_NOT_FOUND,
      CURLE_TOO_MANY_REDIRECTS:
      return failed(libcurl, retryable: false, code: code)
    default:
      // libcurl's detail often ends with the same words ("…after 0 ms: Couldn't connect to server").
      return failed(
        detail.isEmpty || detail.contains(base) ? libcurl : "\(base): \(detail)", retryable: true, code: code)
    }
  }

  private static func failed(_ message: String, retryable: Bool, code: CURLcode) -> TransferOutcome {
    .failed(.network(code: Int(code.rawValue), message: message, retryable: retryable))
  }

  /// Why a server's certificate was refused.
  static func certificateProblem(_ verifyResult: Int) -> String {
    if untrustedIssuer.contains(verifyResult) {
      return
        "TLS: the server's certificate is not trusted: its issuer is not among the trusted CAs (name the CA with tls.ca_file, or CURL_CA_BUNDLE)"
    }
    switch verifyResult {
    case expired: return "TLS: the server's certificate has expired"
    case notYetValid: return "TLS: the server's certificate is not valid yet (check this machine's clock)"
    case revoked: return "TLS: the server's certificate was revoked"
    case hostnameMismatch, checkedByLibcurl, 0: return "TLS: the server's certificate does not name the host in the URL"
    default: return "TLS: the server's certificate was refused (OpenSSL verify result \(verifyResult))"
    }
  }
}
