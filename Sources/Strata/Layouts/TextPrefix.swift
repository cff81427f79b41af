/// The first characters of a stored text followed by a suffix, written as a string field
/// (``MappedValue/prefix(of:length:appending:)``), with `String.prefix`'s meaning of a character.
enum TextPrefix {
    /// Writes the first `length` characters of the UTF-8 text `text`, then `suffix`, length-prefixed, into `w`.
    ///
    /// Plain ASCII text (no carriage return, which joins a line feed into one character) is cut at byte `length`
    /// without building a `String`; any other text is cut by Swift's grapheme clusters.
    static func write(_ text: UnsafeRawBufferPointer, length: Int, suffix: ArraySlice<UInt8>, into w: inout BinaryWriter) {
        let length = max(0, length)
        // The byte after the cut is checked too: it could start a character that joins the one before it.
        let checked = min(text.count, length + 1)
        var ascii = true
        for k in 0..<checked where text[k] >= 0x80 || text[k] == 0x0D {
            ascii = false
            break
        }
        if ascii {
            let cut = min(text.count, length)
            w.varint(cut + suffix.count)
            w.raw(UnsafeRawBufferPointer(rebasing: text[0..<cut]))
            w.raw(suffix)
            return
        }
        let prefix = Array(String(decoding: text, as: UTF8.self).prefix(length).utf8)
        w.varint(prefix.count + suffix.count)
        w.raw(prefix)
        w.raw(suffix)
    }

    /// The same for a value (a constant or a default of the source's layout).
    static func apply(_ value: Value, length: Int, suffix: String) -> Value {
        guard case .string(let s) = value else { return value }
        return .string(String(s.prefix(max(0, length))) + suffix)
    }
}
