import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file (or standard input) line by line, with `getline`: memory holds one line at a time.
final class LineReader {
    private let file: UnsafeMutablePointer<FILE>
    private let ownsFile: Bool
    private var buffer: UnsafeMutablePointer<CChar>? = nil
    private var capacity = 0
    /// The stream's buffer (glibc ignores a size given without one).
    private let streamBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: 1 << 20)
    /// The number of the last line returned, from 1.
    private(set) var lineNumber = 0
    /// Bytes read so far.
    private(set) var bytesRead = 0

    /// Opens `path`, or standard input when `path` is nil or "-".
    init(path: String?) throws {
        if let path, path != "-" {
            guard let f = fopen(path, "r") else {
                throw CLIFailure("cannot read \(path) (\(String(cString: strerror(errno)))); check the path")
            }
            file = f
            ownsFile = true
        } else {
            guard let f = fdopen(0, "r") else { throw CLIFailure("cannot read standard input") }
            file = f
            ownsFile = true
        }
        // Large reads: a line costs a scan of the buffer, not a system call.
        setvbuf(file, streamBuffer, _IOFBF, 1 << 20)
    }

    deinit {
        free(buffer)
        if ownsFile { fclose(file) }
        streamBuffer.deallocate()
    }

    /// The next line without its line break, or nil at the end.
    func next() throws -> Data? {
        guard let bytes = try nextBytes() else { return nil }
        return bytes.baseAddress.map { Data(bytes: $0, count: bytes.count) } ?? Data()
    }

    /// The next line without its line break, in the reader's own buffer (no copy): valid until the next
    /// call. Nil at the end.
    func nextBytes() throws -> UnsafeRawBufferPointer? {
        errno = 0
        let n = getline(&buffer, &capacity, file)
        if n < 0 {
            if ferror(file) != 0 { throw CLIFailure("reading the input failed after line \(lineNumber) (\(String(cString: strerror(errno))))") }
            return nil
        }
        lineNumber += 1
        bytesRead += n
        guard let buffer else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        var length = n
        while length > 0, buffer[length - 1] == 0x0A || buffer[length - 1] == 0x0D { length -= 1 }
        return UnsafeRawBufferPointer(start: buffer, count: length)
    }
}

/// A temporary file of text lines, written once and read back once, removed when done.
final class SpillFile {
    let path: String
    private var writer: UnsafeMutablePointer<FILE>?

    init() throws {
        let dir = FileManager.default.temporaryDirectory.path
        var template = Array("\(dir)/strata-import-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { p in p.baseAddress.map { mkstemp($0) } ?? -1 }
        guard fd >= 0 else { throw CLIFailure("cannot create a temporary file in \(dir); set TMPDIR to a writable directory") }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        writer = fdopen(fd, "w")
    }

    deinit {
        if let writer { fclose(writer) }
        unlink(path)
    }

    func write(_ line: String) throws {
        guard let writer, fputs(line, writer) >= 0, fputc(0x0A, writer) >= 0 else {
            throw CLIFailure("writing the temporary file \(path) failed (\(String(cString: strerror(errno)))); free disk space or set TMPDIR")
        }
    }

    /// Finishes writing and returns a reader of the lines.
    func reader() throws -> LineReader {
        if let writer {
            guard fflush(writer) == 0 else {
                throw CLIFailure("writing the temporary file \(path) failed (\(String(cString: strerror(errno)))); free disk space or set TMPDIR")
            }
            fclose(writer)
            self.writer = nil
        }
        return try LineReader(path: path)
    }
}
