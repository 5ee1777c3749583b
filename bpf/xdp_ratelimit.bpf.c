// SPDX-License-Identifier: GPL-2.0-only
/*
 * xdp-ratelimit: the XDP program. Parses the frame, keys the source by its
 * masked address, runs the rate algorithm of include/rl_algo.h against the
 * source's state word (compare-and-swap, so that one source's packets on many
 * CPUs are counted exactly) and counts the verdict.
 *
 * The program is built for one configuration: rl_cfg is fixed before load,
 * in a read-only section the verifier reads as constants, so it removes
 * every branch the configuration does not take (other algorithms, byte or
 * packet costs, the clock, dry-run...). set loads a new program and swaps it
 * in (user/lib/prog.c). Untagged IPv4 is straight-line code; everything else
 * (VLAN tags, IPv6, frames to pass untouched, malformed ones) goes through
 * slow_path(), out of line.
 */
#include "parsing.h"
#include "verdict.h"
#include "rl_events.h"
#include "rl_sync.h"
#include "rl_sa.h"

#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC 1 /* the sweep's timer: the packet clock's */
#endif

/*
 * The configuration. Not const: the compiler must load it rather than fold
 * the zeros it is declared with; libbpf makes every ".rodata.*" section a
 * read-only map and freezes it at load, which is what lets the verifier
 * treat the loads as constants.
 */
struct rl_config rl_cfg SEC(".rodata.cfg");

/*
 * Load-time switch for tests: when set, the packet clock is read from the
 * rl_clock map instead of bpf_ktime_get_ns(), so a test chooses each packet's
 * time. In the production program the branch is dead code.
 */
const volatile __u8 rl_test_clock = 0;

/* log2 of rl_sets4's max_entries, set by userspace with the table's size. */
const volatile __u32 rl_sa_bits = RL_SA_BITS_MIN;

/*
 * IPv4 sources: the set-associative table of include/rl_sa.h. Mmapable, so
 * that its values start on a page (every set is one cache line) and userspace
 * walks, migrates and sweeps it with the same compare-and-swaps.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_sa_set);
	__uint(max_entries, 1U << RL_SA_BITS_MIN);
} rl_sets4 SEC(".maps");

/*
 * IPv4 sources of the policies rl_sets4 cannot hold (user/lib/sa.h,
 * rl_sa_check()): the same sets in the wide layout of include/rl_sa.h, four
 * ways of an identity word and a whole state word. Sized as rl_sets4 would
 * be (rl_sa_bits). The tables a policy does not use have one entry
 * (user/lib/xdp_attach.c), and the verifier drops the code that reaches them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_sa_set);
	__uint(max_entries, 1);
} rl_wide4 SEC(".maps");

/* IPv4 sources in an LRU hash: only when asked for (rl-bench's comparisons). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_state_key4);
	__type(value, __u64);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
} rl_state4 SEC(".maps");

/* The sweep of rl_sets4: a BPF timer, armed by the first insertion (see sweep_cb()). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_sweep);
	__uint(max_entries, 1);
} rl_sweep SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_state_key);
	__type(value, __u64);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES6);
} rl_state6 SEC(".maps");

/* A copy of rl_cfg for status and bpftool; the program never reads it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_config);
	__uint(max_entries, 2);
} rl_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_ctl);
	__uint(max_entries, 1);
} rl_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_kcounters);
	__uint(max_entries, 1);
} rl_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_clock SEC(".maps");

/* Drop samples (rl_events.h): the ring, the reader's switch, the per-CPU countdown. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RL_EV_RING_BYTES);
} rl_events SEC(".maps");

/*
 * The reader's switch: a global in a section of its own, so a map of its
 * own (pinned as rl_evctl, reused by every program that set loads), read
 * with one load from a fixed address: no lookup, no key on the stack of
 * the drop paths (main and slow_path() leave a subprogram 32 bytes).
 */
struct rl_evctl rl_evctl SEC(".data.evctl");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_evcpu);
	__uint(max_entries, 1);
} rl_evcpu SEC(".maps");

/*
 * Fleet sync counting (include/rl_sync.h): per-source units passed, in the
 * table each outer map's slot 0 points to. Not preallocated: they hold only
 * the sources active since the last drain, and take no memory while sync is
 * off. Sized as the source tables by the loader.
 */
struct rl_sc4 {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_state_key4);
	__type(value, __u64);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
} rl_sc4a SEC(".maps"), rl_sc4b SEC(".maps");

struct rl_sc6 {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_state_key);
	__type(value, __u64);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES6);
} rl_sc6a SEC(".maps"), rl_sc6b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct rl_sc4);
} rl_sync4 SEC(".maps") = { .values = { [0] = &rl_sc4a } };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct rl_sc6);
} rl_sync6 SEC(".maps") = { .values = { [0] = &rl_sc6a } };

/* The agent's status (struct rl_sync_status of user/lib/sync_kern.h); never read here. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, RL_SYNC_STATUS_SIZE);
	__uint(max_entries, 1);
} rl_sync_status SEC(".maps");

/* The charge program's batch (not pinned: each agent load has its own). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_sync_chg);
	__uint(max_entries, RL_SYNC_BATCH);
} rl_chg SEC(".maps");

static __always_inline __u64 rl_now(void)
{
	if (rl_test_clock) {
		__u32 zero = 0;
		__u64 *t = bpf_map_lookup_elem(&rl_clock, &zero);

		return t ? *t : 0;
	}
	if (rl_cfg.clock == RL_CLOCK_COARSE)
		return bpf_ktime_get_coarse_ns();
	return bpf_ktime_get_ns();
}

static __always_inline __u64 packet_cost(__u64 len)
{
	/* The bound the parameters were checked against (frames are shorter anyway). */
	if (rl_cfg.params.bytes)
		return len < RL_MAX_FRAME ? len : RL_MAX_FRAME;
	return 1;
}

/*
 * rl_tick() of the policy at @now, for the window algorithms from this
 * CPU's last window when now is still in it: start <= now < start + W with
 * start = k * W is k = floor(now / W) exactly, whatever wrote the pair (two
 * plain stores, another policy's W, a clock that went back in a test), so
 * the check alone keeps it exact. One multiply instead of rl_window()'s five.
 */
static __always_inline __u64 tick(struct rl_kcounters *cnt, __u64 now)
{
	__u64 k, e, w = rl_cfg.params.window_ns;

	if (rl_cfg.params.algo != RL_ALGO_FIXED_WINDOW &&
	    rl_cfg.params.algo != RL_ALGO_SLIDING_WINDOW)
		return rl_vt(&rl_cfg.params, now);
	k = cnt->win_k;
	if (now - cnt->win_start < w && k * w == cnt->win_start)
		return k;
	k = rl_window(&rl_cfg.params, now, &e);
	cnt->win_k = k;
	cnt->win_start = now - e;
	return k;
}

/*
 * A new source's first packet: its state carried over from the previous
 * generation (@prev, when it was there) or fresh, then stepped. Returns the
 * verdict of rl_step() and the state to insert in *val.
 */
static __always_inline int first_step(struct rl_kcounters *cnt, const __u64 *prev, __u64 now,
				      __u64 cost, __u64 *val)
{
	__u64 v, next;
	int pass;

	if (prev) {
		cnt->carried++;
		v = rl_carry_state(&rl_cfg, *prev, now);
	} else {
		v = rl_initial_state(&rl_cfg.params, now);
	}
	pass = rl_step(&rl_cfg.params, v, now, cost, &next);
	*val = pass ? next : v;
	return pass;
}

/*
 * Zero, as a key and as the value a counter starts from: read from here,
 * sync_count() and sample() need no stack for it.
 */
const volatile __u64 rl_sync_zero = 0;

/*
 * Sync counting: add a passed packet's @cost to its source in the live
 * counter table @outer points to. Atomic adds: one source's packets on many
 * CPUs are all counted. A new source is inserted at 0 (another CPU may
 * insert it first: EEXIST is fine) and added to like the others. Units that
 * cannot be counted (table full) are counted in sync_lost. Out of line, and
 * called only when sync_count is compiled in: otherwise the verifier
 * removes the call. Returns the caller's verdict (1: passed), so that the
 * caller keeps one value fewer across the call: the main program's stack
 * has no room for another spill (slow_path() and its subprograms).
 */
static __noinline int sync_count(struct rl_kcounters *cnt, void *outer, const void *key, __u64 cost)
{
	__u64 *u;
	void *m;

	if (!cnt || !key)
		return 1;
	m = bpf_map_lookup_elem(outer, (const void *)&rl_sync_zero);
	if (!m)
		return 1;
	u = bpf_map_lookup_elem(m, key);
	if (!u) {
		bpf_map_update_elem(m, key, (const void *)&rl_sync_zero, BPF_NOEXIST);
		u = bpf_map_lookup_elem(m, key);
		if (!u) {
			cnt->sync_lost += cost;
			return 1;
		}
	}
	__sync_fetch_and_add(u, cost);
	return 1;
}

/* @ret, after counting a pass when sync counting is compiled in. */
static __always_inline int counted(int ret, struct rl_kcounters *cnt, void *outer, const void *key,
				   __u64 cost)
{
	if (rl_cfg.sync_count && ret == 1)
		return sync_count(cnt, outer, key, cost);
	return ret;
}

#define RL_RETRY_LOOKUP 2

/* The outcome of inserting a new source: as first_step(), or a retry, or a failure. */
static __always_inline int inserted(struct rl_kcounters *cnt, int err, int pass)
{
	if (!err) {
		cnt->new_sources++;
		return pass;
	}
	if (err == -17 /* EEXIST: another CPU inserted it first */)
		return RL_RETRY_LOOKUP;
	cnt->insert_failed++;
	return -1;
}

/*
 * The state of IPv4 source @addr (masked by mask4) under the previous
 * generation in rl_sets4, read back in the previous parameters' terms: 1 and
 * *st when it is there. A pending copy is not in yet: nothing to carry.
 */
/*
 * The set of IPv4 source @addr (masked by mask4) under the previous
 * generation in the set table @map (rl_sets4 or rl_wide4), and its identity.
 */
static __always_inline struct rl_sa_set *prev_set(void *map, __be32 addr, __u64 *id)
{
	__u32 bits = rl_sa_bits,
	      h = rl_sa_hash(bpf_ntohl(addr & rl_cfg.prev_mask4), rl_cfg.gen - 1);
	__u32 idx = h & ((1U << bits) - 1);

	*id = rl_sa_id(h, rl_cfg.gen - 1, bits);
	return bpf_map_lookup_elem(map, &idx);
}

static __always_inline int sa_prev(__be32 addr, __u64 now, __u64 *st)
{
	__u64 id, idm = rl_sa_id_mask(rl_sa_bits), w;
	struct rl_sa_set *set = prev_set(&rl_sets4, addr, &id);
	__u32 i;

	if (!set)
		return 0;
	for (i = 0; i < RL_SA_WAYS; i++) {
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) == id && !(w & RL_SA_PEND)) {
			*st = rl_sa_get(w, rl_sa_ref(&rl_cfg.prev, now), rl_sa_bits);
			return 1;
		}
	}
	return 0;
}

/* The same source's previous state in rl_state4. */
static __always_inline __u64 *lru_prev(__be32 addr)
{
	struct rl_state_key4 pk = { .addr = addr & rl_cfg.prev_mask4, .gen = rl_cfg.gen - 1 };

	return bpf_map_lookup_elem(&rl_state4, &pk);
}

/*
 * The same source's previous state in rl_wide4: 1 and *st when it is there,
 * read between two reads of its identity word that agree. A way locked or
 * changed meanwhile is being inserted, moved or evicted: nothing to carry.
 */
static __always_inline int wide_prev(__be32 addr, __u64 *st)
{
	__u64 id, idm = rl_sa_id_mask(rl_sa_bits), w;
	struct rl_sa_set *set = prev_set(&rl_wide4, addr, &id);
	__u32 i;

	if (!set)
		return 0;
	for (i = 0; i < RL_SA_WIDE_WAYS; i++) {
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) == id && !(w & RL_SA_PEND)) {
			*st = *(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i];
			return *(volatile __u64 *)&set->w[i] == w;
		}
	}
	return 0;
}

/* An IPv4 source's state in the previous generation, from the table it was in: 1 and *st. */
static __always_inline int prev_state4(__be32 addr, __u64 now, __u64 *st)
{
	__u64 *p;

	if (rl_cfg.prev_table4 == RL_TABLE4_LRU) {
		p = lru_prev(addr);
		if (!p)
			return 0;
		*st = *p;
		return 1;
	}
	if (rl_cfg.prev_table4 == RL_TABLE4_WIDE)
		return wide_prev(addr, st);
	return sa_prev(addr, now, st);
}

/*
 * The state of an IPv4 source first seen at @now in rl_sets4: carried over
 * from the previous generation, from whichever table the previous policy
 * used, or fresh.
 */
static __always_inline __u64 sa_first_state(struct rl_kcounters *cnt, __be32 addr, __u64 now)
{
	__u64 w;

	if (!cnt)
		return 0;
	if (!rl_cfg.has_prev || !prev_state4(addr, now, &w))
		return rl_initial_state(&rl_cfg.params, now);
	cnt->carried++;
	return rl_carry_state(&rl_cfg, w, now);
}

/*
 * A source without state in rl_state4: insert it. Return as rate_limit(),
 * or RL_RETRY_LOOKUP when another CPU inserted the source first. Inlined in
 * limit_lru4(), itself out of line.
 */
static __always_inline int new_source4(struct rl_kcounters *cnt, struct rl_state_key4 *k, __u64 now,
				       __u64 cost)
{
	__u64 *prev = NULL, val, pv;
	int pass;

	if (rl_cfg.has_prev && prev_state4(k->addr, now, &pv))
		prev = &pv;
	pass = first_step(cnt, prev, now, cost, &val);
	pass = inserted(cnt, bpf_map_update_elem(&rl_state4, k, &val, BPF_NOEXIST), pass);
	/* Counted here, not by the caller: its frame has no room for what that keeps live. */
	return counted(pass, cnt, &rl_sync4, k, cost);
}

/* @kind is an enum rl_key_kind: masked by --prefix6, or kept whole (link-local). */
static __always_inline void mask_key6(struct rl_key *k, const struct rl_key *src, int kind,
				      const __u32 *mask6)
{
	if (kind == RL_KEY_LL) {
		*k = *src;
		return;
	}
	k->addr[0] = src->addr[0] & mask6[0];
	k->addr[1] = src->addr[1] & mask6[1];
	k->addr[2] = src->addr[2] & mask6[2];
	k->addr[3] = src->addr[3] & mask6[3];
}

/*
 * An IPv6 source without state: insert it. Return as limit_lru6(), or
 * RL_RETRY_LOOKUP when another CPU inserted the source first.
 */
static __always_inline int new_source6(struct rl_kcounters *cnt, struct rl_state_key *k,
				       const struct rl_key *src, int kind, __u64 now, __u64 cost)
{
	struct rl_state_key pk = {};
	__u64 *prev = NULL, val;
	int pass;

	if (rl_cfg.has_prev) {
		mask_key6(&pk.src, src, kind, rl_cfg.prev_mask6);
		pk.gen = rl_cfg.gen - 1;
		prev = bpf_map_lookup_elem(&rl_state6, &pk);
	}
	pass = first_step(cnt, prev, now, cost, &val);
	pass = inserted(cnt, bpf_map_update_elem(&rl_state6, k, &val, BPF_NOEXIST), pass);
	return counted(pass, cnt, &rl_sync6, k, cost);
}

/* step_state()'s answer when it gave up after RL_CAS_TRIES lost races: over the limit. */
#define RL_CAS_LOST (-2)

/*
 * One packet against the state word @st: 1 within the limit, 0 over it (or
 * RL_CAS_LOST). A pass is counted for sync (@outer, @key) here, where the
 * loop keeps everything it needs live anyway. @lost: races the caller lost
 * on it already (0 or 1), which count against RL_CAS_TRIES.
 */
static __always_inline int step_state(struct rl_kcounters *cnt, __u64 *st, __u64 now, __u64 cost,
				      void *outer, const void *key, int lost)
{
	__u64 tk, old, next;
	int i;

	tk = tick(cnt, now);
	for (i = lost ? 1 : 0; i < RL_CAS_TRIES; i++) {
		old = *(volatile __u64 *)st;
		if (!rl_step_at(&rl_cfg.params, old, now, tk, cost, &next))
			return 0;
		if (__sync_val_compare_and_swap(st, old, next) == old)
			return counted(1, cnt, outer, key, cost);
		cnt->cas_retries++;
	}
	cnt->cas_exhausted++;
	return RL_CAS_LOST;
}

/*
 * What a table's hit path answers when it did not decide: the table does
 * not hold the source (an insertion follows), or it used a round without
 * deciding (a pending slot, a lost race), which counts against RL_CAS_TRIES.
 */
#define RL_NOT_HELD   3
#define RL_ROUND_LOST 4

/*
 * 1: within the limit; 0: over it; -1: the source could not be tracked
 * (rl_state4). Everything but lru_hit4()'s hit, after it (@known: its
 * answer, or 0), so that a miss is looked up once and a race counts against
 * RL_CAS_TRIES. A global function, as limit_sa4(), whose frame is not the
 * caller's (the main program's and slow_path()'s, with the insertion's under
 * them, would pass the verifier's 512 bytes).
 */
__noinline int limit_lru4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost, int known)
{
	struct rl_state_key4 k = { .addr = addr, .gen = rl_cfg.gen };
	__u64 *st = NULL;

	if (!cnt)
		return -1;
	if (known != RL_NOT_HELD)
		st = bpf_map_lookup_elem(&rl_state4, &k);
	if (!st) {
		int ret = new_source4(cnt, &k, now, cost);

		if (ret != RL_RETRY_LOOKUP)
			return ret;
		st = bpf_map_lookup_elem(&rl_state4, &k);
		if (!st) {
			cnt->insert_failed++;
			return -1;
		}
	}
	return step_state(cnt, st, now, cost, &rl_sync4, &k, known == RL_ROUND_LOST);
}

/*
 * The first round of limit_lru4() for a source rl_state4 holds, in line in
 * the main program, which saves the hit a BPF-to-BPF call and its return
 * (their cost: docs/benchmarks.md). As limit_lru4(), or RL_NOT_HELD or
 * RL_ROUND_LOST (the compare-and-swap lost a race): limit_lru4() goes on.
 */
static __always_inline int lru_hit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	struct rl_state_key4 k = { .addr = addr, .gen = rl_cfg.gen };
	__u64 *st = bpf_map_lookup_elem(&rl_state4, &k), old, next;

	if (!st)
		return RL_NOT_HELD;
	old = *(volatile __u64 *)st;
	if (!rl_step_at(&rl_cfg.params, old, now, tick(cnt, now), cost, &next))
		return 0;
	if (__sync_val_compare_and_swap(st, old, next) == old)
		return counted(1, cnt, &rl_sync4, &k, cost);
	cnt->cas_retries++;
	return RL_ROUND_LOST;
}

/*
 * The sweep of rl_sets4. A slot keeps its state mod 2^m, read back near the
 * clock: a source idle for 2^(m-1) vt would be read as ahead (stricter than
 * it should be). The sweep rewrites every state the clock has left behind
 * to an equivalent one near the clock (a full bucket; empty counts), so that
 * none drifts that far. It runs from a BPF timer: every RL_SA_SWEEP_TICK_NS
 * it sweeps 1/2^RL_SA_SWEEP_PARTS of the sets, so a whole pass takes
 * RL_SA_SWEEP_PASS_NS whatever the table's size, with no daemon. Every load
 * arms it from rl_sweep_arm() below, taking it over from the program loaded
 * before (rl_sweep is pinned and reused). The callback reads the live policy
 * from rl_config rather than from its own program's constants: the timer
 * keeps calling the program that armed it, which set may since have
 * replaced.
 * Every rewrite is a compare-and-swap from the word read: a packet that
 * updated the slot in between wins, and its state is current anyway.
 */
struct sweep_ctx {
	const struct rl_params *p;
	__u64 ref, behind, idm, sm, gen, cb;
	__u32 start, mask;
	__u64 swept;
};

static long sweep_set(__u64 n, void *data)
{
	struct sweep_ctx *c = data;
	__u32 idx = (c->start + (__u32)n) & c->mask;
	struct rl_sa_set *set = bpf_map_lookup_elem(&rl_sets4, &idx);
	__u64 w, st, out, k, id;
	int i;

	if (!set)
		return 1;
	for (i = 0; i < RL_SA_WAYS; i++) {
		w = *(volatile __u64 *)&set->w[i];
		if (!(w & RL_SA_USED) || (w & RL_SA_PEND) ||
		    (w & (3ULL << RL_SA_GEN_SHIFT)) != c->gen)
			continue;
		st = rl_sa_get(w, c->ref, rl_sa_bits);
		if (!c->cb) {
			/* A TAT behind the clock is a full bucket, however far behind. */
			if ((__s64)(st - c->behind) >= 0)
				continue;
			out = c->behind;
		} else {
			/* A window id not k - 1, k or k + 1: empty counts, as a new source's. */
			k = c->ref >> c->cb;
			id = st >> c->cb;
			if (((id - k + 1) & c->p->id_mask) <= 2)
				continue;
			out = ((k - 2) & c->p->id_mask) << c->cb;
		}
		if (__sync_val_compare_and_swap(&set->w[i], w, (w & c->idm) | (out & c->sm)) == w)
			c->swept++;
	}
	return 0;
}

static int sweep_cb(void *map, __u32 *key, struct rl_sweep *sw)
{
	__u32 zero = 0, bits = rl_sa_bits;
	struct sweep_ctx c = {};
	struct rl_config *cfg;
	struct rl_ctl *ctl;
	__u64 now;

	ctl = bpf_map_lookup_elem(&rl_ctl, &zero);
	cfg = ctl ? bpf_map_lookup_elem(&rl_config, &ctl->active) : NULL;
	if (cfg && cfg->table4 == RL_TABLE4_SA) {
		now = rl_test_clock ? rl_now() : bpf_ktime_get_ns();
		c.p = &cfg->params;
		c.cb = rl_sa_count_bits(&cfg->params);
		c.ref = rl_sa_ref(&cfg->params, now);
		c.behind = c.ref - RL_SA_SWEEP_SLACK;
		c.idm = rl_sa_id_mask(bits);
		c.sm = rl_sa_state_mask(bits);
		c.gen = (__u64)(cfg->gen & 3) << RL_SA_GEN_SHIFT;
		c.mask = (1U << bits) - 1;
		c.start = (__u32)sw->next & c.mask;
		bpf_loop(1U << (bits - RL_SA_SWEEP_PARTS), sweep_set, &c, 0);
		sw->swept += c.swept;
		sw->next = (c.start + (1U << (bits - RL_SA_SWEEP_PARTS))) & c.mask;
		if (!sw->next)
			sw->passes++;
	}
	bpf_timer_start(&sw->t, RL_SA_SWEEP_TICK_NS, 0);
	return 0;
}

/*
 * 1: within the limit; 0: over it; -1: the source could not be tracked.
 * The protocol of bench/bpf/bench_sa.bpf.c (its comment proves it exact):
 * hit: the first slot whose used, generation and tag bits match is the
 * source; a pass CASes (id | next state) over the word read, a failed CAS
 * starts over. Miss: the victim is an empty slot, else the one least ahead
 * of the clock (never a pending one); claim it as pending, re-read the other
 * slots (another CPU inserting the same source: undo and start over), then
 * publish. At most RL_CAS_TRIES rounds (less @lost, the rounds sa_hit4()
 * used), then the packet counts as cas_exhausted and is dropped.
 *
 * A global function: the verifier checks it once, whatever its callers
 * (the untagged path after sa_hit4(), and slow_path()); inlined twice, its
 * retry loop over eight slots is more paths than the verifier explores.
 */
__noinline int limit_sa4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost, int lost)
{
	__u32 bits = rl_sa_bits, h, idx;
	__u64 ref, tk, id, idm, sm, w, next, st;
	struct rl_sa_set *set;
	int i, t;

	if (!cnt)
		return -1;
	h = rl_sa_hash(bpf_ntohl(addr), rl_cfg.gen);
	idx = h & ((1U << bits) - 1);
	id = rl_sa_id(h, rl_cfg.gen, bits);
	idm = rl_sa_id_mask(bits);
	sm = rl_sa_state_mask(bits);
	set = bpf_map_lookup_elem(&rl_sets4, &idx);
	if (!set) { /* cannot happen: idx < max_entries */
		cnt->insert_failed++;
		return -1;
	}
	tk = tick(cnt, now);
	ref = rl_sa_ref_at(&rl_cfg.params, tk);
	for (t = lost ? 1 : 0; t < RL_CAS_TRIES; t++) {
		int hit = -1, pend = 0;

		for (i = 0; i < RL_SA_WAYS; i++) {
			w = *(volatile __u64 *)&set->w[i];
			if ((w & idm) == id) {
				hit = i;
				pend = !!(w & RL_SA_PEND);
				break;
			}
		}
		if (hit < 0)
			return RL_NOT_HELD;
		if (pend) { /* being inserted by another CPU */
			cnt->cas_retries++;
			continue;
		}
		st = rl_sa_get(w, ref, bits);
		if (!rl_step_at(&rl_cfg.params, st, now, tk, cost, &next))
			return 0;
		if (__sync_val_compare_and_swap(&set->w[hit], w, id | (next & sm)) == w)
			return 1;
		cnt->cas_retries++;
	}
	cnt->cas_exhausted++;
	return RL_CAS_LOST;
}

/*
 * The first round of limit_sa4(), in line in the main program, as
 * lru_hit4() for rl_state4: as limit_sa4(), or RL_ROUND_LOST, after which
 * limit_sa4() goes on with one round fewer.
 */
static __always_inline int sa_hit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	__u32 bits = rl_sa_bits, h = rl_sa_hash(bpf_ntohl(addr), rl_cfg.gen);
	__u32 idx = h & ((1U << bits) - 1);
	__u64 id = rl_sa_id(h, rl_cfg.gen, bits), idm = rl_sa_id_mask(bits), w = 0, tk, next;
	struct rl_sa_set *set = bpf_map_lookup_elem(&rl_sets4, &idx);
	int i;

	if (!set) /* cannot happen: idx < max_entries; limit_sa4() counts it */
		return RL_ROUND_LOST;
	for (i = 0; i < RL_SA_WAYS; i++) {
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) == id)
			break;
	}
	if (i >= RL_SA_WAYS)
		return RL_NOT_HELD;
	if (w & RL_SA_PEND) { /* being inserted by another CPU */
		cnt->cas_retries++;
		return RL_ROUND_LOST;
	}
	tk = tick(cnt, now);
	if (!rl_step_at(&rl_cfg.params, rl_sa_get(w, rl_sa_ref_at(&rl_cfg.params, tk), bits), now,
			tk, cost, &next))
		return 0;
	if (__sync_val_compare_and_swap(&set->w[i], w, id | (next & rl_sa_state_mask(bits))) == w)
		return 1;
	cnt->cas_retries++;
	return RL_ROUND_LOST;
}

/*
 * One attempt at inserting a source its set does not hold: 1 or 0 as
 * limit_sa4() with the source published, RL_RETRY_LOOKUP when another CPU
 * changed the set first (limit_v4() then starts over). A global function of
 * its own, so that the verifier checks it once rather than in each of
 * limit_sa4()'s retries: 100 ms of verification per load otherwise.
 */
__noinline int sa_miss4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	__u32 bits = rl_sa_bits, h, idx;
	__u64 ref, tk, id, idm, sm, w, next, st, vw = 0;
	__s64 best = 0x7fffffffffffffffLL;
	struct rl_sa_set *set;
	int i, victim = -1, pass;

	if (!cnt)
		return -1;
	h = rl_sa_hash(bpf_ntohl(addr), rl_cfg.gen);
	idx = h & ((1U << bits) - 1);
	id = rl_sa_id(h, rl_cfg.gen, bits);
	idm = rl_sa_id_mask(bits);
	sm = rl_sa_state_mask(bits);
	set = bpf_map_lookup_elem(&rl_sets4, &idx);
	if (!set)
		return -1;
	tk = tick(cnt, now);
	ref = rl_sa_ref_at(&rl_cfg.params, tk);
	/*
	 * The victim: an empty slot, else the one least ahead of the
	 * reference: the source that waited longest since its last passed
	 * packet, whose loss changes least.
	 */
	for (i = 0; i < RL_SA_WAYS; i++) {
		__s64 ahead;

		w = *(volatile __u64 *)&set->w[i];
		if (!w) {
			victim = i;
			vw = 0;
			break;
		}
		if (w & RL_SA_PEND)
			continue;
		ahead = (__s64)(rl_sa_get(w, ref, bits) - ref);
		if (ahead < best) {
			best = ahead;
			victim = i;
			vw = w;
		}
	}
	if (victim < 0 || victim >= RL_SA_WAYS)
		return RL_RETRY_LOOKUP;
	if (__sync_val_compare_and_swap(&set->w[victim], vw, id | RL_SA_PEND) != vw)
		return RL_RETRY_LOOKUP;
	for (i = 0; i < RL_SA_WAYS; i++) {
		if (i == victim)
			continue;
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) == id)
			break;
	}
	if (i < RL_SA_WAYS) {
		/* Another copy is being inserted or is in: ours goes. */
		__sync_val_compare_and_swap(&set->w[victim], id | RL_SA_PEND, 0);
		return RL_RETRY_LOOKUP;
	}
	st = sa_first_state(cnt, addr, now);
	pass = rl_step_at(&rl_cfg.params, st, now, tk, cost, &next);
	if (!pass)
		next = st;
	/* Only this CPU writes a pending word: the CAS orders, it cannot fail. */
	__sync_val_compare_and_swap(&set->w[victim], id | RL_SA_PEND, id | (next & sm));
	cnt->new_sources++;
	return pass;
}

/*
 * rl_wide4 (the wide layout of include/rl_sa.h): the set of IPv4 source
 * @addr and its identity. The lookup cannot fail (idx < max_entries).
 */
static __always_inline struct rl_sa_set *wide_set(__be32 addr, __u64 *id)
{
	__u32 bits = rl_sa_bits, h = rl_sa_hash(bpf_ntohl(addr), rl_cfg.gen);
	__u32 idx = h & ((1U << bits) - 1);

	*id = rl_sa_id(h, rl_cfg.gen, bits);
	return bpf_map_lookup_elem(&rl_wide4, &idx);
}

/*
 * One round on way @i of @set, whose identity word was read as @w (used,
 * unlocked): its state, then over the limit if the identity word still
 * reads @w, or within it if the lock from @w is taken, in which case the
 * next state is stored and the way released with its version moved on.
 * As sa_hit4(): 1, 0, or RL_ROUND_LOST when another CPU changed the way.
 */
static __always_inline int wide_round(struct rl_kcounters *cnt, struct rl_sa_set *set, int i,
				      __u64 w, __u64 now, __u64 tk, __u64 cost)
{
	__u64 st = *(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i], next;

	if (!rl_step_at(&rl_cfg.params, st, now, tk, cost, &next)) {
		if (*(volatile __u64 *)&set->w[i] == w)
			return 0;
	} else if (__sync_val_compare_and_swap(&set->w[i], w, w | RL_SA_PEND) == w) {
		*(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i] = next;
		/* Only the holder writes a locked word: the CAS orders, it cannot fail. */
		__sync_val_compare_and_swap(&set->w[i], w | RL_SA_PEND,
					    rl_sa_wide_next(w, rl_sa_bits));
		return 1;
	}
	cnt->cas_retries++;
	return RL_ROUND_LOST;
}

/* The way of rl_wide4's @set whose identity is @id, and its identity word in *w; -1 if none. */
static __always_inline int wide_find(struct rl_sa_set *set, __u64 id, __u64 *w)
{
	__u64 idm = rl_sa_id_mask(rl_sa_bits);
	int i;

	for (i = 0; i < RL_SA_WIDE_WAYS; i++) {
		*w = *(volatile __u64 *)&set->w[i];
		if ((*w & idm) == id)
			return i;
	}
	return -1;
}

/*
 * Reads of a locked identity word before a round counts as lost: a holder
 * keeps the lock for one store and one compare-and-swap, far shorter than
 * the RL_CAS_TRIES rounds a waiting CPU would otherwise use up in a row.
 */
#define RL_WIDE_SPIN 64

/*
 * The identity word of way @i of @set read as @w, read again while it is
 * locked (bounded). A global function, called only on a locked word: in
 * line, its loop in each of limit_wide4()'s rounds is more states than the
 * verifier explores.
 */
__noinline __u64 wide_unlocked(struct rl_sa_set *set, int i, __u64 w)
{
	if (!set || i < 0 || i >= RL_SA_WIDE_WAYS)
		return w;
	for (int j = 0; j < RL_WIDE_SPIN && (w & RL_SA_PEND); j++)
		w = *(volatile __u64 *)&set->w[i];
	return w;
}

/* The first round of limit_wide4(), in line in the main program, as sa_hit4(). */
static __always_inline int wide_hit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	struct rl_sa_set *set;
	__u64 id, w = 0;
	int i;

	set = wide_set(addr, &id);
	if (!set) /* cannot happen; limit_wide4() counts it */
		return RL_ROUND_LOST;
	i = wide_find(set, id, &w);
	if (i < 0 || i >= RL_SA_WIDE_WAYS)
		return RL_NOT_HELD;
	if (w & RL_SA_PEND) { /* locked by another CPU */
		cnt->cas_retries++;
		return RL_ROUND_LOST;
	}
	return wide_round(cnt, set, i, w, now, tick(cnt, now), cost);
}

/*
 * limit_sa4() for rl_wide4: at most RL_CAS_TRIES rounds (less @lost), each
 * a wide_round() on the source's way; RL_NOT_HELD on a miss.
 */
__noinline int limit_wide4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost, int lost)
{
	struct rl_sa_set *set;
	__u64 id, w = 0, tk;
	int i, t, ret;

	if (!cnt)
		return -1;
	set = wide_set(addr, &id);
	if (!set) { /* cannot happen: idx < max_entries */
		cnt->insert_failed++;
		return -1;
	}
	tk = tick(cnt, now);
	for (t = lost ? 1 : 0; t < RL_CAS_TRIES; t++) {
		i = wide_find(set, id, &w);
		if (i < 0 || i >= RL_SA_WIDE_WAYS)
			return RL_NOT_HELD;
		if (w & RL_SA_PEND)
			w = wide_unlocked(set, i, w);
		if ((w & RL_SA_PEND) || (w & rl_sa_id_mask(rl_sa_bits)) != id) {
			cnt->cas_retries++;
			continue;
		}
		ret = wide_round(cnt, set, i, w, now, tk, cost);
		if (ret != RL_ROUND_LOST)
			return ret;
	}
	cnt->cas_exhausted++;
	return RL_CAS_LOST;
}

/*
 * sa_miss4() for rl_wide4: the victim an empty way, else the unlocked one
 * whose state is least ahead of the reference; lock it from the identity
 * word read (a failure: RL_RETRY_LOOKUP), look for another copy of the
 * source in the other ways (one: restore the word, RL_RETRY_LOOKUP), then
 * store the first state and release the way under the source's identity.
 * A way released without its state written gets its old word back, as a
 * reader that saw it expects.
 */
__noinline int wide_miss4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	__u64 ref, tk, id, idm, w, next, st, vw = 0, lock;
	__s64 best = 0x7fffffffffffffffLL;
	struct rl_sa_set *set;
	int i, victim = -1, pass;

	if (!cnt)
		return -1;
	set = wide_set(addr, &id);
	if (!set)
		return -1;
	idm = rl_sa_id_mask(rl_sa_bits);
	tk = tick(cnt, now);
	ref = rl_sa_ref_at(&rl_cfg.params, tk);
	for (i = 0; i < RL_SA_WIDE_WAYS; i++) {
		__s64 ahead;

		w = *(volatile __u64 *)&set->w[i];
		if (!(w & RL_SA_USED)) { /* empty: never used, or its source deleted */
			victim = i;
			vw = w;
			break;
		}
		if (w & RL_SA_PEND)
			continue;
		ahead = (__s64)(*(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i] - ref);
		if (ahead < best) {
			best = ahead;
			victim = i;
			vw = w;
		}
	}
	if (victim < 0 || victim >= RL_SA_WIDE_WAYS)
		return RL_RETRY_LOOKUP;
	/* The way's version goes on with the new source: a reader of the old one sees a change. */
	lock = id | RL_SA_PEND | (vw & rl_sa_state_mask(rl_sa_bits));
	if (__sync_val_compare_and_swap(&set->w[victim], vw, lock) != vw)
		return RL_RETRY_LOOKUP;
	for (i = 0; i < RL_SA_WIDE_WAYS; i++) {
		if (i == victim)
			continue;
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) == id)
			break;
	}
	if (i < RL_SA_WIDE_WAYS) {
		/* Another copy is being inserted or is in: ours goes, the way as it was. */
		__sync_val_compare_and_swap(&set->w[victim], lock, vw);
		return RL_RETRY_LOOKUP;
	}
	st = sa_first_state(cnt, addr, now);
	pass = rl_step_at(&rl_cfg.params, st, now, tk, cost, &next);
	if (!pass)
		next = st;
	*(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + victim] = next;
	__sync_val_compare_and_swap(&set->w[victim], lock, rl_sa_wide_next(lock, rl_sa_bits));
	cnt->new_sources++;
	return pass;
}

/*
 * The three steps of the set table in use, rl_sets4 or rl_wide4: the
 * policy's table is a constant, so each is one call (the other's code goes).
 */
static __always_inline int sets_hit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	if (rl_cfg.table4 == RL_TABLE4_WIDE)
		return wide_hit4(cnt, addr, now, cost);
	return sa_hit4(cnt, addr, now, cost);
}

static __always_inline int sets_limit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost,
				       int lost)
{
	if (rl_cfg.table4 == RL_TABLE4_WIDE)
		return limit_wide4(cnt, addr, now, cost, lost);
	return limit_sa4(cnt, addr, now, cost, lost);
}

static __always_inline int sets_miss4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	if (rl_cfg.table4 == RL_TABLE4_WIDE)
		return wide_miss4(cnt, addr, now, cost);
	return sa_miss4(cnt, addr, now, cost);
}

/*
 * IPv4 source @saddr. A hit's first round is in line when @fast (the main
 * program; slow_path()'s frame has no room for it): sa_hit4(), wide_hit4()
 * or lru_hit4(). Otherwise in a set table a hit is one call of limit_sa4()
 * (limit_wide4() in rl_wide4); a miss calls sa_miss4() (wide_miss4()) from
 * here, not from the lookup: three frames deep under slow_path() would pass
 * the 512 bytes of stack the verifier allows. It starts over with the
 * lookup when another CPU changed the set first. At most RL_CAS_TRIES
 * insertions.
 */
static __always_inline int limit_v4(struct rl_kcounters *cnt, __be32 saddr, __u64 len, int fast)
{
	__be32 addr = saddr & rl_cfg.mask4;
	__u64 now = rl_now(), cost = packet_cost(len);
	int ret;

	if (rl_cfg.table4 == RL_TABLE4_LRU) {
		if (!fast)
			return limit_lru4(cnt, addr, now, cost, 0);
		ret = lru_hit4(cnt, addr, now, cost);
		if (ret == RL_NOT_HELD || ret == RL_ROUND_LOST)
			return limit_lru4(cnt, addr, now, cost, ret);
		return ret;
	}
	if (!fast)
		ret = sets_limit4(cnt, addr, now, cost, 0);
	else if ((ret = sets_hit4(cnt, addr, now, cost)) == RL_ROUND_LOST)
		ret = sets_limit4(cnt, addr, now, cost, 1);
	for (int t = 0; ret == RL_NOT_HELD && t < RL_CAS_TRIES; t++) {
		ret = sets_miss4(cnt, addr, now, cost);
		if (ret == RL_RETRY_LOOKUP) {
			cnt->cas_retries++;
			ret = sets_limit4(cnt, addr, now, cost, 0);
		}
	}
	if (ret == RL_NOT_HELD || ret == RL_RETRY_LOOKUP) {
		cnt->cas_exhausted++;
		return RL_CAS_LOST;
	}
	if (rl_cfg.sync_count && ret == 1) {
		/* Sync counts rl_sets4's sources under rl_state4's key: the agent reads one kind. */
		struct rl_state_key4 k = { .addr = addr, .gen = rl_cfg.gen };

		return sync_count(cnt, &rl_sync4, &k, cost);
	}
	return ret;
}

/*
 * IPv6 source @src (an enum rl_key_kind @kind): 1 within the limit, 0 over
 * it, -1 not tracked. A global function, as limit_lru4(): its frame is not
 * slow_path()'s, which leaves room on the stack for the hit path inlined in
 * the main program.
 */
__noinline int limit_lru6(struct rl_kcounters *cnt, const struct rl_key *src, int kind, __u64 now,
			  __u64 cost)
{
	struct rl_state_key k = { .gen = rl_cfg.gen };
	__u64 *st;

	if (!cnt || !src)
		return -1;
	mask_key6(&k.src, src, kind, rl_cfg.mask6);
	st = bpf_map_lookup_elem(&rl_state6, &k);
	if (!st) {
		int ret = new_source6(cnt, &k, src, kind, now, cost);

		if (ret != RL_RETRY_LOOKUP)
			return ret;
		st = bpf_map_lookup_elem(&rl_state6, &k);
		if (!st) {
			cnt->insert_failed++;
			return -1;
		}
	}
	return step_state(cnt, st, now, cost, &rl_sync6, &k, 0);
}

/* The sample's clock: always the precise one (a coarse tick is too rough to read). */
static __always_inline __u64 sample_now(void)
{
	if (rl_test_clock)
		return rl_now();
	return bpf_ktime_get_ns();
}

/*
 * A dropped packet that sample()'s 1-in-one_in countdown (@pc, this CPU's:
 * no division) let through: reset the countdown, then is it within the cap
 * of the current second of the clock? The shared word holds the second
 * (now / 10^9, from the reciprocal of rl_window(): exact, no division) in
 * its high 32 bits and the samples sent in it in the low 32;
 * compare-and-swap as step_state(), so the cap is exact across CPUs
 * (RL_CAS_TRIES lost races count as over it). Not rl_fixed_step() itself:
 * its general packing spills registers, on a stack the packet path has
 * mostly used. Returns the time of the pick, or 0. Out of line, as
 * sample_send(): only a picked drop calls them, and apart (rather than one
 * inside the other) they fit the stack.
 */
static __noinline __u64 sample_pick(struct rl_evcpu *pc)
{
	struct rl_evctl *ev = &rl_evctl;
	__u64 now, sec, old, next, e;
	int i;

	if (!pc)
		return 0;
	pc->skip = ev->one_in ? ev->one_in - 1 : 0;
	now = sample_now();
	sec = (__u32)rl_window(&ev->cap, now, &e);
	for (i = 0; i < RL_CAS_TRIES; i++) {
		old = *(volatile __u64 *)&ev->win;
		if (old >> 32 != sec)
			next = sec << 32 | 1;
		else if ((__u32)old < ev->cap.limit)
			next = old + 1;
		else
			break;
		if (__sync_val_compare_and_swap(&ev->win, old, next) == old)
			return now ?: 1;
	}
	pc->capped++;
	return 0;
}

/* Write the sample of a picked packet to rl_events. 1: sent; 0: the ring was full. */
static __noinline int sample_send(struct xdp_md *ctx, __u64 now, __u32 reason)
{
	struct hdr_cursor c = { .pos = (void *)(long)ctx->data,
				.end = (void *)(long)ctx->data_end };
	struct rl_evcpu *pc;
	struct rl_event *e;
	__u32 bad, zero = 0;
	__be16 proto;
	__u64 len, n;
	int nd;

	pc = bpf_map_lookup_elem(&rl_evcpu, &zero);
	if (!pc)
		return 0;
	e = bpf_ringbuf_reserve(&rl_events, sizeof(*e), 0);
	if (!e) {
		pc->lost++;
		return 0;
	}
	/* Whole: what the frame does not fill must not carry old ring contents out. */
	__builtin_memset(e, 0, sizeof(*e));
	e->time_ns = now;
	e->ifindex = ctx->ingress_ifindex;
	e->reason = reason;
	len = bpf_xdp_get_buff_len(ctx);
	e->len = len;
	n = len < RL_EV_SNAP ? len : RL_EV_SNAP;
	if (n > 0 && !bpf_xdp_load_bytes(ctx, 0, e->data, n))
		e->caplen = n;
	/* The source, parsed again: the packet path keeps no copy of it for us. */
	if (!parse_eth(&c, &proto, &bad)) {
		if (proto == bpf_htons(ETH_P_IP))
			parse_ipv4(&c, &e->src, &bad);
		else if (proto == bpf_htons(ETH_P_IPV6))
			parse_ipv6(&c, &e->src, &bad, &nd);
	}
	/*
	 * No wakeup: waking the reader costs microseconds per sample (most of
	 * the cost of sampling), and it polls every 100 ms anyway. Half a ring
	 * is over a quarter of a second at the highest cap: then wake it.
	 */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&rl_events, BPF_RB_AVAIL_DATA) >
					      (RL_EV_RING_BYTES >> 1) ?
				      BPF_RB_FORCE_WAKEUP :
				      BPF_RB_NO_WAKEUP);
	pc->sent++;
	return 1;
}

/*
 * The one check sampling costs a drop path while nobody reads: the reader's
 * switch, one load and a test. While it reads, the 1-in-N countdown is in
 * line too (the per-CPU lookup is inlined by the verifier; its key is read
 * from rl_sync_zero, not the stack): only a picked drop pays the calls.
 */
static __always_inline void sample(struct xdp_md *ctx, __u32 reason)
{
	struct rl_evcpu *pc;
	__u64 now;
	int ret;

	if (!*(volatile __u32 *)&rl_evctl.on)
		return;
	pc = bpf_map_lookup_elem(&rl_evcpu, (const void *)&rl_sync_zero);
	if (!pc)
		return;
	if (pc->skip) {
		pc->skip--;
		return;
	}
	now = sample_pick(pc);
	if (!now)
		return;
	ret = sample_send(ctx, now, reason);
	/*
	 * Use the answer: with it unused, clang may leave the subprogram's
	 * return register unset, and the verifier refuses a subprogram that
	 * may return whatever r0 held (a stack pointer).
	 */
	asm volatile("" : : "r"(ret));
}

/* The verdict for rate_limit()'s answer @ret, counted (and sampled when dropped). */
static __always_inline int decide(struct xdp_md *ctx, struct rl_kcounters *cnt, int ret, __u64 len)
{
	if (ret > 0)
		return rl_count_pass(cnt, len);
	if (ret == 0 || ret == RL_CAS_LOST) {
		if (rl_cfg.action == RL_ACTION_DRY_RUN) {
			cnt->would_drop++;
			cnt->would_drop_bytes += len;
			sample(ctx, RL_EV_WOULD_DROP);
			return rl_count_pass(cnt, len);
		}
		cnt->limited++;
		sample(ctx, ret ? RL_EV_CAS_EXHAUSTED : RL_EV_LIMITED);
		return rl_count_drop(cnt, len);
	}
	if (rl_cfg.fail_policy == RL_FAIL_DROP) {
		sample(ctx, RL_EV_INSERT_FAIL);
		return rl_count_drop(cnt, len);
	}
	return rl_count_pass(cnt, len);
}

#include "rules.h"

/* Everything but untagged IPv4: VLAN tags, IPv6, what passes untouched, malformed frames. */
static __noinline int slow_path(struct xdp_md *ctx, struct rl_kcounters *cnt)
{
	struct hdr_cursor c = { .pos = (void *)(long)ctx->data,
				.end = (void *)(long)ctx->data_end };
	__u64 len = ctx->data_end - ctx->data;
	struct rl_key src;
	__u32 bad = 0;
	__be16 proto;
	int kind, nd;

	if (!cnt)
		return XDP_PASS;
	if (parse_eth(&c, &proto, &bad))
		goto malformed;
	if (proto == bpf_htons(ETH_P_IP)) {
		if (parse_ipv4(&c, &src, &bad))
			goto malformed;
		return decide(ctx, cnt, limit_v4(cnt, src.addr[3], len, 0), len);
	}
	if (proto != bpf_htons(ETH_P_IPV6)) {
		cnt->not_ip++;
		return rl_count_pass(cnt, len);
	}
	if (parse_ipv6(&c, &src, &bad, &nd))
		goto malformed;
	if (nd) {
		cnt->nd++;
		return rl_count_pass(cnt, len);
	}
	cnt->ipv6++;
	/*
	 * An IPv4-mapped source (::ffff:a.b.c.d) is that IPv4 host, a
	 * link-local one is keyed whole: see rl_key.h.
	 */
	if (!src.addr[0] && !src.addr[1] && src.addr[2] == bpf_htonl(0xffff))
		return decide(ctx, cnt, limit_v4(cnt, src.addr[3], len, 0), len);
	if ((src.addr[0] & bpf_htonl(RL_LL_MASK)) == bpf_htonl(RL_LL_PREFIX))
		kind = RL_KEY_LL;
	else
		kind = RL_KEY_V6;
	return decide(ctx, cnt, limit_lru6(cnt, &src, kind, rl_now(), packet_cost(len)), len);
malformed:
	if (bad < RL_BAD__COUNT)
		cnt->malformed[bad]++;
	if (rl_cfg.malformed_drop) {
		sample(ctx, RL_EV_MALFORMED + bad);
		return rl_count_drop(cnt, len);
	}
	return rl_count_pass(cnt, len);
}

SEC("xdp")
int xdp_ratelimit(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct rl_kcounters *cnt;
	__u32 zero = 0;

	cnt = bpf_map_lookup_elem(&rl_counters, &zero);
	if (!cnt)
		return XDP_PASS; /* cannot happen: a one-slot per-CPU array */
	/* Rules first, when there are any; -1: the default rule's packet. */
	if (rl_rules.n) {
		int v = rules_path(ctx, cnt);

		if (v >= 0)
			return v;
	}
	/* Untagged IPv4 with a whole header (options included): the straight line. */
	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->version != 4 ||
	    ip->ihl < 5 || (void *)ip + ip->ihl * 4 > end)
		return slow_path(ctx, cnt);
	return decide(ctx, cnt, limit_v4(cnt, ip->saddr, end - data, 1), end - data);
}

/*
 * Fleet sync's charge (user/lib/sync_kern.c runs it with BPF_PROG_TEST_RUN):
 * the remote units of entries [0, n) of rl_chg into the sources' states,
 * with rl_charge() in a compare-and-swap loop, so that it is atomic against
 * the packet path (a packet's step and a charge never overwrite each other).
 * Built for the same configuration as the XDP program: same parameters,
 * same clock. Entries of another generation (a set came in between) and
 * sources without state are skipped: nothing to charge.
 */
struct charge_loop {
	__u64 now;
	/* Counted here, written to the ctx at the end: the verifier refuses a ctx pointer kept. */
	__u32 charged, lost;
};

/*
 * A charge of @units to IPv4 source @addr in rl_sets4: as limit_sa4()'s hit,
 * a compare-and-swap of the slot word over the word read. 1: charged (or
 * already full, as charge_one() counts it); 0: no slot (evicted or never
 * seen): nothing to charge; -1: RL_CAS_TRIES races lost, as a packet gives up (not
 * RL_SYNC_CAS_TRIES: with the slot's read-back in each retry the window
 * algorithms pass the verifier's million instructions). A global function,
 * as limit_sa4(): inlined in charge_one()'s bpf_loop() callback, it is more
 * paths than the verifier explores.
 */
__noinline int charge_sa4(__be32 addr, __u64 now, __u64 units)
{
	__u32 bits = rl_sa_bits, h = rl_sa_hash(bpf_ntohl(addr), rl_cfg.gen), idx, i;
	__u64 id = rl_sa_id(h, rl_cfg.gen, bits), idm = rl_sa_id_mask(bits);
	__u64 sm = rl_sa_state_mask(bits), ref = rl_sa_ref(&rl_cfg.params, now), w, next;
	struct rl_sa_set *set;
	int t;

	idx = h & ((1U << bits) - 1);
	set = bpf_map_lookup_elem(&rl_sets4, &idx);
	if (!set)
		return 0;
	/* The slot once; then retries on it alone (fewer paths for the verifier). */
	for (i = 0; i < RL_SA_WAYS; i++)
		if ((*(volatile __u64 *)&set->w[i] & idm) == id)
			break;
	if (i >= RL_SA_WAYS)
		return 0;
	for (t = 0; t < RL_CAS_TRIES; t++) {
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) != id)
			return 0; /* evicted meanwhile */
		if (w & RL_SA_PEND) /* being inserted by the packet path */
			continue;
		/* As charge_one() on rl_state4: a full bucket or window counts as charged. */
		if (!rl_charge(&rl_cfg.params, rl_sa_get(w, ref, bits), now, units, &next) ||
		    __sync_val_compare_and_swap(&set->w[i], w, id | (next & sm)) == w)
			return 1;
	}
	return -1;
}

/*
 * charge_sa4() for rl_wide4: the charge in the lock of the source's way, as
 * wide_round() stores a pass; a full bucket or window (nothing to store)
 * when the identity word still reads as it did around the state.
 */
__noinline int charge_wide4(__be32 addr, __u64 now, __u64 units)
{
	__u64 id, idm = rl_sa_id_mask(rl_sa_bits), w, st, next;
	struct rl_sa_set *set;
	int i, t;

	set = wide_set(addr, &id);
	if (!set)
		return 0;
	i = wide_find(set, id, &w);
	if (i < 0 || i >= RL_SA_WIDE_WAYS)
		return 0;
	for (t = 0; t < RL_CAS_TRIES; t++) {
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) != id)
			return 0; /* evicted meanwhile */
		if (w & RL_SA_PEND)
			continue;
		st = *(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i];
		if (!rl_charge(&rl_cfg.params, st, now, units, &next)) {
			if (*(volatile __u64 *)&set->w[i] == w)
				return 1;
			continue;
		}
		if (__sync_val_compare_and_swap(&set->w[i], w, w | RL_SA_PEND) != w)
			continue;
		*(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i] = next;
		__sync_val_compare_and_swap(&set->w[i], w | RL_SA_PEND,
					    rl_sa_wide_next(w, rl_sa_bits));
		return 1;
	}
	return -1;
}

static long charge_one(__u64 i, void *data)
{
	struct charge_loop *lc = data;
	struct rl_state_key4 k4;
	struct rl_sync_chg *e;
	__u32 idx = (__u32)i;
	__u64 *st, old, next;
	int t;

	e = bpf_map_lookup_elem(&rl_chg, &idx);
	if (!e)
		return 1;
	if (e->k.gen != rl_cfg.gen)
		return 0;
	if (!e->k.src.addr[0] && !e->k.src.addr[1] && e->k.src.addr[2] == bpf_htonl(0xffff)) {
		if (rl_cfg.table4 != RL_TABLE4_LRU) {
			int r = rl_cfg.table4 == RL_TABLE4_WIDE ?
					charge_wide4(e->k.src.addr[3], lc->now, e->units) :
					charge_sa4(e->k.src.addr[3], lc->now, e->units);

			if (r > 0)
				lc->charged++;
			else if (r < 0)
				lc->lost++;
			return 0;
		}
		k4.addr = e->k.src.addr[3];
		k4.gen = e->k.gen;
		st = bpf_map_lookup_elem(&rl_state4, &k4);
	} else {
		st = bpf_map_lookup_elem(&rl_state6, &e->k);
	}
	if (!st)
		return 0;
	for (t = 0; t < RL_SYNC_CAS_TRIES; t++) {
		old = *(volatile __u64 *)st;
		if (!rl_charge(&rl_cfg.params, old, lc->now, e->units, &next) ||
		    __sync_val_compare_and_swap(st, old, next) == old) {
			lc->charged++;
			return 0;
		}
	}
	lc->lost++;
	return 0;
}

/*
 * Arm the sweep's timer, or take it over from an earlier load: userspace runs
 * this after each load (rl_prog_open()). The timer holds this program, not
 * the XDP one: once no interface runs the limiter any more, no XDP program
 * uses its maps, and its pins are found orphaned (cleanup, a new attach);
 * removing them frees the timer, this program and the maps.
 */
SEC("syscall")
int rl_sweep_arm(void *ctx)
{
	struct rl_sweep *sw;
	__u32 zero = 0;

	sw = bpf_map_lookup_elem(&rl_sweep, &zero);
	if (!sw)
		return -2; /* ENOENT */
	/* -EBUSY once armed by an earlier load: the callback is taken over below. */
	bpf_timer_init(&sw->t, &rl_sweep, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&sw->t, sweep_cb);
	sw->armed = 1;
	return bpf_timer_start(&sw->t, RL_SA_SWEEP_TICK_NS, 0);
}

SEC("syscall")
int rl_charge_prog(struct rl_sync_args *args)
{
	struct charge_loop lc = {};
	__u32 n = args->n;

	if (n > RL_SYNC_BATCH)
		return -22; /* EINVAL */
	lc.now = rl_now();
	bpf_loop(n, charge_one, &lc, 0);
	args->charged = lc.charged;
	args->lost = lc.lost;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
