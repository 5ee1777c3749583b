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

#define BATCH 1024
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

int rl_migrate(const struct rl_pins *pins, const struct rl_config *cfg, __u32 live, __u64 *moved)
{
	struct rl_state_key keys[BATCH], nk;
	__u64 vals[BATCH], ns;
	struct rl_config done;
	void *in = NULL, *out;
	__u32 cnt;
	int r;

	*moved = 0;
	if (cfg->gen < 2 || (cfg->has_prev && prefixes_grew(cfg)))
		return 0;
	usleep(GRACE_US);
	for (;;) {
		cnt = BATCH;
		r = bpf_map_lookup_batch(pins->state, in, &out, keys, vals, &cnt, NULL);
		if (r && errno != ENOENT)
			return -errno;
		for (__u32 i = 0; i < cnt; i++) {
			if (keys[i].gen != cfg->gen - 1)
				continue;
			/* Nothing to carry (see rl_config_build()): just free the entry. */
			if (!cfg->has_prev) {
				bpf_map_delete_elem(pins->state, &keys[i]);
				continue;
			}
			nk.src = keys[i].src;
			nk.gen = cfg->gen;
			rl_key_mask(&nk.src, cfg->prefix4, cfg->prefix6);
			ns = rl_carry_state(cfg, vals[i], mono_ns());
			if (!bpf_map_update_elem(pins->state, &nk, &ns, BPF_NOEXIST))
				(*moved)++;
			bpf_map_delete_elem(pins->state, &keys[i]);
		}
		if (r)
			break;
		in = &out;
	}
	/* Everything is under the new generation: stop looking up the old one. */
	if (!cfg->has_prev)
		return 0;
	done = *cfg;
	done.has_prev = 0;
	return rl_config_swap(pins, &done, live);
}
