// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench accuracy: one source at 10x its limit, sent from 2 CPUs at once.
 *
 * Two threads, pinned to CPU 0 and CPU 1, run xdp_ratelimit (real clock,
 * bpf_ktime_get_ns) with BPF_PROG_TEST_RUN: every PERIOD both wake at the
 * same absolute time and each runs a batch of BATCH frames, so the two CPUs
 * update the one source's state at the same moments (the compare-and-swap
 * contention of a real two-queue NIC). Offered: 2 x BATCH / PERIOD frames per
 * second = 10x the limit r. After T seconds the limiter's own counters give
 * what passed; it is compared with r * t + b, t the time from the first
 * batch's start to the last one's end, b the burst (token bucket, gcra) or
 * the limit per window L (windows: a span of t touches t / W + 1 windows),
 * and with what the algorithm passes when run sequentially over the same
 * arrivals (model()).
 *
 * In byte mode the frames are 64, 576 and 1500 bytes, one size per batch in
 * turn, and r and b are in bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "prog.h"
#include "rl_skel.h"

#define RATE_PPS   20000ULL /* the limit in packets per second */
#define BURST_PKTS 1000ULL /* b, in packets */
/*
 * A sliding window under overload settles near L / (1 + delta / W) per window
 * when arrivals come in bursts every delta (bench/README.md): short, frequent
 * batches keep that under 0.2%, and W keeps L at 0.5% of r * t.
 */
#define WINDOW_NS 50000000ULL /* W = 50 ms: L = 1000 packets */
#define PERIOD_NS 100000ULL /* both threads wake every 100 us ... */
#define BATCH	  10 /* ... and each sends 10 frames: 2 x 100 kpps = 10 r */
#define NSIZES	  3

static const __u32 sizes[NSIZES] = { 64, 576, 1500 };

/* One batch as sent: the model replays it (see model()). */
struct batch {
	__u64 t0, t1;
	__u32 len;
};

struct sender {
	pthread_t th;
	int cpu, prog_fd;
	__u64 start, t_end, first, last, sent, sent_bytes;
	__u64 max_late; /* the latest a batch started after its time */
	int err;
	struct bench_frame frames[NSIZES];
	bool bytes;
	struct batch *log;
	size_t nlog, cap;
};

static void *send_loop(void *arg)
{
	struct sender *s = arg;
	struct timespec ts;
	__u64 k = 0, at;

	if (bench_pin_cpu(s->cpu)) {
		s->err = -errno;
		return NULL;
	}
	for (at = s->start; at < s->t_end; at = s->start + ++k * PERIOD_NS) {
		const struct bench_frame *f = &s->frames[s->bytes ? k % NSIZES : 0];
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = f->len,
			    .repeat = BATCH);
		__u64 t0;

		ts.tv_sec = (time_t)(at / 1000000000ULL);
		ts.tv_nsec = (long)(at % 1000000000ULL);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		t0 = bench_now();
		if (!s->first)
			s->first = t0;
		if (t0 - at > s->max_late)
			s->max_late = t0 - at;
		if (bpf_prog_test_run_opts(s->prog_fd, &opts)) {
			s->err = -errno;
			return NULL;
		}
		s->last = bench_now();
		s->sent += BATCH;
		s->sent_bytes += (__u64)BATCH * f->len;
		if (s->nlog < s->cap)
			s->log[s->nlog++] = (struct batch){ t0, s->last, f->len };
	}
	return NULL;
}

struct pkt {
	__u64 t;
	__u64 len;
};

static int cmp_pkt(const void *a, const void *b)
{
	const struct pkt *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/*
 * What the algorithm passes, run sequentially in userspace (the shared core,
 * include/rl_algo.h) over the same arrivals: every batch's frames spread
 * evenly over the time the batch took, both CPUs' frames merged in time
 * order. Its difference from the kernel's count is what running on two CPUs
 * at once (compare-and-swap races) changed; its difference from r * t + b is
 * what the arrivals did (a sender held off for longer than b / r offers less
 * than 10x for a while).
 */
static double model(const struct rl_params *p, const struct sender *s, bool bytes)
{
	size_t n = 0, total = (s[0].nlog + s[1].nlog) * BATCH;
	struct pkt *v = malloc(total * sizeof(*v));
	__u64 state, next;
	double passed = 0;

	if (!v)
		return -1;
	for (int i = 0; i < 2; i++) {
		for (size_t j = 0; j < s[i].nlog; j++) {
			const struct batch *b = &s[i].log[j];

			for (int k = 0; k < BATCH; k++)
				v[n++] =
					(struct pkt){ b->t0 + (b->t1 - b->t0) * k / BATCH, b->len };
		}
	}
	qsort(v, n, sizeof(*v), cmp_pkt);
	state = n ? rl_initial_state(p, v[0].t) : 0;
	for (size_t i = 0; i < n; i++) {
		__u64 cost = bytes ? v[i].len : 1;

		if (rl_step(p, state, v[i].t, cost, &next)) {
			state = next;
			passed += (double)cost;
		}
	}
	free(v);
	return passed;
}

struct acc_result {
	double passed, bound, ratio, model;
	__u64 offered, retries, exhausted, max_late;
	double t;
};

static int run_case(const char *algo, bool bytes, double seconds, struct acc_result *res)
{
	bool window = !strcmp(algo, "fixed-window") || !strcmp(algo, "sliding-window");
	/* Byte mode: the mean frame is (64 + 576 + 1500) / 3 bytes; r is offered / 10. */
	__u64 mean_x3 = 64 + 576 + 1500;
	__u64 rate = bytes ? RATE_PPS * mean_x3 / 3 / 10 * 10 : RATE_PPS;
	__u64 burst = bytes ? BURST_PKTS * mean_x3 / 3 : BURST_PKTS;
	__u64 limit = rate * WINDOW_NS / 1000000000ULL, b;
	char rate_s[32], burst_s[32];
	const char *args[] = { "--algo",
			       algo,
			       "--rate",
			       rate_s,
			       window ? "--window" : "--burst",
			       window ? "50ms" : burst_s,
			       NULL };
	struct sender s[2];
	struct xdp_ratelimit *lim;
	struct bpf_link *link;
	struct rl_counters c;
	struct rl_config cfg;
	__u64 start, first, last, passed;
	int err = 0;

	snprintf(rate_s, sizeof(rate_s), bytes ? "%llubyte" : "%llu", (unsigned long long)rate);
	snprintf(burst_s, sizeof(burst_s), "%llu", (unsigned long long)burst);
	if (bench_config(&cfg, args))
		return -EINVAL;
	lim = bench_limiter(&cfg, 1024, 16);
	if (!lim)
		return -EINVAL;
	link = bench_attach(rl_prog_xdp(lim), &err);
	if (err) {
		xdp_ratelimit__destroy(lim);
		return err;
	}
	memset(s, 0, sizeof(s));
	start = bench_now() + 20000000ULL;
	for (int i = 0; i < 2; i++) {
		s[i].cpu = i;
		s[i].prog_fd = bpf_program__fd(rl_prog_xdp(lim));
		s[i].start = start;
		s[i].t_end = start + (__u64)(seconds * 1e9);
		s[i].bytes = bytes;
		for (int z = 0; z < NSIZES; z++)
			bench_frame_ipv4(&s[i].frames[z], sizes[z]);
		s[i].cap = (size_t)(seconds * 1e9 / PERIOD_NS) + 16;
		s[i].log = calloc(s[i].cap, sizeof(*s[i].log));
		if (!s[i].log) {
			err = -ENOMEM;
			s[i].err = err;
			s[i].th = 0;
			continue;
		}
		if (pthread_create(&s[i].th, NULL, send_loop, &s[i])) {
			err = -EAGAIN;
			s[i].err = err;
			s[i].th = 0;
		}
	}
	for (int i = 0; i < 2; i++) {
		if (s[i].th)
			pthread_join(s[i].th, NULL);
		if (s[i].err)
			err = s[i].err;
	}
	if (!err)
		err = bench_counters(lim, &c);
	bpf_link__destroy(link);
	xdp_ratelimit__destroy(lim);
	if (!err)
		res->model = model(&cfg.params, s, bytes);
	free(s[0].log);
	free(s[1].log);
	if (err)
		return err;
	first = s[0].first < s[1].first ? s[0].first : s[1].first;
	last = s[0].last > s[1].last ? s[0].last : s[1].last;
	res->t = (double)(last - first) / 1e9;
	passed = bytes ? c.passed_bytes : c.passed;
	b = window ? limit : burst;
	res->passed = (double)passed;
	res->bound = (double)rate * res->t + (double)b;
	res->ratio = res->passed / res->bound;
	res->offered = bytes ? s[0].sent_bytes + s[1].sent_bytes : s[0].sent + s[1].sent;
	res->retries = c.cas_retries;
	res->exhausted = c.cas_exhausted;
	res->max_late = s[0].max_late > s[1].max_late ? s[0].max_late : s[1].max_late;
	return 0;
}

int bench_accuracy(int argc, char **argv)
{
	static const char *const algos[] = { "token-bucket", "gcra", "fixed-window",
					     "sliding-window" };
	const char *out = NULL;
	double seconds = 10;
	int ret = 0;
	FILE *md;

	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "seconds", required_argument, NULL, 's' },
		{},
	};
	int c;

	bench_opts_begin();
	while ((c = bench_next_opt("accuracy", argc, argv, opts)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 's':
			seconds = atof(optarg);
			break;
		default:
			return 2;
		}
	}
	if (!out || seconds <= 0 || seconds > 600) {
		fprintf(stderr, "rl-bench accuracy: needs --out DIR and 0 < seconds <= 600\n");
		return 2;
	}
	mkdir(out, 0755);
	md = bench_out(out, "accuracy.md", "w");
	if (!md)
		return 1;
	fprintf(md, "| algorithm | cost | offered (2 CPUs) | t s | passed | r*t + b | "
		    "passed / (r*t + b) | goal within 1%% | model, same arrivals (passed / it) | "
		    "CAS retries / exhausted | sender late max ms |\n"
		    "|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int a = 0; a < 4; a++) {
		for (int bytes = 0; bytes < 2; bytes++) {
			struct acc_result r = {};
			char own[64];
			int err;

			fprintf(stderr, "rl-bench: accuracy %s %s, %.0f s\n", algos[a],
				bytes ? "bytes" : "packets", seconds);
			err = run_case(algos[a], bytes, seconds, &r);
			if (err) {
				fprintf(stderr, "rl-bench: accuracy %s: %s\n", algos[a],
					strerror(-err));
				ret = 1;
				continue;
			}
			snprintf(own, sizeof(own), "%.0f (%.4f)", r.model, r.passed / r.model);
			fprintf(md,
				"| %s | %s | %llu | %.3f | %.0f | %.0f | %.4f | %s | %s | %llu / %llu | %.1f |\n",
				algos[a], bytes ? "bytes" : "packets",
				(unsigned long long)r.offered, r.t, r.passed, r.bound, r.ratio,
				r.ratio >= 0.99 && r.ratio <= 1.01 ? "ok" : "**no**", own,
				(unsigned long long)r.retries, (unsigned long long)r.exhausted,
				(double)r.max_late / 1e6);
		}
	}
	fclose(md);
	return ret;
}
