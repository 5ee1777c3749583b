/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every map of the XDP program, and the globals libbpf makes maps of: the
 * configuration (.rodata.cfg), the load-time switches (.rodata) and the
 * events reader's switch (.data.evctl). One place for what userspace finds
 * by name in the skeleton (user/lib/), so that no map is defined next to
 * the code that happens to use it first. The order of the definitions is
 * the skeleton's: keep it.
 *
 * Owns: rl_cfg, rl_rules, rl_test_clock, rl_sa_bits, rl_sa6_bits, rl_dport_bits, rl_sync_zero,
 * rl_admit_bits, rl_evctl, rl_hot and every SEC(".maps") map. Includes only include/ headers and
 * libbpf's: every other header of bpf/ may include it, and it includes none
 * of them.
 */
#ifndef RL_BPF_MAPS_H
#define RL_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_events.h"
#include "rl_sync.h"
#include "rl_sa.h"
#include "rl_sa6.h"
#include "rl_block.h"
#include "rl_rules.h"
#include "rl_hot.h"
#include "rl_agg.h"

/*
 * The configuration. Not const: the compiler must load it rather than fold
 * the zeros it is declared with; libbpf makes every ".rodata.*" section a
 * read-only map and freezes it at load, which is what lets the verifier
 * treat the loads as constants.
 */
struct rl_config rl_cfg SEC(".rodata.cfg");

/*
 * The rule set (bpf/rules.h), but "default": compiled in as rl_cfg is, and
 * not const for the same reason.
 */
struct rl_rules_cfg rl_rules SEC(".rodata.cfg");

/*
 * Load-time switch for tests: when set, the packet clock is read from the
 * rl_clock map instead of bpf_ktime_get_ns(), so a test chooses each packet's
 * time. In the production program the branch is dead code.
 */
const volatile __u8 rl_test_clock = 0;

/*
 * Loaded as xdp.frags (BPF_F_XDP_HAS_FRAGS, where the kernel has it: a
 * frame may span several buffers, jumbo frames): a frame's length is
 * bpf_xdp_get_buff_len()'s, not the first buffer's (bpf/clock.h).
 */
const volatile __u8 rl_frags = 0;

/* log2 of rl_sets4's max_entries, set by userspace with the table's size. */
const volatile __u32 rl_sa_bits = RL_SA_BITS_MIN;

/*
 * The destination ports some --dport rule names, per protocol (rl_rules.h,
 * RL_DPORT_WORDS): made by userspace from rl_rules at load (rl_dport_bits_of()
 * of user/lib/rulemaps.h), read by rules_may_match() before rl_ports.
 */
const volatile __u64 rl_dport_bits[2][RL_DPORT_WORDS] = {};

/* log2 of rl_sets6's max_entries, as rl_sa_bits. */
const volatile __u32 rl_sa6_bits = RL_SA6_BITS_MIN;

/*
 * Zero, as a key and as the value a counter starts from: read from here,
 * sync_count() and sample() need no stack for it.
 */
const volatile __u64 rl_sync_zero = 0;

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

/* The sweep of rl_sets4: a BPF timer, armed by every load's rl_sweep_arm (bpf/sweep.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_sweep);
	__uint(max_entries, 1);
} rl_sweep SEC(".maps");

/*
 * IPv6 sources: the set-associative table of include/rl_sa6.h
 * (bpf/table6_sa.h), mmapable as rl_sets4 is, sized by userspace
 * (rl_sa6_bits).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_sa6_set);
	__uint(max_entries, 1U << RL_SA6_BITS_MIN);
} rl_sets6 SEC(".maps");

/* A copy of rl_cfg for status and bpftool; the packet path never reads it (the sweep does). */
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

/* The test clock (rl_test_clock; bpf/clock.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_clock SEC(".maps");

/* Drop samples (rl_events.h, bpf/sample.h): the ring, the reader's switch, the per-CPU countdown. */
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
 * Fleet sync counting (include/rl_sync.h, bpf/sync.h): the units each
 * source passed since the agent last drained them. Sized by the loader
 * while counting is on, one entry otherwise (the code that reads them is not
 * in the program then). rl_sync_slots has a counter word per slot of the
 * set tables (RL_SA_WAYS << rl_sa_bits, a set's in one line:
 * rl_sync_slot()), rl_sync_dirty a bit per counter word. Both are mmapable:
 * the agent drains them through its mapping.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_sync_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_sync_dirty SEC(".maps");

/*
 * The keyed counters, under their state's key: IPv4 sources of the LRU
 * table, IPv6 sources, sources of limit rules. LRU, so that sources no
 * longer counted make room by themselves (the agent zeroes a counter, it
 * never deletes one).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_state_key4);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_sync4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_state_key);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_sync6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_rstate_key);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_syncr SEC(".maps");

/* The agent's status (struct rl_sync_status of user/lib/sync_kern.h); never read here. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, RL_SYNC_STATUS_SIZE);
	__uint(max_entries, 1);
} rl_sync_status SEC(".maps");

/*
 * The charge and drain programs' batch (bpf/charge.h, bpf/sync.h; not
 * pinned: each agent load has its own).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_sync_chg);
	__uint(max_entries, RL_SYNC_BATCH);
} rl_chg SEC(".maps");

/*
 * Rules (bpf/rules.h). Two pairs of prefix tries: a change fills the pair
 * not in use, loads a program bound to it and swaps it in, then empties the
 * other (user/lib/rulemaps.c). Not preallocated (LPM tries never are): sized
 * for the most prefixes.
 */
#define RL_LPM_MAP(name, key_t)                       \
	struct {                                      \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);  \
		__type(key, key_t);                   \
		__type(value, struct rl_lpm_val);     \
		__uint(max_entries, RL_MAX_PREFIXES); \
		__uint(map_flags, BPF_F_NO_PREALLOC); \
	} name SEC(".maps")

RL_LPM_MAP(rl_src4a, struct rl_lpm4);
RL_LPM_MAP(rl_src6a, struct rl_lpm6);
RL_LPM_MAP(rl_src4b, struct rl_lpm4);
RL_LPM_MAP(rl_src6b, struct rl_lpm6);

/* The port table (RL_PORT_TABLE); a change fills the half of the pair not in use. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, RL_PORT_TABLE);
} rl_ports SEC(".maps");

/* The networks that hold a source prefix (RL_PFX_TABLE); a change fills its pair's half. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, RL_PFX_TABLE);
} rl_pfx SEC(".maps");

/* Per-source state of limit rules, keyed by rule slot and generation. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_rstate_key);
	__type(value, struct rl_block_state);
	__uint(max_entries, RL_RULE_MAX_SOURCES);
} rl_rstate SEC(".maps");

/* Per-rule counters, by slot ("default"'s are rl_counters). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_rule_counters);
	__uint(max_entries, RL_RULE_SLOTS);
} rl_rcnt SEC(".maps");

/* A copy of rl_rules, for rule list, the next load and bpftool; the program never reads it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_rules_cfg);
	__uint(max_entries, 1);
} rl_rcfg SEC(".maps");

/*
 * The states of the levels above the source (include/rl_agg.h,
 * bpf/aggregate.h): prefix aggregates, the interface, new sources beyond
 * the admission cap and the cap itself, of the default policy and of limit
 * rules. One entry while no level is on (a feature map, user/lib/prog.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_agg_key);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_agg SEC(".maps");

/* The admission cap's refusals (include/rl_agg.h, bpf/admission.h): 2^rl_admit_bits words. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_admit SEC(".maps");

/* log2 of rl_admit's entries while the admission cap is on, set by userspace. */
const volatile __u32 rl_admit_bits = RL_ADMIT_BITS_MIN;

/*
 * The limited sources, for top (include/rl_hot.h, bpf/hot.h): a global in a
 * section of its own, as rl_evctl, so a map of its own (pinned as rl_hot,
 * reused by every program that set loads) indexed with no lookup and no
 * stack. Userspace reads it whole with one lookup.
 */
struct rl_hot rl_hot SEC(".data.hot");

#endif /* RL_BPF_MAPS_H */
