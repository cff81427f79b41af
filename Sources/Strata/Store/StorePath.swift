import Foundation

extension URL {
    /// The path of a store directory (or a backup's destination) as the store names it in messages, lock files
    /// and its registry: absolute, with `.` and `..` components and repeated slashes resolved lexically — what
    /// `standardizedFileURL.path` gives, without it.
    ///
    /// Foundation's `standardizedFileURL` and `path` build a `Set<UInt8>` whose first use in a process makes the Swift
    /// runtime scan every protocol conformance in the binary (about 440,000 instructions each: two fifths of a
    /// process's first `Store.open`), so the path is taken percent-encoded and decoded here. Symbolic links are not
    /// resolved, as they are not there; the store finds an environment already open on the same files by device and
    /// inode, whatever the path.
    var storePath: String {
        let encoded = path(percentEncoded: true)
        // A relative URL (not made with `fileURLWithPath:`) takes Foundation's path, resolved against the
        // working directory.
        guard encoded.hasPrefix("/"), isFileURL, baseURL == nil else { return standardizedFileURL.path }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.utf8.count)
        var componentStarts: [Int] = []
        for component in encoded.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            guard let decoded = URL.percentDecoded(component) else { return standardizedFileURL.path }
            if decoded == [UInt8(ascii: ".")] { continue }
            if decoded == [UInt8(ascii: "."), UInt8(ascii: ".")] {
                if let start = componentStarts.popLast() {
                    bytes.removeSubrange(start...)
                }
                continue
            }
            componentStarts.append(bytes.count)
            bytes.append(UInt8(ascii: "/"))
            bytes.append(contentsOf: decoded)
        }
        if bytes.isEmpty { return "/" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The bytes of one percent-encoded path component, or nil when an escape is malformed.
    private static func percentDecoded(_ component: Substring.UTF8View.SubSequence) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(component.count)
        var index = component.startIndex
        while index != component.endIndex {
            let byte = component[index]
            index = component.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                result.append(byte)
                continue
            }
            guard index != component.endIndex, let high = HexDigit.value(component[index]) else { return nil }
            index = component.index(after: index)
            guard index != component.endIndex, let low = HexDigit.value(component[index]) else { return nil }
            index = component.index(after: index)
            result.append(high << 4 | low)
        }
        return result
    }
}
