import Foundation
import Testing

extension ReliabilitySuite {
    /// The decoder the `@Entity` macro generates, on malformed records (plan item 21, for model types): the
    /// store's decoder is the oracle. Runs in a child, so that a trap would be seen, not suffered.
    @Suite struct ModelDecoders {
        struct Tally: Decodable {
            var inputs: Int
            var rejected: Int
            var accepted: Int
            var validAccepted: Int
            var validSeeds: Int
            var wrongIDRefused: Int
            var wrongIDInputs: Int
            var oracleViolations: Int
            var problems: [String]
        }

        @Test("generated decoders refuse what the store refuses, name the object, and read what it reads")
        func generatedDecoders() throws {
            try #require(Products.available)
            let run = try Child.run(["decode-models", "-"], timeout: 600)
            #expect(run.exitCode == 0, "\(run)")
            let line = try #require(run.line("MODELDECODE "))
            let t = try JSONDecoder().decode(Tally.self, from: Data(line.dropFirst("MODELDECODE ".count).utf8))
            #expect(t.oracleViolations == 0, "\(t.problems)")
            // The check must not pass by refusing everything, nor by accepting everything.
            #expect(t.validSeeds >= 10 && t.validAccepted == t.validSeeds, "valid seeds read: \(t.validAccepted) of \(t.validSeeds)")
            #expect(t.wrongIDInputs == t.validSeeds && t.wrongIDRefused == t.wrongIDInputs)
            #expect(t.rejected > t.inputs / 2 && t.accepted > t.validSeeds, "\(t.rejected) rejected, \(t.accepted) accepted of \(t.inputs)")
            #expect(t.inputs >= 5_000)
            Figures.add("model decoders: \(t.inputs) inputs (\(t.rejected) refused with typed errors naming the object, \(t.accepted) read as the store reads them)") { c in
                c.malformedInputs += t.inputs - t.validSeeds
            }
        }
    }
}
