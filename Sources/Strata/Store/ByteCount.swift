import Foundation

/// A number of bytes as people read it in a message, in binary units: `512 bytes`, `1.5 KiB`, `146.9 MiB`,
/// `2.0 GiB` (1 KiB = 1,024 bytes).
///
/// The one size text of Strata's messages — migration estimates (``MigrationExplanation``), the `strata`
/// tool's `info` and `backup` — in the units LMDB's sizes come in: map sizes, page sizes and growth steps are
/// powers of two.
///
/// ```swift
/// print("file \(ByteCount(info.fileSize))")   // file 3.2 MiB
/// ```
public struct ByteCount: Sendable, Hashable, CustomStringConvertible {
    /// The number of bytes.
    public var bytes: Int

    public init(_ bytes: Int) {
        self.bytes = bytes
    }

    /// Whole bytes below 1 KiB, else one decimal in the largest unit that keeps the number at 1 or more.
    public var description: String {
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB"]
        var value = Double(bytes)
        var unit = -1
        while value.magnitude >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        guard unit >= 0 else { return "\(bytes) bytes" }
        return String(format: "%.1f %@", value, units[unit])
    }
}
