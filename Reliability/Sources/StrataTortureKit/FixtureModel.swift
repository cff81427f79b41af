import Foundation
import StrataModels

/// The decoder fixture's entity (`DecoderEntryPoints.RecordFixture`, "Wide": an optional attribute of every
/// type) declared as a macro model: the malformed-input corpus and the fuzz target run its generated decoder
/// against the store's own.
public enum FixtureModel {
    /// The JSON shape the fixture's codable attribute holds in valid records.
    public struct Point: Codable, Hashable, Sendable {
        public var x: Double
        public var y: Double
    }

    @Entity("Wide") public struct Wide {
        public var i64: Int64?
        public var i32: Int32?
        public var i16: Int16?
        public var dbl: Double?
        public var flt: Float?
        public var flag: Bool?
        public var str: String?
        public var when: Date?
        public var blob: Data?
        public var uid: UUID?
        public var link: URL?
        public var dec: Decimal?
        @Field(.codable("Point")) public var point: Point?
        public var added: String?
    }
}
