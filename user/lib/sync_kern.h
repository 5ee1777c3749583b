/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kernel side of fleet sync (issue #14, docs/design.md "Fleet-wide limits"):
 * per-source pass counting in the XDP program, draining those counts, charging
 * what the other nodes passed into the local states, and the agent's status in
 * a pinned map. The agent (user/lib/sync_agent.c) is built on this interface only.
 */
#ifndef RL_SYNC_KERN_H
#define RL_SYNC_KERN_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "rl_common.h"
#include "maps.h"

/* A source as the tables key it, and cost units (packets, or bytes in byte mode). */
struct rl_sync_src {
	struct rl_state_key k; /* include/rl_common.h: masked address + generation */
	__u64 units;
};

struct rl_sync_kern; /* opaque */

/*
 * Open the limiter of interface @ifname in our network namespace and turn per-source pass counting
 * on (loads a program variant that counts, swapped in atomically like `set`, keeping every state
 * and the generation). Fails with a clear message when there is no limiter on @ifname.
 */
int rl_sync_kern_open(const char *ifname, struct rl_sync_kern **out, char *err, size_t errlen);
/* Turn counting off again (if @counting_off) and free. */
void rl_sync_kern_close(struct rl_sync_kern *k, bool counting_off);
/*
 * The canonical text of everything that must be equal on every node of a group (algorithm, rate,
 * burst, window, prefixes, byte mode, ..., and the rules): the agent compares it across nodes and
 * names the first difference. One "key=value" per line, stable order: the default rule's policy,
 * then a line per rule, in order, "rule.NAME=" its action ("allow", "deny" or "limit" and the
 * numbers of its policy: algo, bytes, rate, burst, window_ns), then a hash of the whole rule (its
 * match, prefixes included, and policy; a rule's --action, as the default's, is each node's own).
 * At most RL_SYNC_POLICY_MAX bytes.
 */
#define RL_SYNC_POLICY_MAX 16384
int rl_sync_kern_policy(struct rl_sync_kern *k, char *buf, size_t len);
/*
 * Units passed per source since the previous drain; only sources that passed something. *out is
 * malloc'd (caller frees), *n its count; a source may come more than once (its units then add up).
 * Follows `set`: after a policy change the new generation's keys are returned (the agent must
 * re-check the policy: rl_sync_kern_policy changes). The sources of limit rules come under their
 * rule: k.gen is RL_SYNC_RULE_GEN(slot, generation) (include/rl_sync.h). Nothing waits and nothing
 * is swapped: packets go on counting while it drains, and each unit is drained once.
 */
int rl_sync_drain(struct rl_sync_kern *k, struct rl_sync_src **out, size_t *n);
/*
 * Charge @n remote consumptions to the sources' states, atomically against the packet path.
 * Sources not in the table are skipped. *charged (may be NULL): how many were charged.
 */
int rl_sync_charge(struct rl_sync_kern *k, const struct rl_sync_src *in, size_t n, size_t *charged);
/*
 * A source as text, "198.18.0.1/32" or "2001:db8::/64" (its prefix), a limit rule's source with its
 * rule's name, "RULE|198.18.0.1/32" (the rule's prefix); and back (gen: the live one). As of the
 * last drain (or policy): -ENOENT for a rule that is not a live limit rule then.
 */
int rl_sync_src_format(struct rl_sync_kern *k, const struct rl_state_key *key, char *buf,
		       size_t len);
int rl_sync_src_parse(struct rl_sync_kern *k, const char *s, struct rl_state_key *key);

enum rl_sync_state {
	RL_SYNC_OFF = 0, /* no agent has run, or it stopped cleanly */
	RL_SYNC_CONNECTED = 1, /* syncing */
	RL_SYNC_FALLBACK_LOCAL = 2, /* Redis failing: full limit per host */
	RL_SYNC_FALLBACK_SHARE = 3, /* Redis failing: limit / nodes */
	RL_SYNC_POLICY_MISMATCH = 4, /* another live node's policy differs: the fallback charges */
};

/* What the agent publishes in a pinned map, for `stats` and the exporter. */
struct rl_sync_status {
	__u32 state; /* enum rl_sync_state */
	__u32 pid; /* the agent's pid: stats says "not running" if it is gone */
	__u64 interval_ns;
	__u64 last_sync_ns; /* CLOCK_REALTIME of the last successful round trip, 0: never */
	__u64 lag_ns; /* duration of the last round trip */
	__u64 sources_active; /* sources drained in the last interval */
	__u64 sources_shared; /* of those, sources with remote units (active on another node) */
	__u64 nodes; /* nodes of the group seen within the TTL, this one included */
	__u64 syncs_total, errors_total, fallback_intervals_total;
	__u64 charged_units_total; /* remote units charged (or, in fallback share, self-charged) */
	__u64 redis_tx_bytes_total, redis_rx_bytes_total;
	char group[64], node[64];
	/* Remote charges refused: more than the fleet can have passed (user/lib/sync_agent.h). */
	__u64 charges_refused_total;
	/*
	 * The server(s) the last successful round trip wrote to: HOST:PORT of
	 * the Redis or of the master Sentinel named, or a cluster's masters
	 * (rl_sync_store_master()); "" before the first.
	 */
	char master[128];
};
int rl_sync_status_write(struct rl_sync_kern *k, const struct rl_sync_status *st);
/* For stats/exporter: from the pins, without an rl_sync_kern. -ENOENT: no agent ever ran. */
int rl_sync_status_read(const struct rl_pins *pins, struct rl_sync_status *st);

/* Beyond the contract (sync-kern's additions): */
/* Is the agent that wrote @st still running (its pid exists)? */
bool rl_sync_agent_alive(const struct rl_sync_status *st);
/* "off", "connected", "fallback-local", "fallback-share"; "not-running" if its agent is gone. */
const char *rl_sync_state_name(const struct rl_sync_status *st);
/*
 * Turn counting on or off on a limiter opened with rl_sync_kern_open(): the live configuration
 * with rl_config.sync_count changed, swapped in like set, same generation, every state kept.
 */
int rl_sync_counting(struct rl_sync_kern *k, bool on, char *err, size_t errlen);
/*
 * Tests and bench: drain, charge and status on maps that are not attached (BPF_PROG_TEST_RUN);
 * @clock_fd: the test clock's rl_clock map, or -1. Counting is what the program loaded on @pins
 * compiles in; the fds stay the caller's.
 */
int rl_sync_kern_from_pins(const struct rl_pins *pins, int clock_fd, struct rl_sync_kern **out,
			   char *err, size_t errlen);

#endif /* RL_SYNC_KERN_H */
