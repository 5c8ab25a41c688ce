#ifndef SYNCFILES_CLINUX_SHIM_H
#define SYNCFILES_CLINUX_SHIM_H
// Linux calls that glibc declares only under _GNU_SOURCE.
#include <fcntl.h>
#include <unistd.h>
#ifdef __linux__
extern int syncfs(int fd);
extern int pipe2(int fds[2], int flags);
static inline int sf_syncfs(int fd) { return syncfs(fd); }
// A pipe whose ends are close-on-exec from the start (no window for a fork).
static inline int sf_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
#else
#include <unistd.h>
static inline int sf_syncfs(int fd) { (void)fd; sync(); return 0; }
static inline int sf_pipe_cloexec(int fds[2]) {
  if (pipe(fds) != 0) return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return 0;
}
#endif
#endif
