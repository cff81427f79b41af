import Synchronization

/// Where a value read in place (a ``BorrowedString``) checks that the transaction it was read in is still
/// running and has made no change since, without holding a reference to that transaction.
///
/// Each live ``Transaction`` owns one slot and writes its serial (unique in the process, never reused) and its
/// count of changes there; when it ends it clears the serial, and a later transaction reusing the slot writes
/// another. A lease (``ReadLease``) keeps the slot's address, the serial and the count it saw: it is valid
/// while the slot still shows both. Slots live in memory that is never freed, so a lease checked long after
/// its transaction (and the transaction object) are gone reads a cleared or reused slot and throws
/// ``StoreError/transactionEnded`` — it never reads freed memory.
///
/// This replaces a strong reference from every borrowed string to its transaction: two atomic reference-count
/// operations per string, which were 14 % of the borrowed-record scan's time (107.8 → 93.0 ms at 1M posts of two
/// strings each). A transaction pays for its slot with two uncontended lock round trips, when it begins and when its
/// object goes.
@usableFromInline
struct LeaseSlot: ~Copyable {
    /// The serial of the transaction that holds the slot, or 0.
    @usableFromInline let serial: Atomic<UInt64>
    /// The holder's ``Transaction/changes``.
    @usableFromInline let changes: Atomic<Int>
    /// The next free slot, while this one is free (read and written under ``LeaseSlots``' lock).
    var nextFree: UnsafeMutablePointer<LeaseSlot>?

    init() {
        serial = Atomic(0)
        changes = Atomic(0)
        nextFree = nil
    }
}

/// The process's lease slots: handed to transactions as they begin and taken back as their objects go.
enum LeaseSlots {
    /// Slots are made this many at a time, in blocks that are never freed.
    private static let blockSize = 64
    private static let lock = ThreadMutex()
    nonisolated(unsafe) private static var freeList: UnsafeMutablePointer<LeaseSlot>?
    private static let lastSerial = Atomic<UInt64>(0)

    /// A slot for a new transaction, showing a new serial and no changes.
    static func claim() -> (slot: UnsafeMutablePointer<LeaseSlot>, serial: UInt64) {
        let slot = lock.withLock { () -> UnsafeMutablePointer<LeaseSlot> in
            if freeList == nil {
                let block = UnsafeMutablePointer<LeaseSlot>.allocate(capacity: blockSize)
                for i in 0..<blockSize {
                    (block + i).initialize(to: LeaseSlot())
                    block[i].nextFree = i + 1 < blockSize ? block + i + 1 : nil
                }
                freeList = block
            }
            let slot = freeList.unsafelyUnwrapped
            freeList = slot.pointee.nextFree
            slot.pointee.nextFree = nil
            return slot
        }
        let serial = lastSerial.wrappingAdd(1, ordering: .relaxed).newValue
        slot.pointee.changes.store(0, ordering: .relaxed)
        slot.pointee.serial.store(serial, ordering: .relaxed)
        return (slot, serial)
    }

    /// Marks the slot's transaction ended: every lease on it is invalid from now on.
    @inline(__always)
    static func end(_ slot: UnsafeMutablePointer<LeaseSlot>) {
        slot.pointee.serial.store(0, ordering: .relaxed)
    }

    /// Takes a slot back (its transaction object is going).
    static func release(_ slot: UnsafeMutablePointer<LeaseSlot>) {
        end(slot)
        lock.withLock {
            slot.pointee.nextFree = freeList
            freeList = slot
        }
    }
}
