import Foundation
import Synchronization

/// A stored string read in place, without copying it: the UTF-8 bytes of a record in the store's memory map,
/// from a borrowed record (``ModelQuery/forEachRecord(_:)``). Compare it, test its prefix or hash it where it
/// lies; make a `String` (``string()``) only to keep it.
///
/// A borrowed string is valid while the read or write that produced it runs (in a write, until the next change
/// it makes): used afterwards, every operation throws ``StoreError/transactionEnded``.
///
/// ```swift
/// try context.objects(Post.self).forEachRecord { post in
///     if try post.title.hasPrefix("Swift") { count += 1 }
/// }
/// ```
public struct BorrowedString: CustomStringConvertible {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    /// A value a layout's projection gave (a default, a constant) rather than the stored bytes. In a class of its
    /// own: a borrowed string made for every record a scan reads is then released with one plain release (an
    /// optional `String` member was destroyed through its generic value witness).
    @usableFromInline let owned: OwnedText?
    /// The lease the string was read under: no reference to the transaction (``LeaseSlots``).
    @usableFromInline let lease: ReadLease

    @inlinable
    init(bytes: UnsafeRawBufferPointer, lease: ReadLease) {
        self.bytes = bytes
        self.owned = nil
        self.lease = lease
    }

    init(owned: String, lease: ReadLease) {
        self.bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        self.owned = OwnedText(owned)
        self.lease = lease
    }

    /// Calls `body` with the string's UTF-8 bytes.
    @inlinable
    public func withUTF8<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try lease.check()
        if let owned { return try owned.withUTF8(body) }
        return try body(bytes)
    }

    /// A copy, valid after the read.
    public func string() throws -> String {
        try withUTF8 { String(decoding: $0, as: UTF8.self) }
    }

    /// The number of UTF-8 bytes.
    public var utf8Count: Int { get throws { try withUTF8 { $0.count } } }

    /// Whether the string is empty.
    public var isEmpty: Bool { get throws { try utf8Count == 0 } }

    /// Whether the string equals `other` (byte for byte in UTF-8, as the store compares strings).
    public func equals(_ other: String) throws -> Bool {
        var other = other
        return try withUTF8 { mine in other.withUTF8 { Self.same(mine, UnsafeRawBufferPointer($0)) } }
    }

    /// Whether the string begins with `prefix` (in UTF-8 bytes).
    public func hasPrefix(_ prefix: String) throws -> Bool {
        var prefix = prefix
        return try withUTF8 { mine in
            prefix.withUTF8 { p in mine.count >= p.count && Self.same(UnsafeRawBufferPointer(rebasing: mine[0..<p.count]), UnsafeRawBufferPointer(p)) }
        }
    }

    /// Whether the string ends with `suffix` (in UTF-8 bytes).
    public func hasSuffix(_ suffix: String) throws -> Bool {
        var suffix = suffix
        return try withUTF8 { mine in
            suffix.withUTF8 { s in
                mine.count >= s.count && Self.same(UnsafeRawBufferPointer(rebasing: mine[(mine.count - s.count)...]), UnsafeRawBufferPointer(s))
            }
        }
    }

    /// Whether the string contains `part` (in UTF-8 bytes).
    public func contains(_ part: String) throws -> Bool {
        let needle = Array(part.utf8)
        return try withUTF8 { mine in
            guard needle.count <= mine.count else { return false }
            if needle.isEmpty { return true }
            var i = 0
            while i + needle.count <= mine.count {
                if mine[i] == needle[0], needle.withUnsafeBytes({ Self.same(UnsafeRawBufferPointer(rebasing: mine[i..<(i + needle.count)]), $0) }) {
                    return true
                }
                i += 1
            }
            return false
        }
    }

    /// Feeds the string's UTF-8 bytes to `hasher` (as `String` hashes equal strings alike for equal bytes).
    public func hash(into hasher: inout Hasher) throws {
        try withUTF8 { hasher.combine(bytes: $0) }
    }

    public var description: String { (try? string()) ?? "<a borrowed string used after its read ended>" }

    private static func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let pa = a.baseAddress, let pb = b.baseAddress, a.count > 0 else { return true }
        return memcmp(pa, pb, a.count) == 0
    }
}

/// The text of a borrowed string that is not stored as it reads (a projected default or constant).
@usableFromInline
final class OwnedText {
    @usableFromInline var text: String

    init(_ text: String) { self.text = text }

    @usableFromInline
    func withUTF8<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = text
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

/// The validity of memory a borrowed record points into: the transaction it was read in, until it ends or (in a
/// write) makes its next change. Holds no reference to the transaction: it checks the transaction's lease slot
/// (``LeaseSlots``), so copying or dropping a lease costs no reference counting.
@usableFromInline
struct ReadLease {
    @usableFromInline let slot: UnsafeMutablePointer<LeaseSlot>
    @usableFromInline let serial: UInt64
    @usableFromInline let changes: Int

    /// A lease on `txn` as it is after `changes` changes.
    @inlinable
    init(txn: Transaction, changes: Int) {
        self.slot = txn.leaseSlot
        self.serial = txn.serial
        self.changes = changes
    }

    /// Throws ``StoreError/transactionEnded`` when the memory read under this lease may have changed: its
    /// transaction ended (its slot shows no serial, or another transaction's) or made a change since.
    @inlinable @inline(__always)
    func check() throws {
        guard slot.pointee.serial.load(ordering: .relaxed) == serial,
              slot.pointee.changes.load(ordering: .relaxed) == changes else { throw StoreError.transactionEnded }
    }
}
