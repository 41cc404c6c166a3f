#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cspawn.h"

short cspawn_setsid_flag(void) { return POSIX_SPAWN_SETSID; }

int cspawn_addchdir(void *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np((posix_spawn_file_actions_t *)actions, path);
}

int cspawn_addclosefrom(void *actions, int low) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, low);
#else
    (void)actions; (void)low;
    return 0;
#endif
}

int cspawn_open_pty(char *slave_path, unsigned long size) {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0) return -1;
    (void)fcntl(master, F_SETFD, FD_CLOEXEC);
    char name[256];
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0
        || strlen(name) + 1 > size) {
        int saved = errno;
        close(master);
        errno = saved ? saved : ENAMETOOLONG;
        return -1;
    }
    memcpy(slave_path, name, strlen(name) + 1);
    return master;
}
