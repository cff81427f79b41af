import Foundation
import StrataTestKit
import StrataTortureKit
import Testing

/// Encrypting an unencrypted store and decrypting an encrypted one (issue 26) under kills and power loss, with the
/// key rotation's trials (``ReliabilitySuite/KeyRotation``): a child begins the change and runs its sweep — for
/// encrypting, then the page rewrite in a handle of its own — and dies after its commits or by SIGKILL at random
/// instants; a fresh child resumes with the key the phase needs, finishes, and checks every object against the
/// oracle, again with the key (or none) that alone opens the store afterwards, the other refused.
extension ReliabilitySuite {
    @Suite struct EncryptingAndDecrypting {
        /// Items in a CI trial's store (the full tier: the rotation's 1,000).
        static let count = Tier.current.pick(ci: 300, full: ReliabilitySuite.KeyRotation.count)

        @Test("encrypting killed after its commits and at random instants: resumed with the key, every object intact, no key refused")
        func encryptingUnderKills() throws {
            try ReliabilitySuite.KeyRotation.run("encryptions killed", writes: false, randomKills: Tier.current.pick(ci: 8, full: 200),
                                                 change: "encrypt", count: Self.count, stride: Tier.current.pick(ci: 3, full: 1))
        }

        @Test("decrypting killed after every commit and at random instants: resumed with the key, every object intact, then only without a key")
        func decryptingUnderKills() throws {
            try ReliabilitySuite.KeyRotation.run("decryptions killed", writes: false, randomKills: Tier.current.pick(ci: 8, full: 200),
                                                 change: "decrypt", count: Self.count)
        }

        @Test("encrypting and decrypting killed while the app inserts and updates: the writes a prefix of those committed, every object intact")
        func changesUnderKillsWhileWriting() throws {
            guard Tier.current.pick(ci: false, full: true) else { return }
            try ReliabilitySuite.KeyRotation.run("encryptions killed while writing", writes: true, randomKills: 200, change: "encrypt")
            try ReliabilitySuite.KeyRotation.run("decryptions killed while writing", writes: true, randomKills: 200, change: "decrypt")
        }

        @Test("power loss at every sync point of encrypting and of decrypting: each crash image resumes and finishes")
        func changesUnderPowerLoss() throws {
            try ReliabilitySuite.KeyRotation.powerLoss(change: "encrypt", count: Tier.current.pick(ci: 200, full: 500 * ReliabilitySuite.PowerLoss.scale))
            guard Tier.current.pick(ci: false, full: true) else { return }
            try ReliabilitySuite.KeyRotation.powerLoss(change: "decrypt")
        }
    }
}
