// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel side of fleet sync (user/lib/sync_kern.h, include/rl_sync.h):
 * rl_charge() against a plain reference; sync counting in the XDP program
 * under BPF_PROG_TEST_RUN (off: nothing counted; on: drained units equal
 * what passed, exactly, also with two CPUs and drains racing the packets,
 * per source; a slot given to another source before the drain: each
 * source's units stay its own, what could not be counted is counted lost);
 * limit rules' sources counted, named, charged under their rule; the
 * charge program against rl_charge() and the decisions it leads to;
 * counting switched on and off on an attached limiter (netns) keeping the
 * generation and every state; the status map.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "frames.h"
#include "harness.h"
#include "metrics.h"
#include "netns.h"
#include "pins.h"
#include "rl_sa.h"
#include "rl_sync.h"
#include "xdp_attach.h"
#include "sync_kern.h"
#include "test.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC	      1000000000ULL
#define MSEC	      1000000ULL
#define T0	      (1000 * NSEC)
#define MAXSRC	      4096

typedef unsigned __int128 u128;

/* rl_charge() written out plainly, in 128-bit arithmetic: the reference. */
static __u64 ref_charge(const struct rl_params *p, __u64 state, __u64 now, __u64 units)
{
	if (!units)
		return state;
	if (p->algo == RL_ALGO_TOKEN_BUCKET || p->algo == RL_ALGO_GCRA) {
		__u64 vt = rl_vt(p, now), cap = p->ahead_max - RL_SKEW_VT;
		__u64 ahead = state - vt <= p->ahead_max ? state - vt : 0;
		u128 want = (u128)ahead + (u128)units * p->unit_cost;

		if (ahead >= cap)
			return state;
		return vt + (want > cap ? cap : (__u64)want);
	} else {
		__u64 k = now / p->window_ns, bits = p->cnt_bits, max = (1ULL << bits) - 1;
		__u64 id = k & p->id_mask,
		      shift = p->algo == RL_ALGO_FIXED_WINDOW ? bits : 2 * bits;
		__u64 sid = state >> shift, prev = 0, cur = 0;
		u128 sum;

		if (sid == ((k + 1) & p->id_mask)) { /* a later CPU moved it on: that window */
			k++;
			id = sid;
		}
		if (sid == id) {
			cur = state & max;
			prev = p->algo == RL_ALGO_SLIDING_WINDOW ? (state >> bits) & max : 0;
		} else if (p->algo == RL_ALGO_SLIDING_WINDOW && sid == ((k - 1) & p->id_mask)) {
			prev = state & max;
		}
		if (cur >= max)
			return state;
		sum = (u128)cur + units;
		cur = sum > max ? max : (__u64)sum;
		if (p->algo == RL_ALGO_FIXED_WINDOW)
			return id << bits | cur;
		return ((id << bits | prev) << bits) | cur;
	}
}

static const char *const policies[][9] = {
	{ "--rate", "10", "--burst", "20", NULL },
	{ "--algo", "gcra", "--rate", "1000", "--burst", "50", NULL },
	{ "--algo", "fixed-window", "--rate", "100", "--window", "1s", NULL },
	{ "--algo", "sliding-window", "--rate", "100", "--window", "1s", NULL },
	{ "--rate", "3", "--burst", "7", NULL }, /* vt not in ns */
	{ "--rate", "12500000byte", "--burst", "65536", NULL },
	{ "--algo", "sliding-window", "--rate", "100000byte", "--window", "100ms", NULL },
};

TEST(sync_charge_vs_reference)
{
	unsigned long long seed = rl_test_seed();
	unsigned int bad = 0;

	srandom((unsigned int)seed);
	for (size_t i = 0; i < ARRAY_SIZE(policies); i++) {
		struct rl_config c;
		const struct rl_params *p = &c.params;

		if (!rl_build_config(&c, policies[i], NULL))
			return;
		for (int n = 0; n < 20000; n++) {
			__u64 now = T0 + ((__u64)random() << 20 | (__u64)random()) % (100 * NSEC);
			__u64 st = rl_initial_state(p, now - (__u64)random() % (2 * NSEC)), next;
			__u64 units, exp;

			/* Some passes first, so that states are partly used, full or over. */
			for (int j = random() % 40; j > 0; j--)
				rl_step(p, st, now - (__u64)(random() % (int)MSEC), 1 + random() % 3, &st) ?:
					0;
			switch (random() % 4) {
			case 0:
				units = 0;
				break;
			case 1:
				units = 1 + random() % 100;
				break;
			case 2:
				units = (__u64)random() << 33 | (__u64)random();
				break;
			default:
				units = ~0ULL - random() % 3;
			}
			exp = ref_charge(p, st, now, units);
			if (!rl_charge(p, st, now, units, &next))
				next = st;
			if (next != exp && bad++ < 5)
				fprintf(stderr,
					"    policy %zu: state %llx now %llu units %llu: %llx, expected %llx\n",
					i, (unsigned long long)st, (unsigned long long)now,
					(unsigned long long)units, (unsigned long long)next,
					(unsigned long long)exp);
		}
	}
	ASSERT_EQ(bad, 0, "rl_charge() equals the reference");
}

/* Buckets: charging n at now leaves the state n local passes at now would have. */
TEST(sync_charge_equals_local_passes)
{
	static const char *const buckets[][9] = {
		{ "--rate", "10", "--burst", "20", NULL },
		{ "--algo", "gcra", "--rate", "1000", "--burst", "50", NULL },
		{ "--rate", "3", "--burst", "7", NULL },
		{ "--algo", "gcra", "--rate", "7", "--burst", "3", NULL },
	};
	unsigned int checked = 0, bad = 0;

	srandom((unsigned int)rl_test_seed());
	for (size_t i = 0; i < ARRAY_SIZE(buckets); i++) {
		struct rl_config c;
		const struct rl_params *p = &c.params;

		if (!rl_build_config(&c, buckets[i], NULL))
			return;
		for (int r = 0; r < 5000; r++) {
			__u64 now = T0 + (__u64)random() * 7919 % (50 * NSEC);
			__u64 st = rl_initial_state(p, now - (__u64)random() % (3 * NSEC));
			__u64 local = st, charged, next;
			unsigned int n = random() % 60, passed = 0;
			int la, lb;

			for (unsigned int j = 0; j < n && rl_step(p, local, now, 1, &next); j++) {
				local = next;
				passed++;
			}
			if (!rl_charge(p, st, now, passed, &charged))
				charged = st;
			/* Same decision for a next packet, and the same state. */
			la = rl_step(p, local, now, 1, &next);
			lb = rl_step(p, charged, now, 1, &next);
			checked++;
			if ((local != charged && (passed || rl_ahead(p, st, rl_vt(p, now)))) ||
			    la != lb)
				bad++;
		}
	}
	ASSERT_EQ(bad, 0, "charge n == n local passes");
	ASSERT_TRUE(checked > 1000, "cases checked");
}

/* A debt past the bucket saturates where rl_ahead() still reads it as ahead. */
TEST(sync_charge_saturates)
{
	struct rl_config c;
	__u64 st, next = 0, vt;

	if (!rl_build_config(&c, policies[0], NULL))
		return;
	st = rl_initial_state(&c.params, T0);
	ASSERT_TRUE(rl_charge(&c.params, st, T0, ~0ULL, &next), "charged");
	vt = rl_vt(&c.params, T0);
	ASSERT_EQ(rl_ahead(&c.params, next, vt), c.params.ahead_max - RL_SKEW_VT, "capped");
	ASSERT_EQ(rl_charge(&c.params, next, T0, 5, &st), 0, "nothing more to charge");
	/* A charge of 0 changes nothing. */
	ASSERT_EQ(rl_charge(&c.params, next, T0, 0, &st), 0, "zero units");
}

/* --- the XDP program under BPF_PROG_TEST_RUN --- */

static bool start(struct rl_prog *p, const char *const *opts, bool count, struct rl_config *cfg,
		  struct rl_sync_kern **k)
{
	char err[RL_ERRLEN];

	if (!rl_build_config(cfg, opts, NULL))
		return false;
	cfg->sync_count = count;
	if (!rl_prog_load(p, true, MAXSRC))
		return false;
	if (!rl_prog_configure(p, 0, cfg))
		goto fail;
	if (!ASSERT_OK(rl_sync_kern_from_pins(&p->maps, p->clock_fd, k, err, sizeof(err)),
		       "rl_sync_kern_from_pins"))
		goto fail;
	return true;
fail:
	rl_prog_close(p);
	return false;
}

static void frame4(struct frame *f, const char *src, unsigned int len)
{
	fr_init(f);
	fr_eth(f, 0x0800);
	fr_ipv4(f, src, NULL);
	fr_pad(f, len);
}

static void frame6(struct frame *f, const char *src, unsigned int len)
{
	fr_init(f);
	fr_eth(f, 0x86dd);
	fr_ipv6(f, src, 6);
	fr_pad(f, len);
}

/* Passes of @f at @now, @n frames: how many passed. */
static unsigned int run(struct rl_prog *p, __u64 now, const struct frame *f, unsigned int n)
{
	unsigned int passed = 0;

	for (unsigned int i = 0; i < n; i++)
		passed += rl_prog_run(p, now, f->data, f->len, 1) == XDP_PASS;
	return passed;
}

/* The words of rl_sync_slots that are not zero (a counter ever written), or ~0U. */
static unsigned int counted_words(struct rl_prog *p)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	unsigned int nz = 0;
	__u64 *w;

	if (bpf_obj_get_info_by_fd(p->maps.sync_slots, &info, &len))
		return ~0U;
	w = mmap(NULL, info.max_entries * sizeof(*w), PROT_READ, MAP_SHARED, p->maps.sync_slots, 0);
	if (w == MAP_FAILED)
		return ~0U;
	for (__u32 i = 0; i < info.max_entries; i++)
		nz += w[i] != 0;
	munmap(w, info.max_entries * sizeof(*w));
	return nz;
}

static __u64 units_of(const struct rl_sync_src *v, size_t n, const struct rl_state_key *key)
{
	__u64 u = 0;

	for (size_t i = 0; i < n; i++)
		if (!memcmp(&v[i].k, key, sizeof(*key)))
			u += v[i].units;
	return u;
}

static struct rl_state_key key4(const char *a, __u32 gen)
{
	struct rl_state_key k = { .gen = gen };

	k.src.addr[2] = htonl(0xffff);
	inet_pton(AF_INET, a, &k.src.addr[3]);
	return k;
}

static struct rl_state_key key6(const char *a, __u32 gen)
{
	struct rl_state_key k = { .gen = gen };

	inet_pton(AF_INET6, a, k.src.addr);
	return k;
}

TEST_FLAGS(sync_counting_off_counts_nothing, RL_TEST_ROOT)
{
	struct rl_sync_kern *k;
	struct rl_sync_src *v = NULL;
	struct rl_config cfg;
	struct rl_prog p;
	struct frame f;
	struct rl_state_key key6v;
	size_t n = 1;

	if (!start(&p, policies[0], false, &cfg, &k))
		return;
	frame4(&f, "198.18.0.1", 64);
	ASSERT_EQ(run(&p, T0, &f, 30), 20, "burst of 20 passes");
	frame6(&f, "2001:db8::1", 64);
	ASSERT_EQ(run(&p, T0, &f, 30), 20, "IPv6: burst of 20 passes");
	/* No counter got a unit: the counting code is not in the program. */
	ASSERT_EQ(counted_words(&p), 0, "rl_sync_slots all zero");
	ASSERT_TRUE(bpf_map_get_next_key(p.maps.sync6, NULL, &key6v) && errno == ENOENT,
		    "rl_sync6 empty");
	ASSERT_OK(rl_sync_drain(k, &v, &n), "drain");
	ASSERT_EQ(n, 0, "nothing drained");
	free(v);
	/* Zero cost: the verifier removed the counting code, and with it the maps' loads. */
	ASSERT_EQ(rl_prog_refers_to(p.prog_fd, p.maps.sync_slots), 0,
		  "off: no load of rl_sync_slots left");
	ASSERT_EQ(rl_prog_refers_to(p.prog_fd, p.maps.sync_dirty), 0,
		  "off: no load of rl_sync_dirty left");
	ASSERT_EQ(rl_prog_refers_to(p.prog_fd, p.maps.sync6), 0, "off: no load of rl_sync6 left");
	cfg.sync_count = 1;
	if (rl_prog_configure(&p, 0, &cfg)) {
		ASSERT_EQ(rl_prog_refers_to(p.prog_fd, p.maps.sync_slots), 1,
			  "on: rl_sync_slots loaded");
		ASSERT_EQ(rl_prog_refers_to(p.prog_fd, p.maps.sync_dirty), 1,
			  "on: rl_sync_dirty loaded");
		ASSERT_EQ(rl_prog_refers_to(p.prog_fd, p.maps.sync6), 1, "on: rl_sync6 loaded");
	}
	rl_sync_kern_close(k, false);
	rl_prog_close(&p);
}

TEST_FLAGS(sync_counting_exact, RL_TEST_ROOT)
{
	static const struct {
		const char *what;
		int pol; /* index in policies[] */
		unsigned int len; /* frame length */
		bool bytes;
	} cases[] = {
		{ "token-bucket packets", 0, 64, false },
		{ "gcra packets", 1, 100, false },
		{ "fixed-window packets", 2, 64, false },
		{ "token-bucket bytes", 5, 700, true },
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct rl_sync_src *v = NULL;
		struct rl_state_key ka, kb, k6;
		unsigned int pa, pb, p6, pa2;
		struct rl_sync_kern *k;
		struct rl_config cfg;
		struct rl_prog p;
		struct frame fa, fb, f6;
		__u64 cost;
		size_t n;

		if (!start(&p, policies[cases[c].pol], true, &cfg, &k))
			return;
		frame4(&fa, "198.18.0.1", cases[c].len);
		frame4(&fb, "198.18.7.9", cases[c].len);
		frame6(&f6, "2001:db8:1:2:3::9", cases[c].len);
		cost = cases[c].bytes ? fa.len : 1;
		pa = run(&p, T0, &fa, 150);
		pb = run(&p, T0 + MSEC, &fb, 3);
		p6 = run(&p, T0 + 2 * MSEC, &f6, 150);
		ka = key4("198.18.0.1", cfg.gen);
		kb = key4("198.18.7.9", cfg.gen);
		k6 = key6("2001:db8:1:2::", cfg.gen);
		if (!ASSERT_OK(rl_sync_drain(k, &v, &n), "drain"))
			goto next;
		ASSERT_EQ(n, 3, cases[c].what);
		ASSERT_EQ(units_of(v, n, &ka), pa * cost, "source a: its passes");
		ASSERT_EQ(units_of(v, n, &kb), pb * cost, "source b: its passes");
		ASSERT_EQ(units_of(v, n, &k6), p6 * (cases[c].bytes ? f6.len : 1),
			  "IPv6 /64: its passes");
		ASSERT_TRUE(pa > 0 && pa < 150, "a was limited");
		free(v);
		v = NULL;
		/* The next drain has only what passed since. */
		pa2 = run(&p, T0 + 20 * NSEC, &fa, 5);
		if (!ASSERT_OK(rl_sync_drain(k, &v, &n), "second drain"))
			goto next;
		ASSERT_EQ(n, pa2 ? 1 : 0, "only a since");
		ASSERT_EQ(units_of(v, n, &ka), pa2 * cost, "a since the first drain");
		free(v);
		v = NULL;
		ASSERT_OK(rl_sync_drain(k, &v, &n), "third drain");
		ASSERT_EQ(n, 0, "nothing since");
next:
		free(v);
		rl_sync_kern_close(k, false);
		rl_prog_close(&p);
	}
}

/* The same counting on rl_wide4 (a word per way) and on rl_state4 (rl_sync4, under its key). */
TEST_FLAGS(sync_counting_other_tables, RL_TEST_ROOT)
{
	static const struct {
		const char *what;
		int table4;
	} tables[] = { { "rl_wide4", RL_TABLE4_WIDE }, { "rl_state4", RL_TABLE4_LRU } };

	for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
		struct rl_sync_src *v = NULL;
		struct rl_state_key ka, kb;
		struct rl_sync_kern *k;
		struct rl_config cfg;
		struct rl_prog p;
		struct frame fa, fb;
		unsigned int pa, pb;
		char err[RL_ERRLEN];
		size_t n;

		if (!rl_build_config(&cfg, policies[1], NULL))
			return;
		cfg.sync_count = 1;
		if (!rl_prog_load(&p, true, MAXSRC))
			return;
		if (!rl_prog_configure_table4(&p, 0, &cfg, tables[t].table4) ||
		    !ASSERT_OK(rl_sync_kern_from_pins(&p.maps, p.clock_fd, &k, err, sizeof(err)),
			       err)) {
			rl_prog_close(&p);
			return;
		}
		frame4(&fa, "198.18.0.1", 64);
		frame4(&fb, "198.18.9.9", 64);
		pa = run(&p, T0, &fa, 80);
		pb = run(&p, T0, &fb, 7);
		ka = key4("198.18.0.1", cfg.gen);
		kb = key4("198.18.9.9", cfg.gen);
		if (ASSERT_OK(rl_sync_drain(k, &v, &n), "drain")) {
			ASSERT_EQ(units_of(v, n, &ka), pa, tables[t].what);
			ASSERT_EQ(units_of(v, n, &kb), pb, tables[t].what);
			ASSERT_EQ(n, 2, "two sources");
		}
		free(v);
		if (ASSERT_OK(rl_sync_drain(k, &v, &n), "second drain"))
			ASSERT_EQ(n, 0, "nothing since");
		free(v);
		rl_sync_kern_close(k, false);
		rl_prog_close(&p);
	}
}

/* Two CPUs send, a third thread drains meanwhile: the drains add up to what passed. */
struct sender {
	struct rl_prog *p;
	const struct frame *f;
	int cpu, err;
	__u32 rounds;
};

static void *send_loop(void *arg)
{
	struct sender *s = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (__u32 i = 0; i < s->rounds && !s->err; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = s->f->data, .data_size_in = s->f->len,
			    .repeat = 200);
		s->err = bpf_prog_test_run_opts(s->p->prog_fd, &o);
	}
	return NULL;
}

TEST_FLAGS(sync_counting_exact_two_cpus, RL_TEST_ROOT)
{
	/* A real clock and a rate that lets some pass, some not, on both CPUs. */
	static const char *const pol[] = { "--rate", "200000", "--burst", "1000", NULL };
	struct sender s[2] = {};
	struct rl_counters cnt;
	struct rl_sync_kern *k;
	struct rl_config cfg;
	unsigned long long drained = 0, drains = 0;
	struct rl_prog p;
	pthread_t th[2];
	struct frame f;
	char err[RL_ERRLEN];

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		rl_test_skip("one CPU");
		return;
	}
	if (!rl_build_config(&cfg, pol, NULL))
		return;
	cfg.sync_count = 1;
	if (!rl_prog_load(&p, false, MAXSRC))
		return;
	if (!rl_prog_configure(&p, 0, &cfg) ||
	    !ASSERT_OK(rl_sync_kern_from_pins(&p.maps, -1, &k, err, sizeof(err)), "open")) {
		rl_prog_close(&p);
		return;
	}
	frame4(&f, "198.18.0.1", 64);
	for (int i = 0; i < 2; i++) {
		s[i] = (struct sender){ .p = &p, .f = &f, .cpu = i, .rounds = 1500 };
		pthread_create(&th[i], NULL, send_loop, &s[i]);
	}
	for (int i = 0; i < 2; i++) {
		while (pthread_tryjoin_np(th[i], NULL) == EBUSY) {
			struct rl_sync_src *v;
			size_t n;

			if (!rl_sync_drain(k, &v, &n)) {
				for (size_t j = 0; j < n; j++)
					drained += v[j].units;
				drains++;
				free(v);
			}
			/* A drain no longer waits: leave the two senders their CPUs. */
			usleep(2000);
		}
	}
	{
		struct rl_sync_src *v;
		size_t n;

		if (ASSERT_OK(rl_sync_drain(k, &v, &n), "last drain")) {
			for (size_t j = 0; j < n; j++)
				drained += v[j].units;
			free(v);
		}
	}
	ASSERT_OK(s[0].err | s[1].err, "test runs");
	if (rl_prog_counters(&p, &cnt)) {
		printf("    %llu passed, %llu dropped, %llu drains\n",
		       (unsigned long long)cnt.passed, (unsigned long long)cnt.dropped, drains);
		ASSERT_EQ(drained, cnt.passed, "drained == passed, exactly");
		ASSERT_TRUE(cnt.dropped > 0 && cnt.passed > 0, "some passed, some dropped");
		ASSERT_TRUE(drains > 1, "drains raced the packets");
		ASSERT_EQ(cnt.sync_lost, 0, "none lost");
	}
	rl_sync_kern_close(k, false);
	rl_prog_close(&p);
}

TEST_FLAGS(sync_drain_after_set, RL_TEST_ROOT)
{
	static const char *const second[] = { "--rate", "10", "--burst", "5", NULL };
	struct rl_sync_src *v = NULL;
	struct rl_config cfg, next;
	struct rl_state_key ka;
	struct rl_sync_kern *k;
	struct rl_prog p;
	struct frame f;
	unsigned int passed;
	size_t n;

	if (!start(&p, policies[0], true, &cfg, &k))
		return;
	frame4(&f, "198.18.0.1", 64);
	ASSERT_EQ(run(&p, T0, &f, 3), 3, "three pass");
	if (!rl_build_config(&next, second, &cfg))
		goto out;
	ASSERT_EQ(next.sync_count, 1, "set carries counting over");
	if (!rl_prog_configure(&p, 1, &next))
		goto out;
	passed = run(&p, T0 + MSEC, &f, 10);
	if (!ASSERT_OK(rl_sync_drain(k, &v, &n), "drain"))
		goto out;
	ka = key4("198.18.0.1", cfg.gen);
	ASSERT_EQ(units_of(v, n, &ka), 3, "generation 1: before set");
	ka.gen = next.gen;
	ASSERT_EQ(units_of(v, n, &ka), passed, "generation 2: after set");
	ASSERT_TRUE(passed > 0, "passes after set");
out:
	free(v);
	rl_sync_kern_close(k, false);
	rl_prog_close(&p);
}

/* Each algorithm: a source with room left is charged and drops exactly as rl_charge() says. */
TEST_FLAGS(sync_charge_in_kernel, RL_TEST_ROOT)
{
	static const struct {
		int pol;
		unsigned int first, charge; /* local passes, then remote units */
		unsigned int left; /* passes left after the charge */
	} cases[] = {
		{ 0, 5, 10, 5 }, /* token bucket 20: 5 + 10 used, 5 left */
		{ 1, 5, 40, 5 }, /* gcra 50: 5 + 40 queued, 5 more */
		{ 2, 10, 85, 5 }, /* fixed window 100 */
		{ 3, 10, 85, 5 }, /* sliding window 100, first window */
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct rl_state_key ka, kz;
		struct rl_sync_src in[2];
		__u64 before, after, exp;
		struct rl_sync_kern *k;
		struct rl_config cfg;
		struct rl_prog p;
		struct frame f;
		size_t charged;
		unsigned int left;
		char what[64];
		__u64 now = T0 + 10 * MSEC;

		snprintf(what, sizeof(what), "policy %zu", c);
		if (!start(&p, policies[cases[c].pol], false, &cfg, &k))
			return;
		if (cfg.params.algo >= RL_ALGO_FIXED_WINDOW)
			now = T0; /* at the start of a window */
		frame4(&f, "198.18.0.1", 64);
		ASSERT_EQ(run(&p, now, &f, cases[c].first), cases[c].first, what);
		ka = key4("198.18.0.1", cfg.gen);
		kz = key4("198.18.99.99", cfg.gen); /* never seen here */
		if (!ASSERT_OK(rl_state_lookup(&p.maps, &ka, &before), "state"))
			goto next;
		in[0] = (struct rl_sync_src){ .k = ka, .units = cases[c].charge };
		in[1] = (struct rl_sync_src){ .k = kz, .units = 1000 };
		/* The clock the charge program reads. */
		if (!ASSERT_OK(bpf_map_update_elem(p.clock_fd, &(__u32){ 0 }, &now, BPF_ANY),
			       "clock"))
			goto next;
		if (!ASSERT_OK(rl_sync_charge(k, in, 2, &charged), "charge"))
			goto next;
		ASSERT_EQ(charged, 1, "one charged, the unknown source skipped");
		ASSERT_TRUE(rl_state_lookup(&p.maps, &kz, &after) == -ENOENT,
			    "no state made for the unknown source");
		ASSERT_OK(rl_state_lookup(&p.maps, &ka, &after), "state after");
		exp = ref_charge(&cfg.params, before, now, cases[c].charge);
		ASSERT_EQ(after, exp, "state as the reference charges it");
		left = run(&p, now, &f, 100);
		ASSERT_EQ(left, cases[c].left, what);
		/* A generation the charge was not built for is skipped. */
		in[0].k.gen = cfg.gen + 1;
		ASSERT_OK(rl_sync_charge(k, in, 1, &charged), "charge, other generation");
		ASSERT_EQ(charged, 0, "other generation skipped");
next:
		rl_sync_kern_close(k, false);
		rl_prog_close(&p);
	}
}

/*
 * Per source, from two CPUs at once, while a third thread drains: every
 * source's drained units are exactly its packets (all pass), IPv4 in the
 * slots' counters and IPv6 in rl_sync6, none lost, none under another name.
 */
#define PS_SOURCES 12

struct ps_sender {
	struct rl_prog *p;
	const struct frame *f; /* PS_SOURCES frames */
	int cpu, err;
	__u32 rounds, repeat;
};

static void *ps_loop(void *arg)
{
	struct ps_sender *s = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (__u32 i = 0; i < s->rounds && !s->err; i++) {
		const struct frame *f = &s->f[(i + (__u32)s->cpu) % PS_SOURCES];
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->data, .data_size_in = f->len,
			    .repeat = s->repeat);

		s->err = bpf_prog_test_run_opts(s->p->prog_fd, &o);
	}
	return NULL;
}

static void ps_drain(struct rl_sync_kern *k, const struct rl_state_key *keys, __u64 *got,
		     __u64 *other, unsigned long *drains)
{
	struct rl_sync_src *v;
	size_t n;

	if (rl_sync_drain(k, &v, &n))
		return;
	for (size_t j = 0; j < n; j++) {
		int i;

		for (i = 0; i < PS_SOURCES; i++)
			if (!memcmp(&v[j].k, &keys[i], sizeof(keys[i]))) {
				got[i] += v[j].units;
				break;
			}
		if (i == PS_SOURCES)
			*other += v[j].units;
	}
	(*drains)++;
	free(v);
}

TEST_FLAGS(sync_drain_exact_per_source_two_cpus, RL_TEST_ROOT)
{
	/* Every packet passes: each source's units are its packets. */
	static const char *const pol[] = { "--rate", "1000000000", "--burst", "1000000000", NULL };
	enum { ROUNDS = 96, REPEAT = 300 };
	struct ps_sender s[2] = {};
	struct rl_state_key keys[PS_SOURCES];
	struct frame f[PS_SOURCES];
	__u64 got[PS_SOURCES] = {}, other = 0, sent[PS_SOURCES] = {};
	struct rl_counters cnt;
	struct rl_sync_kern *k;
	struct rl_config cfg;
	unsigned long drains = 0;
	char err[RL_ERRLEN], a[64];
	struct rl_prog p;
	pthread_t th[2];
	bool exact = true;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		rl_test_skip("one CPU");
		return;
	}
	if (!rl_build_config(&cfg, pol, NULL))
		return;
	cfg.sync_count = 1;
	if (!rl_prog_load(&p, false, MAXSRC))
		return;
	if (!rl_prog_configure(&p, 0, &cfg) ||
	    !ASSERT_OK(rl_sync_kern_from_pins(&p.maps, -1, &k, err, sizeof(err)), "open")) {
		rl_prog_close(&p);
		return;
	}
	for (int i = 0; i < PS_SOURCES; i++) {
		if (i < PS_SOURCES - 2) {
			snprintf(a, sizeof(a), "198.18.%d.%d", i, 7 * i + 1);
			frame4(&f[i], a, 64);
			keys[i] = key4(a, cfg.gen);
		} else {
			snprintf(a, sizeof(a), "2001:db8:%d::1", i);
			frame6(&f[i], a, 64);
			snprintf(a, sizeof(a), "2001:db8:%d::", i);
			keys[i] = key6(a, cfg.gen);
		}
	}
	/* A first drain loads the drain program: drains are quick from then on. */
	ps_drain(k, keys, got, &other, &drains);
	for (int c = 0; c < 2; c++) {
		s[c] = (struct ps_sender){
			.p = &p, .f = f, .cpu = c, .rounds = ROUNDS, .repeat = REPEAT
		};
		for (__u32 r = 0; r < ROUNDS; r++)
			sent[(r + (__u32)c) % PS_SOURCES] += REPEAT;
		pthread_create(&th[c], NULL, ps_loop, &s[c]);
	}
	for (int c = 0; c < 2; c++)
		while (pthread_tryjoin_np(th[c], NULL) == EBUSY) {
			ps_drain(k, keys, got, &other, &drains);
			usleep(2000);
		}
	ps_drain(k, keys, got, &other, &drains);
	ASSERT_OK(s[0].err | s[1].err, "test runs");
	for (int i = 0; i < PS_SOURCES; i++)
		if (got[i] != sent[i]) {
			fprintf(stderr, "    source %d: %llu drained, %llu sent\n", i,
				(unsigned long long)got[i], (unsigned long long)sent[i]);
			exact = false;
		}
	printf("    %d sources, %llu packets from 2 CPUs, %lu drains meanwhile\n", PS_SOURCES,
	       (unsigned long long)(2ULL * ROUNDS * REPEAT), drains);
	ASSERT_TRUE(exact, "each source: drained == its packets, exactly");
	ASSERT_EQ(other, 0, "nothing under another name");
	ASSERT_TRUE(drains > 2, "drains raced the packets");
	if (rl_prog_counters(&p, &cnt)) {
		ASSERT_EQ(cnt.passed, 2ULL * ROUNDS * REPEAT, "every packet passed");
		ASSERT_EQ(cnt.sync_lost, 0, "none lost");
	}
	rl_sync_kern_close(k, false);
	rl_prog_close(&p);
}

/*
 * @n IPv4 sources of 198.18.0.0/15 that rl_sets4 (2^@bits sets) puts in one
 * set under generation @gen and secret @key, as text into @out[i] (32 bytes each): true if
 * some set holds that many.
 */
static bool same_set(__u32 gen, __u64 key, __u32 bits, int n, char (*out)[32])
{
	static __u8 count[1U << RL_SA_BITS_MIN];
	__u32 mask = (1U << bits) - 1, set = ~0U;
	int got = 0;

	if (bits != RL_SA_BITS_MIN)
		return false;
	memset(count, 0, sizeof(count));
	for (__u32 a = 0; a < (1U << 17) && set == ~0U; a++) {
		__u32 idx = rl_sa_hash(0xc6120000U + a, gen, key) & mask;

		if (++count[idx] == n)
			set = idx;
	}
	for (__u32 a = 0; a < (1U << 17) && got < n; a++) {
		__u32 h = 0xc6120000U + a;

		if ((rl_sa_hash(h, gen, key) & mask) == set)
			snprintf(out[got++], 32, "%u.%u.%u.%u", h >> 24, (h >> 16) & 255,
				 (h >> 8) & 255, h & 255);
	}
	return got == n;
}

/*
 * A slot given to another source between count and drain: A counts in a
 * slot, a ninth source B evicts it (the set full of sources less idle), and
 * passes. A's units are drained as A's, all of them; B's units cannot be
 * counted while A's wait in the slot's counter: they are counted lost (the
 * bound: what B passes until the drain), never drained as anyone's. After
 * the drain, B's next packets take the counter over and are B's.
 */
TEST_FLAGS(sync_slot_reused_before_drain, RL_TEST_ROOT)
{
	char addr[9][32];
	struct rl_state_key ka, kb;
	struct rl_sync_src *v = NULL;
	struct rl_sync_kern *k;
	struct rl_counters cnt;
	struct rl_config cfg;
	struct rl_prog p;
	struct frame f;
	__u64 sum = 0, lost0;
	unsigned int pa, pb, pb2;
	size_t n;

	if (!start(&p, policies[0], true, &cfg, &k))
		return;
	if (!ASSERT_TRUE(same_set(cfg.gen, cfg.sa_key, RL_SA_BITS_MIN, 9, addr),
			 "nine sources in one set"))
		goto out;
	ka = key4(addr[0], cfg.gen);
	kb = key4(addr[8], cfg.gen);
	frame4(&f, addr[0], 64);
	pa = run(&p, T0, &f, 5);
	/*
	 * 100 s later, seven more fill the set, each seen again (eviction
	 * spares those first); A, idle longest, is the least ahead.
	 */
	for (int i = 1; i < 8; i++) {
		frame4(&f, addr[i], 64);
		ASSERT_EQ(run(&p, T0 + 100 * NSEC, &f, 2), 2, "a source of the set passes twice");
	}
	frame4(&f, addr[8], 64);
	pb = run(&p, T0 + 100 * NSEC + MSEC, &f, 4);
	ASSERT_EQ(rl_state_lookup(&p.maps, &ka, &(__u64){ 0 }), -ENOENT, "A evicted by B");
	if (!rl_prog_counters(&p, &cnt) || !ASSERT_OK(rl_sync_drain(k, &v, &n), "drain"))
		goto out;
	lost0 = cnt.sync_lost;
	ASSERT_EQ(units_of(v, n, &ka), pa, "A's units, all of them, under A's name");
	ASSERT_EQ(units_of(v, n, &kb), 0, "none of them under B's");
	ASSERT_EQ(lost0, pb, "B's units until the drain: lost, and counted so");
	for (size_t i = 0; i < n; i++)
		sum += v[i].units;
	ASSERT_EQ(sum, pa + 14, "nothing else drained");
	free(v);
	v = NULL;
	/* Drained: B's next packets take the counter over. */
	pb2 = run(&p, T0 + 100 * NSEC + 2 * MSEC, &f, 3);
	if (!ASSERT_OK(rl_sync_drain(k, &v, &n), "second drain"))
		goto out;
	ASSERT_EQ(units_of(v, n, &kb), pb2, "B's units after the drain: B's");
	ASSERT_EQ(units_of(v, n, &ka), 0, "nothing more for A");
	if (rl_prog_counters(&p, &cnt))
		ASSERT_EQ(cnt.sync_lost, lost0, "none lost after the drain");
	printf("    A passed %u (drained as A's), B %u lost then %u drained as B's\n", pa, pb, pb2);
out:
	free(v);
	rl_sync_kern_close(k, false);
	rl_prog_close(&p);
}

/*
 * A limit rule's sources: counted under the rule (its key in rl_rstate),
 * named "RULE|address/prefix" with the rule's prefixes, read back, charged
 * to the rule's state (and then passing as much fewer), in the policy text;
 * a source of the default rule beside them as before.
 */
TEST_FLAGS(sync_rule_sources, RL_TEST_ROOT)
{
	static const char *const rules[] = {
		"udp54 --proto udp --dport 54 --rate 10 --burst 20 --prefix4 24", NULL
	};
	struct rl_state_key kr, kd, back;
	struct rl_sync_src *v = NULL, in;
	struct rl_sync_kern *k;
	struct rl_config cfg;
	unsigned int pr, pd, left;
	struct rl_prog p;
	struct frame fr, fd;
	char buf[RL_SYNC_POLICY_MAX];
	size_t n, charged;
	bool found = false;

	if (!start(&p, policies[0], true, &cfg, &k))
		return;
	if (!rl_prog_rules(&p, &cfg, rules))
		goto out;
	fr_init(&fr);
	fr_eth(&fr, 0x0800);
	fr_ipv4_l4(&fr, "198.18.3.77", RL_PROTO_UDP, 54, 0, 0);
	fr_pad(&fr, 64);
	frame4(&fd, "198.18.0.1", 64); /* dport 53: the default rule's */
	pr = run(&p, T0, &fr, 30);
	pd = run(&p, T0, &fd, 30);
	ASSERT_EQ(pr, 20, "the rule's burst");
	ASSERT_EQ(pd, 20, "the default's burst");
	if (!ASSERT_OK(rl_sync_drain(k, &v, &n), "drain"))
		goto out;
	kd = key4("198.18.0.1", cfg.gen);
	ASSERT_EQ(units_of(v, n, &kd), pd, "the default rule's source");
	for (size_t i = 0; i < n; i++) {
		if (!(v[i].k.gen & RL_SYNC_GEN_RULE))
			continue;
		kr = v[i].k;
		found = true;
		ASSERT_EQ(v[i].units, pr, "the rule's source: its passes");
		if (ASSERT_OK(rl_sync_src_format(k, &kr, buf, 64), "format"))
			ASSERT_STREQ(buf, "udp54|198.18.3.0/24",
				     "named under its rule, its prefix");
		if (ASSERT_OK(rl_sync_src_parse(k, buf, &back), "parse"))
			ASSERT_OK(memcmp(&back, &kr, sizeof(kr)), "read back to the same key");
	}
	ASSERT_TRUE(found, "a source of the rule drained");
	ASSERT_EQ(rl_sync_src_parse(k, "nosuch|198.18.3.0/24", &back), -ENOENT, "unknown rule");
	ASSERT_EQ(rl_sync_src_parse(k, "udp54|198.18.3.0/32", &back), -EINVAL,
		  "not the rule's prefix");
	if (found) {
		/* 10 s later the bucket is full again; 15 remote units leave 5. */
		__u64 now = T0 + 10 * NSEC;

		in = (struct rl_sync_src){ .k = kr, .units = 15 };
		ASSERT_OK(bpf_map_update_elem(p.clock_fd, &(__u32){ 0 }, &now, BPF_ANY), "clock");
		if (ASSERT_OK(rl_sync_charge(k, &in, 1, &charged), "charge"))
			ASSERT_EQ(charged, 1, "charged to the rule's state");
		left = run(&p, now, &fr, 30);
		ASSERT_EQ(left, 5, "the rule's source passes what the charge left");
		ASSERT_EQ(run(&p, now, &fd, 30), 20, "the default's source untouched");
	}
	if (ASSERT_OK(rl_sync_kern_policy(k, buf, sizeof(buf)), "policy"))
		ASSERT_CONTAINS(buf,
				"\nrule.udp54=limit algo=token-bucket bytes=0 rate=10/1 burst=20 "
				"window_ns=1000000000 ",
				"the rule in the policy text");
out:
	free(v);
	rl_sync_kern_close(k, false);
	rl_prog_close(&p);
}

/* More than a batch of the charge program, IPv4 and IPv6. */
TEST_FLAGS(sync_charge_batches, RL_TEST_ROOT)
{
	enum { N = RL_SYNC_BATCH + 100 };
	struct rl_sync_src *in = calloc(N, sizeof(*in));
	struct rl_sync_kern *k;
	struct rl_config cfg;
	struct rl_prog p;
	struct frame f;
	size_t charged;
	char a[64];

	if (!in || !start(&p, policies[0], false, &cfg, &k)) {
		free(in);
		return;
	}
	/* Two sources with state; the rest unknown. */
	frame4(&f, "198.18.0.1", 64);
	run(&p, T0, &f, 1);
	frame6(&f, "2001:db8::1", 64);
	run(&p, T0, &f, 1);
	for (int i = 0; i < N; i++) {
		snprintf(a, sizeof(a), "198.19.%d.%d", i >> 8, i & 255);
		in[i].k = key4(a, cfg.gen);
		in[i].units = 1;
	}
	in[N - 1].k = key4("198.18.0.1", cfg.gen);
	in[N - 2].k = key6("2001:db8::", cfg.gen);
	ASSERT_OK(rl_sync_charge(k, in, N, &charged), "charge");
	ASSERT_EQ(charged, 2, "both known sources, in the second batch");
	free(in);
	rl_sync_kern_close(k, false);
	rl_prog_close(&p);
}

TEST_FLAGS(sync_src_text_and_policy, RL_TEST_ROOT)
{
	static const char *const pol[] = { "--rate",	"10", "--prefix4", "24",
					   "--prefix6", "48", NULL };
	struct rl_state_key key;
	struct rl_sync_kern *k;
	struct rl_config cfg;
	struct rl_prog p;
	char buf[512];

	if (!start(&p, pol, true, &cfg, &k))
		return;
	if (ASSERT_OK(rl_sync_src_parse(k, "198.18.5.0/24", &key), "parse v4")) {
		ASSERT_EQ(key.gen, cfg.gen, "live generation");
		ASSERT_OK(rl_sync_src_format(k, &key, buf, sizeof(buf)), "format v4");
		ASSERT_STREQ(buf, "198.18.5.0/24", "v4 round trip");
	}
	ASSERT_EQ(rl_sync_src_parse(k, "198.18.5.0/32", &key), -EINVAL, "other prefix refused");
	ASSERT_EQ(rl_sync_src_parse(k, "198.18.5.0", &key), -EINVAL, "no prefix refused");
	ASSERT_EQ(rl_sync_src_parse(k, "nonsense/24", &key), -EINVAL, "no address refused");
	if (ASSERT_OK(rl_sync_src_parse(k, "2001:db8:7::/48", &key), "parse v6")) {
		ASSERT_OK(rl_sync_src_format(k, &key, buf, sizeof(buf)), "format v6");
		ASSERT_STREQ(buf, "2001:db8:7::/48", "v6 round trip");
	}
	if (ASSERT_OK(rl_sync_src_parse(k, "fe80::1/128", &key), "link-local, whole"))
		ASSERT_OK(rl_sync_src_format(k, &key, buf, sizeof(buf)), "format link-local");
	ASSERT_STREQ(buf, "fe80::1/128", "link-local round trip");
	if (ASSERT_OK(rl_sync_kern_policy(k, buf, sizeof(buf)), "policy")) {
		ASSERT_CONTAINS(buf, "algo=token-bucket\n", "algorithm");
		ASSERT_CONTAINS(buf, "prefix4=24\nprefix6=48\n", "prefixes");
		ASSERT_CONTAINS(buf, "rate=10/1\n", "rate");
	}
	rl_sync_kern_close(k, false);
	rl_prog_close(&p);
}

TEST_FLAGS(sync_status_round_trip, RL_TEST_ROOT)
{
	struct rl_sync_status st = { .state = RL_SYNC_FALLBACK_SHARE,
				     .pid = (__u32)getpid(),
				     .interval_ns = 100 * MSEC,
				     .last_sync_ns = 1234567890123ULL,
				     .nodes = 3,
				     .errors_total = 7,
				     .redis_rx_bytes_total = 99 },
			      got;
	struct rl_sync_kern *k;
	struct rl_config cfg;
	struct rl_prog p;

	if (!start(&p, policies[0], false, &cfg, &k))
		return;
	ASSERT_EQ(rl_sync_status_read(&p.maps, &got), -ENOENT, "no agent ever ran");
	strcpy(st.group, "edge");
	strcpy(st.node, "node-a");
	ASSERT_OK(rl_sync_status_write(k, &st), "write");
	if (ASSERT_OK(rl_sync_status_read(&p.maps, &got), "read"))
		ASSERT_OK(memcmp(&st, &got, sizeof(st)), "read what was written");
	ASSERT_TRUE(rl_sync_agent_alive(&got), "our pid is alive");
	got.pid = 0x7ffffff0; /* beyond pid_max */
	ASSERT_TRUE(!rl_sync_agent_alive(&got), "a gone pid is not");
	ASSERT_STREQ(rl_sync_state_name(&got), "not-running", "stats says not running");
	got.state = RL_SYNC_OFF;
	ASSERT_STREQ(rl_sync_state_name(&got), "off", "stopped cleanly: off");
	rl_sync_kern_close(k, false);
	rl_prog_close(&p);
}

/* --- on an attached limiter, in a namespace --- */

struct walked {
	struct rl_state_key k[64];
	__u64 v[64];
	int n;
};

static int walk_fn(const struct rl_state_key *k, __u64 state, __u64 read_ns, void *ctx)
{
	struct walked *w = ctx;

	(void)read_ns;
	if (w->n < 64) {
		w->k[w->n] = *k;
		w->v[w->n++] = state;
	}
	return 0;
}

static int enter(const char *netns)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		return -1;
	close(fd);
	return 0;
}

/* After a set by the CLI: counting still on, under the new generation; then off. */
static int after_set_child(const char *netns, const char *ifname, __u32 gen_before)
{
	struct rl_sync_kern *k;
	struct rl_config c, c2;
	struct rl_iface ifc;
	struct rl_pins pins;
	char err[RL_ERRLEN];
	__u32 active;

	if (enter(netns) || rl_iface_get(ifname, &ifc, err, sizeof(err)) ||
	    rl_pins_open(&ifc, &pins, err, sizeof(err)))
		return 30;
	if (rl_config_read(&pins, &c, &active))
		return 31;
	if (!c.sync_count || c.gen == gen_before)
		return 32;
	if (rl_sync_kern_open(ifname, &k, err, sizeof(err)))
		return 33;
	rl_sync_kern_close(k, true);
	if (rl_config_read(&pins, &c2, &active) || c2.sync_count || c2.gen != c.gen)
		return 34;
	rl_pins_close(&pins);
	return 0;
}

/* In a child that entered the receiving namespace: 0 if every check held, else the step. */
static int toggle_child(const char *netns, const char *ifname)
{
	struct rl_config c0, c1, c2;
	struct walked w0 = {}, w1 = {}, w2 = {};
	struct rl_sync_kern *k;
	struct rl_iface ifc;
	struct rl_pins pins;
	char err[RL_ERRLEN];
	__u32 active, id0, id1, id2;

	if (enter(netns))
		return 10;
	if (rl_iface_get(ifname, &ifc, err, sizeof(err)) ||
	    rl_pins_open(&ifc, &pins, err, sizeof(err)))
		return 11;
	id0 = rl_attached_prog_id(&ifc);
	if (rl_config_read(&pins, &c0, &active) || rl_state_walk(&pins, walk_fn, &w0) || !w0.n)
		return 12;
	if (rl_sync_kern_open(ifname, &k, err, sizeof(err))) {
		fprintf(stderr, "    %s\n", err);
		return 13;
	}
	id1 = rl_attached_prog_id(&ifc);
	if (rl_config_read(&pins, &c1, &active) || rl_state_walk(&pins, walk_fn, &w1))
		return 14;
	if (!c1.sync_count || c1.gen != c0.gen || !id1 || id1 == id0)
		return 15;
	if (w1.n != w0.n || memcmp(w0.k, w1.k, sizeof(w0.k)) || memcmp(w0.v, w1.v, sizeof(w0.v)))
		return 16;
	/* A status as the agent (our parent, alive) would write it, for stats and the exporter. */
	{
		struct rl_sync_status st = { .state = RL_SYNC_CONNECTED,
					     .pid = (__u32)getppid(),
					     .interval_ns = 100000000,
					     .lag_ns = 1500000,
					     .sources_active = 12,
					     .sources_shared = 5,
					     .nodes = 3,
					     .errors_total = 2 };

		strcpy(st.group, "g1");
		strcpy(st.node, "n\"1");
		if (rl_sync_status_write(k, &st))
			return 21;
	}
	rl_sync_kern_close(k, true);
	id2 = rl_attached_prog_id(&ifc);
	if (rl_config_read(&pins, &c2, &active) || rl_state_walk(&pins, walk_fn, &w2))
		return 17;
	if (c2.sync_count || c2.gen != c0.gen || !id2 || id2 == id1)
		return 18;
	if (w2.n != w0.n || memcmp(w0.k, w2.k, sizeof(w0.k)) || memcmp(w0.v, w2.v, sizeof(w0.v)))
		return 19;
	/* Counting on again, left on (as by an agent that runs on) for set_keeps_counting. */
	if (rl_sync_kern_open(ifname, &k, err, sizeof(err)))
		return 22;
	rl_sync_kern_close(k, false);
	if (rl_config_read(&pins, &c1, &active) || !c1.sync_count || c1.gen != c0.gen)
		return 23;
	/* No limiter on the sending side's interface: a clear refusal. */
	if (rl_sync_kern_open("lo", &k, err, sizeof(err)) != -ENOENT ||
	    !strstr(err, "not attached"))
		return 20;
	rl_pins_close(&pins);
	return 0;
}

TEST_FLAGS(sync_counting_toggle_keeps_states, RL_TEST_ROOT)
{
	struct rl_flow fl = { .src = "198.18.3.0", .rand_bytes = 1, .count = 500, .gap = "20us" };
	char *out = NULL, args[128];
	struct rl_ns ns;
	size_t len;
	pid_t pid;
	int st = -1;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespace pair"))
		return;
	/*
	 * Windows of a minute: the sweep rewrites a state the clock has left
	 * behind (a TAT a second old; a window two windows old) to an
	 * equivalent one, and the swaps below, which make the counters whole
	 * (40 MB), can take longer than a second on a loaded host.
	 */
	snprintf(args, sizeof(args), "attach %s --algo fixed-window --rate 100 --window 1m",
		 ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach", args))
		goto out;
	/* Some sources with state, then no traffic: the states must not move. */
	if (!ASSERT_OK(rl_flow_start(&ns, &fl), "flow") || !ASSERT_OK(rl_flow_wait(&fl), "flow"))
		goto out;
	pid = fork();
	if (pid == 0)
		_exit(toggle_child(ns.rx, ns.rx_if));
	if (ASSERT_TRUE(pid > 0, "fork") && waitpid(pid, &st, 0) == pid)
		ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : 100, 0,
			  "counting on and off: same generation, same states, program replaced");
	/* stats and the exporter show the status the child wrote. */
	if (ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "stats %s --json", ns.rx_if), 0, "stats --json")) {
		ASSERT_CONTAINS(out, "\"state\":\"connected\"", "stats: state");
		ASSERT_CONTAINS(out, "\"nodes\":3", "stats: nodes");
		ASSERT_CONTAINS(out, "\"sources_shared\":5", "stats: shared");
	}
	free(out);
	out = NULL;
	if (ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "stats %s", ns.rx_if), 0, "stats"))
		ASSERT_CONTAINS(out, "connected (pid", "stats text: state");
	free(out);
	out = NULL;
	if (ASSERT_OK(rl_metrics_render(&out, &len), "exporter")) {
		snprintf(args, sizeof(args), "xdp_ratelimit_sync_nodes{iface=\"%s\"", ns.rx_if);
		ASSERT_CONTAINS(out, args, "exporter: sync_nodes");
		snprintf(args, sizeof(args), "xdp_ratelimit_sync_up{iface=\"%s\"", ns.rx_if);
		ASSERT_CONTAINS(out, args, "exporter: sync_up");
		ASSERT_CONTAINS(out, "node=\"n\\\"1\"", "exporter: node label escaped");
	}
	free(out);
	out = NULL;
	/* set while counting is on (the child left it on) keeps it on, under a new generation. */
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "set %s --rate 200", ns.rx_if), 0, "set");
	pid = fork();
	if (pid == 0)
		_exit(after_set_child(ns.rx, ns.rx_if, 1));
	if (ASSERT_TRUE(pid > 0, "fork") && waitpid(pid, &st, 0) == pid)
		ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : 100, 0,
			  "set keeps counting on; counting off after it");
out:
	free(out);
	rl_ns_destroy(&ns);
}
