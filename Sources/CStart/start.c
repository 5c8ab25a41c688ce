// An `apply` ends in exit 75 on SIGINT or SIGTERM whenever the signal comes
// (SPEC §3). Blocked here, in a constructor that runs before the Swift
// runtime starts, a signal sent while the process is still starting waits
// for the watcher thread instead of killing the process with no report.
// glibc hands ELF constructors argc and argv.
#include "start.h"
#include <signal.h>
#include <string.h>

static int blocked = 0;

__attribute__((constructor(101))) static void sf_block_stop_signals(int argc, char **argv, char **envp) {
  (void)envp;
  if (argc < 2 || argv == 0 || strcmp(argv[1], "apply") != 0) return;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--dry-run") == 0) return;  // a plan: SIGTERM ends it as usual
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (pthread_sigmask(SIG_BLOCK, &set, 0) == 0) blocked = 1;
}

int sf_stop_signals_blocked_at_start(void) { return blocked; }
