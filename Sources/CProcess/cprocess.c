#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cprocess.h"

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

int cprocess_keep_out_of_core_dumps(void) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
#if defined(__linux__)
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -1;
#endif
    return 0;
}

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT, SIGSYS};

/* Async-signal-safe: write(2), sigaction(2), raise(3) only. */
static void quiet_crash(int signal_number) {
    static const char message[] =
        "coffer: crashed; details (backtrace, registers, memory) are withheld so that no secret reaches crash output\n";
    ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal_number, &fallback, NULL);
    raise(signal_number);
}

void cprocess_install_quiet_crash_handlers(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = quiet_crash;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    for (unsigned i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++) {
        sigaction(crash_signals[i], &action, NULL);
    }
}

#ifdef __linux__
#include <sys/socket.h>
int cprocess_peer_uid(int fd, unsigned int *uid) {
    struct ucred credentials;
    socklen_t size = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) return -1;
    *uid = (unsigned int)credentials.uid;
    return 0;
}
int cprocess_peer_pid(int fd, int *pid, unsigned int *uid) {
    struct ucred credentials;
    socklen_t size = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) return -1;
    *pid = (int)credentials.pid;
    *uid = (unsigned int)credentials.uid;
    return 0;
}
#else
#include <sys/socket.h>
#include <unistd.h>
int cprocess_peer_uid(int fd, unsigned int *uid) {
    uid_t euid; gid_t egid;
    if (getpeereid(fd, &euid, &egid) != 0) return -1;
    *uid = (unsigned int)euid;
    return 0;
}
int cprocess_peer_pid(int fd, int *pid, unsigned int *uid) {
    (void)fd; (void)pid; (void)uid;
    errno = ENOSYS;
    return -1;
}
#endif

int cprocess_accept_nonblocking(int listener) {
#ifdef __linux__
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
    int fd = accept(listener, NULL, NULL);
    if (fd < 0) return -1;
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
#endif
}

void cprocess_wipe(void *buffer, unsigned long size) {
    if (buffer == NULL || size == 0) return;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 25))
    explicit_bzero(buffer, size);
#else
    volatile unsigned char *p = (volatile unsigned char *)buffer;
    while (size--) *p++ = 0;
#endif
}
