// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * After set: move every source's state from the previous generation to the
 * new one now, instead of on its next packet, so that the table does not hold
 * two entries per source and new sources stop paying for the lookup of the
 * previous generation.
 *
 * Races with the packet path are resolved by the map itself: the new entry is
 * inserted with BPF_NOEXIST, so if a packet carried the source over first,
 * its entry wins and ours is dropped. Packets that read the old configuration
 * just before the flip could still update an old entry: we wait for them
 * (XDP runs inside an RCU read-side section of microseconds) before reading.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "maps.h"
#include "source.h"

/* Far longer than any XDP program run that read the configuration before the flip. */
#define GRACE_US 20000

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static bool prefixes_grew(const struct rl_config *cfg)
{
	/* Old keys cannot be split into longer prefixes: leave those to the packet path. */
	for (int i = 0; i < 4; i++)
		if (cfg->mask6[i] & ~cfg->prev_mask6[i])
			return true;
	return (cfg->mask4 & ~cfg->prev_mask4) != 0;
}

struct migrate_ctx {
	const struct rl_pins *pins;
	const struct rl_config *cfg;
	__u64 moved;
};

/*
 * Every entry not of the new generation goes: gen - 1 is carried over first
 * (unless there is nothing to carry), anything older is a straggler of an
 * interrupted set, never looked up again.
 */
static int migrate_one(const struct rl_state_key *k, __u64 state, __u64 read_ns, void *ctx)
{
	struct migrate_ctx *m = ctx;
	const struct rl_config *cfg = m->cfg;
	struct rl_state_key nk;
	__u64 ns;

	(void)read_ns; /* carried at the time of the move, as the packet path would */
	if (k->gen == cfg->gen)
		return 0;
	if (cfg->has_prev && k->gen == cfg->gen - 1) {
		nk.src = k->src;
		nk.gen = cfg->gen;
		rl_key_mask(&nk.src, cfg->prefix4, cfg->prefix6);
		ns = rl_carry_state(cfg, state, mono_ns());
		if (!rl_state_update(m->pins, &nk, ns, BPF_NOEXIST))
			m->moved++;
	}
	rl_state_delete(m->pins, k);
	return 0;
}

int rl_migrate(const struct rl_pins *pins, const struct rl_config *cfg, __u64 *moved)
{
	struct migrate_ctx m = { .pins = pins, .cfg = cfg };
	int ret;

	*moved = 0;
	if (cfg->has_prev && prefixes_grew(cfg))
		return -EAGAIN;
	usleep(GRACE_US);
	ret = rl_state_walk(pins, migrate_one, &m);
	*moved = m.moved;
	return ret;
}
