import SyncFilesCore
import SyncFilesInstall
import SyncFilesJournal
import SyncFilesManifest
import SyncFilesVerify
/// `syncfiles-source-SCHEME list`: an external source offers listing
/// (SPEC §9.4) by answering it. One JSON request on stdin,
/// `{"protocol":1,"task":"m/p","url":"rsync://host/mod/dir/","headers":{…}}`;
/// the last line of its stdout is
/// `{"protocol":1,"status":"complete","objects":[{"key":"a.csv","size":12,"etag":"…","last_modified":"…"}]}`,
/// every key below the prefix (relative to it), or `{"status":"failed","error":"…"}`.
/// A plugin that does not list fails, and the prefix says so.
extension ExternalSource: PrefixLister {
  public func list(_ r: ListingRequest) -> Result<PrefixListing, ListingFailure> {
    let name = PluginLocator.sourceExecutable(scheme: info.name)
    let request = JSONValue.object([
      ("protocol", .int(Int64(Self.protocolVersion))), ("task", .string(r.id)), ("url", .string(r.url.text.revealed)),
      ("headers", .object(r.headers.map { ($0.name, .string($0.value.revealed)) })),
    ])
    let timeout = 600.0
    let run = Subprocess.run(
      [executable, "list"],
      environment: ["SYNCFILES_TASK_ID": r.id, "SYNCFILES_PLUGIN_PROTOCOL": "\(Self.protocolVersion)"],
      stdin: Array((request.serialized() + "\n").utf8), timeout: timeout, captureStdout: true)
    let answer = ExternalTransport.answer(run).answer
    let failed = { (why: String) in
      Result<PrefixListing, ListingFailure>.failure(
        ListingFailure("listing \(r.url) failed: \(name) \(why); nothing under it was fetched or pruned"))
    }
    guard run.succeeded, let answer, answer["status"]?.stringValue == "complete" else {
      if let why = answer?["error"]?.stringValue { return failed("said: \(why)") }
      return failed("gave no listing (\(run.failure(timeout: timeout))\(run.stderrSuffix))")
    }
    guard case .array(let items)? = answer["objects"] else { return failed("answered without an objects list") }
    var objects: [ListedObject] = []
    for item in items {
      guard let key = item["key"]?.stringValue, let size = item["size"]?.intValue, size >= 0 else {
        return failed("listed an object without a key and a size: \(item.serialized())")
      }
      objects.append(
        ListedObject(
          key: key, size: size, etag: item["etag"]?.stringValue, lastModified: item["last_modified"]?.stringValue))
    }
    return .success(PrefixListing(objects: objects, listedAt: r.now, requests: 1))
  }
}
