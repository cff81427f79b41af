import Foundation

/// A small nested Codable value used by generators and typed-API tests.
public struct TestDocument: Codable, Hashable, Sendable {
    public var x: Int
    public var tags: [String]
    public init(x: Int, tags: [String]) { self.x = x; self.tags = tags }
}
