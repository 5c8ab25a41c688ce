import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// `-v` masks the credentials a presigned URL carries in its query (SPEC §10.3).
@Suite struct PresignedQueryTests {
  @Test func theSignatureCredentialAndTokenAreMaskedAndTheRestKept() {
    let line =
      "GET /b/k.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20261201&X-Amz-Date=20261201T000000Z&X-Amz-Expires=3600&X-Amz-Security-Token=FwoG&X-Amz-Signature=abcdef0123 HTTP/1.1"
    #expect(
      PresignedQuery.masking(line)
        == "GET /b/k.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Date=20261201T000000Z&X-Amz-Expires=3600&X-Amz-Security-Token=***&X-Amz-Signature=*** HTTP/1.1"
    )
  }

  @Test func googleAndAzureToo() {
    #expect(
      PresignedQuery.masking("Location: https://s.example/o?X-Goog-Signature=9f&X-Goog-Credential=sa%40p&x=1")
        == "Location: https://s.example/o?X-Goog-Signature=***&X-Goog-Credential=***&x=1")
    #expect(
      PresignedQuery.masking("location: https://a.blob.example/c/f?sv=2024&sig=Zm9v%3D&se=2026")
        == "location: https://a.blob.example/c/f?sv=2024&sig=***&se=2026")
  }

  @Test func namesOutsideAQueryAndOtherParametersAreLeftAlone() {
    for line in [
      "GET /sig=1 HTTP/1.1", "GET /a?signature=1&mysig=2 HTTP/1.1", "X-Amz-Signature: kept by the header rule",
    ] {
      #expect(PresignedQuery.masking(line) == line)
    }
    #expect(PresignedQuery.masking("* see 'https://h/x?sig=abc' and more") == "* see 'https://h/x?sig=***' and more")
  }
}
