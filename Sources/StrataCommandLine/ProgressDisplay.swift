import Foundation
import Strata
import Synchronization

/// Progress on standard error: a bar redrawn in place on a terminal, plain lines at most every
/// `interval` seconds otherwise (and whenever the task changes).
final class ProgressDisplay: Sendable {
    struct Snapshot: Sendable {
        /// What is being done ("step 1/1 v1 → v2: instances Post").
        var label: String
        var completed: Int
        var total: Int
    }

    private struct State {
        var label = ""
        var labelStart = 0.0
        var completedAtLabelStart = 0
        var lastDraw = 0.0
        var lastCompleted = 0
        var drewBar = false
    }

    private let terminal: Bool
    private let interval: Double
    private let state = Mutex(State())

    init(terminal: Bool = Console.stderrIsTerminal, interval: Double = 1.0) {
        self.terminal = terminal
        self.interval = terminal ? 0.1 : interval
    }

    func update(_ s: Snapshot) {
        let t = now()
        let line: String? = state.withLock { st in
            var changed = false
            if s.label != st.label || s.completed < st.completedAtLabelStart {
                if terminal && st.drewBar { Console.errorRaw("\n") }
                st.label = s.label
                st.labelStart = t
                st.completedAtLabelStart = s.completed
                st.drewBar = false
                changed = true
            }
            let finished = s.total > 0 && s.completed >= s.total
            guard changed || finished || t - st.lastDraw >= interval else { return nil }
            if !changed && s.completed == st.lastCompleted && !finished { return nil }
            st.lastDraw = t
            st.lastCompleted = s.completed
            let elapsed = t - st.labelStart
            let done = s.completed - st.completedAtLabelStart
            let rate = elapsed > 0 && done > 0 ? Double(done) / elapsed : nil
            let remaining = s.total > s.completed ? rate.map { Double(s.total - s.completed) / $0 } : (s.total > 0 ? 0 : nil)
            if terminal {
                st.drewBar = true
                return "\r\u{1B}[K" + bar(s, rate: rate, remaining: remaining)
            }
            return plain(s, rate: rate, remaining: remaining) + "\n"
        }
        if let line { Console.errorRaw(line) }
    }

    /// Ends a bar line on a terminal.
    func finish() {
        let needsNewline = state.withLock { st -> Bool in
            defer { st.drewBar = false; st.label = "" }
            return terminal && st.drewBar
        }
        if needsNewline { Console.errorRaw("\n") }
    }

    private func bar(_ s: Snapshot, rate: Double?, remaining: Double?) -> String {
        var parts = [s.label]
        if s.total > 0 {
            let fraction = min(1, Double(s.completed) / Double(s.total))
            let width = 24
            let filled = Int(fraction * Double(width))
            parts.append("[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]")
            parts.append(String(format: "%3.0f%%", fraction * 100))
            parts.append("\(Format.count(s.completed))/\(Format.count(s.total))")
        } else {
            parts.append(Format.count(s.completed))
        }
        if let rate { parts.append("\(Format.count(Int(rate))) rec/s") }
        if let remaining { parts.append("\(Format.duration(remaining)) left") }
        return parts.joined(separator: "  ")
    }

    private func plain(_ s: Snapshot, rate: Double?, remaining: Double?) -> String {
        var text = s.label
        if s.total > 0 {
            let percent = Int(min(1, Double(s.completed) / Double(s.total)) * 100)
            text += " \(s.completed)/\(s.total) (\(percent)%)"
        } else {
            text += " \(s.completed)"
        }
        if let rate { text += ", \(Int(rate)) records/s" }
        if let remaining, s.total > s.completed { text += ", about \(Format.duration(remaining)) left" }
        return text
    }
}
