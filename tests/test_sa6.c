// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The set-associative IPv6 table (include/rl_sa6.h, bpf/table6_sa.h,
 * user/lib/sa6.c), on its smallest size (16 sets of four ways), with
 * sources chosen to share a set and, in pairs, the 16-bit tag: everything
 * that tells them apart is the key kept whole.
 *
 *	sa6_ways		from userspace: insert, find, replace, evict (the
 *				way least ahead, then a straggler of an older
 *				generation first), delete, the versions a reader sees
 *	sa6_tag_collision	in the kernel: two sources of one set and one tag
 *				each keep their own bucket; link-local sources are
 *				keyed whole, an IPv4-mapped one is the IPv4 host
 *	sa6_exact_two_cpus	four sources of one set, two pairs of them sharing a
 *				tag, on two CPUs at once with the test clock: every
 *				source's state and the passes equal the sequential
 *				model's after every round
 *	sa6_keyed		eight sources aimed at one set with the hash
 *				computed without the table's secret: one set of
 *				an unkeyed table, several of a keyed one
 *	sa6_eviction_prefers_seen  one-packet sources aimed at a steady
 *				source's set evict each other, never it
 *	sa6_hot			a /64 over its limit (main program) and a
 *				link-local source over its (slow path) are noted
 *				in rl_hot under their keys in rl_sets6, and top's
 *				lookup finds them there; one under its limit is not
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "frames.h"
#include "harness.h"
#include "maps.h"
#include "rl_hot.h"
#include "sa.h"
#include "sa6.h"
#include "test.h"
#include "trace.h"

/* --max-sources6 of the tests' tables: 2^4 sets, the smallest. */
#define SA6_TEST_SOURCES 32
#define SA6_TEST_SETS	 (1U << RL_SA6_BITS_MIN)
#define THREADS		 2

static struct rl_key key_of(const char *addr)
{
	struct rl_key k = {};

	inet_pton(AF_INET6, addr, k.addr);
	return k;
}

/* The hash's secret in these tests (rl_config's sa_key: attach draws one at random). */
static const __u64 test_key = 0x9c5b2f1d74e3a086ULL;

/* @cfg hashing rl_sets6 under test_key, as hash_of() does: true. */
static bool keyed(struct rl_config *cfg)
{
	cfg->sa_key = test_key;
	return true;
}

static __u64 hash_of(const struct rl_key *k, __u32 gen)
{
	return rl_sa6_hash((__u64)k->addr[1] << 32 | k->addr[0],
			   (__u64)k->addr[3] << 32 | k->addr[2], gen, test_key);
}

/*
 * Sources 2001:db8::N (/128) of generation @gen that a table of
 * SA6_TEST_SETS sets puts in one set: *n of them in @out (at most @max),
 * the first @pairs pairs of which share their tag (out[0] and out[1], out[2]
 * and out[3]...). The set is the first that has them. False if none has.
 */
static bool pick_sources(__u32 gen, int pairs, int max, struct rl_key *out, int *n)
{
	enum { CANDIDATES = 1 << 14 };
	static __u64 h[CANDIDATES];
	char a[64];

	for (__u32 i = 0; i < CANDIDATES; i++) {
		struct rl_key k;

		snprintf(a, sizeof(a), "2001:db8::%x:%x", i >> 16, i & 0xffff);
		k = key_of(a);
		h[i] = hash_of(&k, gen);
	}
	for (__u32 set = 0; set < SA6_TEST_SETS; set++) {
		int got = 0, np = 0;
		bool used[CANDIDATES] = {};

		/* Pairs of one tag first, then others of the set. */
		for (__u32 i = 0; i < CANDIDATES && np < pairs; i++) {
			if ((h[i] & (SA6_TEST_SETS - 1)) != set || used[i])
				continue;
			for (__u32 j = i + 1; j < CANDIDATES; j++) {
				if ((h[j] & (SA6_TEST_SETS - 1)) != set || used[j] ||
				    h[j] >> 48 != h[i] >> 48)
					continue;
				used[i] = used[j] = true;
				snprintf(a, sizeof(a), "2001:db8::%x:%x", i >> 16, i & 0xffff);
				out[got++] = key_of(a);
				snprintf(a, sizeof(a), "2001:db8::%x:%x", j >> 16, j & 0xffff);
				out[got++] = key_of(a);
				np++;
				break;
			}
		}
		if (np < pairs)
			continue;
		for (__u32 i = 0; i < CANDIDATES && got < max; i++) {
			if ((h[i] & (SA6_TEST_SETS - 1)) != set || used[i])
				continue;
			snprintf(a, sizeof(a), "2001:db8::%x:%x", i >> 16, i & 0xffff);
			out[got++] = key_of(a);
		}
		*n = got;
		return true;
	}
	return false;
}

/* A source 2001:db8:1::N that generation @gen puts in set @set. */
static struct rl_key in_set(__u32 gen, __u32 set)
{
	struct rl_key k = {};
	char a[64];

	for (__u32 i = 0; i < 1U << 16; i++) {
		snprintf(a, sizeof(a), "2001:db8:1::%x", i);
		k = key_of(a);
		if ((hash_of(&k, gen) & (SA6_TEST_SETS - 1)) == set)
			break;
	}
	return k;
}

static void addr_text(const struct rl_key *k, char *buf, size_t len)
{
	inet_ntop(AF_INET6, k->addr, buf, (socklen_t)len);
}

TEST_FLAGS(sa6_ways, RL_TEST_ROOT)
{
	struct rl_key k[6], back;
	struct rl_sa6_map m = {};
	__u64 st, w, w2, ref = 1000000;
	__u32 idx = 0;
	int fd, n = 0, found;

	if (!ASSERT_TRUE(pick_sources(1, 1, 6, k, &n) && n == 6, "six sources of one set"))
		return;
	fd = rl_sa6_create(RL_SA6_BITS_MIN);
	if (!ASSERT_TRUE(fd >= 0, "create rl_sets6") ||
	    !ASSERT_OK(rl_sa6_map(fd, test_key, &m), "map it"))
		goto out;
	ASSERT_EQ(rl_sa6_bits_of(fd), RL_SA6_BITS_MIN, "its size read back");
	ASSERT_EQ(rl_sa6_bits_for(SA6_TEST_SOURCES), RL_SA6_BITS_MIN, "2 ways per source");
	ASSERT_EQ(rl_sa6_bits_for(65536), 15, "65536 sources: 2^15 sets of 4 ways");
	/* Four fill the set; k[0] and k[1] share the tag, each its own state. */
	for (int i = 0; i < 4; i++)
		ASSERT_OK(rl_sa6_insert(&m, &k[i], 1, ref + 10 * (i + 1), BPF_NOEXIST, ref),
			  "insert");
	for (int i = 0; i < 4; i++)
		if (ASSERT_OK(rl_sa6_find(&m, &k[i], 1, &st), "find"))
			ASSERT_EQ(st, ref + 10 * (i + 1), "each source its own state");
	ASSERT_EQ(rl_sa6_find(&m, &k[0], 2, &st), -ENOENT, "not under another generation");
	ASSERT_EQ(rl_sa6_insert(&m, &k[1], 1, 5, BPF_NOEXIST, ref), -EEXIST,
		  "NOEXIST: it is there");
	ASSERT_OK(rl_sa6_insert(&m, &k[1], 1, ref + 5, BPF_ANY, ref), "replace its state");
	ASSERT_OK(rl_sa6_find(&m, &k[1], 1, &st), "find the replaced");
	ASSERT_EQ(st, ref + 5, "replaced");
	ASSERT_OK(rl_sa6_find(&m, &k[0], 1, &st), "its tag twin");
	ASSERT_EQ(st, ref + 10, "untouched");
	/* A fifth: the way least ahead of the reference goes (k[1], 5 ahead). */
	ASSERT_OK(rl_sa6_insert(&m, &k[4], 1, ref + 50, BPF_NOEXIST, ref), "insert a fifth");
	ASSERT_EQ(rl_sa6_find(&m, &k[1], 1, &st), -ENOENT, "the least ahead evicted");
	for (int i = 0; i < 5; i++) {
		if (i == 1)
			continue;
		ASSERT_OK(rl_sa6_find(&m, &k[i], 1, &st), "the others stay");
	}
	/* Every way read back whole: key, generation, state. */
	found = 0;
	for (__u32 s = 0; s < SA6_TEST_SETS; s++)
		for (int i = 0; i < RL_SA6_WAYS; i++)
			if (!rl_sa6_read(&m, s, i, &w, &back, &st)) {
				found++;
				idx = s;
				ASSERT_EQ((w >> RL_SA6_GEN_SHIFT) & 3, 1, "generation 1");
				ASSERT_TRUE(!memcmp(&back, &k[0], sizeof(back)) ||
						    !memcmp(&back, &k[2], sizeof(back)) ||
						    !memcmp(&back, &k[3], sizeof(back)) ||
						    !memcmp(&back, &k[4], sizeof(back)),
					    "a key read back is one inserted");
			}
	ASSERT_EQ(found, 4, "four ways used, all in one set");
	/* A straggler of generation 3 (not 1, not 0) goes before the least ahead. */
	ASSERT_OK(rl_sa6_delete(&m, &k[4], 1), "delete");
	ASSERT_EQ(rl_sa6_delete(&m, &k[4], 1), -ENOENT, "deleted once");
	k[5] = in_set(3, (__u32)hash_of(&k[0], 1) & (SA6_TEST_SETS - 1));
	ASSERT_OK(rl_sa6_insert(&m, &k[5], 3, ref + 1000, BPF_NOEXIST, ref), "a straggler");
	ASSERT_OK(rl_sa6_insert(&m, &k[1], 1, ref + 1, BPF_NOEXIST, ref), "back in");
	ASSERT_EQ(rl_sa6_find(&m, &k[5], 3, &st), -ENOENT, "the straggler went first");
	ASSERT_OK(rl_sa6_find(&m, &k[1], 1, &st), "k[1] in");
	/* A change of a way moves its version on: a reader's word no longer matches. */
	for (int i = 0; i < RL_SA6_WAYS; i++) {
		if (rl_sa6_read(&m, idx, i, &w, &back, &st) || memcmp(&back, &k[0], sizeof(back)))
			continue;
		ASSERT_OK(rl_sa6_insert(&m, &k[0], 1, st + 1, BPF_ANY, ref), "a write");
		ASSERT_OK(rl_sa6_read(&m, idx, i, &w2, &back, &st), "read again");
		ASSERT_EQ(w2 & RL_SA6_VER_MASK, (w + 1) & RL_SA6_VER_MASK, "the version moved on");
		ASSERT_EQ(w2 & RL_SA6_ID_MASK, w & RL_SA6_ID_MASK, "the same identity");
	}
out:
	rl_sa6_unmap(&m);
	if (fd >= 0)
		close(fd);
}

static unsigned int frame6(struct frame *f, const char *src)
{
	fr_init(f);
	fr_eth(f, ETH_P_IPV6);
	fr_ipv6(f, src, 0);
	fr_pad(f, 64);
	return f->bad ? 0 : f->len;
}

/* @n packets from @src at @now: how many passed. */
static int run_n(struct rl_prog *p, __u64 now, const char *src, int n)
{
	struct frame f;
	int passed = 0;

	if (!frame6(&f, src) && !ASSERT_TRUE(false, "a frame"))
		return -1;
	for (int i = 0; i < n; i++)
		passed += rl_prog_run(p, now, f.data, f.len, 1) == XDP_PASS;
	return passed;
}

TEST_FLAGS(sa6_tag_collision, RL_TEST_ROOT)
{
	static const char *const opts[] = { "--rate",	 "1/h", "--burst", "3",
					    "--prefix6", "128", NULL };
	static const char *const opts64[] = { "--rate", "1/h", "--burst", "3", NULL };
	char a[2][64];
	struct rl_key k[2];
	struct rl_counters c;
	struct rl_config cfg;
	struct rl_prog p;
	__u64 now = 1000000000ULL;
	int n = 0;

	if (!rl_build_config(&cfg, opts, NULL) || !keyed(&cfg) ||
	    !ASSERT_TRUE(pick_sources(cfg.gen, 1, 2, k, &n), "two sources of one set and tag") ||
	    !rl_prog_load(&p, true, SA6_TEST_SOURCES))
		return;
	if (!ASSERT_EQ(rl_sa6_bits_of(p.maps.sets6), RL_SA6_BITS_MIN, "the smallest table") ||
	    !rl_prog_configure(&p, 0, &cfg))
		goto out;
	addr_text(&k[0], a[0], sizeof(a[0]));
	addr_text(&k[1], a[1], sizeof(a[1]));
	ASSERT_EQ(hash_of(&k[0], cfg.gen) & 0xffff00000000000fULL,
		  hash_of(&k[1], cfg.gen) & 0xffff00000000000fULL, "one set, one tag");
	ASSERT_EQ(run_n(&p, now, a[0], 4), 3, "the first: its burst of 3, then dropped");
	ASSERT_EQ(run_n(&p, now, a[1], 4), 3, "its tag twin: a burst of its own");
	ASSERT_EQ(run_n(&p, now, a[0], 1), 0, "the first still empty");
	/* Link-local sources are keyed whole, whatever --prefix6 (here 64). */
	if (!rl_build_config(&cfg, opts64, NULL) || !rl_prog_configure(&p, 0, &cfg))
		goto out;
	now += 1000000000ULL;
	ASSERT_EQ(run_n(&p, now, "fe80::1", 4), 3, "fe80::1: 3 of 4");
	ASSERT_EQ(run_n(&p, now, "fe80::2", 4), 3, "fe80::2 in the same /64: its own 3");
	ASSERT_EQ(run_n(&p, now, "2001:db8:1:2::1", 4), 3, "a /64: 3 of 4");
	ASSERT_EQ(run_n(&p, now, "2001:db8:1:2::2", 1), 0, "the same /64: one bucket");
	ASSERT_EQ(run_n(&p, now, "::ffff:198.18.0.9", 4), 3, "IPv4-mapped: 3 of 4");
	if (rl_prog_counters(&p, &c)) {
		ASSERT_EQ(c.ipv6, 26, "IPv6 frames, IPv4-mapped ones too");
		ASSERT_EQ(c.cas_exhausted, 0, "no round ran out");
	}
out:
	rl_prog_close(&p);
}

struct worker {
	struct rl_prog *prog;
	pthread_barrier_t *start, *done;
	struct frame *f;
	int nf, rounds, cpu, reverse, err;
	__u32 repeat;
};

static void *hammer(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (int r = 0; r < w->rounds; r++) {
		pthread_barrier_wait(w->start);
		for (int j = 0; j < w->nf; j++) {
			struct frame *f = &w->f[w->reverse ? w->nf - 1 - j : j];
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->data,
				    .data_size_in = f->len, .repeat = w->repeat);

			if (bpf_prog_test_run_opts(w->prog->prog_fd, &o))
				w->err = 1;
		}
		pthread_barrier_wait(w->done);
	}
	return NULL;
}

/*
 * Four sources of one set (two pairs of one tag), @opts (with --prefix6
 * 128), on two CPUs, each running every source's frame @repeat times per
 * round (in opposite orders), the test clock moved on by @step_ns between
 * rounds: after every round each source's state equals the model's (the
 * same packets one by one: with one clock per round their order does not
 * matter), and so do the passes.
 */
static void exact_case(const char *const *opts, __u64 step_ns)
{
	const int rounds = 15, nsrc = 4;
	const __u32 repeat = 2000;
	pthread_barrier_t start, done;
	struct worker w[THREADS];
	pthread_t tid[THREADS];
	struct frame f[4];
	struct rl_key k[4];
	struct rl_counters c;
	struct rl_config cfg;
	struct rl_policy pol;
	struct rl_opts o;
	struct rl_prog prog;
	struct rl_sim sim;
	char err[RL_ERRLEN], a[64];
	__u64 now = 5000000000ULL;
	__u32 zero = 0;
	int n = 0, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), bad = 0;

	if (!rl_build_config(&cfg, opts, NULL) || !keyed(&cfg) ||
	    !ASSERT_TRUE(pick_sources(cfg.gen, 2, nsrc, k, &n) && n == nsrc,
			 "four sources of one set, two pairs of one tag") ||
	    !rl_prog_load(&prog, true, SA6_TEST_SOURCES))
		return;
	rl_config_policy(&cfg, &pol, &o);
	if (!rl_prog_configure(&prog, 0, &cfg) ||
	    !ASSERT_OK(rl_sim_init(&sim, &pol, err, sizeof(err)), err))
		goto out_prog;
	for (int i = 0; i < nsrc; i++) {
		addr_text(&k[i], a, sizeof(a));
		if (!ASSERT_TRUE(frame6(&f[i], a) > 0, "a frame"))
			goto out_sim;
	}
	pthread_barrier_init(&start, NULL, THREADS + 1);
	pthread_barrier_init(&done, NULL, THREADS + 1);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .prog = &prog,
					.start = &start,
					.done = &done,
					.f = f,
					.nf = nsrc,
					.repeat = repeat,
					.rounds = rounds,
					.reverse = i & 1,
					.cpu = i % (ncpu > 0 ? ncpu : 1) };
		pthread_create(&tid[i], NULL, hammer, &w[i]);
	}
	for (int r = 0; r < rounds; r++, now += step_ns) {
		bpf_map_update_elem(prog.clock_fd, &zero, &now, BPF_ANY);
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		for (int i = 0; i < nsrc; i++) {
			struct rl_state_key sk = { .src = k[i], .gen = cfg.gen };
			struct rl_src *src = NULL;
			__u64 st = 0;

			for (__u32 j = 0; j < THREADS * repeat; j++) {
				struct rl_key kk = k[i];

				rl_sim_packet(&sim, &kk, now, f[i].len, &src);
			}
			if (rl_state_lookup(&prog.maps, &sk, &st) || !src || st != src->state)
				bad++;
		}
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		ASSERT_EQ(w[i].err, 0, "BPF_PROG_TEST_RUN");
	}
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&done);
	ASSERT_EQ(bad, 0, "every source's state the model's after every round");
	if (rl_prog_counters(&prog, &c)) {
		ASSERT_EQ(c.passed, sim.passed, opts[1]);
		ASSERT_EQ(c.rx_packets, (__u64)THREADS * repeat * rounds * nsrc,
			  "every packet seen");
		ASSERT_EQ(c.new_sources, (__u64)nsrc, "each source inserted once");
		printf("    %-14s passed %llu of %llu (model: %llu), cas retries %llu, exhausted %llu\n",
		       opts[1], (unsigned long long)c.passed, (unsigned long long)c.rx_packets,
		       (unsigned long long)sim.passed, (unsigned long long)c.cas_retries,
		       (unsigned long long)c.cas_exhausted);
	}
out_sim:
	rl_sim_free(&sim);
out_prog:
	rl_prog_close(&prog);
}

TEST_FLAGS(sa6_exact_two_cpus, RL_TEST_ROOT)
{
	/* Many passes per round: the two CPUs race on most of them. */
	exact_case((const char *const[]){ "--algo", "token-bucket", "--rate", "100mpps", "--burst",
					  "1500", "--prefix6", "128", NULL },
		   20000);
	/* Byte windows, over their limit in most rounds. */
	exact_case((const char *const[]){ "--algo", "sliding-window", "--rate", "1mbyte",
					  "--window", "100ms", "--prefix6", "128", NULL },
		   30000000);
}

/* rl_state_lookup_many()'s callback: how many of the keys it found. */
static int count_found(const struct rl_state_key *k, __u64 st, __u64 now, void *ctx)
{
	(void)k;
	(void)st;
	(void)now;
	(*(int *)ctx)++;
	return 0;
}

/*
 * State under spoofing, as sa_eviction_prefers_seen for rl_sets4: a /128
 * source seen again and again (one packet every 20 ms, far under its rate:
 * its state lies behind the clock, the least ahead of its set), its set
 * filled by one-packet sources aimed at it (the test knows the key). They
 * evict each other and never it; by the rank of least ahead alone it went
 * first each time.
 */
TEST_FLAGS(sa6_eviction_prefers_seen, RL_TEST_ROOT)
{
	static const char *const opts[] = { "--rate",	 "1000", "--burst", "10",
					    "--prefix6", "128",	 NULL };
	enum { ROUNDS = 60, PER_ROUND = 6, SOURCES = 1 + ROUNDS * PER_ROUND };
	static struct rl_key k[SOURCES];
	unsigned long lost = 0, nflood = 0;
	struct rl_sa6_map m = {};
	struct rl_counters c;
	struct rl_config cfg;
	struct rl_prog p;
	char a[64];
	int n = 0;

	if (!rl_build_config(&cfg, opts, NULL) || !keyed(&cfg) ||
	    !ASSERT_TRUE(pick_sources(cfg.gen, 0, SOURCES, k, &n) && n == SOURCES,
			 "sources of one set") ||
	    !rl_prog_load(&p, true, SA6_TEST_SOURCES))
		return;
	if (!rl_prog_configure(&p, 0, &cfg) ||
	    !ASSERT_OK(rl_sa6_map(p.maps.sets6, cfg.sa_key, &m), "map rl_sets6"))
		goto out;
	for (int round = 0, next = 1; round < ROUNDS + 2; round++) {
		__u64 t = 1000000000ULL + (__u64)round * 20000000ULL, st;

		/* Still there after the round before's flood? */
		lost += round > 0 && rl_sa6_find(&m, &k[0], cfg.gen, &st) != 0;
		addr_text(&k[0], a, sizeof(a));
		if (!ASSERT_EQ(run_n(&p, t, a, 1), 1, "the steady source passes"))
			goto out;
		/* From the third round on (it has been seen again), new sources of its set. */
		for (int i = 0; round >= 2 && i < PER_ROUND; i++, next++, nflood++) {
			addr_text(&k[next], a, sizeof(a));
			if (run_n(&p, t + 1000 + (__u64)i * 1000, a, 1) != 1)
				goto out;
		}
	}
	if (!ASSERT_TRUE(rl_prog_counters(&p, &c), "counters"))
		goto out;
	printf("    %lu one-packet sources into one set of %d ways; evictions %llu, of sources "
	       "seen again %llu; the steady source found evicted %lu times\n",
	       nflood, RL_SA6_WAYS, (unsigned long long)c.evicted,
	       (unsigned long long)c.evicted_seen, lost);
	ASSERT_TRUE(c.evicted >= nflood - RL_SA6_WAYS, "the flood evicts one way per source");
	ASSERT_EQ(c.evicted_seen, 0, "never a source seen again");
	ASSERT_EQ(lost, 0, "the steady source keeps its state");
out:
	rl_sa6_unmap(&m);
	rl_prog_close(&p);
}

/* Is @k (a key as rl_sets6 keeps it) in its entry of rl_hot under @gen? */
static bool noted(const struct rl_hot *h, const struct rl_key *k, __u32 gen)
{
	const struct rl_hot_ent *e =
		&h->e[rl_hot_idx(k->addr[0], k->addr[1], k->addr[2], k->addr[3], 0)];

	return !memcmp(&e->src, k, sizeof(*k)) && !e->rule && e->gen == (__u16)gen;
}

TEST_FLAGS(sa6_hot, RL_TEST_ROOT)
{
	static const char *const opts[] = { "--rate", "1/h", "--burst", "3", NULL };
	struct rl_key net = key_of("2001:db8:5:6::"), ll = key_of("fe80::7:1"),
		      calm = key_of("2001:db8:9::");
	struct rl_hot *h = calloc(1, sizeof(*h));
	struct rl_state_key keys[2];
	struct rl_config cfg;
	struct rl_prog p;
	__u64 now = 1000000000ULL, looked = 0;
	int found = 0;

	if (!ASSERT_TRUE(h, "memory") || !rl_build_config(&cfg, opts, NULL) ||
	    !rl_prog_load(&p, true, 4096)) {
		free(h);
		return;
	}
	if (!rl_prog_configure(&p, 0, &cfg))
		goto out;
	ASSERT_EQ(run_n(&p, now, "2001:db8:5:6::1", 4), 3, "the /64: its burst, then dropped");
	ASSERT_EQ(run_n(&p, now, "fe80::7:1", 5), 3, "the link-local source: the same");
	ASSERT_EQ(run_n(&p, now, "2001:db8:9::1", 2), 2, "one under its limit");
	if (!ASSERT_OK(rl_hot_read(&p.maps, h), "read rl_hot"))
		goto out;
	ASSERT_TRUE(noted(h, &net, cfg.gen), "the /64 noted, masked");
	ASSERT_TRUE(noted(h, &ll, cfg.gen), "the link-local source noted, whole");
	ASSERT_TRUE(!noted(h, &calm, cfg.gen), "not the one under its limit");
	keys[0] = (struct rl_state_key){ .src = net, .gen = cfg.gen };
	keys[1] = (struct rl_state_key){ .src = ll, .gen = cfg.gen };
	ASSERT_OK(rl_state_lookup_many(&p.maps, keys, 2, &looked, count_found, &found),
		  "top's lookup of the noted sources");
	ASSERT_EQ(found, 2, "both found in rl_sets6");
out:
	free(h);
	rl_prog_close(&p);
}

/*
 * An attacker who knows the code but not the key (drawn at attach) aims
 * /128 sources at one set: under key 0 (an unkeyed table) eight of them
 * share a set, under the table's key they spread.
 */
TEST(sa6_keyed)
{
	struct rl_key k[8];
	__u64 sets = 0;
	char a[64];
	int n = 0;

	for (__u32 i = 0; i < (1U << 16) && n < 8; i++) {
		__u64 h;

		snprintf(a, sizeof(a), "2001:db8:77::%x", i);
		k[n] = key_of(a);
		h = rl_sa6_hash((__u64)k[n].addr[1] << 32 | k[n].addr[0],
				(__u64)k[n].addr[3] << 32 | k[n].addr[2], 1, 0);
		if ((h & (SA6_TEST_SETS - 1)) == 5)
			n++;
	}
	if (!ASSERT_EQ(n, 8, "eight sources of set 5 without the key"))
		return;
	for (int i = 0; i < n; i++)
		sets |= 1ULL << (hash_of(&k[i], 1) & (SA6_TEST_SETS - 1));
	printf("    under the key: %d sets of %u\n", __builtin_popcountll(sets), SA6_TEST_SETS);
	ASSERT_TRUE(__builtin_popcountll(sets) > 2, "spread over several sets under the key");
}
