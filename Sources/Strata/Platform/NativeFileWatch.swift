#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The platform's notification of writes to a file, for ``FileWatching/native``. LMDB writes each commit's
// pages into `data.mdb` with `pwrite` (Strata never uses `MDB_WRITEMAP`), so a write by any process is a
// vnode write the kernel reports. Both implementations give up (the initializer returns nil, and the caller
// polls) when the watch cannot be set up.

#if canImport(Glibc) || canImport(Musl)
/// Linux: an inotify watch for `IN_MODIFY` on the file, and a pipe that ``wake()`` writes to; `poll(2)`
/// sleeps on both.
final class NativeFileWatch: FileChangeWatch, @unchecked Sendable {
    private let notifications: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init?(path: String) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, path, UInt32(IN_MODIFY)) >= 0 else {
            close(fd)
            return nil
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            close(fd)
            return nil
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        notifications = fd
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    deinit {
        close(notifications)
        close(wakeRead)
        close(wakeWrite)
    }

    func wait(timeoutMilliseconds: Int) {
        var fds = [pollfd(fd: notifications, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, nfds_t(fds.count), Int32(clamping: timeoutMilliseconds))
        var buffer = [UInt8](repeating: 0, count: 4096)
        if fds[0].revents != 0 { while read(notifications, &buffer, buffer.count) > 0 {} }
        if fds[1].revents != 0 { while read(wakeRead, &buffer, buffer.count) > 0 {} }
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }
}
#elseif canImport(Darwin)
/// Darwin: a kqueue with an `EVFILT_VNODE` filter (`NOTE_WRITE`, `NOTE_EXTEND`) on the file, opened with
/// `O_EVTONLY` so that the watch never keeps a volume busy or the file's data protection class engaged, and an
/// `EVFILT_USER` event that ``wake()`` triggers; `kevent(2)` sleeps on both with the timeout. `EV_CLEAR`
/// resets each event once reported, so a burst of writes wakes the waiter once.
final class NativeFileWatch: FileChangeWatch, @unchecked Sendable {
    private let queue: Int32
    private let file: Int32
    /// The identifier of the user event that ``wake()`` triggers.
    private static let wakeIdentifier: UInt = 1

    init?(path: String) {
        let file = open(path, O_EVTONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        let queue = kqueue()
        guard queue >= 0 else {
            close(file)
            return nil
        }
        var changes = [
            kevent(ident: UInt(file), filter: Int16(EVFILT_VNODE), flags: UInt16(EV_ADD | EV_CLEAR),
                   fflags: UInt32(NOTE_WRITE | NOTE_EXTEND), data: 0, udata: nil),
            kevent(ident: Self.wakeIdentifier, filter: Int16(EVFILT_USER), flags: UInt16(EV_ADD | EV_CLEAR),
                   fflags: 0, data: 0, udata: nil),
        ]
        guard Darwin.kevent(queue, &changes, Int32(changes.count), nil, 0, nil) == 0 else {
            close(queue)
            close(file)
            return nil
        }
        self.queue = queue
        self.file = file
    }

    deinit {
        close(queue)
        close(file)
    }

    func wait(timeoutMilliseconds: Int) {
        let milliseconds = max(0, timeoutMilliseconds)
        var timeout = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var events = [kevent](repeating: kevent(), count: 4)
        _ = Darwin.kevent(queue, nil, 0, &events, Int32(events.count), &timeout)
    }

    func wake() {
        var trigger = kevent(ident: Self.wakeIdentifier, filter: Int16(EVFILT_USER), flags: 0,
                             fflags: UInt32(NOTE_TRIGGER), data: 0, udata: nil)
        _ = Darwin.kevent(queue, &trigger, 1, nil, 0, nil)
    }
}
#endif
