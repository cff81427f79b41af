import Foundation
import Strata

enum StoreAccess {
    /// The URL of a store path given on the command line.
    static func url(_ path: String) -> URL {
        URL(fileURLWithPath: path).standardizedFileURL
    }

    /// Opens an existing store with the model recorded in it. Never creates a store; read-only opens never
    /// write to `data.mdb`.
    static func openRecorded(_ path: String, readOnly: Bool, key: KeyFileOption) throws -> Store {
        var configuration = StoreConfiguration()
        configuration.encryption = try key.encryption()
        configuration.createIfMissing = false
        configuration.readOnly = readOnly
        do {
            return try Store.openRecorded(at: url(path), configuration: configuration)
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: path))
        }
    }

    /// A read-only configuration for the static migration functions that only inspect.
    static func inspecting(_ key: KeyFileOption) throws -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.encryption = try key.encryption()
        configuration.createIfMissing = false
        configuration.readOnly = true
        return configuration
    }

    /// Reads and validates a model file in the schema JSON form.
    static func loadModel(_ path: String) throws -> Schema {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CLIFailure("cannot read the model file \(path); check the path")
        }
        do {
            return try Schema(jsonData: data)
        } catch {
            throw CLIFailure(ErrorText.describe(error, modelFile: path))
        }
    }

    /// Refuses a store with an unfinished migration, for commands that write objects.
    static func refuseUnfinishedMigration(_ store: Store, path: String) throws {
        let info: StoreInfo
        do { info = try store.info() } catch { throw CLIFailure(ErrorText.describe(error, store: path)) }
        if let m = info.migration {
            throw CLIFailure("the store has an unfinished migration \(m.sourceVersion) → \(m.destinationVersion); finish it first with `strata migrate \(path) --to MODEL.json` (the model file of \(m.destinationVersion))")
        }
    }
}
