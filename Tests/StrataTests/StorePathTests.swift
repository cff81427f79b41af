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

    @Test func aRelativeURLIsResolvedAsFoundationDoes() {
        let url = URL(fileURLWithPath: "some/../store", relativeTo: URL(fileURLWithPath: "/tmp/base/"))
        #expect(url.storePath == url.standardizedFileURL.path)
        #expect(url.storePath == "/tmp/base/store")
    }
}
