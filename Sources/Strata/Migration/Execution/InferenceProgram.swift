import Foundation

/// How the inferred mapping fills a destination entity's attributes from a source object, compiled once per
/// source entity for a step.
struct InferenceProgram {
    struct Step {
        let source: Int
        let destination: Int
        let conversion: AttributeMappingPlan.Conversion?
        let nullReplacement: Value?
    }
    let destination: EntityBinding
    let steps: [Step]
    let constants: [(Int, Value)]
}

extension StepRunner {
    /// The inference program for a source entity (compiled on first use).
    func inference(for source: EntityBinding) throws -> InferenceProgram {
        // A policy asks once per object, for the entity it asked for last: found without hashing its name.
        if let last = lastInference, last.source === source { return last.program }
        if let cached = inferencePrograms[source.name] {
            lastInference = (source, cached)
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
            guard let d = destination.attributeIndex[m.name] else { continue }
            switch m.origin {
            case .added(let v): constants.append((d, v))
            case .scripted: constants.append((d, .null))
            case .source(let s):
                guard let si = source.attributeIndex[s] else { continue }
                steps.append(.init(source: si, destination: d, conversion: m.conversion, nullReplacement: m.nullReplacement))
            }
        }
        let program = InferenceProgram(destination: destination, steps: steps, constants: constants)
        inferencePrograms[source.name] = program
        lastInference = (source, program)
        return program
    }
}
