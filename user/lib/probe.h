/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Kernel feature probes: what attach needs before it changes anything. */
#ifndef RL_PROBE_H
#define RL_PROBE_H

#include <stddef.h>

#include <stdbool.h>

/*
 * Does the kernel load XDP programs that take multi-buffer frames
 * (BPF_F_XDP_HAS_FRAGS, 5.18)? Asked once, remembered.
 */
bool rl_probe_xdp_frags(void);

/* XDP, LRU hash maps, BPF compare-and-swap (and a warning without BTF). 0 or -errno. */
int rl_check_kernel(char *err, size_t errlen);

#endif /* RL_PROBE_H */
