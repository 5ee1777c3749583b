/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The set-associative IPv4 table (include/rl_sa.h) from userspace: its size,
 * the policies it can hold, and its slots through the mmaped array, changed
 * with the same compare-and-swaps as the XDP program's.
 */
#ifndef RL_USER_SA_H
#define RL_USER_SA_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "rl_common.h"
#include "rl_sa.h"

/* log2 of the number of sets for @max_sources: RL_SA_SLOTS_PER_SOURCE slots each. */
__u32 rl_sa_bits_for(__u32 max_sources);
/* log2 of the sets of the table @fd, or -errno. */
int rl_sa_bits_of(int fd);
/*
 * Whether @p fits a table of 2^@bits sets: a stored TAT (at most tau + one
 * packet's cost ahead) within 2^(m-2), a window id of at least
 * RL_SA_WIN_ID_BITS_MIN bits. -EINVAL with the reason in @err.
 */
int rl_sa_check(const struct rl_params *p, __u32 bits, char *err, size_t errlen);

/*
 * Which IPv4 table @cfg's policy uses (cfg->table4): rl_sets4 when
 * rl_sa_check() accepts its parameters for 2^@bits sets, rl_state4 otherwise.
 */
void rl_table4_choose(struct rl_config *cfg, __u32 bits);
struct rl_pins;
/* log2 of the sets of the live limiter's rl_sets4, the one in place or the one it would have. */
int rl_sa_bits_live(const struct rl_pins *pins, __u32 *bits);
/*
 * A new IPv4 table of kind @t, as the BPF object defines it: rl_state4 of
 * @max_sources entries or rl_sets4 of 2^@bits sets, or with @stand_in the
 * one-entry stand-in of the table a policy does not use. Returns its fd.
 */
int rl_table4_create(enum rl_table4 t, __u32 max_sources, __u32 bits, bool stand_in);

/*
 * The table mapped: its sets and the number of them, and the secret its
 * hash is keyed with (struct rl_config's sa_key): every function below
 * finds a source's set, and a slot's source, with it.
 */
struct rl_sa_map {
	struct rl_sa_set *sets;
	__u32 bits;
	size_t len;
	__u64 key;
};

/* Map the table @fd, whose hash is keyed with @key (the live configuration's sa_key). */
int rl_sa_map(int fd, __u64 key, struct rl_sa_map *m);
/*
 * A new secret for the IPv4 table's hash (getrandom): attach draws one for
 * the new table, set keeps it. 0 with *key, or -errno.
 */
int rl_sa_key_new(__u64 *key);
void rl_sa_unmap(struct rl_sa_map *m);

/* The masked address (network order) and generation mod 4 of used slot @w of set @idx. */
__be32 rl_sa_addr(const struct rl_sa_map *m, __u32 idx, __u64 w);
/*
 * The slot of @addr (network order) under generation @gen: its index in the
 * set in *way and its word in *w, or -ENOENT. A pending slot is not there yet.
 */
int rl_sa_find(const struct rl_sa_map *m, __be32 addr, __u32 gen, __u32 *idx, int *way, __u64 *w);
/*
 * Insert @addr under @gen with state @state, by the XDP program's protocol;
 * with BPF_NOEXIST, -EEXIST if it is there; otherwise its state is replaced.
 * The victim of a full set is a slot of neither @gen nor @gen - 1 (left
 * over from an older set), else the one least ahead of @ref (the current
 * policy's rl_sa_ref()).
 */
int rl_sa_insert(const struct rl_sa_map *m, __be32 addr, __u32 gen, __u64 state, __u64 flags,
		 __u64 ref);
/* Empty the slot of @addr under @gen: 0, or -ENOENT. */
int rl_sa_delete(const struct rl_sa_map *m, __be32 addr, __u32 gen);
/*
 * Rewrite every state of generation @cfg->gen that the clock @now has left
 * behind to the equivalent one at @now (see docs/design.md, "The IPv4
 * table"), so that no idle source is ever read back as ahead. *swept
 * counts the rewritten slots.
 */
int rl_sa_sweep(const struct rl_sa_map *m, const struct rl_config *cfg, __u64 now, __u64 *swept);

/*
 * The wide layout (rl_wide4, include/rl_sa.h), by the XDP program's lock
 * protocol. A way this process locks is locked for as long as it takes to
 * write one state: packets of that source meanwhile count lost rounds.
 */
/*
 * The state of way @way of set @idx, whose identity word was read as @w: 0
 * with *state if the word still reads @w after it, -EAGAIN otherwise.
 */
int rl_sa_wide_read(const struct rl_sa_map *m, __u32 idx, int way, __u64 w, __u64 *state);
/* rl_sa_find() in rl_wide4: *state is the source's whole state. */
int rl_sa_wide_find(const struct rl_sa_map *m, __be32 addr, __u32 gen, __u32 *idx, int *way,
		    __u64 *state);
/* rl_sa_insert() in rl_wide4: a full set's victim as there, among its four ways. */
int rl_sa_wide_insert(const struct rl_sa_map *m, __be32 addr, __u32 gen, __u64 state, __u64 flags,
		      __u64 ref);
/* Empty the way of @addr under @gen, its version kept: 0, or -ENOENT. */
int rl_sa_wide_delete(const struct rl_sa_map *m, __be32 addr, __u32 gen);

#endif /* RL_USER_SA_H */
