// GNU extensions of posix_spawn that Swift does not import from <spawn.h>. The header names no
// system type (an <spawn.h> seen with _GNU_SOURCE here would clash with Glibc's module), so
// `actions` is a posix_spawn_file_actions_t * passed as void *.
#ifndef COFFER_CSPAWN_H
#define COFFER_CSPAWN_H

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

#endif
