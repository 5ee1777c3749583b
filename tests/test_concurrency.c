// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One source's packets on two CPUs at once, through BPF_PROG_TEST_RUN from
 * two threads pinned to different CPUs.
 *
 * With the test clock, time advances in steps between rounds and both
 * threads hammer the same source within each round: the passes must equal,
 * exactly, what the same packets give when run one by one through the model.
 * With the real clock, the passes must be within 1% of r*t + b.
 * Compare-and-swap retries (and retries that ran out) are reported.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "harness.h"
#include "source.h"
#include "test.h"
#include "trace.h"

#define THREADS 2

struct worker {
	struct rl_prog *prog;
	pthread_barrier_t *start, *done;
	const __u8 *frame;
	__u32 len, repeat;
	int rounds, cpu, err;
	volatile int *stop; /* real-clock mode: run until set */
	unsigned long runs;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *hammer(void *arg)
{
	struct worker *w = arg;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = w->frame, .data_size_in = w->len,
		    .repeat = w->repeat);

	pin(w->cpu);
	for (int r = 0; w->stop ? !*w->stop : r < w->rounds; r++) {
		if (!w->stop)
			pthread_barrier_wait(w->start);
		if (bpf_prog_test_run_opts(w->prog->prog_fd, &opts))
			w->err = 1;
		w->runs += w->repeat;
		if (!w->stop)
			pthread_barrier_wait(w->done);
	}
	return NULL;
}

/* A 64-byte UDP/IPv4 frame from 198.18.0.7. */
static __u32 make_frame(__u8 *f)
{
	static const __u8 hdr[] = {
		0x02, 0, 0,   0,  0, 2, 0x02, 0, 0,  0,	 0, 1,	0x08, 0x00,
		0x45, 0, 0,   50, 0, 0, 0,    0, 64, 17, 0, 0,	198,  18,
		0,    7, 198, 18, 0, 2, 0,    9, 0,  9,	 0, 30, 0,    0,
	};

	memset(f, 0, 64);
	memcpy(f, hdr, sizeof(hdr));
	return 64;
}

/*
 * @table: the IPv4 table the policy must land in (each has its own hit path:
 * in line for rl_state4, limit_sa4() for rl_sets4).
 */
static void exact_case(const char *const *opts, __u64 step_ns, enum rl_table4 table)
{
	const int rounds = 40;
	const __u32 repeat = 3000;
	pthread_barrier_t start, done;
	struct worker w[THREADS];
	pthread_t tid[THREADS];
	struct rl_counters c;
	struct rl_config cfg;
	struct rl_policy pol;
	struct rl_opts o;
	struct rl_prog prog;
	struct rl_sim sim;
	struct rl_key key;
	char err[RL_ERRLEN];
	__u64 now = 5000000000ULL, expect = 0;
	struct rl_config live;
	__u8 frame[64];
	__u32 zero = 0, len = make_frame(frame), slot;

	if (!rl_build_config(&cfg, opts, NULL) || !rl_prog_load(&prog, true, 1024))
		return;
	rl_config_policy(&cfg, &pol, &o);
	if (!rl_prog_configure(&prog, 0, &cfg) ||
	    !ASSERT_OK(rl_config_read(&prog.maps, &live, &slot), "read the live policy") ||
	    !ASSERT_EQ(live.table4, table, "the IPv4 table of the policy") ||
	    !ASSERT_OK(rl_sim_init(&sim, &pol, err, sizeof(err)), err))
		goto out_prog;
	pthread_barrier_init(&start, NULL, THREADS + 1);
	pthread_barrier_init(&done, NULL, THREADS + 1);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .prog = &prog,
					.start = &start,
					.done = &done,
					.frame = frame,
					.len = len,
					.repeat = repeat,
					.rounds = rounds,
					.cpu = i % (int)sysconf(_SC_NPROCESSORS_ONLN) };
		pthread_create(&tid[i], NULL, hammer, &w[i]);
	}
	for (int r = 0; r < rounds; r++, now += step_ns) {
		bpf_map_update_elem(prog.clock_fd, &zero, &now, BPF_ANY);
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		/* The same packets, one by one, through the model. */
		for (__u32 n = 0; n < THREADS * repeat; n++) {
			rl_key_parse("198.18.0.7", &key);
			expect += rl_sim_packet(&sim, &key, now, len, NULL) == 1;
		}
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		ASSERT_EQ(w[i].err, 0, "BPF_PROG_TEST_RUN");
	}
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&done);
	if (rl_prog_counters(&prog, &c)) {
		ASSERT_EQ(c.passed, expect, opts[1]);
		ASSERT_EQ(c.rx_packets, (__u64)THREADS * repeat * rounds, "every packet seen");
		printf("    %-14s passed %llu of %llu (exact: %llu), cas retries %llu, exhausted %llu\n",
		       opts[1], (unsigned long long)c.passed, (unsigned long long)c.rx_packets,
		       (unsigned long long)expect, (unsigned long long)c.cas_retries,
		       (unsigned long long)c.cas_exhausted);
	}
	rl_sim_free(&sim);
out_prog:
	rl_prog_close(&prog);
}

TEST_FLAGS(concurrency_exact_test_clock, RL_TEST_ROOT)
{
	exact_case((const char *const[]){ "--algo", "token-bucket", "--rate", "1000", "--burst",
					  "100", NULL },
		   10000000, RL_TABLE4_SA);
	exact_case(
		(const char *const[]){ "--algo", "gcra", "--rate", "1000", "--burst", "100", NULL },
		10000000, RL_TABLE4_SA);
	exact_case((const char *const[]){ "--algo", "fixed-window", "--rate", "1000", "--window",
					  "100ms", NULL },
		   30000000, RL_TABLE4_SA);
	exact_case((const char *const[]){ "--algo", "sliding-window", "--rate", "1000", "--window",
					  "100ms", NULL },
		   30000000, RL_TABLE4_SA);
	exact_case((const char *const[]){ "--algo", "token-bucket", "--rate", "1mbit", "--burst",
					  "3000", NULL },
		   1000000, RL_TABLE4_SA);
	/* Many passes per round, so that the two CPUs race on most of them. */
	exact_case((const char *const[]){ "--algo", "token-bucket", "--rate", "100mpps", "--burst",
					  "2000", NULL },
		   20000, RL_TABLE4_SA);
	exact_case((const char *const[]){ "--algo", "gcra", "--rate", "100mpps", "--burst", "2000",
					  NULL },
		   20000, RL_TABLE4_SA);
	/*
	 * Policies the smaller rl_sets4 cannot hold, on rl_wide4 (its lock
	 * protocol): counts of 21 bits each, a queue of 10^13 vt. Both go
	 * over their limit.
	 */
	exact_case((const char *const[]){ "--algo", "sliding-window", "--rate", "10mbyte",
					  "--window", "100ms", NULL },
		   30000000, RL_TABLE4_WIDE);
	exact_case((const char *const[]){ "--algo", "gcra", "--rate", "10", "--burst", "100000",
					  NULL },
		   10000000, RL_TABLE4_WIDE);
}

/* The kernel time (ns) behind a source's TAT, less tau. */
static bool tat_time(struct rl_prog *prog, const struct rl_config *cfg, __u64 *ns)
{
	struct rl_state_key key = { .gen = 1 };
	__u64 tat;

	rl_key_parse("198.18.0.7", &key.src);
	if (!ASSERT_OK(rl_state_lookup(&prog->maps, &key, &tat), "read the source's state"))
		return false;
	/* vt back to ns: vt = ns * vt_mult / 2^56. */
	*ns = (__u64)(((unsigned __int128)(tat - cfg->params.tau) << RL_VT_SHIFT) /
		      cfg->params.vt_mult);
	return true;
}

/*
 * One measurement. The source is created by one packet before the threads
 * start, with an empty bucket (a full gcra queue), so its credit accrues from
 * that moment whatever the scheduler does. Two threads then flood it for
 * about a second, and one last burst takes what accrued, leaving the bucket
 * empty. t runs on the kernel's clock (bpf_ktime_get_ns), from the first
 * packet to the last pass, both read back from the state as TAT - tau and
 * converted to ns with the configured vt scale; passed must be r * t (+ the
 * initial fill, 0). This is not circular: a wrong unit_cost or vt_mult would
 * make passed differ from r * t (the conversion back to ns undoes vt_mult, the
 * count does not). The userspace clock is too noisy on a loaded machine (a
 * return to userspace can wait tens of ms for a CPU): it is printed only.
 * A pause of both threads longer than the bucket (1 s) would rightly lose
 * credit; such a run is repeated.
 * Returns the relative error of passed against r * t, or NAN.
 */
static double real_clock_once(const struct rl_config *cfg, double rate, const char *name)
{
	volatile int stop = 0;
	struct worker w[THREADS];
	pthread_t tid[THREADS];
	struct rl_counters c;
	struct rl_prog prog;
	__u8 frame[64];
	__u32 len = make_frame(frame);
	__u64 t_first, t_last;
	double m_first, m_last, expect, rel = NAN;

	if (!rl_prog_load(&prog, false, 1024))
		return NAN;
	if (!rl_prog_configure(&prog, 0, cfg))
		goto out;
	m_first = mono();
	if (rl_prog_run(&prog, 0, frame, len, 1) < 0 || !tat_time(&prog, cfg, &t_first))
		goto out;
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .prog = &prog,
					.frame = frame,
					.len = len,
					.repeat = 2000,
					.stop = &stop,
					.cpu = i % (int)sysconf(_SC_NPROCESSORS_ONLN) };
		pthread_create(&tid[i], NULL, hammer, &w[i]);
	}
	usleep(1000000);
	stop = 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);
	{
		LIBBPF_OPTS(bpf_test_run_opts, flush, .data_in = frame, .data_size_in = len,
			    .repeat = 200000);

		bpf_prog_test_run_opts(prog.prog_fd, &flush);
	}
	m_last = mono();
	if (!rl_prog_counters(&prog, &c) || !tat_time(&prog, cfg, &t_last))
		goto out;
	expect = rate * (double)(t_last - t_first) / 1e9;
	rel = ((double)c.passed - expect) / expect;
	printf("    %-14s passed %llu of %llu over %.4f s (userspace clock: %.4f s), r*t = %.1f (%+.3f%%), cas retries %llu, exhausted %llu\n",
	       name, (unsigned long long)c.passed, (unsigned long long)c.rx_packets,
	       (double)(t_last - t_first) / 1e9, m_last - m_first, expect, 100 * rel,
	       (unsigned long long)c.cas_retries, (unsigned long long)c.cas_exhausted);
	/* Offered load must have stayed far above the limit, else the run says nothing. */
	if (c.rx_packets < 10 * expect)
		rel = NAN;
out:
	rl_prog_close(&prog);
	return rel;
}

static void real_clock_case(const char *const *opts, double rate)
{
	struct rl_config cfg;
	double rel = NAN;

	if (!rl_build_config(&cfg, opts, NULL))
		return;
	/* The machine is shared: a measurement disturbed by a long pause is repeated. */
	for (int attempt = 0; attempt < 3; attempt++) {
		rel = real_clock_once(&cfg, rate, opts[1]);
		if (rel == rel && rel <= 0.01 && rel >= -0.01)
			break;
	}
	ASSERT_TRUE(rel == rel && rel <= 0.01 && rel >= -0.01, "passed within 1% of r*t");
}

TEST_FLAGS(concurrency_real_clock, RL_TEST_ROOT)
{
	/* A bucket of one second, starting empty (a gcra queue starting full). */
	real_clock_case((const char *const[]){ "--algo", "token-bucket", "--rate", "20000",
					       "--burst", "20000", "--initial", "0", NULL },
			20000);
	real_clock_case((const char *const[]){ "--algo", "gcra", "--rate", "20000", "--burst",
					       "20000", "--initial", "20000", NULL },
			20000);
}
