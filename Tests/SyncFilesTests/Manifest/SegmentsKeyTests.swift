import Testing

@testable import SyncFiles
@testable import SyncFilesCore
@testable import SyncFilesInstall
@testable import SyncFilesJournal
@testable import SyncFilesManifest
@testable import SyncFilesVerify

/// SPEC §8.3's keys are read and checked (the transfers do not use them yet).
@Suite struct SegmentsKeyTests {
  @Test func segmentsIsAutoOrOneToSixteen() {
    for (text, want) in [("auto", nil), ("1", 1), ("8", 8), ("16", 16)] as [(String, Int?)] {
      let (m, d) = decode(entry("max_bytes: 1MB", "segments: \(text)"))
      #expect(!d.hasErrors, "\(text): \(d)")
      #expect(m?.files.first?.segments == want, "\(text)")
    }
    let (_, tooMany) = decode(entry("max_bytes: 1MB", "segments: 17"))
    #expect(
      errors(tooMany).map(\.description).contains {
        $0.hasSuffix("9:15: error: segments must be between 1 and 16, found 17")
      }, "\(tooMany)")
    let (_, word) = decode(entry("max_bytes: 1MB", "segments: many"))
    #expect(errors(word).first?.message == "segments must be auto or a number of ranges from 1 to 16, found 'many'")
  }

  @Test func limitsSegmentsAndDefaults() {
    let text = """
      version: 1
      limits: {segments: 4}
      defaults: {segments: 8, max_bytes: 1GB}
      files:
        - {id: a, url: 'https://example.org/a', destination: a.bin}
        - {id: b, url: 'https://example.org/b', destination: b.bin, segments: auto}

      """
    let (m, d) = decode(text)
    #expect(!d.hasErrors, "\(d)")
    #expect(m?.limits.segments == 4)
    #expect(m?.files.map(\.segments) == [8, nil])
  }

  @Test func thePlanSaysHowManyRangesAnEntryMayUse() {
    let (m, _) = decode(entry("max_bytes: 1GB", "segments: 4"))
    var facts = Facts(now: Timestamp(seconds: 0), localMinuteOfDay: 0, onACPower: true)
    facts.disks["/srv"] = DiskFact(device: 1, mountPoint: "/srv", freeBytes: 1 << 40)
    let t = Planner.plan(manifests: [m!], journal: [:], facts: facts, options: PlanOptions(), journalPath: "/j").tasks[
      0]
    #expect(
      t.reason.hasSuffix(
        "; in up to 4 byte ranges at once, each on a connection of its own, if the server offers ranges under a strong validator, else one stream"
      ))
    #expect(t.segments == 4)
  }
}
