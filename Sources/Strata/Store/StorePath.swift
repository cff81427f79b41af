import Foundation

extension URL {
    /// The path of a store directory (or a backup's destination) as the store names it in messages, lock files
    /// and its registry: absolute, with `.` and `..` components and repeated slashes resolved lexically — what
    /// `standardizedFileURL.path` gives, without it.
    ///
    /// Foundation's `standardizedFileURL` and `path` build a `Set<UInt8>` whose first use in a process makes the Swift
    /// runtime scan every protocol conformance in the binary (about 440,000 instructions each: two fifths of a
    /// process's first `Store.open`), so the path is taken percent-encoded and decoded here, in one pass over its
    /// bytes into one byte array (an array of components, or of their starts, is a new array type whose first use
    /// costs the runtime a type look-up of several thousand instructions). Symbolic links are not resolved, as they
    /// are not there; the store finds an environment already open on the same files by device and inode, whatever
    /// the path.
    var storePath: String {
        var encoded = path(percentEncoded: true)
        // A relative URL (not made with `fileURLWithPath:`) takes Foundation's path, resolved against the
        // working directory; so does a path this pass does not read as Foundation does (see `standardized(_:)`).
        guard isFileURL, baseURL == nil,
              let standardized = encoded.withUTF8({ URL.standardized($0) }) else { return standardizedFileURL.path }
        return standardized
    }

    /// The absolute percent-encoded path `encoded` with its components decoded, empty and `.` components dropped and
    /// each `..` removing the component before it; nil when the path is not absolute, an escape is malformed, or
    /// one decodes to a slash (left to Foundation).
    private static func standardized(_ encoded: UnsafeBufferPointer<UInt8>) -> String? {
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: "."), percent = UInt8(ascii: "%")
        guard encoded.first == slash else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var index = 0
        while index < encoded.count {
            if encoded[index] == slash {
                index += 1
                continue
            }
            // One component, decoded after a slash of its own.
            let start = bytes.count
            bytes.append(slash)
            while index < encoded.count, encoded[index] != slash {
                let byte = encoded[index]
                index += 1
                guard byte == percent else {
                    bytes.append(byte)
                    continue
                }
                guard index + 1 < encoded.count, let high = HexDigit.value(encoded[index]),
                      let low = HexDigit.value(encoded[index + 1]) else { return nil }
                let decoded = high << 4 | low
                if decoded == slash { return nil }
                bytes.append(decoded)
                index += 2
            }
            let length = bytes.count - start - 1
            if length == 1, bytes[start + 1] == dot {
                bytes.removeLast(2)
            } else if length == 2, bytes[start + 1] == dot, bytes[start + 2] == dot {
                // `..` and the component before it (none at the root).
                var end = start
                while end > 0 {
                    end -= 1
                    if bytes[end] == slash { break }
                }
                bytes.removeLast(bytes.count - end)
            }
        }
        if bytes.isEmpty { return "/" }
        return String(decoding: bytes, as: UTF8.self)
    }
}
