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
#include "aggwalk.h"
#include "level.h"
#include "counters.h"
#include "env.h"
#include "json_writer.h"
#include "memory.h"
#include "pins.h"
#include "rl_block.h"
#include "rulemaps.h"
#include "xdp_attach.h"
#include "source.h"
#include "srctab.h"
#include "sync_kern.h"
#include "rl_sa.h"
#include "rl_hot.h"

/* The counters, by their names in the counter table (user/lib/counters.h). */
#define N_FIELDS rl_counter_count

static const char *field_name(size_t i)
{
	return rl_counter_table[i].name;
}

static __u64 get(const struct rl_counters *c, size_t i)
{
	return *(const __u64 *)((const char *)c + rl_counter_table[i].off);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
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

/* One rule's counters, as a JSON object or a line of the table. */
static void print_rule(struct rl_json *w, const char *name, const struct rl_rule_counters *r,
		       __u64 sources)
{
	static const char *const names[] = { "passed",	      "passed_bytes", "dropped",
					     "dropped_bytes", "allowed",      "denied",
					     "limited",	      "blocked",      "would_drop",
					     "agg_limited",   "iface_limited" };
	const __u64 *v = (const __u64 *)r;

	_Static_assert(sizeof(names) / sizeof(names[0]) * sizeof(__u64) ==
			       sizeof(struct rl_rule_counters),
		       "a name per rule counter");
	if (!w) {
		printf("  %-31s %12llu %12llu %10llu %10llu %10llu %10llu %10llu %10llu\n", name,
		       (unsigned long long)r->passed, (unsigned long long)r->dropped,
		       (unsigned long long)r->allowed, (unsigned long long)r->denied,
		       (unsigned long long)r->limited, (unsigned long long)r->blocked,
		       (unsigned long long)r->would_drop, (unsigned long long)sources);
		return;
	}
	jw_start_object(w);
	jw_string_field(w, "name", name);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		jw_uint_field(w, names[i], v[i]);
	jw_uint_field(w, "sources", sources);
	jw_end_object(w);
}

/*
 * Per rule, when there are rules: each rule's own counters, and default's,
 * which are the interface's less those of the other rules (the frames no
 * rule looks at, such as ARP, count as default's).
 */
static void print_rules(struct rl_json *w, const struct rl_pins *pins,
			const struct rl_rules_cfg *cfg, const struct rl_counters *c, __u64 sources)
{
	struct rl_rule_counters r, d = {};

	if (w) {
		jw_name(w, "rules");
		jw_start_array(w);
	} else {
		printf("  rules:\n  %-31s %12s %12s %10s %10s %10s %10s %10s %10s\n", "RULE",
		       "PASSED", "DROPPED", "ALLOWED", "DENIED", "LIMITED", "BLOCKED", "WOULD_DROP",
		       "SOURCES");
	}
	d.passed = c->passed;
	d.passed_bytes = c->passed_bytes;
	d.dropped = c->dropped;
	d.dropped_bytes = c->dropped_bytes;
	for (__u32 i = 0; i < cfg->n; i++) {
		__u64 n = 0;

		if (rl_rules_counters(pins, cfg->r[i].slot, &r) ||
		    rl_rules_sources(pins, cfg->r[i].slot, cfg->r[i].gen, &n))
			memset(&r, 0, sizeof(r));
		print_rule(w, cfg->r[i].name, &r, n);
		d.passed -= r.passed;
		d.passed_bytes -= r.passed_bytes;
		d.dropped -= r.dropped;
		d.dropped_bytes -= r.dropped_bytes;
	}
	d.limited = c->limited;
	d.would_drop = c->would_drop;
	print_rule(w, RL_RULE_DEFAULT, &d, sources);
	if (w)
		jw_end_array(w);
}

/* The sync agent's status (user/lib/sync_kern.h), if an agent ever ran on this limiter. */
static void print_sync(struct rl_json *w, const struct rl_pins *pins)
{
	struct rl_sync_status st;
	struct timespec ts;
	double age = -1;

	if (rl_sync_status_read(pins, &st))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (st.last_sync_ns)
		age = ((double)ts.tv_sec * 1e9 + (double)ts.tv_nsec - (double)st.last_sync_ns) /
		      1e9;
	if (w) {
		jw_name(w, "sync");
		jw_start_object(w);
		jw_string_field(w, "state", rl_sync_state_name(&st));
		jw_bool_field(w, "running", rl_sync_agent_alive(&st));
		jw_uint_field(w, "pid", st.pid);
		jw_string_field(w, "group", st.group);
		jw_string_field(w, "node", st.node);
		jw_string_field(w, "master", st.master);
		jw_double_field(w, "interval_s", "%.3f", (double)st.interval_ns / 1e9);
		/* Never synced: null. */
		jw_name(w, "last_sync_age_s");
		if (age >= 0)
			jw_double(w, "%.3f", age);
		else
			jw_null(w);
		jw_double_field(w, "lag_s", "%.6f", (double)st.lag_ns / 1e9);
		jw_uint_field(w, "sources_active", st.sources_active);
		jw_uint_field(w, "sources_shared", st.sources_shared);
		jw_uint_field(w, "nodes", st.nodes);
		jw_uint_field(w, "syncs_total", st.syncs_total);
		jw_uint_field(w, "errors_total", st.errors_total);
		jw_uint_field(w, "fallback_intervals_total", st.fallback_intervals_total);
		jw_uint_field(w, "charged_units_total", st.charged_units_total);
		jw_uint_field(w, "charges_refused_total", st.charges_refused_total);
		jw_uint_field(w, "redis_tx_bytes_total", st.redis_tx_bytes_total);
		jw_uint_field(w, "redis_rx_bytes_total", st.redis_rx_bytes_total);
		jw_end_object(w);
		return;
	}
	printf("  sync:\n");
	printf("    %-16s %s (pid %u, group %s, node %s, every %.3f s)\n", "state",
	       rl_sync_state_name(&st), st.pid, st.group, st.node, (double)st.interval_ns / 1e9);
	if (age >= 0)
		printf("    %-16s %.3f s ago, lag %.3f ms, on %s\n", "last sync", age,
		       (double)st.lag_ns / 1e6, st.master[0] ? st.master : "?");
	else
		printf("    %-16s never\n", "last sync");
	printf("    %-16s %llu active, %llu shared, %llu nodes\n", "sources",
	       (unsigned long long)st.sources_active, (unsigned long long)st.sources_shared,
	       (unsigned long long)st.nodes);
	printf("    %-16s %llu syncs, %llu errors, %llu fallback intervals, %llu units charged\n",
	       "totals", (unsigned long long)st.syncs_total, (unsigned long long)st.errors_total,
	       (unsigned long long)st.fallback_intervals_total,
	       (unsigned long long)st.charged_units_total);
	if (st.charges_refused_total)
		printf("    %-16s %llu charges over what the fleet can have passed\n", "refused",
		       (unsigned long long)st.charges_refused_total);
	printf("    %-16s %llu bytes sent, %llu received\n", "redis",
	       (unsigned long long)st.redis_tx_bytes_total,
	       (unsigned long long)st.redis_rx_bytes_total);
}

/*
 * The room of the IPv4 table the policy uses: slots of rl_sets4 or rl_wide4
 * (RL_SA_SLOTS_PER_SOURCE per source of --max-sources, a power of two of
 * sets), or entries of rl_state4; 0 if it cannot be read.
 */
static __u64 table4_slots(const struct rl_pins *pins, __u32 table4)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = table4 == RL_TABLE4_SA	  ? pins->sets4 :
		 table4 == RL_TABLE4_WIDE ? pins->wide4 :
					    pins->state4;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return table4 == RL_TABLE4_LRU ? info.max_entries : (__u64)info.max_entries * RL_SA_WAYS;
}

static void print_once(const char *iface, const struct rl_pins *pins, const struct rl_counters *c,
		       __u64 sources, __u32 table4, bool json)
{
	__u64 slots = table4_slots(pins, table4);
	struct rl_rules_cfg cfg;
	bool rules = !rl_rules_read(pins, &cfg) && cfg.n;
	/* The kernel memory of its maps (user/lib/memory.h), shown when it can be read. */
	struct rl_memory mem;
	bool has_mem = !rl_memory_read(pins, &mem) && mem.max_sources4;

	if (json) {
		struct rl_json w;

		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_string_field(&w, "iface", iface);
		for (size_t i = 0; i < N_FIELDS; i++)
			jw_uint_field(&w, field_name(i), get(c, i));
		jw_uint_field(&w, "sources", sources);
		jw_uint_field(&w, "table4_slots", slots);
		if (has_mem)
			jw_uint_field(&w, "memory_bytes", mem.total);
		if (rules)
			print_rules(&w, pins, &cfg, c, sources);
		print_sync(&w, pins);
		jw_end_object(&w);
		jw_end(&w);
		return;
	}
	printf("%s:\n", iface);
	for (size_t i = 0; i < N_FIELDS; i++)
		printf("  %-18s %llu\n", field_name(i), (unsigned long long)get(c, i));
	/*
	 * What the count is against: a set-associative table keeps idle sources
	 * until their slots are needed, so it can hold about 4x --max-sources.
	 */
	printf("  %-18s %llu", "sources", (unsigned long long)sources);
	if (slots && table4 == RL_TABLE4_LRU)
		printf(" (IPv4 table: %llu entries, LRU)", (unsigned long long)slots);
	else if (slots && has_mem)
		printf(" (IPv4 table: %llu slots, %u per source of --max-sources %u)",
		       (unsigned long long)slots, RL_SA_SLOTS_PER_SOURCE, mem.max_sources4);
	else if (slots)
		printf(" (IPv4 table: %llu slots)", (unsigned long long)slots);
	putchar('\n');
	if (has_mem)
		printf("  %-18s %llu bytes (%.1f MiB, %.1f B per IPv4 source of %u)\n", "memory",
		       (unsigned long long)mem.total, mem.total / 1048576.0,
		       (double)mem.total / mem.max_sources4, mem.max_sources4);
	if (rules)
		print_rules(NULL, pins, &cfg, c, sources);
	print_sync(NULL, pins);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The rules and their counters at one time (stats --watch). */
struct rule_snap {
	struct rl_rules_cfg cfg;
	struct rl_rule_counters c[RL_RULE_SLOTS]; /* by position in cfg.r[] */
};

static void rule_snap_read(const struct rl_pins *pins, struct rule_snap *s)
{
	if (rl_rules_read(pins, &s->cfg))
		s->cfg.n = 0;
	for (__u32 i = 0; i < s->cfg.n; i++)
		if (rl_rules_counters(pins, s->cfg.r[i].slot, &s->c[i]))
			memset(&s->c[i], 0, sizeof(s->c[i]));
}

/* Per rule, the rates between @a and @b; a rule made in between is left out until the next. */
static void print_rule_rates(struct rl_json *w, const struct rule_snap *a,
			     const struct rule_snap *b, double dt)
{
	static const char *const names[] = { "passed",	      "passed_bytes", "dropped",
					     "dropped_bytes", "allowed",      "denied",
					     "limited",	      "blocked",      "would_drop" };
	char key[64];

	if (w) {
		jw_name(w, "rules");
		jw_start_array(w);
	}
	for (__u32 i = 0; i < b->cfg.n; i++) {
		const __u64 *vb = (const __u64 *)&b->c[i], *va = NULL;

		for (__u32 j = 0; j < a->cfg.n; j++)
			if (a->cfg.r[j].slot == b->cfg.r[i].slot &&
			    a->cfg.r[j].gen == b->cfg.r[i].gen)
				va = (const __u64 *)&a->c[j];
		if (!va)
			continue;
		if (!w) {
			printf("  %-31s pass/s %.0f drop/s %.0f allow/s %.0f deny/s %.0f limit/s %.0f block/s %.0f\n",
			       b->cfg.r[i].name, (vb[0] - va[0]) / dt, (vb[2] - va[2]) / dt,
			       (vb[4] - va[4]) / dt, (vb[5] - va[5]) / dt, (vb[6] - va[6]) / dt,
			       (vb[7] - va[7]) / dt);
			continue;
		}
		jw_start_object(w);
		jw_string_field(w, "name", b->cfg.r[i].name);
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			snprintf(key, sizeof(key), "%s_per_s", names[k]);
			jw_double_field(w, key, "%.1f", (vb[k] - va[k]) / dt);
		}
		jw_end_object(w);
	}
	if (w)
		jw_end_array(w);
}

static void print_rates(const char *iface, const struct rl_counters *a, const struct rl_counters *b,
			const struct rule_snap *ra, const struct rule_snap *rb, double dt,
			bool json, unsigned long line)
{
#define RATE(f) ((double)(b->f - a->f) / dt)
	char when[16];
	time_t t = time(NULL);

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
	if (json) {
		struct rl_json w;
		char key[64];

		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_string_field(&w, "iface", iface);
		jw_string_field(&w, "time", when);
		jw_double_field(&w, "interval_s", "%.3f", dt);
		for (size_t i = 0; i < N_FIELDS; i++) {
			snprintf(key, sizeof(key), "%s_per_s", field_name(i));
			jw_double_field(&w, key, "%.1f", (double)(get(b, i) - get(a, i)) / dt);
		}
		if (rb->cfg.n)
			print_rule_rates(&w, ra, rb, dt);
		jw_end_object(&w);
		jw_end(&w);
	} else {
		if (line % 20 == 0)
			printf("%-8s %10s %10s %10s %10s %10s %9s %10s\n", "TIME", "RX/s", "PASS/s",
			       "DROP/s", "LIMITED/s", "WOULD/s", "NEWSRC/s", "RX Mbit/s");
		printf("%-8s %10.0f %10.0f %10.0f %10.0f %10.0f %9.0f %10.2f\n", when,
		       RATE(rx_packets), RATE(passed), RATE(dropped), RATE(limited),
		       RATE(would_drop), RATE(new_sources), RATE(rx_bytes) * 8 / 1e6);
		if (rb->cfg.n)
			print_rule_rates(NULL, ra, rb, dt);
	}
	fflush(stdout);
#undef RATE
}

/* The id of the map @fd, or of the one pinned at @dir/rl_counters now; 0 if none. */
static __u32 counters_id(int fd, const char *dir)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int pin = -1;

	if (dir) {
		snprintf(path, sizeof(path), "%s/rl_counters", dir);
		fd = pin = bpf_obj_get(path);
	}
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	if (pin >= 0)
		close(pin);
	return info.id;
}

/* "re-attached" or "detached", as a line of the output. */
static void print_event(const char *iface, const char *event, const char *text, bool json)
{
	if (json) {
		struct rl_json w;

		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_string_field(&w, "iface", iface);
		jw_string_field(&w, "event", event);
		jw_end_object(&w);
		jw_end(&w);
	} else {
		printf("%s: %s\n", iface, text);
	}
	fflush(stdout);
}

int cmd_stats(const struct rl_args *args)
{
	struct rule_snap *ra = NULL, *rb = NULL, *rt;
	struct rl_counters a, b;
	struct rl_iface ifc;
	struct rl_pins pins;
	const char *name = args->pos[0];
	__u64 count = args->count;
	double watch_s = args->watch_s;
	char err[RL_ERRLEN];
	bool json = args->json, gone = false;
	int ret = 1;

	if (count && !watch_s) {
		pr_err("stats: --count only applies with --watch");
		return 2;
	}
	if (open_iface(name, &ifc, &pins))
		return 1;
	if (rl_counters_read(&pins, &a)) {
		pr_err("couldn't read the counters of '%s': %s", name, strerror(errno));
		goto out;
	}
	if (!watch_s) {
		struct rl_config cfg;
		__u64 sources = 0;
		__u32 active;

		if (rl_config_read(&pins, &cfg, &active) ||
		    rl_count_sources(&pins, cfg.gen, &sources)) {
			pr_err("couldn't read the source table of '%s': %s", name, strerror(errno));
			goto out;
		}
		print_once(ifc.name, &pins, &a, sources, cfg.table4, json);
		ret = 0;
		goto out;
	}
	ra = calloc(1, sizeof(*ra));
	rb = calloc(1, sizeof(*rb));
	if (!ra || !rb) {
		pr_err("stats: out of memory");
		goto out;
	}
	rule_snap_read(&pins, ra);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (unsigned long line = 0; !stop && (!count || line < count); line++) {
		double t0 = now_s(), dt;
		__u32 now_id;

		rl_watch_sleep(watch_s);
		if (stop)
			break;
		/*
		 * Our fds keep the maps of the attachment we opened alive: after a
		 * detach and an attach they would show zeros forever. Follow the pins.
		 */
		now_id = counters_id(-1, ifc.pindir);
		if (now_id != counters_id(pins.counters, NULL)) {
			rl_pins_close(&pins);
			/* The interface may have been made anew too: look it up again. */
			if (!now_id || rl_iface_get(name, &ifc, err, sizeof(err)) ||
			    rl_pins_open(&ifc, &pins, err, sizeof(err)) ||
			    rl_counters_read(&pins, &a)) {
				rl_pins_close(&pins);
				if (!gone)
					print_event(ifc.name, "detached",
						    "detached; waiting for it to be attached again",
						    json);
				gone = true;
				continue;
			}
			rule_snap_read(&pins, ra);
			/* A new baseline: rates across two attachments mean nothing. */
			print_event(ifc.name, "reattached",
				    "re-attached: new maps, rates start again", json);
			gone = false;
			continue;
		}
		if (rl_counters_read(&pins, &b)) {
			pr_err("couldn't read the counters of '%s': %s", name, strerror(errno));
			goto out;
		}
		rule_snap_read(&pins, rb);
		dt = now_s() - t0;
		print_rates(ifc.name, &a, &b, ra, rb, dt, json, line);
		a = b;
		rt = ra;
		ra = rb;
		rb = rt;
	}
	ret = 0;
out:
	free(ra);
	free(rb);
	rl_pins_close(&pins);
	return ret;
}

/* ---- top ---- */

struct top_row {
	struct rl_key key;
	double used; /* fraction of the limit in use; >= 1: over */
	double credit; /* cost units that would pass now */
	double wait_s; /* until the next packet of cost 1 (or 64 bytes) passes */
	/*
	 * The state read was newer than the clock read with it, further ahead
	 * than the policy can store: shown at the most the policy allows
	 * (rl_state_walk() reads the clock after each state, so this takes a
	 * clock that is not monotonic, or a bug).
	 */
	bool clamped;
	bool blocked; /* a rule with --block holds it: NEXT is the time left */
	const char *rule; /* the rule whose limit tracks it, NULL: the default policy */
	__u8 prefix4, prefix6; /* its key's prefixes, to print it */
};

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return x->used < y->used ? 1 : x->used > y->used ? -1 : 0;
}

static void source_state(const struct rl_config *cfg, __u64 state, __u64 now, struct top_row *r)
{
	const struct rl_params *p = &cfg->params;
	__u64 probe = p->bytes ? 64 : 1, next;

	if (p->algo == RL_ALGO_TOKEN_BUCKET || p->algo == RL_ALGO_GCRA) {
		double vt_per_ns = (double)p->vt_mult / (double)(1ULL << RL_VT_SHIFT);
		__u64 ahead = rl_ahead(p, state, rl_vt(p, now));
		/*
		 * Packets never take a state past a full bucket plus the
		 * largest packet (policy.c: h); fleet sync charges may add a
		 * debt up to the largest storable TAT.
		 */
		__u64 cap = cfg->sync_count ? p->ahead_max - RL_SKEW_VT :
					      p->tau + p->unit_cost * (p->bytes ? RL_MAX_FRAME : 1);
		double need = p->algo == RL_ALGO_GCRA ? 1 : (double)(probe * p->unit_cost);
		double excess;

		r->clamped = ahead > cap;
		if (r->clamped)
			ahead = cap;
		excess = (double)ahead + need - (double)p->tau;
		r->used = p->tau ? (double)ahead / (double)p->tau : 1;
		r->credit = ((double)p->tau - (double)ahead) / (double)p->unit_cost;
		if (r->credit < 0)
			r->credit = 0;
		r->wait_s = excess > 0 ? excess / vt_per_ns / 1e9 : 0;
	} else {
		__u64 e, k = rl_window(p, now, &e);
		double cur = 0, prev = 0, est;

		__u64 pc, cc;

		/* A state already in the next window: counted from its start. */
		k = rl_window_ahead(p, state, k, &e);
		r->clamped = false;
		rl_window_counts(p, state, k, &pc, &cc);
		prev = (double)pc;
		cur = (double)cc;
		est = prev * (double)(p->window_ns - e) / (double)p->window_ns + cur;
		r->used = est / (double)p->limit;
		r->credit = est < (double)p->limit ? (double)p->limit - est : 0;
		/* Time until a packet would pass: step the core forward in 1/64-window steps. */
		r->wait_s = 0;
		for (int i = 0;
		     i <= 128 && !rl_step(p, state, now + i * (p->window_ns / 64), probe, &next);
		     i++)
			r->wait_s = (double)(i + 1) * (double)(p->window_ns / 64) / 1e9;
	}
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

/*
 * The sources top found in rl_hot (key and table: 0 the default policy's,
 * else the rule's slot + 1), so that the sample that follows does not list
 * them twice: at most RL_HOT_ENTRIES, in a table twice that size.
 */
#define TOP_HOT_CAP (2 * RL_HOT_ENTRIES)

struct top_hot_seen {
	struct rl_key key;
	__u32 rule; /* + 1; 0: an empty entry */
};

struct top_walk {
	const struct rl_config *cfg;
	struct rl_srctab tab;
	struct top_row *rows;
	size_t nrows, cap;
	bool one; /* --source: only rows whose key holds @addr */
	struct rl_key addr;
	bool from_hot; /* the sources of rl_hot being looked up */
	struct top_hot_seen *hot; /* TOP_HOT_CAP of them, or NULL */
};

/* Was @key of table @rule found in rl_hot (with @add: now it is)? */
static bool top_hot_seen(struct top_walk *t, const struct rl_key *key, __u32 rule, bool add)
{
	__u32 i;

	if (!t->hot)
		return false;
	i = rl_hot_idx(key->addr[0], key->addr[1], key->addr[2], key->addr[3], rule) &
	    (TOP_HOT_CAP - 1);
	for (;; i = (i + 1) & (TOP_HOT_CAP - 1)) {
		struct top_hot_seen *s = &t->hot[i];

		if (!s->rule) {
			if (add) {
				s->key = *key;
				s->rule = rule + 1;
			}
			return false;
		}
		if (s->rule == rule + 1 && !memcmp(&s->key, key, sizeof(*key)))
			return true;
	}
}

/* A new row, its key set; NULL when out of memory. */
static struct top_row *top_add(struct top_walk *t, const struct rl_key *key, const char *rule,
			       unsigned int prefix4, unsigned int prefix6)
{
	struct top_row *r;

	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct top_row *nr = realloc(t->rows, cap * sizeof(*nr));

		if (!nr)
			return NULL;
		t->rows = nr;
		t->cap = cap;
	}
	r = &t->rows[t->nrows++];
	memset(r, 0, sizeof(*r));
	r->key = *key;
	r->rule = rule;
	r->prefix4 = (__u8)prefix4;
	r->prefix6 = (__u8)prefix6;
	return r;
}

/* Does the source @key (masked by @prefix4/@prefix6) hold --source's address? */
static bool top_holds(const struct top_walk *t, const struct rl_key *key, unsigned int prefix4,
		      unsigned int prefix6)
{
	struct rl_key m = t->addr;

	rl_key_mask(&m, prefix4, prefix6);
	return !memcmp(&m, key, sizeof(m));
}

static int top_one(const struct rl_state_key *k, __u64 state, __u64 read_ns, void *ctx)
{
	struct top_walk *t = ctx;
	const struct rl_config *cfg = t->cfg;
	struct rl_key key = k->src;
	struct top_row *row;
	struct rl_src *seen;
	/*
	 * The clock read just after the state: the state is never newer. A
	 * walk of a large table takes seconds on a busy machine, and a clock
	 * read once before it showed the sources the idle sweep or a packet
	 * rewrote since as far over their limit.
	 */
	__u64 now = read_ns;
	int created;
	/*
	 * Sources not seen since the last set are still under the previous
	 * generation: show them as they will be carried over. The current
	 * generation wins.
	 */
	if (k->gen != cfg->gen) {
		if (!cfg->has_prev || k->gen != cfg->gen - 1)
			return 0;
		rl_key_mask(&key, cfg->prefix4, cfg->prefix6);
		state = rl_carry_state(cfg, state, now);
	}
	if (t->one && !top_holds(t, &key, cfg->prefix4, cfg->prefix6))
		return 0;
	if (!cfg->has_prev) {
		/*
		 * One generation, one state per source: only a source found in
		 * rl_hot can come again, in the sample. (The table of every
		 * source seen, below, costs a cache miss per source.)
		 */
		if (top_hot_seen(t, &key, 0, t->from_hot) && !t->from_hot)
			return 0;
		row = top_add(t, &key, NULL, cfg->prefix4, cfg->prefix6);
		if (!row)
			return -ENOMEM;
		source_state(cfg, state, now, row);
		return 0;
	}
	seen = rl_srctab_get(&t->tab, &key, &created);
	if (!seen)
		return -ENOMEM;
	if (!created) {
		if (k->gen == cfg->gen)
			source_state(cfg, state, now, &t->rows[seen->state]);
		return 0;
	}
	seen->state = t->nrows;
	row = top_add(t, &key, NULL, cfg->prefix4, cfg->prefix6);
	if (!row)
		return -ENOMEM;
	source_state(cfg, state, now, row);
	return 0;
}

/* A source that a rule's limit tracks, as the default policy's are shown. */
static int top_rule_one(const struct rl_rstate_key *k, const struct rl_krule *r,
			const struct rl_block_state *s, __u64 now, void *ctx)
{
	struct top_walk *t = ctx;
	struct top_row *row;

	if (r->action != RL_RULE_LIMIT)
		return 0;
	if (t->one && !top_holds(t, &k->src, r->cfg.prefix4, r->cfg.prefix6))
		return 0;
	if (top_hot_seen(t, &k->src, (__u32)k->slot + 1, t->from_hot) && !t->from_hot)
		return 0;
	row = top_add(t, &k->src, r->name, r->cfg.prefix4, r->cfg.prefix6);
	if (!row)
		return -ENOMEM;
	if (s->until > now) {
		row->blocked = true;
		row->used = 1;
		row->wait_s = (double)(s->until - now) / 1e9;
		return 0;
	}
	source_state(&r->cfg, s->state, now, row);
	return 0;
}

/*
 * --source: the default policy's state that holds the address, looked up
 * rather than walked for (a walk of a large table takes seconds). One not
 * moved yet from the previous generation (after a set) is found by a walk.
 */
static int top_lookup(const struct rl_pins *pins, struct top_walk *t)
{
	const struct rl_config *cfg = t->cfg;
	struct rl_state_key k = { .src = t->addr, .gen = cfg->gen };
	struct timespec ts;
	__u64 val;
	int r;

	rl_key_mask(&k.src, cfg->prefix4, cfg->prefix6);
	r = rl_state_lookup(pins, &k, &val);
	if (r == -ENOENT)
		return cfg->has_prev ? rl_state_walk(pins, top_one, t) : 0;
	if (r)
		return r;
	/* The clock after the state, as rl_state_walk() reads it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return top_one(&k, val, (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec, t);
}

/* What a view of top read: the limited sources looked up, the sample, the rule states. */
struct top_read {
	struct rl_walk_budget b;
	__u64 limited; /* sources of rl_hot looked up */
	__u64 rule_states; /* rl_rstate entries read */
	bool rules_whole;
};

/*
 * Where the sample of the next view starts (--watch): where the last one
 * stopped, so that successive views read the whole table in turn. The first
 * view draws it.
 */
static __u32 top_next_start;
static bool top_start_drawn;

static __u32 top_sample_start(void)
{
	struct timespec ts;
	__u32 x;

	if (top_start_drawn)
		return top_next_start;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (__u32)ts.tv_nsec ^ (__u32)getpid() * 0x9e3779b9U;
	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 12;
	top_start_drawn = true;
	return x;
}

/*
 * Bounded: the sources the kernel last saw over their limit (rl_hot), each
 * looked up, then a sample of the tables: about a->top_sample sources from a
 * set drawn at random, and as many rule states. With --all every source.
 */
static int top_read(const struct rl_args *a, const struct rl_pins *pins,
		    const struct rl_config *cfg, const struct rl_rules_cfg *rules,
		    struct top_walk *t, struct top_read *rd)
{
	struct rl_state_key *keys = NULL;
	struct rl_rstate_key *rkeys = NULL;
	size_t nk = 0, nr = 0;
	struct rl_hot *hot = NULL;
	__u64 max = a->top_all ? 0 : a->top_sample;
	int r;

	memset(rd, 0, sizeof(*rd));
	if (!a->top_all) {
		hot = malloc(sizeof(*hot));
		keys = calloc(RL_HOT_ENTRIES, sizeof(*keys));
		rkeys = calloc(RL_HOT_ENTRIES, sizeof(*rkeys));
		t->hot = calloc(TOP_HOT_CAP, sizeof(*t->hot));
		if (!hot || !keys || !rkeys || !t->hot) {
			r = -ENOMEM;
			goto out;
		}
		r = rl_hot_read(pins, hot);
		if (r)
			goto out;
		for (__u32 i = 0; i < RL_HOT_ENTRIES; i++) {
			const struct rl_hot_ent *e = &hot->e[i];
			__u32 gen;

			if (!e->rule && !e->gen && !e->src.addr[0] && !e->src.addr[1] &&
			    !e->src.addr[2] && !e->src.addr[3])
				continue; /* never written */
			if (e->rule) {
				rkeys[nr].src = e->src;
				rkeys[nr].slot = e->rule - 1;
				rkeys[nr++].gen = e->gen;
				continue;
			}
			/* The current generation's, or the previous one's not moved yet. */
			if (e->gen == (__u16)cfg->gen)
				gen = cfg->gen;
			else if (cfg->has_prev && e->gen == (__u16)(cfg->gen - 1))
				gen = cfg->gen - 1;
			else
				continue;
			keys[nk].src = e->src;
			keys[nk++].gen = gen;
		}
		t->from_hot = true;
		r = rl_state_lookup_many(pins, keys, nk, &rd->limited, top_one, t);
		if (!r && nr && rules) {
			r = rl_rule_states_lookup(pins, rules, cfg->clock, rkeys, nr, top_rule_one,
						  t);
			rd->limited += nr;
		}
		t->from_hot = false;
		if (r)
			goto out;
	}
	rd->b.max_states = max;
	rd->b.start = top_sample_start();
	r = rl_state_walk_some(pins, &rd->b, top_one, t);
	if (r)
		goto out;
	top_next_start = rd->b.start + (__u32)rd->b.sets_read;
	rd->rules_whole = true;
	if (rules && rules->n) {
		r = rl_rule_states_walk(pins, rules, cfg->clock, max, &rd->rule_states,
					top_rule_one, t);
		rd->rules_whole = !max || rd->rule_states < max;
	}
out:
	free(hot);
	free(keys);
	free(rkeys);
	return r;
}

/* The states of the levels above the source, gathered for top (user/lib/aggwalk.h). */
struct top_levels {
	struct rl_level_row *rows;
	size_t n, cap;
	const struct rl_key *addr; /* --source: only the levels that hold it */
};

static int top_level_one(const struct rl_level_row *row, void *ctx)
{
	struct top_levels *t = ctx;

	if (t->addr && row->id == RL_LVL_PREFIX) {
		struct rl_key m;

		rl_level_key(row->level, RL_LVL_PREFIX, t->addr, &m);
		if (memcmp(&m, &row->key.src, sizeof(m)))
			return 0;
	}
	/* The admission cap's own bucket is no limit on packets: not shown. */
	if (row->id == RL_LVL_ADMIT)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct rl_level_row *r = realloc(t->rows, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->rows = r;
		t->cap = cap;
	}
	t->rows[t->n++] = *row;
	return 0;
}

static int cmp_level_rows(const void *a, const void *b)
{
	const struct rl_level_row *x = a, *y = b;

	return x->used < y->used ? 1 : x->used > y->used ? -1 : 0;
}

/*
 * top's second table: the aggregates and the other levels above the
 * source nearest to or over their limits, at most -n of them (with
 * --source, those that hold the address). In JSON, the "levels" array.
 */
static int top_levels_show(const struct rl_args *a, const struct rl_pins *pins,
			   const struct rl_config *cfg, const struct rl_rules_cfg *rules,
			   const struct rl_key *addr, struct rl_json *jw)
{
	struct top_levels t = { .addr = addr };
	char name[RL_KEY_STRLEN], w[32];
	size_t n;
	int r;

	r = rl_levels_walk(pins, cfg, rules, top_level_one, &t);
	if (r) {
		free(t.rows);
		return r;
	}
	qsort(t.rows, t.n, sizeof(*t.rows), cmp_level_rows);
	n = t.n < a->top_n ? t.n : a->top_n;
	if (jw) {
		jw_name(jw, "levels");
		jw_start_array(jw);
	} else if (n) {
		printf("\n%-40s %-10s %-15s %8s %14s %10s\n", "AGGREGATE", "LEVEL", "RULE", "USED",
		       "CREDIT", "NEXT");
	}
	for (size_t i = 0; i < n; i++) {
		const struct rl_level_row *row = &t.rows[i];

		rl_level_row_str(row, name, sizeof(name));
		if (jw) {
			jw_start_object(jw);
			jw_string_field(jw, "aggregate", name);
			jw_string_field(jw, "level", rl_level_name(row->id));
			jw_string_field(jw, "rule", row->rule ? row->rule->name : "default");
			jw_string_field(jw, "unit", row->level->params.bytes ? "bytes" : "packets");
			jw_double_field(jw, "used", "%.4f", row->used);
			jw_double_field(jw, "credit", "%.3f", row->credit);
			jw_double_field(jw, "next_pass_s", "%.9f", row->wait_s);
			jw_end_object(jw);
		} else {
			printf("%-40s %-10s %-15s %7.1f%% %14.2f %10s\n", name,
			       rl_level_name(row->id), row->rule ? row->rule->name : "default",
			       row->used * 100, row->credit, fmt_wait(row->wait_s, w, sizeof(w)));
		}
	}
	if (jw)
		jw_end_array(jw);
	free(t.rows);
	return 0;
}

/* One view of top: the table, or with --json one object. */
static int top_show(const struct rl_args *a, const struct rl_iface *ifc, const struct rl_pins *pins)
{
	struct top_walk t = { .one = a->top_source != NULL };
	struct rl_rules_cfg rules;
	struct top_row *rows;
	struct top_read rd = { .b.whole = true, .rules_whole = true };
	__u64 n = a->top_n;
	size_t nrows, clamped = 0;
	struct rl_config cfg;
	char src[RL_KEY_STRLEN], w[32];
	bool json = a->json, has_rules;
	struct rl_json jw;
	__u32 active;
	int ret = 1, r;

	if (t.one && rl_key_parse(a->top_source, &t.addr)) {
		pr_err("top: --source: '%s' is not an IPv4 or IPv6 address", a->top_source);
		return 2;
	}
	rl_srctab_init(&t.tab);
	if (rl_config_read(pins, &cfg, &active)) {
		pr_err("couldn't read the configuration of '%s': %s", ifc->name, strerror(errno));
		goto out;
	}
	t.cfg = &cfg;
	/* The sources that rule limits track, each under its rule's name. */
	has_rules = !rl_rules_read(pins, &rules) && rules.n;
	if (t.one) {
		r = top_lookup(pins, &t);
		if (!r && has_rules)
			r = rl_rule_states_walk(pins, &rules, cfg.clock, 0, NULL, top_rule_one, &t);
	} else {
		r = top_read(a, pins, &cfg, has_rules ? &rules : NULL, &t, &rd);
	}
	if (r) {
		pr_err("couldn't read the source tables of '%s': %s", ifc->name, strerror(-r));
		goto out;
	}
	rows = t.rows;
	nrows = t.nrows;
	for (size_t i = 0; i < nrows; i++)
		clamped += rows[i].clamped;
	qsort(rows, nrows, sizeof(*rows), cmp_rows);
	if (nrows > n)
		nrows = n;
	if (json) {
		jw_init(&jw, stdout);
		jw_start_object(&jw);
		jw_string_field(&jw, "iface", ifc->name);
		jw_string_field(&jw, "unit", cfg.params.bytes ? "bytes" : "packets");
		if (t.one)
			jw_string_field(&jw, "lookup", a->top_source);
		jw_uint_field(&jw, "clamped", clamped);
		if (!t.one) {
			/* What this view read: --sample bounds it, --all does not. */
			jw_name(&jw, "read");
			jw_start_object(&jw);
			jw_uint_field(&jw, "limited", rd.limited);
			jw_uint_field(&jw, "states", rd.b.states);
			jw_uint_field(&jw, "slots", rd.b.slots_read);
			jw_uint_field(&jw, "sets", rd.b.sets_read);
			jw_uint_field(&jw, "sets_total", rd.b.sets_total);
			jw_uint_field(&jw, "rule_states", rd.rule_states);
			jw_bool_field(&jw, "whole", rd.b.whole && rd.rules_whole);
			jw_end_object(&jw);
		}
		jw_name(&jw, "sources");
		jw_start_array(&jw);
	} else if (nrows || !t.one) {
		printf("%-40s %-15s %8s %14s %10s\n", "SOURCE", "RULE", "USED",
		       cfg.params.bytes ? "CREDIT (B)" : "CREDIT (pkt)", "NEXT");
	}
	for (size_t i = 0; i < nrows; i++) {
		const struct top_row *row = &rows[i];

		rl_key_str(&row->key, row->prefix4, row->prefix6, src, sizeof(src));
		if (json) {
			jw_start_object(&jw);
			jw_string_field(&jw, "source", src);
			jw_double_field(&jw, "used", "%.4f", row->used);
			jw_double_field(&jw, "credit", "%.3f", row->credit);
			jw_double_field(&jw, "next_pass_s", "%.9f", row->wait_s);
			/* After the fields a row always had, for readers that rely on their order. */
			jw_string_field(&jw, "rule", row->rule ? row->rule : "default");
			jw_bool_field(&jw, "blocked", row->blocked);
			jw_bool_field(&jw, "clamped", row->clamped);
			jw_end_object(&jw);
		} else {
			printf("%-40s %-15s %7.1f%% %14.2f %10s%s\n", src,
			       row->rule ? row->rule : "default", row->used * 100, row->credit,
			       fmt_wait(row->wait_s, w, sizeof(w)),
			       row->blocked ? " (blocked)" : "");
		}
	}
	if (json)
		jw_end_array(&jw);
	else if (!nrows && t.one)
		printf("%s is not tracked on %s: no packet from it under the current configuration\n",
		       a->top_source, ifc->name);
	else if (!nrows)
		printf("(no sources seen under the current configuration)\n");
	if (!json && !t.one && !(rd.b.whole && rd.rules_whole))
		printf("(a sample: the %llu sources last seen over their limit, and %llu of the tracked "
		       "sources, from %llu of %llu sets%s; --all reads them all)\n",
		       (unsigned long long)rd.limited, (unsigned long long)rd.b.states,
		       (unsigned long long)rd.b.sets_read, (unsigned long long)rd.b.sets_total,
		       rd.rules_whole ? "" : ", and some of the rules' sources");
	if (!json && clamped)
		printf("(%zu source%s read newer than the clock: shown at the most the policy allows)\n",
		       clamped, clamped == 1 ? "" : "s");
	/* The aggregates and the interface's limit, when the policy or a rule has them. */
	r = top_levels_show(a, pins, &cfg, has_rules ? &rules : NULL, t.one ? &t.addr : NULL,
			    json ? &jw : NULL);
	if (r)
		pr_warn("couldn't read the aggregates of '%s': %s", ifc->name, strerror(-r));
	/* Sources that rules with --block hold, with the time left. */
	if (!json)
		fflush(stdout);
	if (!t.one) {
		r = rl_blocked_show(pins, &cfg, a->top_all ? 0 : a->top_sample, json ? &jw : NULL);
		if (r)
			pr_warn("couldn't read the blocked sources of '%s': %s", ifc->name,
				strerror(-r));
	}
	if (json) {
		jw_end_object(&jw);
		jw_end(&jw);
	}
	/* --source: like grep, 1 when it is not tracked. */
	ret = t.one && !t.nrows;
out:
	rl_srctab_free(&t.tab);
	free(t.rows);
	free(t.hot);
	return ret;
}

int rl_watch_views(const char *cmd, const struct rl_args *a, rl_view_fn show, void *ctx)
{
	bool tty = !a->json && isatty(STDOUT_FILENO);
	int ret = 0;

	if (a->count && !a->watch_s) {
		pr_err("%s: --count only applies with --watch", cmd);
		return 2;
	}
	if (!a->watch_s)
		return show(a, ctx);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (unsigned long view = 0; !stop && (!a->count || view < a->count); view++) {
		if (view)
			rl_watch_sleep(a->watch_s);
		if (stop)
			break;
		if (!a->json) {
			char when[32];
			time_t t = time(NULL);

			strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
			/* A terminal is redrawn in place; a pipe or a file gets one view after another. */
			printf("%s%s %s, every %gs (Ctrl-C to stop)\n\n",
			       tty  ? "\033[H\033[J" :
			       view ? "\n" :
				      "",
			       when, cmd, a->watch_s);
		}
		/* Each view opens the pins again: a detach and an attach are followed. */
		ret = show(a, ctx);
		fflush(stdout);
		if (ret > 1 || (ret && !a->top_source))
			break;
	}
	return ret;
}

static int top_view(const struct rl_args *a, void *ctx)
{
	struct rl_iface ifc;
	struct rl_pins pins;
	int ret;

	(void)ctx;
	if (open_iface(a->pos[0], &ifc, &pins))
		return 1;
	ret = top_show(a, &ifc, &pins);
	rl_pins_close(&pins);
	return ret;
}

int cmd_top(const struct rl_args *a)
{
	if (a->top_all && (a->top_source || a->top_sample != RL_TOP_SAMPLE)) {
		pr_err("top: --all reads every source: not with %s",
		       a->top_source ? "--source" : "--sample");
		return 2;
	}
	return rl_watch_views("top", a, top_view, NULL);
}
