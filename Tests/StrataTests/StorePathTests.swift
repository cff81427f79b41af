import Foundation
import Testing
@testable import Strata

/// A store's path is what Foundation's `standardizedFileURL` makes of its URL, computed without it.
struct StorePathTests {
    @Test(arguments: [
        "/tmp/store", "/tmp/store/", "/tmp//store", "/tmp/./store", "/tmp/a/../store", "/tmp/a/b/../../store",
        "/../tmp/store", "/", "/tmp/store/..", "/tmp/st ore/é", "/tmp/.hidden/store", "/tmp/...store/x",
        "/tmp/100%/x", "/tmp/a%20b", "/tmp/#hash?q=1", "/tmp/日本/store", "/tmp/a b/../c d",
    ])
    func isTheStandardizedPath(_ path: String) {
        let url = URL(fileURLWithPath: path)
        #expect(url.storePath == url.standardizedFileURL.path, "\(path)")
    }

    /// File URLs written with escapes (as an app may get them from a document picker or a string): an escaped dot,
    /// an escaped slash inside a component, an escaped space before a `..`.
    @Test(arguments: [
        "file:///tmp/a%2Fb/../c", "file:///tmp/x/%2E/y", "file:///tmp/x/%2e%2e/y", "file:///tmp/a%20b/../c%20d",
        "file:///tmp/%41bc/./d", "file:///tmp/x/..", "file:///..", "file:///tmp//x///y/",
    ])
    func anEscapedFileURLIsTheStandardizedPath(_ string: String) throws {
        let url = try #require(URL(string: string))
        #expect(url.storePath == url.standardizedFileURL.path, "\(string)")
    }

    @Test func aRelativeURLIsResolvedAsFoundationDoes() {
        let url = URL(fileURLWithPath: "some/../store", relativeTo: URL(fileURLWithPath: "/tmp/base/"))
        #expect(url.storePath == url.standardizedFileURL.path)
        #expect(url.storePath == "/tmp/base/store")
    }
}
