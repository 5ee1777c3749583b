// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench sync-cost: what one node's round trip costs, per interval, with N
 * active sources: Redis commands, bytes each way, the agent's CPU and the
 * round trip's duration. K agents (nodes) in this process run the real
 * agent step (user/lib/sync_agent.h) and the real script against the real server
 * given by --redis; the drained lists are synthetic (the same N sources on
 * every node, every one shared: the reply carries all of them, the worst
 * case), so the kernel's drain and charge are not in the CPU figure.
 *
 *	rl-bench sync-cost --redis URL --sources N [--nodes K] [--rounds R]
 *
 * Prints one line: sources nodes rounds commands tx_bytes rx_bytes cpu_us
 * rtt_ms_median rtt_ms_max fallbacks, each per node per interval.
 *
 * With --kernel instead of --redis, the kernel side of an interval: a
 * limiter with sync counting on (the default table, a million sources),
 * N sources (a power of two) passing a packet each (bench_ref's driver),
 * then the drain (rl_sync_drain()) and the charge of the N drained sources
 * (rl_sync_charge(), one unit each), timed:
 *
 *	rl-bench [--ifname IFACE] sync-cost --kernel --sources N [--rounds R]
 *
 * Prints one line: sources rounds drained drain_ms_median drain_ms_max
 * charge_ms_median charge_ms_max (drained: sources of the last drain).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "bench_ref.skel.h"
#include "prog.h"
#include "rl_skel.h"
#include "sync_agent.h"

#define MAX_NODES 8

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The kernel side of an interval with @sources sources (see above). */
static int kernel_cost(unsigned long sources, unsigned long rounds)
{
	static const char *const pol[] = { "--rate", "1000000000", "--burst", "1000000000", NULL };
	double *drain = calloc(rounds, sizeof(double)), *charge = calloc(rounds, sizeof(double));
	struct xdp_ratelimit *lim = NULL;
	struct rl_sync_kern *k = NULL;
	struct bpf_link *link = NULL;
	struct bench_ref *drv = NULL;
	struct rl_sync_src *v = NULL;
	struct bench_frame f;
	struct rl_config cfg;
	struct rl_pins pins;
	char err[1024];
	size_t n = 0;
	int ret = 1, e;

	if (!drain || !charge || bench_config(&cfg, pol))
		goto out;
	cfg.sync_count = 1;
	lim = bench_limiter(&cfg, RL_DEFAULT_MAX_SOURCES, RL_DEFAULT_MAX_SOURCES6);
	drv = bench_ref__open();
	if (!lim || !drv)
		goto out;
	/* The driver only: the references' maps as small as they go. */
	bpf_map__set_max_entries(drv->maps.ref_lookup_map, 16);
	bpf_map__set_max_entries(drv->maps.ref_gcra_map, 16);
	bpf_map__set_max_entries(drv->maps.ref_gcra_lean_map, 16);
	bpf_map__set_max_entries(drv->maps.ref_gcra_lean4_map, 16);
	e = bench_ref__load(drv);
	if (e) {
		fprintf(stderr, "rl-bench sync-cost: couldn't load bench_ref: %s\n", strerror(-e));
		goto out;
	}
	link = bench_attach(drv->progs.bench_driver, &e);
	if (e)
		goto out;
	bench_frame_ipv4(&f, 64);
	drv->bss->bench_off = f.src_off;
	drv->bss->bench_base = sources <= BENCH_NET4_SIZE ? BENCH_NET4 : BENCH_WIDE4;
	drv->data->bench_mul = 0x9e3779b1U;
	rl_prog_maps(lim, &pins);
	if (bench_set_target(drv, rl_prog_fd(lim), (__u32)sources) ||
	    rl_sync_kern_from_pins(&pins, -1, &k, err, sizeof(err))) {
		fprintf(stderr, "rl-bench sync-cost: %s\n", err);
		goto out;
	}
	/* The sources in, and a first drain and charge: the agent's programs loaded. */
	if (bench_run_driver(drv, &f, (__u32)sources, NULL, NULL) || rl_sync_drain(k, &v, &n) ||
	    rl_sync_charge(k, v, n, NULL))
		goto out;
	for (unsigned long r = 0; r < rounds; r++) {
		double t0, t1;

		free(v);
		v = NULL;
		if (bench_run_driver(drv, &f, (__u32)sources, NULL, NULL))
			goto out;
		t0 = wall_now();
		if (rl_sync_drain(k, &v, &n))
			goto out;
		t1 = wall_now();
		for (size_t i = 0; i < n; i++)
			v[i].units = 1;
		if (rl_sync_charge(k, v, n, NULL))
			goto out;
		drain[r] = (t1 - t0) * 1000;
		charge[r] = (wall_now() - t1) * 1000;
	}
	printf("%lu\t%lu\t%zu\t%.2f\t%.2f\t%.2f\t%.2f\n", sources, rounds, n,
	       bench_median(drain, (int)rounds), bench_max(drain, (int)rounds),
	       bench_median(charge, (int)rounds), bench_max(charge, (int)rounds));
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "rl-bench sync-cost: the kernel side failed\n");
	free(v);
	rl_sync_kern_close(k, false);
	bpf_link__destroy(link);
	bench_ref__destroy(drv);
	if (lim)
		rl_prog_destroy(lim);
	free(drain);
	free(charge);
	return ret;
}

int bench_sync_cost(int argc, char **argv)
{
	const char *url = NULL, *policy = "algo=token-bucket\nrate=1000/1\nburst=100\n";
	struct rl_sync_agent *ag = NULL;
	struct rl_sync_item *items = NULL;
	unsigned long sources = 1000, nodes = 3, rounds = 20;
	__u64 cmds = 0, tx = 0, rx = 0, fallbacks = 0;
	double cpu = 0, *rtt = NULL;
	char err[1024], group[32];
	int ret = 1;

	static const struct option opts[] = {
		{ "redis", required_argument, NULL, 'u' },
		{ "sources", required_argument, NULL, 's' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "kernel", no_argument, NULL, 'k' },
		{},
	};
	bool kernel = false;
	int c;

	bench_opts_begin();
	while ((c = bench_next_opt("sync-cost", argc, argv, opts)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 's':
			sources = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			nodes = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			kernel = true;
			break;
		default:
			return 2;
		}
	}
	if (kernel) {
		if (url || !sources || sources > BENCH_WIDE4_SIZE || (sources & (sources - 1)) ||
		    !rounds) {
			fprintf(stderr,
				"rl-bench sync-cost --kernel: --sources 1-%u, a power of two "
				"[--rounds R]\n",
				BENCH_WIDE4_SIZE);
			return 2;
		}
		return kernel_cost(sources, rounds);
	}
	if (!url || !sources || sources > 10000000 || !nodes || nodes > MAX_NODES || !rounds) {
		fprintf(stderr, "rl-bench sync-cost: --redis URL --sources 1-10000000 "
				"[--nodes 1-8] [--rounds R]\n");
		return 2;
	}
	ag = calloc(nodes, sizeof(*ag));
	items = calloc(sources, sizeof(*items));
	rtt = calloc(nodes * rounds, sizeof(*rtt));
	if (!ag || !items || !rtt)
		goto out;
	snprintf(group, sizeof(group), "bench-%lu", sources);
	for (unsigned long k = 0; k < nodes; k++) {
		struct rl_sync_cfg cfg = {
			.group = group,
			/* 1 s: a round trip of 100,000 sources takes longer than 100 ms. */
			.interval_ns = 1000000000ULL,
			.fallback = RL_SYNC_FB_LOCAL,
		};
		char *node = malloc(16);

		if (!node)
			goto out;
		snprintf(node, 16, "n%lu", k);
		cfg.node = node;
		if (rl_redis_url_parse(url, &cfg.url, err, sizeof(err)) ||
		    rl_sync_agent_init(&ag[k], &cfg, policy, err, sizeof(err))) {
			fprintf(stderr, "rl-bench sync-cost: %s\n", err);
			goto out;
		}
	}
	/* Sources as the kernel side names them: 10.0.0.0/8 text only, never sent. */
	for (unsigned long i = 0; i < sources; i++)
		snprintf(items[i].src, sizeof(items[i].src), "10.%lu.%lu.%lu/32", (i >> 16) & 255,
			 (i >> 8) & 255, i & 255);
	for (unsigned long r = 0; r < rounds + 1; r++) {
		for (unsigned long k = 0; k < nodes; k++) {
			struct rl_sync_agent *a = &ag[k];
			__u64 c0 = a->commands_total, tx0 = a->st.redis_tx_bytes_total,
			      rx0 = a->st.redis_rx_bytes_total;
			double w0, c;
			int res;

			for (unsigned long i = 0; i < sources; i++)
				items[i].units = 1 + (i + r + k) % 7;
			c = cpu_now();
			w0 = wall_now();
			res = rl_sync_agent_step(a, items, sources, err, sizeof(err));
			if (res < 0) {
				fprintf(stderr, "rl-bench sync-cost: %s\n", err);
				goto out;
			}
			/* Round 0 fills Redis: not counted. */
			if (!r)
				continue;
			rtt[(r - 1) * nodes + k] = (wall_now() - w0) * 1000;
			cpu += cpu_now() - c;
			cmds += a->commands_total - c0;
			tx += a->st.redis_tx_bytes_total - tx0;
			rx += a->st.redis_rx_bytes_total - rx0;
			fallbacks += res == 1;
		}
	}
	qsort(rtt, nodes * rounds, sizeof(*rtt), cmp_double);
	{
		double n = (double)(nodes * rounds);

		printf("%lu\t%lu\t%lu\t%.2f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%llu\n", sources, nodes,
		       rounds, (double)cmds / n, (double)tx / n, (double)rx / n, cpu / n * 1e6,
		       rtt[nodes * rounds / 2], rtt[nodes * rounds - 1],
		       (unsigned long long)fallbacks);
	}
	ret = fallbacks ? 1 : 0;
	if (fallbacks)
		fprintf(stderr, "rl-bench sync-cost: %llu round trips failed\n",
			(unsigned long long)fallbacks);
out:
	if (ag)
		for (unsigned long k = 0; k < nodes; k++) {
			free((char *)ag[k].cfg.node);
			rl_sync_agent_fini(&ag[k]);
		}
	free(ag);
	free(items);
	free(rtt);
	return ret;
}
