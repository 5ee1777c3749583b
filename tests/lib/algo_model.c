// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The reference model of the rate algorithms and what the tests of the core
 * share around it (algo_model.h): policies written twice, sources, random
 * traces, the differential check and hand-computed steps.
 */
#include <stdlib.h>
#include <string.h>
#include "algo_model.h"
#include "opts.h"
#include "test.h"

const char *const algo_str[] = { "token-bucket", "gcra", "fixed-window", "sliding-window" };
/* ---------------------------------------------------------------------------
 * Small helpers: random numbers, policies from option lists, descriptions.
 */

/* Per-test stream of the run's seed, so that tests do not share numbers. */
__u64 seed_for(__u64 salt)
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
 * Options (NULL-terminated) through rl_policy_parse() and rl_params_init().
 * 0 if accepted, -1 if an option is refused, -2 if the policy as a whole is;
 * the message in @err.
 */
int policy_try(const char *const *opts, struct rl_params *p, char *err, size_t len)
{
	struct rl_policy pol;
	struct rl_params tmp;

	err[0] = '\0';
	if (rl_policy_parse(&pol, NULL, opts, err, len))
		return -1;
	if (rl_params_init(p ? p : &tmp, &pol, err, len))
		return -2;
	return 0;
}

void cfg_opts(const struct cfg *c, struct optv *o)
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

const char *cfg_str(const struct cfg *c, char *buf, size_t len)
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
bool cfg_sim(const struct cfg *c, struct rl_sim *s)
{
	char err[RL_ERRLEN], desc[256];
	struct rl_policy pol;
	struct optv o;

	cfg_opts(c, &o);
	if (rl_policy_parse(&pol, NULL, (const char *const *)o.argv, err, sizeof(err))) {
		rl_test_fail(__FILE__, __LINE__, "%s: %s", cfg_str(c, desc, sizeof(desc)), err);
		return false;
	}
	if ((u128)pol.rate_num * c->den != (u128)c->num * pol.rate_den || pol.bytes != c->bytes) {
		rl_test_fail(__FILE__, __LINE__,
			     "--rate %s read as %llu/%llu%s, expected %llu/%llu%s", c->rate,
			     (unsigned long long)pol.rate_num, (unsigned long long)pol.rate_den,
			     pol.bytes ? " bytes" : "", (unsigned long long)c->num,
			     (unsigned long long)c->den, c->bytes ? " bytes" : "");
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

const char *const src_addr[NSRC] = {
	"10.0.0.1",	   "10.0.0.2",	      "10.0.1.1", "10.0.1.2",
	"10.0.2.1",	   "10.0.2.2",	      NULL, /* a trace line without a source */
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
unsigned int src_ref(const struct cfg *c, unsigned int i)
{
	if (i < 6)
		return c->prefix4 == 24 ? i / 2 : i;
	return i == 6 ? 6 : 7;
}

/* One packet through the core: 1 pass, 0 drop. */
int core_pkt(struct rl_sim *s, unsigned int src, __u64 t, __u32 len)
{
	struct rl_key k;

	src_key(src, &k);
	return rl_sim_packet(s, &k, t, len, NULL);
}

/* ---------------------------------------------------------------------------
 * The reference model.
 */

/* The documented default burst: one second at the rate, at least 1 packet or 1522 bytes. */
__u64 default_burst(const struct cfg *c)
{
	__u64 b = (__u64)(((u128)c->num + c->den - 1) / c->den);
	__u64 floor = c->bytes ? 1522 : 1;

	return b < floor ? floor : b;
}

bool ref_init(struct ref *m, const struct cfg *c)
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
			rl_test_fail(__FILE__, __LINE__,
				     "test bug: rate %s x window %llu ns is not whole", c->rate,
				     (unsigned long long)m->w);
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
void ref_on_vt_clock(struct ref *m, const struct rl_params *p)
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
int ref_decide(struct ref *m, unsigned int i, __u64 t, __u64 cost, s128 *margin)
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
		gain = m->r * (now - s->last); /* < 2^128: r < 2^64 in ns, 1 in vt */
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

void ref_commit(struct ref *m, unsigned int i, __u64 cost, int pass)
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
int ref_pkt(struct ref *m, unsigned int i, __u64 t, __u64 cost)
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
bool params_exact(const struct cfg *c, const struct rl_params *p)
{
	u128 d = (u128)c->den * NSEC;

	return !(p->vt_mult & ((1ULL << RL_VT_SHIFT) - 1)) &&
	       (u128)(p->vt_mult >> RL_VT_SHIFT) * d == (u128)c->num * p->unit_cost;
}

/* Whether the core must decide exactly as the spec for @c: windows, and exact rates. */
bool cfg_exact(const struct cfg *c)
{
	char err[RL_ERRLEN];
	struct rl_params p;
	struct optv o;

	if (c->algo == FW || c->algo == SW)
		return true;
	cfg_opts(c, &o);
	if (policy_try((const char *const *)o.argv, &p, err, sizeof(err)))
		return true; /* cfg_sim() reports it */
	return params_exact(c, &p);
}

/* ---------------------------------------------------------------------------
 * Random traces.
 */

struct gen {
	__u64 pkt_ns; /* time to earn a typical packet's cost */
	__u64 grid_ns; /* time to earn a whole number of cost units exactly */
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

__u64 gen_start(__u64 *rs)
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
void gen_trace(__u64 *rs, const struct cfg *c, struct pkt *p, size_t n, __u64 t0, int mode)
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
bool diff_trace_ties(const struct cfg *c, const struct pkt *p, size_t n, const char *what,
		     size_t *ties)
{
	struct {
		__u64 t;
		__u32 len;
		int got;
		s128 margin;
	} hist[NSRC][4] = {}; /* each source's last packets, for the report */
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
			rl_test_fail(
				__FILE__, __LINE__,
				"%s: %s: packet %zu of %zu (t=%llu ns, %llu ns after the source's last, source %s, len %u): core %s, the algorithm on the core's vt clock %s; exactly: %s (RL_SEED=%llu)",
				what, cfg_str(c, desc, sizeof(desc)), i, n,
				(unsigned long long)p[i].t, (unsigned long long)idle,
				src_addr[p[i].src] ? src_addr[p[i].src] : "-", p[i].len,
				got == 1 ? "allow" :
				got	 ? "error" :
					   "drop",
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
			rl_test_fail(
				__FILE__, __LINE__,
				"%s: %s: packet %zu of %zu (t=%llu ns, %llu ns after the source's last, source %s, len %u): core %s, spec %s (tokens - cost or burst - level: %.12Lg) (RL_SEED=%llu)",
				what, cfg_str(c, desc, sizeof(desc)), i, n,
				(unsigned long long)p[i].t, (unsigned long long)idle,
				src_addr[p[i].src] ? src_addr[p[i].src] : "-", p[i].len,
				got == 1 ? "allow" :
				got	 ? "error" :
					   "drop",
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

bool diff_trace(const struct cfg *c, const struct pkt *p, size_t n, const char *what)
{
	return diff_trace_ties(c, p, n, what, NULL);
}

/*
 * @rounds random traces for each of @cfgs that cfg_exact() says is @exact (or
 * not), a quarter of them on boundaries only.
 */
void diff_configs(const struct cfg *cfgs, size_t ncfg, bool exact, int rounds, __u64 salt)
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

/*
 * The steps through the core, and through the reference model (which is
 * checked too: it must agree with the hand-computed answers).
 */
bool run_steps(const char *what, const struct cfg *c, const struct step *st, size_t n)
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

			/* Two checks per packet, counted as ASSERT_* counts its own. */
			rl_test_checks += 2;
			if (got != want) {
				rl_test_fail(
					__FILE__, __LINE__,
					"%s: %s: step %zu (t=%llu ns, len %u), packet %u: core %s, expected %s",
					what, cfg_str(c, desc, sizeof(desc)), i,
					(unsigned long long)st[i].t, st[i].len, j + 1,
					got ? "allow" : "drop", want ? "allow" : "drop");
				ok = false;
			}
			if (model != want) {
				rl_test_fail(
					__FILE__, __LINE__,
					"%s: test bug: the reference model says %s at step %zu packet %u",
					what, model ? "allow" : "drop", i, j + 1);
				ok = false;
			}
		}
	}
	rl_sim_free(&s);
	return ok;
}

void run_hand_cases(const struct hand_case *hc, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run_steps(hc[i].what, &hc[i].c, hc[i].st, hc[i].n);
}
