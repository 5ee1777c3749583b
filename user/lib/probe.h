/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Kernel feature probes: what attach needs before it changes anything. */
#ifndef RL_PROBE_H
#define RL_PROBE_H

#include <stddef.h>

/* XDP, LRU hash maps, BPF compare-and-swap (and a warning without BTF). 0 or -errno. */
int rl_check_kernel(char *err, size_t errlen);

#endif /* RL_PROBE_H */
