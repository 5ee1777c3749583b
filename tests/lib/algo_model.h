/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The rate core (include/rl_algo.h) is tested through rl_sim_packet(), as the
 * simulate command drives it, against the spec:
 *
 *	token-bucket	tokens refill at r, capped at b; pass iff tokens >= cost,
 *			then tokens -= cost (a new source starts with --initial,
 *			default b)
 *	gcra		a level drains at r, never below 0; pass iff level < b,
 *			then level += cost (a new source starts at --initial,
 *			default 0)
 *	fixed-window	windows [kW, (k+1)W); pass iff less than L = r x W
 *			passed in the window, then count += cost
 *	sliding-window	pass iff p (W - e) / W + c < L, then c += cost, with p
 *			passed in the previous window, c in this one so far, e
 *			the time elapsed in this one
 *
 * The reference model here is written from that spec alone, not from
 * rl_algo.h: rates are the exact fraction num / den cost units per second
 * (worked out by hand for every configuration, not taken from the parser),
 * tokens and levels are kept in units of 1 / (den x 1e9) cost unit, so one
 * ns refills exactly num of them, and windows use plain division. Every
 * quantity is an __int128 integer: the model never rounds.
 *
 * Exactness. Where the core's fixed point holds the rate exactly (a whole
 * number of vt per ns; cfg_exact() here), every decision must be the model's;
 * the rates of the brief (1, 3, 7, 10, 100, 1000, 12.5/s, 10 kbit/s ...
 * 400 Gbit/s) must be among them (policy_params_brief_rates_exact). Other
 * rates run on the core's vt clock, vt = floor(ns x vt_mult / 2^56), with
 * ticks of at most 2 ns (rl_algo.h): there every decision must be that of the
 * same algorithm on that clock (a second model, in vt), and may differ from
 * the exact one only within a few vt of its threshold; the burst bound gets
 * one tick of slack. The rule that a source at or below its rate is never dropped allows
 * nothing: a clock that never runs slow keeps it whatever the rounding.
 *
 * Random traces avoid idle times of 2^16 and 2^24 windows, and at the largest
 * burst keep them under 3 years: those edges, and a wrap of the vt clock,
 * have tests of their own, so that one defect fails one test whatever the
 * seed. A failure prints the seed; RL_SEED=<seed> repeats the run.
 *
 * This is what the algorithm tests share (test_algo*.c, test_policy.c):
 * that model, policies written both ways, sources, random traces, the
 * differential check and hand-computed steps.
 */
#ifndef RL_TEST_ALGO_MODEL_H
#define RL_TEST_ALGO_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "policy.h"
#include "source.h"
#include "trace.h"

typedef unsigned __int128 u128;
typedef __int128 s128;

#define NSEC	      1000000000ULL
#define MS	      (1000000ULL)
#define TOP	      (~0ULL)
#define YEAR_NS	      (365ULL * 86400 * NSEC)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define TB   RL_ALGO_TOKEN_BUCKET
#define GCRA RL_ALGO_GCRA
#define FW   RL_ALGO_FIXED_WINDOW
#define SW   RL_ALGO_SLIDING_WINDOW

/* Algorithm names, written out here rather than taken from rl_algo_name(). */
extern const char *const algo_str[];

/*
 * A policy written twice: as the options a user types, and as the numbers
 * the reference model uses, worked out by hand.
 */
struct cfg {
	enum rl_algo algo;
	const char *rate; /* --rate, as written */
	__u64 num, den; /* the same rate: num / den cost units per second */
	bool bytes; /* a byte rate: cost = frame length */
	__u64 burst; /* token-bucket, gcra: --burst, 0 for the default */
	long long initial; /* token-bucket, gcra: --initial, -1 for the default */
	__u64 window; /* windows: --window in ns, 0 for the default (1 s) */
	unsigned int prefix4; /* 24 for --prefix4 24, 0 for the default (32) */
};

/* A rate written twice: as typed, and as the exact fraction num / den per second. */
struct acc {
	const char *rate;
	__u64 num, den;
	bool bytes;
};

/* Per-test stream of the run's seed, so that tests do not share numbers. */
__u64 seed_for(__u64 salt);
/*
 * Options (NULL-terminated) through rl_policy_parse() and rl_params_init().
 * 0 if accepted, -1 if an option is refused, -2 if the policy as a whole is;
 * the message in @err.
 */
int policy_try(const char *const *opts, struct rl_params *p, char *err, size_t len);

/* @c as a NULL-terminated option list (argv), with the buffers it points into. */
struct optv {
	char *argv[20];
	int argc;
	char buf[4][32];
};

void cfg_opts(const struct cfg *c, struct optv *o);
/* @c as the options, one string, for messages. */
const char *cfg_str(const struct cfg *c, char *buf, size_t len);
/* The simulator for @c; it also checks that the parser read the rate as worked out by hand. */
bool cfg_sim(const struct cfg *c, struct rl_sim *s);

/* Sources: nine addresses; the policy's prefixes decide which share a limit. */
#define NSRC 9
extern const char *const src_addr[NSRC];
/* The limit address @i shares: pairs of IPv4 under /24, both IPv6 under the default /64. */
unsigned int src_ref(const struct cfg *c, unsigned int i);
/* One packet through the core: 1 pass, 0 drop. */
int core_pkt(struct rl_sim *s, unsigned int src, __u64 t, __u32 len);

/* The reference model. */
struct ref_src {
	bool used;
	u128 last; /* time of the last update (ns, or vt) */
	s128 x; /* tokens (token-bucket) or level (gcra), x d */
	__u64 win; /* windows: index of the current window */
	__u64 cur, prev; /* windows: passed in it, and in the one before */
};

struct ref {
	enum rl_algo algo;
	u128 r; /* one ns refills (drains) r / d cost units */
	u128 d; /* den x 1e9 */
	__u64 burst;
	u128 cap; /* burst x d */
	u128 init_units; /* a new source's tokens or level */
	u128 init; /* the same, x d */
	__u64 vt_mult; /* 0: time in ns; else in vt = ns x vt_mult / 2^56 */
	__u64 w, l; /* window (ns) and limit per window (cost units) */
	struct ref_src src[NSRC];
};

/* The documented default burst: one second at the rate, at least 1 packet or 1522 bytes. */
__u64 default_burst(const struct cfg *c);
bool ref_init(struct ref *m, const struct cfg *c);
/* The same policy on the core's vt clock (@p from rl_params_init()); buckets only. */
void ref_on_vt_clock(struct ref *m, const struct rl_params *p);
/* Decide on a packet (1 pass, 0 drop) and how far from the other answer; ref_commit() applies it. */
int ref_decide(struct ref *m, unsigned int i, __u64 t, __u64 cost, s128 *margin);
void ref_commit(struct ref *m, unsigned int i, __u64 cost, int pass);
/* One packet of cost @cost at @t for source @i: 1 pass, 0 drop. */
int ref_pkt(struct ref *m, unsigned int i, __u64 t, __u64 cost);
/* Whether @p holds the rate of @c exactly. */
bool params_exact(const struct cfg *c, const struct rl_params *p);
/* Whether the core must decide exactly as the spec for @c: windows, and exact rates. */
bool cfg_exact(const struct cfg *c);

/* Random traces. */
struct pkt {
	__u64 t;
	__u32 len;
	__u8 src;
};

#define TRACE_LEN 1500

/* A random start time, from 0 to the top of the clock. */
__u64 gen_start(__u64 *rs);
/* @n packets from @t0 on; @mode 1: only times where the exact answer lands on a boundary. */
void gen_trace(__u64 *rs, const struct cfg *c, struct pkt *p, size_t n, __u64 t0, int mode);
/* The core and the model on one trace; false after reporting the first difference. */
bool diff_trace_ties(const struct cfg *c, const struct pkt *p, size_t n, const char *what,
		     size_t *ties);
bool diff_trace(const struct cfg *c, const struct pkt *p, size_t n, const char *what);
/* @rounds random traces for each of @cfgs that cfg_exact() says is @exact (or not). */
void diff_configs(const struct cfg *cfgs, size_t ncfg, bool exact, int rounds, __u64 salt);

/* Hand-computed cases: tables of (time, length, how many pass, how many drop). */
struct step {
	__u64 t;
	__u32 len;
	__u32 pass; /* this many packets at t pass... */
	__u32 drop; /* ...and then this many are dropped */
};

/* The steps through the core, and through the model (which must agree with them too). */
bool run_steps(const char *what, const struct cfg *c, const struct step *st, size_t n);

/*
 * A hand-computed case: a policy and its steps. STEPS() gives the steps and
 * their count, so that one table row holds both.
 */
struct hand_case {
	const char *what;
	struct cfg c;
	const struct step *st;
	size_t n;
};

#define STEPS(...) \
	(const struct step[]){ __VA_ARGS__ }, ARRAY_SIZE(((const struct step[]){ __VA_ARGS__ }))

/* run_steps() for every case of the table. */
void run_hand_cases(const struct hand_case *hc, size_t n);

#endif /* RL_TEST_ALGO_MODEL_H */
