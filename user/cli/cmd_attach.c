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
#include "env.h"
#include "json_writer.h"
#include "live.h"
#include "level.h"
#include "lock.h"
#include "memory.h"
#include "pins.h"
#include "probe.h"
#include "prog.h"
#include "rulemaps.h"
#include "synproxy.h"
#include "xdp_attach.h"

static char *describe(const struct rl_config *c, char *buf, size_t len)
{
	struct rl_policy pol;
	struct rl_opts o;
	char rate[64], shape[128], levels[512];

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
		snprintf(shape, sizeof(shape), "%llu%s per %.9g s",
			 (unsigned long long)c->params.limit,
			 c->params.bytes ? " bytes" : " packets", c->params.window_ns / 1e9);
	}
	rl_levels_describe(c, levels, sizeof(levels));
	snprintf(buf, len, "%s %s, %s, per /%u (IPv4) /%u (IPv6), action %s%s%s",
		 rl_algo_name(c->params.algo), rate, shape, c->prefix4, c->prefix6,
		 c->action == RL_ACTION_DRY_RUN ? "dry-run" : "drop",
		 c->clock == RL_CLOCK_COARSE ? ", coarse clock" : "", levels);
	if (c->syn.n) {
		char ports[160];
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, ", SYN cookies on %s (MSS %u/%u, wscale %u)",
			 rl_syn_ports_str(&c->syn, ports, sizeof(ports)), c->syn.mss4, c->syn.mss6,
			 c->syn.wscale);
	}
	return buf;
}

/* A level above the source, as an object named for it (nothing when it is off). */
static void json_level(struct rl_json *w, const struct rl_config *c, unsigned int id)
{
	rl_level_json(w, RL_LVL(c, id), id);
}

static void json_config(struct rl_json *w, const struct rl_config *c)
{
	struct rl_policy pol;
	struct rl_opts o;
	char rate[64];

	rl_config_policy(c, &pol, &o);
	jw_start_object(w);
	jw_string_field(w, "algo", rl_algo_name(c->params.algo));
	jw_string_field(w, "rate", rl_rate_str(&pol, rate, sizeof(rate)));
	jw_bool_field(w, "bytes", c->params.bytes);
	if (c->params.algo == RL_ALGO_TOKEN_BUCKET || c->params.algo == RL_ALGO_GCRA) {
		jw_uint_field(w, "burst", c->burst);
		if (c->initial_set)
			jw_uint_field(w, "initial", c->initial);
	} else {
		jw_uint_field(w, "window_ns", c->params.window_ns);
		jw_uint_field(w, "limit", c->params.limit);
	}
	jw_uint_field(w, "prefix4", c->prefix4);
	jw_uint_field(w, "prefix6", c->prefix6);
	jw_string_field(w, "action", c->action == RL_ACTION_DRY_RUN ? "dry-run" : "drop");
	jw_string_field(w, "on_insert_fail", c->fail_policy == RL_FAIL_DROP ? "drop" : "pass");
	jw_string_field(w, "malformed", c->malformed_drop ? "drop" : "pass");
	jw_string_field(w, "clock", c->clock == RL_CLOCK_COARSE ? "coarse" : "precise");
	json_level(w, c, RL_LVL_PREFIX);
	json_level(w, c, RL_LVL_IFACE);
	json_level(w, c, RL_LVL_ADMIT);
	jw_uint_field(w, "generation", c->gen);
	if (c->syn.n) {
		char ports[160];

		jw_string_field(w, "syn_cookies", rl_syn_ports_str(&c->syn, ports, sizeof(ports)));
		jw_uint_field(w, "syn_mss4", c->syn.mss4);
		jw_uint_field(w, "syn_mss6", c->syn.mss6);
		jw_uint_field(w, "syn_wscale", c->syn.wscale);
	}
	jw_end_object(w);
}

/* --syn-cookies on @ifc: see rl_synproxy_prepare(). */
static int syn_prepare(const struct rl_iface *ifc, struct rl_config *cfg, int proxy, char *err,
		       size_t errlen)
{
	return rl_synproxy_prepare(ifc->name, &cfg->syn, proxy == RL_SYN_PROXY_CHECK, err, errlen);
}

/* --syn-proxy without --syn-cookies (or with none) means nothing. */
static bool syn_args_ok(const struct rl_args *a, const struct rl_opts *o)
{
	if (a->o.syn_proxy_set && !o->syn.n) {
		pr_err("--syn-proxy has no meaning without --syn-cookies PORTS");
		return false;
	}
	return true;
}

/* Was the option @name given? */
static bool given(const struct rl_args *a, const char *name)
{
	const struct rl_opt *o = rl_opt_find(name, ~0U);

	return o && a->given[o - rl_opt_table];
}

/* attach IFACE --share WITH: the limiter of WITH on IFACE too. */
static int attach_share(const struct rl_args *a)
{
	struct rl_iface ifc, with;
	struct rl_pins pins;
	struct rl_live live;
	struct rl_json w;
	char err[RL_ERRLEN], desc[1024];
	bool described = false;
	int ret, lock;

	if (rl_args_given(a, RL_G_POLICY | RL_G_LIMITER | RL_G_SYN) || given(a, "max-sources") ||
	    given(a, "max-sources6")) {
		pr_err("--share: the policy, limiter options and table sizes are those of '%s': "
		       "give none of them (set changes them on every interface that shares it)",
		       a->share);
		return 2;
	}
	if (rl_check_env(err, sizeof(err)) || rl_iface_get(a->pos[0], &ifc, err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	if (rl_iface_get(a->share, &with, err, sizeof(err))) {
		pr_err("--share %s: %s in this network namespace (a limiter is shared only by "
		       "interfaces of one namespace)",
		       a->share, err);
		return 1;
	}
	rl_loader_quiet();
	lock = rl_lock(err, sizeof(err));
	if (lock < 0) {
		pr_err("%s", err);
		return 1;
	}
	ret = rl_attach_share(&ifc, &with, a->mode, err, sizeof(err));
	/* Attached: a failure to read the policy only leaves it out of the message. */
	if (!ret && !rl_pins_open(&ifc, &pins, desc, sizeof(desc))) {
		described = !rl_live_read(&ifc, &pins, &live, desc, sizeof(desc));
		rl_pins_close(&pins);
	}
	rl_unlock(lock);
	if (ret) {
		pr_err("%s", err);
		return 1;
	}
	if (a->json) {
		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_string_field(&w, "iface", ifc.name);
		jw_string_field(&w, "mode", rl_attach_mode(&ifc));
		jw_string_field(&w, "share", with.name);
		if (described) {
			jw_name(&w, "policy");
			json_config(&w, &live.cfg);
		}
		jw_end_object(&w);
		jw_end(&w);
	} else {
		printf("attached to %s (%s), sharing the limiter of %s%s%s\n", ifc.name,
		       rl_attach_mode(&ifc), with.name, described ? ": " : "",
		       described ? describe(&live.cfg, desc, sizeof(desc)) : "");
	}
	return 0;
}

int cmd_attach(const struct rl_args *a)
{
	__u32 max6 = a->max_sources6 ? (__u32)a->max_sources6 :
				       RL_MAX_SOURCES6_FOR((__u32)a->max_sources);
	struct rl_config cfg;
	struct rl_iface ifc;
	struct rl_json w;
	char err[RL_ERRLEN], desc[1024], why[RL_ERRLEN];
	int ret, lock, made;

	if (a->share)
		return attach_share(a);
	if (!syn_args_ok(a, &a->o))
		return 2;
	if (rl_config_build(&cfg, &a->pol, &a->o, NULL, err, sizeof(err))) {
		pr_err("%s", err);
		return 2;
	}
	if (rl_policy_tcp_warning(&a->pol, err, sizeof(err)))
		pr_warn("%s", err);
	if (rl_check_env(err, sizeof(err)) || rl_iface_get(a->pos[0], &ifc, err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	rl_loader_quiet();
	if (rl_check_kernel(err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	lock = rl_lock(err, sizeof(err));
	if (lock < 0) {
		pr_err("%s", err);
		return 1;
	}
	made = syn_prepare(&ifc, &cfg, a->o.syn_proxy, err, sizeof(err));
	ret = made < 0 ? made : 0;
	if (!ret)
		ret = rl_attach(&ifc, a->mode, (__u32)a->max_sources, max6, &cfg, err, sizeof(err));
	/* Nothing changed: not even the stack's half. */
	if (ret && made > 0 && rl_synproxy_remove(ifc.name, why, sizeof(why)) < 0)
		pr_warn("%s", why);
	rl_unlock(lock);
	if (ret) {
		pr_err("%s", err);
		return 1;
	}
	if (a->json) {
		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_string_field(&w, "iface", ifc.name);
		jw_string_field(&w, "mode", rl_attach_mode(&ifc));
		jw_uint_field(&w, "max_sources", a->max_sources);
		jw_uint_field(&w, "max_sources6", max6);
		jw_name(&w, "policy");
		json_config(&w, &cfg);
		jw_end_object(&w);
		jw_end(&w);
	} else {
		printf("attached to %s (%s): %s\n", ifc.name, rl_attach_mode(&ifc),
		       describe(&cfg, desc, sizeof(desc)));
	}
	return 0;
}

int cmd_set(const struct rl_args *a)
{
	const struct rl_policy *given = &a->pol;
	const struct rl_opts *given_o = &a->o;
	struct rl_policy pol;
	struct rl_opts o;
	struct rl_config cur, cfg;
	struct rl_live live;
	struct rl_iface ifc;
	struct rl_pins pins;
	struct rl_json w;
	char err[RL_ERRLEN], desc[1024];
	const char *name = a->pos[0];
	bool family_changed;
	int ret, lock = -1;
	__u64 moved = 0;
	__u32 active;

	if (!rl_args_given(a, RL_G_POLICY | RL_G_LIMITER | RL_G_SYN)) {
		pr_err("set: nothing to change (give at least one policy option)");
		return 2;
	}
	if (rl_check_env(err, sizeof(err)) || rl_iface_get(name, &ifc, err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	lock = rl_lock(err, sizeof(err));
	if (lock < 0) {
		pr_err("%s", err);
		return 1;
	}
	if (rl_pins_open(&ifc, &pins, err, sizeof(err))) {
		pr_err("%s", err);
		rl_unlock(lock);
		return 1;
	}
	if (rl_live_read(&ifc, &pins, &live, err, sizeof(err))) {
		pr_err("%s", err);
		ret = 1;
		goto out;
	}
	cur = live.cfg;
	active = live.active;
	/* Start from the live policy and apply what was given. */
	rl_config_policy(&cur, &pol, &o);
	family_changed =
		given->algo_set && (pol.algo <= RL_ALGO_GCRA) != (given->algo <= RL_ALGO_GCRA);
	if (given->algo_set) {
		if (family_changed) {
			pol.burst_set = pol.initial_set = false;
			pol.window_set = false;
			pol.window_ns = given->window_ns;
		}
		pol.algo = given->algo;
	}
	if (given->rate_set) {
		pol.rate_num = given->rate_num;
		pol.rate_den = given->rate_den;
		pol.bytes = given->bytes;
		/* A burst in packets means nothing for a byte rate, and the reverse. */
		if (given->bytes != cur.params.bytes && !given->burst_set)
			pol.burst_set = pol.initial_set = false;
	}
	if (given->burst_set) {
		pol.burst = given->burst;
		pol.burst_set = true;
	}
	if (given->window_set) {
		pol.window_ns = given->window_ns;
		pol.window_set = true;
	}
	if (given->initial_set) {
		pol.initial = given->initial;
		pol.initial_set = true;
	}
	if (given->prefix4_set)
		pol.prefix4 = given->prefix4;
	if (given->prefix6_set)
		pol.prefix6 = given->prefix6;
	/* The levels above the source (--aggregate4, --iface-rate, --admit-rate, ...). */
	rl_levels_merge(&pol, given, family_changed);
	if (given_o->action_set)
		o.action = given_o->action;
	if (given_o->fail_set)
		o.fail_policy = given_o->fail_policy;
	if (given_o->malformed_set)
		o.malformed_drop = given_o->malformed_drop;
	if (given_o->clock_set)
		o.clock = given_o->clock;
	if (given_o->syn_set)
		o.syn = given_o->syn;
	if (!syn_args_ok(a, &o)) {
		ret = 2;
		goto out;
	}
	/* The merged policy is checked as a whole, as attach checks its own. */
	if (rl_config_build(&cfg, &pol, &o, &cur, err, sizeof(err))) {
		pr_err("%s", err);
		ret = 2;
		goto out;
	}
	/* What the SYN-ACK says, from the interface as it is now (as attach). */
	if (rl_synproxy_params(ifc.name, &cfg.syn, err, sizeof(err))) {
		pr_err("%s", err);
		ret = 1;
		goto out;
	}
	/* The policy in force already: a new generation would only cost a migration. */
	if (rl_config_same(&cfg, &cur)) {
		ret = rl_members_converge(&ifc, &pins, &cur, err, sizeof(err));
		if (ret < 0) {
			pr_err("%s", err);
			ret = 1;
			goto out;
		}
		if (ret)
			pr_warn("%s: the interfaces that share its limiter ran different programs "
				"(a command was interrupted): they run one again",
				ifc.name);
		if (a->json) {
			jw_init(&w, stdout);
			jw_start_object(&w);
			jw_string_field(&w, "iface", ifc.name);
			jw_bool_field(&w, "unchanged", true);
			jw_name(&w, "policy");
			json_config(&w, &cur);
			jw_end_object(&w);
			jw_end(&w);
		} else {
			printf("%s: unchanged: %s\n", ifc.name, describe(&cur, desc, sizeof(desc)));
		}
		ret = 0;
		goto out;
	}
	if (rl_policy_tcp_warning(&pol, err, sizeof(err)))
		pr_warn("%s", err);
	/* The stack's half first when SYN cookies stay on or come on; after the swap when off. */
	if (cfg.syn.n && syn_prepare(&ifc, &cfg, o.syn_proxy, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		ret = 1;
		goto out;
	}
	ret = rl_set_live(&ifc, &pins, &cfg, active, &moved, err, sizeof(err));
	if (ret < 0) {
		pr_err("%s", err);
		ret = 1;
		goto out;
	}
	if (!cfg.syn.n && cur.syn.n && rl_synproxy_remove(ifc.name, desc, sizeof(desc)) < 0)
		pr_warn("%s", desc);
	if (ret > 0)
		pr_warn("%s", err);
	else
		pr_debug("moved %llu source states to generation %u", (unsigned long long)moved,
			 cfg.gen);
	if (a->json) {
		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_string_field(&w, "iface", ifc.name);
		jw_name(&w, "policy");
		json_config(&w, &cfg);
		jw_end_object(&w);
		jw_end(&w);
	} else {
		printf("%s: %s\n", ifc.name, describe(&cfg, desc, sizeof(desc)));
	}
	ret = 0;
out:
	rl_pins_close(&pins);
	rl_unlock(lock);
	return ret;
}

/* {"iface": NAME, "result": WHAT} */
static void json_done(const char *iface, const char *what)
{
	struct rl_json w;

	jw_init(&w, stdout);
	jw_start_object(&w);
	jw_string_field(&w, "iface", iface);
	jw_string_field(&w, "result", what);
	jw_end_object(&w);
	jw_end(&w);
}

int cmd_detach(const struct rl_args *a)
{
	const char *name = a->pos[0];
	struct rl_member m[RL_MAX_MEMBERS];
	struct rl_iface ifc;
	char err[RL_ERRLEN], desc[RL_ERRLEN];
	int lock, ret, nm;

	if (rl_check_env(err, sizeof(err)))
		goto fail;
	lock = rl_lock(err, sizeof(err));
	if (lock < 0)
		goto fail;
	if (rl_iface_get(name, &ifc, err, sizeof(err))) {
		/* The interface is gone (and its program with it): its pins may remain. */
		ret = rl_unpin_gone(name);
		rl_unlock(lock);
		if (ret == -EBUSY)
			snprintf(
				err, sizeof(err),
				"no interface '%s' here, and a program still uses the pins of that name",
				name);
		if (ret)
			goto fail;
		if (a->json)
			json_done(name, "removed-pins");
		else
			printf("'%s' no longer exists: removed its pins\n", name);
		return 0;
	}
	rl_loader_quiet();
	nm = rl_members(&ifc, m, RL_MAX_MEMBERS);
	ret = rl_detach(&ifc, err, sizeof(err));
	/* The synproxy chains --syn-cookies made for this interface (none: nothing to do). */
	if (!ret && rl_synproxy_remove(ifc.name, desc, sizeof(desc)) < 0)
		pr_warn("%s", desc);
	rl_unlock(lock);
	if (ret) {
		pr_err("%s", err);
		return 1;
	}
	if (a->json) {
		json_done(ifc.name, "detached");
		return 0;
	}
	printf("detached from %s", ifc.name);
	/* A shared limiter lives on, with its state, on the other interfaces. */
	for (int i = 0, n = 0; i < nm; i++)
		if (m[i].ifindex != ifc.ifindex)
			printf("%s%s", n++ ? ", " : "; the limiter stays on ", m[i].name);
	putchar('\n');
	return 0;
fail:
	pr_err("%s", err);
	return 1;
}

/*
 * One interface's status; in JSON, an element of the array it opens on the
 * first success (so that an error before it is a JSON error of its own).
 */
static int status_one(const char *name, struct rl_json *w, bool *opened)
{
	struct rl_iface ifc;
	struct rl_pins pins;
	struct rl_live live;
	const struct rl_config *cfg = &live.cfg;
	struct rl_member m[RL_MAX_MEMBERS];
	struct rl_memory mem;
	struct rl_rules_cfg *rules;
	char err[RL_ERRLEN], desc[1024], shares[512] = "";
	int ret, nm, nshares = 0;
	bool has_mem, has_rules;

	if (rl_iface_get(name, &ifc, err, sizeof(err)) ||
	    rl_pins_open(&ifc, &pins, err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	ret = rl_live_read(&ifc, &pins, &live, err, sizeof(err));
	/* The kernel memory of its maps (user/lib/memory.h), shown when it can be read. */
	has_mem = !ret && !rl_memory_read(&pins, &mem) && mem.max_sources4;
	/* The rules before default, by name (rule list shows them whole). */
	rules = calloc(1, sizeof(*rules));
	has_rules = !ret && rules && !rl_rules_read(&pins, rules);
	rl_pins_close(&pins);
	if (ret) {
		free(rules);
		pr_err("%s", err);
		return 1;
	}
	/* The other interfaces that run this limiter (attach --share). */
	nm = rl_members(&ifc, m, RL_MAX_MEMBERS);
	for (int i = 0; i < nm; i++) {
		size_t len = strlen(shares);

		if (m[i].ifindex != ifc.ifindex)
			snprintf(shares + len, sizeof(shares) - len, "%s%s", nshares++ ? ", " : "",
				 m[i].name);
	}
	if (w) {
		if (!*opened)
			jw_start_array(w);
		*opened = true;
		jw_start_object(w);
		jw_string_field(w, "iface", ifc.name);
		jw_string_field(w, "state", "attached");
		jw_uint_field(w, "netns_ino", ifc.netns_ino);
		jw_int_field(w, "ifindex", ifc.ifindex);
		jw_string_field(w, "mode", rl_attach_mode(&ifc));
		jw_uint_field(w, "max_sources", live.max_sources);
		jw_uint_field(w, "max_sources6", live.max_sources6);
		if (has_mem)
			jw_uint_field(w, "memory_bytes", mem.total);
		jw_uint_field(w, "prog_id", rl_attached_prog_id(&ifc));
		jw_string_field(w, "pins", ifc.pindir);
		jw_name(w, "shares_with");
		jw_start_array(w);
		for (int i = 0; i < nm; i++)
			if (m[i].ifindex != ifc.ifindex)
				jw_string(w, m[i].name);
		jw_end_array(w);
		jw_name(w, "policy");
		json_config(w, cfg);
		if (has_rules) {
			jw_name(w, "rules");
			jw_start_array(w);
			for (__u32 i = 0; i < rules->n; i++)
				jw_string(w, rules->r[i].name);
			jw_string(w, "default");
			jw_end_array(w);
		}
		jw_end_object(w);
	} else {
		printf("%s: attached (%s, program %u), %u IPv4 and %u IPv6 sources max, pins in %s\n  %s\n",
		       ifc.name, rl_attach_mode(&ifc), rl_attached_prog_id(&ifc), live.max_sources,
		       live.max_sources6, ifc.pindir, describe(cfg, desc, sizeof(desc)));
		if (has_mem)
			printf("  kernel memory: %llu bytes (%.1f MiB, %.1f B per IPv4 source)\n",
			       (unsigned long long)mem.total, mem.total / 1048576.0,
			       (double)mem.total / mem.max_sources4);
		if (nshares)
			printf("  shares its limiter (source table and counters) with: %s\n",
			       shares);
		if (has_rules && !rules->n)
			printf("  rules: default (no other rule: the policy above decides every "
			       "packet)\n");
		if (has_rules && rules->n) {
			printf("  rules: ");
			for (__u32 i = 0; i < rules->n; i++)
				printf("%s, ", rules->r[i].name);
			printf("default (\"" RL_PROG " rule list %s\" shows them)\n", ifc.name);
		}
	}
	free(rules);
	return 0;
}

/* Pins no program uses, in any namespace: what "cleanup" would remove. */
static void status_orphans(struct rl_json *w, bool *opened)
{
	static struct rl_orphan o[64];
	int n = rl_list_orphans(o, 64);

	for (int i = 0; i < n; i++) {
		if (w) {
			if (!*opened)
				jw_start_array(w);
			*opened = true;
			jw_start_object(w);
			jw_string_field(w, "iface", o[i].name);
			jw_string_field(w, "state", "orphaned");
			jw_uint_field(w, "netns_ino", o[i].netns_ino);
			jw_uint_field(w, "ifindex", o[i].ifindex);
			jw_string_field(w, "pins", o[i].path);
			jw_end_object(w);
			continue;
		}
		if (!i)
			printf("orphaned pins (no program uses them; \"" RL_PROG
			       " cleanup [IFACE] [--netns INODE]\" removes them):\n");
		printf("  %s: was %s (ifindex %u) in network namespace %llu%s\n", o[i].path,
		       o[i].name, o[i].ifindex, (unsigned long long)o[i].netns_ino,
		       o[i].netns_ino == rl_netns_ino() ? " (this one)" : "");
	}
}

int cmd_status(const struct rl_args *a)
{
	char names[64][IF_NAMESIZE], err[RL_ERRLEN];
	struct rl_json w, *jw = a->json ? &w : NULL;
	int n, ret = 0, shown = 0;
	bool opened = false;

	if (rl_check_env(err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	rl_loader_quiet();
	if (jw)
		jw_init(jw, stdout);
	if (a->npos) {
		ret = status_one(a->pos[0], jw, &opened);
		shown = 1;
	} else {
		n = rl_list_attached(names, 64);
		for (int i = 0; i < n; i++) {
			struct rl_iface ifc;

			/* Pins are per host, interfaces per network namespace: show ours. */
			if (rl_iface_get(names[i], &ifc, err, sizeof(err)) ||
			    rl_presence(&ifc) != RL_PRESENT)
				continue;
			ret |= status_one(names[i], jw, &opened);
			shown++;
		}
	}
	if (!jw && !shown)
		printf("xdp-ratelimit is not attached to any interface\n");
	if (!a->npos)
		status_orphans(jw, &opened);
	if (jw && (opened || !ret)) {
		if (!opened)
			jw_start_array(jw);
		jw_end_array(jw);
		jw_end(jw);
	}
	return ret;
}
