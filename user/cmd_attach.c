// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* attach, set, detach, status: the commands that change or show a limiter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "config.h"
#include "loader.h"

static void attach_usage(FILE *f)
{
	fprintf(f,
		"Usage: " RL_PROG " attach IFACE --rate RATE [POLICY OPTIONS] [--mode native|skb]\n"
		"                          [--max-sources N] [--json]\n"
		"\n"
		"Loads the limiter and attaches it to IFACE at XDP, through libxdp (sharing\n"
		"the interface with other XDP programs where libxdp's dispatcher works, else\n"
		"alone). The attachment outlives this command; its maps are pinned under\n"
		RL_PIN_ROOT "/IFACE/ (root only).\n"
		"\n"
		"Options:\n"
		"  --mode MODE       native (default: in the driver) or skb (generic XDP)\n"
		"  --max-sources N   sources tracked at once (default %u, up to %u); an LRU\n"
		"                    table: when full, the least recently seen is forgotten\n"
		"%s"
		"  --json            print the result as JSON\n"
		"\n%s"
		"\nExample:\n"
		"  " RL_PROG " attach eth0 --rate 1000 --burst 200\n"
		"  " RL_PROG " attach eth0 --algo gcra --rate 100mbit --burst 2500000 --prefix4 24\n",
		RL_DEFAULT_MAX_SOURCES, RL_MAX_SOURCES_LIMIT, rl_opts_help, rl_policy_help);
}

static void set_usage(FILE *f)
{
	fprintf(f,
		"Usage: " RL_PROG " set IFACE [POLICY OPTIONS] [--json]\n"
		"\n"
		"Changes the policy of a running limiter, with no detach and no packet lost.\n"
		"Options not given keep their values; changing --algo between the bucket\n"
		"and the window algorithms resets --burst, --initial and --window to their\n"
		"defaults unless given.\n"
		"\n"
		"What happens to each source: under token-bucket a source keeps the tokens\n"
		"it had, at most the new burst; under gcra it keeps its queue level (at most\n"
		"the new burst); between the two, the used part of the bucket is kept. So no\n"
		"source is handed a fresh burst by a change. Window algorithms keep their\n"
		"counts when the window\n"
		"length and algorithm stay the same; otherwise sources start afresh. A new\n"
		"--prefix4/--prefix6 regroups sources: each new group starts from the state\n"
		"of the first of its members seen after the change.\n"
		"\n"
		"Options:\n%s"
		"  --json            print the result as JSON\n"
		"\n%s",
		rl_opts_help, rl_policy_help);
}

static void detach_usage(FILE *f)
{
	fprintf(f, "Usage: " RL_PROG " detach IFACE\n"
		   "\n"
		   "Detaches the limiter from IFACE and removes every pin it made.\n");
}

static void status_usage(FILE *f)
{
	fprintf(f, "Usage: " RL_PROG " status [IFACE] [--json]\n"
		   "\n"
		   "Shows where the limiter is attached, in which mode and with which policy.\n");
}

static char *describe(const struct rl_config *c, char *buf, size_t len)
{
	struct rl_policy pol;
	struct rl_opts o;
	char rate[64], shape[128];

	rl_config_policy(c, &pol, &o);
	rl_rate_str(&pol, rate, sizeof(rate));
	if (c->params.algo == RL_ALGO_TOKEN_BUCKET || c->params.algo == RL_ALGO_GCRA) {
		char init[48];

		if (c->initial_set)
			snprintf(init, sizeof(init), "%llu", (unsigned long long)c->initial);
		else
			snprintf(init, sizeof(init), "%s",
				 c->params.algo == RL_ALGO_GCRA ? "0" : "full");
		snprintf(shape, sizeof(shape), "burst %llu%s, initial %s",
			 (unsigned long long)c->burst, c->params.bytes ? " bytes" : "", init);
	} else {
		snprintf(shape, sizeof(shape), "%llu%s per %.9g s", (unsigned long long)c->params.limit,
			 c->params.bytes ? " bytes" : " packets", c->params.window_ns / 1e9);
	}
	snprintf(buf, len, "%s %s, %s, per /%u (IPv4) /%u (IPv6), action %s%s",
		 rl_algo_name(c->params.algo), rate, shape, c->prefix4, c->prefix6,
		 c->action == RL_ACTION_DRY_RUN ? "dry-run" : "drop",
		 c->clock == RL_CLOCK_COARSE ? ", coarse clock" : "");
	return buf;
}

static void json_config(const struct rl_config *c)
{
	struct rl_policy pol;
	struct rl_opts o;
	char rate[64];

	rl_config_policy(c, &pol, &o);
	printf("{\"algo\":\"%s\",\"rate\":", rl_algo_name(c->params.algo));
	rl_json_str(stdout, rl_rate_str(&pol, rate, sizeof(rate)));
	printf(",\"bytes\":%s", c->params.bytes ? "true" : "false");
	if (c->params.algo == RL_ALGO_TOKEN_BUCKET || c->params.algo == RL_ALGO_GCRA) {
		printf(",\"burst\":%llu", (unsigned long long)c->burst);
		if (c->initial_set)
			printf(",\"initial\":%llu", (unsigned long long)c->initial);
	} else {
		printf(",\"window_ns\":%llu,\"limit\":%llu", (unsigned long long)c->params.window_ns,
		       (unsigned long long)c->params.limit);
	}
	printf(",\"prefix4\":%u,\"prefix6\":%u,\"action\":\"%s\",\"on_insert_fail\":\"%s\","
	       "\"malformed\":\"%s\",\"clock\":\"%s\",\"generation\":%u}",
	       c->prefix4, c->prefix6, c->action == RL_ACTION_DRY_RUN ? "dry-run" : "drop",
	       c->fail_policy == RL_FAIL_DROP ? "drop" : "pass", c->malformed_drop ? "drop" : "pass",
	       c->clock == RL_CLOCK_COARSE ? "coarse" : "precise", c->gen);
}

/* "IFACE" then options; the interface is the first word not starting with '-'. */
static const char *take_iface(int argc, char **argv, const char *cmd)
{
	if (argc < 2 || argv[1][0] == '-') {
		pr_err("%s: give an interface name (see " RL_PROG " %s --help)", cmd, cmd);
		return NULL;
	}
	return argv[1];
}

/* A policy option or an attach/set option at argv[*i]: 1, 0 (neither) or -EINVAL. */
static int policy_arg(struct rl_policy *pol, struct rl_opts *o, int argc, char **argv, int *i,
		      char *err, size_t errlen)
{
	int ret = rl_policy_option(pol, argc, argv, i, err, errlen);

	return ret ? ret : rl_opts_option(o, argc, argv, i, err, errlen);
}

static int has_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (rl_is_help(argv[i]))
			return 1;
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct rl_policy pol;
	struct rl_opts o;
	struct rl_config cfg;
	struct rl_iface ifc;
	enum rl_mode mode = RL_MODE_NATIVE;
	__u64 max_sources = RL_DEFAULT_MAX_SOURCES;
	char err[RL_ERRLEN], desc[256];
	const char *name;
	bool json = false;
	int ret, lock;

	if (has_help(argc, argv)) {
		attach_usage(stdout);
		return 0;
	}
	name = take_iface(argc, argv, "attach");
	if (!name)
		return 2;
	rl_policy_defaults(&pol);
	rl_opts_defaults(&o);
	for (int i = 2; i < argc; i++) {
		ret = policy_arg(&pol, &o, argc, argv, &i, err, sizeof(err));
		if (ret < 0)
			goto bad;
		if (ret)
			continue;
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--mode")) {
			if (++i == argc || (strcmp(argv[i], "native") && strcmp(argv[i], "skb"))) {
				snprintf(err, sizeof(err), "--mode: give native or skb");
				goto bad;
			}
			mode = strcmp(argv[i], "skb") ? RL_MODE_NATIVE : RL_MODE_SKB;
		} else if (!strcmp(argv[i], "--max-sources")) {
			char msg[RL_ERRLEN];

			if (++i == argc) {
				snprintf(err, sizeof(err), "--max-sources needs a value");
				goto bad;
			}
			if (rl_parse_u64(argv[i], 1, RL_MAX_SOURCES_LIMIT, &max_sources, msg,
					 sizeof(msg))) {
				snprintf(err, sizeof(err), "--max-sources: %s", msg);
				goto bad;
			}
		} else {
			snprintf(err, sizeof(err), "attach: unknown option '%s' (see " RL_PROG
						   " attach --help)", argv[i]);
			goto bad;
		}
	}
	if (rl_config_build(&cfg, &pol, &o, NULL, err, sizeof(err)))
		goto bad;
	if (rl_policy_tcp_warning(&pol, err, sizeof(err)))
		pr_warn("%s", err);
	if (rl_check_env(err, sizeof(err)) || rl_iface_get(name, &ifc, err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	rl_loader_quiet();
	if (rl_check_kernel(err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	lock = rl_lock();
	ret = rl_attach(&ifc, mode, (__u32)max_sources, &cfg, err, sizeof(err));
	rl_unlock(lock);
	if (ret) {
		pr_err("%s", err);
		return 1;
	}
	if (json) {
		printf("{\"iface\":");
		rl_json_str(stdout, ifc.name);
		printf(",\"mode\":\"%s\",\"max_sources\":%llu,\"policy\":", rl_attach_mode(&ifc),
		       (unsigned long long)max_sources);
		json_config(&cfg);
		printf("}\n");
	} else {
		printf("attached to %s (%s): %s\n", ifc.name, rl_attach_mode(&ifc),
		       describe(&cfg, desc, sizeof(desc)));
	}
	return 0;
bad:
	pr_err("%s", err);
	return 2;
}

int cmd_set(int argc, char **argv)
{
	struct rl_policy pol, given;
	struct rl_opts o, given_o;
	struct rl_config cur, cfg;
	struct rl_iface ifc;
	struct rl_pins pins;
	char err[RL_ERRLEN], desc[256];
	const char *name;
	bool json = false;
	int ret, lock = -1, changes = 0;
	__u64 moved = 0;
	__u32 active;

	if (has_help(argc, argv)) {
		set_usage(stdout);
		return 0;
	}
	name = take_iface(argc, argv, "set");
	if (!name)
		return 2;
	/* Parse into a blank policy first, to know what was given. */
	rl_policy_defaults(&given);
	rl_opts_defaults(&given_o);
	for (int i = 2; i < argc; i++) {
		ret = policy_arg(&given, &given_o, argc, argv, &i, err, sizeof(err));
		if (ret < 0)
			goto bad;
		if (ret) {
			changes++;
			continue;
		}
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else {
			snprintf(err, sizeof(err), "set: unknown option '%s' (see " RL_PROG
						   " set --help)", argv[i]);
			goto bad;
		}
	}
	if (!changes) {
		snprintf(err, sizeof(err), "set: nothing to change (give at least one policy option)");
		goto bad;
	}
	if (rl_check_env(err, sizeof(err)) || rl_iface_get(name, &ifc, err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	lock = rl_lock();
	if (rl_pins_open(&ifc, &pins, err, sizeof(err))) {
		pr_err("%s", err);
		rl_unlock(lock);
		return 1;
	}
	ret = rl_config_read(&pins, &cur, &active);
	if (ret) {
		pr_err("couldn't read the configuration of '%s': %s", ifc.name, strerror(-ret));
		ret = 1;
		goto out;
	}
	/* Start from the live policy and apply what was given. */
	rl_config_policy(&cur, &pol, &o);
	if (given.algo_set) {
		bool was_bucket = pol.algo <= RL_ALGO_GCRA, is_bucket = given.algo <= RL_ALGO_GCRA;

		if (was_bucket != is_bucket) {
			pol.burst_set = pol.initial_set = false;
			pol.window_set = false;
			pol.window_ns = given.window_ns;
		}
		pol.algo = given.algo;
	}
	if (given.rate_set) {
		pol.rate_num = given.rate_num;
		pol.rate_den = given.rate_den;
		pol.bytes = given.bytes;
		/* A burst in packets means nothing for a byte rate, and the reverse. */
		if (given.bytes != cur.params.bytes && !given.burst_set)
			pol.burst_set = pol.initial_set = false;
	}
	if (given.burst_set) {
		pol.burst = given.burst;
		pol.burst_set = true;
	}
	if (given.window_set) {
		pol.window_ns = given.window_ns;
		pol.window_set = true;
	}
	if (given.initial_set) {
		pol.initial = given.initial;
		pol.initial_set = true;
	}
	if (given.prefix4_set)
		pol.prefix4 = given.prefix4;
	if (given.prefix6_set)
		pol.prefix6 = given.prefix6;
	if (given_o.action_set)
		o.action = given_o.action;
	if (given_o.fail_set)
		o.fail_policy = given_o.fail_policy;
	if (given_o.malformed_set)
		o.malformed_drop = given_o.malformed_drop;
	if (given_o.clock_set)
		o.clock = given_o.clock;
	/* The merged policy is checked as a whole, as attach checks its own. */
	if (rl_config_build(&cfg, &pol, &o, &cur, err, sizeof(err))) {
		pr_err("%s", err);
		ret = 2;
		goto out;
	}
	/* The policy in force already: a new generation would only cost a migration. */
	if (rl_config_same(&cfg, &cur)) {
		if (json) {
			printf("{\"iface\":");
			rl_json_str(stdout, ifc.name);
			printf(",\"unchanged\":true,\"policy\":");
			json_config(&cur);
			printf("}\n");
		} else {
			printf("%s: unchanged: %s\n", ifc.name, describe(&cur, desc, sizeof(desc)));
		}
		ret = 0;
		goto out;
	}
	if (rl_policy_tcp_warning(&pol, err, sizeof(err)))
		pr_warn("%s", err);
	ret = rl_config_swap(&pins, &cfg, active);
	if (ret) {
		pr_err("couldn't write the configuration of '%s': %s", ifc.name, strerror(-ret));
		ret = 1;
		goto out;
	}
	/* The change is live; moving states over now only saves work later. */
	ret = rl_migrate(&pins, &cfg, !active, &moved);
	if (ret)
		pr_warn("the new policy is live, but moving source states failed: %s (they move on their next packet)",
			strerror(-ret));
	else
		pr_debug("moved %llu source states to generation %u", (unsigned long long)moved,
			 cfg.gen);
	if (json) {
		printf("{\"iface\":");
		rl_json_str(stdout, ifc.name);
		printf(",\"policy\":");
		json_config(&cfg);
		printf("}\n");
	} else {
		printf("%s: %s\n", ifc.name, describe(&cfg, desc, sizeof(desc)));
	}
	ret = 0;
out:
	rl_pins_close(&pins);
	rl_unlock(lock);
	return ret;
bad:
	pr_err("%s", err);
	return 2;
}

int cmd_detach(int argc, char **argv)
{
	struct rl_iface ifc;
	char err[RL_ERRLEN];
	const char *name;
	int lock, ret;

	if (has_help(argc, argv)) {
		detach_usage(stdout);
		return 0;
	}
	name = take_iface(argc, argv, "detach");
	if (!name)
		return 2;
	if (argc > 2) {
		pr_err("detach: unexpected argument '%s'", argv[2]);
		return 2;
	}
	if (rl_check_env(err, sizeof(err)))
		goto fail;
	if (rl_iface_get(name, &ifc, err, sizeof(err))) {
		/* The interface is gone (and its program with it): its pins may remain. */
		ret = rl_unpin_gone(name);
		if (ret == -EBUSY)
			snprintf(err, sizeof(err),
				 "no interface '%s' here; the pins of that name belong to a live limiter elsewhere (another network namespace)",
				 name);
		if (ret)
			goto fail;
		printf("'%s' no longer exists: removed its pins\n", name);
		return 0;
	}
	rl_loader_quiet();
	lock = rl_lock();
	ret = rl_detach(&ifc, err, sizeof(err));
	rl_unlock(lock);
	if (ret) {
		pr_err("%s", err);
		return 1;
	}
	printf("detached from %s\n", ifc.name);
	return 0;
fail:
	pr_err("%s", err);
	return 1;
}

static int status_one(const char *name, bool json, bool first)
{
	struct rl_iface ifc;
	struct rl_pins pins;
	struct rl_config cfg;
	struct bpf_map_info info = {};
	__u32 active, len = sizeof(info);
	char err[RL_ERRLEN], desc[256];
	int ret;

	if (rl_iface_get(name, &ifc, err, sizeof(err)) ||
	    rl_pins_open(&ifc, &pins, err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	ret = rl_config_read(&pins, &cfg, &active);
	if (!ret && bpf_obj_get_info_by_fd(pins.state, &info, &len))
		ret = -errno;
	rl_pins_close(&pins);
	if (ret) {
		pr_err("couldn't read the configuration of '%s': %s", name, strerror(-ret));
		return 1;
	}
	if (json) {
		printf("%s{\"iface\":", first ? "" : ",");
		rl_json_str(stdout, ifc.name);
		printf(",\"ifindex\":%d,\"mode\":\"%s\",\"max_sources\":%u,\"pins\":", ifc.ifindex,
		       rl_attach_mode(&ifc), info.max_entries);
		rl_json_str(stdout, ifc.pindir);
		printf(",\"policy\":");
		json_config(&cfg);
		printf("}");
	} else {
		printf("%s: attached (%s), %u sources max, pins in %s\n  %s\n", ifc.name,
		       rl_attach_mode(&ifc), info.max_entries, ifc.pindir,
		       describe(&cfg, desc, sizeof(desc)));
	}
	return 0;
}

static bool shown_any(char names[][IF_NAMESIZE], int n)
{
	char err[RL_ERRLEN];
	struct rl_iface ifc;

	for (int i = 0; i < n; i++)
		if (!rl_iface_get(names[i], &ifc, err, sizeof(err)) && rl_presence(&ifc) == RL_PRESENT)
			return true;
	return false;
}

int cmd_status(int argc, char **argv)
{
	char names[64][IF_NAMESIZE], err[RL_ERRLEN];
	const char *only = NULL;
	bool json = false;
	int n, ret = 0;

	for (int i = 1; i < argc; i++) {
		if (rl_is_help(argv[i])) {
			status_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (argv[i][0] != '-' && !only) {
			only = argv[i];
		} else {
			pr_err("status: unknown option '%s' (see " RL_PROG " status --help)", argv[i]);
			return 2;
		}
	}
	if (rl_check_env(err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	rl_loader_quiet();
	if (only) {
		if (json)
			printf("[");
		ret = status_one(only, json, true);
		if (json)
			printf("]\n");
		return ret;
	}
	n = rl_list_attached(names, 64);
	if (json)
		printf("[");
	for (int i = 0, shown = 0; i < n; i++) {
		struct rl_iface ifc;

		/* Pins are per host, interfaces per network namespace: show ours. */
		if (rl_iface_get(names[i], &ifc, err, sizeof(err)) ||
		    rl_presence(&ifc) != RL_PRESENT)
			continue;
		ret |= status_one(names[i], json, shown++ == 0);
	}
	if (json)
		printf("]\n");
	else if (!shown_any(names, n))
		printf("xdp-ratelimit is not attached to any interface\n");
	return ret;
}
