/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Drop samples: what the XDP program sends to its ring buffer (rl_events)
 * about the packets it drops, or would drop in dry-run, and the switch that
 * turns it on (rl_evctl). Shared by the program and the events command.
 *
 * Sampling is off unless a reader (xdp-ratelimit events) has turned it on:
 * the drop paths then pay one array lookup and one test. When on, a dropped
 * packet is picked 1 in one_in (a per-CPU countdown: exact per CPU, no
 * division), and a picked packet is sent only if fewer than the cap were
 * sent in the current second of the clock (the second from rl_algo.h's
 * window reciprocal, no division; the count in one shared word updated by
 * compare-and-swap: exact across CPUs).
 */
#ifndef RL_EVENTS_H
#define RL_EVENTS_H

#include <linux/types.h>
#include "rl_algo.h"
#include "rl_key.h"

/* Bytes of the frame a sample carries: Ethernet, IP and a transport header with room. */
#define RL_EV_SNAP 128
/*
 * The ring buffer (a power of two pages, 1 MiB per limiter): about 5700
 * samples of 184 bytes (the 8-byte record header included), over half a
 * second at the highest cap, while the reader wakes up every 100 ms.
 */
#define RL_EV_RING_BYTES (1024 * 1024)
/* The highest --max-rate: samples per second the reader is sized for. */
#define RL_EV_MAX_RATE 10000

/* Why a sampled packet was dropped (or would have been). */
enum rl_ev_reason {
	RL_EV_LIMITED = 0, /* over its limit */
	RL_EV_WOULD_DROP = 1, /* over its limit in dry-run: passed */
	RL_EV_INSERT_FAIL = 2, /* its source could not be tracked, --on-insert-fail drop */
	RL_EV_CAS_EXHAUSTED = 3, /* RL_CAS_TRIES lost races on its source's state */
	RL_EV_MALFORMED = 4, /* + enum rl_malformed: malformed, --malformed drop */
	RL_EV__COUNT = RL_EV_MALFORMED + 5,
};

/* One sample, as the program writes it to rl_events. */
struct rl_event {
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC (the test clock in tests) */
	__u32 ifindex; /* the interface it arrived on */
	__u32 rule; /* the rule that decided: 0, the default (the only one in the kernel now) */
	__u32 reason; /* enum rl_ev_reason */
	__u32 len; /* the frame's length */
	__u32 caplen; /* bytes of it in data[] */
	__u32 level; /* the level that refused it: enum rl_level_id (rl_agg.h), 0 its source */
	struct rl_key src; /* the unmasked source, IPv4-mapped; zero if not parsed */
	__u8 data[RL_EV_SNAP];
};

/* The switch and its parameters, one entry of rl_evctl, written by the reader. */
struct rl_evctl {
	__u32 on; /* 1: a reader is attached */
	__u32 one_in; /* sample 1 in one_in drops (per CPU) */
	__u32 pid; /* the reader's pid: a dead one's successor takes over */
	__u32 pad;
	__u64 win; /* the cap's state: second of the clock << 32 | samples sent in it */
	struct rl_params cap; /* fixed-window, 1 s: its reciprocal, and limit (the cap) */
};

/* Per CPU (rl_evcpu): the countdown and what became of picked packets. */
struct rl_evcpu {
	__u32 skip; /* drops to let go before the next pick */
	__u32 pad;
	__u64 sent; /* samples written to the ring */
	__u64 capped; /* picked, but over the cap of the second */
	__u64 lost; /* picked, but the ring was full (the reader fell behind) */
};

#endif /* RL_EVENTS_H */
