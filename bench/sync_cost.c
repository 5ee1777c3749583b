// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench sync-cost: what one node's round costs, per interval, with N
 * active sources of which S are active on every node: Redis commands and
 * exchanges, bytes each way, the agent's CPU and the round's duration, and
 * the servers' CPU. K agents (nodes) in this process run the agent's real
 * round (user/lib/sync_agent.h: the table of what to send, the step, what the
 * reply taught) and the real scripts against the real server(s) given by
 * --redis; the drained lists are synthetic (each node: the S shared sources
 * and N - S of its own, every one active every round), so the kernel's
 * drain and charge are not in the CPU figure.
 *
 *	rl-bench sync-cost --redis URL --sources N [--shared S] [--nodes K]
 *		[--rounds R] [--warmup W] [--interval MS] [--timeout MS] [--info URL]...
 *
 * --warmup rounds first, not counted (the first round of a source claims it;
 * with 100,000 sources a node claims 10,000 a round). --interval sets what
 * the agent derives from it (TTL, stale time, when claims are sent again);
 * each round may take up to --timeout (1 s) whatever it is. --info: a server whose
 * CPU (INFO cpu) the counted rounds cost (repeat it for each master of a
 * cluster).
 *
 * Prints one line: sources shared nodes rounds sent commands exchanges
 * tx_bytes rx_bytes agent_cpu_us rtt_ms_median rtt_ms_max fallbacks
 * server_cpu_us, each per node per round (sent: sources in the request).
 *
 * The same file builds against the library before issue #27 (bench/sync.sh
 * builds that for its "before" column): there the round is the table's merge
 * (every source drained lately) and the step.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include "bench.h"
#include "sync_agent.h"

#define MAX_NODES 8
#define MAX_INFO  16

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

/* Sources as the kernel side names them: 10.0.0.0/8 text only, never sent. */
static int name_10(void *ctx, const struct rl_state_key *k, char *buf, size_t len)
{
	unsigned int a = ntohl(k->src.addr[3]);

	(void)ctx;
	snprintf(buf, len, "10.%u.%u.%u/32", (a >> 16) & 255, (a >> 8) & 255, a & 255);
	return 0;
}

#ifdef RL_SYNC_RECENT_H
static int parse_10(void *ctx, const char *src, struct rl_state_key *k)
{
	unsigned int b, c, d;

	(void)ctx;
	if (sscanf(src, "10.%u.%u.%u/32", &b, &c, &d) != 3)
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	k->src.addr[2] = htonl(0xffff);
	k->src.addr[3] = htonl(0x0a000000U | b << 16 | c << 8 | d);
	k->gen = 1;
	return 0;
}
#endif

/* The CPU (user + sys, seconds) of the servers of @urls, or -1. */
static double servers_cpu(char **urls, int n, unsigned long timeout_ms)
{
	double sum = 0;

	for (int i = 0; i < n; i++) {
		const char *argv[] = { "INFO", "cpu" };
		struct rl_redis_url u;
		struct rl_redis *r = NULL;
		redisReply *rep = NULL;
		char err[256];
		const char *p;

		err[0] = '\0';
		if (rl_redis_url_parse(urls[i], &u, err, sizeof(err)) ||
		    rl_redis_connect_to(&u, u.host, u.port, RL_REDIS_NO_SCRIPT,
					timeout_ms * 1000000ULL, NULL, &r, err, sizeof(err)) ||
		    rl_redis_command(r, 2, argv, 0, &rep, err, sizeof(err)) ||
		    rep->type != REDIS_REPLY_STRING) {
			if (rep && rep->type == REDIS_REPLY_ERROR)
				snprintf(err, sizeof(err), "%s", rep->str);
			fprintf(stderr, "rl-bench sync-cost: --info %s: %s\n", urls[i], err);
			if (rep)
				freeReplyObject(rep);
			rl_redis_close(r);
			return -1;
		}
		p = strstr(rep->str, "used_cpu_sys:");
		sum += p ? strtod(p + 13, NULL) : 0;
		p = strstr(rep->str, "used_cpu_user:");
		sum += p ? strtod(p + 14, NULL) : 0;
		freeReplyObject(rep);
		rl_redis_close(r);
	}
	return sum;
}

int bench_sync_cost(int argc, char **argv)
{
	const char *url = NULL, *policy = "algo=token-bucket\nrate=1000/1\nburst=100\n";
	unsigned long sources = 1000, shared = ~0UL, nodes = 3, rounds = 20, warmup = ~0UL,
		      interval_ms = 100, timeout_ms = 1000;
	__u64 cmds = 0, xchg = 0, tx = 0, rx = 0, fallbacks = 0, sent = 0;
	struct rl_sync_agent *ag = NULL;
	struct rl_sync_recent *rc = NULL;
	struct rl_sync_src *drained = NULL;
	char *info[MAX_INFO], err[1024], group[48];
	double cpu = 0, *rtt = NULL, scpu0 = 0, scpu1 = 0;
	int ninfo = 0, ret = 1, c;

	static const struct option opts[] = {
		{ "redis", required_argument, NULL, 'u' },
		{ "sources", required_argument, NULL, 's' },
		{ "shared", required_argument, NULL, 'S' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{ "info", required_argument, NULL, 'I' },
		{ "timeout", required_argument, NULL, 't' },
		{},
	};

	bench_opts_begin();
	while ((c = bench_next_opt("sync-cost", argc, argv, opts)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 's':
			sources = strtoul(optarg, NULL, 0);
			break;
		case 'S':
			shared = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			nodes = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			warmup = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			interval_ms = strtoul(optarg, NULL, 0);
			break;
		case 't':
			timeout_ms = strtoul(optarg, NULL, 0);
			break;
		case 'I':
			if (ninfo == MAX_INFO)
				return 2;
			info[ninfo++] = optarg;
			break;
		default:
			return 2;
		}
	}
	if (shared == ~0UL)
		shared = sources;
	/* The first round claims the sources, 10,000 a node at most: then 2 more. */
	if (warmup == ~0UL)
		warmup = (sources - shared) / 10000 + 3;
	if (!url || !sources || sources > 1000000 || shared > sources || !nodes ||
	    nodes > MAX_NODES || !rounds || !interval_ms || !timeout_ms) {
		fprintf(stderr, "rl-bench sync-cost: --redis URL --sources 1-1000000 [--shared "
				"0-N] [--nodes 1-8] [--rounds R] [--warmup W] [--interval MS] "
				"[--timeout MS] [--info URL]...\n");
		return 2;
	}
	ag = calloc(nodes, sizeof(*ag));
	rc = calloc(nodes, sizeof(*rc));
	drained = calloc(sources, sizeof(*drained));
	rtt = calloc(nodes * rounds, sizeof(*rtt));
	if (!ag || !rc || !drained || !rtt)
		goto out;
	snprintf(group, sizeof(group), "bench-%lu-%lu-%d", sources, shared, (int)getpid());
	for (unsigned long k = 0; k < nodes; k++) {
		struct rl_sync_cfg cfg = {
			.group = group,
			.interval_ns = interval_ms * 1000000ULL,
			.fallback = RL_SYNC_FB_LOCAL,
		};
#ifdef RL_SYNC_RECENT_H
		cfg.timeout_ns = timeout_ms * 1000000ULL;
#endif
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
		/* A round may take longer than the interval here, or it would fall back. */
		rl_sync_store_set_timeout(ag[k].r, timeout_ms * 1000000ULL);
#ifdef RL_SYNC_RECENT_H
		{
			struct rl_sync_recent_cfg rcfg;

			rl_sync_agent_recent_cfg(&ag[k], &rcfg);
			rl_sync_recent_init(&rc[k], &rcfg);
		}
#else
		rl_sync_recent_init(&rc[k], (unsigned int)(ag[k].ttl_ms / interval_ms),
				    RL_SYNC_RECENT_MAX);
#endif
	}
	for (unsigned long r = 0; r < warmup + rounds; r++) {
		if (r == warmup && ninfo) {
			scpu0 = servers_cpu(info, ninfo, timeout_ms);
			if (scpu0 < 0)
				goto out;
		}
		for (unsigned long k = 0; k < nodes; k++) {
			struct rl_sync_agent *a = &ag[k];
			__u64 c0 = a->commands_total, tx0 = a->st.redis_tx_bytes_total,
			      rx0 = a->st.redis_rx_bytes_total;
#ifdef RL_SYNC_RECENT_H
			__u64 x0 = a->exchanges_total;
#endif
			double w0, c1;
			int res;

			/* S shared sources, then N - S of this node's own. */
			for (unsigned long i = 0; i < sources; i++) {
				unsigned long idx =
					i < shared ? i :
						     shared + k * (sources - shared) + (i - shared);

				memset(&drained[i], 0, sizeof(drained[i]));
				drained[i].k.src.addr[2] = htonl(0xffff);
				drained[i].k.src.addr[3] = htonl(0x0a000000U | (__u32)idx);
				drained[i].k.gen = 1;
				drained[i].units = 1 + (i + r + k) % 7;
			}
			c1 = cpu_now();
			w0 = wall_now();
#ifdef RL_SYNC_RECENT_H
			res = rl_sync_agent_round(a, &rc[k], drained, sources, name_10, parse_10,
						  NULL, err, sizeof(err));
#else
			res = rl_sync_recent_merge(&rc[k], drained, sources, name_10, NULL);
			if (!res)
				res = rl_sync_agent_step(a, rc[k].items, rc[k].nitems, err,
							 sizeof(err));
#endif
			if (res < 0) {
				fprintf(stderr, "rl-bench sync-cost: %s\n", err);
				goto out;
			}
			if (r < warmup)
				continue;
			rtt[(r - warmup) * nodes + k] = (wall_now() - w0) * 1000;
			cpu += cpu_now() - c1;
			cmds += a->commands_total - c0;
#ifdef RL_SYNC_RECENT_H
			xchg += a->exchanges_total - x0;
#else
			xchg++;
#endif
			tx += a->st.redis_tx_bytes_total - tx0;
			rx += a->st.redis_rx_bytes_total - rx0;
			sent += rc[k].nitems;
			fallbacks += res == 1;
		}
	}
	if (ninfo) {
		scpu1 = servers_cpu(info, ninfo, timeout_ms);
		if (scpu1 < 0)
			goto out;
	}
	qsort(rtt, nodes * rounds, sizeof(*rtt), cmp_double);
	{
		double n = (double)(nodes * rounds);

		printf("%lu\t%lu\t%lu\t%lu\t%.0f\t%.2f\t%.2f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%llu\t%.0f\n",
		       sources, shared, nodes, rounds, (double)sent / n, (double)cmds / n,
		       (double)xchg / n, (double)tx / n, (double)rx / n, cpu / n * 1e6,
		       rtt[nodes * rounds / 2], rtt[nodes * rounds - 1],
		       (unsigned long long)fallbacks, (scpu1 - scpu0) / n * 1e6);
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
			rl_sync_recent_free(&rc[k]);
		}
	free(ag);
	free(rc);
	free(drained);
	free(rtt);
	return ret;
}
