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
 * Frames are IPv6 from 2001:2::/48 and the limiter keys /128: 8M distinct
 * sources do not fit in IPv4's 198.18.0.0/15, and the map key is the same
 * 16 bytes (+ generation) for both families.
 *
 * Large maps: where a map's memory lands matters once its entries no longer
 * fit in the caches. Two identical programs, each with its own 1M-entry map,
 * measured here 10-20% apart, and the order moved between runs (a VM's
 * memory is not uniformly fast). So every program measured on a large map
 * is loaded INSTANCES times, each with its own map, and its cost is the
 * median over all instances and rounds; the spread between instances is
 * reported beside it.
 *
 * Phases, each freeing what the one before loaded:
 *	1. the matrix: 4 algorithms x {packets, bytes} x {precise, coarse
 *	   clock} x {1, 1M sources} and the references (a), (b), (c), (c'),
 *	   rl_state sized 1M + 1/8;
 *	2. steps: one source, (c') built up to xdp_ratelimit a feature at a time
 *	   (bench/bpf/bench_steps.bpf.c): where the time beyond (c') goes;
 *	3. scale: token-bucket, (b) and (c) with 1, 1k, 64k, 1M, 8M sources;
 *	4. memory: rl_state sized exactly 1M and 8M, filled, its memlock read.
 */
#include <errno.h>
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
#include "bench_steps.skel.h"
#include "xdp_ratelimit.skel.h"

#define M1	   (1U << 20)
#define M8	   (8U << 20)
#define MAX_ROUNDS 64
#define FILL_CHUNK M1
/* Instances of each program (each with its own maps) measured on large maps. */
#define INSTANCES   3
#define MAX_TARGETS 160

/* The references' names, by which the tables find them (bench/bpf/bench_ref.bpf.c). */
#define NAME_B	"(b) parse + LRU lookup/insert + atomic add"
#define NAME_C	"(c) (b) + clock + GCRA CAS"
#define NAME_CL "(c') (c) without (b)'s atomic add"

struct target {
	char name[64];
	int kind; /* K_DRIVER, K_REF, K_OURS */
	int prog_fd;
	__u32 sources;
	double wall[MAX_ROUNDS], kern[MAX_ROUNDS];
	int inst; /* which instance of the program (0 when only one) */
	int driver; /* index of the driver measured with the same sources */
	int refc; /* index of (c) with the same sources, or -1 */
	int refcl; /* index of (c') with the same sources, or -1 */
};

enum { K_DRIVER, K_REF, K_OURS };

struct micro {
	const char *out;
	int rounds;
	__u32 reps;
	bool quick, rt;
	struct bench_frame frame;
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

int bench_set_target(struct bench_ref *drv, int prog_fd, __u32 sources)
{
	__u32 zero = 0;

	drv->bss->bench_mask = sources - 1;
	if (bpf_map_update_elem(bpf_map__fd(drv->maps.bench_jmp), &zero, &prog_fd, BPF_ANY))
		return -errno;
	return 0;
}

int bench_run_driver(struct bench_ref *drv, const struct bench_frame *f, __u32 reps, double *wall,
		     double *kern)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = f->len,
		    .repeat = reps);
	__u64 fail = drv->bss->bench_tail_fail;
	int err;

	drv->bss->bench_t0 = 0;
	err = bpf_prog_test_run_opts(bpf_program__fd(drv->progs.bench_driver), &opts);
	if (err)
		return -errno;
	if (drv->bss->bench_tail_fail != fail) {
		fprintf(stderr, "rl-bench: the driver's tail call failed\n");
		return -EINVAL;
	}
	if (wall) {
		if (drv->bss->bench_n1 <= drv->bss->bench_n0) {
			fprintf(stderr, "rl-bench: too few repetitions to time (%u)\n", reps);
			return -EINVAL;
		}
		*wall = (double)(drv->bss->bench_t1 - drv->bss->bench_t0) /
			(double)(drv->bss->bench_n1 - drv->bss->bench_n0);
	}
	if (kern)
		*kern = opts.duration;
	return 0;
}

/* Run @prog_fd over @total repetitions cycling @sources sources: fills its map. */
static int warm(struct micro *m, struct bench_ref *drv, int prog_fd, __u32 sources, __u64 total)
{
	int err = bench_set_target(drv, prog_fd, sources);

	while (!err && total) {
		__u32 n = total > FILL_CHUNK ? FILL_CHUNK : (__u32)total;

		err = bench_run_driver(drv, &m->frame, n, NULL, NULL);
		total -= n;
	}
	return err;
}

static int measure_all(struct micro *m, struct bench_ref *drv, struct target *t, int nt,
		       const char *phase)
{
	int err;

	if (m->rt && bench_rt(true))
		m->rt = false;
	for (int r = 0; r < m->rounds; r++) {
		for (int j = 0; j < nt; j++) {
			/* A rotating order: no program always runs first or last. */
			struct target *x = &t[(j + r * 7) % nt];
			__u32 reps = m->reps;

			err = bench_set_target(drv, x->prog_fd, x->sources);
			if (!err)
				err = bench_run_driver(drv, &m->frame, reps, &x->wall[r],
						       &x->kern[r]);
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
	double inst_lo, inst_hi; /* lowest and highest median of one instance, net */
	int ninst;
};

/* Rounds of every instance of target @i's program (same name and sources), pooled. */
/* Targets @a and @b are instances of one program, measured with the same sources. */
static bool same_program(const struct target *a, const struct target *b)
{
	return a->sources == b->sources && !strcmp(a->name, b->name);
}

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
 * of the driver, and the ratios to (c) and (c') (ref_ratio()).
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
	return s;
}

/* The goal: our program costs at most 1.2x reference (c). */
static const char *goal(const struct target *t, double ratio)
{
	if (t->kind != K_OURS)
		return "";
	return ratio <= 1.2 ? " ok" : " **over 1.2**";
}

static const char *const algos[] = { "token-bucket", "gcra", "fixed-window", "sliding-window" };

/*
 * The policies of the matrix: rates no source reaches in test_run (~30
 * Mpps), so every packet passes and takes the compare-and-swap, the costlier
 * path, like reference (c). The same policies for both clocks: bursts and
 * windows that a coarse clock tick (up to 10 ms) cannot disturb, and a byte
 * rate for the windows that keeps the sliding window's per-window limit
 * under its 24-bit counters.
 */
static int matrix_config(struct rl_config *cfg, const char *algo, bool bytes, bool coarse)
{
	bool window = !strcmp(algo, "fixed-window") || !strcmp(algo, "sliding-window");
	const char *args[] = { "--algo",
			       algo,
			       "--rate",
			       bytes ? (window ? "1gbyte" : "10gbyte") : "100mpps",
			       window ? "--window" : "--burst",
			       window ? "10ms" : "1000000000",
			       "--prefix6",
			       "128",
			       "--clock",
			       coarse ? "coarse" : "precise",
			       NULL };

	return bench_config(cfg, args);
}

/*
 * Reference programs and their maps, not attached (as further instances on
 * large maps); (c')'s map gets @lean_entries.
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

/* The references, with the driver attached and pointed at the frame's source word. */
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
	drv->bss->bench_off = m->frame.src_off;
	drv->bss->bench_base = m->frame.src_base;
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
}

/* Link each target to the driver, (c) and (c') measured with the same number of sources. */
static void link_targets(struct target *t, int nt)
{
	for (int i = 0; i < nt; i++) {
		for (int j = 0; j < nt; j++) {
			if (t[j].sources != t[i].sources)
				continue;
			if (t[j].kind == K_DRIVER)
				t[i].driver = j;
			if (!strcmp(t[j].name, NAME_C) && !t[j].inst)
				t[i].refc = j;
			if (!strcmp(t[j].name, NAME_CL) && !t[j].inst)
				t[i].refcl = j;
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

/* Our 16 matrix policies: algorithm a / 4, bytes if a is odd, the coarse clock if a & 2. */
#define NPOL 16

static void policy_name(char *buf, size_t len, int a)
{
	snprintf(buf, len, "xdp-ratelimit %s, %s%s", algos[a / 4], a % 2 ? "bytes" : "packets",
		 a & 2 ? ", coarse clock" : "");
}

static int find_target(const struct target *t, int nt, const char *name, __u32 sources)
{
	for (int j = 0; j < nt; j++)
		if (t[j].sources == sources && !t[j].inst && !strcmp(t[j].name, name))
			return j;
	return -1;
}

static int phase_matrix(struct micro *m)
{
	static struct target t[MAX_TARGETS];
	static struct xdp_ratelimit *lim[INSTANCES][NPOL];
	struct bench_ref *refs[INSTANCES] = {};
	__u32 entries = M1 + M1 / 8, counts[2] = { 1, M1 };
	struct bench_ref *drv;
	struct rl_config cfg;
	struct rl_counters c;
	__u64 before = 0, after = 0;
	char name[96];
	int nt = 0, err = -EINVAL;
	FILE *md;

	memset(lim, 0, sizeof(lim));
	drv = load_driver(m, entries, entries);
	if (!drv)
		return -EINVAL;
	refs[0] = drv;
	for (int k = 1; k < INSTANCES; k++) {
		refs[k] = load_refs(entries, entries);
		if (!refs[k])
			goto out;
	}
	for (int k = 0; k < INSTANCES; k++) {
		for (int a = 0; a < NPOL; a++) {
			if (matrix_config(&cfg, algos[a / 4], a % 2, a & 2))
				goto out;
			lim[k][a] = bench_limiter(&cfg, entries);
			if (!lim[k][a])
				goto out;
		}
	}
	for (int s = 0; s < 2; s++) {
		__u32 n = counts[s];

		add_target(t, &nt, "driver alone (tail call to an empty program)", K_DRIVER,
			   bpf_program__fd(drv->progs.bench_nop), n, 0);
		add_target(t, &nt, "(a) parse + drop", K_REF, bpf_program__fd(drv->progs.ref_parse),
			   n, 0);
		/*
		 * Every program with a map runs as INSTANCES, with one source
		 * too: where a program's code and its one entry land still
		 * moves it by a few hundredths (two copies of one program
		 * measured up to 0.04 apart).
		 */
		for (int k = 0; k < INSTANCES; k++) {
			add_target(t, &nt, NAME_B, K_REF,
				   bpf_program__fd(refs[k]->progs.ref_lookup), n, k);
			add_target(t, &nt, NAME_C, K_REF, bpf_program__fd(refs[k]->progs.ref_gcra),
				   n, k);
			add_target(t, &nt, NAME_CL, K_REF,
				   bpf_program__fd(refs[k]->progs.ref_gcra_lean), n, k);
			for (int a = 0; a < NPOL; a++) {
				policy_name(name, sizeof(name), a);
				add_target(t, &nt, name, K_OURS,
					   bpf_program__fd(lim[k][a]->progs.xdp_ratelimit), n, k);
			}
		}
	}
	link_targets(t, nt);
	/* Map warm: every source of the 1M already in every map. */
	fprintf(stderr, "rl-bench: warming %d maps with %u sources\n", (NPOL + 3) * INSTANCES, M1);
	for (int i = 0; i < nt; i++) {
		if (t[i].sources != M1 || t[i].kind == K_DRIVER || !strncmp(t[i].name, "(a)", 3))
			continue;
		err = warm(m, drv, t[i].prog_fd, M1, M1 + M1 / 16);
		if (err)
			goto out;
	}
	fprintf(stderr, "rl-bench: matrix: %d programs x %d rounds x %u reps\n", nt, m->rounds,
		m->reps);
	for (int k = 0; k < INSTANCES; k++) {
		for (int a = 0; a < NPOL; a++) {
			bench_counters(lim[k][a], &c);
			before += c.new_sources;
		}
	}
	err = measure_all(m, drv, t, nt, "matrix");
	if (err)
		goto out;
	for (int k = 0; k < INSTANCES; k++) {
		for (int a = 0; a < NPOL; a++) {
			bench_counters(lim[k][a], &c);
			after += c.new_sources;
		}
	}
	/* A warm map: every lookup of the measurement hit. */
	note(m, "matrix: sources inserted into rl_state while measuring: %llu (0: all hits)",
	     (unsigned long long)(after - before));

	md = bench_out(m->out, "micro.md", "w");
	if (!md) {
		err = -errno;
		goto out;
	}
	fprintf(md, "| program | 1 source: min / median ns | net ns (instances) | x (c) | x (c') | "
		    "1M sources: min / median ns | net ns (instances) | x (c) | x (c') |\n"
		    "|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nt && t[i].sources == 1; i++) {
		int j = find_target(t, nt, t[i].name, M1);
		struct stat3 a, b;
		bool drv_row = t[i].kind == K_DRIVER;
		char ra[48] = "", rb[48] = "", la[16] = "", lb[16] = "", na[64], nb[64];

		/* A row per program: its instances are in its figures. */
		if (j < 0 || t[i].inst)
			continue;
		a = summarize(m, t, nt, i);
		b = summarize(m, t, nt, j);
		if (!drv_row) {
			snprintf(ra, sizeof(ra), "%.2f%s (mins: %.2f)", a.ratio,
				 goal(&t[i], a.ratio), a.ratio_min);
			snprintf(rb, sizeof(rb), "%.2f%s (mins: %.2f)", b.ratio,
				 goal(&t[i], b.ratio), b.ratio_min);
			snprintf(la, sizeof(la), "%.2f", a.ratio_l);
			snprintf(lb, sizeof(lb), "%.2f", b.ratio_l);
		}
		net_cell(na, sizeof(na), &a, drv_row);
		net_cell(nb, sizeof(nb), &b, drv_row);
		fprintf(md, "| %s | %.1f / %.1f | %s | %s | %s | %.1f / %.1f | %s | %s | %s |\n",
			t[i].name, a.min, a.med, na, ra, la, b.min, b.med, nb, rb, lb);
	}
	fclose(md);
	err = 0;
out:
	for (int k = 0; k < INSTANCES; k++) {
		for (int a = 0; a < NPOL; a++)
			if (lim[k][a])
				xdp_ratelimit__destroy(lim[k][a]);
		if (k && refs[k])
			bench_ref__destroy(refs[k]);
	}
	unload_driver(m, drv);
	return err;
}

/* bench_steps loaded, its configuration written as xdp_ratelimit's loader does. */
static struct bench_steps *load_steps(const struct rl_config *cfg)
{
	struct bench_steps *st = bench_steps__open();
	struct rl_ctl ctl = { .active = 0 };
	__u32 zero = 0;
	int err = -ENOMEM;

	if (st)
		err = bench_steps__load(st);
	if (!err && (bpf_map_update_elem(bpf_map__fd(st->maps.step_config), &zero, cfg, BPF_ANY) ||
		     bpf_map_update_elem(bpf_map__fd(st->maps.step_ctl), &zero, &ctl, BPF_ANY)))
		err = -errno;
	if (err) {
		fprintf(stderr, "rl-bench: steps: couldn't load bench_steps: %s\n", strerror(-err));
		bench_steps__destroy(st);
		return NULL;
	}
	return st;
}

/*
 * One source: (c'), the steps of bench_steps.bpf.c, xdp_ratelimit (token-bucket,
 * packets), then (c) for comparison; INSTANCES of each, as in the matrix.
 */
static int phase_steps(struct micro *m)
{
	static const char *const what[] = {
		"step 0: (c') again, another copy (the noise floor)",
		"step 1: + generation in the key (20 bytes)",
		"step 2: + per-CPU counters",
		"step 3: + double-buffered configuration, source mask",
		"step 4: + generic algorithm step (rl_algo.h)",
	};
	static struct target t[16 * INSTANCES];
	struct xdp_ratelimit *lim[INSTANCES] = {};
	struct bench_steps *st[INSTANCES] = {};
	struct bench_ref *refs[INSTANCES] = {};
	struct rl_config cfg;
	double prev = 0;
	int nt = 0, row = 0, err = -EINVAL;
	FILE *md;

	refs[0] = load_driver(m, 16, 16);
	if (!refs[0])
		return -EINVAL;
	if (matrix_config(&cfg, "token-bucket", false, false))
		goto out;
	for (int k = 0; k < INSTANCES; k++) {
		if (k)
			refs[k] = load_refs(16, 16);
		lim[k] = bench_limiter(&cfg, 16);
		st[k] = load_steps(&cfg);
		if (!refs[k] || !lim[k] || !st[k])
			goto out;
	}
	add_target(t, &nt, "driver", K_DRIVER, bpf_program__fd(refs[0]->progs.bench_nop), 1, 0);
	for (int k = 0; k < INSTANCES; k++) {
		struct bpf_program *progs[5] = { st[k]->progs.step0, st[k]->progs.step1,
						 st[k]->progs.step2, st[k]->progs.step3,
						 st[k]->progs.step4 };

		add_target(t, &nt, NAME_CL, K_REF, bpf_program__fd(refs[k]->progs.ref_gcra_lean), 1,
			   k);
		for (int i = 0; i < 5; i++)
			add_target(t, &nt, what[i], K_REF, bpf_program__fd(progs[i]), 1, k);
		add_target(t, &nt, "xdp-ratelimit token-bucket, packets: all of it", K_OURS,
			   bpf_program__fd(lim[k]->progs.xdp_ratelimit), 1, k);
		add_target(t, &nt, NAME_C, K_REF, bpf_program__fd(refs[k]->progs.ref_gcra), 1, k);
	}
	link_targets(t, nt);
	fprintf(stderr, "rl-bench: steps: %d programs x %d rounds\n", nt, m->rounds);
	err = measure_all(m, refs[0], t, nt, "steps");
	if (err)
		goto out;
	md = bench_out(m->out, "steps.md", "w");
	if (!md) {
		err = -errno;
		goto out;
	}
	fprintf(md, "| program (1 source) | net ns (instances) | x (c') | step |\n"
		    "|---|---|---|---|\n");
	/* A row per program, in the order added: (c'), steps 0 to 4, ours, (c). */
	for (int i = 1; i < nt; i++) {
		struct stat3 x;
		char d[32] = "", n[64];

		if (t[i].inst)
			continue;
		x = summarize(m, t, nt, i);
		row++;
		/* Steps 1 to 4 and ours: the difference to the row above. */
		if (row > 2 && row < 8)
			snprintf(d, sizeof(d), "%+.2f", x.ratio_l - prev);
		net_cell(n, sizeof(n), &x, false);
		fprintf(md, "| %s | %s | %.2f | %s |\n", t[i].name, n, x.ratio_l, d);
		prev = x.ratio_l;
	}
	fclose(md);
	err = 0;
out:
	for (int k = 0; k < INSTANCES; k++) {
		bench_steps__destroy(st[k]);
		if (lim[k])
			xdp_ratelimit__destroy(lim[k]);
		if (k && refs[k])
			bench_ref__destroy(refs[k]);
	}
	unload_driver(m, refs[0]);
	return err;
}

static int phase_scale(struct micro *m)
{
	static struct target t[MAX_TARGETS];
	__u32 counts[5] = { 1, 1024, 65536, M1, M8 }, entries = M8 + M1, top = M8;
	struct xdp_ratelimit *lim[INSTANCES] = {};
	struct bench_ref *refs[INSTANCES] = {};
	struct rl_counters c0 = {}, c1 = {}, c;
	struct bench_ref *drv;
	struct rl_config cfg;
	int nt = 0, err = -EINVAL;
	FILE *dat;

	if (m->quick) {
		counts[4] = 2 * M1;
		entries = 2 * M1 + M1 / 4;
		top = 2 * M1;
	}
	/* (c') is not measured here: its map stays small. */
	drv = load_driver(m, entries, 1);
	if (!drv)
		return -EINVAL;
	refs[0] = drv;
	if (matrix_config(&cfg, "token-bucket", false, false))
		goto out;
	for (int k = 0; k < INSTANCES; k++) {
		if (k)
			refs[k] = load_refs(entries, 1);
		lim[k] = bench_limiter(&cfg, entries);
		if (!refs[k] || !lim[k])
			goto out;
	}
	for (int s = 0; s < 5; s++) {
		int ninst = counts[s] == 1 ? 1 : INSTANCES;

		add_target(t, &nt, "driver", K_DRIVER, bpf_program__fd(drv->progs.bench_nop),
			   counts[s], 0);
		for (int k = 0; k < ninst; k++) {
			add_target(t, &nt, "xdp-ratelimit token-bucket", K_OURS,
				   bpf_program__fd(lim[k]->progs.xdp_ratelimit), counts[s], k);
			add_target(t, &nt, NAME_B, K_REF,
				   bpf_program__fd(refs[k]->progs.ref_lookup), counts[s], k);
			add_target(t, &nt, NAME_C, K_REF, bpf_program__fd(refs[k]->progs.ref_gcra),
				   counts[s], k);
		}
	}
	link_targets(t, nt);
	fprintf(stderr, "rl-bench: warming %d maps with %u sources\n", 3 * INSTANCES, top);
	for (int i = 0; i < nt; i++) {
		/* The targets of the largest count: one per program instance. */
		if (t[i].sources != counts[4] || t[i].kind == K_DRIVER)
			continue;
		err = warm(m, drv, t[i].prog_fd, top, (__u64)top + top / 16);
		if (err)
			goto out;
	}
	fprintf(stderr, "rl-bench: scale: %d programs x %d rounds\n", nt, m->rounds);
	for (int k = 0; k < INSTANCES; k++) {
		bench_counters(lim[k], &c);
		c0.new_sources += c.new_sources;
	}
	err = measure_all(m, drv, t, nt, "scale");
	if (err)
		goto out;
	for (int k = 0; k < INSTANCES; k++) {
		bench_counters(lim[k], &c);
		c1.new_sources += c.new_sources;
	}
	/* A warm map: every lookup of the measurement hit. */
	note(m, "scale: sources inserted into rl_state while measuring: %llu (0: all hits)",
	     (unsigned long long)(c1.new_sources - c0.new_sources));
	dat = bench_out(m->out, "scale.dat", "w");
	if (!dat) {
		err = -errno;
		goto out;
	}
	fprintf(dat, "# sources\tours_net_ns\tb_net_ns\tc_net_ns\tours_x_c\tdriver_ns\t"
		     "ours_inst_lo\tours_inst_hi\tc_inst_lo\tc_inst_hi\n");
	for (int s = 0; s < 5; s++) {
		int io = find_target(t, nt, "xdp-ratelimit token-bucket", counts[s]);
		int ib = find_target(t, nt, NAME_B, counts[s]);
		int ic = find_target(t, nt, NAME_C, counts[s]);
		int id = find_target(t, nt, "driver", counts[s]);
		struct stat3 o = summarize(m, t, nt, io), b = summarize(m, t, nt, ib),
			     cc = summarize(m, t, nt, ic), d = summarize(m, t, nt, id);

		fprintf(dat, "%u\t%.2f\t%.2f\t%.2f\t%.3f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n",
			counts[s], o.net, b.net, cc.net, o.ratio, d.med, o.inst_lo, o.inst_hi,
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

/* Entries in an LRU hash, by batch lookups. */
static long count_entries(int fd, __u32 key_size, __u32 value_size)
{
	__u32 chunk = 65536, n;
	void *keys = malloc((size_t)chunk * key_size), *vals = malloc((size_t)chunk * value_size);
	__u64 in = 0, out = 0;
	bool first = true;
	long total = 0;
	int err;

	if (!keys || !vals) {
		total = -ENOMEM;
		goto out;
	}
	for (;;) {
		n = chunk;
		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		first = false;
		if (err && errno != ENOENT) {
			total = -errno;
			break;
		}
		total += n;
		if (err)
			break;
		in = out;
	}
out:
	free(keys);
	free(vals);
	return total;
}

static int phase_memory(struct micro *m)
{
	__u32 sizes[2] = { M1, M8 };
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
	fprintf(md, "| max sources (rl_state max_entries) | sources tracked after filling | "
		    "map memlock (fdinfo) | bytes per tracked source | goal <= 100 B |\n"
		    "|---|---|---|---|---|\n");
	for (int s = 0; s < 2 && !err; s++) {
		__u32 n = m->quick && s ? 2 * M1 : sizes[s];
		struct xdp_ratelimit *lim;
		struct rl_config cfg;
		__u64 memlock;
		long have;
		int fd;

		err = matrix_config(&cfg, "token-bucket", false, false);
		if (err)
			break;
		lim = bench_limiter(&cfg, n);
		if (!lim) {
			err = -EINVAL;
			break;
		}
		fd = bpf_map__fd(lim->maps.rl_state6);
		fprintf(stderr, "rl-bench: filling rl_state6 with %u sources\n", n);
		err = warm(m, drv, bpf_program__fd(lim->progs.xdp_ratelimit), n, n);
		have = count_entries(fd, sizeof(struct rl_state_key), sizeof(__u64));
		memlock = bench_fdinfo(fd, "memlock");
		if (!err && have > 0)
			fprintf(md, "| %u | %ld | %llu | %.1f | %s |\n", n, have,
				(unsigned long long)memlock, (double)memlock / have,
				(double)memlock / have <= 100 ? "ok" : "**over**");
		else if (!err)
			err = have < 0 ? (int)have : -ENOENT;
		xdp_ratelimit__destroy(lim);
	}
	fclose(md);
	unload_driver(m, drv);
	return err;
}

int bench_micro(int argc, char **argv)
{
	struct micro m = { .rounds = 9, .reps = 1000000, .rt = true };
	const char *only = NULL;
	char path[512];
	int err = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc)
			m.out = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			m.rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			m.reps = (__u32)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--quick"))
			m.quick = true;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "rl-bench micro: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!m.out || m.rounds < 1 || m.rounds > MAX_ROUNDS || !m.reps) {
		fprintf(stderr, "rl-bench micro: needs --out DIR, 1-%d rounds, reps > 0\n",
			MAX_ROUNDS);
		return 2;
	}
	mkdir(m.out, 0755);
	snprintf(path, sizeof(path), "%s/notes.md", m.out);
	unlink(path);
	bench_frame_ipv6(&m.frame, 64);
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
	/* --only PHASE: one phase alone, for working on it. */
#define PHASE(name)                                          \
	do {                                                 \
		if (!err && (!only || !strcmp(only, #name))) \
			err = phase_##name(&m);              \
	} while (0)
	PHASE(matrix);
	PHASE(steps);
	PHASE(scale);
	PHASE(memory);
#undef PHASE
	fclose(m.raw);
	return err ? 1 : 0;
}
