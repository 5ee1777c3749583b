// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* stats and top: what the limiter does, from its pinned maps. */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "config.h"
#include "loader.h"
#include "source.h"
#include "srctab.h"

#define FIELD(name) { #name, offsetof(struct rl_counters, name) }

static const struct {
	const char *name;
	size_t off;
} fields[] = {
	FIELD(rx_packets),	 FIELD(rx_bytes),	FIELD(passed),	      FIELD(passed_bytes),
	FIELD(dropped),		 FIELD(dropped_bytes),	FIELD(limited),	      FIELD(would_drop),
	FIELD(would_drop_bytes), FIELD(ipv4),		FIELD(ipv6),	      FIELD(not_ip),
	{ "malformed_eth", offsetof(struct rl_counters, malformed[RL_BAD_ETH]) },
	{ "malformed_vlan", offsetof(struct rl_counters, malformed[RL_BAD_VLAN]) },
	{ "malformed_ipv4", offsetof(struct rl_counters, malformed[RL_BAD_IPV4]) },
	{ "malformed_ihl", offsetof(struct rl_counters, malformed[RL_BAD_IHL]) },
	{ "malformed_ipv6", offsetof(struct rl_counters, malformed[RL_BAD_IPV6]) },
	FIELD(new_sources),	 FIELD(carried),	FIELD(insert_failed), FIELD(cas_retries),
	FIELD(cas_exhausted),	 FIELD(no_config),	FIELD(nd),
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

static __u64 get(const struct rl_counters *c, size_t i)
{
	return *(const __u64 *)((const char *)c + fields[i].off);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void stats_usage(FILE *f)
{
	fprintf(f,
		"Usage: " RL_PROG " stats IFACE [--json] [--watch SECONDS [--count N]]\n"
		"\n"
		"Prints the limiter's counters, summed over CPUs. With --watch, prints every\n"
		"SECONDS the per-second rates until interrupted (or N lines with --count).\n"
		"\n"
		"Counters: rx_packets/rx_bytes (every frame), passed, dropped (XDP verdicts),\n"
		"limited (dropped for being over the limit), would_drop (over the limit in\n"
		"dry-run, passed), ipv4, ipv6, not_ip (passed untouched), malformed_* by\n"
		"reason, new_sources, carried (sources carried over by set), insert_failed,\n"
		"cas_retries, cas_exhausted, no_config, nd (IPv6 neighbour discovery,\n"
		"passed untouched); and sources, the sources tracked\n"
		"now (without --watch: it walks the table). With no set in between,\n"
		"new_sources - sources is how many the LRU table has forgotten (evicted).\n");
}

static int open_iface(const char *name, struct rl_iface *ifc, struct rl_pins *pins)
{
	char err[RL_ERRLEN];

	if (rl_check_env(err, sizeof(err)) || rl_iface_get(name, ifc, err, sizeof(err)) ||
	    rl_pins_open(ifc, pins, err, sizeof(err))) {
		pr_err("%s", err);
		return -1;
	}
	return 0;
}

static void print_once(const char *iface, const struct rl_counters *c, __u64 sources,
		       bool json)
{
	if (json) {
		printf("{\"iface\":");
		rl_json_str(stdout, iface);
		for (size_t i = 0; i < N_FIELDS; i++)
			printf(",\"%s\":%llu", fields[i].name, (unsigned long long)get(c, i));
		printf(",\"sources\":%llu}\n", (unsigned long long)sources);
		return;
	}
	printf("%s:\n", iface);
	for (size_t i = 0; i < N_FIELDS; i++)
		printf("  %-18s %llu\n", fields[i].name, (unsigned long long)get(c, i));
	printf("  %-18s %llu\n", "sources", (unsigned long long)sources);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_rates(const char *iface, const struct rl_counters *a,
			const struct rl_counters *b, double dt, bool json, unsigned long line)
{
#define RATE(f) ((double)(b->f - a->f) / dt)
	char when[16];
	time_t t = time(NULL);

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
	if (json) {
		printf("{\"iface\":");
		rl_json_str(stdout, iface);
		printf(",\"time\":\"%s\",\"interval_s\":%.3f", when, dt);
		for (size_t i = 0; i < N_FIELDS; i++)
			printf(",\"%s_per_s\":%.1f", fields[i].name,
			       (double)(get(b, i) - get(a, i)) / dt);
		printf("}\n");
	} else {
		if (line % 20 == 0)
			printf("%-8s %10s %10s %10s %10s %10s %9s %10s\n", "TIME", "RX/s", "PASS/s",
			       "DROP/s", "LIMITED/s", "WOULD/s", "NEWSRC/s", "RX Mbit/s");
		printf("%-8s %10.0f %10.0f %10.0f %10.0f %10.0f %9.0f %10.2f\n", when,
		       RATE(rx_packets), RATE(passed), RATE(dropped), RATE(limited),
		       RATE(would_drop), RATE(new_sources), RATE(rx_bytes) * 8 / 1e6);
	}
	fflush(stdout);
#undef RATE
}

int cmd_stats(int argc, char **argv)
{
	struct rl_counters a, b;
	struct rl_iface ifc;
	struct rl_pins pins;
	const char *name = NULL;
	__u64 watch_ms = 0, count = 0;
	char err[RL_ERRLEN];
	bool json = false;
	int ret = 1;

	for (int i = 1; i < argc; i++) {
		if (rl_is_help(argv[i])) {
			stats_usage(stdout);
			return 0;
		}
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--watch") || !strcmp(argv[i], "--count")) {
			bool w = argv[i][2] == 'w';
			__u64 v;

			if (i + 1 == argc ||
			    rl_parse_u64(argv[i + 1], 1, w ? 3600 : ~0ULL, &v, err, sizeof(err))) {
				pr_err("%s: %s", argv[i], i + 1 == argc ? "needs a value" : err);
				return 2;
			}
			i++;
			if (w)
				watch_ms = v * 1000;
			else
				count = v;
		} else if (argv[i][0] != '-' && !name) {
			name = argv[i];
		} else {
			pr_err("stats: unknown option '%s' (see " RL_PROG " stats --help)", argv[i]);
			return 2;
		}
	}
	if (!name) {
		pr_err("stats: give an interface name (see " RL_PROG " stats --help)");
		return 2;
	}
	if (count && !watch_ms) {
		pr_err("stats: --count only applies with --watch");
		return 2;
	}
	if (open_iface(name, &ifc, &pins))
		return 1;
	if (rl_counters_read(&pins, &a)) {
		pr_err("couldn't read the counters of '%s': %s", name, strerror(errno));
		goto out;
	}
	if (!watch_ms) {
		struct rl_config cfg;
		__u64 sources = 0;
		__u32 active;

		if (rl_config_read(&pins, &cfg, &active) ||
		    rl_count_sources(&pins, cfg.gen, &sources)) {
			pr_err("couldn't read the source table of '%s': %s", name, strerror(errno));
			goto out;
		}
		print_once(ifc.name, &a, sources, json);
		ret = 0;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (unsigned long line = 0; !stop && (!count || line < count); line++) {
		double t0 = now_s(), dt;

		usleep((useconds_t)(watch_ms * 1000));
		if (stop)
			break;
		if (rl_counters_read(&pins, &b)) {
			pr_err("couldn't read the counters of '%s': %s", name, strerror(errno));
			goto out;
		}
		dt = now_s() - t0;
		print_rates(ifc.name, &a, &b, dt, json, line);
		a = b;
	}
	ret = 0;
out:
	rl_pins_close(&pins);
	return ret;
}

/* ---- top ---- */

struct top_row {
	struct rl_key key;
	double used;	  /* fraction of the limit in use; >= 1: over */
	double credit;	  /* cost units that would pass now */
	double wait_s;	  /* until the next packet of cost 1 (or 64 bytes) passes */
};

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return x->used < y->used ? 1 : x->used > y->used ? -1 : 0;
}

static void source_state(const struct rl_config *cfg, __u64 state, __u64 now,
			 struct top_row *r)
{
	const struct rl_params *p = &cfg->params;
	__u64 probe = p->bytes ? 64 : 1, next;

	if (p->algo == RL_ALGO_TOKEN_BUCKET || p->algo == RL_ALGO_GCRA) {
		double vt_per_ns = (double)p->vt_mult / (double)(1ULL << RL_VT_SHIFT);
		__u64 ahead = rl_ahead(p, state, rl_vt(p, now));
		double need = p->algo == RL_ALGO_GCRA ? 1 : (double)(probe * p->unit_cost);
		double excess = (double)ahead + need - (double)p->tau;

		r->used = p->tau ? (double)ahead / (double)p->tau : 1;
		r->credit = ((double)p->tau - (double)ahead) / (double)p->unit_cost;
		if (r->credit < 0)
			r->credit = 0;
		r->wait_s = excess > 0 ? excess / vt_per_ns / 1e9 : 0;
	} else {
		__u64 e, k = rl_window(p, now, &e);
		double cur = 0, prev = 0, est;

		__u64 pc, cc;

		rl_window_counts(p, state, k, &pc, &cc);
		prev = (double)pc;
		cur = (double)cc;
		est = prev * (double)(p->window_ns - e) / (double)p->window_ns + cur;
		r->used = est / (double)p->limit;
		r->credit = est < (double)p->limit ? (double)p->limit - est : 0;
		/* Time until a packet would pass: step the core forward in 1/64-window steps. */
		r->wait_s = 0;
		for (int i = 0; i <= 128 && !rl_step(p, state, now + i * (p->window_ns / 64), probe,
						      &next);
		     i++)
			r->wait_s = (double)(i + 1) * (double)(p->window_ns / 64) / 1e9;
	}
}

static void top_usage(FILE *f)
{
	fprintf(f,
		"Usage: " RL_PROG " top IFACE [-n N] [--json]\n"
		"\n"
		"Lists the N sources (default 10) nearest to or over their limit, with their\n"
		"state: USED is the part of the burst (or window limit) in use, CREDIT what\n"
		"would pass right now (packets, or bytes with a byte rate), NEXT how long\n"
		"until its next packet would pass (for a byte rate: a 64-byte packet).\n");
}

static char *fmt_wait(double s, char *buf, size_t len)
{
	if (s <= 0)
		snprintf(buf, len, "now");
	else if (s < 1e-3)
		snprintf(buf, len, "%.1f us", s * 1e6);
	else if (s < 1)
		snprintf(buf, len, "%.1f ms", s * 1e3);
	else
		snprintf(buf, len, "%.2f s", s);
	return buf;
}

int cmd_top(int argc, char **argv)
{
	struct rl_state_key keys[1024];
	__u64 vals[1024], n = 10, now;
	struct top_row *rows = NULL;
	size_t nrows = 0, cap = 0;
	struct rl_srctab tab;
	struct rl_config cfg;
	struct rl_iface ifc;
	struct rl_pins pins;
	struct timespec ts;
	const char *name = NULL;
	char err[RL_ERRLEN], src[RL_KEY_STRLEN], w[32];
	void *in = NULL, *out;
	bool json = false;
	__u32 active, cnt;
	int ret = 1, r;

	for (int i = 1; i < argc; i++) {
		if (rl_is_help(argv[i])) {
			top_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "-n")) {
			if (i + 1 == argc || rl_parse_u64(argv[i + 1], 1, 1000000, &n, err,
							  sizeof(err))) {
				pr_err("-n: %s", i + 1 == argc ? "needs a value" : err);
				return 2;
			}
			i++;
		} else if (argv[i][0] != '-' && !name) {
			name = argv[i];
		} else {
			pr_err("top: unknown option '%s' (see " RL_PROG " top --help)", argv[i]);
			return 2;
		}
	}
	if (!name) {
		pr_err("top: give an interface name (see " RL_PROG " top --help)");
		return 2;
	}
	if (open_iface(name, &ifc, &pins))
		return 1;
	rl_srctab_init(&tab);
	if (rl_config_read(&pins, &cfg, &active)) {
		pr_err("couldn't read the configuration of '%s': %s", name, strerror(errno));
		goto out;
	}
	/* The clock of bpf_ktime_get_ns(), read after the dump: no state is newer. */
	for (;;) {
		cnt = 1024;
		r = bpf_map_lookup_batch(pins.state, in, &out, keys, vals, &cnt, NULL);
		if (r && errno != ENOENT) {
			pr_err("couldn't read the source table of '%s': %s", name, strerror(errno));
			goto out;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
		for (__u32 i = 0; i < cnt; i++) {
			struct rl_src *seen;
			struct rl_key key = keys[i].src;
			__u64 state = vals[i];
			int created;

			/*
			 * Sources not seen since the last set are still under
			 * the previous generation: show them as they will be
			 * carried over. The current generation wins.
			 */
			if (keys[i].gen != cfg.gen) {
				if (!cfg.has_prev || keys[i].gen != cfg.gen - 1)
					continue;
				rl_key_mask(&key, cfg.prefix4, cfg.prefix6);
				state = rl_carry_state(&cfg, state, now);
			}
			seen = rl_srctab_get(&tab, &key, &created);
			if (!seen) {
				pr_err("out of memory");
				goto out;
			}
			if (!created) {
				if (keys[i].gen != cfg.gen)
					continue;
				source_state(&cfg, state, now, &rows[seen->state]);
				continue;
			}
			seen->state = nrows;
			if (nrows == cap) {
				struct top_row *nr = realloc(rows, (cap = cap ? cap * 2 : 1024) *
									   sizeof(*rows));

				if (!nr) {
					pr_err("out of memory");
					goto out;
				}
				rows = nr;
			}
			rows[nrows].key = key;
			source_state(&cfg, state, now, &rows[nrows]);
			nrows++;
		}
		if (r)
			break;
		in = &out;
	}
	qsort(rows, nrows, sizeof(*rows), cmp_rows);
	if (nrows > n)
		nrows = n;
	if (json) {
		printf("{\"iface\":");
		rl_json_str(stdout, ifc.name);
		printf(",\"unit\":\"%s\",\"sources\":[", cfg.params.bytes ? "bytes" : "packets");
	} else {
		printf("%-40s %8s %14s %10s\n", "SOURCE", "USED", cfg.params.bytes ? "CREDIT (B)" :
										 "CREDIT (pkt)",
		       "NEXT");
	}
	for (size_t i = 0; i < nrows; i++) {
		rl_key_str(&rows[i].key, cfg.prefix4, cfg.prefix6, src, sizeof(src));
		if (json)
			printf("%s{\"source\":\"%s\",\"used\":%.4f,\"credit\":%.3f,\"next_pass_s\":%.9f}",
			       i ? "," : "", src, rows[i].used, rows[i].credit, rows[i].wait_s);
		else
			printf("%-40s %7.1f%% %14.2f %10s\n", src, rows[i].used * 100, rows[i].credit,
			       fmt_wait(rows[i].wait_s, w, sizeof(w)));
	}
	if (json)
		printf("]}\n");
	else if (!nrows)
		printf("(no sources seen under the current configuration)\n");
	ret = 0;
out:
	rl_srctab_free(&tab);
	free(rows);
	rl_pins_close(&pins);
	return ret;
}
