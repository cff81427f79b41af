import Foundation

/// Builds and opens records (see ``RecordFormat``).
enum RecordCodec {
    /// Starts a record of `layout` in `w`: format byte, layout ID, null bitmap (filled by the caller).
    /// Returns the offset of the bitmap.
    @inline(__always)
    static func begin(_ layout: RecordLayout, into w: inout BinaryWriter) -> Int {
        w.reset()
        w.u8(RecordFormat.version)
        w.varint(UInt64(layout.id))
        let bitmapOffset = w.count
        for _ in 0..<layout.bitmapSize { w.u8(0) }
        return bitmapOffset
    }

    /// The offset of the null bitmap in a record of `layout` (after the format byte and the layout ID).
    @inline(__always)
    static func headerSize(_ layout: RecordLayout) -> Int {
        // The format byte, then the layout ID as a LEB128 varint (7 bits a byte).
        var id = UInt64(layout.id) >> 7
        var size = 2
        while id != 0 {
            size += 1
            id >>= 7
        }
        return size
    }

    @inline(__always)
    static func markNull(field: Int, bitmapOffset: Int, in w: inout BinaryWriter) {
        w.setBits(UInt8(1) << UInt8(field & 7), at: bitmapOffset + field >> 3)
    }

    /// Appends the checksum that closes a record of `entityTag` stored under `id`.
    @inline(__always)
    static func seal(_ w: inout BinaryWriter, entityTag: UInt32, id: UInt64) {
        let crc = checksum(body: w.buffer, entityTag: entityTag, id: id)
        w.fixed(crc)
    }

    @inline(__always)
    static func checksum(body: UnsafeRawBufferPointer, entityTag: UInt32, id: UInt64) -> UInt32 {
        var key: (UInt32, UInt32, UInt32) = (0, 0, 0)  // 12 bytes without padding
        return withUnsafeMutableBytes(of: &key) { p -> UInt32 in
            p.storeBytes(of: entityTag.bigEndian, toByteOffset: 0, as: UInt32.self)
            p.storeBytes(of: id.bigEndian, toByteOffset: 4, as: UInt64.self)
            return Checksum.crc32c(UnsafeRawBufferPointer(p), then: body)
        }
    }

    /// The layout ID a record says it has, without checking it (bookkeeping; decoding checks everything).
    @inline(__always)
    static func layoutID(of bytes: UnsafeRawBufferPointer) -> UInt32? {
        guard bytes.count >= 2, bytes[0] == RecordFormat.version else { return nil }
        var r = BinaryReader(bytes)
        r.offset = 1
        guard let v = try? r.varint(), v <= UInt64(UInt32.max) else { return nil }
        return UInt32(v)
    }

    /// Checks a stored record's checksum and format and returns its layout ID and a reader positioned at
    /// its null bitmap (ending before the checksum).
    @inline(__always)
    static func open(_ bytes: UnsafeRawBufferPointer, entityTag: UInt32, id: UInt64) throws(DecodeFailure) -> (layoutID: UInt32, reader: BinaryReader) {
        guard bytes.count >= 2 + RecordFormat.checksumSize else {
            if SealedValue.isUnopenable(bytes) { throw DecodeFailure(SealedValue.unopenableReason) }
            if SealedValue.isUnknownKey(bytes) { throw DecodeFailure(SealedValue.unknownKeyReason) }
            throw DecodeFailure("record of \(bytes.count) bytes is too short")
        }
        let bodyEnd = bytes.count - RecordFormat.checksumSize
        let stored = bytes.loadUnaligned(fromByteOffset: bodyEnd, as: UInt32.self).littleEndian
        let computed = checksum(body: UnsafeRawBufferPointer(rebasing: bytes[0..<bodyEnd]), entityTag: entityTag, id: id)
        guard stored == computed else { throw DecodeFailure("checksum mismatch") }
        var r = BinaryReader(bytes, end: bodyEnd)
        do {
            let format = try r.u8()
            guard format == RecordFormat.version else {
                throw DecodeFailure("unsupported record format \(format)")
            }
            let layout = try r.varint()
            guard layout <= UInt64(UInt32.max) else { throw DecodeFailure("layout ID out of range") }
            return (UInt32(layout), r)
        } catch let failure as DecodeFailure {
            throw failure
        } catch {
            throw DecodeFailure("\(error)")
        }
    }

    /// Decodes every field of a record body (after ``open(_:entityTag:id:)``), nulls included.
    @inline(__always)
    static func decodeFields(_ layout: RecordLayout, _ r: inout BinaryReader, into fields: inout [Value]) throws {
        let bitmap = try r.bytes(layout.bitmapSize)
        fields.removeAll(keepingCapacity: true)
        for (i, type) in layout.fieldTypes.enumerated() {
            if bitmap[i >> 3] & (UInt8(1) << UInt8(i & 7)) != 0 {
                fields.append(.null)
            } else {
                fields.append(try FieldCodec.decode(type, from: &r))
            }
        }
        guard r.isAtEnd else { throw DecodeFailure("\(r.remaining) bytes after the last field") }
    }
}
