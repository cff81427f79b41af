import Crypto
import Foundation
import Strata
import Testing
import StrataTestSupport

/// `--key-file`: every command that opens a store opens an encrypted one with its key, and is refused (one line,
/// the store's files unchanged) without it or with another key.
@Suite(.serialized) struct EncryptedStoreCLITests {
    @Test func commandsTakeTheKeyFileAndRefuseAnEncryptedStoreWithoutIt() throws {
        let refusals = RefusalTests()
        let dir = try refusals.prepare()
        try dir.write("key.hex", String(repeating: "5a", count: 32) + "\n")
        try dir.write("wrong.hex", String(repeating: "a5", count: 32))
        try dir.write("short.hex", "00ff")
        #expect(try dir.strata("create", "secret.store", "--schema", "v1.json", "--key-file", "key.hex").status == 0)
        #expect(try dir.strata("import", "secret.store", "objects.jsonl", "--key-file", "key.hex").status == 0)

        // With the key: the store reads, and export writes its objects decrypted.
        let info = try dir.strata("info", "secret.store", "--key-file", "key.hex")
        #expect(info.status == 0, "\(info)")
        #expect(info.stdout.contains("encrypted (AES-256-GCM)"))
        let export = try dir.strata("export", "secret.store", "--key-file", "key.hex")
        #expect(export.status == 0)
        #expect(export.stdout.contains("First! ✓"))
        #expect(try dir.strata("verify", "secret.store", "--key-file", "key.hex").status == 0)
        #expect(try dir.strata("backup", "secret.store", "copy.store", "--key-file", "key.hex").status == 0)
        #expect(try dir.strata("info", "copy.store", "--key-file", "key.hex").status == 0)
        // The data file holds none of the imported strings.
        let data = try Data(contentsOf: URL(fileURLWithPath: dir.path("secret.store") + "/data.mdb"))
        #expect(StoreFileBytes.offsets(of: Array("First! ✓".utf8), in: data).isEmpty)

        // Without the key, or with another: every command refused, nothing written.
        try refusals.expectRefused(dir, "secret.store", "is encrypted; nothing was read or written")
        let before = refusals.snapshot(dir.path("secret.store"))
        let wrong = try dir.strata("info", "secret.store", "--key-file", "wrong.hex")
        #expect(wrong.status == 1 && wrong.stderr.contains("encrypted with another key"), "\(wrong)")
        let short = try dir.strata("info", "secret.store", "--key-file", "short.hex")
        #expect(short.status == 1 && short.stderr.contains("256 bits"), "\(short)")
        #expect(refusals.snapshot(dir.path("secret.store")) == before)

        // Plan and migrate with the key: the plan's calibration and the migration keep every value sealed.
        let plan = try dir.strata("plan", "secret.store", "--to", "v2.json", "--key-file", "key.hex")
        #expect(plan.status == 0, "\(plan)")
        let migrate = try dir.strata("migrate", "secret.store", "--to", "v2.json", "--key-file", "key.hex")
        #expect(migrate.status == 0, "\(migrate)")
        let migrated = try dir.strata("export", "secret.store", "--key-file", "key.hex")
        #expect(migrated.status == 0 && migrated.stdout.contains("First! ✓"), "\(migrated)")
        let after = try Data(contentsOf: URL(fileURLWithPath: dir.path("secret.store") + "/data.mdb"))
        #expect(StoreFileBytes.offsets(of: Array("First! ✓".utf8), in: after).isEmpty)
    }

    @Test func rotateKeyReSealsTheStoreAndPlanAndMaintainShowAndFinishARotation() throws {
        let refusals = RefusalTests()
        let dir = try refusals.prepare()
        try dir.write("key.hex", String(repeating: "5a", count: 32))
        try dir.write("new.hex", String(repeating: "3c", count: 32))
        try dir.write("third.hex", String(repeating: "c3", count: 32))
        #expect(try dir.strata("create", "secret.store", "--schema", "v1.json", "--key-file", "key.hex").status == 0)
        #expect(try dir.strata("import", "secret.store", "objects.jsonl", "--key-file", "key.hex").status == 0)

        let rotate = try dir.strata("rotate-key", "secret.store", "--key-file", "key.hex", "--new-key-file", "new.hex")
        #expect(rotate.status == 0 && rotate.stdout.contains("Rotated the key"), "\(rotate)")
        let old = try dir.strata("info", "secret.store", "--key-file", "key.hex")
        #expect(old.status == 1 && old.stderr.contains("encrypted with another key"), "\(old)")
        let export = try dir.strata("export", "secret.store", "--key-file", "new.hex")
        #expect(export.status == 0 && export.stdout.contains("First! ✓"))

        // A rotation begun (by an app) and not swept yet: plan says so, maintain finishes it.
        var configuration = StoreConfiguration()
        configuration.encryption = StoreEncryption(key: SymmetricKey(data: [UInt8](repeating: 0x3c, count: 32)))
        try Store.rotateEncryptionKey(at: URL(fileURLWithPath: dir.path("secret.store")), to: SymmetricKey(data: [UInt8](repeating: 0xc3, count: 32)),
                                      configuration: configuration)
        let oneKey = try dir.strata("info", "secret.store", "--key-file", "third.hex")
        #expect(oneKey.status == 1 && oneKey.stderr.contains("being rotated"), "\(oneKey)")
        let plan = try dir.strata("plan", "secret.store", "--to", "v1.json", "--key-file", "third.hex", "--previous-key-file", "new.hex")
        #expect(plan.status == 0 && plan.stdout.contains("A key rotation is under way"), "\(plan)")
        let maintain = try dir.strata("maintain", "secret.store", "--key-file", "third.hex", "--previous-key-file", "new.hex")
        #expect(maintain.status == 0 && maintain.stdout.contains("Re-sealed"), "\(maintain)")
        #expect(try dir.strata("verify", "secret.store", "--key-file", "third.hex").status == 0)
        #expect(try dir.strata("info", "secret.store", "--key-file", "new.hex").status == 1)
    }
}
