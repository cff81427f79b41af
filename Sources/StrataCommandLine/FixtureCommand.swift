import ArgumentParser
import Foundation
import Strata
import StrataTestKit

/// `strata fixture record`: a fixture store from a model's schema JSON and objects in JSON Lines.
struct FixtureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fixture",
        abstract: "Record fixture stores: a small store per shipped model version, to commit and open in tests.",
        subcommands: [RecordFixtureCommand.self])
}

struct RecordFixtureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a fixture store of one model version from its schema JSON and objects in JSON Lines.",
        discussion: """
            Creates a store for MODEL.json (a schema in the documented JSON form, what `strata schema` prints), \
            imports the objects of OBJECTS.jsonl into it (the form `strata import` reads), and saves a \
            compacted copy as DIRECTORY/<version identifier>, replacing a fixture of that version already \
            there. MigrationTestKit.checkFixtures(in:plan:check:) opens every fixture of DIRECTORY with the \
            app's current model and plan. Apps whose model is Swift types record from a test instead, with \
            MigrationTestKit.recordFixture(for:at:fill:): the tool cannot know an app's types.

            Example:
              strata fixture record Posts-v2.json posts-v2.jsonl --into Tests/AppTests/Fixtures/posts
            """)

    @Argument(help: ArgumentHelp("The model version, in the schema JSON form.", valueName: "MODEL.json")) var schema: String
    @Argument(help: ArgumentHelp("The fixture's objects, one JSON object per line.", valueName: "OBJECTS.jsonl")) var objects: String
    @Option(name: .long, help: ArgumentHelp("The directory of the app's fixtures.", valueName: "DIRECTORY")) var into: String

    func run() throws {
        let model = try StoreAccess.loadModel(schema)
        guard FileManager.default.fileExists(atPath: objects) else { throw CLIFailure("\(objects) does not exist") }
        let url: URL
        do {
            url = try MigrationTestKit.recordFixture(for: model, at: StoreAccess.url(into), importing: StoreAccess.url(objects))
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: into, modelFile: schema))
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path + "/data.mdb")[.size] as? Int) ?? 0
        Console.out("Recorded \(url.path) for model \(model.versionIdentifier) (\(ByteCount(size))).")
    }
}
