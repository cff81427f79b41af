import ArgumentParser
import Crypto
import Foundation
import Strata

/// `--key-file FILE`: the key of an encrypted store, for every command that opens one.
struct KeyFileOption: ParsableArguments {
    @Option(name: .customLong("key-file"),
            help: ArgumentHelp("The key of an encrypted store: a file of 32 raw bytes, or of 64 hexadecimal digits (`openssl rand -hex 32`).",
                               valueName: "FILE"))
    var keyFile: String?
    @Option(name: .customLong("previous-key-file"),
            help: ArgumentHelp("While the store's key is being rotated (`strata rotate-key`): its previous key, in the same form.",
                               valueName: "FILE"))
    var previousKeyFile: String?

    /// The encryption the files give, or nil without `--key-file`.
    func encryption() throws -> StoreEncryption? {
        guard let keyFile else {
            if previousKeyFile != nil { throw CLIFailure("--previous-key-file needs --key-file (the store's new key)") }
            return nil
        }
        return StoreEncryption(key: try Self.key(keyFile), previousKeys: try previousKeyFile.map { [try Self.key($0)] } ?? [])
    }

    /// The key in `keyFile`: 32 raw bytes or 64 hexadecimal digits.
    static func key(_ keyFile: String) throws -> SymmetricKey {
        guard let data = FileManager.default.contents(atPath: keyFile) else {
            throw CLIFailure("cannot read the key file \(keyFile); check the path")
        }
        if data.count == 32 { return SymmetricKey(data: data) }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) ?? text.endIndex
            guard let byte = UInt8(text[index..<next], radix: 16), text.distance(from: index, to: next) == 2 else {
                bytes = []
                break
            }
            bytes.append(byte)
            index = next
        }
        guard bytes.count == 32 else {
            throw CLIFailure("the key file \(keyFile) holds neither 32 bytes nor 64 hexadecimal digits: a store's key is 256 bits")
        }
        return SymmetricKey(data: bytes)
    }
}
