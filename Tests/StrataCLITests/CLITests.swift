import Foundation
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `strata` tool, run as a separate process on temporary stores.
@Suite(.serialized) struct CLITests {
    static let commands = ["info", "schema", "create", "import", "export", "plan", "migrate", "verify", "backup", "maintain", "history"]

    /// A store at v1 holding `Fixtures.objects`.
    func fixtureStore(_ dir: TempDir, name: String = "s.store") throws -> String {
        try dir.write("v1.json", Fixtures.v1)
        try dir.write("objects.jsonl", Fixtures.objects)
        let created = try dir.strata("create", name, "--schema", "v1.json")
        try #require(created.status == 0, "\(created)")
        let imported = try dir.strata("import", name, "objects.jsonl")
        try #require(imported.status == 0, "\(imported)")
        return name
    }

    // MARK: Conventions

    @Test func everyCommandHasHelpWithAnExample() throws {
        let dir = try TempDir()
        for command in Self.commands {
            let r = try dir.strata(command, "--help")
            #expect(r.status == 0, "\(command): \(r)")
            #expect(r.stdout.contains("USAGE: strata \(command)"), "\(command): \(r)")
            #expect(r.stdout.contains("Example:") && r.stdout.contains("strata \(command) "), "\(command): \(r)")
        }
        let root = try dir.strata("--help")
        #expect(root.status == 0)
        for command in Self.commands { #expect(root.stdout.contains(command)) }
    }

    @Test func badUsageExitsWithStatus2AndOneLine() throws {
        let dir = try TempDir()
        let cases: [[String]] = [
            ["frobnicate"], ["info"], ["info", "a", "b"], ["create", "x.store"], ["import", "x.store", "--batch-size", "0"],
            ["migrate", "x.store", "--to", "m.json", "--batch-size", "ten"], ["export", "x.store", "--colour"],
            ["plan", "x.store"], ["backup", "x.store"], ["verify", "--json"],
        ]
        for args in cases {
            let r = try CLI.run(args, in: dir)
            #expect(r.status == 2, "\(args): \(r)")
            #expect(r.stdout.isEmpty, "\(args): \(r)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("strata: ") && r.stderr.contains("--help"), "\(args): \(r)")
        }
        let bare = try dir.strata()
        #expect(bare.status == 2 && bare.stderr.contains("SUBCOMMANDS"), "\(bare)")
    }

    // MARK: create, info, schema

    @Test func createInfoAndSchema() throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        let created = try dir.strata("create", "a.store", "--schema", "v1.json")
        #expect(created.status == 0, "\(created)")
        #expect(FileManager.default.fileExists(atPath: dir.path("a.store/data.mdb")))

        let again = try dir.strata("create", "a.store", "--schema", "v1.json")
        #expect(again.status == 1 && again.stderr.contains("already exists"), "\(again)")

        let info = try dir.strata("info", "a.store")
        #expect(info.status == 0, "\(info)")
        for text in ["Model       v1", "Post", "Tag", "Author", "Comment", "Migration   none", "LMDB"] {
            #expect(info.stdout.contains(text), "\(text): \(info)")
        }

        try dir.write("objects.jsonl", Fixtures.objects)
        try #require(try dir.strata("import", "a.store", "objects.jsonl").status == 0)
        let infoJSON = try dir.strata("info", "a.store", "--json")
        #expect(infoJSON.status == 0, "\(infoJSON)")
        let object = try #require(try json(infoJSON.stdout) as? [String: Any])
        #expect(object["modelVersion"] as? String == "v1")
        #expect(object["migration"] == nil)
        let entities = try #require(object["entities"] as? [[String: Any]])
        let counts = Dictionary(uniqueKeysWithValues: entities.map { ($0["name"] as? String ?? "", $0["objectCount"] as? Int ?? -1) })
        #expect(counts == ["Post": 4, "Tag": 2, "Author": 2, "Comment": 2])
        #expect(entities.allSatisfy { ($0["versionHash"] as? String)?.count == 64 })

        // The printed schema is the recorded model: a store created from it has the same fingerprint.
        let schema = try dir.strata("schema", "a.store")
        #expect(schema.status == 0, "\(schema)")
        try dir.write("printed.json", schema.stdout)
        #expect(try dir.strata("create", "b.store", "--schema", "printed.json").status == 0)
        let infoB = try #require(try json(try dir.strata("info", "b.store", "--json").stdout) as? [String: Any])
        #expect(infoB["modelFingerprint"] as? String == object["modelFingerprint"] as? String)
        #expect(try dir.strata("schema", "b.store").stdout == schema.stdout)

        // A model file that is not a schema.
        try dir.write("broken.json", #"{"format":"strata.schema","formatVersion":1,"versionIdentifier":"v1","entities":[{"name":"A","relationships":[{"name":"r","destination":"Nope","inverse":"x"}]}]}"#)
        let broken = try dir.strata("create", "c.store", "--schema", "broken.json")
        #expect(broken.status == 1 && broken.stderr.contains("broken.json is not a valid Strata schema"), "\(broken)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("c.store")))
        let missingModel = try dir.strata("create", "c.store", "--schema", "nope.json")
        #expect(missingModel.status == 1 && missingModel.stderr.contains("cannot read the model file"), "\(missingModel)")
    }

    // MARK: import and export

    @Test func exportImportExportIsIdentical() throws {
        let dir = try TempDir()
        let store = try fixtureStore(dir)
        let first = try dir.strata("export", store)
        #expect(first.status == 0, "\(first)")
        let lines = first.stdoutLines
        #expect(lines.count == 10)
        // Stable order: entities as in the model, then IDs; both sides of every relationship.
        #expect(lines.first?.hasPrefix(#"{"entity":"Post","id":10,"attributes":{"postID":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","title":"Hello \"world\"\n\ttabbed","views":-32768,"body":"héllo ✓ \u0001","rating":0.1,"published":726000000.5,"cover":"AAEC/w==""#) == true, "\(lines.first ?? "")")
        #expect(lines[0].hasSuffix(#""relationships":{"tags":[20,21],"author":30,"comments":[40]}}"#), "\(lines[0])")
        #expect(lines.contains(#"{"entity":"Tag","id":21,"attributes":{"name":"lmdb"},"relationships":{"posts":[10,12]}}"#), "\(first.stdout)")
        #expect(lines.contains { $0.hasPrefix(#"{"entity":"Author","id":31,"#) && $0.contains(#""mentor":30"#) }, "\(first.stdout)")
        #expect(lines.contains(#"{"entity":"Comment","id":41,"attributes":{"text":"Second"},"relationships":{"post":11}}"#), "\(first.stdout)")
        #expect(lines.map { (try? json($0)) != nil }.allSatisfy { $0 })

        // Into a new store of the same model, and out again: identical.
        try dir.write("export1.jsonl", first.stdout)
        #expect(try dir.strata("create", "copy.store", "--schema", "v1.json").status == 0)
        let imported = try dir.strata("import", "copy.store", "export1.jsonl", "--batch-size", "3")
        #expect(imported.status == 0, "\(imported)")
        let second = try dir.strata("export", "copy.store")
        #expect(second.status == 0)
        #expect(second.stdout == first.stdout)

        // From standard input, one entity at a time (links to entities not imported yet wait for the
        // other side): identical too.
        #expect(try dir.strata("create", "byEntity.store", "--schema", "v1.json").status == 0)
        for entity in ["Comment", "Tag", "Post", "Author"] {
            let r = try dir.strata("import", "byEntity.store", "--entity", entity, stdin: first.stdout)
            #expect(r.status == 0, "\(entity): \(r)")
            #expect(r.stderr.contains("skipped"), "\(entity): \(r)")
        }
        #expect(try dir.strata("export", "byEntity.store").stdout == first.stdout)
        #expect(try dir.strata("verify", "byEntity.store").status == 0)

        // --entity on export.
        let tags = try dir.strata("export", store, "--entity", "Tag")
        #expect(tags.stdoutLines == lines.filter { $0.hasPrefix(#"{"entity":"Tag""#) })
        let unknown = try dir.strata("export", store, "--entity", "Nope")
        #expect(unknown.status == 1 && unknown.stderr.contains("no entity named Nope"), "\(unknown)")
    }

    @Test func importFromStandardInputWithNewIDsAndForwardLinks() throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        #expect(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        let input = """
            {"entity":"Author","id":5,"attributes":{"name":"Ann"},"relationships":{"posts":[7]}}

            {"entity":"Post","id":7,"attributes":{"postID":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","title":"t"}}
            {"attributes":{"name":"new tag"}}
            """
        let r = try dir.strata("import", "s.store", "--entity", "Tag", stdin: input)
        #expect(r.status == 0 && r.stdout.contains("Imported 1 object"), "\(r)")
        let all = try dir.strata("import", "s.store", stdin: input.replacingOccurrences(of: #"{"attributes":{"name":"new tag"}}"#, with: ""))
        #expect(all.status == 0 && all.stdout.contains("Imported 2 objects"), "\(all)")
        let out = try dir.strata("export", "s.store").stdoutLines
        #expect(out.contains { $0.hasPrefix(#"{"entity":"Post","id":7,"#) && $0.contains(#""author":5"#) }, "\(out)")
        // The tag got a new ID; IDs allocated later are above the imported ones.
        let tag = try #require(out.first { $0.contains("new tag") })
        #expect(tag.hasPrefix(#"{"entity":"Tag","id":1,"#), "\(tag)")
        let more = try dir.strata("import", "s.store", "--entity", "Tag", stdin: #"{"attributes":{"name":"later"}}"#)
        #expect(more.status == 0)
        #expect(try dir.strata("export", "s.store", "--entity", "Tag").stdout.contains(#"{"entity":"Tag","id":8,"attributes":{"name":"later"}"#))
    }

    @Test func aBadLineStopsTheImportAndItsBatchLeavesNothing() throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        #expect(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        func tags(_ names: [String]) -> String {
            names.enumerated().map { #"{"entity":"Tag","id":\#(100 + $0.offset),"attributes":{"name":"\#($0.element)"}}"# }.joined(separator: "\n") + "\n"
        }
        // Line 5 has a value of the wrong type: found while reading, before its batch (lines 4–6) is written.
        var lines = tags(["a", "b", "c", "d", "e", "f", "g"]).split(separator: "\n").map(String.init)
        lines[4] = #"{"entity":"Tag","id":104,"attributes":{"name":42}}"#
        try dir.write("typed.jsonl", lines.joined(separator: "\n") + "\n")
        let typed = try dir.strata("import", "s.store", "typed.jsonl", "--batch-size", "3")
        #expect(typed.status == 1, "\(typed)")
        let message = typed.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(message.contains("line 5 of typed.jsonl: attribute name: expected a string, got 42"), "\(typed)")
        #expect(message.contains("3 objects (Tag 3) from lines 1–3") && message.contains("nothing of lines 4–5 was kept"), "\(typed)")
        #expect(message.contains("tail -n +4 typed.jsonl"), "\(typed)")
        #expect(try dir.strata("export", "s.store").stdoutLines.count == 3)

        // Line 5 breaks a unique constraint: found inside its batch's transaction, which is rolled back.
        try dir.write("unique.jsonl", tags(["h", "i", "j", "k", "h", "l"]).replacingOccurrences(of: #""id":10"#, with: #""id":20"#))
        let unique = try dir.strata("import", "s.store", "unique.jsonl", "--batch-size", "3")
        #expect(unique.status == 1, "\(unique)")
        #expect(unique.stderr.contains("line 5 of unique.jsonl: Attribute Tag.name is unique"), "\(unique)")
        #expect(unique.stderr.contains("nothing of lines 4–5 was kept"), "\(unique)")
        let names = try dir.strata("export", "s.store").stdoutLines
        #expect(names.count == 6)
        #expect(!names.contains { $0.contains(#""name":"k""#) }, "the failing batch left line 4 behind")

        // Not JSON, unknown names, a taken ID, a link to nothing.
        let cases: [(String, String)] = [
            (#"{"entity":"Tag","#, "line 1 of standard input: not valid JSON"),
            (#"{"entity":"Tag","attributes":{"nmae":"x"}}"#, #"Tag has no attribute named "nmae""#),
            (#"{"entity":"Tagz"}"#, "no entity named Tagz"),
            (#"{"entity":"Tag","id":100,"attributes":{"name":"zz"}}"#, "ID 100 is already used by a Tag object"),
            (#"{"entity":"Author","id":100,"attributes":{"name":"zz"}}"#, "ID 100 is already used by a Tag object"),
            (#"{"entity":"Tag","extra":1}"#, #"unknown key "extra""#),
            (#"{"attributes":{"name":"x"}}"#, "no \"entity\""),
            (#"{"entity":"Comment","attributes":{"text":"x"},"relationships":{"post":[1,2]}}"#, "is to-one but lists 2 objects"),
            (#"{"entity":"Tag","attributes":{"name":"x"},"relationships":{"posts":[999]}}"#, "relationship posts: no Post object has the ID 999"),
        ]
        for (line, expected) in cases {
            let r = try dir.strata("import", "s.store", stdin: line + "\n")
            #expect(r.status == 1, "\(line): \(r)")
            #expect(r.stderr.contains(expected), "\(line): \(r)")
            #expect(r.stderr.split(separator: "\n").last?.hasPrefix("strata: ") == true, "\(line): \(r)")
        }
        let verify = try dir.strata("verify", "s.store")
        #expect(verify.status == 0, "\(verify)")
    }

    @Test func importStoppedByCtrlCKeepsCommittedBatchesAndSaysWhereToGoOn() throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        let posts = Fixtures.posts(Self.bigCount)
        try dir.write("posts.jsonl", posts)
        #expect(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        let running = try CLI.start(["import", "s.store", "posts.jsonl", "--batch-size", "1"], in: dir)
        let started = running.waitForStderr(containing: "importing objects")
        running.signal(SIGINT)
        let stopped = running.wait()
        try #require(started, "\(stopped)")
        #expect(stopped.status == 1, "\(stopped)")
        let message = stopped.stderr.split(separator: "\n").last.map(String.init) ?? ""
        // "stopped by Ctrl-C: committed 1,234 objects (Post 1,234) from lines 1–1234 of posts.jsonl, …"
        let committed = try #require(message.firstMatch(of: /from lines 1–(\d+) of posts\.jsonl/).flatMap { Int($0.1) }, "\(stopped)")
        #expect(message.contains("stopped by Ctrl-C") && message.contains("tail -n +\(committed + 1) posts.jsonl | strata import s.store"), "\(stopped)")
        #expect(committed >= 1 && committed < Self.bigCount, "\(stopped)")
        // Exactly the committed lines are in the store, each with the values of its line.
        #expect(ExportedPosts.mismatches(try dir.strata("export", "s.store").stdout, count: committed, version: "v1") == [])
        // What the message says to do completes the import.
        let rest = posts.split(separator: "\n").dropFirst(committed).joined(separator: "\n") + "\n"
        let resumed = try dir.strata("import", "s.store", "--batch-size", "5000", stdin: rest)
        #expect(resumed.status == 0, "\(resumed)")
        #expect(ExportedPosts.mismatches(try dir.strata("export", "s.store").stdout, count: Self.bigCount, version: "v1") == [])
        #expect(try dir.strata("verify", "s.store").status == 0)
    }

    @Test func importReportsObjectsBelowAMinimumCount() throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        #expect(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        let r = try dir.strata("import", "s.store", stdin: #"{"entity":"Comment","id":3,"attributes":{"text":"orphan"}}"# + "\n")
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("Comment #3 post: 0 of at least 1"), "\(r)")
        let verify = try dir.strata("verify", "s.store")
        #expect(verify.status == 1 && verify.stdout.contains("countViolation Comment #3"), "\(verify)")
    }

    // MARK: verify

    @Test func verifyListsADamagedRecord() throws {
        let dir = try TempDir()
        let store = try fixtureStore(dir)
        let marker = "MARKER-7f3a9c1e-only-in-one-record"
        let added = try dir.strata("import", store, stdin: #"{"entity":"Post","id":77,"attributes":{"postID":"E621E1F8-C36C-495A-93FC-0C247A3E6E99","title":"x","body":"\#(marker)"}}"# + "\n")
        #expect(added.status == 0, "\(added)")
        let clean = try dir.strata("verify", store)
        #expect(clean.status == 0 && clean.stdout.contains("No problems found"), "\(clean)")

        // Flip bytes of the record's value in data.mdb, with the store closed (every copy of the bytes:
        // LMDB may keep older copies of the page in free pages).
        let dataPath = dir.path("\(store)/data.mdb")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dataPath))
        var searchFrom = bytes.startIndex
        var flipped = 0
        while let range = bytes.range(of: Data(marker.utf8), in: searchFrom..<bytes.endIndex) {
            bytes[range.lowerBound + 3] ^= 0xFF
            flipped += 1
            searchFrom = range.upperBound
        }
        try #require(flipped >= 1)
        try bytes.write(to: URL(fileURLWithPath: dataPath))

        let damaged = try dir.strata("verify", store)
        #expect(damaged.status == 1, "\(damaged)")
        #expect(damaged.stdout.contains("1 problem found"), "\(damaged)")
        #expect(damaged.stdout.contains("corruptedRecord Post #77"), "\(damaged)")
        #expect(damaged.stderr.hasPrefix("strata: 1 problem found"), "\(damaged)")

        let report = try #require(try json(try dir.strata("verify", store, "--json").stdout) as? [String: Any])
        let problems = try #require(report["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["kind"] as? String == "corruptedRecord")
        #expect(problems.first?["entity"] as? String == "Post")
        #expect(problems.first?["objectID"] as? Int == 77)

        let export = try dir.strata("export", store)
        #expect(export.status == 1 && export.stderr.contains("Post #77"), "\(export)")
        // The other entities still export.
        #expect(try dir.strata("export", store, "--entity", "Tag").status == 0)
    }

    // MARK: plan and migrate

    @Test func planAndMigrate() throws {
        let dir = try TempDir()
        let store = try fixtureStore(dir)
        try dir.write("v2.json", Fixtures.v2)
        try dir.write("impossible.json", Fixtures.v2Impossible)
        let before = try dir.read("\(store)/data.mdb")

        // By default every change of v2 is metadata only: old records are read through projections.
        let plan = try dir.strata("plan", store, "--to", "v2.json")
        #expect(plan.status == 0, "\(plan)")
        for text in ["v1 → v2", "metadata only, touches 0 records", "Post (4 objects): metadata only", "headline: renamed from title",
                     "views: widened int16 → int64", "flag: added"] {
            #expect(plan.stdout.contains(text), "\(text): \(plan)")
        }
        let rewriting = try dir.strata("plan", store, "--to", "v2.json", "--rewrite-records")
        #expect(rewriting.status == 0 && rewriting.stdout.contains("rewrites records") && rewriting.stdout.contains("views: widened int16 → int64"),
                "\(rewriting)")
        let impossible = try dir.strata("plan", store, "--to", "impossible.json")
        #expect(impossible.status == 1, "\(impossible)")
        #expect(impossible.stdout.contains("Post.summary is a new required attribute without a default value"), "\(impossible)")
        #expect(impossible.stdout.contains("Post.title changed type"), "\(impossible)")
        let refused = try dir.strata("migrate", store, "--to", "impossible.json")
        #expect(refused.status == 1 && refused.stderr.contains("cannot be inferred"), "\(refused)")
        #expect(try dir.read("\(store)/data.mdb") == before, "plan and a refused migration write nothing")

        let migrated = try dir.strata("migrate", store, "--to", "v2.json", "--batch-size", "2", "--backup", "before.store", "--rewrite-records")
        #expect(migrated.status == 0, "\(migrated)")
        #expect(migrated.stdout.contains("Migrated \(store) from v1 to v2"), "\(migrated)")
        #expect(migrated.stderr.contains("instances Post"), "plain progress lines: \(migrated)")
        let info = try #require(try json(try dir.strata("info", store, "--json").stdout) as? [String: Any])
        #expect(info["modelVersion"] as? String == "v2")
        #expect(info["history"] as? [String] == ["v1", "v2"])
        let export = try dir.strata("export", store, "--entity", "Post").stdoutLines
        #expect(export.first?.contains(#""headline":"Hello \"world\"\n\ttabbed","views":-32768,"flag":false"#) == true, "\(export)")
        #expect(try dir.strata("verify", store).status == 0)
        // The backup is the store before the migration.
        #expect(try dir.strata("info", "before.store").stdout.contains("Model       v1"))

        let again = try dir.strata("migrate", store, "--to", "v2.json")
        #expect(again.status == 0 && again.stdout.contains("nothing to migrate"), "\(again)")
        let upToDate = try dir.strata("plan", store, "--to", "v2.json")
        #expect(upToDate.status == 0 && upToDate.stdout.contains("nothing to migrate"), "\(upToDate)")
    }

    @Test func metadataOnlyMigrationThenCompactLayouts() throws {
        let dir = try TempDir()
        let store = try fixtureStore(dir)
        try dir.write("v2.json", Fixtures.v2)
        let migrated = try dir.strata("migrate", store, "--to", "v2.json")
        #expect(migrated.status == 0 && migrated.stdout.contains("Migrated \(store) from v1 to v2"), "\(migrated)")
        // Old records keep their layout, read as v2 through projections.
        let before = try dir.strata("info", store)
        #expect(before.stdout.contains("Post") && before.stdout.contains("4 records to rewrite"), "\(before)")
        let exported = try dir.strata("export", store)
        #expect(exported.status == 0)
        #expect(exported.stdoutLines.first { $0.contains(#""entity":"Post""#) }?
            .contains(#""headline":"Hello \"world\"\n\ttabbed","views":-32768,"flag":false"#) == true, "\(exported)")

        let compacted = try dir.strata("maintain", store, "--batch-size", "1")
        #expect(compacted.status == 0 && compacted.stdout.contains("Rewrote"), "\(compacted)")
        let after = try dir.strata("info", store)
        #expect(!after.stdout.contains("to rewrite") && after.stdout.contains("nothing left"), "\(after)")
        // The same objects, byte for byte in their export.
        #expect(try dir.strata("export", store).stdout == exported.stdout)
        #expect(try dir.strata("verify", store).status == 0)
        // The command's earlier name still works (nothing left to do).
        let alias = try dir.strata("compact-layouts", store)
        #expect(alias.status == 0 && alias.stdout.contains("Rewrote 0 records"), "\(alias)")
    }

    @Test func planGivesEstimatesAsTextAndJSON() throws {
        let dir = try TempDir()
        let store = try fixtureStore(dir)
        try dir.write("v2.json", Fixtures.v2)
        try dir.write("impossible.json", Fixtures.v2Impossible)
        let before = try dir.read("\(store)/data.mdb")

        let text = try dir.strata("plan", store, "--to", "v2.json")
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("Estimate: writes about") && text.stdout.contains("takes about"), "\(text)")
        #expect(text.stdout.contains("Estimates are calibrated on"), "\(text)")

        let plan = try dir.strata("plan", store, "--to", "v2.json", "--json")
        #expect(plan.status == 0, "\(plan)")
        let root = try #require(try json(plan.stdout) as? [String: Any], "\(plan)")
        #expect(root["storeVersion"] as? String == "v1" && root["destinationVersion"] as? String == "v2")
        #expect(root["isUpToDate"] as? Bool == false)
        #expect(((root["estimatedSeconds"] as? NSNumber)?.doubleValue ?? 0) > 0)
        #expect(((root["bytesToWrite"] as? NSNumber)?.intValue ?? 0) > 0)
        let calibration = try #require(root["calibration"] as? [String: Any])
        for field in ["sampledRecords", "readSecondsPerRecord", "decodeSecondsPerRecord", "encodeSecondsPerRecord",
                      "writeSecondsPerRecord", "insertSecondsPerRecord", "commitSeconds", "commitSecondsPerByte", "averageRecordBytes"] {
            #expect(calibration[field] != nil, "calibration.\(field)")
        }
        let steps = try #require(root["steps"] as? [[String: Any]])
        let step = try #require(steps.first)
        #expect(step["source"] as? String == "v1" && step["destination"] as? String == "v2")
        // v2's changes are all metadata only by default; --rewrite-records plans a rewrite, with more bytes to write.
        #expect(step["rewritesRecords"] as? Bool == false && step["inferable"] as? Bool == true)
        #expect(((step["bytesToWrite"] as? NSNumber)?.intValue ?? 0) > 0)
        #expect(((step["estimatedSeconds"] as? NSNumber)?.doubleValue ?? 0) > 0)
        for field in ["tasks", "entities", "entityHandling", "recordCounts", "recordsTouched", "diagnostics"] {
            #expect(step[field] != nil, "step.\(field)")
        }
        let rewriting = try dir.strata("plan", store, "--to", "v2.json", "--json", "--rewrite-records")
        let rewritingStep = try #require(((try json(rewriting.stdout) as? [String: Any])?["steps"] as? [[String: Any]])?.first, "\(rewriting)")
        #expect(rewritingStep["rewritesRecords"] as? Bool == true)
        #expect(((rewritingStep["bytesToWrite"] as? NSNumber)?.intValue ?? 0) > ((step["bytesToWrite"] as? NSNumber)?.intValue ?? 0))
        let entities = try #require(step["entities"] as? [[String: Any]])
        #expect(entities.contains { ($0["changes"] as? [String] ?? []).contains("headline: renamed from title") }, "\(entities)")

        // A step that cannot be inferred: its diagnostics, exit status 1.
        let impossible = try dir.strata("plan", store, "--to", "impossible.json", "--json")
        #expect(impossible.status == 1, "\(impossible)")
        let blocked = try #require(try json(impossible.stdout) as? [String: Any], "\(impossible)")
        let blockedStep = try #require((blocked["steps"] as? [[String: Any]])?.first)
        #expect(blockedStep["inferable"] as? Bool == false)
        #expect((blockedStep["diagnostics"] as? [String] ?? []).contains { $0.contains("Post.summary") }, "\(blockedStep)")
        #expect(try dir.read("\(store)/data.mdb") == before, "plan writes nothing")
    }

    @Test func migrateDrawsABarOnATerminal() throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try dir.write("v2.json", Fixtures.v2)
        #expect(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        #expect(try dir.strata("import", "s.store", stdin: Fixtures.posts(2000)).status == 0)

        // Standard error on a pseudo-terminal (opened here, so the test never depends on an external tool).
        let terminal = try PseudoTerminal()
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["migrate", "s.store", "--to", "v2.json", "--batch-size", "100", "--rewrite-records"]
        process.currentDirectoryURL = dir.url
        process.standardInput = FileHandle.nullDevice
        let outURL = dir.url.appendingPathComponent("stdout.txt")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = terminal.slave
        let drawn = String(decoding: try terminal.capture(process), as: UTF8.self)
        let stdout = try String(contentsOf: outURL, encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(stdout)\n\(drawn)")
        #expect(stdout.contains("Migrated s.store from v1 to v2"), "\(stdout)")
        #expect(drawn.contains("\r\u{1B}[K"), "redrawn in place: \(drawn)")
        #expect(drawn.contains("instances Post  [########################]  100%  2,000/2,000"), "\(drawn)")
        #expect(drawn.contains(" rec/s ") && drawn.contains(" left"), "\(drawn)")
    }

    /// A store big enough that a migration in batches of one record takes a while.
    func bigStore(_ dir: TempDir) throws -> String {
        try dir.write("v1.json", Fixtures.v1)
        try dir.write("v2.json", Fixtures.v2)
        try dir.write("posts.jsonl", Fixtures.posts(Self.bigCount))
        #expect(try dir.strata("create", "big.store", "--schema", "v1.json").status == 0)
        let imported = try dir.strata("import", "big.store", "posts.jsonl", "--batch-size", "5000")
        try #require(imported.status == 0, "\(imported)")
        return "big.store"
    }

    static let bigCount = 20_000

    /// Checks a big store against its input: every post once, each with its own values, at `version`.
    func expectPosts(_ dir: TempDir, _ store: String, version: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let export = try dir.strata("export", store)
        #expect(export.status == 0, "\(export.stderr)", sourceLocation: sourceLocation)
        #expect(ExportedPosts.mismatches(export.stdout, count: Self.bigCount, version: version) == [], sourceLocation: sourceLocation)
    }

    /// Checks a migrated big store: every object, once, at v2, with the values of its input line.
    func expectMigrated(_ dir: TempDir, _ store: String) throws {
        try expectPosts(dir, store, version: "v2")
        let verify = try dir.strata("verify", store)
        #expect(verify.status == 0, "\(verify)")
        let info = try dir.strata("info", store)
        #expect(info.stdout.contains("nothing left") && !info.stdout.contains("to rewrite"), "every record rewritten: \(info)")
    }

    @Test func migrateStoppedByCtrlCResumes() throws {
        let dir = try TempDir()
        let store = try bigStore(dir)
        let running = try CLI.start(["migrate", store, "--to", "v2.json", "--batch-size", "1", "--rewrite-records"], in: dir)
        let started = running.waitForStderr(containing: "instances Post")
        running.signal(SIGINT)
        let stopped = running.wait()
        try #require(started, "\(stopped)")
        #expect(stopped.status == 1, "\(stopped)")
        let message = stopped.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(message.contains("The migration v1 → v2 was asked to stop and stopped after its last committed batch"), "\(stopped)")
        #expect(message.contains("still reads as v1") && message.contains("resumes the step from the last committed batch")
                && message.contains("`strata migrate \(store) --to v2.json`"), "\(stopped)")

        // In between: the store reads as v1, with the migration recorded as unfinished.
        let info = try dir.strata("info", store)
        #expect(info.stdout.contains("Model       v1") && info.stdout.contains("v1 → v2 unfinished"), "\(info)")
        let infoJSON = try #require(try json(try dir.strata("info", store, "--json").stdout) as? [String: Any])
        let migration = try #require(infoJSON["migration"] as? [String: Any])
        let done = try #require(migration["completed"] as? Int)
        #expect(done >= 1 && done < Self.bigCount, "\(migration)")
        try expectPosts(dir, store, version: "v1")
        let verify = try dir.strata("verify", store)
        #expect(verify.status == 0 && verify.stdout.contains("a migration is in progress"), "\(verify)")
        let importing = try dir.strata("import", store, stdin: "{}\n")
        #expect(importing.status == 1 && importing.stderr.contains("unfinished migration v1 → v2"), "\(importing)")
        let plan = try dir.strata("plan", store, "--to", "v2.json")
        #expect(plan.stdout.contains("resumes it"), "\(plan)")

        // Without --rewrite-records: the resumed step finishes the work its journal planned.
        let resumed = try dir.strata("migrate", store, "--to", "v2.json", "--batch-size", "5000")
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderr.contains("Resuming the migration v1 → v2"), "\(resumed)")
        try expectMigrated(dir, store)
    }

    @Test func migrateKilledResumes() throws {
        let dir = try TempDir()
        let store = try bigStore(dir)
        let running = try CLI.start(["migrate", store, "--to", "v2.json", "--batch-size", "1", "--rewrite-records"], in: dir)
        let started = running.waitForStderr(containing: "instances Post")
        usleep(50_000)
        running.signal(SIGKILL)
        let killed = running.wait()
        try #require(started, "\(killed)")
        #expect(killed.status == 128 + SIGKILL, "\(killed)")

        let infoJSON = try #require(try json(try dir.strata("info", store, "--json").stdout) as? [String: Any])
        #expect(infoJSON["modelVersion"] as? String == "v1")
        #expect(infoJSON["migration"] is [String: Any], "\(infoJSON)")
        try expectPosts(dir, store, version: "v1")

        // Without --rewrite-records: the resumed step finishes the work its journal planned.
        let resumed = try dir.strata("migrate", store, "--to", "v2.json", "--batch-size", "5000")
        #expect(resumed.status == 0 && resumed.stderr.contains("Resuming"), "\(resumed)")
        try expectMigrated(dir, store)
    }

    // MARK: backup

    @Test func backupMakesAConsistentCopy() throws {
        let dir = try TempDir()
        let store = try fixtureStore(dir)
        let original = try dir.strata("export", store).stdout
        for (dest, flags) in [("plain.store", [String]()), ("compact.store", ["--compact"])] {
            let r = try CLI.run(["backup", store, dest] + flags, in: dir)
            #expect(r.status == 0 && r.stdout.contains("Backed up"), "\(r)")
            #expect(try dir.strata("export", dest).stdout == original)
            #expect(try dir.strata("verify", dest).status == 0)
        }
        let exists = try dir.strata("backup", store, "plain.store")
        #expect(exists.status == 1 && exists.stderr.contains("already exists"), "\(exists)")
    }
}
