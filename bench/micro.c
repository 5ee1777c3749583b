// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench micro: per-packet cost with BPF_PROG_TEST_RUN.
 *
 * Every program is run the same way: test_run runs bench_driver (bench/bpf/bench_ref.bpf.c)
 * REPS times; the driver writes source (counter mod N) into the frame and
 * tail-calls the program under test. The driver alone (tail-calling an empty
 * program) is measured beside the others, and "net" is a cost minus the
 * driver's.
 *
 * Noise: the thread is pinned to one CPU and runs SCHED_FIFO while it measures
 * (when allowed), so that test_run is not preempted by other tasks. A cost is
 * the time between the driver's first and last clock samples over the
 * repetitions between them (sub-ns resolution, and without the test_run
 * call's own fixed cost of several ms); test_run's duration (whole ns) is
 * kept in the raw file as a cross-check. Every
 * program is measured once per round, the rounds interleave all programs in
 * a rotating order, and the ratios to the references (c) and (c') are taken within a
 * round, then their median: a slow drift of the machine affects both sides.
 *
 * Frames are IPv4/UDP, the product's fast path, from 198.18.0.0/15 up to
 * 128k sources; above that from 10.0.0.0/8 (BENCH_WIDE4): test_run frames
 * are never sent, and the benchmarking range holds only 128k addresses. The
 * memory phase fills the IPv6 table with IPv6 frames from 2001:2::/48.
 *
 * Large maps: where a map's memory lands matters once its entries no longer
 * fit in the caches. Two identical programs, each with its own 1M-entry map,
 * measured here 10-20% apart, and the order moved between runs (a VM's
 * memory is not uniformly fast). So every program measured on a large map
 * is loaded INSTANCES times, each with its own map, and its cost is the
 * median over all instances and rounds; the spread between instances is
 * reported beside it.
 *
 * Phases, each freeing what the one before loaded (--only takes a
 * comma-separated list; run.sh runs the matrix alone three times, as
 * independent processes, for the spread between runs):
 *	matrix: 4 algorithms x {packets, bytes} x {precise, coarse clock},
 *	   token-bucket and gcra at rates that need the 128-bit multiply, with
 *	   1 and 1M sources, and the references (a), (b), (c), (c'), (c'4);
 *	sets: 1M sources, a table after 5 sets against a freshly filled one;
 *	scale: token-bucket, (b) and (c') with 1, 1k, 64k, 1M, 8M sources;
 *	memory: the IPv4 table in use and rl_sets6 sized for 1M and 8M, filled, their
 *	   memlock read;
 *	sampling: drop samples at 1 in 100 against none, on dropped frames
 *	   (see phase_sampling()).
 *	sync: fleet sync counting off and on, 1 and 64k sources (phase_sync()).
 *	paths: IPv6, IPv4 behind rules, 1M sources in tables of 1M to 9M
 *	   (issue #30; phase_paths()).
 *	levels: the levels above the source (include/rl_agg.h) against the
 *	   per-source limit alone, 1 and 64k sources (phase_levels()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "bench_ref.skel.h"
#include "config.h"
#include "events.h"
#include "maps.h"
#include "prog.h"
#include "rl_skel.h"
#include "rulemaps.h"
#include "rules.h"
#include "sa.h"

#define M1	   (1U << 20)
#define M8	   (8U << 20)
#define MAX_ROUNDS 64
#define FILL_CHUNK M1
/* Instances of each program (each with its own maps) measured on large maps. */
#define INSTANCES 3
/*
 * Instances of each program in the matrix with one source: the large-map
 * ones and more with small maps. One source is all in the caches, yet
 * instances of one program measured 68-95 ns in one run (where its code and
 * its entry land), and with three the median of a round still moved a
 * ratio by 0.1-0.4 between runs: (c) measured 0.97-1.40x (c').
 */
#define ONE_INSTANCES 9
/* The small maps of those instances (one_entries()). */
#define ONE_ENTRIES 1024
#define MAX_TARGETS 320
/* The size of a table that holds the matrix's 1M sources (LRU: some slack). */
#define ENTRIES_1M (M1 + M1 / 8)

/* The references' names, by which the tables find them (bench/bpf/bench_ref.bpf.c). */
#define NAME_B	 "(b) parse + LRU lookup/insert + atomic add"
#define NAME_C	 "(c) (b) + clock + GCRA CAS"
#define NAME_CL	 "(c') (c) without (b)'s atomic add"
#define NAME_CL4 "(c'4) (c') keyed by the 4-byte IPv4 address"
#define NAME_K	 "(k) parse + precise clock read, nothing else"
#define NAME_KC	 "(k') (k) + one GCRA compare-and-swap, no table"

struct target {
	char name[96];
	int kind; /* K_DRIVER, K_REF, K_OURS */
	int prog_fd;
	__u32 sources;
	double wall[MAX_ROUNDS], kern[MAX_ROUNDS];
	int inst; /* which instance of the program (0 when only one) */
	int driver; /* index of the driver measured with the same sources */
	int refc; /* index of (c) with the same sources, or -1 */
	int refcl; /* index of (c') with the same sources, or -1 */
	int refcl4; /* index of (c'4) with the same sources, or -1 */
	bool fill_order; /* sources in the order they were filled in (see set_target()) */
	const struct bench_frame *frame; /* the frame it runs on (NULL: the phase's) */
};

enum { K_DRIVER, K_REF, K_OURS };

struct micro {
	const char *out;
	int rounds;
	__u32 reps;
	bool quick, rt;
	struct bench_frame frame4, frame6;
	const struct bench_frame *frame; /* what test_run sends: frame4, or frame6 */
	FILE *raw;
	struct bpf_link *link; /* the driver, attached while it is measured */
};

/* A line for DIR/notes.md (and stderr). */
static void __attribute__((format(printf, 2, 3))) note(const struct micro *m, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/notes.md", m->out);
	f = fopen(path, "a");
	va_start(ap, fmt);
	fprintf(stderr, "rl-bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	if (!f)
		return;
	va_start(ap, fmt);
	fprintf(f, "- ");
	vfprintf(f, fmt, ap);
	fprintf(f, "\n");
	va_end(ap);
	fclose(f);
}

/*
 * Point the driver at @prog_fd, cycling @sources sources of the current
 * frame: IPv4 ones from 198.18.0.0/15 while they fit, else from 10.0.0.0/8
 * (see bench.h); IPv6 ones from the frame's own 2001:2::/48 address.
 */
static int set_target(const struct micro *m, struct bench_ref *drv, int prog_fd, __u32 sources,
		      bool scramble)
{
	/*
	 * Tables fill in counter order, and an LRU hash hands out its
	 * preallocated elements in about that order: sources met again in
	 * the same order would walk memory sequentially, which no traffic
	 * does (and which a table that has seen deletes no longer gets). So
	 * measurements take the sources in an order unrelated to the fill:
	 * the counter times an odd constant (2^32 / golden ratio), mod N.
	 */
	drv->data->bench_mul = scramble ? 0x9e3779b1U : 1;
	drv->bss->bench_off = m->frame->src_off;
	if (m->frame != &m->frame4)
		drv->bss->bench_base = m->frame->src_base;
	else
		drv->bss->bench_base = sources <= BENCH_NET4_SIZE ? BENCH_NET4 : BENCH_WIDE4;
	return bench_set_target(drv, prog_fd, sources);
}

static int run_driver(struct micro *m, struct bench_ref *drv, __u32 reps, double *wall,
		      double *kern)
{
	return bench_run_driver(drv, m->frame, reps, wall, kern);
}

/* Run @prog_fd over @total repetitions cycling @sources sources: fills its map. */
static int warm(struct micro *m, struct bench_ref *drv, int prog_fd, __u32 sources, __u64 total)
{
	int err = set_target(m, drv, prog_fd, sources, false);

	while (!err && total) {
		__u32 n = total > FILL_CHUNK ? FILL_CHUNK : (__u32)total;

		err = run_driver(m, drv, n, NULL, NULL);
		total -= n;
	}
	return err;
}

/* warm() every program of @t measured on @sources sources, @total repetitions each. */
static int warm_targets(struct micro *m, struct bench_ref *drv, const struct target *t, int nt,
			__u32 sources, __u64 total)
{
	int err = 0;

	for (int i = 0; i < nt && !err; i++)
		if (t[i].kind != K_DRIVER && t[i].sources == sources)
			err = warm(m, drv, t[i].prog_fd, sources, total);
	return err;
}

static int measure_all(struct micro *m, struct bench_ref *drv, struct target *t, int nt,
		       const char *phase)
{
	int err;

	const struct bench_frame *frame = m->frame;

	if (m->rt && bench_rt(true))
		m->rt = false;
	for (int r = 0; r < m->rounds; r++) {
		for (int j = 0; j < nt; j++) {
			/* A rotating order: no program always runs first or last. */
			struct target *x = &t[(j + r * 7) % nt];
			__u32 reps = m->reps;

			m->frame = x->frame ? x->frame : frame;
			err = set_target(m, drv, x->prog_fd, x->sources, !x->fill_order);
			if (!err)
				err = run_driver(m, drv, reps, &x->wall[r], &x->kern[r]);
			m->frame = frame;
			if (err) {
				fprintf(stderr, "rl-bench: %s: %s: %s\n", phase, x->name,
					strerror(-err));
				bench_rt(false);
				return err;
			}
			fprintf(m->raw, "%s\t%s\t%u\t%d\t%.3f\t%.0f\n", phase, x->name, x->sources,
				r, x->wall[r], x->kern[r]);
		}
	}
	if (m->rt)
		bench_rt(false);
	return 0;
}

struct stat3 {
	double min, med, net;
	double ratio, ratio_min; /* to (c): median of the rounds', and from minimums */
	double ratio_l, ratio_l_min; /* the same to (c') */
	double ratio_4, ratio_4_min; /* the same to (c'4) */
	double inst_lo, inst_hi; /* lowest and highest median of one instance, net */
	int ninst;
};

/* Targets @a and @b are instances of one program, measured with the same sources. */
static bool same_program(const struct target *a, const struct target *b)
{
	return a->sources == b->sources && !strcmp(a->name, b->name);
}

/* Rounds of every instance of target @i's program (same name and sources), pooled. */
static int pooled(const struct micro *m, const struct target *t, int nt, int i, double *v,
		  double *inst_med, int *ninst)
{
	int n = 0;

	*ninst = 0;
	for (int j = 0; j < nt; j++) {
		if (!same_program(&t[j], &t[i]))
			continue;
		memcpy(v + n, t[j].wall, sizeof(double) * m->rounds);
		if (inst_med) {
			double w[MAX_ROUNDS];

			memcpy(w, t[j].wall, sizeof(double) * m->rounds);
			inst_med[(*ninst)++] = bench_median(w, m->rounds);
		}
		n += m->rounds;
	}
	return n;
}

/* Median over the instances of target @i's program of their cost in round @r. */
static double round_median(const struct target *t, int nt, int i, int r)
{
	double v[MAX_TARGETS];
	int n = 0;

	for (int j = 0; j < nt; j++)
		if (same_program(&t[j], &t[i]))
			v[n++] = t[j].wall[r];
	return bench_median(v, n);
}

/*
 * The ratio of target @i's cost to reference @ref's, net of the driver @d:
 * taken within each round (both sides the median of their instances in that
 * round, net of that round's driver), then its median over rounds, so that a
 * drift of the machine during the run moves both sides alike. *from_min: the
 * same ratio from the minimums (@min, @dmin: target's and driver's).
 */
static double ref_ratio(const struct micro *m, const struct target *t, int nt, int i, int ref,
			const struct target *d, double min, double dmin, double *from_min)
{
	static double cv[MAX_ROUNDS * MAX_TARGETS];
	double rv[MAX_ROUNDS];
	int nc, ncinst, nr = 0;

	for (int r = 0; r < m->rounds; r++) {
		double den = round_median(t, nt, ref, r) - d->wall[r];

		if (den > 0)
			rv[nr++] = (round_median(t, nt, i, r) - d->wall[r]) / den;
	}
	nc = pooled(m, t, nt, ref, cv, NULL, &ncinst);
	*from_min = (min - dmin) / (bench_min(cv, nc) - dmin);
	return bench_median(rv, nr);
}

/*
 * Summary of target @i's program over all its instances: min and median, net
 * of the driver, and the ratios to (c), (c') and (c'4) (ref_ratio()).
 */
static struct stat3 summarize(const struct micro *m, const struct target *t, int nt, int i)
{
	static double v[MAX_ROUNDS * MAX_TARGETS];
	double dv[MAX_ROUNDS], im[MAX_TARGETS], dmed, dmin;
	const struct target *d = &t[t[i].driver];
	struct stat3 s = {};
	int n;

	memcpy(dv, d->wall, sizeof(double) * m->rounds);
	dmin = bench_min(dv, m->rounds);
	dmed = bench_median(dv, m->rounds);
	n = pooled(m, t, nt, i, v, im, &s.ninst);
	s.min = bench_min(v, n);
	s.med = bench_median(v, n);
	s.net = s.med - dmed;
	s.inst_lo = bench_min(im, s.ninst) - dmed;
	s.inst_hi = bench_max(im, s.ninst) - dmed;
	if (t[i].refc >= 0)
		s.ratio = ref_ratio(m, t, nt, i, t[i].refc, d, s.min, dmin, &s.ratio_min);
	if (t[i].refcl >= 0)
		s.ratio_l = ref_ratio(m, t, nt, i, t[i].refcl, d, s.min, dmin, &s.ratio_l_min);
	if (t[i].refcl4 >= 0)
		s.ratio_4 = ref_ratio(m, t, nt, i, t[i].refcl4, d, s.min, dmin, &s.ratio_4_min);
	return s;
}

/* The goal of issue #11: our program costs at most 1.1x reference (c'). */
static const char *goal(const struct target *t, double ratio)
{
	if (t->kind != K_OURS)
		return "";
	return ratio <= 1.1 ? " ok" : " **over 1.1**";
}

/* A policy of the matrix. */
struct mpol {
	const char *algo;
	bool bytes, coarse;
	bool mul128; /* a rate whose vt needs the 128-bit multiply (vt_int == 0) */
};

static const char *const algos[] = { "token-bucket", "gcra", "fixed-window", "sliding-window" };

/* 4 algorithms x {packets, bytes} x {precise, coarse}, then the 128-bit-multiply rates. */
#define NPOL_MAIN 16
#define NPOL	  (NPOL_MAIN + 4)

static struct mpol matrix_pol(int a)
{
	struct mpol p = {};

	if (a < NPOL_MAIN) {
		p.algo = algos[a / 4];
		p.bytes = a % 2;
		p.coarse = a & 2;
	} else {
		/* Only the buckets turn time into vt; the windows never use vt_int. */
		p.algo = algos[(a - NPOL_MAIN) / 2];
		p.bytes = a % 2;
		p.mul128 = true;
	}
	return p;
}

static void policy_name(char *buf, size_t len, const struct mpol *p)
{
	snprintf(buf, len, "xdp-ratelimit %s, %s%s%s", p->algo, p->bytes ? "bytes" : "packets",
		 p->coarse ? ", coarse clock" : "", p->mul128 ? ", 128-bit multiply rate" : "");
}

/*
 * The policies of the matrix: rates no source reaches in test_run (~30
 * Mpps), so every packet passes and takes the compare-and-swap, the costlier
 * path, like reference (c'). The same policies for both clocks: bursts and
 * windows that a coarse clock tick (up to 10 ms) cannot disturb, and a byte
 * rate for the windows that keeps the sliding window's per-window limit
 * under its 24-bit counters. The exact rates (10^8/s, 10^10 B/s) are a whole
 * number of vt per ns (vt_int); 3 x 10^8/s and 3.333 x 10^9 B/s are not, and
 * take the 128-bit multiply of rl_vt() (include/rl_algo.h).
 */
static const char *matrix_rate(const struct mpol *p, bool window)
{
	if (p->bytes)
		return window ? "1gbyte" : p->mul128 ? "3333mbyte" : "10gbyte";
	return p->mul128 ? "300mpps" : "100mpps";
}

static int matrix_config(struct rl_config *cfg, const struct mpol *p)
{
	bool window = !strcmp(p->algo, "fixed-window") || !strcmp(p->algo, "sliding-window");
	const char *rate = matrix_rate(p, window);
	const char *args[] = { "--algo",
			       p->algo,
			       "--rate",
			       rate,
			       window ? "--window" : "--burst",
			       window ? "10ms" : "1000000000",
			       "--prefix6",
			       "128",
			       "--clock",
			       p->coarse ? "coarse" : "precise",
			       NULL };
	int err = bench_config(cfg, args);
	if (!err && !window && !cfg->params.vt_int != p->mul128) {
		fprintf(stderr, "rl-bench: %s at %s: vt_int %llu, not what the matrix expects\n",
			p->algo, rate, (unsigned long long)cfg->params.vt_int);
		err = -EINVAL;
	}
	return err;
}

/*
 * Reference programs and their maps, not attached (as further instances on
 * large maps); (b)'s and (c)'s maps get @ref_entries, (c')'s and (c'4)'s
 * @lean_entries.
 */
static struct bench_ref *load_refs(__u32 ref_entries, __u32 lean_entries)
{
	struct bench_ref *r = bench_ref__open();
	int err = -ENOMEM;

	if (r) {
		/* (c) and (c') pass every packet too: 100 Mpps, a 10 ms tolerance. */
		r->rodata->ref_interval_ns = 10;
		r->rodata->ref_tau_ns = 10000000;
		err = bpf_map__set_max_entries(r->maps.ref_lookup_map, ref_entries);
		if (!err)
			err = bpf_map__set_max_entries(r->maps.ref_gcra_map, ref_entries);
		if (!err)
			err = bpf_map__set_max_entries(r->maps.ref_gcra_lean_map, lean_entries);
		if (!err)
			err = bpf_map__set_max_entries(r->maps.ref_gcra_lean4_map, lean_entries);
		if (!err)
			err = bench_frags(r->obj);
		if (!err)
			err = bench_ref__load(r);
	}
	if (err) {
		fprintf(stderr, "rl-bench: couldn't load bench_ref (%u sources): %s\n", ref_entries,
			strerror(-err));
		bench_ref__destroy(r);
		return NULL;
	}
	return r;
}

/* The references, with the driver attached. */
static struct bench_ref *load_driver(struct micro *m, __u32 ref_entries, __u32 lean_entries)
{
	struct bench_ref *drv = load_refs(ref_entries, lean_entries);
	int err;

	if (!drv)
		return NULL;
	m->link = bench_attach(drv->progs.bench_driver, &err);
	if (err) {
		bench_ref__destroy(drv);
		return NULL;
	}
	return drv;
}

static void unload_driver(struct micro *m, struct bench_ref *drv)
{
	bpf_link__destroy(m->link);
	m->link = NULL;
	bench_ref__destroy(drv);
}

static void add_target(struct target *t, int *nt, const char *name, int kind, int fd, __u32 sources,
		       int inst)
{
	struct target *x = &t[(*nt)++];

	memset(x, 0, sizeof(*x));
	x->inst = inst;
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->kind = kind;
	x->prog_fd = fd;
	x->sources = sources;
	x->refc = -1;
	x->refcl = -1;
	x->refcl4 = -1;
}

/* Link each target to the driver, (c), (c') and (c'4) measured with the same number of sources. */
static void link_targets(struct target *t, int nt)
{
	for (int i = 0; i < nt; i++) {
		for (int j = 0; j < nt; j++) {
			if (t[j].sources != t[i].sources)
				continue;
			if (t[j].kind == K_DRIVER)
				t[i].driver = j;
			if (t[j].inst)
				continue;
			if (!strcmp(t[j].name, NAME_C))
				t[i].refc = j;
			if (!strcmp(t[j].name, NAME_CL))
				t[i].refcl = j;
			if (!strcmp(t[j].name, NAME_CL4))
				t[i].refcl4 = j;
		}
	}
}

/* A table cell for a net cost: the driver's own median, or net (instances' range). */
static void net_cell(char *buf, size_t len, const struct stat3 *x, bool driver)
{
	if (driver)
		snprintf(buf, len, "(subtracted) %.1f", x->med);
	else if (x->ninst > 1)
		snprintf(buf, len, "%.1f (%.0f-%.0f)", x->net, x->inst_lo, x->inst_hi);
	else
		snprintf(buf, len, "%.1f", x->net);
}

static int find_target(const struct target *t, int nt, const char *name, __u32 sources)
{
	for (int j = 0; j < nt; j++)
		if (t[j].sources == sources && !t[j].inst && !strcmp(t[j].name, name))
			return j;
	return -1;
}

/* The new sources our programs inserted, summed over @n limiters. */
static __u64 new_sources(struct xdp_ratelimit **lim, int n)
{
	struct rl_counters c;
	__u64 sum = 0;

	for (int i = 0; i < n; i++) {
		if (lim[i] && !bench_counters(lim[i], &c))
			sum += c.new_sources;
	}
	return sum;
}

/*
 * The size of @cfg's extra one-source instances: ONE_ENTRIES when the policy
 * gets the same IPv4 table there as at @entries (the set-associative table
 * holds fewer policies when it is smaller), else @entries, so that every
 * instance of a program takes the same path.
 */
static __u32 one_entries(const struct rl_config *cfg, __u32 entries)
{
	struct rl_config big = *cfg, small = *cfg;

	rl_table4_choose(&big, rl_sa_bits_for(entries));
	rl_table4_choose(&small, rl_sa_bits_for(ONE_ENTRIES));
	return big.table4 == small.table4 ? ONE_ENTRIES : entries;
}

/*
 * Matrix policy @a, named into @name: false when RL_BENCH_MATCH=TEXT is set
 * and the name does not contain TEXT (a run of some cells only, to look into
 * them; run.sh never sets it).
 */
static bool matrix_wanted(int a, char *name, size_t len)
{
	const char *match = getenv("RL_BENCH_MATCH");
	struct mpol pol = matrix_pol(a);

	policy_name(name, len, &pol);
	return !match || strstr(name, match);
}

/*
 * The matrix: every policy and the references with 1 and 1M sources.
 * DIR/micro.md is the table; DIR/matrix.tsv the figures run.sh joins over
 * runs (program, sources, net ns, x (c), x (c'), x (c'4)).
 */
static int phase_matrix(struct micro *m)
{
	static struct target t[MAX_TARGETS];
	static struct xdp_ratelimit *lim[ONE_INSTANCES][NPOL];
	struct bench_ref *refs[ONE_INSTANCES] = {};
	__u32 entries = ENTRIES_1M, counts[2] = { 1, M1 };
	struct bench_ref *drv;
	struct rl_config cfg;
	struct mpol pol;
	__u64 before, after;
	char name[96];
	int nt = 0, err = -EINVAL;
	FILE *md, *tsv;

	memset(lim, 0, sizeof(lim));
	drv = load_driver(m, entries, entries);
	if (!drv)
		return -EINVAL;
	refs[0] = drv;
	for (int k = 1; k < ONE_INSTANCES; k++) {
		__u32 e = k < INSTANCES ? entries : ONE_ENTRIES;

		refs[k] = load_refs(e, e);
		if (!refs[k])
			goto out;
	}
	for (int k = 0; k < ONE_INSTANCES; k++) {
		for (int a = 0; a < NPOL; a++) {
			__u32 e;

			if (!matrix_wanted(a, name, sizeof(name)))
				continue;
			pol = matrix_pol(a);
			if (matrix_config(&cfg, &pol))
				goto out;
			e = k < INSTANCES ? entries : one_entries(&cfg, entries);
			if (k == INSTANCES && e == entries) {
				policy_name(name, sizeof(name), &pol);
				fprintf(stderr,
					"rl-bench: matrix: %s: large maps for all instances\n",
					name);
			}
			lim[k][a] = bench_limiter(&cfg, e, 16);
			if (!lim[k][a])
				goto out;
		}
	}
	for (int s = 0; s < 2; s++) {
		__u32 n = counts[s];
		int ninst = n == 1 ? ONE_INSTANCES : INSTANCES;

		add_target(t, &nt, "driver alone (tail call to an empty program)", K_DRIVER,
			   bpf_program__fd(drv->progs.bench_nop), n, 0);
		add_target(t, &nt, "(a) parse + drop", K_REF, bpf_program__fd(drv->progs.ref_parse),
			   n, 0);
		/*
		 * Every program with a map runs as INSTANCES, and as
		 * ONE_INSTANCES with one source: where a program's code and
		 * its one entry land moves it by up to a third.
		 */
		for (int k = 0; k < ninst; k++) {
			add_target(t, &nt, NAME_B, K_REF,
				   bpf_program__fd(refs[k]->progs.ref_lookup), n, k);
			add_target(t, &nt, NAME_C, K_REF, bpf_program__fd(refs[k]->progs.ref_gcra),
				   n, k);
			add_target(t, &nt, NAME_CL, K_REF,
				   bpf_program__fd(refs[k]->progs.ref_gcra_lean), n, k);
			add_target(t, &nt, NAME_CL4, K_REF,
				   bpf_program__fd(refs[k]->progs.ref_gcra_lean4), n, k);
			for (int a = 0; a < NPOL; a++) {
				if (!matrix_wanted(a, name, sizeof(name)))
					continue;
				add_target(t, &nt, name, K_OURS, rl_prog_fd(lim[k][a]), n, k);
			}
		}
	}
	link_targets(t, nt);
	/* Map warm: every source of the 1M already in every map. */
	fprintf(stderr, "rl-bench: warming %d maps with %u sources\n", (NPOL + 4) * INSTANCES, M1);
	for (int i = 0; i < nt; i++) {
		if (t[i].sources != M1 || t[i].kind == K_DRIVER || !strncmp(t[i].name, "(a)", 3))
			continue;
		err = warm(m, drv, t[i].prog_fd, M1, M1 + M1 / 16);
		if (err)
			goto out;
	}
	fprintf(stderr, "rl-bench: matrix: %d programs x %d rounds x %u reps\n", nt, m->rounds,
		m->reps);
	before = new_sources(&lim[0][0], INSTANCES * NPOL);
	err = measure_all(m, drv, t, nt, "matrix");
	if (err)
		goto out;
	after = new_sources(&lim[0][0], INSTANCES * NPOL);
	/* A warm map: every lookup of the measurement hit. */
	note(m, "matrix: sources inserted into the IPv4 table while measuring: %llu (0: all hits)",
	     (unsigned long long)(after - before));

	md = bench_out(m->out, "micro.md", "w");
	tsv = md ? bench_out(m->out, "matrix.tsv", "w") : NULL;
	if (!md || !tsv) {
		err = -errno;
		if (md)
			fclose(md);
		goto out;
	}
	fprintf(md,
		"| program | 1 source: min / median ns | net ns (instances) | x (c') | x (c'4) | "
		"x (c) | 1M sources: min / median ns | net ns (instances) | x (c') | x (c'4) | "
		"x (c) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
	fprintf(tsv, "# program\tsources\tnet_ns\tx_c\tx_cl\tx_cl4\n");
	for (int i = 0; i < nt && t[i].sources == 1; i++) {
		int j = find_target(t, nt, t[i].name, M1);
		struct stat3 a, b;
		bool drv_row = t[i].kind == K_DRIVER;
		char la[48] = "", lb[48] = "", r4a[16] = "", r4b[16] = "", ca[16] = "", cb[16] = "";
		char na[64], nb[64];

		/* A row per program: its instances are in its figures. */
		if (j < 0 || t[i].inst)
			continue;
		a = summarize(m, t, nt, i);
		b = summarize(m, t, nt, j);
		if (!drv_row) {
			snprintf(la, sizeof(la), "%.2f%s (mins: %.2f)", a.ratio_l,
				 goal(&t[i], a.ratio_l), a.ratio_l_min);
			snprintf(lb, sizeof(lb), "%.2f%s (mins: %.2f)", b.ratio_l,
				 goal(&t[i], b.ratio_l), b.ratio_l_min);
			snprintf(r4a, sizeof(r4a), "%.2f", a.ratio_4);
			snprintf(r4b, sizeof(r4b), "%.2f", b.ratio_4);
			snprintf(ca, sizeof(ca), "%.2f", a.ratio);
			snprintf(cb, sizeof(cb), "%.2f", b.ratio);
			fprintf(tsv,
				"%s\t1\t%.2f\t%.4f\t%.4f\t%.4f\n%s\t%u\t%.2f\t%.4f\t%.4f\t%.4f\n",
				t[i].name, a.net, a.ratio, a.ratio_l, a.ratio_4, t[i].name, M1,
				b.net, b.ratio, b.ratio_l, b.ratio_4);
		}
		net_cell(na, sizeof(na), &a, drv_row);
		net_cell(nb, sizeof(nb), &b, drv_row);
		fprintf(md,
			"| %s | %.1f / %.1f | %s | %s | %s | %s | %.1f / %.1f | %s | %s | %s | %s |\n",
			t[i].name, a.min, a.med, na, la, r4a, ca, b.min, b.med, nb, lb, r4b, cb);
	}
	fclose(tsv);
	fclose(md);
	err = 0;
out:
	for (int k = 0; k < ONE_INSTANCES; k++) {
		for (int a = 0; a < NPOL; a++)
			if (lim[k][a])
				xdp_ratelimit__destroy(lim[k][a]);
		if (k && refs[k])
			bench_ref__destroy(refs[k]);
	}
	unload_driver(m, drv);
	return err;
}

/* What count_family() counts: the sources of one family. */
struct family_count {
	bool v6;
	long n;
};

static int count_family(const struct rl_state_key *k, __u64 state, __u64 read_ns, void *ctx)
{
	struct family_count *c = ctx;

	(void)state;
	(void)read_ns;
	c->n += c->v6 == !(!k->src.addr[0] && !k->src.addr[1]);
	return 0;
}

/*
 * The IPv4 (or @v6: IPv6) sources of @lim, of every generation, in
 * whichever table its policy uses.
 */
static long family_entries(struct xdp_ratelimit *lim, bool v6)
{
	struct family_count c = { .v6 = v6 };
	struct rl_pins pins;
	int err;

	rl_prog_maps(lim, &pins);
	err = rl_state_walk(&pins, count_family, &c);
	return err ? err : c.n;
}

static long ipv4_entries(struct xdp_ratelimit *lim)
{
	return family_entries(lim, false);
}

/* The IPv4 table @lim's policy uses (the others are one-entry stand-ins), and its name. */
static int ipv4_table_fd(struct xdp_ratelimit *lim, const char **name, const char **what)
{
	if (bpf_map__max_entries(lim->maps.rl_sets4) > 1) {
		*name = "rl_sets4";
		*what = "IPv4, set-associative, 4 slots per source";
		return bpf_map__fd(lim->maps.rl_sets4);
	}
	if (bpf_map__max_entries(lim->maps.rl_wide4) > 1) {
		*name = "rl_wide4";
		*what = "IPv4, set-associative wide, 2 ways per source";
		return bpf_map__fd(lim->maps.rl_wide4);
	}
	*name = "rl_state4";
	*what = "IPv4, 8-byte key";
	return bpf_map__fd(lim->maps.rl_state4);
}

/* The policy of the sets phase: token-bucket, packets, at @rate (both pass every packet). */
static int sets_config(struct rl_config *cfg, const char *rate, const struct rl_config *prev)
{
	const char *args[] = { "--algo",  "token-bucket", "--rate", rate,
			       "--burst", "1000000000",	  NULL };

	return bench_config_next(cfg, args, prev);
}

/*
 * A limiter taken through 5 sets, each as rl_set_live() does it (user/lib/xdp_attach.c) but
 * without an interface: load the program for the next generation on the live maps
 * (has_prev: it carries states over), make it the one the driver calls, send 1/16 of the
 * sources through it (the packets that arrive during a set), rl_migrate(), then load
 * the program without the previous-generation lookup. The policy alternates between
 * two rates (set refuses a policy that changes nothing) and ends at @last's.
 * *@skel is replaced by the final program; *@active tracks the configuration slot.
 */
static int five_sets(struct micro *m, struct bench_ref *drv, struct xdp_ratelimit **skel,
		     struct rl_config *cur, __u32 n)
{
	static const char *const rates[] = { "100mpps", "200mpps" };
	struct xdp_ratelimit *mid = NULL, *done = NULL;
	struct rl_prog_opts po = {};
	struct rl_config next, fin;
	struct rl_pins pins;
	__u32 active = 0; /* bench_limiter() writes slot 0 */
	char err[RL_ERRLEN];
	__u64 moved;
	int ret = 0;

	for (int i = 0; i < 5 && !ret; i++) {
		rl_prog_maps(*skel, &pins);
		po.reuse = &pins;
		ret = sets_config(&next, rates[i % 2], cur);
		if (ret)
			break;
		mid = rl_prog_open(&next, &po, err, sizeof(err));
		if (!mid) {
			ret = -errno;
			fprintf(stderr, "rl-bench: sets: %s\n", err);
			break;
		}
		/* The swap: the driver now calls the new program. */
		ret = rl_config_swap(&pins, &next, active);
		if (!ret)
			ret = warm(m, drv, rl_prog_fd(mid), n, n / 16);
		active = !active;
		if (!ret)
			ret = rl_migrate(&pins, &next, &moved);
		if (ret) {
			fprintf(stderr, "rl-bench: sets: set %d: %s\n", i + 1, strerror(-ret));
			break;
		}
		fin = next;
		fin.has_prev = 0;
		done = rl_prog_open(&fin, &po, err, sizeof(err));
		if (!done) {
			ret = -errno;
			fprintf(stderr, "rl-bench: sets: %s\n", err);
			break;
		}
		ret = rl_config_swap(&pins, &fin, active);
		active = !active;
		rl_prog_destroy(mid);
		mid = NULL;
		rl_prog_destroy(*skel);
		*skel = done;
		*cur = fin;
	}
	rl_prog_destroy(mid);
	return ret;
}

/*
 * Sets: with n = 1M sources, the per-packet cost of a table that went through 5
 * sets against a freshly filled one (both token-bucket, packets, the same policy),
 * INSTANCES of each, and the entries each holds (each source once: n).
 */
static int phase_sets(struct micro *m)
{
	static struct target t[6 * INSTANCES + 1];
	struct xdp_ratelimit *fresh[INSTANCES] = {}, *sets[INSTANCES] = {};
	struct bench_ref *refs[INSTANCES] = {};
	__u32 n = m->quick ? M1 / 4 : M1, entries = n + n / 8;
	long count_fresh[INSTANCES], count_sets[INSTANCES];
	__u64 live_sets[INSTANCES], before, after;
	struct rl_config cfg, last;
	struct bench_ref *drv;
	struct rl_pins pins;
	int nt = 0, err = -EINVAL;
	FILE *md;

	drv = load_driver(m, 16, entries);
	if (!drv)
		return -EINVAL;
	refs[0] = drv;
	if (sets_config(&last, "200mpps", NULL) || sets_config(&cfg, "100mpps", NULL))
		goto out;
	for (int k = 0; k < INSTANCES; k++) {
		struct rl_config cur = last;

		if (k)
			refs[k] = load_refs(16, entries);
		sets[k] = bench_limiter(&cur, entries, 16);
		if (!refs[k] || !sets[k])
			goto out;
		fprintf(stderr, "rl-bench: sets: instance %d: filling %u sources, 5 sets\n", k, n);
		err = warm(m, drv, rl_prog_fd(sets[k]), n, n + n / 16);
		if (!err)
			err = five_sets(m, drv, &sets[k], &cur, n);
		if (err)
			goto out;
		err = -EINVAL;
		/* After 5 sets (100, 200, 100, 200, 100 Mpps): the fresh table's policy. */
		if (!rl_config_same(&cur, &cfg)) {
			fprintf(stderr,
				"rl-bench: sets: the policy after 5 sets is not the fresh one\n");
			goto out;
		}
		rl_prog_maps(sets[k], &pins);
		count_sets[k] = ipv4_entries(sets[k]);
		if (count_sets[k] < 0 || rl_count_sources(&pins, cur.gen, &live_sets[k]))
			goto out;
		fresh[k] = bench_limiter(&cfg, entries, 16);
		if (!fresh[k])
			goto out;
		err = warm(m, drv, rl_prog_fd(fresh[k]), n, n + n / 16);
		if (err)
			goto out;
		err = -EINVAL;
		count_fresh[k] = ipv4_entries(fresh[k]);
		if (count_fresh[k] < 0)
			goto out;
		/* The driver's warm-up for (c') and the table after the sets: all hits. */
		err = warm(m, drv, bpf_program__fd(refs[k]->progs.ref_gcra_lean), n, n + n / 16);
		if (err)
			goto out;
	}
	add_target(t, &nt, "driver", K_DRIVER, bpf_program__fd(drv->progs.bench_nop), n, 0);
	for (int k = 0; k < INSTANCES; k++) {
		add_target(t, &nt, NAME_CL, K_REF, bpf_program__fd(refs[k]->progs.ref_gcra_lean), n,
			   k);
		add_target(t, &nt, "fresh table", K_OURS, rl_prog_fd(fresh[k]), n, k);
		add_target(t, &nt, "table after 5 sets", K_OURS, rl_prog_fd(sets[k]), n, k);
		/* The same in fill order: what a fresh table gains from it. */
		add_target(t, &nt, "fresh table, sources in fill order", K_OURS,
			   rl_prog_fd(fresh[k]), n, k);
		t[nt - 1].fill_order = true;
		add_target(t, &nt, "table after 5 sets, sources in fill order", K_OURS,
			   rl_prog_fd(sets[k]), n, k);
		t[nt - 1].fill_order = true;
	}
	link_targets(t, nt);
	before = new_sources(sets, INSTANCES) + new_sources(fresh, INSTANCES);
	fprintf(stderr, "rl-bench: sets: %d programs x %d rounds\n", nt, m->rounds);
	err = measure_all(m, drv, t, nt, "sets");
	if (err)
		goto out;
	after = new_sources(sets, INSTANCES) + new_sources(fresh, INSTANCES);
	note(m, "sets: sources inserted into the IPv4 table while measuring: %llu (0: all hits)",
	     (unsigned long long)(after - before));
	md = bench_out(m->out, "sets.md", "w");
	if (!md) {
		err = -errno;
		goto out;
	}
	fprintf(md,
		"| %u sources, token-bucket, packets | net ns (instances) | x (c') | "
		"x the fresh table, same order | IPv4 entries (instances) | under the live generation |\n"
		"|---|---|---|---|---|---|\n",
		n);
	for (int i = 1; i < nt; i++) {
		bool after_sets = !strncmp(t[i].name, "table after 5 sets", 18);
		int f = find_target(
			t, nt,
			t[i].fill_order ? "fresh table, sources in fill order" : "fresh table", n);
		const struct target *d = &t[t[i].driver];
		double fr = 0, frmin, dv[MAX_ROUNDS];
		char nc[64], xl[16], xf[32] = "1", ents[64] = "", live[64] = "";
		struct stat3 x;
		long *cnt = after_sets ? count_sets : count_fresh;

		if (t[i].inst || t[i].kind != K_OURS)
			continue;
		x = summarize(m, t, nt, i);
		memcpy(dv, d->wall, sizeof(double) * m->rounds);
		if (after_sets) {
			fr = ref_ratio(m, t, nt, i, f, d, x.min, bench_min(dv, m->rounds), &frmin);
			snprintf(xf, sizeof(xf), "%.2f (mins: %.2f)", fr, frmin);
		}
		net_cell(nc, sizeof(nc), &x, false);
		for (int k = 0; k < INSTANCES; k++) {
			size_t e = strlen(ents), l = strlen(live);

			snprintf(ents + e, sizeof(ents) - e, "%s%ld", k ? " / " : "", cnt[k]);
			if (after_sets)
				snprintf(live + l, sizeof(live) - l, "%s%llu", k ? " / " : "",
					 (unsigned long long)live_sets[k]);
		}
		/* (c') ran in the measuring order only. */
		snprintf(xl, sizeof(xl), t[i].fill_order ? "" : "%.2f", x.ratio_l);
		fprintf(md, "| %s | %s | %s | %s | %s | %s |\n", t[i].name, nc, xl, xf, ents, live);
	}
	fclose(md);
	err = 0;
out:
	for (int k = 0; k < INSTANCES; k++) {
		rl_prog_destroy(fresh[k]);
		rl_prog_destroy(sets[k]);
		if (k && refs[k])
			bench_ref__destroy(refs[k]);
	}
	unload_driver(m, drv);
	return err;
}

static int phase_scale(struct micro *m)
{
	static struct target t[MAX_TARGETS];
	__u32 counts[5] = { 1, 1024, 65536, M1, M8 }, entries = M8 + M1, top = M8;
	struct xdp_ratelimit *lim[INSTANCES] = {};
	struct bench_ref *refs[INSTANCES] = {};
	struct bench_ref *drv;
	struct rl_config cfg;
	struct mpol pol = { .algo = "token-bucket" };
	__u64 before, after;
	int nt = 0, err = -EINVAL;
	FILE *dat;

	if (m->quick) {
		counts[4] = 2 * M1;
		entries = 2 * M1 + M1 / 4;
		top = 2 * M1;
	}
	/* (c) is not measured here: its map stays small. */
	drv = load_driver(m, entries, entries);
	if (!drv)
		return -EINVAL;
	refs[0] = drv;
	if (matrix_config(&cfg, &pol))
		goto out;
	for (int k = 0; k < INSTANCES; k++) {
		if (k)
			refs[k] = load_refs(entries, entries);
		lim[k] = bench_limiter(&cfg, entries, 16);
		if (!refs[k] || !lim[k])
			goto out;
	}
	for (int s = 0; s < 5; s++) {
		int ninst = counts[s] == 1 ? 1 : INSTANCES;

		add_target(t, &nt, "driver", K_DRIVER, bpf_program__fd(drv->progs.bench_nop),
			   counts[s], 0);
		for (int k = 0; k < ninst; k++) {
			add_target(t, &nt, "xdp-ratelimit token-bucket", K_OURS, rl_prog_fd(lim[k]),
				   counts[s], k);
			add_target(t, &nt, NAME_B, K_REF,
				   bpf_program__fd(refs[k]->progs.ref_lookup), counts[s], k);
			add_target(t, &nt, NAME_CL, K_REF,
				   bpf_program__fd(refs[k]->progs.ref_gcra_lean), counts[s], k);
		}
	}
	link_targets(t, nt);
	fprintf(stderr, "rl-bench: warming %d maps with %u sources\n", 3 * INSTANCES, top);
	/* The targets of the largest count: one per program instance. */
	err = warm_targets(m, drv, t, nt, counts[4], (__u64)top + top / 16);
	if (err)
		goto out;
	fprintf(stderr, "rl-bench: scale: %d programs x %d rounds\n", nt, m->rounds);
	before = new_sources(lim, INSTANCES);
	err = measure_all(m, drv, t, nt, "scale");
	if (err)
		goto out;
	after = new_sources(lim, INSTANCES);
	/* A warm map: every lookup of the measurement hit. */
	note(m, "scale: sources inserted into the IPv4 table while measuring: %llu (0: all hits)",
	     (unsigned long long)(after - before));
	dat = bench_out(m->out, "scale.dat", "w");
	if (!dat) {
		err = -errno;
		goto out;
	}
	fprintf(dat, "# sources\tours_net_ns\tb_net_ns\tcl_net_ns\tours_x_cl\tdriver_ns\t"
		     "ours_inst_lo\tours_inst_hi\tcl_inst_lo\tcl_inst_hi\n");
	for (int s = 0; s < 5; s++) {
		int io = find_target(t, nt, "xdp-ratelimit token-bucket", counts[s]);
		int ib = find_target(t, nt, NAME_B, counts[s]);
		int ic = find_target(t, nt, NAME_CL, counts[s]);
		int id = find_target(t, nt, "driver", counts[s]);
		struct stat3 o = summarize(m, t, nt, io), b = summarize(m, t, nt, ib),
			     cc = summarize(m, t, nt, ic), d = summarize(m, t, nt, id);

		fprintf(dat, "%u\t%.2f\t%.2f\t%.2f\t%.3f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n",
			counts[s], o.net, b.net, cc.net, o.ratio_l, d.med, o.inst_lo, o.inst_hi,
			cc.inst_lo, cc.inst_hi);
	}
	fclose(dat);
	err = 0;
out:
	for (int k = 0; k < INSTANCES; k++) {
		if (lim[k])
			xdp_ratelimit__destroy(lim[k]);
		if (k && refs[k])
			bench_ref__destroy(refs[k]);
	}
	unload_driver(m, drv);
	return err;
}

/*
 * Memory: each source table sized exactly N (1M, 8M), filled by the program
 * itself with N distinct sources of its family, its memlock as the kernel
 * accounts it (what bpftool map show prints).
 */
static int phase_memory(struct micro *m)
{
	__u32 sizes[2] = { M1, m->quick ? 2 * M1 : M8 };
	struct bench_ref *drv = load_driver(m, 1, 1);
	int err = 0;
	FILE *md;

	if (!drv)
		return -EINVAL;
	md = bench_out(m->out, "memory.md", "w");
	if (!md) {
		err = -errno;
		unload_driver(m, drv);
		return err;
	}
	fprintf(md,
		"| table | max_entries | sources tracked after filling | map memlock (fdinfo) | "
		"bytes per tracked source | issue #11's goal for IPv4: <= 64 B |\n"
		"|---|---|---|---|---|---|\n");
	/* IPv4 in rl_sets4 (a bucket) and in rl_wide4 (sliding-window bytes), then IPv6. */
	for (int kind = 0; kind < 3 && !err; kind++) {
		for (int s = 0; s < 2 && !err; s++) {
			struct mpol pol = { .algo = kind == 1 ? "sliding-window" : "token-bucket",
					    .bytes = kind == 1 };
			const char *name = "rl_sets6", *what = "IPv6, key kept whole";
			int v6 = kind == 2;
			__u32 n = sizes[s];
			struct xdp_ratelimit *lim;
			struct rl_config cfg;
			__u64 memlock;
			double per;
			long have;
			int fd;

			err = matrix_config(&cfg, &pol);
			if (err)
				break;
			lim = bench_limiter(&cfg, v6 ? 16 : n, v6 ? n : 16);
			if (!lim) {
				err = -EINVAL;
				break;
			}
			m->frame = v6 ? &m->frame6 : &m->frame4;
			fd = v6 ? bpf_map__fd(lim->maps.rl_sets6) :
				  ipv4_table_fd(lim, &name, &what);
			fprintf(stderr, "rl-bench: filling %s with %u sources\n", name, n);
			err = warm(m, drv, rl_prog_fd(lim), n, n);
			have = family_entries(lim, v6);
			memlock = bench_fdinfo(fd, "memlock");
			per = have > 0 ? (double)memlock / have : 0;
			if (!err && have > 0)
				fprintf(md, "| %s (%s) | %u | %ld | %llu | %.1f | %s |\n", name,
					what, n, have, (unsigned long long)memlock, per,
					v6	  ? "" :
					per <= 64 ? "ok" :
						    "**over**");
			else if (!err)
				err = have < 0 ? (int)have : -ENOENT;
			xdp_ratelimit__destroy(lim);
		}
	}
	m->frame = &m->frame4;
	fclose(md);
	unload_driver(m, drv);
	return err;
}

/* ---- sampling: the cost of drop samples ---- */

/* The reader: drains rl_events on its own CPU while the phase measures. */
struct reader {
	struct ring_buffer *rb;
	volatile bool stop;
	volatile bool pause, paused; /* asked to leave the ring alone; doing so */
	__u64 samples;
};

static int reader_cb(void *ctx, void *data, size_t len)
{
	struct reader *r = ctx;

	(void)data;
	(void)len;
	r->samples++;
	return 0;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	bench_pin_cpu(0);
	while (!r->stop) {
		r->paused = r->pause;
		if (r->paused)
			usleep(1000);
		else if (ring_buffer__poll(r->rb, 10) == 0)
			ring_buffer__consume(r->rb); /* as events does: no wakeup per sample */
	}
	ring_buffer__consume(r->rb);
	return NULL;
}

/* Stop reading (@on) or read again; 0, or -ETIMEDOUT if the reader did not follow in 1 s. */
static int reader_pause(struct reader *r, bool on)
{
	r->pause = on;
	for (int i = 0; i < 1000; i++) {
		if (r->paused == on)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

/*
 * Sampling off; on but (past the first) picking nothing, the countdown alone;
 * on as the events command turns it on (1 in 100, the highest cap); uncapped.
 */
enum { S_OFF, S_CHECK, S_CAPPED, S_ALL, S_NOWAKE, S_MODES };

static const char *const sampling_names[S_MODES] = {
	[S_OFF] = "drop, sampling off",
	[S_CHECK] = "drop, sampling on, 1 in 2^32 (the countdown alone)",
	[S_CAPPED] = "drop, sampling 1 in 100, cap 10000/s",
	[S_ALL] = "drop, sampling 1 in 100, no cap",
	[S_NOWAKE] = "drop, sampling 1 in 100, no cap, reader paused (ring past half: wakeups)",
};

static int sampling_mode(const struct rl_pins *pins, int mode)
{
	struct rl_evctl ctl;
	char err[RL_ERRLEN];
	__u32 zero = 0;
	int ret;

	if (mode == S_OFF)
		return rl_events_disable(pins, 0);
	ret = rl_events_enable(pins, mode == S_CHECK ? 0xffffffffU : 100, RL_EV_MAX_RATE, getpid(),
			       err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rl-bench: sampling: %s\n", err);
		return ret;
	}
	if (mode != S_ALL && mode != S_NOWAKE)
		return 0;
	/* Every pick sent: the cost of the ring itself, beyond what the cap lets through. */
	if (bpf_map_lookup_elem(pins->evctl, &zero, &ctl))
		return -errno;
	ctl.cap.limit = 0xffffffffU;
	return bpf_map_update_elem(pins->evctl, &zero, &ctl, BPF_ANY) ? -errno : 0;
}

/*
 * Sampling: the per-packet cost of drop samples at 1 in 100 against none,
 * on frames that are all dropped (one source, 1 packet a second, burst 1),
 * with a reader draining the ring on the other CPU. Four states of the same
 * program and maps, measured in interleaved rounds with the driver alone: off
 * (one load and one test per drop); on with a countdown that never reaches
 * zero (the per-drop part of the cost); on as "events" turns it on (the
 * highest cap, 10000 samples a second; the cap's window restarts with each
 * run, so a run of fewer than a million drops stays under it); and on
 * without the cap (every 100th drop written to the ring).
 */
static int phase_sampling(struct micro *m)
{
	/*
	 * RL_BENCH_DROP_SOURCES=N: N sources (a power of two, from
	 * 198.18.0.0/15 up to 128k) each over its limit instead of one, so
	 * that drops of many sources are measured (bench/drop_cost.sh).
	 */
	const char *ns = getenv("RL_BENCH_DROP_SOURCES");
	__u32 nsrc = ns ? (__u32)strtoul(ns, NULL, 0) : 1;

	if (!nsrc || (nsrc & (nsrc - 1)) || nsrc > BENCH_NET4_SIZE) {
		fprintf(stderr, "rl-bench: RL_BENCH_DROP_SOURCES: a power of two up to %u\n",
			BENCH_NET4_SIZE);
		return -EINVAL;
	}
	double wall[S_MODES + 1][MAX_ROUNDS], kern, ratio[S_MODES][MAX_ROUNDS];
	const char *const args[] = { "--rate", "1", "--burst", "1", NULL };
	struct rl_evcpu tally[S_MODES] = {}, before, after;
	struct reader rd = {};
	struct xdp_ratelimit *lim = NULL;
	struct rl_counters c0, c1;
	struct bench_ref *drv;
	struct rl_config cfg;
	struct rl_pins pins;
	pthread_t th;
	bool started = false;
	int prog, err;
	FILE *md;

	drv = load_driver(m, 16, 16);
	if (!drv)
		return -EINVAL;
	err = bench_config(&cfg, args);
	if (err)
		goto out;
	err = -EINVAL;
	/* Room for every source, each in a set with few others: none evicted. */
	lim = bench_limiter(&cfg, nsrc > 16 ? 2 * nsrc : 16, 16);
	if (!lim)
		goto out;
	rl_prog_maps(lim, &pins);
	prog = rl_prog_fd(lim);
	rd.rb = ring_buffer__new(pins.events, reader_cb, &rd, NULL);
	if (!rd.rb) {
		err = -errno;
		goto out;
	}
	err = pthread_create(&th, NULL, reader_main, &rd);
	if (err) {
		err = -err;
		goto out;
	}
	started = true;
	/* The source's first packet passes: past it, every frame is a drop. */
	err = warm(m, drv, prog, nsrc, nsrc < 1000 ? 1000 : nsrc);
	if (!err)
		err = bench_counters(lim, &c0);
	if (err)
		goto out;
	if (m->rt && bench_rt(true))
		m->rt = false;
	for (int r = 0; r < m->rounds && !err; r++) {
		for (int j = 0; j <= S_MODES && !err; j++) {
			/* A rotating order; S_MODES is the driver alone. */
			int k = (j + r) % (S_MODES + 1);

			if (k == S_MODES) {
				err = set_target(m, drv, bpf_program__fd(drv->progs.bench_nop), 1,
						 false);
				if (!err)
					err = run_driver(m, drv, m->reps, &wall[k][r], &kern);
				if (!err)
					fprintf(m->raw, "sampling\tdriver\t1\t%d\t%.3f\t%.0f\n", r,
						wall[k][r], kern);
				continue;
			}
			err = sampling_mode(&pins, k);
			if (!err && k == S_NOWAKE)
				err = reader_pause(&rd, true);
			if (!err)
				err = rl_events_tally(&pins, &before);
			if (!err)
				err = set_target(m, drv, prog, nsrc, false);
			if (!err)
				err = run_driver(m, drv, m->reps, &wall[k][r], &kern);
			if (!err)
				err = rl_events_tally(&pins, &after);
			if (!err && k == S_NOWAKE)
				err = reader_pause(&rd, false);
			if (err)
				break;
			tally[k].sent += after.sent - before.sent;
			tally[k].capped += after.capped - before.capped;
			tally[k].lost += after.lost - before.lost;
			fprintf(m->raw, "sampling\t%s\t1\t%d\t%.3f\t%.0f\n", sampling_names[k], r,
				wall[k][r], kern);
		}
	}
	if (m->rt)
		bench_rt(false);
	rl_events_disable(&pins, 0);
	if (err) {
		fprintf(stderr, "rl-bench: sampling: %s\n", strerror(-err));
		goto out;
	}
	err = bench_counters(lim, &c1);
	if (err)
		goto out;
	md = bench_out(m->out, "sampling.md", "w");
	if (!md) {
		err = -errno;
		goto out;
	}
	/* Within each round, a mode against off: a drift of the machine moves both. */
	for (int k = 0; k < S_MODES; k++)
		for (int r = 0; r < m->rounds; r++)
			ratio[k][r] = (wall[k][r] - wall[S_MODES][r]) /
				      (wall[S_OFF][r] - wall[S_MODES][r]);
	fprintf(md,
		"Frames dropped in the measured runs: %llu of %llu (the others passed: a source "
		"earns a packet a second); %d rounds of %u repetitions, a reader draining the ring "
		"on the other CPU.\n\n"
		"| all frames dropped, %u source%s | ns per drop, net of the driver (median) | "
		"x off (median of rounds) | ns per drop over off | samples sent | picked over the cap | "
		"lost (ring full) |\n|---|---|---|---|---|---|---|\n",
		(unsigned long long)(c1.dropped - c0.dropped),
		(unsigned long long)m->rounds * m->reps * S_MODES, m->rounds, m->reps, nsrc,
		nsrc == 1 ? "" : "s");
	{
		double drv_med = bench_median(wall[S_MODES], m->rounds), med[S_MODES];

		for (int k = 0; k < S_MODES; k++) {
			double rt = bench_median(ratio[k], m->rounds);

			med[k] = bench_median(wall[k], m->rounds) - drv_med;
			fprintf(md, "| %s | %.2f | %.3f | %+.2f | %llu | %llu | %llu |\n",
				sampling_names[k], med[k], rt, med[k] - med[S_OFF],
				(unsigned long long)tally[k].sent,
				(unsigned long long)tally[k].capped,
				(unsigned long long)tally[k].lost);
		}
		fprintf(md,
			"\nPer sample written (1 in 100, no cap, less the countdown alone, x 100): "
			"%.0f ns with the reader polling, %.0f ns with it paused. Samples are "
			"submitted without a wakeup (the reader polls every 100 ms) until the ring "
			"is half full: a paused reader's full ring wakes it at every sample.\n",
			(med[S_ALL] - med[S_CHECK]) * 100, (med[S_NOWAKE] - med[S_CHECK]) * 100);
		note(m,
		     "sampling: 1 in 100 against off, per drop: %+.2f ns capped, %+.2f ns "
		     "uncapped, %+.2f ns the reader paused, %+.2f ns the countdown alone "
		     "(%.2f ns off); the reader got %llu samples",
		     med[S_CAPPED] - med[S_OFF], med[S_ALL] - med[S_OFF],
		     med[S_NOWAKE] - med[S_OFF], med[S_CHECK] - med[S_OFF], med[S_OFF],
		     (unsigned long long)rd.samples);
	}
	fclose(md);
	err = 0;
out:
	if (started) {
		rd.stop = true;
		pthread_join(th, NULL);
	}
	ring_buffer__free(rd.rb);
	rl_prog_destroy(lim);
	unload_driver(m, drv);
	return err;
}

/* ---- paths: the paths beside the IPv4 default (issue #30) ---- */

/* The port rules of paths' rules rows. */
#define PATHS_PORT_RULES 16

/* One rule from its words (NULL-terminated), added to @set before "default". */
static int paths_rule(struct rl_ruleset *set, const char *const *words)
{
	char err[RL_ERRLEN] = "";
	struct rl_rule r;
	int ret = rl_rule_parse(&r, NULL, words, err, sizeof(err));

	if (!ret) {
		ret = rl_ruleset_add(set, &r, NULL, err, sizeof(err));
		if (ret)
			rl_rule_free(&r);
	}
	if (ret)
		fprintf(stderr, "rl-bench: paths: rule %s: %s\n", words[0], err);
	return ret;
}

/*
 * The rules of paths' rows, before @cfg's default rule: an allow list of
 * @nprefix IPv4 /24s from 10.0.0.0/8, none of which holds a measured source
 * (198.18.0.0/15), then PATHS_PORT_RULES tcp port rules (--dport 1001 up)
 * that deny: a packet to port 9 falls through them all to "default", as
 * bench/rules.sh measures it. Compiled into *@rules (against no live rules).
 */
static int paths_ruleset(struct rl_ruleset *set, struct rl_rules_cfg *rules,
			 const struct rl_config *cfg, __u32 nprefix)
{
	static const struct rl_rules_cfg none;
	char path[] = "/tmp/rl-bench-allow.XXXXXX", err[RL_ERRLEN] = "", name[16], port[16];
	const char *allow[] = { "allow", "--src-file", path, "--allow", NULL };
	const char *deny[] = { name, "--proto", "tcp", "--dport", port, "--deny", NULL };
	struct rl_policy pol;
	struct rl_opts o;
	int fd, ret;
	FILE *f;

	rl_config_policy(cfg, &pol, &o);
	ret = rl_ruleset_init(set, &pol, &o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rl-bench: paths: %s\n", err);
		return ret;
	}
	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		ret = -errno;
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return ret;
	}
	for (__u32 i = 0; i < nprefix; i++)
		fprintf(f, "10.%u.%u.0/24\n", (i >> 8) & 255, i & 255);
	ret = fclose(f) ? -errno : 0;
	if (!ret)
		ret = paths_rule(set, allow);
	unlink(path);
	for (int i = 0; i < PATHS_PORT_RULES && !ret; i++) {
		snprintf(name, sizeof(name), "p%d", i + 1);
		snprintf(port, sizeof(port), "%d", 1001 + i);
		ret = paths_rule(set, deny);
	}
	if (!ret)
		ret = rl_rules_compile(set, &none, rules, err, sizeof(err));
	if (ret && err[0])
		fprintf(stderr, "rl-bench: paths: %s\n", err);
	return ret;
}

/* A limiter for @cfg built with the rules of @set (*@rules), their tries filled. */
static struct xdp_ratelimit *paths_rules_limiter(const struct rl_config *cfg,
						 const struct rl_ruleset *set,
						 const struct rl_rules_cfg *rules)
{
	static const struct rl_rules_cfg none;
	struct xdp_ratelimit *lim = bench_limiter_rules(cfg, ONE_ENTRIES, 16, rules);
	char err[RL_ERRLEN] = "";
	struct rl_pins pins;

	if (!lim)
		return NULL;
	rl_prog_maps(lim, &pins);
	if (rl_rules_fill(&pins, set, rules, &none, NULL, err, sizeof(err)) ||
	    rl_rules_commit(&pins, rules, err, sizeof(err))) {
		fprintf(stderr, "rl-bench: paths: rules: %s\n", err);
		xdp_ratelimit__destroy(lim);
		return NULL;
	}
	return lim;
}

/* token-bucket, packets, at the matrix's exact rate, with --prefix6 @prefix6. */
static int paths_config(struct rl_config *cfg, const char *prefix6)
{
	const char *args[] = { "--algo",     "token-bucket", "--rate", "100mpps", "--burst",
			       "1000000000", "--prefix6",    prefix6,  NULL };

	return bench_config(cfg, args);
}

/*
 * The ratio of target @i's cost to target @ref's within each round (both the
 * median of their instances in that round; @net: less that round's driver
 * of each), then its median over the rounds.
 */
static double round_ratio(const struct micro *m, const struct target *t, int nt, int i, int ref,
			  bool net)
{
	double rv[MAX_ROUNDS];
	int nr = 0;

	for (int r = 0; r < m->rounds; r++) {
		double a = round_median(t, nt, i, r), b = round_median(t, nt, ref, r);

		if (net) {
			a -= t[t[i].driver].wall[r];
			b -= t[t[ref].driver].wall[r];
		}
		if (b > 0)
			rv[nr++] = a / b;
	}
	return bench_median(rv, nr);
}

/* The rows of paths: each measured program, what it is compared with. */
enum { P_V6_64, P_V6_128, P_V4, P_R1K, P_R100K, P_ONE };
/* The tables of the 1M-source rows, by --max-sources. */
static const __u32 paths_tables[] = { M1, 2 * M1, 4 * M1, M8, M8 + M1 };
#define P_TABLES (sizeof(paths_tables) / sizeof(paths_tables[0]))

/*
 * paths (issue #30): the paths beside the untagged IPv4 default, each
 * against (c') in the same rounds. One source, ONE_INSTANCES instances of
 * every program:
 *	IPv6 with --prefix6 64 (the default) and 128, against (c') on the same
 *	IPv6 frame;
 *	IPv4 without rules, and behind 1,000 or 100,000 allow-list prefixes and
 *	16 tcp port rules (paths_ruleset()), on a UDP and on a TCP frame to a
 *	port no rule names: x (c'), and x the program without rules, net of the
 *	driver and gross (the driver's cost in both, as a caller of the whole
 *	program sees it); the IPv6 frame behind the same rules, against IPv6
 *	with --prefix6 64 and no rules;
 * and 1M sources in tables for 1M, 2M, 4M, 8M and 9M sources (rl_sets4 of
 * 2^19 to 2^23 sets), INSTANCES of each, against (c') with a table for 1M and
 * for 9M sources, and against our table for 1M: what a table larger than its
 * sources costs. DIR/paths.md is the table, DIR/paths.tsv its figures.
 */
static int phase_paths(struct micro *m)
{
	static struct target t[MAX_TARGETS];
	static struct xdp_ratelimit *one[ONE_INSTANCES][P_ONE], *big[INSTANCES][P_TABLES];
	static struct rl_rules_cfg rules[2];
	static const char *const one_name[P_ONE] = {
		"IPv6, --prefix6 64",
		"IPv6, --prefix6 128",
		"IPv4, no rules",
		"IPv4, 1,000 prefixes + 16 port rules",
		"IPv4, 100,000 prefixes + 16 port rules",
	};
	struct rl_ruleset sets[2] = {};
	bool have_set[2] = {};
	struct bench_ref *refs[ONE_INSTANCES] = {}, *big_refs[INSTANCES] = {};
	struct bench_ref *big9_refs[INSTANCES] = {}, *drv = NULL;
	__u32 n1m = m->quick ? M1 / 4 : M1, e1m = n1m + n1m / 8, e9m = M8 + M1;
	struct bench_frame tcp4;
	struct rl_config c64, c128;
	int nt = 0, err = -EINVAL, d4 = -1, d6 = -1, dt = -1, dm = -1;
	FILE *md = NULL, *tsv = NULL;
	const char *part = getenv("RL_BENCH_PATHS");
	/* RL_BENCH_PATHS=one or big: the one-source rows or the 1M rows alone (run.sh sets neither). */
	bool do_one = !part || strcmp(part, "big"), do_big = !part || strcmp(part, "one");
	__u64 before, after;

	memset(one, 0, sizeof(one));
	memset(big, 0, sizeof(big));
	bench_frame_ipv4_tcp(&tcp4, 64);
	if (paths_config(&c64, "64") || paths_config(&c128, "128"))
		return -EINVAL;
	for (int s = 0; s < 2 && do_one; s++) {
		have_set[s] = true;
		if (paths_ruleset(&sets[s], &rules[s], &c64, s ? 100000 : 1000))
			goto out_sets;
	}
	drv = load_driver(m, 16, e1m);
	if (!drv)
		goto out_sets;
	refs[0] = drv;
	for (int k = 1; k < ONE_INSTANCES; k++) {
		refs[k] = load_refs(16, ONE_ENTRIES);
		if (!refs[k])
			goto out;
	}
	for (int k = 0; k < INSTANCES && do_big; k++) {
		big_refs[k] = k ? load_refs(16, e1m) : drv;
		big9_refs[k] = load_refs(16, m->quick ? e9m / 4 : e9m);
		if (!big_refs[k] || !big9_refs[k])
			goto out;
	}
	fprintf(stderr, "rl-bench: paths: loading %d programs\n",
		ONE_INSTANCES * P_ONE + INSTANCES * (int)P_TABLES);
	for (int k = 0; k < ONE_INSTANCES && do_one; k++) {
		one[k][P_V6_64] = bench_limiter(&c64, ONE_ENTRIES, 16);
		one[k][P_V6_128] = bench_limiter(&c128, ONE_ENTRIES, 16);
		one[k][P_V4] = bench_limiter(&c64, ONE_ENTRIES, 16);
		one[k][P_R1K] = paths_rules_limiter(&c64, &sets[0], &rules[0]);
		one[k][P_R100K] = paths_rules_limiter(&c64, &sets[1], &rules[1]);
		for (int p = 0; p < P_ONE; p++)
			if (!one[k][p])
				goto out;
	}
	for (int k = 0; k < INSTANCES && do_big; k++) {
		for (size_t s = 0; s < P_TABLES; s++) {
			__u32 e = m->quick ? paths_tables[s] / 4 : paths_tables[s];

			big[k][s] = bench_limiter(&c64, e, 16);
			if (!big[k][s])
				goto out;
		}
	}
	/* One source: a driver per frame, (c') on IPv4 and on IPv6, our programs. */
	add_target(t, &nt, "driver, IPv4/UDP", K_DRIVER, bpf_program__fd(drv->progs.bench_nop), 1,
		   0);
	d4 = nt - 1;
	add_target(t, &nt, "driver, IPv4/TCP", K_DRIVER, bpf_program__fd(drv->progs.bench_nop), 1,
		   0);
	dt = nt - 1;
	t[dt].frame = &tcp4;
	add_target(t, &nt, "driver, IPv6/UDP", K_DRIVER, bpf_program__fd(drv->progs.bench_nop), 1,
		   0);
	d6 = nt - 1;
	t[d6].frame = &m->frame6;
	for (int k = 0; k < ONE_INSTANCES && do_one; k++) {
		/*
		 * (c'); the clock alone, below which no limiter that reads it
		 * per packet can go; and with one compare-and-swap, below which
		 * no exact limiter can, whatever its table. On both frames.
		 */
		const struct {
			const char *name;
			struct bpf_program *prog;
		} ref[] = { { NAME_CL, refs[k]->progs.ref_gcra_lean },
			    { NAME_K, refs[k]->progs.ref_clock },
			    { NAME_KC, refs[k]->progs.ref_clock_cas } };
		int fd;

		for (size_t r = 0; r < sizeof(ref) / sizeof(ref[0]); r++) {
			char name[96];

			fd = bpf_program__fd(ref[r].prog);
			snprintf(name, sizeof(name), "%s, IPv4", ref[r].name);
			add_target(t, &nt, name, K_REF, fd, 1, k);
			t[nt - 1].driver = d4;
			snprintf(name, sizeof(name), "%s, IPv6", ref[r].name);
			add_target(t, &nt, name, K_REF, fd, 1, k);
			t[nt - 1].driver = d6;
			t[nt - 1].frame = &m->frame6;
		}
		for (int p = 0; p < P_ONE; p++) {
			char name[96];

			fd = rl_prog_fd(one[k][p]);
			snprintf(name, sizeof(name), "%s%s", one_name[p], p >= P_V4 ? ", UDP" : "");
			add_target(t, &nt, name, K_OURS, fd, 1, k);
			t[nt - 1].driver = p < P_V4 ? d6 : d4;
			t[nt - 1].frame = p < P_V4 ? &m->frame6 : NULL;
			if (p < P_V4)
				continue;
			snprintf(name, sizeof(name), "%s, TCP", one_name[p]);
			add_target(t, &nt, name, K_OURS, fd, 1, k);
			t[nt - 1].driver = dt;
			t[nt - 1].frame = &tcp4;
			if (p == P_V4)
				continue;
			/* The IPv6 frame behind the same (IPv4) rules: the no-match path of IPv6. */
			snprintf(name, sizeof(name), "IPv6%s, UDP", one_name[p] + strlen("IPv4"));
			add_target(t, &nt, name, K_OURS, fd, 1, k);
			t[nt - 1].driver = d6;
			t[nt - 1].frame = &m->frame6;
		}
	}
	/* 1M sources. */
	add_target(t, &nt, "driver", K_DRIVER, bpf_program__fd(drv->progs.bench_nop), n1m, 0);
	dm = nt - 1;
	for (int k = 0; k < INSTANCES && do_big; k++) {
		add_target(t, &nt, NAME_CL ", table for 1M", K_REF,
			   bpf_program__fd(big_refs[k]->progs.ref_gcra_lean), n1m, k);
		add_target(t, &nt, NAME_CL ", table for 9M", K_REF,
			   bpf_program__fd(big9_refs[k]->progs.ref_gcra_lean), n1m, k);
		for (size_t s = 0; s < P_TABLES; s++) {
			char name[96];

			snprintf(name, sizeof(name), "IPv4, --max-sources %uM (2^%u sets)",
				 paths_tables[s] >> 20,
				 rl_sa_bits_for(m->quick ? paths_tables[s] / 4 : paths_tables[s]));
			add_target(t, &nt, name, K_OURS, rl_prog_fd(big[k][s]), n1m, k);
		}
	}
	for (int i = 0; i < nt; i++) {
		if (t[i].sources == n1m) {
			t[i].driver = dm;
			t[i].refcl = find_target(t, nt, NAME_CL ", table for 1M", n1m);
		} else if (t[i].kind != K_DRIVER) {
			t[i].refcl = find_target(
				t, nt,
				t[i].frame == &m->frame6 ? NAME_CL ", IPv6" : NAME_CL ", IPv4", 1);
		}
	}
	fprintf(stderr, "rl-bench: paths: warming %d maps with %u sources\n",
		INSTANCES * (2 + (int)P_TABLES), n1m);
	for (int i = 0; i < nt; i++) {
		if (t[i].sources != n1m || t[i].kind == K_DRIVER)
			continue;
		err = warm(m, drv, t[i].prog_fd, n1m, n1m + n1m / 16);
		if (err)
			goto out;
	}
	fprintf(stderr, "rl-bench: paths: %d programs x %d rounds x %u reps\n", nt, m->rounds,
		m->reps);
	before = 0;
	for (int k = 0; k < INSTANCES; k++)
		before += new_sources(big[k], P_TABLES);
	err = measure_all(m, drv, t, nt, "paths");
	if (err)
		goto out;
	after = 0;
	for (int k = 0; k < INSTANCES; k++)
		after += new_sources(big[k], P_TABLES);
	note(m,
	     "paths: sources inserted into the 1M rows' tables while measuring: %llu (0: all hits)",
	     (unsigned long long)(after - before));
	md = bench_out(m->out, "paths.md", "w");
	tsv = md ? bench_out(m->out, "paths.tsv", "w") : NULL;
	if (!md || !tsv) {
		err = -errno;
		goto out;
	}
	fprintf(md, "| program | sources | net ns (instances) | x (c') (mins) | x no rules, net | "
		    "x no rules, gross | x our table for 1M |\n|---|---|---|---|---|---|---|\n");
	fprintf(tsv,
		"# program\tsources\tnet_ns\tx_cl\tx_norules_net\tx_norules_gross\tx_table1m\n");
	for (int i = 0; i < nt; i++) {
		char nc[64], base[96], rn[16] = "", rg[16] = "", rt[16] = "";
		double xn = 0, xg = 0, xt = 0;
		struct stat3 x;
		int b;

		if (t[i].inst || t[i].kind == K_DRIVER)
			continue;
		x = summarize(m, t, nt, i);
		net_cell(nc, sizeof(nc), &x, false);
		/* The rules rows against the same frame without rules. */
		if (strstr(t[i].name, "prefixes")) {
			if (t[i].frame == &m->frame6)
				snprintf(base, sizeof(base), "%s", one_name[P_V6_64]);
			else
				snprintf(base, sizeof(base), "%s, %s", one_name[P_V4],
					 t[i].frame == &tcp4 ? "TCP" : "UDP");
			b = find_target(t, nt, base, 1);
			if (b >= 0) {
				xn = round_ratio(m, t, nt, i, b, true);
				xg = round_ratio(m, t, nt, i, b, false);
				snprintf(rn, sizeof(rn), "%.2f", xn);
				snprintf(rg, sizeof(rg), "%.2f", xg);
			}
		}
		if (t[i].sources == n1m && t[i].kind == K_OURS) {
			/* The first of our 1M rows: the table for 1M. */
			for (b = 0; b < nt; b++)
				if (t[b].sources == n1m && t[b].kind == K_OURS)
					break;
			xt = round_ratio(m, t, nt, i, b, true);
			snprintf(rt, sizeof(rt), "%.2f", xt);
		}
		fprintf(md, "| %s | %u | %s | %.2f (%.2f) | %s | %s | %s |\n", t[i].name,
			t[i].sources, nc, x.ratio_l, x.ratio_l_min, rn, rg, rt);
		fprintf(tsv, "%s\t%u\t%.2f\t%.4f\t%.4f\t%.4f\t%.4f\n", t[i].name, t[i].sources,
			x.net, x.ratio_l, xn, xg, xt);
	}
	err = 0;
out:
	if (tsv)
		fclose(tsv);
	if (md)
		fclose(md);
	for (int k = 0; k < ONE_INSTANCES; k++) {
		for (int p = 0; p < P_ONE; p++)
			if (one[k][p])
				xdp_ratelimit__destroy(one[k][p]);
		if (k && refs[k])
			bench_ref__destroy(refs[k]);
	}
	for (int k = 0; k < INSTANCES; k++) {
		for (size_t s = 0; s < P_TABLES; s++)
			if (big[k][s])
				xdp_ratelimit__destroy(big[k][s]);
		if (k && big_refs[k])
			bench_ref__destroy(big_refs[k]);
		if (big9_refs[k])
			bench_ref__destroy(big9_refs[k]);
	}
	if (drv)
		unload_driver(m, drv);
out_sets:
	for (int s = 0; s < 2; s++)
		if (have_set[s])
			rl_ruleset_free(&sets[s]);
	return err;
}

/* True if @name is in the comma-separated list @only (NULL: every phase). */
static bool wanted(const char *only, const char *name)
{
	size_t len = strlen(name);

	if (!only)
		return true;
	for (const char *p = only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

/*
 * Fleet sync counting (include/rl_sync.h): the same token-bucket policy
 * (every packet passes, so every packet is counted) built with
 * rl_config.sync_count off and on, with 1 and 64k sources. Each of
 * INSTANCES limiters (maps made with counting on, so its counters are
 * whole) runs both programs on its own maps: the off and on programs of
 * one instance share its source table, so their ratio is that of the code,
 * not of where two tables' memory landed (two identical programs on
 * tables of their own measure 10-20% apart: see the matrix's instances).
 * The ratio is taken per instance and round, then its median. No drain
 * runs here, so every source's counter holds units (after a drain, a
 * source's first packet also marks its counter for the next: once per
 * source and interval).
 */
static int phase_sync(struct micro *m)
{
	static struct target t[MAX_TARGETS];
	static const __u32 counts[2] = { 1, 65536 };
	struct xdp_ratelimit *lim[INSTANCES] = {}, *off[INSTANCES] = {};
	struct mpol pol = { .algo = "token-bucket" };
	struct rl_config cfg[2];
	struct bench_ref *drv;
	int nt = 0, err = -EINVAL;
	FILE *dat;

	drv = load_driver(m, 16, 16);
	if (!drv)
		return -EINVAL;
	for (int k = 0; k < 2; k++) {
		if (matrix_config(&cfg[k], &pol))
			goto out;
		cfg[k].sync_count = k;
	}
	for (int i = 0; i < INSTANCES; i++) {
		struct rl_pins pins;
		struct rl_prog_opts po = { .reuse = &pins };
		char why[RL_ERRLEN];
		__u32 zero = 0;
		struct rl_config c;

		lim[i] = bench_limiter(&cfg[1], 2 * 65536, 16);
		if (!lim[i])
			goto out;
		/* The same policy without counting, on the same maps. */
		rl_prog_maps(lim[i], &pins);
		if (bpf_map_lookup_elem(pins.config, &zero, &c)) {
			err = -errno;
			goto out;
		}
		c.sync_count = 0;
		off[i] = rl_prog_open(&c, &po, why, sizeof(why));
		if (!off[i]) {
			fprintf(stderr, "rl-bench: sync: %s\n", why);
			goto out;
		}
	}
	for (int s = 0; s < 2; s++) {
		add_target(t, &nt, "driver", K_DRIVER, bpf_program__fd(drv->progs.bench_nop),
			   counts[s], 0);
		for (int i = 0; i < INSTANCES; i++) {
			add_target(t, &nt, "sync counting off", K_OURS, rl_prog_fd(off[i]),
				   counts[s], i);
			add_target(t, &nt, "sync counting on", K_OURS, rl_prog_fd(lim[i]),
				   counts[s], i);
		}
	}
	link_targets(t, nt);
	err = warm_targets(m, drv, t, nt, counts[1], 2ULL * counts[1]);
	if (err)
		goto out;
	fprintf(stderr, "rl-bench: sync: %d programs x %d rounds\n", nt, m->rounds);
	err = measure_all(m, drv, t, nt, "sync");
	if (err)
		goto out;
	dat = bench_out(m->out, "sync.dat", "w");
	if (!dat) {
		err = -errno;
		goto out;
	}
	fprintf(dat, "# sources\toff_net_ns\ton_net_ns\ton_x_off\tlo\thi\n");
	for (int s = 0; s < 2; s++) {
		static double r[MAX_ROUNDS * INSTANCES];
		double inst[INSTANCES];
		int d = -1, n = 0;
		struct stat3 so, sn;
		double med;

		for (int i = 0; i < nt; i++)
			if (t[i].kind == K_DRIVER && t[i].sources == counts[s])
				d = i;
		for (int i = 0; i < INSTANCES; i++) {
			int jo = -1, jn = -1, ni = 0;
			double ri[MAX_ROUNDS];

			for (int j = 0; j < nt; j++) {
				if (t[j].sources != counts[s] || t[j].inst != i ||
				    t[j].kind != K_OURS)
					continue;
				if (!strcmp(t[j].name, "sync counting off"))
					jo = j;
				else
					jn = j;
			}
			for (int k = 0; k < m->rounds && jo >= 0 && jn >= 0 && d >= 0; k++) {
				double den = t[jo].wall[k] - t[d].wall[k];

				if (den > 0) {
					ri[ni++] = (t[jn].wall[k] - t[d].wall[k]) / den;
					r[n++] = ri[ni - 1];
				}
			}
			inst[i] = bench_median(ri, ni);
		}
		med = bench_median(r, n);
		so = summarize(m, t, nt, find_target(t, nt, "sync counting off", counts[s]));
		sn = summarize(m, t, nt, find_target(t, nt, "sync counting on", counts[s]));
		fprintf(dat, "%u\t%.2f\t%.2f\t%.3f\t%.3f\t%.3f\n", counts[s], so.net, sn.net, med,
			bench_min(inst, INSTANCES), bench_max(inst, INSTANCES));
		note(m,
		     "sync: %u sources: counting off %.2f ns, on %.2f ns net per packet: %.3fx "
		     "(instances %.3f-%.3f)",
		     counts[s], so.net, sn.net, med, bench_min(inst, INSTANCES),
		     bench_max(inst, INSTANCES));
	}
	fclose(dat);
	err = 0;
out:
	for (int i = 0; i < INSTANCES; i++) {
		if (off[i])
			xdp_ratelimit__destroy(off[i]);
		if (lim[i])
			xdp_ratelimit__destroy(lim[i]);
	}
	unload_driver(m, drv);
	return err;
}

/*
 * The levels above the source (include/rl_agg.h, issue #28): the same
 * token-bucket policy (every packet passes, at every level) alone and with
 * each level, with 1 and 64k sources (256 /24 aggregates): its prefix
 * aggregate, the interface's limit, both, and the admission cap (every
 * source held: nothing to do on a hit). A level checks its state before the
 * source (a lookup in rl_agg) and charges it after (a second lookup and a
 * compare-and-swap). Then the two paths of a flood of new sources, 8M of
 * them cycling through a table of 128k slots (every packet a miss): a
 * source the admission cap refuses (at 1 a day; rl_admit's 16k words
 * forget each refusal long before its source comes back), and a source
 * the table inserts, evicting another (no cap). Each against the policy
 * alone on a source it holds (64k sources), the ratio taken within each
 * round, then its median over rounds.
 */
#define NLEVELS 7
#define NHELD	5 /* the rows measured on sources the table holds */

static int phase_levels(struct micro *m)
{
	static struct target t[MAX_TARGETS];
	static const __u32 counts[2] = { 1, 65536 };
	static const char *const names[NLEVELS] = {
		"per-source limit alone",
		"+ prefix aggregate (/24)",
		"+ interface limit",
		"+ aggregate + interface",
		"+ admission cap (sources held)",
		"new source, refused by the cap",
		"new source, inserted (no cap)",
	};
	static const char *const extra[NLEVELS][9] = {
		{ NULL },
		{ "--aggregate4", "24", "--aggregate-rate", "100mpps", "--aggregate-burst",
		  "1000000000", NULL },
		{ "--iface-rate", "100mpps", "--iface-burst", "1000000000", NULL },
		{ "--aggregate4", "24", "--aggregate-rate", "100mpps", "--aggregate-burst",
		  "1000000000", "--iface-rate", "100mpps", NULL },
		{ "--admit-rate", "100mpps", "--admit-burst", "1000000000", NULL },
		{ "--admit-rate", "1/day", "--admit-burst", "1", NULL },
		{ NULL },
	};
	struct xdp_ratelimit *lim[NLEVELS] = {};
	struct rl_config cfg[NLEVELS];
	struct bench_ref *drv;
	int nt = 0, err = -EINVAL, idx[3][NLEVELS];
	FILE *dat;

	drv = load_driver(m, 16, 16);
	if (!drv)
		return -EINVAL;
	for (int k = 0; k < NLEVELS; k++) {
		const char *args[24] = { "--rate",    "100mpps", "--burst", "1000000000",
					 "--prefix6", "128",	 NULL };
		int n = 6;

		for (int j = 0; extra[k][j]; j++)
			args[n++] = extra[k][j];
		args[n] = NULL;
		if (bench_config(&cfg[k], args))
			goto out;
		/* The new-source rows: the smallest table (128k slots) for their 8M sources. */
		lim[k] = bench_limiter(&cfg[k], k >= NHELD ? 1 : 2 * 65536, 16);
		if (!lim[k])
			goto out;
	}
	for (int s = 0; s < 3; s++) {
		__u32 n = s < 2 ? counts[s] : M8;

		add_target(t, &nt, "driver", K_DRIVER, bpf_program__fd(drv->progs.bench_nop), n, 0);
		for (int k = s < 2 ? 0 : NHELD; k < (s < 2 ? NHELD : NLEVELS); k++) {
			idx[s][k] = nt;
			add_target(t, &nt, names[k], K_OURS, rl_prog_fd(lim[k]), n, 0);
		}
	}
	link_targets(t, nt);
	err = warm_targets(m, drv, t, nt, counts[1], 2ULL * counts[1]);
	if (err)
		goto out;
	fprintf(stderr, "rl-bench: levels: %d programs x %d rounds\n", nt, m->rounds);
	err = measure_all(m, drv, t, nt, "levels");
	if (err)
		goto out;
	dat = bench_out(m->out, "levels.dat", "w");
	if (!dat) {
		err = -errno;
		goto out;
	}
	fprintf(dat, "# sources\tprogram\tnet_ns\tx_alone_median\tx_alone_min\tx_alone_max\n");
	for (int s = 0; s < 3; s++) {
		/* Against the policy alone on held sources: 1 source for 1, 64k for the rest. */
		int b = idx[s ? 1 : 0][0];
		const struct target *bd = &t[t[b].driver];

		for (int k = s < 2 ? 0 : NHELD; k < (s < 2 ? NHELD : NLEVELS); k++) {
			const struct target *x = &t[idx[s][k]], *d = &t[x->driver];
			struct stat3 st = summarize(m, t, nt, idx[s][k]);
			double r[MAX_ROUNDS], med, lo, hi;

			for (int j = 0; j < m->rounds; j++)
				r[j] = (x->wall[j] - d->wall[j]) / (t[b].wall[j] - bd->wall[j]);
			med = bench_median(r, m->rounds);
			lo = bench_min(r, m->rounds);
			hi = bench_max(r, m->rounds);
			fprintf(dat, "%u\t%s\t%.2f\t%.3f\t%.3f\t%.3f\n", x->sources, names[k],
				st.net, med, lo, hi);
			note(m,
			     "levels: %u sources: %s: %.2f ns net per packet, %.3fx the per-source "
			     "limit alone (rounds %.3f-%.3f)",
			     x->sources, names[k], st.net, med, lo, hi);
		}
	}
	fclose(dat);
	err = 0;
out:
	for (int k = 0; k < NLEVELS; k++)
		if (lim[k])
			xdp_ratelimit__destroy(lim[k]);
	unload_driver(m, drv);
	return err;
}

int bench_micro(int argc, char **argv)
{
	struct micro m = { .rounds = 9, .reps = 1000000, .rt = true };
	const char *only = NULL;
	char path[512];
	int err = 0;

	if (bench_parse_args("micro", argc, argv, &m.out, &m.rounds, &m.reps, &m.quick, &only))
		return 2;
	if (!m.out || m.rounds < 1 || m.rounds > MAX_ROUNDS || !m.reps) {
		fprintf(stderr, "rl-bench micro: needs --out DIR, 1-%d rounds, reps > 0\n",
			MAX_ROUNDS);
		return 2;
	}
	mkdir(m.out, 0755);
	snprintf(path, sizeof(path), "%s/notes.md", m.out);
	unlink(path);
	bench_frame_ipv4(&m.frame4, 64);
	bench_frame_ipv6(&m.frame6, 64);
	m.frame = &m.frame4;
	m.raw = bench_out(m.out, "micro-raw.tsv", "w");
	if (!m.raw)
		return 1;
	fprintf(m.raw, "# phase\tprogram\tsources\tround\twall_ns_per_run\tkernel_duration_ns\n");
	/* Measure on the second CPU; the first takes most of the machine's other work. */
	bench_pin_cpu(1);
	if (bench_rt(true))
		m.rt = false;
	else
		bench_rt(false);
	fprintf(stderr, "rl-bench: SCHED_FIFO while measuring: %s\n", m.rt ? "yes" : "no");
	/* --only PHASE[,PHASE...]: some phases alone (run.sh repeats the matrix). */
#define PHASE(name)                              \
	do {                                     \
		if (!err && wanted(only, #name)) \
			err = phase_##name(&m);  \
	} while (0)
	PHASE(matrix);
	PHASE(sets);
	PHASE(scale);
	PHASE(memory);
	PHASE(sampling);
	PHASE(sync);
	PHASE(paths);
	PHASE(levels);
#undef PHASE
	fclose(m.raw);
	return err ? 1 : 0;
}
