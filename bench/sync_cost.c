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
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"
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
		{},
	};
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
		default:
			return 2;
		}
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
