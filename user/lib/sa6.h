/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The IPv6 source table rl_sets6 (include/rl_sa6.h) from userspace: its
 * size, and its ways through the mmaped array, read and written by the XDP
 * program's lock protocol. A way this process locks is locked for as long
 * as it takes to write it: packets of that source meanwhile count lost
 * rounds. Keys are the masked sources, as the table keeps them.
 */
#ifndef RL_USER_SA6_H
#define RL_USER_SA6_H

#include <stddef.h>
#include <linux/types.h>
#include "rl_common.h"
#include "rl_sa6.h"

/* log2 of the number of sets for @max_sources6: RL_SA6_WAYS_PER_SOURCE ways each. */
__u32 rl_sa6_bits_for(__u32 max_sources6);
/* log2 of the sets of the table @fd, or -errno (-EINVAL: not an rl_sets6). */
int rl_sa6_bits_of(int fd);
/* A new rl_sets6 of 2^@bits sets, as the BPF object defines it. Returns its fd. */
int rl_sa6_create(__u32 bits);

/* The table mapped: its sets and the number of them. */
struct rl_sa6_map {
	struct rl_sa6_set *sets;
	__u32 bits;
	size_t len;
	__u64 key; /* the hash's secret: the live configuration's sa_key */
};

/* Map rl_sets6 @fd, whose sources are hashed under @key (rl_config's sa_key). */
int rl_sa6_map(int fd, __u64 key, struct rl_sa6_map *m);
void rl_sa6_unmap(struct rl_sa6_map *m);

/*
 * Way @way of set @idx: 0 with its identity word, key and state, read while
 * it was unlocked and unchanged around them; -ENOENT when it is empty;
 * -EBUSY when it stayed locked (a writer that does not finish).
 */
int rl_sa6_read(const struct rl_sa6_map *m, __u32 idx, int way, __u64 *w, struct rl_key *key,
		__u64 *state);
/* The state of masked source @key under generation @gen: 0, or -ENOENT (or -EBUSY). */
int rl_sa6_find(const struct rl_sa6_map *m, const struct rl_key *key, __u32 gen, __u64 *state);
/*
 * Insert @key under @gen with state @state; with BPF_NOEXIST, -EEXIST if it
 * is there, otherwise its state is replaced. The victim of a full set is a
 * way of neither @gen nor @gen - 1 (left over from an older set), else the
 * one least ahead of @ref (the current policy's rl_sa_ref()).
 */
int rl_sa6_insert(const struct rl_sa6_map *m, const struct rl_key *key, __u32 gen, __u64 state,
		  __u64 flags, __u64 ref);
/* Empty the way of @key under @gen, its version kept: 0, or -ENOENT. */
int rl_sa6_delete(const struct rl_sa6_map *m, const struct rl_key *key, __u32 gen);

#endif /* RL_USER_SA6_H */
