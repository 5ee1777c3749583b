/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The limited sources: a small table the XDP program writes the sources it
 * drops over their limit into (or would drop, in dry-run), so that top finds
 * the sources over their limit without walking every tracked source
 * (issue #30). Shared by the program (bpf/hot.h) and userspace
 * (user/lib/hot.c).
 *
 * One entry per hash of the source: a drop writes its source's entry only
 * when it holds another source, so a flood of one source costs one read of
 * one cache line per drop and no write after its first. Two limited sources
 * with the same hash take the entry in turn. An entry is a hint, not a
 * state: top looks the source up in its table and shows what it finds there,
 * and an entry two CPUs wrote at once (a mix of two sources) finds nothing.
 */
#ifndef RL_HOT_H
#define RL_HOT_H

#include <linux/types.h>
#include "rl_algo.h"
#include "rl_key.h"

/*
 * 4096 entries, 96 KiB: room for the limited sources of a flood from a few
 * thousand, read by top with one syscall. A flood from more sources than
 * that fills every entry with sources that are all over their limit.
 */
#define RL_HOT_BITS    12
#define RL_HOT_ENTRIES (1U << RL_HOT_BITS)

struct rl_hot_ent {
	struct rl_key src; /* masked as its table keys it (IPv4 as IPv4-mapped IPv6) */
	/*
	 * Which table: 0 the default policy's, else a limit rule's slot + 1;
	 * and the generation of the policy (of the rule) that dropped it, low
	 * 16 bits. 0 with an all-zero src: never written.
	 */
	__u16 rule;
	__u16 gen;
	__u32 pad;
};

struct rl_hot {
	struct rl_hot_ent e[RL_HOT_ENTRIES];
};

/* The entry of a source of address words @a0..@a3 in table @rule (rl_hot_ent.rule). */
RL_INLINE __u32 rl_hot_idx(__u32 a0, __u32 a1, __u32 a2, __u32 a3, __u32 rule)
{
	__u32 x = a0 ^ a1 ^ a2 ^ a3 ^ (rule * 0x9e3779b9U);

	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	x *= 0xc2b2ae35U;
	return x >> (32 - RL_HOT_BITS);
}

#endif /* RL_HOT_H */
