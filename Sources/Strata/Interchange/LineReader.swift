import Foundation

/// Reads the import's input line by line, in place: memory holds one chunk of the input (and the longest line).
final class LineReader {
    private let input: InputBuffer
    /// Where the search for the next line break goes on (bytes before it, from `input.start`, hold none).
    private var scanned = 0
    /// The number of the last line returned, from 1.
    private(set) var lineNumber = 0

    init(_ source: InputBuffer.Source) throws(LineProblem) {
        do { input = try InputBuffer(source) } catch {
            throw LineProblem("cannot read the input (\(error.systemMessage))")
        }
    }

    /// The next line without its line break (nor carriage returns before it), in the reader's own buffer (no
    /// copy): valid until the next call. Nil at the end.
    func nextBytes() throws(LineProblem) -> UnsafeRawBufferPointer? {
        while true {
            let bytes = input.available
            if let offset = Self.firstLineBreak(in: bytes, from: scanned) {
                input.start += offset + 1
                scanned = 0
                return line(UnsafeRawBufferPointer(rebasing: bytes[..<offset]))
            }
            scanned = bytes.count
            let more: Bool
            do { more = try input.fill() } catch {
                throw LineProblem("reading the input failed after line \(lineNumber) (\(error.systemMessage))")
            }
            if !more {
                // The last line, without a line break.
                let rest = input.available
                guard !rest.isEmpty else { return nil }
                input.start += rest.count
                scanned = 0
                return line(rest)
            }
        }
    }

    private func line(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        lineNumber += 1
        var length = bytes.count
        while length > 0, bytes[length - 1] == 0x0D { length -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[..<length])
    }

    /// The offset of the first `\n` in `bytes` at or after `from`, eight bytes at a time.
    static func firstLineBreak(in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let newlines: UInt64 = 0x0A * ones
        var i = from
        let n = bytes.count
        while i + 8 <= n {
            // A zero byte of `w ^ newlines` is a line break; the lowest flagged byte is the first one.
            let w = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ newlines
            let found = (w &- ones) & ~w & high
            if found != 0 { return i + found.trailingZeroBitCount / 8 }
            i += 8
        }
        while i < n {
            if bytes[i] == 0x0A { return i }
            i += 1
        }
        return nil
    }
}
