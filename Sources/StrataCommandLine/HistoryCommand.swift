import ArgumentParser
import Foundation
import Strata

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print a store's change history: the transactions after a token.",
        discussion: """
            Prints the transactions committed after TOKEN (from the first one the store keeps without --after): \
            each one's token, time, author, model version and, per entity, the objects inserted, updated (with \
            the properties that changed) and deleted (with their tombstones). A migration is a transaction too. \
            With --json, one JSON object per line per transaction, then a last line {"next": TOKEN, "atEnd": …}: \
            pass that token to --after to continue. The store is opened read-only; nothing is written.

            The store must keep a history (StoreConfiguration.history = .enabled in the app). A token of another \
            store, a damaged token, or one older than what the store keeps is refused with the reason.

            Example:
              strata history ./Notes.store --json
              strata history ./Notes.store --after strata-history-1.AQ… --limit 100 --json
              strata history ./Notes.store --info
            """)

    @Argument(help: "The store directory.") var store: String
    @OptionGroup var key: KeyFileOption
    @Option(help: "Print the transactions after this token (a transaction's token, or the last line's next).") var after: String?
    @Option(help: "The most transactions to print.") var limit: Int = 1_000
    @Flag(help: "Print JSON lines: one object per transaction, then {\"next\", \"atEnd\"}.") var json = false
    @Flag(help: "Print the history's extent and size instead (with --json, as one object).") var info = false

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
        if info && after != nil { throw ValidationError("--info takes no --after") }
    }

    func run() throws {
        let handle = try StoreAccess.openRecorded(store, readOnly: true, key: key)
        defer { handle.close() }
        do {
            if info {
                try printInfo(try handle.historyInfo())
                return
            }
            let token = try after.map { try HistoryToken(parsing: $0) }
            let page = try handle.fetchHistory(after: token, limit: limit)
            if json {
                for transaction in page.transactions { Console.out(try Self.jsonLine(HistoryLine(transaction))) }
                Console.out(try Self.jsonLine(PageEnd(next: page.next.description, atEnd: page.isAtEnd)))
            } else {
                for transaction in page.transactions { Console.out(Self.text(transaction)) }
                Console.out(page.isAtEnd ? "next: \(page.next)" : "next: \(page.next) (more after it: --after it)")
            }
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: store))
        }
    }

    private func printInfo(_ info: HistoryInfo) throws {
        if json {
            Console.out(try Self.jsonLine(InfoLine(info)))
            return
        }
        Console.out("Store ID     \(info.storeIdentifier.uuidString)")
        Console.out("Transactions \(Format.count(info.transactions)), \(Format.plural(info.changes, "change"))")
        Console.out("Size         \(ByteCount(info.bytes)) (\(String(format: "%.1f", info.bytesPerChange)) bytes per change)")
        Console.out("Oldest       \(info.oldest)")
        Console.out("Newest       \(info.newest)")
        let c = info.configuration
        let limits = [c.maximumTransactions.map { "\(Format.count($0)) transactions" },
                      c.maximumAge.map { "\(Format.duration(Double($0.components.seconds))) old" },
                      c.maximumBytes.map { "\(ByteCount($0))" }].compactMap { $0 }
        Console.out("Retention    \(limits.isEmpty ? "unlimited" : limits.joined(separator: ", "))")
    }

    static func jsonLine<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func text(_ t: HistoryTransaction) -> String {
        var parts = ["\(t.token)", Format.date(t.date), t.author ?? "-", t.modelVersion]
        if let m = t.migration {
            parts.append("migration \(m.sourceVersion) → \(m.destinationVersion): "
                         + m.steps.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.rawValue)" }.joined(separator: ", "))
        }
        for c in t.changes {
            var counts: [String] = []
            if !c.inserted.isEmpty { counts.append("+\(c.inserted.count)") }
            if !c.updated.isEmpty { counts.append("~\(c.updated.count)") }
            if !c.deleted.isEmpty { counts.append("-\(c.deleted.count)") }
            if !c.isComplete { counts.append("(read again)") }
            parts.append("\(c.entity) \(counts.joined(separator: " "))")
        }
        return parts.joined(separator: "  ")
    }
}

/// One transaction as a JSON line.
private struct HistoryLine: Encodable {
    struct Update: Encodable { var id: UInt64; var properties: [String] }
    struct Deletion: Encodable { var id: UInt64; var tombstone: [String: JSONValue]? }
    struct Changes: Encodable {
        var inserted: [UInt64]
        var updated: [Update]
        var deleted: [Deletion]
        var complete: Bool
    }
    struct Migration: Encodable { var from: String; var to: String; var steps: [String: String] }

    var token: String
    var date: Date
    var author: String?
    var model: String
    var migration: Migration?
    var changes: [String: Changes]

    init(_ t: HistoryTransaction) {
        token = t.token.description
        date = t.date
        author = t.author
        model = t.modelVersion
        migration = t.migration.map { Migration(from: $0.sourceVersion, to: $0.destinationVersion, steps: $0.steps.mapValues(\.rawValue)) }
        var changes: [String: Changes] = [:]
        for c in t.changes {
            changes[c.entity] = Changes(
                inserted: c.inserted.map(\.rawValue),
                updated: c.updated.map { Update(id: $0.id.rawValue, properties: $0.properties) },
                deleted: c.deleted.map { Deletion(id: $0.id.rawValue, tombstone: $0.tombstone.isEmpty ? nil : $0.tombstone.mapValues(ValueJSON.json(for:))) },
                complete: c.isComplete)
        }
        self.changes = changes
    }

    func encode(to encoder: any Encoder) throws {
        enum Keys: String, CodingKey { case token, date, author, model, migration, changes }
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(token, forKey: .token)
        try c.encode(date, forKey: .date)
        try c.encode(author, forKey: .author)
        try c.encode(model, forKey: .model)
        try c.encodeIfPresent(migration, forKey: .migration)
        try c.encode(changes, forKey: .changes)
    }
}

private struct PageEnd: Encodable {
    var next: String
    var atEnd: Bool
}

private struct InfoLine: Encodable {
    var storeIdentifier: String
    var transactions: Int
    var changes: Int
    var bytes: Int
    var bytesPerChange: Double
    var oldest: String
    var newest: String
    var maximumTransactions: Int?
    var maximumAgeSeconds: Int64?
    var maximumBytes: Int?

    init(_ info: HistoryInfo) {
        storeIdentifier = info.storeIdentifier.uuidString
        transactions = info.transactions
        changes = info.changes
        bytes = info.bytes
        bytesPerChange = info.bytesPerChange
        oldest = info.oldest.description
        newest = info.newest.description
        maximumTransactions = info.configuration.maximumTransactions
        maximumAgeSeconds = info.configuration.maximumAge.map { $0.components.seconds }
        maximumBytes = info.configuration.maximumBytes
    }
}
