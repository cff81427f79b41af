import ArgumentParser
import Foundation

/// `strata locks STORE`: which of the store's lock files another process holds, read without taking them
/// (the question an app killed with 0xdead10cc, or a tool that waits, asks).
struct LocksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "locks",
        abstract: "Show whether other processes hold a store's file locks.",
        discussion: """
            Looks at the store's two lock files without opening the store: lock.mdb, which LMDB locks while \
            any process has the store open (a running app, a `strata` command; a suspended store lets it go), \
            and migration.lock, which a process holds while it migrates the store. The locks of this process \
            itself are not seen (it holds none). The exit status is 0 whatever is found.

            Example:
              strata locks ./Posts.store
              strata locks ./Posts.store --json
            """)

    @Argument(help: "The store directory.") var store: String
    @Flag(help: "Print the result as JSON: {\"lockFile\": …, \"migrationLock\": …}, each \"free\", \"missing\" or a process ID.") var json = false

    func run() throws {
        guard FileManager.default.fileExists(atPath: store + "/data.mdb") else {
            throw CLIFailure("\(store) is not a store (no data.mdb); check the path")
        }
        let lockFile = FileLockProbe.holderOfRecordLock(store + "/lock.mdb")
        let migration = FileLockProbe.isLockedExclusively(store + "/migration.lock")
        let lockText: String = switch lockFile {
        case .missing: "missing"
        case .free: "free"
        case .held(let pid): pid.map { "held by process \($0)" } ?? "held by a process that cannot be named"
        case .unknown(let reason): "unknown (\(reason))"
        }
        let migrationText: String = switch migration {
        case .missing: "missing"
        case .free: "free"
        case .held: "held"
        case .unknown(let reason): "unknown (\(reason))"
        }
        if json {
            func value(_ state: FileLockProbe.State) -> String {
                switch state {
                case .missing: "\"missing\""
                case .free: "\"free\""
                case .held(let pid): pid.map { "\($0)" } ?? "\"held\""
                case .unknown: "\"unknown\""
                }
            }
            Console.out("{\"lockFile\":\(value(lockFile)),\"migrationLock\":\(value(migration))}")
        } else {
            Console.out("lock.mdb: \(lockText)")
            Console.out("migration.lock: \(migrationText)")
        }
    }
}
