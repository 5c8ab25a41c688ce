import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// How many ranges a file is fetched in, and whether a partial fetched in
/// ranges can be continued (`SegmentPolicy`): pure. The large-file and
/// fleet suites check the same rules end to end.
@Suite struct SegmentPolicyTests {
  typealias P = SegmentPolicy
  let big = P.autoThreshold

  @Test func autoFetchesALargeFileInRangesAndASmallOneAsOneStream() {
    #expect(P.asked(segments: nil, expectedBytes: big) == P.autoRanges)
    #expect(P.asked(segments: nil, expectedBytes: big - 1) == nil, "the answer's size decides")
    #expect(P.asked(segments: nil, expectedBytes: nil) == nil)
    #expect(P.forSize(big) == P.autoRanges && P.forSize(big - 1) == 1)
  }

  @Test func aNumberWrittenIsAskedForAsWrittenEvenThroughAProxy() {
    #expect(P.asked(segments: 8, expectedBytes: 10) == 8)
    #expect(P.asked(segments: 1, expectedBytes: big) == 1)
    #expect(P.asked(segments: 8, expectedBytes: big, throughProxy: true) == 8)
  }

  @Test func throughAProxyAutoIsOneStreamAndTheReportSaysWhy() {
    #expect(P.asked(segments: nil, expectedBytes: big, throughProxy: true) == 1)
    #expect(P.keptWholeByProxy(segments: nil, throughProxy: true, total: big))
    #expect(!P.keptWholeByProxy(segments: nil, throughProxy: true, total: big - 1), "auto was one stream anyway")
    #expect(!P.keptWholeByProxy(segments: 4, throughProxy: true, total: big), "ranges were asked by number")
    #expect(!P.keptWholeByProxy(segments: nil, throughProxy: false, total: big))
  }

  @Test func aSegmentedPartialIsUsableWhenWholeSizedAndHoldingBytesWithinIt() {
    let held = ByteRanges([0..<100, 500..<700])
    #expect(P.rangesUsable(held, total: 1000, fileSize: 1000))
    #expect(!P.rangesUsable(held, total: 1000, fileSize: 700), "shorter than the file: not written in place")
    #expect(!P.rangesUsable(held, total: nil, fileSize: 1000), "no size to hold it to")
    #expect(!P.rangesUsable(ByteRanges(), total: 1000, fileSize: 1000), "nothing held")
    #expect(!P.rangesUsable(ByteRanges([900..<1200]), total: 1000, fileSize: 1000), "a range past the end")
  }
}
