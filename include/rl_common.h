/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the XDP program and the CLI share: the configuration record, the
 * per-CPU counters, the map key, map names and limits. Fixed-width types with
 * explicit padding only: these structs are the maps' ABI.
 */
#ifndef RL_COMMON_H
#define RL_COMMON_H

#include <linux/types.h>
#include "rl_algo.h"
#include "rl_agg.h"
#include "rl_key.h"
#include "rl_syn.h"

/* Pins live in RL_PIN_ROOT/netns-INODE/IFACE/ (see user/lib/pins.h). */
#define RL_PIN_ROOT "/sys/fs/bpf/xdp-ratelimit"

/*
 * Default number of tracked IPv4 sources. The IPv4 table is chosen with the
 * policy (enum rl_table4): the set-associative rl_sets4 gets
 * RL_SA_SLOTS_PER_SOURCE slots of 8 bytes per source asked for (rounded up to
 * a power of two of 64-byte sets; when a set is full, the source least ahead
 * of the clock is forgotten), the LRU hash rl_state4 one entry per source
 * (when full, the least recently used is forgotten). Either way a forgotten
 * source starts again from --initial.
 */
#define RL_DEFAULT_MAX_SOURCES 1048576
#define RL_MAX_SOURCES_LIMIT   (64U << 20)
/*
 * IPv6 sources have their own table (rl_sets6, include/rl_sa6.h), a
 * sixteenth of --max-sources unless set (--max-sources6): a /64 is one
 * source by default, and an IPv6 source costs 64 bytes of kernel memory
 * against 32 for an IPv4 one in rl_sets4 (its key is kept whole), so a
 * sixteenth adds 4 bytes per IPv4 source whatever --max-sources is (65536
 * and 4 MiB for the default). A quarter would be 16 bytes, a third of the
 * 48 a source may cost (docs/design.md, "Memory").
 */
#define RL_SOURCES6_RATIO	  16
#define RL_MAX_SOURCES6_FOR(max4) ((max4) / RL_SOURCES6_RATIO ?: 1)
#define RL_DEFAULT_MAX_SOURCES6	  (RL_DEFAULT_MAX_SOURCES / RL_SOURCES6_RATIO)

/*
 * Compare-and-swap attempts on one source before the packet is dropped and
 * counted in cas_exhausted. A retry only happens when another CPU updated the
 * same source in between; eight in a row needs sustained contention from
 * many CPUs on one key.
 */
#define RL_CAS_TRIES 8

/* Verdict actions. */
enum rl_action {
	RL_ACTION_DROP = 0, /* over-limit packets are dropped */
	RL_ACTION_DRY_RUN = 1, /* counted as would-drop, passed */
};

/*
 * The packet clock. Precise: bpf_ktime_get_ns(), about 30 ns a read on the
 * machine the benchmarks ran on. Coarse: bpf_ktime_get_coarse_ns(), a few ns,
 * but it advances once per kernel tick (1/HZ: 4 ms at HZ=250), so userspace
 * only allows it where a tick cannot change the rate (see rl_config_build()).
 */
enum rl_clock {
	RL_CLOCK_PRECISE = 0,
	RL_CLOCK_COARSE = 1,
};

/* What to do with a packet whose source cannot be inserted (map error). */
enum rl_fail_policy {
	RL_FAIL_PASS = 0,
	RL_FAIL_DROP = 1,
};

/* Why a frame was not rate limited as IP (index into counters.malformed). */
enum rl_malformed {
	RL_BAD_ETH = 0, /* shorter than an Ethernet header */
	RL_BAD_VLAN = 1, /* truncated VLAN tag, or more than two tags */
	RL_BAD_IPV4 = 2, /* truncated IPv4 header */
	RL_BAD_IHL = 3, /* IPv4 IHL < 5 or version != 4 */
	RL_BAD_IPV6 = 4, /* truncated IPv6 header or version != 6 */
	RL_BAD__COUNT,
};

/* The outcome of parsing a frame (rl_parse_frame(), include/rl_parse.h). */
enum rl_parsed {
	RL_PARSED_IPV4, /* rate limited: an IPv4 source */
	RL_PARSED_IPV6, /* rate limited: an IPv6 source (IPv4-mapped: keyed as IPv4) */
	RL_PARSED_NOT_IP, /* passed untouched, counted in not_ip */
	RL_PARSED_MALFORMED, /* dropped or passed as --malformed says, counted by reason */
	RL_PARSED_ND, /* IPv6 neighbour discovery: passed untouched, counted in nd */
};

/* How state written under the previous configuration is carried over. */
enum rl_carry {
	RL_CARRY_NONE = 0, /* start afresh (algorithm family or window changed) */
	RL_CARRY_BUCKET = 1, /* rescale the used part of the bucket (gcra's level) */
	RL_CARRY_WINDOW = 2, /* same windows: keep the counts */
	RL_CARRY_TOKENS = 3, /* token bucket to token bucket: keep the tokens */
};

/*
 * One configuration. It is compiled into the XDP program (its .rodata.cfg
 * section, fixed before load: the verifier drops every path it does not use)
 * and a copy is kept in the rl_config map, for status and for bpftool. set
 * loads a program built for the new configuration and swaps it in.
 */
struct rl_config {
	/* Read by every packet: kept together in the first cache lines. */
	struct rl_params params;
	__u32 gen; /* generation: part of every state key */
	__u32 has_prev; /* look up gen - 1 on a miss */
	__u32 mask4; /* IPv4 source mask, network order */
	__u32 mask6[4]; /* IPv6 source mask, network order */
	__u32 action; /* enum rl_action */
	__u32 fail_policy; /* enum rl_fail_policy */
	__u32 malformed_drop; /* 1: drop malformed IP frames; 0: pass them */
	__u32 clock; /* enum rl_clock */
	/*
	 * The IPv4 table of this policy and of the previous one (enum
	 * rl_table4): the program looks a source's previous state up in the
	 * table it was in. In what was padding, so the struct keeps its size.
	 */
	__u16 table4, prev_table4;
	/* Read when a source is first seen after a set. */
	struct rl_params prev; /* the configuration before the last change */
	__u64 carry_mult; /* ahead_new = ahead_prev * carry_mult >> carry_shift */
	__u32 carry_shift;
	__u32 carry; /* enum rl_carry */
	__u32 prev_mask4;
	__u32 prev_mask6[4];
	/* The policy as given, for status and for set to change only what it names. */
	__u32 prefix4, prefix6;
	__u32 initial_set;
	__u64 rate_num; /* rate = rate_num / rate_den cost units per second */
	__u64 rate_den;
	__u64 burst; /* cost units (bucket algorithms) */
	__u64 initial; /* cost units, if initial_set */
	__u64 window_ns; /* window algorithms */
	/*
	 * Fleet sync (user/lib/sync_kern.h): 1 counts each passed packet's cost
	 * units per source in rl_sync4/rl_sync6. Not part of the policy: set
	 * carries it over, and turning it on or off keeps the generation.
	 */
	__u32 sync_count;
	__u32 pad_sync;
	/*
	 * The secret of the IPv4 table's set index (include/rl_sa.h,
	 * rl_sa_hash()): drawn at each attach (getrandom), kept by every
	 * set, never shown. Not part of the policy.
	 */
	__u64 sa_key;
	/*
	 * The levels above the source (include/rl_agg.h): the prefix
	 * aggregate, the interface, new sources beyond the admission cap
	 * as one, and the admission cap; lvl[id - 1], RL_LVL(). A level
	 * with on == 0 is off, and the verifier drops its code.
	 */
	struct rl_level lvl[RL_LVL_N];
	/*
	 * SYN cookies (include/rl_syn.h, bpf/syncookie.h): the ports, and what
	 * the SYN-ACK says. Policy: set changes it, status shows it.
	 */
	struct rl_syn_cfg syn;
};

struct rl_ctl {
	__u32 active; /* index of rl_config's slot that holds the live program's copy */
	__u32 ifindex; /* the interface these maps belong to ... */
	__u64 netns_ino; /* ... in this network namespace (pins are per host) */
	/*
	 * --max-sources as attached: the size of whichever IPv4 table a
	 * policy needs (the one not in use has a single entry).
	 */
	__u32 max_sources4;
	__u32 pad;
	/* --max-sources6 as attached (rl_sets6 is sized for it, rounded up). */
	__u32 max_sources6;
	__u32 pad6;
};

/* The IPv4 source table a policy uses (struct rl_config's table4). */
enum rl_table4 {
	RL_TABLE4_SA = 0, /* rl_sets4: the set-associative table, for every policy it holds */
	RL_TABLE4_LRU = 1, /* rl_state4: the LRU hash (only when asked for: rl-bench) */
	RL_TABLE4_WIDE = 2, /* rl_wide4: rl_sets4's layout with whole states, for the others */
};

/*
 * Per-source keys: the masked source and the configuration generation.
 * IPv4 sources (also IPv4-mapped IPv6 ones) are in the set-associative table
 * rl_sets4 (include/rl_sa.h: no key stored, the address is the set and the
 * tag), in its wide layout rl_wide4, or in the LRU hash rl_state4 under
 * rl_state_key4 (rl-bench only); IPv6 sources in the set-associative
 * rl_sets6 (include/rl_sa6.h), which keeps the masked source. Userspace
 * names both kinds with rl_state_key (IPv4 as IPv4-mapped IPv6), and so
 * does fleet sync's IPv6 counting (rl_sync6).
 */
struct rl_state_key4 {
	__be32 addr;
	__u32 gen;
};

struct rl_state_key {
	struct rl_key src;
	__u32 gen;
};

/*
 * Per-CPU counters as the XDP program keeps them: one record, so bpftool
 * prints them with their names. A packet of the common path updates two,
 * its verdict's packets and bytes; the others are counted only on the paths
 * they describe, and what can be derived is derived in userspace (struct
 * rl_counters).
 */
struct rl_kcounters {
	__u64 passed, passed_bytes; /* XDP_PASS, any reason */
	__u64 dropped, dropped_bytes; /* XDP_DROP, any reason */
	__u64 limited; /* dropped for being over the limit */
	__u64 would_drop, would_drop_bytes; /* over the limit in dry-run: passed */
	__u64 ipv6; /* IPv6 frames rate limited (IPv4: derived) */
	__u64 not_ip; /* ARP, LLDP, ...: passed untouched */
	__u64 malformed[RL_BAD__COUNT];
	__u64 new_sources; /* sources inserted */
	__u64 carried; /* sources carried over from the previous config */
	__u64 insert_failed; /* inserts that failed other than with EEXIST */
	__u64 cas_retries; /* compare-and-swap attempts that lost a race */
	__u64 cas_exhausted; /* packets dropped after RL_CAS_TRIES lost races */
	__u64 nd; /* IPv6 neighbour discovery: passed untouched */
	__u64 sync_lost; /* sync counting: units not counted (slot counter busy, table full) */
	/*
	 * Not counters: this CPU's last window k and its start k * W, which
	 * spare the window algorithms the 128-bit multiply of rl_window()
	 * while now stays in that window (bpf/clock.h, tick()).
	 * Checked at every use, so any content is safe; userspace ignores them.
	 */
	__u64 win_k, win_start;
	/* The levels above the source (include/rl_agg.h), counted where they decide. */
	__u64 lvl_limited[RL_LVL_N]; /* refused by level id (index id - 1; admit: unused) */
	__u64 unadmitted; /* packets of new sources beyond the admission cap, limited as one */
	__u64 admitted_seen; /* new sources given a state when seen again beyond the cap */
	__u64 agg_new; /* level states created (an aggregate seen for the first time) */
	__u64 agg_overdraft; /* charges past a level's limit after a race (see rl_agg.h) */
	__u64 agg_failed; /* level states that could not be created or charged */
	/* IPv4 set tables: a full set's victim, and of those, sources seen again. */
	__u64 evicted, evicted_seen;
	/*
	 * SYN cookies (bpf/syncookie.h): SYNs answered with a cookie (XDP_TX:
	 * neither passed nor dropped) and their bytes; ACKs whose cookie was
	 * valid (then limited as any packet) and packets of no connection
	 * without one (dropped).
	 */
	__u64 syn_sent, syn_sent_bytes, syn_valid, syn_invalid;
};

/*
 * The counters summed over CPUs, with what userspace derives (user/lib/maps.c):
 * rx = passed + dropped + syncookies_sent (SYNs answered go back out, XDP_TX).
 */
struct rl_counters {
	__u64 rx_packets, rx_bytes; /* every frame seen: passed + dropped */
	__u64 passed, passed_bytes;
	__u64 dropped, dropped_bytes;
	__u64 limited;
	__u64 ipv4, ipv6; /* rate-limited frames by family */
	__u64 would_drop, would_drop_bytes;
	__u64 not_ip;
	__u64 malformed[RL_BAD__COUNT];
	__u64 new_sources;
	__u64 carried;
	__u64 insert_failed;
	__u64 cas_retries;
	__u64 cas_exhausted;
	__u64 nd;
	__u64 sync_lost;
	__u64 agg_limited; /* refused by their prefix aggregate */
	__u64 iface_limited; /* refused by the interface's limit */
	__u64 new_limited; /* new sources beyond the admission cap, refused as one */
	__u64 unadmitted;
	__u64 admitted_seen;
	__u64 agg_new;
	__u64 agg_overdraft;
	__u64 agg_failed;
	__u64 evicted, evicted_seen;
	__u64 syncookies_sent, syncookies_sent_bytes, syncookies_valid, syncookies_invalid;
};

/*
 * The state a source had under the previous configuration, in the terms of
 * the current one (see "set" in the README):
 *	token bucket -> token bucket: the tokens (tau - ahead) are rescaled by
 *	unit_cost_new / unit_cost_prev: a source keeps the tokens it had, at
 *	most the new burst;
 *	any other bucket change: the used part (ahead, gcra's level) is
 *	rescaled, at most the new tau: a gcra source keeps its queue level;
 *	same window algorithm and length: the counts are kept (at most what
 *	the new field width holds, which is more than the new limit);
 *	anything else: the state of a new source.
 */
RL_INLINE __u64 rl_carry_as(const struct rl_params *cur, const struct rl_params *prev, __u32 carry,
			    __u64 mult, __u32 shift, __u64 state, __u64 now)
{
	__u64 ahead, hi, lo;

	switch (carry) {
	case RL_CARRY_BUCKET:
	case RL_CARRY_TOKENS:
		ahead = rl_ahead(prev, state, rl_vt(prev, now));
		if (carry == RL_CARRY_TOKENS)
			ahead = ahead < prev->tau ? prev->tau - ahead : 0;
		hi = rl_mul128(ahead, mult, &lo);
		if (shift == 0)
			ahead = hi ? ~0ULL : lo;
		else if (shift < 64)
			ahead = hi >> shift ? ~0ULL : (hi << (64 - shift)) | (lo >> shift);
		if (ahead > cur->tau)
			ahead = cur->tau;
		if (carry == RL_CARRY_TOKENS)
			ahead = cur->tau - ahead;
		return rl_vt(cur, now) + ahead;
	case RL_CARRY_WINDOW: {
		/* Same algorithm and windows: the counts, repacked in the new field widths. */
		__u64 e, k = rl_window(cur, now, &e), pc, cc, id;
		__u64 max = (1ULL << cur->cnt_bits) - 1;

		k = rl_window_ahead(prev, state, k, &e);
		id = k & cur->id_mask;
		rl_window_counts(prev, state, k, &pc, &cc);
		pc = pc < max ? pc : max;
		cc = cc < max ? cc : max;
		if (cur->algo == RL_ALGO_FIXED_WINDOW)
			return (id << cur->cnt_bits) | cc;
		return (((id << cur->cnt_bits) | pc) << cur->cnt_bits) | cc;
	}
	}
	return rl_initial_state(cur, now);
}

RL_INLINE __u64 rl_carry_state(const struct rl_config *c, __u64 state, __u64 now)
{
	return rl_carry_as(&c->params, &c->prev, c->carry, c->carry_mult, c->carry_shift, state,
			   now);
}

/* rl_carry_state() for a level above the source (struct rl_level). */
RL_INLINE __u64 rl_level_carry(const struct rl_level *l, __u64 state, __u64 now)
{
	return rl_carry_as(&l->params, &l->prev, l->carry, l->carry_mult, l->carry_shift, state,
			   now);
}

#endif /* RL_COMMON_H */
