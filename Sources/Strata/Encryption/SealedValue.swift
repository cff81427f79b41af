import Crypto
import Foundation

/// The byte form of a value sealed by an encrypted store (see <doc:Encryption>):
///
/// ```
/// u8      marker 0xE0 | key epoch (1 to 15): 0xE1 for a store's first key, the next epoch after each rotation
/// 12      nonce: random, new for every seal
/// bytes   ciphertext: AES-256-GCM of the value as an unencrypted store would store it (a record keeps
///         its format byte, layout ID and CRC-32C inside the seal)
/// 16      authentication tag
/// ```
///
/// The associated data binds the value to where it is stored: the database's scope label (`e<tag>` for an
/// entity's records, whatever its generation; the database's name otherwise), a zero byte, and the LMDB key.
/// A value moved under another key, into another entity or into another store (whose subkeys differ, being
/// derived with its own salt) fails to open.
enum SealedValue {
    static let marker: UInt8 = 0xE1
    /// The marker of a value sealed under key epoch `epoch` (1 to 15).
    static func marker(epoch: UInt8) -> UInt8 { 0xE0 | (epoch & 0x0F) }
    /// The key epoch a stored value was sealed under, or nil when it is not a seal.
    @inline(__always)
    static func epoch(of stored: UnsafeRawBufferPointer) -> UInt8? {
        guard stored.count >= overhead, stored[0] & 0xF0 == 0xE0, stored[0] & 0x0F != 0 else { return nil }
        return stored[0] & 0x0F
    }
    static let nonceSize = 12
    static let tagSize = 16
    /// Bytes a seal adds to a value.
    static let overhead = 1 + nonceSize + tagSize

    /// What a read returns for a sealed value that does not open (changed, truncated, moved, or sealed under
    /// another key): one byte that no reader takes for a value, recognized by its address
    /// (``isUnopenable(_:)``) so that the reader's typed error says why.
    nonisolated(unsafe) static let unopenable: UnsafeRawBufferPointer = {
        let p = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
        p[0] = marker
        return UnsafeRawBufferPointer(p)
    }()

    /// Whether `bytes` is ``unopenable``.
    static func isUnopenable(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count == 1 && bytes.baseAddress == unopenable.baseAddress
    }

    /// What a read returns for a value sealed under a key epoch the handle has no key for (another process
    /// rotated the store's key since this handle opened it).
    nonisolated(unsafe) static let unknownKey: UnsafeRawBufferPointer = {
        let p = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
        p[0] = marker
        return UnsafeRawBufferPointer(p)
    }()

    /// Whether `bytes` is ``unknownKey``.
    static func isUnknownKey(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count == 1 && bytes.baseAddress == unknownKey.baseAddress
    }

    /// The reason readers give for a value sealed under a key the handle does not have.
    static let unknownKeyReason = "the value is sealed under a key this handle was not opened with: the store's key was rotated since; open it again with the new key"

    /// The reason readers give for an unopenable value.
    static let unopenableReason = "the sealed value does not open with this store's key: it was changed or truncated, or moved from another object, entity or store"

    /// Seals `plaintext` under `key` with `scope` and `lmdbKey` as associated data.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, epoch: UInt8, scope: [UInt8],
                     lmdbKey: UnsafeRawBufferPointer) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(),
                                   authenticating: associatedData(scope: scope, lmdbKey: lmdbKey))
        // The box's combined form is nonce, ciphertext and tag, already in one buffer: one copy after the marker
        // (reading them apart cost three slices and two generic appends, about 3,000 instructions a seal).
        guard let combined = box.combined, combined.count == plaintext.count + overhead - 1 else {
            throw StoreError.internalInconsistency("AES-GCM sealed \(plaintext.count) bytes into a box of another size")
        }
        return [UInt8](unsafeUninitializedCapacity: combined.count + 1) { buffer, initialized in
            buffer[0] = marker(epoch: epoch)
            combined.withUnsafeBytes { bytes in
                UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[1...])).copyMemory(from: bytes)
            }
            initialized = combined.count + 1
        }
    }

    /// Opens a sealed value into `destination` (which must hold `sealed.count - overhead` bytes). Throws when the
    /// bytes are not a seal, were changed, or were sealed under another key, scope, LMDB key or store.
    static func open(_ sealed: UnsafeRawBufferPointer, key: SymmetricKey, scope: [UInt8], lmdbKey: UnsafeRawBufferPointer,
                     into destination: UnsafeMutableRawBufferPointer) throws(DecodeFailure) {
        guard epoch(of: sealed) != nil else {
            throw DecodeFailure("a sealed value of \(sealed.count) bytes is not a seal")
        }
        let count = sealed.count - overhead
        guard destination.count >= count else { throw DecodeFailure("no room to open a sealed value") }
        do {
            // The bytes after the marker are the box's combined form (nonce, ciphertext, tag). Wrapped without a
            // copy: the box lives only in this call, while `sealed` (a page of the map, or the caller's buffer) does.
            guard let start = sealed.baseAddress else { throw DecodeFailure("an empty sealed value") }
            let combined = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: start + 1), count: sealed.count - 1, deallocator: .none)
            let box = try AES.GCM.SealedBox(combined: combined)
            let plain = try AES.GCM.open(box, using: key, authenticating: associatedData(scope: scope, lmdbKey: lmdbKey))
            guard plain.count == count else { throw DecodeFailure("a sealed value opened to \(plain.count) bytes") }
            plain.withUnsafeBytes { p in
                if let base = destination.baseAddress, let from = p.baseAddress, count > 0 {
                    base.copyMemory(from: from, byteCount: count)
                }
            }
        } catch let failure as DecodeFailure {
            throw failure
        } catch {
            throw DecodeFailure(unopenableReason)
        }
    }

    private static func associatedData(scope: [UInt8], lmdbKey: UnsafeRawBufferPointer) -> [UInt8] {
        var ad = scope
        ad.reserveCapacity(scope.count + 1 + lmdbKey.count)
        ad.append(0)
        ad.append(contentsOf: lmdbKey)
        return ad
    }
}
