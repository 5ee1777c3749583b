// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench gen: an XDP traffic generator for the end-to-end benchmark.
 *
 * BPF_PROG_TEST_RUN in live-frames mode runs bench_gen (bench/bpf/bench_gen.bpf.c)
 * on 60-byte IPv4/UDP frames, which it redirects out of --to (a veth): the
 * peer receives XDP frames, as a NIC driver hands them to XDP. Paced: every
 * millisecond a batch of PPS/1000 frames, until SECONDS have passed or a
 * signal comes; --pps 0 sends as fast as it can, in batches of 4096.
 * Bounded in time (SECONDS, at most 600) and in count (--count).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "bench_gen.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int bench_gen(int argc, char **argv)
{
	__u64 pps = 0, count = ~0ULL, sent = 0, start, end, at, k = 0;
	const char *to = NULL;
	double seconds = 5;
	struct bench_gen *skel;
	struct bpf_link *link = NULL;
	struct bench_frame f;
	struct timespec ts;
	bool random = false;
	int err, cpu = 0;

	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "pps", required_argument, NULL, 'p' },
		{ "seconds", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "random", no_argument, NULL, 'r' },
		{},
	};
	int c;

	bench_opts_begin();
	while ((c = bench_next_opt("gen", argc, argv, opts)) != -1) {
		switch (c) {
		case 't':
			to = optarg;
			break;
		case 'p':
			pps = strtoull(optarg, NULL, 0);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'c':
			count = strtoull(optarg, NULL, 0);
			break;
		case 'C':
			cpu = atoi(optarg);
			break;
		case 'r':
			random = true;
			break;
		default:
			return 2;
		}
	}
	if (!to || !if_nametoindex(to) || seconds <= 0 || seconds > 600) {
		fprintf(stderr,
			"rl-bench gen: needs --to IFACE (an interface) and 0 < seconds <= 600\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	bench_pin_cpu(cpu);
	skel = bench_gen__open_and_load();
	if (!skel) {
		fprintf(stderr, "rl-bench gen: couldn't load bench_gen: %s\n", strerror(errno));
		return 1;
	}
	skel->bss->gen_ifindex = if_nametoindex(to);
	skel->bss->gen_random = random;
	link = bench_attach(skel->progs.bench_gen, &err);
	if (err)
		goto out;
	bench_frame_ipv4(&f, 60);
	start = bench_now();
	end = start + (__u64)(seconds * 1e9);
	while (!stop && sent < count && bench_now() < end) {
		__u64 batch = pps ? pps / 1000 : 4096;
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f.data, .data_size_in = f.len,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);

		if (batch > count - sent)
			batch = count - sent;
		if (!batch)
			batch = 1;
		opts.repeat = (__u32)batch;
		if (pps) {
			/* Absolute times: a late batch does not shift the ones after it. */
			at = start + k++ * 1000000ULL;
			ts.tv_sec = (time_t)(at / 1000000000ULL);
			ts.tv_nsec = (long)(at % 1000000000ULL);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
		err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.bench_gen), &opts);
		if (err) {
			err = -errno;
			fprintf(stderr, "rl-bench gen: test_run: %s\n", strerror(errno));
			break;
		}
		sent += batch;
	}
	fprintf(stderr, "rl-bench gen: %llu frames in %.2f s\n",
		(unsigned long long)skel->bss->gen_frames, (double)(bench_now() - start) / 1e9);
out:
	bpf_link__destroy(link);
	bench_gen__destroy(skel);
	return err ? 1 : 0;
}
