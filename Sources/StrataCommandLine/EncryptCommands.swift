import ArgumentParser
import Crypto
import Foundation
import Strata

/// The store and the batch size of `strata rotate-key`, `encrypt` and `decrypt`.
struct KeyChangeArguments: ParsableArguments {
    @Argument(help: "The store directory.") var store: String
    @Option(name: .customLong("batch-size"), help: "Values per write transaction.")
    var batchSize: Int = 10_000
}

/// Runs the sweep of a key change (a rotation, encrypting, decrypting) that `begin` starts, to its end, with a handle
/// opened with `encryption` — what `strata rotate-key`, `encrypt` and `decrypt` share.
enum KeyChangeSweep {
    static func run(_ arguments: KeyChangeArguments, encryption: StoreEncryption, begin: (StoreConfiguration) throws -> Void) throws -> MaintenanceProgress {
        let store = arguments.store, batchSize = arguments.batchSize
        guard batchSize > 0 else { throw ValidationError("--batch-size must be positive") }
        var configuration = StoreConfiguration()
        configuration.createIfMissing = false
        do {
            try begin(configuration)
            configuration.encryption = encryption
            configuration.backgroundMaintenance = false
            // Twice at most: after encrypting, the pages are written again by a handle of its own (the one that
            // sealed the values held plain pages).
            func sweep() throws -> (MaintenanceProgress, done: Bool) {
                let handle = try Store.openRecorded(at: StoreAccess.url(store), configuration: configuration)
                defer { handle.close() }
                return (try handle.performMaintenance(batchSize: batchSize), try handle.maintenanceStatus().isComplete)
            }
            let (total, done) = try sweep()
            if !done { _ = try sweep() }
            return total
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: store))
        }
    }
}

struct EncryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "Encrypt an unencrypted store, online: every value sealed under a new key.",
        discussion: """
            Begins in one short transaction (the key seals every write, and the store's metadata and change log, from \
            then on; the store opens only with the key), then seals the store's values in short write transactions \
            that other processes' writes interleave with. A kill or Ctrl-C loses nothing: `strata maintain STORE \
            --key-file KEY` (or any app handle opened with the key) finishes it. Handles opened before must open the \
            store again, with the key.

            Example:
              openssl rand -hex 32 > store.key
              strata encrypt ./Posts.store --new-key-file store.key
            """)

    @OptionGroup var arguments: KeyChangeArguments
    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("The key to encrypt the store with (32 bytes or 64 hex digits).", valueName: "FILE"))
    var newKeyFile: String

    func run() throws {
        let key = try KeyFileOption.key(newKeyFile)
        let start = now()
        let total = try KeyChangeSweep.run(arguments, encryption: StoreEncryption(key: key)) {
            try Store.encrypt(at: StoreAccess.url(arguments.store), with: key, configuration: $0)
        }
        Console.out("Encrypted \(arguments.store): sealed \(Format.plural(total.resealed, "value")) in \(Format.duration(now() - start)); only the key opens it now.")
    }
}

struct DecryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt",
        abstract: "Decrypt an encrypted store, online: every value stored plain again.",
        discussion: """
            Begins in one short transaction (every write is plain from then on, and the store's metadata and change \
            log are opened), then opens the store's values in short write transactions that other processes' writes \
            interleave with. Until it is done the store opens only with its key; a kill or Ctrl-C loses nothing: \
            `strata maintain STORE --key-file KEY` finishes it. Afterwards the store opens only without a key.

            Example:
              strata decrypt ./Posts.store --key-file store.key
            """)

    @OptionGroup var arguments: KeyChangeArguments
    @Option(name: .customLong("key-file"), help: ArgumentHelp("The store's key (32 bytes or 64 hex digits).", valueName: "FILE"))
    var keyFile: String

    func run() throws {
        let key = try KeyFileOption.key(keyFile)
        let start = now()
        let total = try KeyChangeSweep.run(arguments, encryption: StoreEncryption(key: key)) { configuration in
            var configuration = configuration
            configuration.encryption = StoreEncryption(key: key)
            try Store.decrypt(at: StoreAccess.url(arguments.store), configuration: configuration)
        }
        Console.out("Decrypted \(arguments.store): opened \(Format.plural(total.resealed, "value")) in \(Format.duration(now() - start)); it opens only without a key now.")
    }
}
