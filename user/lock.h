/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The lock that serialises the commands changing a limiter, across processes. */
#ifndef RL_LOCK_H
#define RL_LOCK_H

#include <stddef.h>

/* In /run, not in bpffs: flock() needs a regular file, and /run is shared across netns. */
#define RL_LOCK_FILE "/run/xdp-ratelimit.lock"

/*
 * Wait for the exclusive lock that attach, set, detach and cleanup hold while they
 * work. Returns an fd for rl_unlock(), or -errno with a message naming the file.
 */
int rl_lock(char *err, size_t errlen);
void rl_unlock(int fd);

#endif /* RL_LOCK_H */
