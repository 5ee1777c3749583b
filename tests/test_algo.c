// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The rate core (include/rl_algo.h), driven through rl_sim_packet() as the
 * simulate command drives it, checked against the spec:
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
 * 400 Gbit/s) must be among them (algo_params_scale). Other rates run on the
 * core's vt clock, vt = floor(ns x vt_mult / 2^56), with ticks of at most
 * 2 ns (rl_algo.h): there every decision must be that of the same algorithm
 * on that clock (a second model, in vt), and may differ from the exact one
 * only within a few vt of its threshold; the burst bound gets one tick of
 * slack. The rule that a source at or below its rate is never dropped allows
 * nothing: a clock that never runs slow keeps it whatever the rounding.
 *
 * Random traces avoid idle times of 2^16 and 2^24 windows, and at the largest
 * burst keep them under 3 years: those edges, and a wrap of the vt clock,
 * have tests of their own, so that one defect fails one test whatever the
 * seed. A failure prints the seed; RL_SEED=<seed> repeats the run.
 */
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "test.h"
#include "source.h"
#include "trace.h"

typedef unsigned __int128 u128;
typedef __int128 s128;

#define NSEC 1000000000ULL
#define TOP (~0ULL)
#define YEAR_NS (365ULL * 86400 * NSEC)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define TB RL_ALGO_TOKEN_BUCKET
#define GCRA RL_ALGO_GCRA
#define FW RL_ALGO_FIXED_WINDOW
#define SW RL_ALGO_SLIDING_WINDOW

/* Written out here rather than taken from rl_algo_name(). */
static const char *const algo_str[] = { "token-bucket", "gcra", "fixed-window", "sliding-window" };

/*
 * A policy written twice: as the options a user types, and as the numbers
 * the reference model uses, worked out by hand.
 */
struct cfg {
	enum rl_algo algo;
	const char *rate;	/* --rate, as written */
	__u64 num, den;		/* the same rate: num / den cost units per second */
	bool bytes;		/* a byte rate: cost = frame length */
	__u64 burst;		/* token-bucket, gcra: --burst, 0 for the default */
	long long initial;	/* token-bucket, gcra: --initial, -1 for the default */
	__u64 window;		/* windows: --window in ns, 0 for the default (1 s) */
	unsigned int prefix4;	/* 24 for --prefix4 24, 0 for the default (32) */
};

/* ---------------------------------------------------------------------------
 * Small helpers: random numbers, policies from option lists, descriptions.
 */


/* Per-test stream of the run's seed, so that tests do not share numbers. */
static __u64 seed_for(__u64 salt)
{
	__u64 s = rl_test_seed() ^ (salt * 0x2545f4914f6cdd1dULL);

	rl_rand(&s);
	return s;
}

static u128 gcd128(u128 a, u128 b)
{
	while (b) {
		u128 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Options (NULL-terminated) through rl_test_policy() and rl_params_init().
 * 0 if accepted, -1 if an option is refused, -2 if the policy as a whole is;
 * the message in @err.
 */
static int policy_try(const char *const *opts, struct rl_params *p, char *err, size_t len)
{
	struct rl_policy pol;
	struct rl_params tmp;

	err[0] = '\0';
	if (rl_test_policy(&pol, NULL, opts, err, len))
		return -1;
	if (rl_params_init(p ? p : &tmp, &pol, err, len))
		return -2;
	return 0;
}

struct optv {
	char *argv[20];
	int argc;
	char buf[4][32];
};

static void cfg_opts(const struct cfg *c, struct optv *o)
{
	o->argc = 0;
	o->argv[o->argc++] = "--algo";
	o->argv[o->argc++] = (char *)algo_str[c->algo];
	o->argv[o->argc++] = "--rate";
	o->argv[o->argc++] = (char *)c->rate;
	if (c->burst) {
		snprintf(o->buf[0], sizeof(o->buf[0]), "%llu", (unsigned long long)c->burst);
		o->argv[o->argc++] = "--burst";
		o->argv[o->argc++] = o->buf[0];
	}
	if (c->initial >= 0) {
		snprintf(o->buf[1], sizeof(o->buf[1]), "%lld", c->initial);
		o->argv[o->argc++] = "--initial";
		o->argv[o->argc++] = o->buf[1];
	}
	if (c->window) {
		snprintf(o->buf[2], sizeof(o->buf[2]), "%lluns", (unsigned long long)c->window);
		o->argv[o->argc++] = "--window";
		o->argv[o->argc++] = o->buf[2];
	}
	if (c->prefix4) {
		snprintf(o->buf[3], sizeof(o->buf[3]), "%u", c->prefix4);
		o->argv[o->argc++] = "--prefix4";
		o->argv[o->argc++] = o->buf[3];
	}
	o->argv[o->argc] = NULL;
}

static const char *cfg_str(const struct cfg *c, char *buf, size_t len)
{
	struct optv o;
	size_t n = 0;

	cfg_opts(c, &o);
	buf[0] = '\0';
	for (int i = 0; i < o.argc && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? " " : "", o.argv[i]);
	return buf;
}

/* The simulator for @c; it also checks that the parser read the rate as worked out by hand. */
static bool cfg_sim(const struct cfg *c, struct rl_sim *s)
{
	char err[RL_ERRLEN], desc[256];
	struct rl_policy pol;
	struct optv o;

	cfg_opts(c, &o);
	if (rl_test_policy(&pol, NULL, (const char *const *)o.argv, err, sizeof(err))) {
		rl_test_fail(__FILE__, __LINE__, "%s: %s", cfg_str(c, desc, sizeof(desc)), err);
		return false;
	}
	if ((u128)pol.rate_num * c->den != (u128)c->num * pol.rate_den || pol.bytes != c->bytes) {
		rl_test_fail(__FILE__, __LINE__, "--rate %s read as %llu/%llu%s, expected %llu/%llu%s",
			     c->rate, (unsigned long long)pol.rate_num,
			     (unsigned long long)pol.rate_den, pol.bytes ? " bytes" : "",
			     (unsigned long long)c->num, (unsigned long long)c->den,
			     c->bytes ? " bytes" : "");
		return false;
	}
	if (rl_sim_init(s, &pol, err, sizeof(err))) {
		rl_test_fail(__FILE__, __LINE__, "%s refused: %s", cfg_str(c, desc, sizeof(desc)),
			     err);
		rl_sim_free(s);
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------------------
 * Sources: nine addresses; the policy's prefixes decide which share a limit.
 */
#define NSRC 9

static const char *const src_addr[NSRC] = {
	"10.0.0.1", "10.0.0.2", "10.0.1.1", "10.0.1.2", "10.0.2.1", "10.0.2.2",
	NULL, /* a trace line without a source */
	"2001:db8:0:1::1", "2001:db8:0:1::2",
};

static void src_key(unsigned int i, struct rl_key *k)
{
	if (src_addr[i])
		rl_key_parse(src_addr[i], k);
	else
		rl_key_anon(k);
}

/* The limit address @i shares: pairs of IPv4 under /24, both IPv6 under the default /64. */
static unsigned int src_ref(const struct cfg *c, unsigned int i)
{
	if (i < 6)
		return c->prefix4 == 24 ? i / 2 : i;
	return i == 6 ? 6 : 7;
}

/* One packet through the core: 1 pass, 0 drop. */
static int core_pkt(struct rl_sim *s, unsigned int src, __u64 t, __u32 len)
{
	struct rl_key k;

	src_key(src, &k);
	return rl_sim_packet(s, &k, t, len, NULL);
}

/* ---------------------------------------------------------------------------
 * The reference model.
 */
struct ref_src {
	bool used;
	u128 last;		/* time of the last update (ns, or vt) */
	s128 x;			/* tokens (token-bucket) or level (gcra), x d */
	__u64 win;		/* windows: index of the current window */
	__u64 cur, prev;	/* windows: passed in it, and in the one before */
};

struct ref {
	enum rl_algo algo;
	u128 r;			/* one ns refills (drains) r / d cost units */
	u128 d;			/* den x 1e9 */
	__u64 burst;
	u128 cap;		/* burst x d */
	u128 init_units;	/* a new source's tokens or level */
	u128 init;		/* the same, x d */
	__u64 vt_mult;		/* 0: time in ns; else in vt = ns x vt_mult / 2^56 */
	__u64 w, l;		/* window (ns) and limit per window (cost units) */
	struct ref_src src[NSRC];
};

/* The documented default burst: one second at the rate, at least 1 packet or 1522 bytes. */
static __u64 default_burst(const struct cfg *c)
{
	__u64 b = (__u64)(((u128)c->num + c->den - 1) / c->den);
	__u64 floor = c->bytes ? 1522 : 1;

	return b < floor ? floor : b;
}

static bool ref_init(struct ref *m, const struct cfg *c)
{
	memset(m, 0, sizeof(*m));
	m->algo = c->algo;
	m->r = c->num;
	m->d = (u128)c->den * NSEC;
	if (c->algo == TB || c->algo == GCRA) {
		m->burst = c->burst ? c->burst : default_burst(c);
		m->cap = (u128)m->burst * m->d;
		if (c->initial >= 0)
			m->init_units = (u128)c->initial;
		else
			m->init_units = c->algo == TB ? m->burst : 0;
		m->init = m->init_units * m->d;
	} else {
		u128 lw;

		m->w = c->window ? c->window : NSEC;
		lw = (u128)c->num * m->w;
		if (lw % m->d) {
			rl_test_fail(__FILE__, __LINE__, "test bug: rate %s x window %llu ns is not whole",
				     c->rate, (unsigned long long)m->w);
			return false;
		}
		m->l = (__u64)(lw / m->d);
	}
	return true;
}

/*
 * The same policy on the core's vt clock (@p from rl_params_init()): time in
 * vt, one cost unit worth unit_cost vt, one vt refilling (draining) one of
 * them. Buckets only.
 */
static void ref_on_vt_clock(struct ref *m, const struct rl_params *p)
{
	m->vt_mult = p->vt_mult;
	m->r = 1;
	m->d = p->unit_cost;
	m->cap = (u128)m->burst * m->d;
	m->init = m->init_units * m->d;
}

/*
 * Bring source @i up to time @t and decide on a packet of cost @cost: 1 pass,
 * 0 drop. For the buckets, *margin says how far the answer is from the other
 * one, in units of 1 / d: tokens - cost (pass iff >= 0), or burst - level
 * (pass iff > 0). ref_commit() then applies a verdict.
 */
static int ref_decide(struct ref *m, unsigned int i, __u64 t, __u64 cost, s128 *margin)
{
	struct ref_src *s = &m->src[i];
	s128 need = (s128)cost * (s128)m->d;
	u128 now = m->vt_mult ? ((u128)t * m->vt_mult) >> RL_VT_SHIFT : t, gain;
	__u64 k, e;

	*margin = 0;
	switch (m->algo) {
	case TB:
	case GCRA:
		if (!s->used) {
			s->used = true;
			s->x = (s128)m->init;
			s->last = now;
		}
		gain = m->r * (now - s->last);	/* < 2^128: r < 2^64 in ns, 1 in vt */
		s->last = now;
		if (m->algo == TB) {
			/* refill, capped at the burst */
			if (gain >= (u128)((s128)m->cap - s->x))
				s->x = (s128)m->cap;
			else
				s->x += (s128)gain;
			*margin = s->x - need;
			return *margin >= 0;
		}
		/* drain, never below 0 */
		s->x = s->x <= 0 || gain >= (u128)s->x ? 0 : s->x - (s128)gain;
		*margin = (s128)m->cap - s->x;
		return *margin > 0;
	case FW:
		k = t / m->w;
		s->last = t;
		if (!s->used || k != s->win) {
			s->used = true;
			s->win = k;
			s->cur = 0;
		}
		return s->cur < m->l;
	case SW:
		k = t / m->w;
		e = t % m->w;
		s->last = t;
		if (!s->used || k > s->win + 1) {
			s->prev = 0;
			s->cur = 0;
		} else if (k == s->win + 1) {
			s->prev = s->cur;
			s->cur = 0;
		}
		s->used = true;
		s->win = k;
		return (u128)s->prev * (m->w - e) + (u128)s->cur * m->w < (u128)m->l * m->w;
	default:
		return -1;
	}
}

static void ref_commit(struct ref *m, unsigned int i, __u64 cost, int pass)
{
	struct ref_src *s = &m->src[i];

	if (!pass)
		return;
	switch (m->algo) {
	case TB:
		s->x -= (s128)cost * (s128)m->d;
		break;
	case GCRA:
		s->x += (s128)cost * (s128)m->d;
		break;
	default:
		s->cur += cost;
		break;
	}
}

/* One packet of cost @cost at @t for source @i: 1 pass, 0 drop. */
static int ref_pkt(struct ref *m, unsigned int i, __u64 t, __u64 cost)
{
	s128 margin;
	int pass = ref_decide(m, i, t, cost, &margin);

	ref_commit(m, i, cost, pass);
	return pass;
}

/*
 * Whether @p holds the rate of @c exactly: a whole number of vt per ns
 * (vt_mult a multiple of 2^56), and vt per ns / unit_cost = num / d.
 */
static bool params_exact(const struct cfg *c, const struct rl_params *p)
{
	u128 d = (u128)c->den * NSEC;

	return !(p->vt_mult & ((1ULL << RL_VT_SHIFT) - 1)) &&
	       (u128)(p->vt_mult >> RL_VT_SHIFT) * d == (u128)c->num * p->unit_cost;
}

/* Whether the core must decide exactly as the spec for @c: windows, and exact rates. */
static bool cfg_exact(const struct cfg *c)
{
	char err[RL_ERRLEN];
	struct rl_params p;
	struct optv o;

	if (c->algo == FW || c->algo == SW)
		return true;
	cfg_opts(c, &o);
	if (policy_try((const char *const *)o.argv, &p, err, sizeof(err)))
		return true;	/* cfg_sim() reports it */
	return params_exact(c, &p);
}

/* ---------------------------------------------------------------------------
 * Random traces.
 */
struct pkt {
	__u64 t;
	__u32 len;
	__u8 src;
};

struct gen {
	__u64 pkt_ns;	/* time to earn a typical packet's cost */
	__u64 grid_ns;	/* time to earn a whole number of cost units exactly */
	__u64 grid_units; /* that many */
	__u64 win;
	__u64 burst;
};

static void gen_init(struct gen *g, const struct cfg *c)
{
	u128 d = (u128)c->den * NSEC, p = d * (c->bytes ? 1000 : 1) / c->num;
	u128 gd = gcd128(c->num, d);

	g->pkt_ns = p < 1 ? 1 : p > (1ULL << 50) ? 1ULL << 50 : (__u64)p;
	g->grid_ns = d / gd > (1ULL << 50) ? 0 : (__u64)(d / gd);
	g->grid_units = c->num / gd > 65535 ? 0 : (__u64)(c->num / gd);
	g->win = c->window ? c->window : NSEC;
	g->burst = c->burst ? c->burst : default_burst(c);
}

static __u64 gen_start(__u64 *rs)
{
	switch (rl_rand_below(rs, 8)) {
	case 0:
		return 0;
	case 1:
		return rl_rand_below(rs, 1ULL << 40);
	case 2:
	case 3:
		return rl_rand_below(rs, 1ULL << 62);
	case 4:
		return (1ULL << 63) - rl_rand_below(rs, 1ULL << 44);
	case 5:
		return TOP - (1ULL << 50) - rl_rand_below(rs, 1ULL << 40);
	case 6:
		return 5 * NSEC;
	default:
		return rl_rand_below(rs, 1ULL << 34) * NSEC; /* a whole second */
	}
}

static __u64 gen_gap(__u64 *rs, const struct gen *g, __u64 t, int mode)
{
	__u64 grid = g->grid_ns ? g->grid_ns : g->pkt_ns;

	if (mode) {
		/* Only times where the exact answer lands on a boundary. */
		switch (rl_rand_below(rs, 10)) {
		case 0:
		case 1:
		case 2:
		case 3:
			return 0;
		case 4:
		case 5:
			return grid;
		case 6:
			return grid * (1 + rl_rand_below(rs, 4));
		case 7:
			return g->win - t % g->win;
		case 8:
			return g->win;
		default:
			return grid * (1 + rl_rand_below(rs, 40));
		}
	}
	switch (rl_rand_below(rs, 32)) {
	case 0 ... 7:
		return 0;
	case 8:
		return 1;
	case 9 ... 14:
		return rl_rand_below(rs, 2 * g->pkt_ns + 1);
	case 15 ... 17:
		return rl_rand_below(rs, 20 * g->pkt_ns + 1);
	case 18:
		return grid * (1 + rl_rand_below(rs, 3));
	case 19:
		return rl_rand_below(rs, 2) ? grid - 1 : grid + 1;
	case 20:
		return g->win - t % g->win;
	case 21:
		return g->win - t % g->win - 1;
	case 22:
		return g->win;
	case 23:
		return rl_rand_below(rs, 3 * g->win);
	case 24:
		return rl_rand_below(rs, 1ULL << 48);
	case 25:
		if (!rl_rand_below(rs, 40))
			return YEAR_NS;
		/* long enough to refill the whole burst */
		if ((u128)g->pkt_ns * g->burst > (1ULL << 62))
			return 1ULL << 62;
		return g->pkt_ns * g->burst;
	default:
		return g->pkt_ns;
	}
}

static __u32 gen_len(__u64 *rs, const struct gen *g, int mode)
{
	if (mode && g->grid_units && rl_rand_below(rs, 2))
		return (__u32)g->grid_units;
	switch (rl_rand_below(rs, 10)) {
	case 0:
		return 1;
	case 1:
		return 64;
	case 2:
		return 1500;
	case 3:
		return 1522;
	case 4:
		return rl_rand_below(rs, 8) ? 9000 : 65535;
	case 5:
		return g->grid_units ? (__u32)g->grid_units : 64;
	case 6:
		return g->burst <= 65535 ? (__u32)g->burst : 65535;
	default:
		return 1 + (__u32)rl_rand_below(rs, 2000);
	}
}

/*
 * Whether a source last seen in window @k0 and back in window @k is idle for
 * one of the gaps algo_edge_window_gaps tests on its own: a multiple of 2^24
 * windows or one less (fixed-window), or of 2^16 windows, one more or one
 * less (sliding-window); one less reads as a state one window ahead
 * (rl_window_ahead()). The state is that of the source's last pass, which
 * for sliding-window may be in the window before its last packet: hence
 * n + 1 as well.
 */
static bool window_alias(enum rl_algo algo, __u64 k0, __u64 k)
{
	__u64 n = k - k0;

	if (algo == FW)
		return n > 1 && ((n + 1) & ((1ULL << 24) - 1)) <= 1;
	if (algo == SW)
		return n > 1 && ((n + 2) & ((1ULL << 16) - 1)) <= 3;
	return false;
}

/*
 * @n packets from @t0 on; gaps that would pass 2^64 - 1 are cut to what is
 * left. A time that would give a source one of the window_alias() gaps moves
 * on by a window or two, so that a random trace does not fail for the one
 * reason a dedicated test checks.
 */
static void gen_trace(__u64 *rs, const struct cfg *c, struct pkt *p, size_t n, __u64 t0, int mode)
{
	__u64 seen[NSRC] = {}, k0[NSRC];
	struct gen g;
	__u64 t = t0;

	gen_init(&g, c);
	for (size_t i = 0; i < n; i++) {
		__u64 gap = i ? gen_gap(rs, &g, t, mode) : 0;
		__u64 r = rl_rand_below(rs, 10);
		unsigned int src;

		t = gap > TOP - t ? TOP : t + gap;
		p[i].len = gen_len(rs, &g, mode);
		/* Mostly one source, so that it is kept at its limit. */
		p[i].src = (__u8)(r < 6 ? 0 : rl_rand_below(rs, NSRC));
		src = src_ref(c, p[i].src);
		while (seen[src] && window_alias(c->algo, k0[src], t / g.win) && t <= TOP - g.win)
			t += g.win;
		if (seen[src] && window_alias(c->algo, k0[src], t / g.win)) {
			/* At the top of the clock: the previous packet's time and source. */
			t = p[i - 1].t;
			p[i].src = p[i - 1].src;
			src = src_ref(c, p[i].src);
		}
		p[i].t = t;
		seen[src] = 1;
		k0[src] = t / g.win;
	}
}

/*
 * The core and the reference model on one trace; false after reporting the
 * first packet where they differ.
 *
 * Where the core is not exact (cfg_exact()), it must decide as the same
 * algorithm on its vt clock (a second model), and from the exact model it may
 * differ only within a few vt of the threshold: such a difference is counted
 * in *ties and the exact model follows the core.
 */
static bool diff_trace_ties(const struct cfg *c, const struct pkt *p, size_t n, const char *what,
			    size_t *ties)
{
	struct {
		__u64 t;
		__u32 len;
		int got;
		s128 margin;
	} hist[NSRC][4] = {};	/* each source's last packets, for the report */
	bool exact = cfg_exact(c);
	unsigned int nh[NSRC] = {};
	char desc[256];
	struct rl_sim s;
	struct ref m, q;
	bool ok = true;

	if (!cfg_sim(c, &s))
		return false;
	if (!ref_init(&m, c) || !ref_init(&q, c)) {
		rl_sim_free(&s);
		return false;
	}
	if (!exact)
		ref_on_vt_clock(&q, &s.params);
	for (size_t i = 0; i < n && ok; i++) {
		__u64 cost = c->bytes ? p[i].len : 1;
		unsigned int r = src_ref(c, p[i].src);
		__u64 idle = m.src[r].used ? p[i].t - (__u64)m.src[r].last : 0;
		int got = core_pkt(&s, p[i].src, p[i].t, p[i].len);
		s128 margin, tol;
		int want = ref_decide(&m, r, p[i].t, cost, &margin);

		if (!exact && got != ref_pkt(&q, r, p[i].t, cost)) {
			rl_test_fail(__FILE__, __LINE__,
				     "%s: %s: packet %zu of %zu (t=%llu ns, %llu ns after the source's last, source %s, len %u): core %s, the algorithm on the core's vt clock %s; exactly: %s (RL_SEED=%llu)",
				     what, cfg_str(c, desc, sizeof(desc)), i, n,
				     (unsigned long long)p[i].t, (unsigned long long)idle,
				     src_addr[p[i].src] ? src_addr[p[i].src] : "-", p[i].len,
				     got == 1 ? "allow" : got ? "error" : "drop",
				     got ? "drop" : "allow", want ? "allow" : "drop", rl_test_seed());
			ok = false;
			break;
		}

		/* A few vt, and the vt clock's relative error (< 2^-56) over the idle time. */
		tol = (s128)(8 + (idle >> 54)) * (s128)m.d / (s128)s.params.unit_cost;
		if (got != want && !exact && margin <= tol && margin >= -tol) {
			ref_commit(&m, r, cost, got);
			if (ties)
				++*ties;
			continue;
		}
		ref_commit(&m, r, cost, want);
		hist[r][nh[r] % 4].t = p[i].t;
		hist[r][nh[r] % 4].len = p[i].len;
		hist[r][nh[r] % 4].got = got;
		hist[r][nh[r] % 4].margin = margin;
		nh[r]++;
		if (got != want) {
			rl_test_fail(__FILE__, __LINE__,
				     "%s: %s: packet %zu of %zu (t=%llu ns, %llu ns after the source's last, source %s, len %u): core %s, spec %s (tokens - cost or burst - level: %.12Lg) (RL_SEED=%llu)",
				     what, cfg_str(c, desc, sizeof(desc)), i, n,
				     (unsigned long long)p[i].t, (unsigned long long)idle,
				     src_addr[p[i].src] ? src_addr[p[i].src] : "-", p[i].len,
				     got == 1 ? "allow" : got ? "error" : "drop",
				     want ? "allow" : "drop", (long double)margin / (long double)m.d,
				     rl_test_seed());
			for (unsigned int k = nh[r] > 4 ? nh[r] - 4 : 0; k + 1 < nh[r]; k++)
				fprintf(stderr, "      before: t=%llu len %u: %s (margin %.12Lg)\n",
					(unsigned long long)hist[r][k % 4].t, hist[r][k % 4].len,
					hist[r][k % 4].got ? "allow" : "drop",
					(long double)hist[r][k % 4].margin / (long double)m.d);
			ok = false;
		}
	}
	rl_sim_free(&s);
	return ok;
}

static bool diff_trace(const struct cfg *c, const struct pkt *p, size_t n, const char *what)
{
	return diff_trace_ties(c, p, n, what, NULL);
}

#define TRACE_LEN 1500

/*
 * @rounds random traces for each of @cfgs that cfg_exact() says is @exact (or
 * not), a quarter of them on boundaries only.
 */
static void diff_configs(const struct cfg *cfgs, size_t ncfg, bool exact, int rounds, __u64 salt)
{
	static struct pkt p[TRACE_LEN];
	__u64 rs = seed_for(salt);

	for (size_t c = 0; c < ncfg; c++) {
		size_t ties = 0, random = 0;

		if (cfg_exact(&cfgs[c]) != exact)
			continue;
		for (int r = 0; r < rounds; r++) {
			int mode = r % 4 == 3;
			size_t t = 0;

			gen_trace(&rs, &cfgs[c], p, TRACE_LEN, gen_start(&rs), mode);
			if (!diff_trace_ties(&cfgs[c], p, TRACE_LEN,
					     mode ? "boundary trace" : "random trace", &t))
				break;
			if (!mode) {
				ties += t;
				random += TRACE_LEN;
			}
		}
		if (getenv("RL_TIES"))
			fprintf(stderr, "    %s --rate %s: %zu ties in %zu random packets\n",
				algo_str[cfgs[c].algo], cfgs[c].rate, ties, random);
	}
}

/* ---------------------------------------------------------------------------
 * Hand-computed cases: tables of (time, length, how many pass, how many drop).
 */
struct step {
	__u64 t;
	__u32 len;
	__u32 pass;	/* this many packets at t pass... */
	__u32 drop;	/* ...and then this many are dropped */
};

/*
 * The steps through the core, and through the reference model (which is
 * checked too: it must agree with the hand-computed answers).
 */
static bool run_steps(const char *what, const struct cfg *c, const struct step *st, size_t n)
{
	char desc[256];
	struct rl_sim s;
	struct ref m;
	bool ok = true;

	if (!cfg_sim(c, &s))
		return false;
	if (!ref_init(&m, c)) {
		rl_sim_free(&s);
		return false;
	}
	for (size_t i = 0; i < n && ok; i++) {
		for (__u32 j = 0; j < st[i].pass + st[i].drop && ok; j++) {
			int want = j < st[i].pass;
			int got = core_pkt(&s, 0, st[i].t, st[i].len);
			int model = ref_pkt(&m, 0, st[i].t, c->bytes ? st[i].len : 1);

			if (got != want) {
				rl_test_fail(__FILE__, __LINE__,
					     "%s: %s: step %zu (t=%llu ns, len %u), packet %u: core %s, expected %s",
					     what, cfg_str(c, desc, sizeof(desc)), i,
					     (unsigned long long)st[i].t, st[i].len, j + 1,
					     got ? "allow" : "drop", want ? "allow" : "drop");
				ok = false;
			}
			if (model != want) {
				rl_test_fail(__FILE__, __LINE__,
					     "%s: test bug: the reference model says %s at step %zu packet %u",
					     what, model ? "allow" : "drop", i, j + 1);
				ok = false;
			}
		}
	}
	rl_sim_free(&s);
	return ok;
}

#define RUN_STEPS(what, cfg, steps) run_steps(what, cfg, steps, ARRAY_SIZE(steps))
#define MS (1000000ULL)

/* The case from the spec: after 5 s idle, 30 packets spread evenly over 20 ms. */
static unsigned int known_case(const struct cfg *c, __u64 t0)
{
	unsigned int passed = 0;
	struct rl_sim s;

	if (!cfg_sim(c, &s))
		return ~0U;
	/* The source's first packet, 5 s earlier, makes the 5 s an idle gap. */
	core_pkt(&s, 0, t0, 64);
	for (int i = 0; i < 30; i++)
		passed += core_pkt(&s, 0, t0 + 5 * NSEC + i * 20 * MS / 29, 64);
	rl_sim_free(&s);
	return passed;
}

TEST(algo_known_case)
{
	static const __u64 starts[] = { 0, 123456789, 1ULL << 62, (1ULL << 63) - 2 * NSEC,
					TOP - 6 * NSEC };
	const struct cfg tb = { TB, "10", 10, 1, false, 20, -1, 0, 0 };
	const struct cfg gcra = { GCRA, "10", 10, 1, false, 20, -1, 0, 0 };
	const struct cfg fw = { FW, "10", 10, 1, false, 0, -1, NSEC, 0 };
	const struct cfg sw = { SW, "10", 10, 1, false, 0, -1, NSEC, 0 };

	for (size_t i = 0; i < ARRAY_SIZE(starts); i++) {
		/* Windows: the 5 s-earlier packet may share no window with the 30. */
		ASSERT_EQ(known_case(&tb, starts[i]), 20, "token-bucket 10/s burst 20");
		ASSERT_EQ(known_case(&gcra, starts[i]), 21, "gcra 10/s burst 20");
		ASSERT_EQ(known_case(&fw, starts[i] - starts[i] % NSEC), 10, "fixed-window 10 per 1s");
		ASSERT_EQ(known_case(&sw, starts[i] - starts[i] % NSEC), 10,
			  "sliding-window 10 per 1s");
	}
}

TEST(algo_hand_token_bucket)
{
	/* 10/s, burst 20: one token per 100 ms exactly. */
	const struct cfg c10 = { TB, "10", 10, 1, false, 20, -1, 0, 0 };
	const struct step s10[] = {
		{ 0, 64, 20, 1 },			/* starts full */
		{ 100 * MS - 1, 64, 0, 1 },		/* 0.99999999 token */
		{ 100 * MS, 64, 1, 1 },			/* exactly 1 */
		{ 300 * MS, 64, 2, 1 },			/* exactly 2 more */
		{ 300 * MS + 99999999, 64, 0, 1 },
		{ 2300 * MS - 1, 64, 19, 1 },		/* 19.99999999 */
		{ 2300 * MS, 64, 1, 1 },
		{ 60000 * MS, 64, 20, 5 },		/* long idle: capped at 20 */
	};
	/*
	 * 3/s: a token every 333333333.3 ns, so the core runs on its vt clock
	 * (ticks under 2 ns): every answer here is 3 ns or more from its threshold.
	 */
	const struct cfg c3 = { TB, "3", 3, 1, false, 3, -1, 0, 0 };
	const struct step s3[] = {
		{ 7 * NSEC, 64, 3, 1 },
		{ 7 * NSEC + 333333330, 64, 0, 1 },	/* 0.99999999 */
		{ 7 * NSEC + 333333337, 64, 1, 1 },	/* 1.000000011 */
		{ 8 * NSEC + 10, 64, 2, 1 },		/* 0.000000011 + 2.000000019 */
		{ 9 * NSEC - 20, 64, 2, 1 },		/* 0.00000003 + 2.99999991 */
		{ 10 * NSEC + 100, 64, 3, 1 },
	};
	/* 12.5/s, burst 1: one token per 80 ms. */
	const struct cfg c125 = { TB, "12.5", 25, 2, false, 1, -1, 0, 0 };
	const struct step s125[] = {
		{ 1, 64, 1, 1 },
		{ 80 * MS, 64, 0, 1 },
		{ 80 * MS + 1, 64, 1, 1 },
		{ 160 * MS + 1, 64, 1, 1 },
		{ 160 * MS + 1 + 80 * MS * 1000, 64, 1, 1 },
	};
	/* 100 Mpps, burst 1: a token every 10 ns. */
	const struct cfg c100m = { TB, "100mpps", 100000000, 1, false, 1, -1, 0, 0 };
	const struct step s100m[] = {
		{ 1000, 64, 1, 1 }, { 1009, 64, 0, 1 }, { 1010, 64, 1, 1 }, { 1030, 64, 1, 1 },
		{ 1039, 64, 0, 1 }, { 1040, 64, 1, 0 },
	};

	RUN_STEPS("10/s burst 20", &c10, s10);
	RUN_STEPS("3/s burst 3", &c3, s3);
	RUN_STEPS("12.5/s burst 1", &c125, s125);
	RUN_STEPS("100 Mpps burst 1", &c100m, s100m);
}

TEST(algo_hand_gcra)
{
	/* 10/s, burst 20: the level drains 1 per 100 ms; pass iff level < 20. */
	const struct cfg c10 = { GCRA, "10", 10, 1, false, 20, -1, 0, 0 };
	const struct step s10[] = {
		{ 0, 64, 20, 1 },		/* levels 0..19 pass, 20 does not */
		{ 100 * MS - 1, 64, 1, 1 },	/* 19.00000001 < 20 -> 20.00000001 */
		{ 100 * MS, 64, 0, 1 },		/* 20 exactly: not below the burst */
		{ 100 * MS + 1, 64, 1, 1 },	/* 19.99999999 -> 20.99999999 */
		{ 2100 * MS + 1, 64, 20, 1 },	/* 0.99999999 .. 19.99999999 pass */
	};
	/* burst 1: a packet only into an empty queue, or nearly so. */
	const struct cfg c1 = { GCRA, "1", 1, 1, false, 1, -1, 0, 0 };
	const struct step s1[] = {
		{ 5 * NSEC, 64, 1, 2 },		/* level 0 -> 1 */
		{ 6 * NSEC - 1, 64, 1, 1 },	/* 0.000000001 < 1 -> 1.000000001 */
		{ 6 * NSEC, 64, 0, 1 },		/* 1 exactly */
		{ 6 * NSEC + 1, 64, 1, 1 },	/* 0.999999999 -> 1.999999999 */
		{ 7 * NSEC, 64, 0, 1 },		/* 1 exactly */
		{ 7 * NSEC + 1, 64, 1, 0 },
		{ 7 * NSEC + 1 + YEAR_NS, 64, 1, 1 },
	};
	/* 7/s burst 2, on the core's vt clock: answers 20 ns or more from a threshold. */
	const struct cfg c7 = { GCRA, "7", 7, 1, false, 2, -1, 0, 0 };
	const struct step s7[] = {
		{ 0, 64, 2, 1 },		/* level 2 */
		{ 142857122, 64, 1, 1 },	/* 1.000000146 -> 2.000000146 */
		{ NSEC, 64, 2, 1 },		/* drained to 0 (never below) */
	};

	RUN_STEPS("gcra 10/s burst 20", &c10, s10);
	RUN_STEPS("gcra 1/s burst 1", &c1, s1);
	RUN_STEPS("gcra 7/s burst 2", &c7, s7);
}

TEST(algo_hand_fixed_window)
{
	/* 10 per 1 s: windows [k s, (k+1) s). */
	const struct cfg c = { FW, "10", 10, 1, false, 0, -1, NSEC, 0 };
	const struct step s[] = {
		{ NSEC - 1, 64, 10, 2 },		/* the window's last ns */
		{ NSEC, 64, 10, 1 },			/* a new window */
		{ 2 * NSEC - 1, 64, 0, 3 },
		{ 3 * NSEC, 64, 4, 0 },			/* window 2 was skipped */
		{ 4 * NSEC - 1, 64, 6, 1 },
		{ 4 * NSEC + NSEC / 2, 64, 10, 1 },
	};
	/* 1000/s, window 1 ms: L = 1. */
	const struct cfg c1 = { FW, "1000", 1000, 1, false, 0, -1, MS, 0 };
	const struct step s1[] = {
		{ 0, 64, 1, 1 }, { MS - 1, 64, 0, 1 }, { MS, 64, 1, 1 }, { 5 * MS + 7, 64, 1, 1 },
	};
	/* 12.5/s over 2 s windows: L = 25. */
	const struct cfg c25 = { FW, "12.5", 25, 2, false, 0, -1, 2 * NSEC, 0 };
	const struct step s25[] = {
		{ NSEC, 64, 25, 1 }, { 2 * NSEC - 1, 64, 0, 1 }, { 2 * NSEC, 64, 25, 1 },
	};

	RUN_STEPS("fixed-window 10 per 1s", &c, s);
	RUN_STEPS("fixed-window 1 per 1ms", &c1, s1);
	RUN_STEPS("fixed-window 25 per 2s", &c25, s25);
}

TEST(algo_hand_sliding_window)
{
	/* 10 per 1 s: pass iff prev x (W - e) / W + cur < 10. */
	const struct cfg c = { SW, "10", 10, 1, false, 0, -1, NSEC, 0 };
	const struct step s[] = {
		{ NSEC / 2, 64, 10, 1 },		/* window 0: 10 */
		{ NSEC, 64, 0, 1 },			/* 10 x 1 + 0 = 10 */
		{ NSEC + 100 * MS, 64, 1, 1 },		/* 9 + 0 < 10; 9 + 1 = 10 */
		{ NSEC + 500 * MS, 64, 4, 1 },		/* 5 + 1..4 < 10 */
		{ 2 * NSEC - 1, 64, 5, 1 },		/* 0.00000001 + 5..9 */
		{ 2 * NSEC, 64, 0, 1 },			/* window 1 passed 10 */
		{ 2 * NSEC + 500 * MS - 1, 64, 5, 1 },	/* 5.00000001 + 0..4 */
		{ 3 * NSEC, 64, 5, 1 },			/* window 2 passed 5 */
		{ 5 * NSEC, 64, 10, 1 },		/* two windows on: nothing carried */
	};
	/* The tie prev x (W - e) / W + cur = L exactly: prev 4, e = W / 2. */
	const struct step tie[] = {
		{ 0, 64, 4, 0 },
		{ NSEC + NSEC / 2, 64, 8, 1 },		/* 2 + 0..7 < 10, 2 + 8 = 10 */
		{ 2 * NSEC + NSEC / 4, 64, 4, 1 },	/* 8 x 3/4 = 6: 6 + 0..3; 6 + 4 = 10 */
		{ 2 * NSEC + NSEC / 4 + 1, 64, 1, 1 },	/* 5.999999992 + 4 */
	};
	/* 1 per s over 3 s windows (L = 3): prev 3 weighs exactly 2 at e = 1 s. */
	const struct cfg c3 = { SW, "1", 1, 1, false, 0, -1, 3 * NSEC, 0 };
	const struct step s3[] = {
		{ 0, 64, 3, 1 },
		{ 4 * NSEC - 1, 64, 1, 1 },		/* 2.000000001 + 0; + 1 */
		{ 4 * NSEC, 64, 0, 1 },			/* 2 + 1 = 3 */
		{ 4 * NSEC + 1, 64, 1, 1 },		/* 1.999999999 + 1; + 2 */
	};

	RUN_STEPS("sliding-window 10 per 1s", &c, s);
	RUN_STEPS("sliding-window tie", &c, tie);
	RUN_STEPS("sliding-window 3 per 1s", &c3, s3);
}

TEST(algo_hand_bytes)
{
	/* 12kbit = 1500 bytes/s, burst 3000: two full frames, then one per second. */
	const struct cfg tb = { TB, "12kbit", 1500, 1, true, 3000, -1, 0, 0 };
	const struct step stb[] = {
		{ 0, 1500, 2, 1 },
		{ NSEC - 1000, 1500, 0, 1 },		/* 1499.9985 bytes */
		{ NSEC + 2000, 1500, 1, 1 },		/* 1500.003 */
		{ 10 * NSEC, 3000, 1, 1 },		/* a frame of exactly the burst */
		{ 20 * NSEC, 3001, 0, 1 },		/* one byte over: never */
		{ 20 * NSEC, 1, 3000, 1 },		/* the bucket holds exactly 3000 */
	};
	/* 100mbit: a byte every 80 ns, so the core keeps exact ns. */
	const struct cfg tb100 = { TB, "100mbit", 12500000, 1, true, 1500, -1, 0, 0 };
	const struct step stb100[] = {
		{ 0, 1500, 1, 1 },
		{ 119999, 1500, 0, 1 },			/* 1499.9875 */
		{ 120000, 1500, 1, 1 },			/* 1500 */
		{ 120000 + 5119, 64, 0, 1 },		/* 63.9875 */
		{ 120000 + 5120, 64, 1, 1 },		/* 64 */
	};
	/* gcra: the level may pass the burst by one frame. 1gbit: 8 ns a byte. */
	const struct cfg gc = { GCRA, "1gbit", 125000000, 1, true, 3000, -1, 0, 0 };
	const struct step sgc[] = {
		{ 0, 1500, 2, 1 },			/* 0, 1500 -> 3000 */
		{ 1, 65535, 1, 1 },			/* 2999.875 < 3000 */
		{ 1 + 65535 * 8, 64, 1, 1 },		/* 68534.875 - 65535 */
		{ 1 + 65535 * 8 + 7, 64, 0, 1 },	/* 3063 */
		{ 1 + 65535 * 8 + 512, 64, 1, 0 },	/* 2999.875 */
	};
	/* windows count bytes: the packet that crosses L passes whole. */
	const struct cfg fw = { FW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 };
	const struct step sfw[] = {
		{ 0, 1000, 2, 1 },			/* 0, 1000 < 1500; 2000 */
		{ NSEC, 1499, 2, 1 },			/* 0, 1499 < 1500 */
		{ 2 * NSEC, 1500, 1, 1 },		/* 1500 is not < 1500 */
	};
	const struct cfg sw = { SW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 };
	const struct step ssw[] = {
		{ 0, 1000, 2, 1 },			/* window 0: 2000 bytes */
		{ NSEC + NSEC / 4, 100, 0, 1 },		/* 2000 x 3/4 = 1500 */
		{ NSEC + NSEC / 2, 100, 5, 1 },		/* 1000 + 0..400; 1000 + 500 */
	};
	/* 1gbit = 125000000 bytes/s: a 1500-byte frame every 12 us. */
	const struct cfg g = { TB, "1gbit", 125000000, 1, true, 1500, -1, 0, 0 };
	const struct step sg[] = {
		{ 0, 1500, 1, 1 }, { 11999, 1500, 0, 1 }, { 12000, 1500, 1, 1 },
		{ 24000, 1500, 1, 0 },
	};
	/* 400gbit = 50 bytes/ns: the largest frame refills in 1310.7 ns. */
	const struct cfg g400 = { TB, "400gbit", 50000000000ULL, 1, true, 65535, -1, 0, 0 };
	const struct step s400[] = {
		{ 0, 65535, 1, 1 }, { 1310, 65535, 0, 1 }, { 1311, 65535, 1, 1 },
	};

	RUN_STEPS("token-bucket 12kbit burst 3000", &tb, stb);
	RUN_STEPS("token-bucket 100mbit burst 1500", &tb100, stb100);
	RUN_STEPS("gcra 1gbit burst 3000", &gc, sgc);
	RUN_STEPS("fixed-window 12kbit", &fw, sfw);
	RUN_STEPS("sliding-window 12kbit", &sw, ssw);
	RUN_STEPS("token-bucket 1gbit", &g, sg);
	RUN_STEPS("token-bucket 400gbit", &g400, s400);
}

/*
 * The brief's byte-mode case: 1500-byte frames against 12kbit (1500 bytes/s)
 * with burst 3000. Sent once a second after the burst, each finds exactly
 * 1500 bytes of tokens and passes: a source at its rate is never dropped.
 */
TEST(algo_hand_bytes_at_rate)
{
	const struct cfg tb = { TB, "12kbit", 1500, 1, true, 3000, -1, 0, 0 };
	const struct step stb[] = {
		{ 0, 1500, 2, 1 },	{ NSEC, 1500, 1, 1 },	  { 2 * NSEC, 1500, 1, 1 },
		{ 3 * NSEC, 1500, 1, 1 }, { 60 * NSEC, 1500, 2, 1 }, { 61 * NSEC, 1500, 1, 1 },
	};

	RUN_STEPS("token-bucket 12kbit burst 3000, a frame a second", &tb, stb);
}

TEST(algo_hand_initial)
{
	const struct cfg tb5 = { TB, "10", 10, 1, false, 20, 5, 0, 0 };
	const struct step stb5[] = { { 0, 64, 5, 1 }, { 100 * MS, 64, 1, 1 } };
	const struct cfg tb0 = { TB, "10", 10, 1, false, 20, 0, 0, 0 };
	const struct step stb0[] = { { 3, 64, 0, 2 }, { 100 * MS + 2, 64, 0, 1 },
				     { 100 * MS + 3, 64, 1, 1 }, { 10 * NSEC, 64, 20, 1 } };
	const struct cfg tb20 = { TB, "10", 10, 1, false, 20, 20, 0, 0 };
	const struct step stb20[] = { { 0, 64, 20, 1 } };
	const struct cfg g20 = { GCRA, "10", 10, 1, false, 20, 20, 0, 0 };
	const struct step sg20[] = { { 0, 64, 0, 1 }, { 1, 64, 1, 1 }, { 100 * MS, 64, 0, 1 },
				     { 100 * MS + 1, 64, 1, 1 } };
	const struct cfg g19 = { GCRA, "10", 10, 1, false, 20, 19, 0, 0 };
	const struct step sg19[] = { { 0, 64, 1, 1 } };
	const struct cfg gb = { GCRA, "12kbit", 1500, 1, true, 3000, 1500, 0, 0 };
	const struct step sgb[] = { { 0, 1500, 1, 1 }, { NSEC, 1500, 1, 1 } };

	RUN_STEPS("token-bucket --initial 5", &tb5, stb5);
	RUN_STEPS("token-bucket --initial 0", &tb0, stb0);
	RUN_STEPS("token-bucket --initial 20 (= burst)", &tb20, stb20);
	RUN_STEPS("gcra --initial 20 (= burst)", &g20, sg20);
	RUN_STEPS("gcra --initial 19", &g19, sg19);
	RUN_STEPS("gcra bytes --initial 1500", &gb, sgb);
}

/* Without --burst: one second at the rate, at least one packet or 1522 bytes. */
TEST(algo_hand_default_burst)
{
	const struct cfg c10 = { TB, "10", 10, 1, false, 0, -1, 0, 0 };
	const struct step s10[] = { { 0, 64, 10, 1 } };
	const struct cfg c125 = { TB, "12.5", 25, 2, false, 0, -1, 0, 0 };
	const struct step s125[] = { { 0, 64, 13, 1 } };
	const struct cfg chalf = { TB, "0.5", 1, 2, false, 0, -1, 0, 0 };
	const struct step shalf[] = { { 0, 64, 1, 1 }, { 2 * NSEC - 1, 64, 0, 1 },
				      { 2 * NSEC, 64, 1, 1 } };
	const struct cfg ck = { TB, "1kbit", 125, 1, true, 0, -1, 0, 0 };
	const struct step sk[] = { { 0, 1522, 1, 1 }, { 0, 1, 0, 1 } };
	const struct cfg gk = { GCRA, "10kbyte", 10000, 1, true, 0, -1, 0, 0 };
	const struct step sgk[] = { { 0, 5000, 2, 1 } };

	RUN_STEPS("10/s", &c10, s10);
	RUN_STEPS("12.5/s", &c125, s125);
	RUN_STEPS("0.5/s", &chalf, shalf);
	RUN_STEPS("1kbit", &ck, sk);
	RUN_STEPS("gcra 10kbyte", &gk, sgk);
}

/* ---------------------------------------------------------------------------
 * Differential tests against the reference model.
 */

/*
 * Policies for the differential tests: the rates of the brief (1, 3, 7, 10,
 * 100, 1000, 12.5, 10kbit, 100mbit, 1gbit, 400gbit, ...) and awkward ones.
 * cfg_exact() sorts them into the two tests.
 */
static const struct cfg diff_cfgs[] = {
	{ TB, "10", 10, 1, false, 20, -1, 0, 0 },
	{ TB, "1", 1, 1, false, 1, -1, 0, 0 },
	{ TB, "3", 3, 1, false, 5, -1, 0, 24 },
	{ TB, "7", 7, 1, false, 3, 0, 0, 0 },
	{ TB, "12.5", 25, 2, false, 0, -1, 0, 24 },
	{ TB, "0.5", 1, 2, false, 2, -1, 0, 0 },
	{ TB, "100", 100, 1, false, 150, -1, 0, 0 },
	{ TB, "1000", 1000, 1, false, 1, -1, 0, 0 },
	{ TB, "3.3", 33, 10, false, 4, 2, 0, 0 },
	{ TB, "73000000", 73000000, 1, false, 1000, -1, 0, 0 },
	{ TB, "100mpps", 100000000, 1, false, 64, -1, 0, 0 },
	{ TB, "128000000000", 128000000000ULL, 1, false, 1000, -1, 0, 0 },
	{ TB, "10kbit", 1250, 1, true, 3000, -1, 0, 0 },
	{ TB, "12kbit", 1500, 1, true, 3000, -1, 0, 24 },
	{ TB, "1.5mbit", 187500, 1, true, 1522, 700, 0, 0 },
	{ TB, "500kbyte", 500000, 1, true, 65535, -1, 0, 0 },
	{ TB, "100mbit", 12500000, 1, true, 100000, -1, 0, 0 },
	{ TB, "1gbit", 125000000, 1, true, 0, -1, 0, 0 },
	{ TB, "400gbit", 50000000000ULL, 1, true, 1000000, -1, 0, 0 },
	{ GCRA, "10", 10, 1, false, 20, -1, 0, 0 },
	{ GCRA, "1", 1, 1, false, 1, -1, 0, 24 },
	{ GCRA, "3", 3, 1, false, 5, 4, 0, 0 },
	{ GCRA, "7", 7, 1, false, 1, 1, 0, 0 },
	{ GCRA, "12.5", 25, 2, false, 0, -1, 0, 0 },
	{ GCRA, "1000", 1000, 1, false, 10, -1, 0, 0 },
	{ GCRA, "100mpps", 100000000, 1, false, 1, -1, 0, 0 },
	{ GCRA, "10kbit", 1250, 1, true, 3000, -1, 0, 0 },
	{ GCRA, "12kbit", 1500, 1, true, 1, -1, 0, 24 },
	{ GCRA, "1gbit", 125000000, 1, true, 1500, 700, 0, 0 },
	{ GCRA, "400gbit", 50000000000ULL, 1, true, 65536, -1, 0, 0 },
	{ FW, "10", 10, 1, false, 0, -1, NSEC, 0 },
	{ FW, "10", 10, 1, false, 0, -1, 100 * MS, 24 },
	{ FW, "3", 3, 1, false, 0, -1, 0, 0 },
	{ FW, "12.5", 25, 2, false, 0, -1, 2 * NSEC, 0 },
	{ FW, "7", 7, 1, false, 0, -1, 3 * NSEC, 0 },
	{ FW, "1000", 1000, 1, false, 0, -1, MS, 0 },
	{ FW, "100mpps", 100000000, 1, false, 0, -1, 1000, 0 },
	{ FW, "1", 1, 1, false, 0, -1, 86400 * NSEC, 0 },
	{ FW, "10kbit", 1250, 1, true, 0, -1, NSEC, 0 },
	{ FW, "12kbit", 1500, 1, true, 0, -1, 100 * MS, 24 },
	{ FW, "400gbit", 50000000000ULL, 1, true, 0, -1, 1000, 0 },
	{ SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
	{ SW, "10", 10, 1, false, 0, -1, 100 * MS, 24 },
	{ SW, "3", 3, 1, false, 0, -1, 0, 0 },
	{ SW, "12.5", 25, 2, false, 0, -1, 2 * NSEC, 0 },
	{ SW, "7", 7, 1, false, 0, -1, 3 * NSEC, 0 },
	{ SW, "1000", 1000, 1, false, 0, -1, MS, 0 },
	{ SW, "100mpps", 100000000, 1, false, 0, -1, 1000, 0 },
	{ SW, "1", 1, 1, false, 0, -1, 86400 * NSEC, 0 },
	{ SW, "10kbit", 1250, 1, true, 0, -1, NSEC, 0 },
	{ SW, "12kbit", 1500, 1, true, 0, -1, 100 * MS, 24 },
	{ SW, "400gbit", 50000000000ULL, 1, true, 0, -1, 1000, 0 },

	{ TB, "129", 129, 1, false, 3, -1, 0, 0 },
	{ TB, "12345678", 12345678, 1, false, 100, -1, 0, 0 },
	{ TB, "999.999", 999999, 1000, false, 10, -1, 0, 0 },
	{ TB, "1.000000001", 1000000001, 1000000000, false, 2, -1, 0, 0 },
	{ TB, "137byte", 137, 1, true, 137, -1, 0, 0 },
	{ TB, "1001bit", 1001, 8, true, 2002, -1, 0, 0 },
	{ TB, "1009byte", 1009, 1, true, 1009, -1, 0, 0 },
	{ TB, "399999999999bit", 399999999999ULL, 8, true, 100000, -1, 0, 0 },
	{ GCRA, "129", 129, 1, false, 3, -1, 0, 0 },
	{ GCRA, "12345678", 12345678, 1, false, 100, -1, 0, 0 },
	{ GCRA, "137byte", 137, 1, true, 137, -1, 0, 0 },
	{ GCRA, "1001bit", 1001, 8, true, 2002, -1, 0, 0 },
	{ GCRA, "399999999999bit", 399999999999ULL, 8, true, 100000, -1, 0, 0 },
};

/* Exactly the spec, packet for packet: windows, and rates of whole ns per cost unit. */
TEST(algo_diff_whole_ns_rates)
{
	diff_configs(diff_cfgs, ARRAY_SIZE(diff_cfgs), true, 16, 1);
}

/* The others: the algorithm on the core's vt clock, and the spec but for ties. */
TEST(algo_diff_tick_rates)
{
	diff_configs(diff_cfgs, ARRAY_SIZE(diff_cfgs), false, 16, 2);
}

/* ---------------------------------------------------------------------------
 * Properties of the core's own decisions on random traces.
 */
struct rec {
	__u64 t, cost;
	bool pass;
};

/* The core's decisions for source @ref of a trace of @n packets. Returns how many. */
static size_t record(const struct cfg *c, const struct pkt *p, size_t n, unsigned int ref,
		     struct rec *out)
{
	struct rl_sim s;
	size_t k = 0;

	if (!cfg_sim(c, &s))
		return 0;
	for (size_t i = 0; i < n; i++) {
		int pass = core_pkt(&s, p[i].src, p[i].t, p[i].len);

		if (src_ref(c, p[i].src) == ref) {
			out[k].t = p[i].t;
			out[k].cost = c->bytes ? p[i].len : 1;
			out[k].pass = pass == 1;
			k++;
		}
	}
	rl_sim_free(&s);
	return k;
}

/*
 * Token bucket: the cost passed in any closed interval of length D is at most
 * b + r D. Gcra: the cost passed in it, less the cost of the last packet to
 * pass, is below b + r D (each packet passes with a level below b; the level
 * drains by at most r D); in packets, at most b + ceil(r D).
 *
 * In units of 1 / d: for passes i <= j, with P the cumulative cost passed,
 *	token bucket:	(P_j - P_(i-1)) d - r (t_j - t_i) <= b d
 *	gcra:		(P_(j-1) - P_(i-1)) d - r (t_j - t_i) < b d
 * checked for all pairs at once by keeping the least P_(i-1) d - r t_i.
 *
 * Exact where cfg_exact(); otherwise on the core's vt clock, whose ticks are
 * at most 2 ns, rl_algo.h promises b + r (D + one tick): the bound gets r x
 * 2 ns of slack, plus 2^-50 of r D for the clock's relative error.
 */
static bool check_bucket_bound(const struct cfg *c, const struct rec *rc, size_t n,
			       const char *what)
{
	s128 d = (s128)c->den * NSEC, r = c->num, b = c->burst ? c->burst : default_burst(c);
	s128 p = 0, least = 0, tol = 0;
	__u64 t0 = n ? rc[0].t : 0, ti = 0;
	bool any = false, exact = cfg_exact(c);

	for (size_t j = 0; j < n; j++) {
		s128 t = rc[j].t - t0, bi, lhs;

		if (!rc[j].pass)
			continue;
		bi = p * d - r * t;
		if (!any || bi < least) {
			least = bi;
			ti = rc[j].t;
		}
		any = true;
		p += rc[j].cost;
		lhs = (c->algo == TB ? p : p - (s128)rc[j].cost) * d - r * t - least;
		if (!exact)
			tol = r * (2 + (s128)((rc[j].t - ti) >> 50));
		if (c->algo == TB ? lhs > b * d + tol : lhs >= b * d + tol) {
			rl_test_fail(__FILE__, __LINE__,
				     "%s: --rate %s --burst %llu: too much passed from t=%llu to t=%llu ns (RL_SEED=%llu)",
				     what, c->rate, (unsigned long long)b, (unsigned long long)ti,
				     (unsigned long long)rc[j].t, rl_test_seed());
			return false;
		}
	}
	return true;
}

static const struct cfg bound_cfgs[] = {
	{ TB, "10", 10, 1, false, 20, -1, 0, 0 },
	{ TB, "3", 3, 1, false, 1, -1, 0, 24 },
	{ TB, "12.5", 25, 2, false, 7, -1, 0, 0 },
	{ TB, "100mpps", 100000000, 1, false, 3, -1, 0, 0 },
	{ TB, "12kbit", 1500, 1, true, 3000, -1, 0, 0 },
	{ TB, "400gbit", 50000000000ULL, 1, true, 65535, -1, 0, 24 },
	{ TB, "12345678", 12345678, 1, false, 10, -1, 0, 0 },
	{ TB, "1001bit", 1001, 8, true, 5000, -1, 0, 0 },
	{ GCRA, "10", 10, 1, false, 20, -1, 0, 0 },
	{ GCRA, "3", 3, 1, false, 1, -1, 0, 24 },
	{ GCRA, "12.5", 25, 2, false, 7, -1, 0, 0 },
	{ GCRA, "100mpps", 100000000, 1, false, 3, -1, 0, 0 },
	{ GCRA, "12kbit", 1500, 1, true, 3000, -1, 0, 0 },
	{ GCRA, "400gbit", 50000000000ULL, 1, true, 65535, -1, 0, 24 },
	{ GCRA, "12345678", 12345678, 1, false, 10, -1, 0, 0 },
	{ GCRA, "1001bit", 1001, 8, true, 5000, -1, 0, 0 },
};

TEST(algo_prop_bucket_bound)
{
	static struct pkt p[TRACE_LEN];
	static struct rec rc[TRACE_LEN];
	__u64 rs = seed_for(3);

	for (size_t c = 0; c < ARRAY_SIZE(bound_cfgs); c++) {
		for (int r = 0; r < 12; r++) {
			size_t n;

			gen_trace(&rs, &bound_cfgs[c], p, TRACE_LEN, gen_start(&rs), r % 4 == 3);
			n = record(&bound_cfgs[c], p, TRACE_LEN, 0, rc);
			if (!check_bucket_bound(&bound_cfgs[c], rc, n,
						algo_str[bound_cfgs[c].algo]))
				break;
		}
	}
}

/*
 * A source sending evenly spaced packets of one size, at most at its rate
 * (interval >= len / r), is never dropped: token bucket with b >= len, gcra
 * with b >= 1.
 */
struct at_rate {
	const char *rate;
	__u64 num, den;
	bool bytes;
	__u32 len;
	__u64 burst;
};

static const struct at_rate at_rate_cfgs[] = {
	{ "1", 1, 1, false, 64, 1 },
	{ "3", 3, 1, false, 64, 1 },
	{ "7", 7, 1, false, 64, 1 },
	{ "10", 10, 1, false, 64, 1 },
	{ "12.5", 25, 2, false, 64, 1 },
	{ "129", 129, 1, false, 64, 1 },
	{ "12345678", 12345678, 1, false, 64, 1 },
	{ "73000000", 73000000, 1, false, 64, 1 },
	{ "100mpps", 100000000, 1, false, 64, 1 },
	{ "12kbit", 1500, 1, true, 1500, 1500 },
	{ "10kbit", 1250, 1, true, 64, 64 },
	{ "137byte", 137, 1, true, 137, 137 },
	{ "1001bit", 1001, 8, true, 1001, 1001 },
	{ "1009byte", 1009, 1, true, 1009, 1009 },
	{ "1009byte", 1009, 1, true, 64, 64 },
	{ "1gbit", 125000000, 1, true, 1500, 1500 },
	{ "400gbit", 50000000000ULL, 1, true, 65535, 65535 },
	{ "399999999999bit", 399999999999ULL, 8, true, 1500, 1500 },
};

/*
 * 3000 packets of @a->len bytes from @t0, every @step ns (or, with @jitter,
 * every @step to 4 @step ns). False, after reporting, if any was dropped.
 */
static bool at_rate_run(const struct cfg *c, const struct at_rate *a, __u64 t0, __u64 step,
			bool jitter, __u64 *rs)
{
	unsigned int drops = 0;
	size_t first = 0;
	struct rl_sim s;
	__u64 t = t0;

	if (!cfg_sim(c, &s))
		return false;
	for (size_t j = 0; j < 3000; j++) {
		if (core_pkt(&s, 0, t, a->len) != 1 && !drops++)
			first = j;
		t += jitter ? step + rl_rand_below(rs, 3 * step) : step;
	}
	rl_sim_free(&s);
	if (drops) {
		rl_test_fail(__FILE__, __LINE__,
			     "%s --rate %s --burst %llu, %u-byte packets every %llu ns%s from t=%llu: %u dropped, the first at packet %zu (RL_SEED=%llu)",
			     algo_str[c->algo], a->rate, (unsigned long long)c->burst, a->len,
			     (unsigned long long)step, jitter ? " or more" : "",
			     (unsigned long long)t0, drops, first, rl_test_seed());
		return false;
	}
	return true;
}

TEST(algo_prop_at_rate_never_dropped)
{
	static const __u64 starts[] = { 0, NSEC, 5 * NSEC, 987654321, 1ULL << 62,
					(1ULL << 63) - 1000 * NSEC };
	__u64 rs = seed_for(4);

	for (size_t i = 0; i < ARRAY_SIZE(at_rate_cfgs); i++) {
		const struct at_rate *a = &at_rate_cfgs[i];
		u128 d = (u128)a->den * NSEC;
		/* The least whole-ns interval at or above len / r. */
		__u64 iv = (__u64)(((u128)a->len * d + a->num - 1) / a->num);

		for (int algo = TB; algo <= GCRA; algo++) {
			const struct cfg c = { algo, a->rate, a->num, a->den, a->bytes,
					       algo == TB ? a->burst : 1, -1, 0, 0 };

			for (size_t k = 0; k < ARRAY_SIZE(starts) + 4; k++) {
				__u64 t0 = k < ARRAY_SIZE(starts) ? starts[k] : rl_rand(&rs) >> 2;
				/* At the rate, or a little below; the last two jittered. */
				__u64 step = k % 3 == 1 ? iv + 1 + rl_rand_below(&rs, iv) : iv;

				if (!at_rate_run(&c, a, t0, step, k >= ARRAY_SIZE(starts) + 2, &rs))
					break;
			}
		}
	}
}

static const struct cfg window_cfgs[] = {
	{ FW, "10", 10, 1, false, 0, -1, NSEC, 0 },
	{ FW, "3", 3, 1, false, 0, -1, 0, 24 },
	{ FW, "1000", 1000, 1, false, 0, -1, MS, 0 },
	{ FW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 },
	{ FW, "400gbit", 50000000000ULL, 1, true, 0, -1, 1000, 0 },
	{ SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
	{ SW, "3", 3, 1, false, 0, -1, 0, 24 },
	{ SW, "1000", 1000, 1, false, 0, -1, MS, 0 },
	{ SW, "7", 7, 1, false, 0, -1, 3 * NSEC, 0 },
	{ SW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 },
	{ SW, "400gbit", 50000000000ULL, 1, true, 0, -1, 1000, 0 },
	/* 24-bit counts and W > 2^40 ns: the 128-bit comparison (the others fit in 64). */
	{ SW, "10000", 10000, 1, false, 0, -1, 1200 * NSEC, 0 },
};

/*
 * Windows, from the record alone: in every window [kW, (k+1)W) what passed
 * before a packet is below L if it passed (so at most L packets, or L - 1 plus
 * the last frame in byte mode), and the sliding estimate
 * p (W - e) / W + c < L holds exactly for the packets that pass, and fails
 * for those dropped.
 */
static bool check_windows(const struct cfg *c, const struct rec *rc, size_t n)
{
	__u64 w = c->window ? c->window : NSEC, l = (__u64)((u128)c->num * w / c->den / NSEC);
	__u64 k = 0, cur = 0, prev = 0;
	char desc[256];

	for (size_t i = 0; i < n; i++) {
		__u64 ki = rc[i].t / w, e = rc[i].t % w;
		bool est;

		if (!i || ki != k) {
			prev = i && ki == k + 1 ? cur : 0;
			cur = 0;
			k = ki;
		}
		if (c->algo == FW)
			est = cur < l;
		else
			est = (u128)prev * (w - e) + (u128)cur * w < (u128)l * w;
		if (rc[i].pass != est) {
			rl_test_fail(__FILE__, __LINE__,
				     "%s: packet at t=%llu (window %llu, %llu in it, %llu in the one before, L %llu): %s (RL_SEED=%llu)",
				     cfg_str(c, desc, sizeof(desc)), (unsigned long long)rc[i].t,
				     (unsigned long long)ki, (unsigned long long)cur,
				     (unsigned long long)prev, (unsigned long long)l,
				     rc[i].pass ? "passed" : "dropped", rl_test_seed());
			return false;
		}
		if (rc[i].pass)
			cur += rc[i].cost;
		if (!c->bytes && cur > l) {
			rl_test_fail(__FILE__, __LINE__, "%s: %llu passed in window %llu, limit %llu",
				     cfg_str(c, desc, sizeof(desc)), (unsigned long long)cur,
				     (unsigned long long)ki, (unsigned long long)l);
			return false;
		}
	}
	return true;
}

TEST(algo_prop_windows)
{
	static struct pkt p[TRACE_LEN];
	static struct rec rc[TRACE_LEN];
	__u64 rs = seed_for(5);

	for (size_t c = 0; c < ARRAY_SIZE(window_cfgs); c++) {
		for (int r = 0; r < 12; r++) {
			size_t n;

			gen_trace(&rs, &window_cfgs[c], p, TRACE_LEN, gen_start(&rs), r % 4 == 3);
			for (unsigned int src = 0; src < NSRC; src++) {
				n = record(&window_cfgs[c], p, TRACE_LEN, src, rc);
				if (!check_windows(&window_cfgs[c], rc, n))
					return;
			}
		}
	}
}

/*
 * The sliding estimate's two comparisons, 64-bit (when the products fit) and
 * 128-bit, against exact arithmetic on random states and on exact ties
 * (p (W - e) = (L - c) W: a tie drops), which random traces rarely meet.
 */
TEST(algo_sliding_compare_paths)
{
	static const char *const pols[][7] = {
		{ "--algo", "sliding-window", "--rate", "1000", "--window", "1s", NULL },
		{ "--algo", "sliding-window", "--rate", "10000", "--window", "1200s", NULL },
		{ "--algo", "sliding-window", "--rate", "16mbyte", "--window", "1s", NULL },
	};
	__u64 rs = seed_for(11);
	char err[256];

	for (size_t i = 0; i < ARRAY_SIZE(pols); i++) {
		struct rl_params p;
		__u64 w, l, cmax;
		int ties = 0;

		if (!ASSERT_OK(policy_try(pols[i], &p, err, sizeof(err)), err))
			return;
		w = p.window_ns;
		l = p.limit;
		cmax = (1ULL << p.cnt_bits) - 1;
		for (int n = 0; n < 200000; n++) {
			__u64 k = 1000 + rl_rand_below(&rs, 1000000), e, prev, cur, next = 0, st;
			bool tie = n % 4 == 0, want;
			int got;

			cur = rl_rand_below(&rs, l);
			if (tie) {
				/* e = W / 2 (W is even here) and prev = 2 (L - cur). */
				e = w / 2;
				prev = 2 * (l - cur);
				if (prev > cmax)
					continue;
				ties++;
			} else {
				e = rl_rand_below(&rs, w);
				prev = rl_rand_below(&rs, cmax + 1);
			}
			st = ((((k & p.id_mask) << p.cnt_bits) | prev) << p.cnt_bits) | cur;
			want = (u128)prev * (w - e) < (u128)(l - cur) * w;
			got = rl_sliding_step(&p, st, k * w + e, 1, &next);
			if (!ASSERT_EQ(got, want, pols[i][5]) ||
			    (got && !ASSERT_EQ(next, st + 1, "the count goes up by the cost")))
				return;
		}
		printf("    %s per %s: %d ties, %s comparison\n", pols[i][3], pols[i][5], ties,
		       w >> (64 - p.cnt_bits) ? "128-bit" : "64-bit");
		if (!ASSERT_TRUE(ties > 1000, "ties were checked"))
			return;
	}
}

/*
 * A packet whose clock read comes from just before a window boundary, against
 * a state that another CPU has already moved into the next window: it is
 * counted in that window (here: dropped, the window being full) and the state
 * keeps it, instead of going back a window and restarting the count.
 */
TEST(algo_window_state_ahead)
{
	static const char *const pols[][7] = {
		{ "--algo", "fixed-window", "--rate", "10", "--window", "1s", NULL },
		{ "--algo", "sliding-window", "--rate", "10", "--window", "1s", NULL },
	};
	char err[256];

	for (size_t i = 0; i < ARRAY_SIZE(pols); i++) {
		const __u64 k = 1000, w = NSEC;
		struct rl_params p;
		__u64 st, next = 0;
		int passed = 0;

		if (!ASSERT_OK(policy_try(pols[i], &p, err, sizeof(err)), err))
			return;
		st = rl_initial_state(&p, (k + 1) * w);
		/* Window k + 1 filled: 10 packets from its start on. */
		for (int n = 0; n < 20; n++) {
			if (rl_step(&p, st, (k + 1) * w + (__u64)n, 1, &next)) {
				st = next;
				passed++;
			}
		}
		if (!ASSERT_EQ(passed, 10, pols[i][1]))
			return;
		/* A stale clock: 1 ns before the boundary, in window k. */
		if (!ASSERT_EQ(rl_step(&p, st, (k + 1) * w - 1, 1, &next), 0, pols[i][1]))
			return;
		/* And back on time, window k + 1 is still full. */
		if (!ASSERT_EQ(rl_step(&p, st, (k + 1) * w + 100, 1, &next), 0, pols[i][1]))
			return;
	}
}

/* ---------------------------------------------------------------------------
 * Rate accuracy: overload a source at 3x its rate for a long simulated time;
 * what passes must be r t + b (and one packet more for gcra) within 1e-4.
 */
struct acc {
	const char *rate;
	__u64 num, den;
	bool bytes;
};

static const struct acc acc_cfgs[] = {
	{ "1", 1, 1, false },
	{ "1.5", 3, 2, false },
	{ "3", 3, 1, false },
	{ "7", 7, 1, false },
	{ "129", 129, 1, false },
	{ "999.999", 999999, 1000, false },
	{ "12345678", 12345678, 1, false },
	{ "33333333.333", 33333333333ULL, 1000, false },
	{ "73mpps", 73000000, 1, false },
	{ "99999999", 99999999, 1, false },
	{ "100mpps", 100000000, 1, false },
	{ "1kbit", 125, 1, true },
	{ "1001bit", 1001, 8, true },
	{ "56kbit", 7000, 1, true },
	{ "1.544mbit", 193000, 1, true },
	{ "12345.678kbit", 12345678, 8, true },
	{ "10gbit", 1250000000, 1, true },
	{ "100gbit", 12500000000ULL, 1, true },
	{ "399999999999bit", 399999999999ULL, 8, true },
	{ "400gbit", 50000000000ULL, 1, true },
};

TEST(algo_rate_accuracy)
{
	const size_t npkt = 150000;
	__u64 rs = seed_for(6);

	for (size_t i = 0; i < ARRAY_SIZE(acc_cfgs); i++) {
		const struct acc *a = &acc_cfgs[i];
		const char *rate = a->rate;
		__u32 len = a->bytes ? (a->num / a->den < 10000 ? 64 : 1500) : 1;
		u128 d = (u128)a->den * NSEC;
		__u64 iv = (__u64)(d * len / (3 * (u128)a->num));

		if (!iv)
			iv = 1;
		for (int algo = TB; algo <= GCRA; algo++) {
			const struct cfg c = { algo, rate, a->num, a->den, a->bytes, 10ULL * len,
					       -1, 0, 0 };
			__u64 t0 = rl_rand(&rs) >> 3, t = t0, passed = 0;
			long double want, ratio;
			struct rl_sim s;

			if (!cfg_sim(&c, &s))
				return;
			for (size_t j = 0; j < npkt; j++, t += iv)
				passed += core_pkt(&s, 0, t, len) == 1 ? (a->bytes ? len : 1) : 0;
			rl_sim_free(&s);
			t -= iv;
			want = (long double)a->num * (t - t0) / ((long double)a->den * NSEC) +
			       c.burst + (algo == GCRA ? len : 0);
			ratio = passed / want;
			if (!ASSERT_TRUE(ratio > 1 - 1e-4L && ratio < 1 + 1e-4L, "rate accuracy"))
				fprintf(stderr,
					"    %s --rate %s: passed %llu, expected r t + b = %.1Lf (ratio %.8Lf) over %llu ns from t=%llu\n",
					algo_str[algo], rate, (unsigned long long)passed, want,
					ratio, (unsigned long long)(t - t0),
					(unsigned long long)t0);
		}
	}
}

/*
 * The fixed point the core is given for rates it does not hold exactly, as
 * rl_algo.h documents: below 10^9 cost units per second between half a vt
 * and one vt per ns (ticks of at most 2 ns, and vt wraps no sooner than the
 * ns clock); above, unit_cost 1 and at most 128 vt per ns; and a relative
 * rate error under 1e-15.
 */
TEST(algo_params_scale)
{
	static const struct acc rates[] = {
		{ "3", 3, 1, false },
		{ "7", 7, 1, false },
		{ "13", 13, 1, false },
		{ "0.000000001", 1, 1000000000, false },
		{ "1.000000001", 1000000001, 1000000000, false },
		{ "129", 129, 1, false },
		{ "999.999", 999999, 1000, false },
		{ "12345678", 12345678, 1, false },
		{ "73mpps", 73000000, 1, false },
		{ "999999999", 999999999, 1, false },
		{ "1000000001", 1000000001, 1, false },
		{ "1001bit", 1001, 8, true },
		{ "12kbit", 1500, 1, true },
		{ "137byte", 137, 1, true },
		{ "10gbit", 1250000000, 1, true },
		{ "399999999999bit", 399999999999ULL, 8, true },
		{ "1tbit", 125000000000ULL, 1, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rates); i++) {
		const char *opts[] = { "--rate", rates[i].rate, "--burst", "1", NULL };
		const struct cfg c = { TB, rates[i].rate, rates[i].num, rates[i].den, false,
				       1, -1, 0, 0 };
		u128 d = (u128)rates[i].den * NSEC, num = rates[i].num;
		char err[RL_ERRLEN];
		struct rl_params p;
		long double e;

		if (!ASSERT_OK(policy_try(opts, &p, err, sizeof(err)), rates[i].rate) ||
		    params_exact(&c, &p))
			continue;
		if (num < d) {
			ASSERT_LE(p.vt_mult, 1ULL << RL_VT_SHIFT, "at most one vt per ns");
			ASSERT_LE(1ULL << (RL_VT_SHIFT - 1), p.vt_mult, "ticks of at most 2 ns");
		} else {
			ASSERT_EQ(p.unit_cost, 1, rates[i].rate);
			ASSERT_LE(p.vt_mult, (__u64)RL_VT_PER_NS_MAX << RL_VT_SHIFT, rates[i].rate);
		}
		/* (vt_mult / 2^56 / unit_cost) / (num / d) - 1 */
		e = (long double)p.vt_mult * (long double)d /
			    ((long double)num * (long double)p.unit_cost *
			     (long double)(1ULL << RL_VT_SHIFT)) - 1;
		if (!ASSERT_TRUE(e > -1e-15L && e < 1e-15L, rates[i].rate))
			fprintf(stderr, "    relative rate error %Lg\n", e);
	}
}

/*
 * Rates whose cost unit lasts a whole number of ns (or, above 10^9 per
 * second, a whole number of cost units per ns), to be matched packet for
 * packet: the fixed point must hold each exactly (a whole number of vt per
 * ns, and vt per ns / unit_cost = the rate per ns). 3/s and 7/s are not among
 * them: exact, they would need vt of 1/3 ns and a state that wraps before the
 * clock does (rl_algo.h).
 */
TEST(algo_params_brief_rates_exact)
{
	static const struct acc rates[] = {
		{ "1", 1, 1, false },	     { "2.5", 5, 2, false },	  { "40", 40, 1, false },
		{ "10", 10, 1, false },	     { "100", 100, 1, false },	  { "1000", 1000, 1, false },
		{ "12.5", 25, 2, false },    { "10kbit", 1250, 1, true }, { "100mbit", 12500000, 1, true },
		{ "1gbit", 125000000, 1, true }, { "400gbit", 50000000000ULL, 1, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rates); i++) {
		const char *opts[] = { "--rate", rates[i].rate, NULL };
		const struct cfg c = { TB, rates[i].rate, rates[i].num, rates[i].den, false,
				       1, -1, 0, 0 };
		char err[RL_ERRLEN];
		struct rl_params p;

		if (ASSERT_OK(policy_try(opts, &p, err, sizeof(err)), rates[i].rate) &&
		    !ASSERT_TRUE(params_exact(&c, &p), rates[i].rate))
			fprintf(stderr, "    --rate %s: vt_mult %#llx, unit_cost %llu\n",
				rates[i].rate, (unsigned long long)p.vt_mult,
				(unsigned long long)p.unit_cost);
	}
}

/* ---------------------------------------------------------------------------
 * Overflow and wrap edges.
 */
TEST(algo_edge_clock_top)
{
	/* 2^63 and 2^64 - 1 ns: the clock crosses 2^63, and ends on the last ns. */
	const __u64 h = 1ULL << 63;
	const struct cfg tb = { TB, "10", 10, 1, false, 20, -1, 0, 0 };
	const struct step stb63[] = {
		{ h - 2 * NSEC, 64, 20, 5 }, { h - NSEC, 64, 10, 1 }, { h, 64, 10, 1 },
		{ h + 100 * MS - 1, 64, 0, 1 }, { h + 100 * MS, 64, 1, 1 },
	};
	const struct step stbtop[] = {
		{ TOP - 2500 * MS, 64, 20, 5 }, { TOP - 2400 * MS, 64, 1, 1 },
		{ TOP - 1, 64, 20, 1 }, { TOP, 64, 0, 1 },
	};
	const struct cfg gc = { GCRA, "10", 10, 1, false, 20, -1, 0, 0 };
	const struct step sgtop[] = {
		{ TOP - 3 * NSEC, 64, 20, 1 }, { TOP - 2 * NSEC, 64, 10, 1 },
		{ TOP - 2 * NSEC + 100 * MS - 1, 64, 1, 1 },
		{ TOP - 2 * NSEC + 100 * MS, 64, 0, 1 },
		{ TOP - 2 * NSEC + 100 * MS + 1, 64, 1, 1 },
		{ TOP, 64, 18, 1 },			/* 20.99999999 - 18.99999999 = 2 */
	};
	/* 128e9/s is 128 vt per ns: the vt clock itself wraps many times below 2^64 ns. */
	const struct cfg fast = { TB, "128000000000", 128000000000ULL, 1, false, 128, -1, 0, 0 };
	const struct step sfast[] = {
		{ TOP - 10, 64, 128, 1 }, { TOP - 9, 64, 128, 1 }, { TOP, 64, 128, 0 },
	};
	const struct cfg gbytes = { GCRA, "400gbit", 50000000000ULL, 1, true, 65535, -1, 0, 0 };
	const struct step sgbytes[] = {
		{ TOP - 3000, 65535, 1, 1 },		/* level 65535 */
		{ TOP - 2999, 65535, 1, 1 },		/* 65485 -> 131020 */
		{ TOP - 2999 + 1309, 65535, 0, 1 },	/* 65570 */
		{ TOP - 2999 + 1310, 65535, 1, 1 },	/* 65520 -> 131055 */
		{ TOP, 65535, 1, 1 },			/* 46605 */
	};
	/* The last whole window below 2^64: [18446744073 s, 2^64 - 1]. */
	const __u64 lastw = TOP / NSEC * NSEC;
	const struct cfg fw = { FW, "10", 10, 1, false, 0, -1, NSEC, 0 };
	const struct step sfw[] = {
		{ lastw - 1, 64, 10, 1 }, { lastw, 64, 10, 1 }, { TOP, 64, 0, 1 },
	};
	const struct cfg sw = { SW, "10", 10, 1, false, 0, -1, NSEC, 0 };
	const struct step ssw[] = {
		{ lastw - 1, 64, 10, 1 }, { lastw, 64, 0, 1 }, { lastw + NSEC / 2, 64, 5, 1 },
		{ TOP, 64, 3, 1 },			/* 2.90448385 + 5..7 */
	};
	const struct step ssw63[] = {
		{ h - 1, 64, 10, 1 }, { h, 64, 0, 1 }, { h + NSEC, 64, 9, 1 },
	};

	RUN_STEPS("token-bucket across 2^63", &tb, stb63);
	RUN_STEPS("token-bucket at 2^64 - 1", &tb, stbtop);
	RUN_STEPS("gcra at 2^64 - 1", &gc, sgtop);
	RUN_STEPS("token-bucket 128e9/s at 2^64 - 1", &fast, sfast);
	RUN_STEPS("gcra 400gbit at 2^64 - 1", &gbytes, sgbytes);
	RUN_STEPS("fixed-window at 2^64 - 1", &fw, sfw);
	RUN_STEPS("sliding-window at 2^64 - 1", &sw, ssw);
	RUN_STEPS("sliding-window across 2^63", &sw, ssw63);
}

/*
 * Drain a bucket at @t0, idle for @gap, then burst: a full bucket again (the
 * gap is far longer than b / r). Returns false after reporting.
 */
static bool idle_then_burst(const struct cfg *c, __u64 t0, __u64 gap, __u32 len, const char *what)
{
	__u64 b = c->burst ? c->burst : default_burst(c), cost = c->bytes ? len : 1;
	/* A full token bucket takes floor(b / cost); gcra from empty takes ceil(b / cost). */
	__u64 want = c->algo == TB ? b / cost : (b + cost - 1) / cost;
	__u64 n = 0, drain = 0;
	char desc[256];
	struct rl_sim s;

	if (!cfg_sim(c, &s))
		return false;
	while (core_pkt(&s, 0, t0, len) == 1 && drain < want + 10)
		drain++;
	while (core_pkt(&s, 0, t0 + gap, len) == 1 && n < want + 10)
		n++;
	rl_sim_free(&s);
	if (drain != want || n != want) {
		rl_test_fail(__FILE__, __LINE__,
			     "%s: %s: %llu passed at t=%llu and %llu after %llu ns (%.2f years) idle; expected %llu both times",
			     what, cfg_str(c, desc, sizeof(desc)), (unsigned long long)drain,
			     (unsigned long long)t0, (unsigned long long)n, (unsigned long long)gap,
			     (double)gap / YEAR_NS, (unsigned long long)want);
		return false;
	}
	return true;
}

/* The largest --burst rl_params_init() accepts for @c, by bisection; 0 if none. */
static __u64 max_burst(const struct cfg *c)
{
	__u64 lo = 0, hi = 1ULL << 62;

	while (lo < hi) {
		__u64 mid = lo + (hi - lo + 1) / 2;
		struct cfg t = *c;
		char err[RL_ERRLEN];
		struct optv o;

		t.burst = mid;
		cfg_opts(&t, &o);
		if (policy_try((const char *const *)o.argv, NULL, err, sizeof(err)))
			hi = mid - 1;
		else
			lo = mid;
	}
	return lo;
}

static const struct cfg idle_cfgs[] = {
	{ TB, "10", 10, 1, false, 20, -1, 0, 0 },
	{ TB, "1", 1, 1, false, 5, -1, 0, 0 },
	{ TB, "3", 3, 1, false, 3, -1, 0, 0 },
	{ TB, "13", 13, 1, false, 13, -1, 0, 0 },
	{ TB, "12kbit", 1500, 1, true, 3000, -1, 0, 0 },
	{ TB, "127", 127, 1, false, 127, -1, 0, 0 },
	{ TB, "129", 129, 1, false, 129, -1, 0, 0 },
	{ TB, "12345678", 12345678, 1, false, 1000, -1, 0, 0 },
	{ TB, "128000000000", 128000000000ULL, 1, false, 1000, -1, 0, 0 },
	{ TB, "1001bit", 1001, 8, true, 1522, -1, 0, 0 },
	{ TB, "400gbit", 50000000000ULL, 1, true, 65535 * 100, -1, 0, 0 },
	{ TB, "399999999999bit", 399999999999ULL, 8, true, 65535 * 100, -1, 0, 0 },
	{ GCRA, "10", 10, 1, false, 20, -1, 0, 0 },
	{ GCRA, "13", 13, 1, false, 13, -1, 0, 0 },
	{ GCRA, "127", 127, 1, false, 127, -1, 0, 0 },
	{ GCRA, "12345678", 12345678, 1, false, 1000, -1, 0, 0 },
	{ GCRA, "1001bit", 1001, 8, true, 1522, -1, 0, 0 },
	{ GCRA, "399999999999bit", 399999999999ULL, 8, true, 65535 * 100, -1, 0, 0 },
};

/* A source idle for a year, and for three: its bucket is full (its queue empty). */
TEST(algo_edge_idle_years)
{
	static const __u64 starts[] = { 0, 1000 * NSEC, 1ULL << 62, (1ULL << 63) - YEAR_NS };

	for (size_t i = 0; i < ARRAY_SIZE(idle_cfgs); i++) {
		__u32 len = idle_cfgs[i].bytes ? 1500 : 64;

		for (size_t k = 0; k < ARRAY_SIZE(starts); k++) {
			if (!idle_then_burst(&idle_cfgs[i], starts[k], YEAR_NS, len, "1 year") ||
			    !idle_then_burst(&idle_cfgs[i], starts[k], 3 * YEAR_NS, len, "3 years"))
				break;
		}
	}
	/* The same with the largest burst accepted (the largest TAT lead). */
	for (size_t i = 0; i < ARRAY_SIZE(idle_cfgs); i++) {
		struct cfg c = idle_cfgs[i];
		__u64 mb = max_burst(&c);

		if (!c.bytes || !ASSERT_TRUE(mb > 0, "some burst is accepted"))
			continue;
		/* Bytes only: the burst in 65535-byte frames stays countable. */
		c.burst = mb;
		if (mb / 65535 > 200000)
			continue;
		if (!idle_then_burst(&c, 0, 2 * YEAR_NS, 65535, "largest burst, 2 years") ||
		    !idle_then_burst(&c, 12345, 3 * YEAR_NS, 65535, "largest burst, 3 years"))
			break;
	}
}

/*
 * Any gap, as the spec says: 4, 10, 100 and 200 years, with the clock staying
 * below 2^63 ns, and exactly the gaps where the core's vt clock (vt = now x
 * vt_mult / 2^56, mod 2^64) has gone once or twice around, which the state
 * cannot tell from no gap at all. @wide: the policies with more than one vt
 * per ns, or the others.
 */
static void idle_any_gap(bool wide)
{
	for (size_t i = 0; i < ARRAY_SIZE(idle_cfgs); i++) {
		const struct cfg *c = &idle_cfgs[i];
		__u32 len = c->bytes ? 1500 : 64;
		const __u64 t0 = NSEC, room = (1ULL << 63) - t0;
		struct rl_sim s;
		u128 wrap;
		__u64 gaps[7];

		if (!cfg_sim(c, &s))
			return;
		/* ns for 2^64 vt: 2^120 / vt_mult. */
		wrap = ((u128)1 << 120) / s.params.vt_mult;
		rl_sim_free(&s);
		if ((s.params.vt_mult > (1ULL << RL_VT_SHIFT)) != wide)
			continue;
		if (wide) {
			/*
			 * Above 10^9 cost units per second: gaps read right up
			 * to (2^64 - ahead_max) vt, as rl_algo.h documents.
			 */
			u128 inside = ((((u128)1 << 64) - s.params.ahead_max) << RL_VT_SHIFT) /
				      s.params.vt_mult - 1000;

			memset(gaps, 0, sizeof(gaps));
			gaps[0] = YEAR_NS;
			gaps[1] = 3 * YEAR_NS < inside ? 3 * YEAR_NS : 0;
			gaps[2] = inside <= room ? (__u64)inside : 0;
		} else {
			gaps[0] = 4 * YEAR_NS;
			gaps[1] = 10 * YEAR_NS;
			gaps[2] = 100 * YEAR_NS;
			gaps[3] = 200 * YEAR_NS;
			gaps[4] = wrap <= room ? (__u64)wrap : 0;
			gaps[5] = wrap <= room ? (__u64)wrap - 1000 : 0;
			gaps[6] = 2 * wrap + 1 <= room ? (__u64)(2 * wrap) + 1 : 0;
		}
		for (size_t k = 0; k < ARRAY_SIZE(gaps); k++) {
			if (gaps[k] && !idle_then_burst(c, t0, gaps[k], len, "idle"))
				break;
		}
	}
}

/* At most one vt per ns: rl_algo.h says any gap is read right, up to 2^63 ns. */
TEST(algo_edge_idle_any_gap)
{
	idle_any_gap(false);
}

/*
 * More than one vt per ns (byte rates above 8 Gbit/s): rl_algo.h trades
 * range for sub-ns precision there; every gap up to the documented bound,
 * (2^64 - ahead_max) vt (4.5 years and more), must be read right.
 */
TEST(algo_edge_idle_any_gap_fine_vt)
{
	idle_any_gap(true);
}

/*
 * Windows after long gaps: a fresh window whatever the gap, including exactly
 * 2^16 and 2^24 windows (window ids once kept that many bits), and a year.
 */
static void window_gaps(const struct cfg *cfgs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct cfg *c = &cfgs[i];
		__u64 w = c->window, l = (__u64)((u128)c->num * w / c->den / NSEC);
		/* Fill with the largest frames: ceil(L / len) of them pass. */
		__u32 len = c->bytes ? 65535 : 64;
		__u64 want = c->bytes ? (l + len - 1) / len : l;
		__u64 wins[] = { 2, 3, 1ULL << 16, (1ULL << 16) + 1, (1ULL << 24),
				 (1ULL << 24) + 1, YEAR_NS / w, 3 * YEAR_NS / w, 5 * YEAR_NS / w };

		for (size_t k = 0; k < ARRAY_SIZE(wins); k++) {
			__u64 t0 = 7 * w, t1;
			struct rl_sim s;
			unsigned int a = 0, b = 0;

			if ((u128)t0 + (u128)wins[k] * w > TOP - w)
				continue;
			t1 = t0 + wins[k] * w;
			if (!cfg_sim(c, &s))
				return;
			/* Fill window 7, then come back @wins windows later, at its start. */
			while (core_pkt(&s, 0, t0, len) == 1 && a <= want)
				a++;
			while (core_pkt(&s, 0, t1, len) == 1 && b <= want)
				b++;
			rl_sim_free(&s);
			if (!ASSERT_EQ(a, want, "first window full") ||
			    !ASSERT_EQ(b, want, "a fresh window after the gap")) {
				fprintf(stderr, "    %s --rate %s --window %lluns: idle %llu windows (%llu s)\n",
					algo_str[c->algo], c->rate, (unsigned long long)w,
					(unsigned long long)wins[k],
					(unsigned long long)(wins[k] * w / NSEC));
				break;
			}
		}
	}
}

TEST(algo_edge_window_gaps)
{
	static const struct cfg cfgs[] = {
		{ FW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		{ FW, "1000000", 1000000, 1, false, 0, -1, 1000, 0 },
		{ FW, "1", 1, 1, false, 0, -1, 86400 * NSEC, 0 },
		{ FW, "10mbyte", 10000000, 1, true, 0, -1, NSEC, 0 },
		{ SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		{ SW, "1000000", 1000000, 1, false, 0, -1, 1000, 0 },
		{ SW, "1", 1, 1, false, 0, -1, 86400 * NSEC, 0 },
		{ SW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 },
	};

	window_gaps(cfgs, ARRAY_SIZE(cfgs));
}

/*
 * Sliding windows with large byte limits: two counts of 24 bits leave 16 bits
 * of window id, which comes round every 65536 windows. The issue asks the
 * window algorithms for a documented layout and wrap: rl_algo.h and the
 * README say a source idle for exactly a multiple of 2^id_bits windows finds
 * its old counts. Check both sides of that: every other gap gives a fresh
 * window, and the wrap itself does what the documentation says.
 */
TEST(algo_edge_window_gaps_large_limits)
{
	static const struct cfg cfgs[] = {
		{ SW, "10mbyte", 10000000, 1, true, 0, -1, NSEC, 0 },
		{ SW, "16mbyte", 16000000, 1, true, 0, -1, NSEC, 0 },
		{ SW, "1gbyte", 1000000000, 1, true, 0, -1, 10 * MS, 0 },
	};
	const __u32 len = 65535;

	for (size_t i = 0; i < ARRAY_SIZE(cfgs); i++) {
		const struct cfg *c = &cfgs[i];
		__u64 w = c->window, l = (__u64)((u128)c->num * w / c->den / NSEC);
		__u64 want = (l + len - 1) / len, period;
		struct rl_sim s;

		if (!cfg_sim(c, &s))
			return;
		period = s.params.id_mask + 1;
		rl_sim_free(&s);
		ASSERT_TRUE(period >= 1ULL << 16, "at least 16 bits of window id");
		{
			const __u64 wins[] = { 2, 3, 1000, period - 1, period, period + 1,
					       2 * period - 1, 2 * period };
			/*
			 * Fresh, but at the multiples of the period, the window
			 * after (where the old window reads as the previous one)
			 * and the window before (where it reads as the next one,
			 * that another CPU moved the source into: rl_window_ahead()):
			 * the documented wrap.
			 */
			const bool wraps[] = { false, false, false, true, true, true, true, true };

			for (size_t k = 0; k < ARRAY_SIZE(wins); k++) {
				__u64 t0 = 7 * w, t1 = t0 + wins[k] * w;
				unsigned int a = 0, b = 0;

				if (!cfg_sim(c, &s))
					return;
				while (core_pkt(&s, 0, t0, len) == 1 && a <= want)
					a++;
				while (core_pkt(&s, 0, t1, len) == 1 && b <= want)
					b++;
				rl_sim_free(&s);
				if (!ASSERT_EQ(a, want, "first window full") ||
				    !ASSERT_EQ(b, wraps[k] ? 0 : want,
					       wraps[k] ? "the documented wrap: the old count"
							: "a fresh window after the gap")) {
					fprintf(stderr,
						"    sliding-window --rate %s --window %lluns: idle %llu windows, period %llu\n",
						c->rate, (unsigned long long)w,
						(unsigned long long)wins[k], (unsigned long long)period);
					break;
				}
			}
		}
	}
}

/*
 * The largest burst accepted: accepted, one more refused with a message about
 * --burst; and the core agrees with the model at that burst, from near empty
 * and near full, over gaps up to a century.
 */
TEST(algo_edge_max_burst)
{
	static const struct cfg cfgs[] = {
		{ TB, "1", 1, 1, false, 0, -1, 0, 0 },
		{ TB, "10", 10, 1, false, 0, -1, 0, 0 },
		{ TB, "12345678", 12345678, 1, false, 0, -1, 0, 0 },
		{ TB, "100mpps", 100000000, 1, false, 0, -1, 0, 0 },
		{ TB, "1kbit", 125, 1, true, 0, -1, 0, 0 },
		{ TB, "1001bit", 1001, 8, true, 0, -1, 0, 0 },
		{ TB, "400gbit", 50000000000ULL, 1, true, 0, -1, 0, 0 },
		{ GCRA, "1", 1, 1, false, 0, -1, 0, 0 },
		{ GCRA, "10", 10, 1, false, 0, -1, 0, 0 },
		{ GCRA, "100mpps", 100000000, 1, false, 0, -1, 0, 0 },
		{ GCRA, "1001bit", 1001, 8, true, 0, -1, 0, 0 },
		{ GCRA, "400gbit", 50000000000ULL, 1, true, 0, -1, 0, 0 },
	};
	static struct pkt p[TRACE_LEN];
	__u64 rs = seed_for(7);

	for (size_t i = 0; i < ARRAY_SIZE(cfgs); i++) {
		struct cfg c = cfgs[i];
		char err[RL_ERRLEN];
		struct optv o;
		__u64 mb = max_burst(&c);

		if (!ASSERT_TRUE(mb >= (c.bytes ? 65535 : 1), "a useful burst is accepted"))
			continue;
		c.burst = mb + 1;
		cfg_opts(&c, &o);
		if (mb < (1ULL << 62) &&
		    ASSERT_TRUE(policy_try((const char *const *)o.argv, NULL, err, sizeof(err)),
				"one more than the largest burst is refused"))
			ASSERT_CONTAINS(err, "--burst", "the message names --burst");
		c.burst = mb;
		for (int r = 0; r < 4; r++) {
			__u64 t;

			/* From nearly empty and from nearly full. */
			if (r < 2)
				c.initial = 3LL * r;
			else
				c.initial = (long long)(mb - 3ULL * (unsigned int)(r - 2));
			gen_trace(&rs, &c, p, TRACE_LEN, rl_rand_below(&rs, 1ULL << 60), 0);
			/*
			 * Gaps up to 3 years (longer ones are algo_edge_idle_any_gap's):
			 * at the largest burst the TAT leads the clock by up to 2^62 vt.
			 */
			t = p[0].t;
			p[0].src = 0;
			for (size_t j = 1; j < TRACE_LEN; j++) {
				__u64 gap = p[j].t - p[j - 1].t;

				p[j].src = 0;	/* one source: its idle time is the gap */
				if (!rl_rand_below(&rs, 50) || gap > 3 * YEAR_NS)
					gap = rl_rand_below(&rs, 3 * YEAR_NS);
				t = gap > TOP - t ? TOP : t + gap;
				p[j].t = t;
			}
			if (!diff_trace(&c, p, TRACE_LEN, "largest burst"))
				break;
		}
	}
}

/* Byte mode: a frame longer than a token bucket's burst never passes. */
TEST(algo_edge_long_frame)
{
	static const struct cfg cfgs[] = {
		{ TB, "12kbit", 1500, 1, true, 1000, -1, 0, 0 },
		{ TB, "400gbit", 50000000000ULL, 1, true, 1499, -1, 0, 0 },
		{ TB, "1001bit", 1001, 8, true, 1499, -1, 0, 0 },
	};
	__u64 rs = seed_for(8);

	for (size_t i = 0; i < ARRAY_SIZE(cfgs); i++) {
		struct rl_sim s;
		__u64 t = rl_rand(&rs) >> 2;
		unsigned int n = 0;

		if (!cfg_sim(&cfgs[i], &s))
			return;
		for (int j = 0; j < 2000; j++) {
			__u64 gap = j % 10 ? rl_rand_below(&rs, 1ULL << 40) : YEAR_NS;

			n += core_pkt(&s, 0, t, (__u32)cfgs[i].burst + 1 + (j % 3 ? 0 : j)) == 1;
			t += gap;
		}
		ASSERT_EQ(n, 0, cfgs[i].rate);
		/* ...while a frame of exactly the burst passes into a full bucket. */
		ASSERT_EQ(core_pkt(&s, 0, t + YEAR_NS, (__u32)cfgs[i].burst), 1, "len = burst");
		rl_sim_free(&s);
	}
}

/* ---------------------------------------------------------------------------
 * Configurations refused, with a message that says why.
 */
struct refusal {
	const char *opts[12];
	const char *why[2];	/* substrings of the message */
};

static void check_refusals(const struct refusal *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char err[RL_ERRLEN], cmd[256] = "";
		size_t len = 0;

		for (int k = 0; r[i].opts[k]; k++)
			len += snprintf(cmd + len, sizeof(cmd) - len, " %s", r[i].opts[k]);
		if (!ASSERT_TRUE(policy_try(r[i].opts, NULL, err, sizeof(err)) != 0, cmd))
			continue;
		for (int k = 0; k < 2 && r[i].why[k]; k++)
			ASSERT_CONTAINS(err, r[i].why[k], cmd);
	}
}

TEST(algo_refuse_options)
{
	static const struct refusal r[] = {
		{ { "--rate", "0", NULL }, { "--rate", "zero" } },
		{ { "--rate", "0.000", NULL }, { "--rate", "zero" } },
		{ { "--rate", "0kbit", NULL }, { "--rate", "zero" } },
		{ { "--rate", "10furlongs", NULL }, { "--rate", "unit" } },
		{ { "--rate", "10 kbit", NULL }, { "--rate", "unit" } },
		{ { "--rate", "1e6", NULL }, { "--rate", "unit" } },
		{ { "--rate", "kbit", NULL }, { "--rate", "not a rate" } },
		{ { "--rate", "", NULL }, { "--rate", "not a rate" } },
		{ { "--rate", "-5", NULL }, { "--rate", "not a rate" } },
		{ { "--rate", "1.0000000001", NULL }, { "--rate", "decimals" } },
		{ { "--rate", "99999999999999999999", NULL }, { "--rate", NULL } },
		{ { "--rate", NULL }, { "--rate", "needs a value" } },
		{ { "--rate", "10", "--burst", NULL }, { "--burst", "needs a value" } },
		{ { "--rate", "10", "--burst", "0", NULL }, { "--burst", "range" } },
		{ { "--rate", "10", "--burst", "-1", NULL }, { "--burst", NULL } },
		{ { "--rate", "10", "--burst", "2x", NULL }, { "--burst", "whole number" } },
		{ { "--rate", "10", "--burst", "4611686018427387905", NULL }, { "--burst", "range" } },
		{ { "--rate", "10", "--algo", "leaky-bucket", NULL }, { "--algo", "leaky-bucket" } },
		{ { "--rate", "10", "--prefix4", "33", NULL }, { "--prefix4", "range" } },
		{ { "--rate", "10", "--prefix4", "-1", NULL }, { "--prefix4", NULL } },
		{ { "--rate", "10", "--prefix6", "129", NULL }, { "--prefix6", "range" } },
		{ { "--rate", "10", "--prefix6", "64bits", NULL }, { "--prefix6", NULL } },
		{ { "--rate", "10", "--initial", "x", NULL }, { "--initial", NULL } },
		{ { "--algo", "fixed-window", "--rate", "10", "--window", "999ns", NULL },
		  { "--window", "range" } },
		{ { "--algo", "fixed-window", "--rate", "10", "--window", "25h", NULL },
		  { "--window", "range" } },
		{ { "--algo", "sliding-window", "--rate", "10", "--window", "0s", NULL },
		  { "--window", NULL } },
		{ { "--algo", "sliding-window", "--rate", "10", "--window", "1.5ns", NULL },
		  { "--window", "nanosecond" } },
		{ { "--algo", "sliding-window", "--rate", "10", "--window", "10", NULL },
		  { "--window", "unit" } },
	};

	check_refusals(r, ARRAY_SIZE(r));
}

TEST(algo_refuse_policies)
{
	static const struct refusal r[] = {
		{ { "--algo", "gcra", NULL }, { "--rate", "required" } },
		{ { "--rate", "128000000001", NULL }, { "--rate", "too high" } },
		{ { "--rate", "200000000000", NULL }, { "--rate", "too high" } },
		{ { "--rate", "1.1tbit", NULL }, { "--rate", "too high" } },
		{ { "--algo", "gcra", "--rate", "129gbyte", NULL }, { "--rate", "too high" } },
		{ { "--algo", "fixed-window", "--rate", "10", "--window", "150ms", NULL },
		  { "whole", NULL } },
		{ { "--algo", "sliding-window", "--rate", "3", "--window", "100ms", NULL },
		  { "whole", NULL } },
		{ { "--algo", "fixed-window", "--rate", "12kbit", "--window", "1us", NULL },
		  { "whole", "bytes" } },
		{ { "--algo", "fixed-window", "--rate", "10", "--burst", "5", NULL },
		  { "--burst", "fixed-window" } },
		{ { "--algo", "sliding-window", "--rate", "10", "--burst", "5", NULL },
		  { "--burst", "sliding-window" } },
		{ { "--algo", "sliding-window", "--rate", "10", "--initial", "5", NULL },
		  { "--initial", "sliding-window" } },
		{ { "--algo", "token-bucket", "--rate", "10", "--window", "1s", NULL },
		  { "--window", "token-bucket" } },
		{ { "--algo", "gcra", "--rate", "10", "--window", "1s", NULL },
		  { "--window", "gcra" } },
		{ { "--rate", "10", "--burst", "20", "--initial", "21", NULL },
		  { "--initial", "burst" } },
		{ { "--rate", "10", "--initial", "11", NULL }, { "--initial", "burst" } },
		{ { "--algo", "gcra", "--rate", "10", "--burst", "1", "--initial", "2", NULL },
		  { "--initial", "burst" } },
		{ { "--rate", "1", "--burst", "4611686018427387904", NULL }, { "--burst", "large" } },
		{ { "--rate", "0.000000001", "--burst", "10", NULL }, { "--burst", "large" } },
		{ { "--algo", "sliding-window", "--rate", "10gbyte", "--window", "1s", NULL },
		  { "--window", "sliding-window" } },
		{ { "--algo", "fixed-window", "--rate", "10gbyte", "--window", "24h", NULL },
		  { "--window", "fixed-window" } },
	};

	check_refusals(r, ARRAY_SIZE(r));
}

/* The spec's ceiling on rates, 128e9/s, for the window algorithms too. */
TEST(algo_refuse_rate_too_high_windows)
{
	static const struct refusal r[] = {
		{ { "--algo", "fixed-window", "--rate", "1000000000000", "--window", "1us", NULL },
		  { "--rate", NULL } },
		{ { "--algo", "sliding-window", "--rate", "1000000000000", "--window", "1us", NULL },
		  { "--rate", NULL } },
	};

	check_refusals(r, ARRAY_SIZE(r));
}

/* The edges of what is accepted are accepted. */
TEST(algo_accept_edges)
{
	static const char *const ok[][12] = {
		{ "--rate", "128000000000", NULL },
		{ "--algo", "gcra", "--rate", "1tbit", NULL },
		{ "--rate", "0.000000001", NULL },
		{ "--rate", "1.000000001", NULL },
		{ "--rate", "10KBIT", NULL },
		{ "--rate=10", "--burst=20", "--initial=0", NULL },
		{ "--rate", "10", "--burst", "20", "--initial", "20", NULL },
		{ "--algo", "gcra", "--rate", "10", "--burst", "20", "--initial", "20", NULL },
		{ "--rate", "1", "--burst", "4000000000", NULL },
		{ "--rate", "10", "--prefix4", "0", "--prefix6", "0", NULL },
		{ "--rate", "10", "--prefix4", "32", "--prefix6", "128", NULL },
		{ "--algo", "fixed-window", "--rate", "1000000", "--window", "1us", NULL },
		{ "--algo", "fixed-window", "--rate", "1", "--window", "24h", NULL },
		{ "--algo", "sliding-window", "--rate", "10", "--window", "1.5s", NULL },
		{ "--algo", "sliding-window", "--rate", "10", "--window", "0.1s", NULL },
		{ "--algo", "sliding-window", "--rate", "1", "--window", "1m", NULL },
		{ "--algo", "fixed-window", "--rate", "12kbit", "--window", "2ms", NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		char err[RL_ERRLEN];

		if (!ASSERT_OK(policy_try(ok[i], NULL, err, sizeof(err)), ok[i][1]))
			fprintf(stderr, "    refused: %s\n", err);
	}
}
