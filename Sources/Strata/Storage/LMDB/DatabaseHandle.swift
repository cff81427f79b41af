import CStrataLMDB

/// An open LMDB database of the store's environment (`MDB_dbi`): what the layers above pass to
/// ``Transaction`` and ``Cursor`` calls, without seeing LMDB's C types.
typealias DatabaseHandle = MDB_dbi
