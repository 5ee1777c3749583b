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
 * in (user/prog.c). Untagged IPv4 is straight-line code; everything else
 * (VLAN tags, IPv6, frames to pass untouched, malformed ones) goes through
 * slow_path(), out of line.
 */
#include "parsing.h"
#include "verdict.h"
#include "rl_events.h"
#include "rl_sync.h"

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

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_state_key4);
	__type(value, __u64);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
} rl_state4 SEC(".maps");

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

/* The agent's status (struct rl_sync_status of user/sync_kern.h); never read here. */
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
 * sync_count() needs no stack (slow_path() leaves a subprogram 32 bytes).
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

/* What inserting a new source needs, behind one pointer (a subprogram takes five registers). */
struct rl_miss {
	struct rl_kcounters *cnt;
	void *key; /* struct rl_state_key4 or struct rl_state_key */
	const struct rl_key *src; /* IPv6: the unmasked source */
	__u64 now, cost;
	int kind; /* enum rl_key_kind of an IPv6 source */
};

/*
 * A source without state: insert it. Subprograms rather than inlined, so
 * that the common path, a hit, is short straight-line code. Return as
 * rate_limit(), or RL_RETRY_LOOKUP when another CPU inserted the source first.
 */
static __noinline int new_source4(struct rl_miss *m)
{
	struct rl_state_key4 *k = m->key, pk;
	__u64 *prev = NULL, val;
	int pass;

	if (!k || !m->cnt) /* cannot happen; the verifier needs to know */
		return -1;
	if (rl_cfg.has_prev) {
		pk.addr = k->addr & rl_cfg.prev_mask4;
		pk.gen = rl_cfg.gen - 1;
		prev = bpf_map_lookup_elem(&rl_state4, &pk);
	}
	pass = first_step(m->cnt, prev, m->now, m->cost, &val);
	pass = inserted(m->cnt, bpf_map_update_elem(&rl_state4, k, &val, BPF_NOEXIST), pass);
	/* Counted here, not by the caller: its frame has no room for what that keeps live. */
	return counted(pass, m->cnt, &rl_sync4, k, m->cost);
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

static __noinline int new_source6(struct rl_miss *m)
{
	struct rl_state_key pk = {};
	__u64 *prev = NULL, val;
	int pass;

	if (!m->key || !m->src || !m->cnt)
		return -1;
	if (rl_cfg.has_prev) {
		mask_key6(&pk.src, m->src, m->kind, rl_cfg.prev_mask6);
		pk.gen = rl_cfg.gen - 1;
		prev = bpf_map_lookup_elem(&rl_state6, &pk);
	}
	pass = first_step(m->cnt, prev, m->now, m->cost, &val);
	pass = inserted(m->cnt, bpf_map_update_elem(&rl_state6, m->key, &val, BPF_NOEXIST), pass);
	return counted(pass, m->cnt, &rl_sync6, m->key, m->cost);
}

/* step_state()'s answer when it gave up after RL_CAS_TRIES lost races: over the limit. */
#define RL_CAS_LOST (-2)

/*
 * One packet against the state word @st: 1 within the limit, 0 over it (or
 * RL_CAS_LOST). A pass is counted for sync (@outer, @key) here, where the
 * loop keeps everything it needs live anyway.
 */
static __always_inline int step_state(struct rl_kcounters *cnt, __u64 *st, __u64 now, __u64 cost,
				      void *outer, const void *key)
{
	__u64 old, next;
	int i;

	for (i = 0; i < RL_CAS_TRIES; i++) {
		old = *(volatile __u64 *)st;
		if (!rl_step(&rl_cfg.params, old, now, cost, &next))
			return 0;
		if (__sync_val_compare_and_swap(st, old, next) == old)
			return counted(1, cnt, outer, key, cost);
		cnt->cas_retries++;
	}
	cnt->cas_exhausted++;
	return RL_CAS_LOST;
}

/* 1: within the limit; 0: over it; -1: the source could not be tracked. */
static __always_inline int limit_v4(struct rl_kcounters *cnt, __be32 saddr, __u64 len)
{
	struct rl_state_key4 k = { .addr = saddr & rl_cfg.mask4, .gen = rl_cfg.gen };
	__u64 now = rl_now(), cost = packet_cost(len);
	__u64 *st = bpf_map_lookup_elem(&rl_state4, &k);

	if (!st) {
		struct rl_miss m = { .cnt = cnt, .key = &k, .now = now, .cost = cost };
		int ret = new_source4(&m);

		if (ret != RL_RETRY_LOOKUP)
			return ret;
		st = bpf_map_lookup_elem(&rl_state4, &k);
		if (!st) {
			cnt->insert_failed++;
			return -1;
		}
	}
	return step_state(cnt, st, now, cost, &rl_sync4, &k);
}

static __always_inline int limit_v6(struct rl_kcounters *cnt, const struct rl_key *src, int kind,
				    __u64 len)
{
	struct rl_state_key k = { .gen = rl_cfg.gen };
	__u64 now = rl_now(), cost = packet_cost(len);
	__u64 *st;

	mask_key6(&k.src, src, kind, rl_cfg.mask6);
	st = bpf_map_lookup_elem(&rl_state6, &k);
	if (!st) {
		struct rl_miss m = {
			.cnt = cnt, .key = &k, .src = src, .now = now, .cost = cost, .kind = kind
		};
		int ret = new_source6(&m);

		if (ret != RL_RETRY_LOOKUP)
			return ret;
		st = bpf_map_lookup_elem(&rl_state6, &k);
		if (!st) {
			cnt->insert_failed++;
			return -1;
		}
	}
	return step_state(cnt, st, now, cost, &rl_sync6, &k);
}

/* The sample's clock: always the precise one (a coarse tick is too rough to read). */
static __always_inline __u64 sample_now(void)
{
	if (rl_test_clock)
		return rl_now();
	return bpf_ktime_get_ns();
}

/*
 * A dropped packet, with sampling on: is it picked? 1 in one_in (a per-CPU
 * countdown: no division), then within the cap of the current second of
 * the clock: the shared word holds the second (now / 10^9, from the
 * reciprocal of rl_window(): exact, no division) in its high 32 bits and
 * the samples sent in it in the low 32; compare-and-swap as step_state(),
 * so the cap is exact across CPUs (RL_CAS_TRIES lost races count as over
 * it). Not rl_fixed_step() itself: its general packing spills registers,
 * and below slow_path() only 32 bytes of stack are left. Returns the time
 * of the pick, or 0. Out of line, as sample_send(): only the drop paths of
 * a program being watched call them, and apart (rather than one inside the
 * other) they fit the stack.
 */
static __noinline __u64 sample_pick(void)
{
	struct rl_evctl *ev = &rl_evctl;
	__u64 now, sec, old, next, e;
	struct rl_evcpu *pc;
	__u32 zero = 0;
	int i;

	pc = bpf_map_lookup_elem(&rl_evcpu, &zero);
	if (!pc)
		return 0;
	if (pc->skip) {
		pc->skip--;
		return 0;
	}
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
 * switch, one load and a test.
 */
static __always_inline void sample(struct xdp_md *ctx, __u32 reason)
{
	__u64 now;
	int ret;

	if (!*(volatile __u32 *)&rl_evctl.on)
		return;
	now = sample_pick();
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
		return decide(ctx, cnt, limit_v4(cnt, src.addr[3], len), len);
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
		return decide(ctx, cnt, limit_v4(cnt, src.addr[3], len), len);
	if ((src.addr[0] & bpf_htonl(RL_LL_MASK)) == bpf_htonl(RL_LL_PREFIX))
		kind = RL_KEY_LL;
	else
		kind = RL_KEY_V6;
	return decide(ctx, cnt, limit_v6(cnt, &src, kind, len), len);
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
	return decide(ctx, cnt, limit_v4(cnt, ip->saddr, end - data), end - data);
}

/*
 * Fleet sync's charge (user/sync_kern.c runs it with BPF_PROG_TEST_RUN):
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
