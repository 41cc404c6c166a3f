#define _GNU_SOURCE 1
#include <spawn.h>
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
