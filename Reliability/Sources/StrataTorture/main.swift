// strata-torture: the child process of Strata's reliability suite. The tests launch it, kill it, starve
// it of disk and crash it under a power-loss model, then launch it again to check what it left.
//
//   strata-torture <command> <path> [--option value]…
//
// Commands (see Workloads.swift, Maintenance.swift, Rotation.swift, PowerLoss.swift, IOFaults.swift):
//   create       create a v1 store and fill --count items in batches of --batch (ACK per commit)
//   migrate      open with --plan (light|rewrite|chain|custom|script|v1), migrating or resuming; check
//   probe        print the store's state (journal, counts, last transaction) without changing it
//   open         open and read everything; print OK or ERR (damaged files)
//   open-many    open each store listed in a file, one after another (damaged files, bit flips)
//   hold-read    keep a read snapshot open until standard input closes
//   hold-reads   hold a read snapshot of each store named on standard input, one after another
//   write-load   append items (large blobs with --blob-size) in batches
//   fork-check   fork after open: the child must get usedAfterFork, the parent keep working
//   maintain     --op backup (a backup, then its check) or --op layouts (rewrite records into current layouts)
//   rotate       rotate an encrypted store's key and run the sweep in batches (--writes: while the app writes); check
//   check-rotation-images  check the power-loss crash images of a key rotation (resumed on each)
//   io-loop      SQLite-style EIO/ENOSPC loop through the LD_PRELOAD shim's run-time API
//   check-images check the power-loss crash images the shim wrote
//   pinned-migrate  MDB_MAP_FULL while this process pins a read snapshot
//   late-reader  read and write after another process grew the map
//   limits       keys past LMDB's 511 bytes, values up to hundreds of MiB, every kind of Unicode
//   decode-table deterministic malformed records and metadata through the decoders
//   decode-files replay a directory of fuzz inputs (Fuzz/FailCases)
//   decode-models malformed records through a macro model's generated decoder, against the store's own
//   fuzz-store-meta  hostile metadata written into real stores, opened and read through the public API
//   open-loop    open, read and close the store named on standard input, in a tight loop (OpenLoop.swift)
//   insert-loop  insert into the store named on standard input, with whichever model opens it
//   open-loop-mutate  migrate with --plan, run the maintenance, rewrite every record into its current layout
//   paused-open  open with --plan, stopping at fault point --pause-at until a line comes (PausedOpen.swift)
//
// Process options (any command): --as-nobody drops to user and group 65534 first (permission tests run as
// root in CI), --address-limit MiB sets RLIMIT_AS (a map larger than the address space allows).
//
// Output: one line per event on unbuffered standard output (`ACK n <state>` after every commit, `RESULT`,
// `ERR typed|untyped <kind> <message>`, …). Exit status: 0 done, 2 typed error, 3 untyped error, 4 a
// check failed. Fault points come from STRATA_FAULT (name:index:action) and --lmdb-fault.
import Foundation
@_spi(Testing) import Strata
import StrataTortureKit
#if canImport(Glibc)
import Glibc
#endif

func runTorture() -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    // The library never reads the environment: this test child turns its own fault points on.
    if let spec = ProcessInfo.processInfo.environment["STRATA_FAULT"], !spec.isEmpty {
        for item in FaultInjection.configure(spec: spec) { emit("WARN unknown fault spec \(item)") }
    }
    do {
        let options = try Options(Array(CommandLine.arguments.dropFirst()))
        try applyProcessLimits(options)
        switch options.command {
        case "create": return try Workloads.create(options)
        case "migrate": return try Workloads.migrate(options)
        case "probe": return try Workloads.probe(options)
        case "open": return try Workloads.open(options)
        case "open-many": return try Workloads.openMany(options)
        case "hold-read": return try Workloads.holdRead(options)
        case "hold-reads": return try Workloads.holdReads(options)
        case "write-load": return try Workloads.writeLoad(options)
        case "fork-check": return try Workloads.forkCheck(options)
        case "maintain": return try Maintenance.run(options)
        case "rotate": return try Rotation.run(options)
        case "check-rotation-images": return try Rotation.checkImages(options)
        case "io-loop": return try IOFaults.loop(options)
        case "check-images": return try PowerLoss.checkImages(options)
        case "pinned-migrate": return try MapGrowth.pinnedMigrate(options)
        case "late-reader": return try MapGrowth.lateReader(options)
        case "limits": return try Limits.run(options)
        case "decode-table": return try Decoding.table(options)
        case "decode-files": return try Decoding.files(options)
        case "decode-seeds": return try Decoding.seeds(options)
        case "decode-models": return try ModelDecoding.run(options)
        case "fuzz-store-meta": return try StoreMetaFuzz.run(options)
        case "open-loop": return try OpenLoop.openLoop(options)
        case "insert-loop": return try OpenLoop.insertLoop(options)
        case "open-loop-mutate": return try OpenLoop.mutate(options)
        case "paused-open": return try PausedOpen.run(options)
        default:
            emit("ERR untyped usage unknown command \(options.command)")
            return 64
        }
    } catch {
        return report(error)
    }
}

/// `--as-nobody` and `--address-limit MiB`.
func applyProcessLimits(_ options: Options) throws {
    if options.flags.contains("as-nobody") {
        guard setgroups(0, nil) == 0 || getuid() != 0, setgid(65534) == 0, setuid(65534) == 0 else {
            throw TortureError("cannot drop privileges: errno \(errno)")
        }
    }
    if let mib = options.values["address-limit"].flatMap({ Int($0) }) {
        var limit = rlimit(rlim_cur: rlim_t(mib) << 20, rlim_max: rlim_t(mib) << 20)
        guard setrlimit(Int32(RLIMIT_AS.rawValue), &limit) == 0 else { throw TortureError("setrlimit: errno \(errno)") }
    }
}

exit(runTorture())
