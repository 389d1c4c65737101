import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, its output read through pipes.
///
/// The tests used Foundation's `Process`, which on Linux lists `/proc/self/fd` to close every inherited
/// descriptor and copies each directory entry's whole 256-byte name field, reading past the entry: with
/// the ~1,400 descriptors a parallel test run holds, the copy once ran off the end of mapped memory and
/// the whole test bundle died (CI, stop 31). Here every descriptor the tests make is close-on-exec, and
/// glibc's `closefrom` action closes the rest in the child.
final class Spawned: @unchecked Sendable {
    let pid: pid_t
    /// The child's standard output and error, to read to their end.
    let stdout: FileHandle
    let stderr: FileHandle
    /// The writing end of the child's standard input when asked for (`input: true`); `/dev/null` otherwise.
    let stdin: FileHandle?

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(_ executable: String, _ arguments: [String], environment: [String: String], input: Bool = false) throws {
        func pipePair() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw Failure(description: "pipe: errno \(errno)") }
            // (pipe2 is not imported; closefrom in the child covers the moment in between.)
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return (fds[0], fds[1])
        }
        let out = try pipePair(), err = try pipePair()
        let inputPipe = input ? try pipePair() : nil
        let inputFD = inputPipe?.read ?? open("/dev/null", O_RDONLY | O_CLOEXEC)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputFD, 0)
        posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        posix_spawn_file_actions_adddup2(&actions, err.write, 2)
        Self.closeFrom3(&actions)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        // The child holds its own copies now.
        close(out.write)
        close(err.write)
        close(inputFD)
        guard spawned == 0 else {
            close(out.read)
            close(err.read)
            if let inputPipe { close(inputPipe.write) }
            throw Failure(description: "posix_spawn \(executable): errno \(spawned)")
        }
        self.pid = pid
        self.stdout = FileHandle(fileDescriptor: out.read, closeOnDealloc: true)
        self.stderr = FileHandle(fileDescriptor: err.read, closeOnDealloc: true)
        self.stdin = inputPipe.map { FileHandle(fileDescriptor: $0.write, closeOnDealloc: true) }
    }

    /// Blocks until the child ends: its exit status, or 128 + the signal that ended it.
    func waitForExit() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34+), which Swift's Glibc module does not import.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
        if let addCloseFrom { _ = addCloseFrom(&actions, 3) }
    }
}
