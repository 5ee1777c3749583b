// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark programs for BPF_PROG_TEST_RUN (bench/micro.c), never attached.
 *
 * bench_driver runs once per repetition: it rewrites the frame's source
 * address from a repetition counter (so that N distinct sources are cycled
 * through) and tail-calls the program under test in bench_jmp[0]. A driver
 * whose slot holds bench_nop measures the driver alone; its cost is
 * subtracted from every other measurement.
 *
 * The driver also timestamps every BENCH_SAMPLE-th repetition, which gives
 * the time per repetition with sub-ns resolution (test_run's duration is
 * whole ns) and without the fixed cost of the test_run call itself (here
 * several ms: the call changes the XDP dispatcher).
 *
 * The reference programs, each with the parser of xdp_ratelimit's slow path
 * (parsing.h: VLAN tags, IPv6 and IPv4) and a 16-byte source key (an IPv4
 * source IPv4-mapped), but one:
 *	ref_parse:  parse and drop;
 *	ref_lookup:    (b) one LRU-hash lookup, an insert on a miss, one atomic
 *		       add: the floor of any per-source limiter;
 *	ref_gcra:      (c) ref_lookup plus a clock read and one GCRA
 *		       compare-and-swap: a minimal real limiter, as the
 *		       benchmark's issue defines it (its value holds (b)'s
 *		       counter beside the TAT);
 *	ref_gcra_lean: (c') ref_gcra without ref_lookup's atomic add: "the
 *		       minimal GCRA program", the reference of the goals;
 *	ref_gcra_lean4: (c'4) (c') keyed by the 4-byte IPv4 address, as
 *		       xdp_ratelimit's IPv4 table is by an 8-byte key: what
 *		       the key size alone is worth;
 *	ref_clock:     (k) parse and one read of the precise clock, then drop:
 *		       what every limiter reading the clock per packet pays
 *		       before its table (paths, issue #30);
 *	ref_clock_cas: (k') (k) and one GCRA compare-and-swap on a single
 *		       word, no table: what an exact limiter pays at least,
 *		       whatever its table, on one source.
 */
#include "bench_ref.h"

/* The GCRA of (c) and (c'): emission interval and tolerance in ns, set before load. */
const volatile __u64 ref_interval_ns = 10;
const volatile __u64 ref_tau_ns = 10000000;

/* Every 4096th repetition reads the clock: ~0.01 ns per repetition. */
#define BENCH_SAMPLE_MASK 4095

/* Written by userspace through the skeleton's mmaped .bss between runs. */
__u64 bench_reps; /* repetitions so far: the source counter */
__u64 bench_t0, bench_n0; /* first sample of a run (userspace zeroes bench_t0) */
__u64 bench_t1, bench_n1; /* last sample */
__u64 bench_tail_fail; /* tail calls that did not happen */
__u32 bench_mask; /* sources = bench_mask + 1 (a power of two) */
__u32 bench_base; /* first source word, host order */
__u32 bench_off; /* offset of the 32-bit source word in the frame */
__u32 bench_mul = 1; /* odd: the order in which the sources come (see micro.c) */

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_jmp SEC(".maps");

/* One LRU map per reference; max_entries is set before load. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_key);
	__type(value, __u64);
	__uint(max_entries, 1);
} ref_lookup_map SEC(".maps");

/* (c)'s value: (b)'s per-source counter beside the GCRA's TAT. */
struct ref_val {
	__u64 tat;
	__u64 packets;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_key);
	__type(value, struct ref_val);
	__uint(max_entries, 1);
} ref_gcra_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_key);
	__type(value, __u64);
	__uint(max_entries, 1);
} ref_gcra_lean_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __be32);
	__type(value, __u64);
	__uint(max_entries, 1);
} ref_gcra_lean4_map SEC(".maps");

SEC("xdp")
int bench_driver(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 off = bench_off, *word;
	__u64 n = bench_reps;

	/*
	 * Only test_run on one CPU at a time runs this program: a plain
	 * increment is exact and keeps the driver cheap.
	 */
	bench_reps = n + 1;
	if (!(n & BENCH_SAMPLE_MASK)) {
		__u64 t = bpf_ktime_get_ns();

		if (!bench_t0) {
			bench_t0 = t;
			bench_n0 = n;
		}
		bench_t1 = t;
		bench_n1 = n;
	}
	if (off > 128)
		return XDP_ABORTED;
	word = data + off;
	if ((void *)(word + 1) > end)
		return XDP_ABORTED;
	/* An odd multiplier permutes 0..mask: every source once per cycle. */
	*word = bpf_htonl(bench_base + (((__u32)n * bench_mul) & bench_mask));
	bpf_tail_call(ctx, &bench_jmp, 0);
	bench_tail_fail++;
	return XDP_ABORTED;
}

/*
 * bench_restore: the driver for programs that rewrite the frame (a SYN
 * answered with its SYN-ACK, in place: bench/syncookie.c). test_run runs
 * every repetition on the one buffer, so each starts by writing the frame
 * back from bench_tmpl (bench_tmpl_len bytes, the frame's length), then
 * tail-calls bench_jmp[0]; it samples the clock as bench_driver does.
 */
__u64 bench_tmpl[16];
__u32 bench_tmpl_len;

SEC("xdp")
int bench_restore(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u64 n = bench_reps;

	bench_reps = n + 1;
	if (!(n & BENCH_SAMPLE_MASK)) {
		__u64 t = bpf_ktime_get_ns();

		if (!bench_t0) {
			bench_t0 = t;
			bench_n0 = n;
		}
		bench_t1 = t;
		bench_n1 = n;
	}
	if ((__u64)(end - data) != bench_tmpl_len)
		return XDP_ABORTED;
#pragma unroll
	for (int i = 0; i < 16; i++) {
		if (i * 8 + 8 > bench_tmpl_len || data + i * 8 + 8 > end)
			break;
		((__u64 *)data)[i] = bench_tmpl[i];
	}
	bpf_tail_call(ctx, &bench_jmp, 0);
	bench_tail_fail++;
	return XDP_ABORTED;
}

SEC("xdp")
int bench_nop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* Where ref_clock's reads go: a helper's result the compiler must keep. */
__u64 ref_clock_sink;
/* ref_clock_cas's state: one source's TAT, with no table to find it in. */
__u64 ref_cas_tat;

/*
 * (a), (k) and (k'): the parse, with one read of the precise clock after it
 * when @clock, and (@clock 2) one GCRA compare-and-swap of ref_cas_tat.
 */
static __always_inline int parse_drop(struct xdp_md *ctx, const int clock)
{
	struct rl_key key;
	__u64 now;

	if (ref_key(ctx, &key))
		return XDP_PASS;
	if (!clock)
		return XDP_DROP;
	now = bpf_ktime_get_ns();
	if (clock == 1) {
		ref_clock_sink = now;
		return XDP_DROP;
	}
	return ref_gcra_cas(&ref_cas_tat, now, ref_interval_ns, ref_tau_ns);
}

SEC("xdp")
int ref_parse(struct xdp_md *ctx)
{
	return parse_drop(ctx, 0);
}

SEC("xdp")
int ref_clock(struct xdp_md *ctx)
{
	return parse_drop(ctx, 1);
}

SEC("xdp")
int ref_clock_cas(struct xdp_md *ctx)
{
	return parse_drop(ctx, 2);
}

SEC("xdp")
int ref_lookup(struct xdp_md *ctx)
{
	struct rl_key key;
	__u64 *v, one = 1;

	if (ref_key(ctx, &key))
		return XDP_PASS;
	v = bpf_map_lookup_elem(&ref_lookup_map, &key);
	if (!v) {
		bpf_map_update_elem(&ref_lookup_map, &key, &one, BPF_NOEXIST);
		return XDP_DROP;
	}
	__sync_fetch_and_add(v, 1);
	return XDP_DROP;
}

SEC("xdp")
int ref_gcra(struct xdp_md *ctx)
{
	struct ref_val *v, fresh = { .packets = 1 };
	struct rl_key key;
	__u64 now;

	if (ref_key(ctx, &key))
		return XDP_PASS;
	now = bpf_ktime_get_ns();
	v = bpf_map_lookup_elem(&ref_gcra_map, &key);
	if (!v) {
		fresh.tat = now + ref_interval_ns;
		bpf_map_update_elem(&ref_gcra_map, &key, &fresh, BPF_NOEXIST);
		return XDP_PASS;
	}
	__sync_fetch_and_add(&v->packets, 1);
	return ref_gcra_cas(&v->tat, now, ref_interval_ns, ref_tau_ns);
}

SEC("xdp")
int ref_gcra_lean(struct xdp_md *ctx)
{
	struct rl_key key;

	if (ref_key(ctx, &key))
		return XDP_PASS;
	return ref_gcra_on(&ref_gcra_lean_map, &key, ref_interval_ns, ref_tau_ns);
}

SEC("xdp")
int ref_gcra_lean4(struct xdp_md *ctx)
{
	struct rl_key key;
	__be32 addr;

	/* The same parse as (c'); IPv4 only (the IPv4-mapped key's last word). */
	if (ref_key(ctx, &key) || key.addr[0] || key.addr[1] || key.addr[2] != bpf_htonl(0xffff))
		return XDP_PASS;
	addr = key.addr[3];
	return ref_gcra_on(&ref_gcra_lean4_map, &addr, ref_interval_ns, ref_tau_ns);
}

char LICENSE[] SEC("license") = "GPL";
