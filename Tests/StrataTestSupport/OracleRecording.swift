import Foundation
import Strata

/// Changes made in a write transaction, to apply to an ``Oracle`` once the transaction has committed (a
/// write closure may run more than once, and may roll back).
public typealias OracleLog = [(Oracle) -> Void]

extension WriteContext {
    /// Inserts an object and logs it for the oracle with the values given here — not the object the store
    /// returned, so defaults and conversions stay the oracle's own.
    @discardableResult
    public func insert(_ entity: String, _ values: [String: Value], log: inout OracleLog) throws -> DynamicObject {
        let object = try insert(entity, values)
        let id = object.id
        log.append { $0.insert(entity, id: id, values) }
        return object
    }
}
