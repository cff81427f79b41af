import ArgumentParser
import Crypto
import Foundation
import Strata

struct RotateKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-key",
        abstract: "Rotate an encrypted store's key, online: every value re-sealed under the new key.",
        discussion: """
            Begins the rotation in one short transaction (the new key seals every write from then on), then \
            re-seals the store's values in short write transactions that other processes' writes interleave with. \
            A kill or Ctrl-C loses nothing: `strata maintain STORE --key-file NEW --previous-key-file OLD` (or any \
            app handle opened with both keys) finishes it. Until it is done, the store opens only with both keys; \
            afterwards only with the new one. Handles opened before the rotation must open the store again.

            Example:
              openssl rand -hex 32 > new.key
              strata rotate-key ./Posts.store --key-file old.key --new-key-file new.key
            """)

    @OptionGroup var arguments: KeyChangeArguments
    @Option(name: .customLong("key-file"), help: ArgumentHelp("The store's current key (32 bytes or 64 hex digits).", valueName: "FILE"))
    var keyFile: String
    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("The new key, in the same form.", valueName: "FILE"))
    var newKeyFile: String

    func run() throws {
        let old = try KeyFileOption.key(keyFile)
        let new = try KeyFileOption.key(newKeyFile)
        let start = now()
        let total = try KeyChangeSweep.run(arguments, encryption: StoreEncryption(key: new, previousKeys: [old])) { configuration in
            var configuration = configuration
            configuration.encryption = StoreEncryption(key: old)
            try Store.rotateEncryptionKey(at: StoreAccess.url(arguments.store), to: new, configuration: configuration)
        }
        Console.out("Rotated the key of \(arguments.store): re-sealed \(Format.plural(total.resealed, "value")) in \(Format.duration(now() - start)); only the new key opens it now.")
    }
}
