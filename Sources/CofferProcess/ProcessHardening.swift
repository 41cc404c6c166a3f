import CProcess

/// Keeps secrets out of what a crash leaves behind (spec/cli.md §10): no core dump, no other
/// process of the user reading this one's memory through ptrace or /proc, and no backtrace with
/// register and memory contents on stderr.
public enum ProcessHardening {
    /// Call first thing in `main`, before any secret is read. Returns false when the kernel
    /// refused (the process then runs, but a core dump may be possible).
    @discardableResult
    public static func apply() -> Bool {
        cprocess_install_quiet_crash_handlers()
        return cprocess_keep_out_of_core_dumps() == 0
    }
}
