// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench setassoc: the set-associative IPv4 table study (issue #11).
 *
 *	rl-bench setassoc --out DIR [--rounds N] [--reps N] [--quick]
 *			  [--only speed|exact|flood]
 *
 * speed: bench_sa.bpf.c's two programs, sa_lru (L) and sa_set (S), and
 *	reference (c') (bench_ref.bpf.c's ref_gcra_lean), through bench_ref's
 *	driver as micro.c measures, at 64k, 256k and 1M IPv4 sources. Every
 *	table is filled with the 1M sources in address order first; while
 *	measuring, the driver visits them in a scattered order (bench_mul), so
 *	that neither the LRU hash's elements (allocated in fill order) nor the
 *	sets are walked in memory order. S is measured three times: sized like
 *	L in entries (2^17 sets, 1M slots), at 4M slots, and at L's memory.
 *	Every program runs as SA_INST instances, each with its own maps, as in
 *	micro.c; ratios are taken within a round (medians of the instances, net
 *	of the driver) and their median, minimum and maximum over rounds kept.
 *	Sources above 198.19.255.255 leave the benchmarking range: they exist
 *	only as bytes in test_run's input frames, never on an interface.
 * exact: two threads pinned to the two CPUs run test_run on the same sources,
 *	with a clock that advances between rounds: the passes of L and S must
 *	equal the exact single-threaded model (rl_step() one packet at a time);
 *	then 12 sources in one 8-way set, so that evictions race with updates:
 *	each source's passes must equal, exactly, the packets held by its
 *	copies' states, evicted ones included, and no set may ever hold a source
 *	twice.
 * flood: a spoofed flood of new sources through a table of 8192 entries (L)
 *	or slots (S), beside a steady source at half its rate and a heavy one at
 *	ten times: how often each is evicted, and the heavy one's passes against
 *	the exact count without eviction.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "config.h"
#include "rl_algo.h"
#include "bpf/bench_sa.h"
#include "bench_ref.skel.h"
#include "bench_sa.skel.h"

#define M1	   (1U << 20)
#define MAX_ROUNDS 64
#define SA_INST	   3
#define NCOUNTS	   3
/* A multiplier for bench_mul: odd, so a permutation of every power-of-two range. */
#define SCATTER 0x9e3779b1U
/* First source of the speed phase and of the flood: 198.18.0.0. */
#define BASE4 0xc6120000U

enum { T_DRV, T_CL, T_L, T_S17, T_S19, T_SMEM, T__COUNT };

static const char *const tnames[T__COUNT] = {
	"driver",
	"(c') ref_gcra_lean",
	"L: LRU hash",
	"S: 2^17 sets (1M slots, 8 MiB)",
	"S: 2^19 sets (4M slots, 32 MiB)",
	"S: L's memory",
};

struct sa_study {
	const char *out;
	int rounds;
	__u32 reps;
	bool quick;
	FILE *raw, *md;
};

/* The frame of IPv4 source @addr (host order). */
static void frame_from(struct bench_frame *f, __u32 addr)
{
	bench_frame_ipv4(f, 64);
	*(__be32 *)(f->data + f->src_off) = htonl(addr);
}

static int run_prog(int fd, const struct bench_frame *f, __u32 reps, __u32 *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = f->len,
		    .repeat = reps);

	if (bpf_prog_test_run_opts(fd, &opts))
		return -errno;
	if (retval)
		*retval = opts.retval;
	return 0;
}

/* GCRA, packets, at @rate with @burst: the policy of every phase. */
static int sa_policy(struct rl_config *cfg, const char *rate, const char *burst)
{
	const char *args[] = { "--algo", "gcra", "--rate", rate, "--burst", burst, NULL };

	return bench_config(cfg, args);
}

/* load_sa()'s @how: the test clock and accounting; every source in set 0 (with TEST). */
#define SA_LOAD_TEST	1
#define SA_LOAD_ONE_SET 2

/*
 * bench_sa loaded with @cfg's policy, 2^@bits sets and @lru entries, @how
 * SA_LOAD_*. The policy must fit the slot's state (see bench_sa.bpf.c): tau +
 * a packet within a quarter of its range.
 */
static struct bench_sa *load_sa(const struct rl_config *cfg, __u32 bits, __u32 lru, int how)
{
	const struct rl_params *p = &cfg->params;
	struct bench_sa *s;
	int err;

	if (p->tau + p->unit_cost >= 1ULL << (SA_STATE_BASE + bits - 2)) {
		fprintf(stderr, "rl-bench: setassoc: the policy does not fit %u state bits\n",
			SA_STATE_BASE + bits);
		return NULL;
	}
	s = bench_sa__open();
	if (!s) {
		fprintf(stderr, "rl-bench: couldn't open bench_sa: %s\n", strerror(errno));
		return NULL;
	}
	s->rodata->sa_algo = p->algo;
	s->rodata->sa_bytes = p->bytes;
	s->rodata->sa_vt_mult = p->vt_mult;
	s->rodata->sa_vt_int = p->vt_int;
	s->rodata->sa_unit_cost = p->unit_cost;
	s->rodata->sa_tau = p->tau;
	s->rodata->sa_ahead_max = p->ahead_max;
	s->rodata->sa_initial_ahead = p->initial_ahead;
	s->rodata->sa_gen = 1;
	s->rodata->sa_mask4 = cfg->mask4;
	s->rodata->sa_set_bits = bits;
	s->rodata->sa_test = !!(how & SA_LOAD_TEST);
	s->rodata->sa_test_one_set = !!(how & SA_LOAD_ONE_SET);
	err = bpf_map__set_max_entries(s->maps.sa_table, 1U << bits);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.sa_lru, lru);
	if (!err)
		err = bench_frags(s->obj);
	if (!err)
		err = bench_sa__load(s);
	if (err) {
		fprintf(stderr,
			"rl-bench: couldn't load bench_sa (2^%u sets, %u LRU entries): %s\n", bits,
			lru, strerror(-err));
		bench_sa__destroy(s);
		return NULL;
	}
	return s;
}

static int sa_counters(struct bench_sa *s, struct sa_counters *sum)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(s->maps.sa_cnt);
	struct sa_counters *v;
	__u32 zero = 0;

	if (ncpu < 1)
		return ncpu;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		free(v);
		return -errno;
	}
	for (int c = 0; c < ncpu; c++) {
		for (int i = 0; i < SA_V__COUNT; i++) {
			sum->packets[i] += v[c].packets[i];
			sum->bytes[i] += v[c].bytes[i];
		}
		sum->inserts += v[c].inserts;
		sum->retries += v[c].retries;
	}
	free(v);
	return 0;
}

/* bench_ref with (c')'s map sized @lean (the driver's object, or one more instance). */
static struct bench_ref *load_ref(__u32 lean)
{
	struct bench_ref *r = bench_ref__open();
	int err = -ENOMEM;

	if (r) {
		r->rodata->ref_interval_ns = 10;
		r->rodata->ref_tau_ns = 10000000;
		err = bpf_map__set_max_entries(r->maps.ref_lookup_map, 16);
		if (!err)
			err = bpf_map__set_max_entries(r->maps.ref_gcra_map, 16);
		if (!err)
			err = bpf_map__set_max_entries(r->maps.ref_gcra_lean_map, lean);
		if (!err)
			err = bench_frags(r->obj);
		if (!err)
			err = bench_ref__load(r);
	}
	if (err) {
		fprintf(stderr, "rl-bench: couldn't load bench_ref: %s\n", strerror(-err));
		bench_ref__destroy(r);
		return NULL;
	}
	return r;
}

/* ---- speed ---- */

struct starget {
	int kind, inst, fd;
	__u32 sources;
	double wall[MAX_ROUNDS];
};

static double med_of(double *v, int n)
{
	return bench_median(v, n);
}

/* Median over instances of kind @k's cost at @sources in round @r, net of the driver. */
static double net_round(const struct starget *t, int nt, int k, __u32 sources, int r)
{
	double v[SA_INST], d = 0;
	int n = 0;

	for (int i = 0; i < nt; i++) {
		if (t[i].sources != sources)
			continue;
		if (t[i].kind == T_DRV)
			d = t[i].wall[r];
		else if (t[i].kind == k)
			v[n++] = t[i].wall[r];
	}
	return med_of(v, n) - d;
}

/* Ratio a/b per round: median, min and max over rounds, into @o[3]. */
static void ratio3(const struct sa_study *m, const struct starget *t, int nt, int a, int b,
		   __u32 sources, double *o)
{
	double v[MAX_ROUNDS];

	for (int r = 0; r < m->rounds; r++)
		v[r] = net_round(t, nt, a, sources, r) / net_round(t, nt, b, sources, r);
	o[1] = bench_min(v, m->rounds);
	o[2] = bench_max(v, m->rounds);
	o[0] = bench_median(v, m->rounds);
}

static int phase_speed(struct sa_study *m)
{
	static struct starget t[NCOUNTS * (1 + SA_INST * (T__COUNT - 1))];
	__u32 counts[NCOUNTS] = { 1U << 16, 1U << 18, M1 }, entries = M1 + M1 / 8, memb = 20;
	struct bench_sa *a[SA_INST] = {}, *b[SA_INST] = {}, *c[SA_INST] = {};
	struct bench_ref *refs[SA_INST] = {};
	struct sa_counters before[T__COUNT] = {}, after[T__COUNT] = {}, x;
	struct bench_frame frame;
	struct bench_ref *drv;
	struct rl_config cfg;
	__u64 lmem = 0, smem[T__COUNT] = {};
	int nt = 0, err = -EINVAL;

	/* Every packet passes and takes the compare-and-swap: 100 Mpps, a 10 s burst. */
	if (sa_policy(&cfg, "100mpps", "1000000000"))
		return -EINVAL;
	bench_frame_ipv4(&frame, 64);
	for (int k = 0; k < SA_INST; k++) {
		refs[k] = load_ref(entries);
		a[k] = load_sa(&cfg, 17, entries, 0);
		b[k] = load_sa(&cfg, 19, 16, 0);
		if (!refs[k] || !a[k] || !b[k])
			goto out;
		if (!k) {
			/* S at L's memory: the most sets whose array fits in L's memlock. */
			lmem = bench_fdinfo(bpf_map__fd(a[0]->maps.sa_lru), "memlock");
			while (memb < 24 && (64ULL << (memb + 1)) <= lmem)
				memb++;
			while (memb > 17 && (64ULL << memb) > lmem)
				memb--;
		}
		c[k] = load_sa(&cfg, memb, 16, 0);
		if (!c[k])
			goto out;
	}
	smem[T_L] = lmem;
	smem[T_CL] = bench_fdinfo(bpf_map__fd(refs[0]->maps.ref_gcra_lean_map), "memlock");
	smem[T_S17] = bench_fdinfo(bpf_map__fd(a[0]->maps.sa_table), "memlock");
	smem[T_S19] = bench_fdinfo(bpf_map__fd(b[0]->maps.sa_table), "memlock");
	smem[T_SMEM] = bench_fdinfo(bpf_map__fd(c[0]->maps.sa_table), "memlock");
	drv = refs[0];
	drv->bss->bench_off = frame.src_off;
	drv->bss->bench_base = BASE4;
	for (int s = 0; s < NCOUNTS; s++) {
		t[nt++] = (struct starget){ .kind = T_DRV,
					    .fd = bpf_program__fd(drv->progs.bench_nop),
					    .sources = counts[s] };
		for (int k = 0; k < SA_INST; k++) {
			int fds[T__COUNT] = { 0,
					      bpf_program__fd(refs[k]->progs.ref_gcra_lean),
					      bpf_program__fd(a[k]->progs.sa_lru_prog),
					      bpf_program__fd(a[k]->progs.sa_set_prog),
					      bpf_program__fd(b[k]->progs.sa_set_prog),
					      bpf_program__fd(c[k]->progs.sa_set_prog) };

			for (int kind = T_CL; kind < T__COUNT; kind++)
				t[nt++] = (struct starget){ .kind = kind,
							    .inst = k,
							    .fd = fds[kind],
							    .sources = counts[s] };
		}
	}
	fprintf(stderr, "rl-bench: setassoc: filling %d tables with %u sources\n",
		SA_INST * (T__COUNT - 1), M1);
	drv->data->bench_mul = 1;
	for (int i = 0; i < nt; i++) {
		__u64 left = M1 + M1 / 16;

		if (t[i].sources != M1 || t[i].kind == T_DRV)
			continue;
		err = bench_set_target(drv, t[i].fd, M1);
		while (!err && left) {
			__u32 n = left > M1 ? M1 : (__u32)left;

			err = bench_run_driver(drv, &frame, n, NULL, NULL);
			left -= n;
		}
		if (err)
			goto out;
	}
	for (int k = 0; k < SA_INST; k++) {
		struct bench_sa *objs[3] = { a[k], b[k], c[k] };
		int kinds[3] = { T_S17, T_S19, T_SMEM };

		for (int j = 0; j < 3; j++) {
			sa_counters(objs[j], &x);
			before[kinds[j]].inserts += x.inserts;
			before[kinds[j]].packets[SA_V_GAVEUP] += x.packets[SA_V_GAVEUP];
		}
	}
	drv->data->bench_mul = SCATTER;
	if (bench_rt(true))
		fprintf(stderr, "rl-bench: setassoc: no SCHED_FIFO\n");
	fprintf(stderr, "rl-bench: setassoc: %d programs x %d rounds x %u reps\n", nt, m->rounds,
		m->reps);
	for (int r = 0; r < m->rounds && !err; r++) {
		for (int j = 0; j < nt && !err; j++) {
			struct starget *y = &t[(j + r * 7) % nt];

			err = bench_set_target(drv, y->fd, y->sources);
			if (!err)
				err = bench_run_driver(drv, &frame, m->reps, &y->wall[r], NULL);
			if (!err)
				fprintf(m->raw, "speed\t%s\t%d\t%u\t%d\t%.3f\n", tnames[y->kind],
					y->inst, y->sources, r, y->wall[r]);
		}
	}
	bench_rt(false);
	if (err) {
		fprintf(stderr, "rl-bench: setassoc: speed: %s\n", strerror(-err));
		goto out;
	}
	for (int k = 0; k < SA_INST; k++) {
		struct bench_sa *objs[3] = { a[k], b[k], c[k] };
		int kinds[3] = { T_S17, T_S19, T_SMEM };

		for (int j = 0; j < 3; j++) {
			sa_counters(objs[j], &x);
			after[kinds[j]].inserts += x.inserts;
			after[kinds[j]].packets[SA_V_GAVEUP] += x.packets[SA_V_GAVEUP];
		}
	}
	fprintf(m->md,
		"### Speed: ns per packet net of the driver (median of rounds and instances), "
		"ratios within a round (median [min-max] over %d rounds)\n\n"
		"Policy: GCRA, packets, 100 Mpps, burst 10^9 (every packet passes through the "
		"compare-and-swap). Tables filled with 1M sources in address order, then "
		"visited in a scattered order. %d instances of each program, %u repetitions per "
		"measurement.\n\n",
		m->rounds, SA_INST, m->reps);
	fprintf(m->md, "| sources | (c') ns | L ns | S17 ns | S19 ns | Smem ns | S17/L | S19/L | "
		       "Smem/L | S17/(c') | S19/(c') | Smem/(c') | L/(c') |\n"
		       "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int s = 0; s < NCOUNTS; s++) {
		double ns[T__COUNT], rr[7][3], v[MAX_ROUNDS];
		int pairs[7][2] = { { T_S17, T_L },  { T_S19, T_L },  { T_SMEM, T_L },
				    { T_S17, T_CL }, { T_S19, T_CL }, { T_SMEM, T_CL },
				    { T_L, T_CL } };

		for (int kind = T_CL; kind < T__COUNT; kind++) {
			for (int r = 0; r < m->rounds; r++)
				v[r] = net_round(t, nt, kind, counts[s], r);
			ns[kind] = bench_median(v, m->rounds);
		}
		fprintf(m->md, "| %uk | %.1f | %.1f | %.1f | %.1f | %.1f |", counts[s] >> 10,
			ns[T_CL], ns[T_L], ns[T_S17], ns[T_S19], ns[T_SMEM]);
		for (int q = 0; q < 7; q++) {
			ratio3(m, t, nt, pairs[q][0], pairs[q][1], counts[s], rr[q]);
			fprintf(m->md, " %.2f [%.2f-%.2f] |", rr[q][0], rr[q][1], rr[q][2]);
			fprintf(m->raw, "ratio\t%s/%s\t%u\t%.4f\t%.4f\t%.4f\n", tnames[pairs[q][0]],
				tnames[pairs[q][1]], counts[s], rr[q][0], rr[q][1], rr[q][2]);
		}
		fprintf(m->md, "\n");
	}
	fprintf(m->md,
		"\nMemory (map memlock from fdinfo): (c') %.1f MiB, L %.1f MiB, S17 %.1f MiB, "
		"S19 %.1f MiB, Smem (2^%u sets) %.1f MiB.\n",
		smem[T_CL] / 1048576.0, smem[T_L] / 1048576.0, smem[T_S17] / 1048576.0,
		smem[T_S19] / 1048576.0, memb, smem[T_SMEM] / 1048576.0);
	fprintf(m->md,
		"Misses (inserts) of S while measuring, all instances: S17 %llu, S19 %llu, "
		"Smem %llu (0: every lookup hit); gave up: %llu.\n\n",
		(unsigned long long)(after[T_S17].inserts - before[T_S17].inserts),
		(unsigned long long)(after[T_S19].inserts - before[T_S19].inserts),
		(unsigned long long)(after[T_SMEM].inserts - before[T_SMEM].inserts),
		(unsigned long long)(after[T_S17].packets[SA_V_GAVEUP] +
				     after[T_S19].packets[SA_V_GAVEUP] +
				     after[T_SMEM].packets[SA_V_GAVEUP] -
				     before[T_S17].packets[SA_V_GAVEUP] -
				     before[T_S19].packets[SA_V_GAVEUP] -
				     before[T_SMEM].packets[SA_V_GAVEUP]));
	err = 0;
out:
	for (int k = 0; k < SA_INST; k++) {
		bench_sa__destroy(a[k]);
		bench_sa__destroy(b[k]);
		bench_sa__destroy(c[k]);
		bench_ref__destroy(refs[k]);
	}
	return err;
}

/* ---- exact ---- */

struct worker {
	int fd, cpu, rounds, nsrc, err;
	const struct bench_frame *frames;
	__u32 repeat;
	pthread_barrier_t *start, *done;
};

/* Both threads send the same sources in the same order: they meet on every one. */
static void *hammer(void *arg)
{
	struct worker *w = arg;

	bench_pin_cpu(w->cpu);
	for (int r = 0; r < w->rounds; r++) {
		pthread_barrier_wait(w->start);
		for (int i = 0; i < w->nsrc; i++)
			if (run_prog(w->fd, &w->frames[i], w->repeat, NULL))
				w->err = 1;
		pthread_barrier_wait(w->done);
	}
	return NULL;
}

/* @n sources of 198.18.0.0/15 all in one set of 2^@bits, with distinct tags mod 64. */
static int same_set(__u32 *addr, int n, __u32 bits)
{
	__u64 used = 0;
	__u32 want = 0;
	int k = 0;

	for (__u32 a = BASE4 + 1; a < BASE4 + (1U << 17) && k < n; a++) {
		__u32 h = sa_hash(a, 1), tag = (h >> bits) % SA_TEST_SOURCES;

		if (!k)
			want = h & ((1U << bits) - 1);
		if ((h & ((1U << bits) - 1)) != want || (used & (1ULL << tag)))
			continue;
		used |= 1ULL << tag;
		addr[k++] = a;
	}
	return k == n ? 0 : -ENOENT;
}

/* The set of source @addr, read from the table. */
static int read_set(struct bench_sa *s, __u32 addr, __u32 bits, struct sa_set *set)
{
	__u32 idx = sa_hash(addr, 1) & ((1U << bits) - 1);

	if (s->rodata->sa_test_one_set)
		idx = 0;
	return bpf_map_lookup_elem(bpf_map__fd(s->maps.sa_table), &idx, set) ? -errno : 0;
}

/* Pending slots and sources held twice in @set. */
static int set_faults(const struct sa_set *set, __u32 bits)
{
	int bad = 0;

	for (int i = 0; i < SA_WAYS; i++) {
		if (set->w[i] & SA_PEND)
			bad++;
		for (int j = 0; j < i; j++)
			if (set->w[i] && set->w[j] && !((set->w[i] ^ set->w[j]) & sa_id_mask(bits)))
				bad++;
	}
	return bad;
}

/*
 * Two threads on CPUs 0 and 1, @rounds rounds; in each, each thread runs
 * @fd on @frames in turn (@repeat packets each), and the test clock then
 * advances by @step ns.
 */
static int two_cpus(struct bench_sa *s, int fd, const struct bench_frame *frames, int nsrc,
		    int rounds, __u32 repeat, __u64 step, __u64 now)
{
	pthread_barrier_t start, done;
	struct worker w[2];
	pthread_t tid[2];
	int err = 0;

	pthread_barrier_init(&start, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){ .fd = fd,
					.cpu = i,
					.rounds = rounds,
					.nsrc = nsrc,
					.frames = frames,
					.repeat = repeat,
					.start = &start,
					.done = &done };
		pthread_create(&tid[i], NULL, hammer, &w[i]);
	}
	for (int r = 0; r < rounds; r++, now += step) {
		s->bss->sa_now = now;
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(tid[i], NULL);
		if (w[i].err)
			err = -EIO;
	}
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&done);
	return err;
}

#define T0 5000000000ULL

/*
 * Decisions: 1 Mpps with a burst of @repeat, so that both CPUs pass packets
 * side by side for the first half of round 1, then 7 ms (7000 packets) more
 * per round. Passes must equal the model's: rl_step() one packet at a time.
 */
static int exact_case(struct sa_study *m, const char *name, bool set, int nsrc, __u32 repeat,
		      int *fails)
{
	const __u32 bits = SA_SET_BITS_MIN, rounds = 3;
	const __u64 step = 7000000;
	struct bench_frame frames[SA_WAYS];
	__u64 expect = 0, now = T0, st, next;
	struct sa_counters cnt;
	struct rl_config cfg;
	struct bench_sa *s;
	__u32 addr[SA_WAYS];
	char burst[32];
	int err;

	snprintf(burst, sizeof(burst), "%u", repeat);
	if (sa_policy(&cfg, "1mpps", burst) || same_set(addr, nsrc, bits))
		return -EINVAL;
	s = load_sa(&cfg, bits, 1024, SA_LOAD_TEST);
	if (!s)
		return -EINVAL;
	for (int i = 0; i < nsrc; i++)
		frame_from(&frames[i], addr[i]);
	err = two_cpus(s, bpf_program__fd(set ? s->progs.sa_set_prog : s->progs.sa_lru_prog),
		       frames, nsrc, rounds, repeat, step, now);
	if (!err)
		err = sa_counters(s, &cnt);
	if (err)
		goto out;
	for (int i = 0; i < nsrc; i++) {
		now = T0;
		st = rl_initial_state(&cfg.params, now);
		for (__u32 r = 0; r < rounds; r++, now += step) {
			for (__u32 n = 0; n < 2 * repeat; n++) {
				if (rl_step(&cfg.params, st, now, 1, &next)) {
					st = next;
					expect++;
				}
			}
		}
	}
	{
		__u64 sent = 2ULL * repeat * rounds * nsrc;
		bool ok = cnt.packets[SA_V_PASS] == expect &&
			  cnt.packets[SA_V_PASS] + cnt.packets[SA_V_DROP] +
					  cnt.packets[SA_V_GAVEUP] ==
				  sent;

		*fails += !ok;
		fprintf(m->md, "| %s | %d | %llu | %llu | %llu | %llu | %llu | %s |\n", name, nsrc,
			(unsigned long long)sent, (unsigned long long)cnt.packets[SA_V_PASS],
			(unsigned long long)expect, (unsigned long long)cnt.retries,
			(unsigned long long)cnt.packets[SA_V_GAVEUP], ok ? "ok" : "**FAIL**");
	}
out:
	bench_sa__destroy(s);
	return err;
}

/*
 * Evictions racing with updates: the driver cycles 16 consecutive sources,
 * forced into one 8-way set, from both CPUs at once; every packet passes and
 * the clock stands still, so a copy's state is initial + (its passes) x cost.
 * Each source's passes must equal what its live copy and its evicted copies
 * hold, and after each round no slot is pending and no source is held twice.
 */
static int evict_race(struct sa_study *m, int *fails)
{
	const __u32 bits = SA_SET_BITS_MIN, rounds = 3, nsrc = 16;
	__u32 repeat = m->quick ? 300000 : 1000000, base = 0, zero = 0;
	__u64 vt, held[SA_TEST_SOURCES] = {}, sum = 0, ev = 0;
	struct bench_ref *drv = NULL;
	struct sa_test_acct acct;
	struct bench_frame frame;
	struct sa_counters cnt;
	struct rl_config cfg;
	struct bench_sa *s = NULL;
	struct sa_set set;
	int err = -EINVAL, bad_set = 0, bad_acct = 0;

	/* A base whose 16 sources have distinct tags mod 64 (the accounting's index). */
	for (__u32 b = BASE4; b < BASE4 + (1U << 17) - nsrc && !base; b += nsrc) {
		__u64 used = 0;
		__u32 i;

		for (i = 0; i < nsrc; i++) {
			__u32 tag = (sa_hash(b + i, 1) >> bits) % SA_TEST_SOURCES;

			if (used & (1ULL << tag))
				break;
			used |= 1ULL << tag;
		}
		if (i == nsrc)
			base = b;
	}
	if (!base || sa_policy(&cfg, "100mpps", "1000000000"))
		return -EINVAL;
	drv = load_ref(16);
	s = load_sa(&cfg, bits, 16, SA_LOAD_TEST | SA_LOAD_ONE_SET);
	if (!s || !drv)
		goto out;
	bench_frame_ipv4(&frame, 64);
	drv->bss->bench_off = frame.src_off;
	drv->bss->bench_base = base;
	drv->data->bench_mul = 1;
	err = bench_set_target(drv, bpf_program__fd(s->progs.sa_set_prog), nsrc);
	for (__u32 r = 0; r < rounds && !err; r++) {
		err = two_cpus(s, bpf_program__fd(drv->progs.bench_driver), &frame, 1, 1, repeat, 0,
			       T0);
		if (!err)
			err = read_set(s, base, bits, &set);
		if (!err)
			bad_set += set_faults(&set, bits);
	}
	if (!err)
		err = sa_counters(s, &cnt);
	if (!err && bpf_map_lookup_elem(bpf_map__fd(s->maps.sa_acct), &zero, &acct))
		err = -errno;
	if (err)
		goto out;
	vt = rl_vt(&cfg.params, T0);
	for (int i = 0; i < SA_WAYS; i++) {
		__u64 w = set.w[i];

		if (w)
			held[(__u32)(w >> (SA_STATE_BASE + bits)) % SA_TEST_SOURCES] +=
				sa_state_get(w, vt, bits) - vt - cfg.params.initial_ahead;
	}
	for (int i = 0; i < SA_TEST_SOURCES; i++) {
		__u64 h = held[i] + acct.evicted_vt[i];

		if (h % cfg.params.unit_cost || h / cfg.params.unit_cost != acct.passed[i])
			bad_acct++;
		sum += acct.passed[i];
		ev += acct.evictions[i];
	}
	if (sum != cnt.packets[SA_V_PASS])
		bad_acct++;
	bad_set += (int)acct.twins;
	*fails += bad_set || bad_acct;
	fprintf(m->md,
		"\nEvictions racing with updates (S, the driver's 16 consecutive sources forced "
		"into one 8-way set, from both CPUs at once, %u rounds of %u packets per CPU, "
		"every packet passing, the clock still): %llu packets, %llu passed, %llu dropped, "
		"%llu gave up, %llu evictions, %llu inserts, %llu retries; sources whose passes "
		"differ from what their copies hold (live + evicted): %d; hits that found their "
		"source in two slots, and pending or duplicate slots after a round: %d: %s\n\n",
		rounds, repeat,
		(unsigned long long)(cnt.packets[SA_V_PASS] + cnt.packets[SA_V_DROP] +
				     cnt.packets[SA_V_GAVEUP]),
		(unsigned long long)cnt.packets[SA_V_PASS],
		(unsigned long long)cnt.packets[SA_V_DROP],
		(unsigned long long)cnt.packets[SA_V_GAVEUP], (unsigned long long)ev,
		(unsigned long long)cnt.inserts, (unsigned long long)cnt.retries, bad_acct, bad_set,
		bad_set || bad_acct ? "**FAIL**" : "ok");
out:
	bench_sa__destroy(s);
	bench_ref__destroy(drv);
	return err;
}

static int phase_exact(struct sa_study *m)
{
	__u32 rep1 = m->quick ? 300000 : 1000000, rep6 = m->quick ? 50000 : 200000;
	int fails = 0, err;

	fprintf(m->md, "### Exactness on two CPUs\n\n"
		       "GCRA 1 Mpps, burst = the packets one thread sends per source in a round, "
		       "test clock advanced 7 ms between 3 rounds: both CPUs pass packets side by "
		       "side for half of round 1, then run out. Two threads pinned to CPUs 0 and 1 "
		       "run test_run on the same sources in the same order. The sources share one "
		       "set of S (2^10 sets).\n\n"
		       "| program | sources | packets | passed | exact model | retries | "
		       "gave up | |\n|---|---|---|---|---|---|---|---|\n");
	err = exact_case(m, "L", false, 1, rep1, &fails);
	if (!err)
		err = exact_case(m, "S", true, 1, rep1, &fails);
	if (!err)
		err = exact_case(m, "L", false, 6, rep6, &fails);
	if (!err)
		err = exact_case(m, "S", true, 6, rep6, &fails);
	if (!err)
		err = evict_race(m, &fails);
	if (!err && fails)
		err = -EPROTO;
	fprintf(stderr, "rl-bench: setassoc: exact: %d failed\n", fails);
	return err;
}

/* ---- flood ---- */

/* Is source @addr in the table of @s (S if @set, else L)? */
static bool present(struct bench_sa *s, bool set, __u32 addr, __u32 bits)
{
	struct sa_lkey k = { .addr = htonl(addr), .gen = 1 };
	struct sa_set st;
	__u64 v, id = sa_id(sa_hash(addr, 1), 1, bits);

	if (!set)
		return !bpf_map_lookup_elem(bpf_map__fd(s->maps.sa_lru), &k, &v);
	if (read_set(s, addr, bits, &st))
		return false;
	for (int i = 0; i < SA_WAYS; i++)
		if ((st.w[i] & sa_id_mask(bits)) == id && !(st.w[i] & SA_PEND))
			return true;
	return false;
}

static int flood_case(struct sa_study *m, struct bench_ref *drv, bool set, __u32 per_tick)
{
	const __u32 bits = 10, ticks = m->quick ? 300 : 1000, steady = 20;
	const __u32 a_addr = 0xc6130001, h_addr = 0xc6130002; /* 198.19.0.1 and .2 */
	__u32 a_pass = 0, a_sent = 0, a_gone = 0, h_pass = 0, h_gone = 0, rv = 0;
	__u64 now = 5000000000ULL, hstate = 0, next, exact = 0;
	struct bench_frame fa, fh, ff;
	struct sa_counters cnt;
	struct rl_config cfg;
	struct bench_sa *s;
	int fd, err = 0;

	/* 100/s, burst 10; A sends 50/s, H 1000/s. */
	if (sa_policy(&cfg, "100pps", "10"))
		return -EINVAL;
	s = load_sa(&cfg, bits, SA_WAYS << bits, SA_LOAD_TEST);
	if (!s)
		return -EINVAL;
	fd = bpf_program__fd(set ? s->progs.sa_set_prog : s->progs.sa_lru_prog);
	frame_from(&fa, a_addr);
	frame_from(&fh, h_addr);
	bench_frame_ipv4(&ff, 64);
	drv->bss->bench_off = ff.src_off;
	drv->data->bench_mul = 1;
	for (__u32 t = 0; t < ticks && !err; t++, now += 1000000) {
		s->bss->sa_now = now;
		if (per_tick) {
			/* New spoofed sources in 198.18.0.0/16, each sending one packet. */
			drv->bss->bench_base = BASE4 + ((t * per_tick) & 0xffff);
			err = bench_set_target(drv, fd, per_tick);
			if (!err)
				err = bench_run_driver(drv, &ff, per_tick, NULL, NULL);
		}
		if (t && !present(s, set, h_addr, bits))
			h_gone++;
		if (!err)
			err = run_prog(fd, &fh, 1, &rv);
		h_pass += rv == XDP_PASS;
		if (!t)
			hstate = rl_initial_state(&cfg.params, now);
		if (rl_step(&cfg.params, hstate, now, 1, &next)) {
			hstate = next;
			exact++;
		}
		if (t % steady)
			continue;
		if (t && !present(s, set, a_addr, bits))
			a_gone++;
		if (!err)
			err = run_prog(fd, &fa, 1, &rv);
		a_sent++;
		a_pass += rv == XDP_PASS;
	}
	if (!err)
		err = sa_counters(s, &cnt);
	if (!err)
		fprintf(m->md, "| %s | %u | %u | %u/%u | %u/%u | %u | %u (exact %llu) | %llu |\n",
			set ? "S" : "L", per_tick, per_tick ? (SA_WAYS << bits) / per_tick : 0,
			a_gone, a_sent - 1, a_pass, a_sent, h_gone, h_pass,
			(unsigned long long)exact, (unsigned long long)cnt.inserts);
	bench_sa__destroy(s);
	return err;
}

static int phase_flood(struct sa_study *m)
{
	__u32 rates[] = { 0, 64, 512, 4096 };
	struct bench_ref *drv = load_ref(16);
	int err = 0;

	if (!drv)
		return -EINVAL;
	fprintf(m->md,
		"### Spoofed flood\n\n"
		"8192 entries (L) or slots (S: 2^10 sets of 8), GCRA 100/s burst 10, test clock in "
		"1 ms ticks for %u ticks. Each tick: N new spoofed sources, one packet each "
		"(198.18.0.0/16, recurring only after 64k); then H (at 1000/s, 10x its rate). Every "
		"20 ticks A (50/s, half its rate). Gone: absent from the table when its next packet "
		"came (evicted since its last one). Turnover: ticks (ms) for the flood to insert as "
		"many sources as the table holds.\n\n"
		"| table | spoofed per ms | turnover ms | A gone | A passed | H gone | H passed | "
		"inserts |\n|---|---|---|---|---|---|---|---|\n",
		m->quick ? 300 : 1000);
	for (int i = 0; i < 4 && !err; i++) {
		err = flood_case(m, drv, false, rates[i]);
		if (!err)
			err = flood_case(m, drv, true, rates[i]);
	}
	fprintf(m->md, "\n");
	bench_ref__destroy(drv);
	return err;
}

int bench_setassoc(int argc, char **argv)
{
	struct sa_study m = { .rounds = 9, .reps = 1000000 };
	const char *only = NULL;
	int err = 0;

	if (bench_parse_args("setassoc", argc, argv, &m.out, &m.rounds, &m.reps, &m.quick, &only))
		return 2;
	if (m.quick) {
		m.rounds = m.rounds > 3 ? 3 : m.rounds;
		m.reps = m.reps > 200000 ? 200000 : m.reps;
	}
	if (!m.out || m.rounds < 1 || m.rounds > MAX_ROUNDS || m.reps < 8192) {
		fprintf(stderr, "rl-bench setassoc: needs --out DIR, 1-%d rounds, reps >= 8192\n",
			MAX_ROUNDS);
		return 2;
	}
	mkdir(m.out, 0755);
	m.raw = bench_out(m.out, "setassoc-raw.tsv", "w");
	if (!m.raw)
		return 1;
	m.md = bench_out(m.out, "setassoc.md", "w");
	if (!m.md) {
		fclose(m.raw);
		return 1;
	}
	fprintf(m.raw, "# speed\tprogram\tinstance\tsources\tround\twall_ns_per_run\n"
		       "# ratio\tpair\tsources\tmedian\tmin\tmax\n");
	/* Measure on the second CPU, as micro.c does; the tests pin their own threads. */
	bench_pin_cpu(1);
	if (!err && (!only || !strcmp(only, "exact")))
		err = phase_exact(&m);
	if (!err && (!only || !strcmp(only, "flood")))
		err = phase_flood(&m);
	bench_pin_cpu(1);
	if (!err && (!only || !strcmp(only, "speed")))
		err = phase_speed(&m);
	fclose(m.raw);
	fclose(m.md);
	return err ? 1 : 0;
}
