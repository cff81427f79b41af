import Crypto
import Foundation
import Strata
import Testing
import StrataTestSupport

/// `strata encrypt` and `strata decrypt`: an unencrypted store encrypted and decrypted again, every object the same;
/// `plan` shows a step begun by an app, and `maintain` finishes it.
@Suite(.serialized) struct EncryptCommandsTests {
    @Test func encryptThenDecryptGivesBackTheStoreAndPlanAndMaintainShowAndFinishAStep() throws {
        let refusals = RefusalTests()
        let dir = try refusals.prepare()
        try dir.write("key.hex", String(repeating: "5a", count: 32))
        #expect(try dir.strata("create", "plain.store", "--schema", "v1.json").status == 0)
        #expect(try dir.strata("import", "plain.store", "objects.jsonl").status == 0)
        let original = try dir.strata("export", "plain.store")
        #expect(original.status == 0 && original.stdout.contains("First! ✓"))

        let encrypt = try dir.strata("encrypt", "plain.store", "--new-key-file", "key.hex")
        #expect(encrypt.status == 0 && encrypt.stdout.contains("Encrypted"), "\(encrypt)")
        let data = try Data(contentsOf: URL(fileURLWithPath: dir.path("plain.store") + "/data.mdb"))
        #expect(StoreFileBytes.offsets(of: Array("First! ✓".utf8), in: data).isEmpty)
        try refusals.expectRefused(dir, "plain.store", "is encrypted; nothing was read or written")
        let again = try dir.strata("encrypt", "plain.store", "--new-key-file", "key.hex")
        #expect(again.status == 1 && again.stderr.contains("encrypted already"), "\(again)")
        #expect(try dir.strata("export", "plain.store", "--key-file", "key.hex").stdout == original.stdout)

        let decrypt = try dir.strata("decrypt", "plain.store", "--key-file", "key.hex")
        #expect(decrypt.status == 0 && decrypt.stdout.contains("Decrypted"), "\(decrypt)")
        #expect(try dir.strata("export", "plain.store").stdout == original.stdout)
        let withKey = try dir.strata("info", "plain.store", "--key-file", "key.hex")
        #expect(withKey.status == 1 && withKey.stderr.contains("is not encrypted"), "\(withKey)")

        // Begun by an app and not swept yet: plan says so, maintain finishes it.
        let key = SymmetricKey(data: [UInt8](repeating: 0x5a, count: 32))
        try Store.encrypt(at: URL(fileURLWithPath: dir.path("plain.store")), with: key, configuration: StoreConfiguration())
        let plan = try dir.strata("plan", "plain.store", "--to", "v1.json", "--key-file", "key.hex")
        #expect(plan.status == 0 && plan.stdout.contains("being encrypted"), "\(plan)")
        let maintain = try dir.strata("maintain", "plain.store", "--key-file", "key.hex")
        #expect(maintain.status == 0 && maintain.stdout.contains("the store is encrypted"), "\(maintain)")
        var configuration = StoreConfiguration()
        configuration.encryption = StoreEncryption(key: key)
        try Store.decrypt(at: URL(fileURLWithPath: dir.path("plain.store")), configuration: configuration)
        let noKey = try dir.strata("info", "plain.store")
        #expect(noKey.status == 1 && noKey.stderr.contains("being decrypted"), "\(noKey)")
        let finish = try dir.strata("maintain", "plain.store", "--key-file", "key.hex")
        #expect(finish.status == 0 && finish.stdout.contains("the store is decrypted"), "\(finish)")
        #expect(try dir.strata("export", "plain.store").stdout == original.stdout)
    }
}
