/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What-if reports (simulate --pcap FILE --compare): one capture replayed
 * under several candidate policies in one pass, each frame parsed once and
 * decided by every candidate (replay.h). For each candidate it keeps what the
 * report shows: the counters, each source address's passed and dropped
 * frames, and the drops over time.
 *
 * Sources here are addresses, unmasked (each host, whatever --prefix4 or a
 * rule groups it with), so that candidates keying sources differently are
 * compared on the same hosts.
 *
 * Time is kept in bins of a width that doubles whenever the capture outgrows
 * them (from 1 us, RL_WHATIF_BINS of them), so any capture is one pass in
 * bounded memory, with at least RL_WHATIF_BINS / 2 bins for any capture
 * longer than RL_WHATIF_BINS us.
 */
#ifndef RL_WHATIF_H
#define RL_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "replay.h"
#include "rules.h"
#include "srctab.h"

#define RL_WHATIF_BINS	   1024
#define RL_WHATIF_BIN0_NS  1000ULL /* the first bins' width */
#define RL_WHATIF_NAME_LEN 256

struct rl_whatif_cand {
	char name[RL_WHATIF_NAME_LEN];
	struct rl_replay model; /* its counters: model.cnt */
	struct rl_srctab hosts; /* by source address: passed and dropped frames */
	__u64 drops[RL_WHATIF_BINS]; /* frames dropped, by time bin */
	__u64 would[RL_WHATIF_BINS]; /* frames a dry-run rule or policy would drop, by time bin */
	struct rl_replay_res last; /* what it did with the last frame */
};

struct rl_whatif {
	struct rl_whatif_cand *c;
	size_t n;
	int need_l4; /* some candidate's rule reads ports or flags */
	__u64 t0; /* the first frame's time */
	__u64 width; /* ns per bin */
	size_t nbins; /* bins up to the last frame's */
	__u64 rx[RL_WHATIF_BINS]; /* frames received, by time bin */
	__u64 frames; /* every frame replayed */
	__u64 ip; /* frames rules and limits look at (IP, not ND) */
	__u64 snapped; /* frames the capture cut before a header the parser reads */
	struct rl_srctab hosts; /* every source address seen: their count is the report's */
};

void rl_whatif_init(struct rl_whatif *w);
void rl_whatif_free(struct rl_whatif *w);
/*
 * Add a candidate before the first frame: the policy and rules of @set (it
 * must outlive @w and not change), --malformed drop or pass. 0, -ENOMEM, or
 * -EOPNOTSUPP for a set with a syn-cookies rule (kernel-only, see replay.h).
 */
int rl_whatif_add(struct rl_whatif *w, const char *name, const struct rl_ruleset *set,
		  bool malformed_drop);
/*
 * One frame at @now (ns, never before the last), @caplen of its @len bytes
 * at @data, through every candidate: each one's verdict in c[i].last. The
 * parsed frame into *@f if not NULL. 0 or -ENOMEM.
 */
int rl_whatif_frame(struct rl_whatif *w, const void *data, __u32 caplen, __u32 len, __u64 now,
		    struct rl_frame *f);

/*
 * The @n sources candidate @c dropped most frames of (ties: first seen
 * first), into @out (at most @n); how many there are.
 */
size_t rl_whatif_top(const struct rl_whatif_cand *c, const struct rl_src **out, size_t n);
/* How many sources candidate @c dropped at least one frame of, and all frames of. */
void rl_whatif_sources_hit(const struct rl_whatif_cand *c, __u64 *some, __u64 *all);

#endif /* RL_WHATIF_H */
