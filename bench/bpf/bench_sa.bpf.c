// SPDX-License-Identifier: GPL-2.0-only
/*
 * The set-associative IPv4 table study (issue #11; bench/setassoc.c runs it).
 *
 * Two programs, identical but for where an IPv4 source's state lives:
 *	sa_lru: an LRU hash, key { masked address, generation }, value the
 *		64-bit rate state; lookup, on a miss an insert with
 *		BPF_NOEXIST (a lookup again on -EEXIST), then rl_step() in a
 *		compare-and-swap loop;
 *	sa_set: an array of 64-byte sets of eight 8-byte slot words (layout in
 *		bench_sa.h); one inlined array lookup, tags compared inline, no
 *		helper call but the clock on a hit.
 * Both parse with the product's parser, read the clock once, run rl_step()
 * with parameters fixed before load, and count packets and bytes by verdict
 * in a per-CPU array. Each can be tail-called by bench_ref's driver.
 *
 * Why one word per slot
 * ---------------------
 * A source's identity and its state are in the same 64-bit word, so every
 * change of a slot is one compare-and-swap of that word, and a CAS computed
 * from a word read as (A, s) succeeds only if the slot still holds exactly
 * (A, s): an update can never land in a slot that was taken over by another
 * source. If the word went away and came back identical (A evicted and
 * re-inserted with state s), the update is still right: it was computed from
 * A's current state. The price is the state's width: m = 28 + set_bits bits
 * (45 with 2^17 sets). The state is a TAT kept mod 2^m and read back as the
 * value nearest vt(now) (sa_state_get()), which is exact while a stored TAT
 * lies within 2^(m-1) vt of the clock: ahead by at most tau + cost (the
 * loader must refuse policies with tau + cost + clock skew >= 2^(m-2)), and
 * behind by less than 2^(m-1) vt (2^44 ns, 4.9 hours, with 2^17 sets at 1 vt
 * per ns). A source idle longer than that, whose slot nothing evicted, needs
 * a sweep (userspace, through the mmaped array, by the same CAS) that
 * rewrites a state found behind the clock to vt(now): for these algorithms
 * any TAT behind the clock means the same full bucket, so the sweep changes
 * no decision. The generation is kept mod 4 and salts the hash, so entries
 * of generation g must be gone (swept) before g + 4 is used.
 *
 * The protocol (bounded: RL_CAS_TRIES attempts, then the packet is dropped
 * and counted as given up, as xdp_ratelimit does)
 * ------------
 * hit:    read the set's words; the first whose used/generation/tag bits
 *         match is the source. Pending: an insertion of this source is
 *         under way on another CPU, try again. Otherwise rl_step() on its
 *         state; a drop writes nothing; a pass CASes (id | next) over the
 *         word read; a failed CAS starts over from the read of the set.
 * miss:   the victim is an empty slot, else the slot whose state is least
 *         ahead of the clock (never a pending one): the source that has
 *         waited longest since its last passed packet, and the one whose
 *         loss changes least (a TAT behind the clock is a full bucket: if the
 *         policy starts sources full, evicting it loses nothing at all).
 *         1. CAS the victim's word to (id | pending); a failure starts over.
 *         2. Read the set's other words again. If one of them holds this
 *            source (pending or not), CAS ours back to empty and start over.
 *         3. Otherwise CAS ours to (id | state after this packet): published.
 * No source is ever published twice in a set. Suppose copies X1, X2 of one
 * source were both published; their pending CASes (1) are ordered, say X1's
 * first. BPF's compare-and-swap is fully ordered, so X2's re-read (2) comes
 * after X1's claim. From that claim until X1 is published, X1 is pending, and
 * nothing but its own inserter writes a pending word (victims are never
 * pending, and a CAS of an update needs a word read as not pending). So X2's
 * re-read finds X1 (pending or published), unless X1 was already undone or,
 * once published, evicted; in the first case X1 is never published, in the
 * second X1 and X2 are not published at the same time. Either way X2 is
 * undone: a contradiction. Two inserters that each see the other both undo
 * and start over, which costs a retry and breaks nothing.
 * Together: every passed packet is counted in exactly one slot's state, the
 * source's single copy, by a CAS on a word holding that source; an eviction
 * removes a copy whole. bench/setassoc.c's exact test checks both, with the
 * test-only accounting below: the passes of each source equal, exactly, the
 * packets its copies' states hold, those evicted included.
 */
#include "parsing.h"
#include "sa_set.h" /* the product's steps on a set: the study runs the same code */
#include "rl_algo.h"
#include "bench_sa.h"

/* The policy, from userspace (rl_params of a built configuration). */
const volatile __u32 sa_algo = RL_ALGO_GCRA;
const volatile __u32 sa_bytes = 0;
const volatile __u64 sa_vt_mult = 0;
const volatile __u64 sa_vt_int = 1;
const volatile __u64 sa_unit_cost = 10;
const volatile __u64 sa_tau = 10000000000ULL;
const volatile __u64 sa_ahead_max = 1ULL << 41;
const volatile __u64 sa_initial_ahead = 0;
const volatile __u32 sa_gen = 1;
const volatile __be32 sa_mask4 = 0xffffffff;
/* log2 of sa_table's max_entries (set together by userspace). */
const volatile __u32 sa_set_bits = SA_SET_BITS_MIN;
/* 1: now is sa_now, and the test accounting below runs (bench/setassoc.c's tests). */
const volatile __u32 sa_test = 0;
/*
 * Tests only: every source in set 0, so that the driver's consecutive sources
 * fight over one set's eight slots. Sources then differ only by their tags,
 * which the test checks are distinct.
 */
const volatile __u32 sa_test_one_set = 0;

__u64 sa_now;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct sa_lkey);
	__type(value, __u64);
	__uint(max_entries, 1);
} sa_lru SEC(".maps");

/* Mmapable: its values start on a page, so every set is one cache line. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct sa_set);
	__uint(max_entries, 1);
} sa_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct sa_counters);
	__uint(max_entries, 1);
} sa_cnt SEC(".maps");

/* Test accounting (bench_sa.h), only with sa_test. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sa_test_acct);
	__uint(max_entries, 1);
} sa_acct SEC(".maps");

static __always_inline void sa_params(struct rl_params *p)
{
	__builtin_memset(p, 0, sizeof(*p));
	p->algo = sa_algo;
	p->bytes = sa_bytes;
	p->vt_mult = sa_vt_mult;
	p->vt_int = sa_vt_int;
	p->unit_cost = sa_unit_cost;
	p->tau = sa_tau;
	p->ahead_max = sa_ahead_max;
	p->initial_ahead = sa_initial_ahead;
}

static __always_inline __u64 sa_clock(void)
{
	return sa_test ? sa_now : bpf_ktime_get_ns();
}

/* The masked IPv4 source and the frame's length; -1 if not IPv4. */
static __always_inline int sa_source(struct xdp_md *ctx, __be32 *addr, __u32 *len)
{
	struct hdr_cursor c = { .pos = (void *)(long)ctx->data,
				.end = (void *)(long)ctx->data_end };
	struct rl_key key;
	__u32 bad = 0;
	__be16 proto;

	if (parse_eth(&c, &proto, &bad) || proto != bpf_htons(ETH_P_IP) ||
	    parse_ipv4(&c, &key, &bad))
		return -1;
	*addr = key.addr[3] & sa_mask4;
	*len = (__u32)(c.end - (void *)(long)ctx->data);
	return 0;
}

/* The one exit of both programs: two per-CPU counter updates (and the rare ones). */
static __always_inline int sa_count(__u32 verdict, __u32 len, __u32 inserted, __u32 retries)
{
	struct sa_counters *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&sa_cnt, &zero);
	if (c && verdict < SA_V__COUNT) {
		c->packets[verdict]++;
		c->bytes[verdict] += len;
		if (inserted)
			c->inserts++;
		if (retries)
			c->retries += retries;
	}
	return verdict == SA_V_PASS ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int sa_lru_prog(struct xdp_md *ctx)
{
	__u32 len, verdict = SA_V_GAVEUP, inserted = 0, retries = 0;
	__u64 *v, now, st, next, cost;
	struct rl_params p;
	struct sa_lkey k;

	if (sa_source(ctx, &k.addr, &len))
		return XDP_PASS;
	k.gen = sa_gen;
	sa_params(&p);
	now = sa_clock();
	cost = p.bytes ? len : 1;
	v = bpf_map_lookup_elem(&sa_lru, &k);
	if (!v) {
		st = rl_initial_state(&p, now);
		verdict = rl_step(&p, st, now, cost, &next) ? SA_V_PASS : SA_V_DROP;
		if (verdict != SA_V_PASS)
			next = st;
		if (!bpf_map_update_elem(&sa_lru, &k, &next, BPF_NOEXIST))
			return sa_count(verdict, len, 1, 0);
		/* -EEXIST: another CPU inserted it first; count against its entry. */
		verdict = SA_V_GAVEUP;
		retries = 1;
		v = bpf_map_lookup_elem(&sa_lru, &k);
		if (!v)
			return sa_count(verdict, len, inserted, retries);
	}
	for (int i = 0; i < RL_CAS_TRIES; i++) {
		st = *(volatile __u64 *)v;
		if (!rl_step(&p, st, now, cost, &next)) {
			verdict = SA_V_DROP;
			break;
		}
		if (__sync_val_compare_and_swap(v, st, next) == st) {
			verdict = SA_V_PASS;
			break;
		}
		retries++;
	}
	return sa_count(verdict, len, inserted, retries);
}

/*
 * Test accounting of a pass and of an eviction (compiled out unless sa_test),
 * by the tag's low bits: the tests pick sources of one set whose tags differ
 * there.
 */
static __always_inline void sa_acct_pass(__u32 slot)
{
	struct sa_test_acct *a;
	__u32 zero = 0;

	if (!sa_test)
		return;
	a = bpf_map_lookup_elem(&sa_acct, &zero);
	if (a)
		__sync_fetch_and_add(&a->passed[slot % SA_TEST_SOURCES], 1);
}

/* After a pass: the set holding the source published twice, which the protocol excludes. */
static __always_inline void sa_acct_twins(struct sa_set *set, __u64 id, __u64 idm)
{
	struct sa_test_acct *a;
	__u64 n = 0;
	__u32 zero = 0;

	if (!sa_test)
		return;
	/* Branch-free: a branch per slot on every exit path is too many states to verify. */
	for (int i = 0; i < SA_WAYS; i++) {
		__u64 w = *(volatile __u64 *)&set->w[i], x = (w & idm) ^ id;

		n += (((x | -x) >> 63) ^ 1) & (((w >> 62) & 1) ^ 1);
	}
	a = bpf_map_lookup_elem(&sa_acct, &zero);
	if (a && n > 1)
		__sync_fetch_and_add(&a->twins, 1);
}

static __always_inline void sa_acct_evict(__u64 w, __u64 vt, __u32 bits)
{
	struct sa_test_acct *a;
	__u32 zero = 0, i;
	__u64 tat;

	if (!sa_test || !w)
		return;
	a = bpf_map_lookup_elem(&sa_acct, &zero);
	if (!a)
		return;
	i = (__u32)(w >> (SA_STATE_BASE + bits)) % SA_TEST_SOURCES;
	tat = sa_state_get(w, vt, bits);
	__sync_fetch_and_add(&a->evicted_vt[i], tat - vt - sa_initial_ahead);
	__sync_fetch_and_add(&a->evictions[i], 1);
}

SEC("xdp")
int sa_set_prog(struct xdp_md *ctx)
{
	__u32 len, verdict = SA_V_GAVEUP, inserted = 0, retries = 0, bits = sa_set_bits;
	__u64 now, vt, cost, id, idm, sm, w, next;
	struct rl_params p;
	struct sa_set *set;
	__u32 h, idx;
	__be32 addr;
	int t;

	if (sa_source(ctx, &addr, &len))
		return XDP_PASS;
	sa_params(&p);
	now = sa_clock();
	cost = p.bytes ? len : 1;
	h = sa_hash(bpf_ntohl(addr), sa_gen);
	idx = sa_test && sa_test_one_set ? 0 : h & ((1U << bits) - 1);
	id = sa_id(h, sa_gen, bits);
	idm = sa_id_mask(bits);
	sm = sa_state_mask(bits);
	set = bpf_map_lookup_elem(&sa_table, &idx);
	if (!set)
		return sa_count(verdict, len, 0, 0);
	vt = rl_vt(&p, now);
	for (t = 0; t < RL_CAS_TRIES; t++) {
		int hit, victim, twin;
		__u64 vw, st;

		SA_FIND(set, id, idm, hit, w);
		if (hit >= 0) {
			if (w & SA_PEND) {
				retries++;
				continue;
			}
			st = sa_state_get(w, vt, bits);
			if (!rl_step(&p, st, now, cost, &next)) {
				verdict = SA_V_DROP;
				break;
			}
			if (__sync_val_compare_and_swap(&set->w[hit], w, id | (next & sm)) == w) {
				verdict = SA_V_PASS;
				break;
			}
			retries++;
			continue;
		}
		/* Miss: an empty slot, else the one least ahead of the clock. */
		SA_VICTIM(set, vt, bits, victim, vw);
		if (victim < 0 || victim >= SA_WAYS) {
			retries++;
			continue;
		}
		if (__sync_val_compare_and_swap(&set->w[victim], vw, id | SA_PEND) != vw) {
			retries++;
			continue;
		}
		sa_acct_evict(vw, vt, bits);
		SA_TWIN(set, victim, id, idm, twin);
		if (twin) {
			/* Another copy is being inserted or is in: ours goes. */
			__sync_val_compare_and_swap(&set->w[victim], id | SA_PEND, 0);
			retries++;
			continue;
		}
		st = rl_initial_state(&p, now);
		verdict = rl_step(&p, st, now, cost, &next) ? SA_V_PASS : SA_V_DROP;
		if (verdict != SA_V_PASS)
			next = st;
		/* Only this CPU writes a pending word: the CAS orders, it cannot fail. */
		__sync_val_compare_and_swap(&set->w[victim], id | SA_PEND, id | (next & sm));
		inserted = 1;
		break;
	}
	if (verdict == SA_V_PASS) {
		sa_acct_pass(h >> bits);
		sa_acct_twins(set, id, idm);
	}
	return sa_count(verdict, len, inserted, retries);
}

char LICENSE[] SEC("license") = "GPL";
