import CArgon2
import Coffer
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Debian's libargon2, loaded the first time a KDBX database's key derivation is Argon2d or
/// Argon2id (libsodium has no Argon2d). Loaded, not linked: every other command would pay for
/// loading one more library at start, and would not start where it is not installed.
struct Argon2Library {
    typealias Hash = @convention(c) (UnsafeMutablePointer<argon2_context>?, argon2_type) -> Int32
    typealias Message = @convention(c) (Int32) -> UnsafePointer<CChar>?

    let hash: Hash
    private let errorMessage: Message

    func message(_ status: Int32) -> String { errorMessage(status).map { String(cString: $0) } ?? "error \(status)" }

    /// The library's two functions, or `crypto.kdf-failed` naming the package to install.
    static func load() throws -> Argon2Library {
        for name in ["libargon2.so.1", "libargon2.so", "libargon2.1.dylib", "libargon2.dylib"] {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { continue }
            // Never closed: the functions stay valid for the process's life.
            guard let hash = dlsym(handle, "argon2_ctx"), let message = dlsym(handle, "argon2_error_message") else { continue }
            return Argon2Library(hash: unsafeBitCast(hash, to: Hash.self), errorMessage: unsafeBitCast(message, to: Message.self))
        }
        throw CofferError.kdfFailed(
            "this database derives its key with Argon2, which needs the libargon2 library (Debian: apt-get install libargon2-1); nothing was imported")
    }
}
