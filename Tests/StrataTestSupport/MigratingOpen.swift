import Foundation
import Strata

extension Store {
    /// Opens the store at `url` under `destination`, migrating it from `source` by `stages` in batches of at most
    /// `batchSize` objects: the open most custom-stage tests make after writing the source version.
    public static func open(at url: URL, migratingFrom source: Schema, to destination: Schema, stages: [MigrationStage],
                            batchSize: Int) throws -> Store {
        var options = MigrationOptions()
        options.batchSize = batchSize
        return try Store.open(at: url, schema: destination, plan: try MigrationPlan(schemas: [source, destination], stages: stages),
                              configuration: StoreConfiguration(migration: options))
    }
}
