import Foundation

/// How the inferred mapping fills a destination entity's attributes from a source object, compiled once per
/// source entity for a step. A class, so that the runner can lend the program it asked for last without copying
/// it (a copy counts three references: the binding and the two arrays).
final class InferenceProgram {
    struct Step {
        let source: Int
        let destination: Int
        let conversion: AttributeMappingPlan.Conversion?
        let nullReplacement: Value?
    }
    let destination: EntityBinding
    let steps: [Step]
    let constants: [(Int, Value)]

    init(destination: EntityBinding, steps: [Step], constants: [(Int, Value)]) {
        self.destination = destination
        self.steps = steps
        self.constants = constants
    }
}

extension StepRunner {
    /// Runs `body` with the inference program for a source entity (compiled on first use) lent, counting no
    /// reference: the runner keeps every program it compiled for the whole step.
    @inline(__always)
    func withInference<R>(for source: EntityBinding, _ body: (InferenceProgram) throws -> R) throws -> R {
        // A policy asks once per object, for the entity it asked for last: found without hashing its name.
        if lastInference?.address == Unmanaged.passUnretained(source).toOpaque(), let program = lastInference?.program {
            return try program._withUnsafeGuaranteedRef(body)
        }
        return try body(try inference(for: source))
    }

    /// The inference program for a source entity (compiled on first use), remembered as the last one asked for.
    func inference(for source: EntityBinding) throws -> InferenceProgram {
        if let cached = inferencePrograms[source.name] {
            lastInference = (source, Unmanaged.passUnretained(source).toOpaque(), Unmanaged.passUnretained(cached))
            return cached
        }
        guard let destName = mapping.entities.first(where: { $0.sourceName == source.name })?.destinationName,
              let plan = mapping.entity(destName) else {
            throw StoreError.unknownEntity("(no destination entity matches \(source.name))")
        }
        let destination = try destinationForWrites.entity(destName)
        var steps: [InferenceProgram.Step] = []
        var constants: [(Int, Value)] = []
        for m in plan.attributes {
            guard let d = destination.position(of: m.name) else { continue }
            switch m.origin {
            case .added(let v): constants.append((d, v))
            case .scripted: constants.append((d, .null))
            case .source(let s):
                guard let si = source.position(of: s) else { continue }
                steps.append(.init(source: si, destination: d, conversion: m.conversion, nullReplacement: m.nullReplacement))
            }
        }
        let program = InferenceProgram(destination: destination, steps: steps, constants: constants)
        inferencePrograms[source.name] = program
        lastInference = (source, Unmanaged.passUnretained(source).toOpaque(), Unmanaged.passUnretained(program))
        return program
    }
}
