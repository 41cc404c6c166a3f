// Process-level C that Swift cannot express or does not import: GNU extensions of posix_spawn,
// pseudo-terminals, and making the process keep secrets out of core dumps and crash output.
// The header names no system type (an <spawn.h> seen with _GNU_SOURCE here would clash with
// Glibc's module), so `actions` is a posix_spawn_file_actions_t * passed as void *.
#ifndef COFFER_CPROCESS_H
#define COFFER_CPROCESS_H

/// POSIX_SPAWN_SETSID: the child starts a new session (no controlling terminal).
short cspawn_setsid_flag(void);
/// The child changes into `path` before exec.
int cspawn_addchdir(void *actions, const char *path);
/// Every descriptor from `low` up is closed in the child (a no-op where unsupported).
int cspawn_addclosefrom(void *actions, int low);

/// Opens a new pseudo-terminal: returns its master descriptor (close-on-exec) and writes the
/// slave's path into `slave_path`; -1 with errno on failure. (posix_openpt and friends are
/// X/Open functions Swift does not import.)
int cspawn_open_pty(char *slave_path, unsigned long size);

/// Makes the process non-dumpable (PR_SET_DUMPABLE 0: no core dump, no ptrace or /proc/PID/mem
/// by other processes of the user) and sets RLIMIT_CORE to 0. Returns 0, or -1 with errno.
int cprocess_keep_out_of_core_dumps(void);

/// Replaces the handlers of the crash signals (SEGV, BUS, ILL, TRAP, FPE, ABRT, SYS), among them
/// the Swift runtime's backtracer, which prints registers and memory: the new handler writes
/// one line without details to stderr, restores the default action and re-raises.
void cprocess_install_quiet_crash_handlers(void);


/// The uid of the process at the other end of a connected Unix socket (SO_PEERCRED on Linux,
/// getpeereid elsewhere). 0 on success, -1 with errno set.
int cprocess_peer_uid(int fd, unsigned int *uid);
/// The pid and uid of the process at the other end of a connected Unix socket: for a client,
/// the process that listens (Linux records it at listen(), so it is known before the server
/// accepts). 0 on success; -1 with errno set (ENOSYS where the system does not say).
int cprocess_peer_pid(int fd, int *pid, unsigned int *uid);
/* Accepts a connection as a non-blocking socket closed on exec (one call on Linux: accept4);
   -1 with errno on failure. */
int cprocess_accept_nonblocking(int listener);
/// Overwrites `size` bytes at `buffer` with zeros in a way the compiler may not drop (explicit_bzero
/// where the C library has it): for buffers that held a secret a child printed (spec/cli.md §4.7).
void cprocess_wipe(void *buffer, unsigned long size);
#endif
