import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// The one redirect rule, shared by apply and plan --remote: pure.
@Suite struct RedirectTests {
  @Test func onlyThreeHundredsOtherThan304AreRedirects() {
    #expect(Redirect.decide(status: 200, location: "http://a/", hops: 0) == nil)
    #expect(Redirect.decide(status: 304, location: "http://a/", hops: 0) == nil)
    #expect(Redirect.decide(status: 302, location: "https://b/x", hops: 0) == .follow("https://b/x"))
    #expect(Redirect.decide(status: 308, location: "HTTP://B/x", hops: 9) == .follow("HTTP://B/x"))
  }

  @Test func refusalsSayWhy() {
    #expect(Redirect.decide(status: 301, location: nil, hops: 0) == .refuse("HTTP 301 redirect without a Location"))
    #expect(
      Redirect.decide(status: 302, location: "file:///etc/passwd", hops: 0)
        == .refuse("redirect refused: the target's scheme is 'file' (only http and https are followed)"))
    #expect(Redirect.decide(status: 302, location: "http://a/", hops: 10) == .refuse("more than 10 redirects"))
  }
}
