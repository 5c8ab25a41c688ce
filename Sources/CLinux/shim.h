#ifndef SYNCFILES_CLINUX_SHIM_H
#define SYNCFILES_CLINUX_SHIM_H
// Linux calls that glibc declares only under _GNU_SOURCE.
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <unistd.h>
#ifdef __linux__
static inline int sf_syncfs(int fd) { return syncfs(fd); }
#include <sys/vfs.h>
// The statfs magic number of the file system holding fd, or -1.
static inline long long sf_fs_type(int fd) {
  struct statfs s;
  return fstatfs(fd, &s) == 0 ? (long long)(unsigned int)s.f_type : -1;
}
#include <malloc.h>
// Gives free heap pages back to the system (glibc: every arena, not only the top).
static inline void sf_release_free_memory(void) { malloc_trim(0); }
// Starts writeback of a range without waiting for it (a hint; errors are
// reported by the fsync that follows).
static inline int sf_start_writeback(int fd, long long offset, long long length) {
  return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}
// A pipe whose ends are close-on-exec from the start (no window for a fork).
static inline int sf_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
// Reserves the blocks of 0..<length (the file grows to it); fails with
// EOPNOTSUPP where the file system cannot (the caller then extends it sparse).
static inline int sf_preallocate(int fd, long long length) { return fallocate(fd, 0, 0, length); }
// Reserves the blocks of offset..<offset+length past the end without growing
// the file (FALLOC_FL_KEEP_SIZE): appends there need no new blocks.
static inline int sf_reserve(int fd, long long offset, long long length) {
  return fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, length);
}
#include <sys/ioctl.h>
#include <linux/fs.h>
// Shares the source's extents with the destination (btrfs, XFS, bcachefs).
// Fails with EOPNOTSUPP/EXDEV/EINVAL elsewhere.
static inline int sf_clone_file(int dest_fd, int src_fd) { return ioctl(dest_fd, FICLONE, src_fd); }
// Copies in the kernel from the current offset of each file (no user-space buffer).
static inline long long sf_copy_file_range(int in_fd, int out_fd, unsigned long length) {
  return copy_file_range(in_fd, 0, out_fd, 0, length, 0);
}
#include <sched.h>
// The calling thread's scheduling policy (SCHED_RESET_ON_FORK included), or -1.
static inline int sf_thread_policy(void) { return sched_getscheduler(0); }
// Sets the calling thread's policy, one of those without a priority
// (SCHED_OTHER 0, SCHED_BATCH 3), keeping SCHED_RESET_ON_FORK if given.
static inline int sf_set_thread_policy(int policy) {
  struct sched_param p = {0};
  return sched_setscheduler(0, policy, &p);
}
#else
#include <unistd.h>
#include <errno.h>
static inline int sf_thread_policy(void) { return -1; }
static inline int sf_set_thread_policy(int policy) { (void)policy; errno = ENOSYS; return -1; }
static inline int sf_syncfs(int fd) { (void)fd; sync(); return 0; }
static inline long long sf_fs_type(int fd) { (void)fd; return -1; }
static inline int sf_preallocate(int fd, long long length) { (void)fd; (void)length; errno = EOPNOTSUPP; return -1; }
static inline int sf_reserve(int fd, long long offset, long long length) {
  (void)fd; (void)offset; (void)length; errno = EOPNOTSUPP; return -1;
}
static inline int sf_start_writeback(int fd, long long offset, long long length) {
  (void)fd; (void)offset; (void)length; return 0;
}
static inline int sf_clone_file(int dest_fd, int src_fd) { (void)dest_fd; (void)src_fd; return -1; }
static inline long long sf_copy_file_range(int in_fd, int out_fd, unsigned long length) {
  (void)in_fd; (void)out_fd; (void)length; return -1;
}
static inline int sf_pipe_cloexec(int fds[2]) {
  if (pipe(fds) != 0) return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return 0;
}
#endif
#endif
