/// The value of an ASCII hexadecimal digit (`0`–`9`, `a`–`f`, `A`–`F`): what JSON's `\u` escapes, UUID strings and
/// percent-encoded paths are read with.
enum HexDigit {
    /// The digit's value, or nil when `byte` is not a hexadecimal digit.
    @inline(__always)
    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
