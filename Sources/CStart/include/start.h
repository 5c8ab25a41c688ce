#ifndef SYNCFILES_CSTART_H
#define SYNCFILES_CSTART_H
// Whether SIGINT and SIGTERM were blocked before main ran (an `apply`).
int sf_stop_signals_blocked_at_start(void);
#endif
