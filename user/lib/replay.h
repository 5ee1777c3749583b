/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP program's decisions on whole frames, in userspace: what simulate
 * --pcap replays a capture through, and what its what-if report compares.
 *
 * A frame is parsed once, by the kernel's own parser (include/rl_parse.h:
 * the same code, compiled here), into a struct rl_frame. Then each policy
 * replayed takes the program's steps in the program's order:
 *
 *	1. frames limits never look at: not IP, neighbour discovery (passed),
 *	   malformed (dropped or passed as --malformed says);
 *	2. the rules, first match decides (rl_rsim, trace.h);
 *	3. the default rule, the attach policy (rl_rsim's last rule);
 *	4. the verdict (dry-run passes what it would drop), counted in a
 *	   struct rl_counters as the program counts it.
 *
 * A step added to the program (aggregate limits over sources, for one) is a
 * step added to rl_replay_frame(), between 3 and 4, with its counters.
 *
 * Not modelled: the tables' capacity (sources are never evicted or refused
 * here: --max-sources, --on-insert-fail), races between CPUs, and the coarse
 * clock (frames are replayed at their capture times, to the ns). SYN cookies
 * cannot be: whether an ACK brings a valid cookie depends on the kernel's
 * secret and its sockets, which a capture does not hold; a policy with them
 * is refused (rl_rsim_init()'s -EOPNOTSUPP), not replayed without them.
 */
#ifndef RL_REPLAY_H
#define RL_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "rl_common.h"
#include "rl_rules.h"
#include "rules.h"
#include "srctab.h"
#include "trace.h"

/* A frame as the parser saw it: the same whatever policy it is replayed under. */
struct rl_frame {
	int kind; /* enum rl_parsed (include/rl_parse.h) */
	__u32 bad; /* enum rl_malformed, when kind is RL_PARSED_MALFORMED */
	struct rl_pkt_info pi; /* IP frames: the source (unmasked), proto and L4 fields */
	__u32 len; /* on the wire: its cost under a byte rate, its bytes in the counters */
	/*
	 * The parser asked for a byte the capture does not have (tcpdump -s
	 * cut the frame before it): the kernel, which had the whole frame,
	 * may have parsed it otherwise.
	 */
	bool snapped;
	__u32 want; /* how far into the frame the parser looked (bytes) */
};

/*
 * Parse @data, @caplen bytes captured of a frame of @len bytes. @need_l4:
 * read ports and TCP flags (rl_replay_need_l4() of every set it will be
 * replayed under; the kernel reads them only then too).
 */
void rl_frame_parse(struct rl_frame *f, const void *data, __u32 caplen, __u32 len, int need_l4);

/* Does some rule of @set match on ports or TCP flags? */
bool rl_replay_need_l4(const struct rl_ruleset *set);

/* One interface's policy under replay. */
struct rl_replay {
	const struct rl_ruleset *set; /* its rules, "default" (the policy) last */
	bool malformed_drop; /* --malformed drop */
	struct rl_rsim sim;
	struct rl_counters cnt; /* as the XDP program's, summed */
};

/* What the policy did with one frame. */
struct rl_replay_res {
	int verdict; /* XDP_PASS or XDP_DROP */
	/*
	 * Why, in the words of the counters (stats): "passed" (under the
	 * limit), "limited", "would_drop" (dry-run), "not_ip", "nd",
	 * "malformed_eth" ..., and for a rule's decision its reason
	 * (rl_reason_name(): "allowed", "denied", "blocked", ...).
	 */
	const char *why;
	/* Rules and limits looked at it (an IP frame, not ND): r says which rule and how. */
	bool limited;
	struct rl_rsim_result r;
};

/* @set must outlive the replay and not change. 0, -ENOMEM, or -EOPNOTSUPP (SYN cookies). */
int rl_replay_init(struct rl_replay *r, const struct rl_ruleset *set, bool malformed_drop);
void rl_replay_free(struct rl_replay *r);
/* @f at @now (ns): the verdict into *res, and counted. 0 or -ENOMEM. */
int rl_replay_frame(struct rl_replay *r, const struct rl_frame *f, __u64 now,
		    struct rl_replay_res *res);

#endif /* RL_REPLAY_H */
