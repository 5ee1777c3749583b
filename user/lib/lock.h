/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The lock that serialises the commands changing a limiter, across processes. */
#ifndef RL_LOCK_H
#define RL_LOCK_H

#include <stddef.h>
#include <sys/types.h>

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
/* Release it, removing the file (see rl_lock_file_release()). */
void rl_unlock(int fd);

/*
 * A lock file that is removed when its holder is done with it, so that none
 * stays behind after a clean exit (a killed holder's file stays, unlocked,
 * and the next holder takes it). Removing a lock file races with a process
 * that opened it and waits in flock(): that one would then hold a file no
 * longer at @path while a third one creates and locks a new one. So every
 * taker checks, once it holds the lock, that @path still names the file it
 * locked, and starts again if not; and a holder removes @path only while it
 * holds the lock and only if @path still names its own file.
 *
 * Open (creating it with @mode) and flock(@op) @path: the fd, or -errno
 * (-EWOULDBLOCK: LOCK_NB and held by another).
 */
int rl_lock_file(const char *path, mode_t mode, int op);
/* Remove @path if it still names the file of @fd, then close @fd (the lock goes). */
void rl_lock_file_release(int fd, const char *path);

#endif /* RL_LOCK_H */
