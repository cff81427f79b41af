import Foundation

// Each stored type read straight from a located field (``RecordSlots``): inlined into the app's code, so a
// fixed-width field is one unaligned load. The walk that located the field checked that it fits in the record
// (and that a Boolean byte is 0 or 1); text is validated as it is decoded, and what cannot be read here (a
// length of more than two bytes, invalid UTF-8, URL and decimal text) returns nil: the general path reads it and
// reports what is wrong.

extension Int {
    @inlinable public static var fieldCode: UInt8 { 1 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        Int(truncatingIfNeeded: Int64(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: Int64.self)))
    }
}

extension Int64 {
    @inlinable public static var fieldCode: UInt8 { 1 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Int64? {
        Int64(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }
}

extension Int32 {
    @inlinable public static var fieldCode: UInt8 { 2 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Int32? {
        Int32(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }
}

extension Int16 {
    @inlinable public static var fieldCode: UInt8 { 3 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Int16? {
        Int16(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: Int16.self))
    }
}

extension Double {
    @inlinable public static var fieldCode: UInt8 { 4 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Double? {
        Double(bitPattern: UInt64(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
    }
}

extension Float {
    @inlinable public static var fieldCode: UInt8 { 5 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Float? {
        Float(bitPattern: UInt32(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }
}

extension Bool {
    @inlinable public static var fieldCode: UInt8 { 6 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Bool? {
        record.load(fromByteOffset: offset, as: UInt8.self) != 0
    }
}

extension String {
    @inlinable public static var fieldCode: UInt8 { 7 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> String? {
        guard let utf8 = RecordSlots.lengthPrefixed(record, at: offset) else { return nil }
        return String(storedUTF8: utf8)
    }

    /// A string from stored UTF-8 (nil when invalid), created once: ASCII without further checks.
    @usableFromInline
    init?(storedUTF8 utf8: UnsafeRawBufferPointer) {
        self.init(validatingUTF8Bytes: utf8)
    }
}

extension Date {
    @inlinable public static var fieldCode: UInt8 { 8 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Date? {
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: UInt64(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: UInt64.self))))
    }
}

extension Data {
    @inlinable public static var fieldCode: UInt8 { 9 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Data? {
        RecordSlots.lengthPrefixed(record, at: offset).map { Data($0) }
    }
}

extension UUID {
    @inlinable public static var fieldCode: UInt8 { 10 }
    @inlinable @inline(__always)
    public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> UUID? {
        UUID.loaded(from: record.baseAddress.unsafelyUnwrapped + offset)
    }
}

extension URL {
    @inlinable public static var fieldCode: UInt8 { 11 }
    @inlinable public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> URL? { nil }
}

extension Decimal {
    @inlinable public static var fieldCode: UInt8 { 12 }
    @inlinable public static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Decimal? { nil }
}
