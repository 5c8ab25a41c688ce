/// "Did you mean" for misspelt keys: the closest candidate within a small
/// edit distance (case, `-` for `_` and one or two typos).
public enum Suggest {
  public static func closest(to word: String, in candidates: [String]) -> String? {
    let w = normalized(word)
    var best: (String, Int)? = nil
    for c in candidates {
      let d = distance(w, normalized(c))
      if best == nil || d < best!.1 { best = (c, d) }
    }
    guard let (c, d) = best else { return nil }
    let limit = max(1, min(3, c.count / 3))
    return d <= limit ? c : nil
  }

  private static func normalized(_ s: String) -> [Character] {
    Array(s.lowercased().map { $0 == "-" || $0 == " " ? "_" : $0 })
  }

  package static func distance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var prev = Array(0...b.count)
    var cur = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      cur[0] = i
      for j in 1...b.count {
        cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      swap(&prev, &cur)
    }
    return prev[b.count]
  }
}
