import CStrataLMDB
import Foundation

/// A throwaway LMDB environment without Strata's layers, for timing raw durable appends (the migration
/// cost model's calibration). Closed when released.
final class ScratchEnvironment {
    private let pointer: OpaquePointer
    private let path: String

    /// Opens a new environment in `directory` (which must exist) with room for `mapSize` bytes.
    init(directory: URL, mapSize: Int) throws {
        path = directory.path
        var env: OpaquePointer?
        guard mdb_env_create(&env) == 0, let env else { throw StoreError.permissionDenied(path: directory.path) }
        mdb_env_set_mapsize(env, mapSize)
        mdb_env_set_maxdbs(env, 2)
        guard mdb_env_open(env, directory.path, LMDBFlags.noTLS, 0o644) == 0 else {
            mdb_env_close(env)
            throw StoreError.permissionDenied(path: directory.path)
        }
        pointer = env
    }

    deinit { mdb_env_close(pointer) }

    /// Appends `records` under consecutive keys from `firstKey` in one durable write transaction; returns the
    /// seconds the puts took and the seconds the commit took.
    func appendTransaction(_ records: ArraySlice<[UInt8]>, firstKey: UInt64) throws -> (put: Double, commit: Double) {
        var txn: OpaquePointer?
        guard mdb_txn_begin(pointer, nil, 0, &txn) == 0, let txn else { throw StoreError.permissionDenied(path: path) }
        var dbi: MDB_dbi = 0
        guard mdb_dbi_open(txn, "sample", UInt32(MDB_CREATE), &dbi) == 0 else {
            mdb_txn_abort(txn)
            throw StoreError.permissionDenied(path: path)
        }
        let start = MonotonicClock.now()
        var key = firstKey
        for record in records {
            var be = key.bigEndian
            let rc = withUnsafeMutableBytes(of: &be) { k in
                record.withUnsafeBytes { v in
                    var mk = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                    var mv = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                    return mdb_put(txn, dbi, &mk, &mv, UInt32(MDB_APPEND))
                }
            }
            guard rc == 0 else {
                mdb_txn_abort(txn)
                throw StoreError.permissionDenied(path: path)
            }
            key += 1
        }
        let put = MonotonicClock.now() - start
        let committing = MonotonicClock.now()
        guard mdb_txn_commit(txn) == 0 else { throw StoreError.permissionDenied(path: path) }
        return (put, MonotonicClock.now() - committing)
    }
}
