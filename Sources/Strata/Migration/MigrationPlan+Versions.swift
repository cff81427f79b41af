import Foundation

extension MigrationPlan {
    /// A plan over versions declared as Swift model types, oldest first.
    /// - Throws: ``MigrationPlanError`` listing every problem, or ``SchemaValidationError`` for a version whose
    ///   model is not valid.
    public init(versions: [any SchemaVersion.Type], stages: [MigrationStage] = [], routes: [Route] = [],
                skipping: Set<String> = []) throws {
        try self.init(schemas: try versions.map { v throws(SchemaValidationError) in try Schema(v) },
                      stages: stages, routes: routes, skipping: skipping)
    }
}
