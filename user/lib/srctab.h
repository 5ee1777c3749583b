/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A growable table of per-source state for userspace models of the limiter. */
#ifndef RL_SRCTAB_H
#define RL_SRCTAB_H

#include <stddef.h>
#include <linux/types.h>
#include "rl_key.h"

struct rl_src {
	struct rl_key key;
	__u64 state;
	__u64 passed;
	__u64 dropped;
	__u64 order; /* first-seen order, for stable reports */
	__u64 until; /* rules with --block: blocked while now < until; 0: not blocked */
	int used;
	int has_state; /* simulate: state holds the source's state (the admission cap may refuse one) */
};

struct rl_srctab {
	struct rl_src *slots;
	size_t cap; /* power of two */
	size_t count;
};

void rl_srctab_init(struct rl_srctab *t);
void rl_srctab_free(struct rl_srctab *t);
/* The entry for @key; *created tells a new one (zeroed but for key and order). NULL on ENOMEM. */
struct rl_src *rl_srctab_get(struct rl_srctab *t, const struct rl_key *key, int *created);
/* The used entries in first-seen order, in a new array the caller frees; NULL on ENOMEM. */
struct rl_src **rl_srctab_sorted(const struct rl_srctab *t);

#endif /* RL_SRCTAB_H */
