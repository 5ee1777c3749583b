/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The lock that serialises the commands changing a limiter, across processes. */
#ifndef RL_LOCK_H
#define RL_LOCK_H

#include <stddef.h>

/* In /run, not in bpffs: flock() needs a regular file, and /run is shared across netns. */
#define RL_LOCK_FILE "/run/xdp-ratelimit.lock"

/*
 * How long a command waits for the lock before it gives up, naming the
 * holder: longer than any command holds it while working (an attach of a
 * million-prefix rule set takes seconds), short enough that a holder that
 * was stopped (SIGSTOP, a debugger) is reported rather than waited on
 * forever. The environment variable sets another wait, 0-3600 s.
 */
#define RL_LOCK_WAIT_S	 30
#define RL_LOCK_WAIT_ENV "XDP_RATELIMIT_LOCK_WAIT"

/*
 * Wait for the exclusive lock that attach, set, detach and cleanup hold while
 * they work, at most RL_LOCK_WAIT_S (a warning after a second names the
 * holder: its pid and command line, which the holder writes into the file).
 * Returns an fd for rl_unlock(), or -errno (-EBUSY: timed out) with a message
 * naming the file and the holder.
 */
int rl_lock(char *err, size_t errlen);
void rl_unlock(int fd);

#endif /* RL_LOCK_H */
