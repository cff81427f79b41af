import Testing
@testable import Strata

@Test func smoke() { #expect(true) }
