// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench micro: per-packet cost with BPF_PROG_TEST_RUN.
 *
 * Every program is run the same way: test_run runs bench_driver (bpf/bench_ref.bpf.c)
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
 * a rotating order, and the ratios to reference (c) are taken within a
 * round, then their median: a slow drift of the machine affects both sides.
 *
 * Frames are IPv6 from 2001:2::/48 and the limiter keys /128: 8M distinct
 * sources do not fit in IPv4's 198.18.0.0/15, and the map key is the same
 * 16 bytes (+ generation) for both families.
 *
 * Phases, each freeing what the one before loaded:
 *	1. the matrix: 4 algorithms x {packets, bytes} x {1, 1M sources} and
 *	   the references (a), (b), (c), rl_state sized 1M + 1/8;
 *	2. scale: token-bucket, (b) and (c) with 1, 1k, 64k, 1M, 8M sources;
 *	3. memory: rl_state sized exactly 1M and 8M, filled, its memlock read.
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
#include "xdp_ratelimit.skel.h"

#define M1 (1U << 20)
#define M8 (8U << 20)
#define MAX_ROUNDS 64
#define FILL_CHUNK M1

struct target {
	char name[64];
	int kind;		/* K_DRIVER, K_REF, K_OURS */
	int prog_fd;
	__u32 sources;
	double wall[MAX_ROUNDS], kern[MAX_ROUNDS];
	int driver;		/* index of the driver measured with the same sources */
	int refc;		/* index of (c) with the same sources, or -1 */
};

enum { K_DRIVER, K_REF, K_OURS };

struct micro {
	const char *out;
	int rounds;
	__u32 reps;
	bool quick, rt;
	struct bench_frame frame;
	FILE *raw;
	struct bpf_link *link;	/* the driver, attached while it is measured */
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

static int set_target(struct bench_ref *drv, int prog_fd, __u32 sources)
{
	__u32 zero = 0;

	drv->bss->bench_mask = sources - 1;
	if (bpf_map_update_elem(bpf_map__fd(drv->maps.bench_jmp), &zero, &prog_fd, BPF_ANY))
		return -errno;
	return 0;
}

static int run_driver(struct micro *m, struct bench_ref *drv, __u32 reps, double *wall,
		      double *kern)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = m->frame.data,
		    .data_size_in = m->frame.len, .repeat = reps);
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
	int err = set_target(drv, prog_fd, sources);

	while (!err && total) {
		__u32 n = total > FILL_CHUNK ? FILL_CHUNK : (__u32)total;

		err = run_driver(m, drv, n, NULL, NULL);
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

			err = set_target(drv, x->prog_fd, x->sources);
			if (!err)
				err = run_driver(m, drv, reps, &x->wall[r], &x->kern[r]);
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
	double min, med, net, ratio, ratio_min;
};

/* Summary of target @i: min and median, net of the driver, and its ratio to (c). */
static struct stat3 summarize(const struct micro *m, const struct target *t, int i)
{
	const struct target *x = &t[i], *d = &t[x->driver];
	double v[MAX_ROUNDS], dv[MAX_ROUNDS], rv[MAX_ROUNDS];
	struct stat3 s = {};
	int n = m->rounds, nr = 0;

	memcpy(v, x->wall, sizeof(double) * n);
	memcpy(dv, d->wall, sizeof(double) * n);
	s.min = bench_min(v, n);
	s.med = bench_median(v, n);
	s.net = s.med - bench_median(dv, n);
	s.ratio = s.ratio_min = 0;
	if (x->refc >= 0) {
		const struct target *c = &t[x->refc];
		double cv[MAX_ROUNDS];

		for (int r = 0; r < n; r++) {
			double den = c->wall[r] - d->wall[r];

			if (den > 0)
				rv[nr++] = (x->wall[r] - d->wall[r]) / den;
		}
		s.ratio = bench_median(rv, nr);
		memcpy(cv, c->wall, sizeof(double) * n);
		s.ratio_min = (s.min - bench_min(d->wall, n)) /
			      (bench_min(cv, n) - bench_min(d->wall, n));
	}
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
 * path, like reference (c). Windows of 1 ms keep the sliding window's
 * per-window limit under its 24-bit counters in byte mode.
 */
static int matrix_config(struct rl_config *cfg, const char *algo, bool bytes)
{
	char *argv[] = { "--algo", (char *)algo, "--rate", bytes ? "10gbyte" : "100mpps",
			 "--prefix6", "128", "--window", "1ms" };
	bool window = !strcmp(algo, "fixed-window") || !strcmp(algo, "sliding-window");

	return bench_config(cfg, window ? 8 : 6, argv);
}

static struct bench_ref *load_driver(struct micro *m, __u32 ref_entries)
{
	struct bench_ref *drv = bench_ref__open();
	int err;

	if (!drv) {
		fprintf(stderr, "rl-bench: couldn't open bench_ref: %s\n", strerror(errno));
		return NULL;
	}
	/* (c) passes every packet too: 100 Mpps, a 10 ms tolerance. */
	drv->rodata->ref_interval_ns = 10;
	drv->rodata->ref_tau_ns = 10000000;
	err = bpf_map__set_max_entries(drv->maps.ref_lookup_map, ref_entries);
	if (!err)
		err = bpf_map__set_max_entries(drv->maps.ref_gcra_map, ref_entries);
	if (!err)
		err = bench_ref__load(drv);
	if (err) {
		fprintf(stderr, "rl-bench: couldn't load bench_ref (%u sources): %s\n", ref_entries,
			strerror(-err));
		bench_ref__destroy(drv);
		return NULL;
	}
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

static void add_target(struct target *t, int *nt, const char *name, int kind, int fd,
		       __u32 sources)
{
	struct target *x = &t[(*nt)++];

	memset(x, 0, sizeof(*x));
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->kind = kind;
	x->prog_fd = fd;
	x->sources = sources;
	x->refc = -1;
}

/* Link each target to the driver and (c) measured with the same number of sources. */
static void link_targets(struct target *t, int nt)
{
	for (int i = 0; i < nt; i++) {
		for (int j = 0; j < nt; j++) {
			if (t[j].sources != t[i].sources)
				continue;
			if (t[j].kind == K_DRIVER)
				t[i].driver = j;
			if (!strcmp(t[j].name, "(c) lookup + clock + GCRA CAS"))
				t[i].refc = j;
		}
	}
}

static int phase_matrix(struct micro *m)
{
	static struct target t[64];
	struct xdp_ratelimit *lim[8] = {};
	__u32 entries = M1 + M1 / 8, counts[2] = { 1, M1 };
	struct bench_ref *drv;
	struct rl_config cfg;
	struct rl_counters c;
	__u64 before = 0, after = 0;
	char path[512];
	int nt = 0, err = -EINVAL;
	FILE *md;

	drv = load_driver(m, entries);
	if (!drv)
		return -EINVAL;
	for (int a = 0; a < 8; a++) {
		if (matrix_config(&cfg, algos[a / 2], a % 2))
			goto out;
		lim[a] = bench_limiter(&cfg, entries);
		if (!lim[a])
			goto out;
	}
	for (int s = 0; s < 2; s++) {
		__u32 n = counts[s];
		char name[64];

		add_target(t, &nt, "driver alone (tail call to an empty program)", K_DRIVER,
			   bpf_program__fd(drv->progs.bench_nop), n);
		add_target(t, &nt, "(a) parse + drop", K_REF, bpf_program__fd(drv->progs.ref_parse),
			   n);
		add_target(t, &nt, "(b) parse + LRU lookup/insert + atomic add", K_REF,
			   bpf_program__fd(drv->progs.ref_lookup), n);
		add_target(t, &nt, "(c) lookup + clock + GCRA CAS", K_REF,
			   bpf_program__fd(drv->progs.ref_gcra), n);
		for (int a = 0; a < 8; a++) {
			snprintf(name, sizeof(name), "xdp-ratelimit %s, %s", algos[a / 2],
				 a % 2 ? "bytes" : "packets");
			add_target(t, &nt, name, K_OURS,
				   bpf_program__fd(lim[a]->progs.xdp_ratelimit), n);
		}
	}
	link_targets(t, nt);
	/* Map warm: every source of the 1M already in every map. */
	fprintf(stderr, "rl-bench: warming 10 maps with %u sources\n", M1);
	for (int i = 0; i < nt; i++) {
		if (t[i].sources != M1 || t[i].kind == K_DRIVER)
			continue;
		err = warm(m, drv, t[i].prog_fd, M1, M1 + M1 / 16);
		if (err)
			goto out;
	}
	fprintf(stderr, "rl-bench: matrix: %d programs x %d rounds x %u reps\n", nt, m->rounds,
		m->reps);
	for (int a = 0; a < 8; a++) {
		bench_counters(lim[a], &c);
		before += c.new_sources;
	}
	err = measure_all(m, drv, t, nt, "matrix");
	if (err)
		goto out;
	for (int a = 0; a < 8; a++) {
		bench_counters(lim[a], &c);
		after += c.new_sources;
	}
	/* A warm map: every lookup of the measurement hit. */
	note(m, "matrix: sources inserted into rl_state while measuring: %llu (0: all hits)",
	     (unsigned long long)(after - before));

	snprintf(path, sizeof(path), "%s/micro.md", m->out);
	md = fopen(path, "w");
	if (!md) {
		err = -errno;
		goto out;
	}
	fprintf(md, "| program | 1 source: min / median ns | net ns | x (c) | "
		    "1M sources: min / median ns | net ns | x (c) |\n"
		    "|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nt / 2; i++) {
		struct stat3 a = summarize(m, t, i), b = summarize(m, t, i + nt / 2);
		bool drv_row = t[i].kind == K_DRIVER;
		char ra[48] = "", rb[48] = "";

		if (!drv_row) {
			snprintf(ra, sizeof(ra), "%.2f%s (mins: %.2f)", a.ratio,
				 goal(&t[i], a.ratio), a.ratio_min);
			snprintf(rb, sizeof(rb), "%.2f%s (mins: %.2f)", b.ratio,
				 goal(&t[i], b.ratio), b.ratio_min);
		}
		fprintf(md, "| %s | %.1f / %.1f | %s%.1f | %s | %.1f / %.1f | %s%.1f | %s |\n",
			t[i].name, a.min, a.med, drv_row ? "(subtracted) " : "",
			drv_row ? a.med : a.net, ra, b.min, b.med, drv_row ? "(subtracted) " : "",
			drv_row ? b.med : b.net, rb);
	}
	fclose(md);
	err = 0;
out:
	for (int a = 0; a < 8; a++)
		if (lim[a])
			xdp_ratelimit__destroy(lim[a]);
	unload_driver(m, drv);
	return err;
}

static int phase_scale(struct micro *m)
{
	static struct target t[32];
	__u32 counts[5] = { 1, 1024, 65536, M1, M8 }, entries = M8 + M1, top = M8;
	struct rl_counters c0 = {}, c1 = {};
	struct xdp_ratelimit *lim = NULL;
	struct bench_ref *drv;
	struct rl_config cfg;
	char path[512];
	int nt = 0, err = -EINVAL;
	FILE *dat;

	if (m->quick) {
		counts[4] = 2 * M1;
		entries = 2 * M1 + M1 / 4;
		top = 2 * M1;
	}
	drv = load_driver(m, entries);
	if (!drv)
		return -EINVAL;
	if (matrix_config(&cfg, "token-bucket", false))
		goto out;
	lim = bench_limiter(&cfg, entries);
	if (!lim)
		goto out;
	for (int s = 0; s < 5; s++) {
		add_target(t, &nt, "driver", K_DRIVER, bpf_program__fd(drv->progs.bench_nop),
			   counts[s]);
		add_target(t, &nt, "xdp-ratelimit token-bucket", K_OURS,
			   bpf_program__fd(lim->progs.xdp_ratelimit), counts[s]);
		add_target(t, &nt, "(b) parse + LRU lookup/insert + atomic add", K_REF,
			   bpf_program__fd(drv->progs.ref_lookup), counts[s]);
		add_target(t, &nt, "(c) lookup + clock + GCRA CAS", K_REF,
			   bpf_program__fd(drv->progs.ref_gcra), counts[s]);
	}
	link_targets(t, nt);
	fprintf(stderr, "rl-bench: warming 3 maps with %u sources\n", top);
	for (int i = 1; i < 4; i++) {
		err = warm(m, drv, t[i].prog_fd, top, (__u64)top + top / 16);
		if (err)
			goto out;
	}
	fprintf(stderr, "rl-bench: scale: %d programs x %d rounds\n", nt, m->rounds);
	bench_counters(lim, &c0);
	err = measure_all(m, drv, t, nt, "scale");
	if (err)
		goto out;
	bench_counters(lim, &c1);
	/* A warm map: every lookup of the measurement hit. */
	note(m, "scale: sources inserted into rl_state while measuring: %llu (0: all hits)",
	     (unsigned long long)(c1.new_sources - c0.new_sources));
	snprintf(path, sizeof(path), "%s/scale.dat", m->out);
	dat = fopen(path, "w");
	if (!dat) {
		err = -errno;
		goto out;
	}
	fprintf(dat, "# sources\tours_net_ns\tb_net_ns\tc_net_ns\tours_x_c\tdriver_ns\n");
	for (int s = 0; s < 5; s++) {
		struct stat3 o = summarize(m, t, 4 * s + 1), b = summarize(m, t, 4 * s + 2),
			     c = summarize(m, t, 4 * s + 3), d = summarize(m, t, 4 * s);

		fprintf(dat, "%u\t%.2f\t%.2f\t%.2f\t%.3f\t%.2f\n", counts[s], o.net, b.net, c.net,
			o.ratio, d.med);
	}
	fclose(dat);
	err = 0;
out:
	if (lim)
		xdp_ratelimit__destroy(lim);
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
	struct bench_ref *drv = load_driver(m, 1);
	char path[512];
	int err = 0;
	FILE *md;

	if (!drv)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/memory.md", m->out);
	md = fopen(path, "w");
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

		err = matrix_config(&cfg, "token-bucket", false);
		if (err)
			break;
		lim = bench_limiter(&cfg, n);
		if (!lim) {
			err = -EINVAL;
			break;
		}
		fd = bpf_map__fd(lim->maps.rl_state);
		fprintf(stderr, "rl-bench: filling rl_state with %u sources\n", n);
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
	char path[512];
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc)
			m.out = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			m.rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			m.reps = (__u32)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--quick"))
			m.quick = true;
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
	snprintf(path, sizeof(path), "%s/micro-raw.tsv", m.out);
	m.raw = fopen(path, "w");
	if (!m.raw) {
		fprintf(stderr, "rl-bench: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(m.raw, "# phase\tprogram\tsources\tround\twall_ns_per_run\tkernel_duration_ns\n");
	/* Measure on the second CPU; the first takes most of the machine's other work. */
	bench_pin_cpu(1);
	if (bench_rt(true))
		m.rt = false;
	else
		bench_rt(false);
	fprintf(stderr, "rl-bench: SCHED_FIFO while measuring: %s\n", m.rt ? "yes" : "no");
	err = phase_matrix(&m);
	if (!err)
		err = phase_scale(&m);
	if (!err)
		err = phase_memory(&m);
	fclose(m.raw);
	return err ? 1 : 0;
}
