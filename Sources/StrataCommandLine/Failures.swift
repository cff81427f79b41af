import Foundation
import Strata

/// A failure the tool reports on standard error as one line, with its exit status.
struct CLIFailure: Error {
    /// What happened and what to do, on one line.
    var message: String
    /// 1: the command failed or found problems; 2: bad usage.
    var status: Int32 = 1

    init(_ message: String, status: Int32 = 1) {
        self.message = message
        self.status = status
    }

    /// Exit silently with `status` (the command has already said everything).
    static func quiet(_ status: Int32) -> CLIFailure { CLIFailure("", status: status) }
}

/// The tool's one-line messages for errors: the library's own descriptions (one source for every message),
/// with the tool's command for the next step where the library says "open it again with the plan".
enum ErrorText {
    static func describe(_ error: any Error, store: String? = nil, modelFile: String? = nil) -> String {
        switch error {
        case let failure as CLIFailure:
            return failure.message
        case let error as MigrationError:
            var text = oneLine(error.description)
            switch error.storeState {
            case .migrating?, .switched?:
                if let store, let modelFile { text += " With this tool: `strata migrate \(store) --to \(modelFile)`." }
            default:
                break
            }
            return text
        case let error as SchemaValidationError:
            let what = modelFile.map { "\($0) is not a valid Strata schema" } ?? "the schema is not valid"
            return "\(what): " + error.problems.map { "\($0)" }.joined(separator: "; ") + "; fix the file (see `strata schema STORE` for the form)"
        default:
            return oneLine(String(describing: error))
        }
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }
}
