// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* apply FILE: make the limiters match a configuration file (the work is apply.c's). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "apply.h"
#include "cli.h"
#include "env.h"
#include "json_writer.h"
#include "lock.h"
#include "probe.h"
#include "xdp_attach.h"

static const char *const rule_ops[] = {
	[RL_APPLY_RULE_ADD] = "add",
	[RL_APPLY_RULE_DEL] = "del",
	[RL_APPLY_RULE_CHANGE] = "change",
	[RL_APPLY_RULE_ORDER] = "order",
};

/* The rule changes of a step: one line each, or a JSON array. */
static void print_rule_changes(struct rl_json *w, const struct rl_apply_step *s)
{
	if (w) {
		jw_name(w, "rule_changes");
		jw_start_array(w);
	}
	for (size_t i = 0; i < s->nrchanges; i++) {
		const struct rl_apply_rule_change *c = &s->rchanges[i];

		if (!w) {
			printf("  %s %s%s%s\n", rule_ops[c->op], c->old ? c->old : "",
			       c->old && c->new ? " -> " : "", c->new ? c->new : "");
			continue;
		}
		jw_start_object(w);
		jw_string_field(w, "op", rule_ops[c->op]);
		if (c->old)
			jw_string_field(w, "old", c->old);
		if (c->new)
			jw_string_field(w, "new", c->new);
		jw_end_object(w);
	}
	if (w)
		jw_end_array(w);
}

/*
 * One step: "eth0: set: rate 10/s -> 20/s, burst 10 -> 20", then a line per
 * rule that changes ("  add web --proto tcp ..."), or its JSON object.
 */
static void print_step(struct rl_json *w, const struct rl_apply_step *s)
{
	const struct rl_apply_iface *want = s->want;

	if (w) {
		jw_start_object(w);
		jw_string_field(w, "iface", s->ifc.name);
		jw_string_field(w, "action", rl_apply_action_name(s->action));
		if (s->action == RL_APPLY_ATTACH) {
			jw_string_field(w, "mode", want->mode == RL_MODE_SKB ? "skb" : "native");
			jw_uint_field(w, "max_sources", want->max_sources);
			jw_uint_field(w, "max_sources6", want->max_sources6);
		}
		if (s->action == RL_APPLY_SHARE) {
			jw_string_field(w, "mode", want->mode == RL_MODE_SKB ? "skb" : "native");
			jw_string_field(w, "share", want->share);
		}
		if (s->action == RL_APPLY_SET) {
			jw_name(w, "changes");
			jw_start_array(w);
			for (int i = 0; i < s->nchanges; i++) {
				jw_start_object(w);
				jw_string_field(w, "key", s->changes[i].key);
				jw_string_field(w, "old", s->changes[i].old);
				jw_string_field(w, "new", s->changes[i].new);
				jw_end_object(w);
			}
			jw_end_array(w);
		}
		if (want)
			jw_uint_field(w, "rules", want->nrules);
		if (s->rules)
			print_rule_changes(w, s);
		jw_end_object(w);
		return;
	}
	printf("%s: %s", s->ifc.name, rl_apply_action_name(s->action));
	if (s->action == RL_APPLY_ATTACH)
		printf(" (mode %s, max-sources %llu, max-sources6 %llu)",
		       want->mode == RL_MODE_SKB ? "skb" : "native",
		       (unsigned long long)want->max_sources,
		       (unsigned long long)want->max_sources6);
	if (s->action == RL_APPLY_SHARE)
		printf(" (the limiter of %s, mode %s)", want->share,
		       want->mode == RL_MODE_SKB ? "skb" : "native");
	for (int i = 0; i < s->nchanges; i++)
		printf("%s%s %s -> %s", i ? ", " : ": ", s->changes[i].key, s->changes[i].old,
		       s->changes[i].new);
	putchar('\n');
	if (s->rules)
		print_rule_changes(NULL, s);
}

static void print_steps(const struct rl_args *a, const struct rl_apply_step *s, size_t n)
{
	struct rl_json w;

	if (a->json) {
		jw_init(&w, stdout);
		jw_start_array(&w);
	}
	for (size_t i = 0; i < n; i++)
		print_step(a->json ? &w : NULL, &s[i]);
	if (a->json) {
		jw_end_array(&w);
		jw_end(&w);
	}
}

/*
 * --check: the file is valid and the plan against the kernel passed (every
 * check apply makes before its first change): "FILE: valid: ...", or JSON.
 */
static int check(const struct rl_args *a, const struct rl_apply_file *f)
{
	struct rl_json w;
	size_t rules = 0;

	for (size_t i = 0; i < f->n; i++)
		rules += f->ifs[i].nrules;
	if (!a->json) {
		printf("%s: valid: %zu interface%s, %zu rule%s\n", f->path, f->n,
		       f->n == 1 ? "" : "s", rules, rules == 1 ? "" : "s");
		return 0;
	}
	jw_init(&w, stdout);
	jw_start_object(&w);
	jw_string_field(&w, "file", f->path);
	jw_bool_field(&w, "valid", true);
	jw_name(&w, "interfaces");
	jw_start_array(&w);
	for (size_t i = 0; i < f->n; i++) {
		jw_start_object(&w);
		jw_string_field(&w, "iface", f->ifs[i].name);
		jw_uint_field(&w, "rules", f->ifs[i].nrules);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_end_object(&w);
	jw_end(&w);
	return 0;
}

int cmd_apply(const struct rl_args *a)
{
	struct rl_apply_file f;
	struct rl_apply_plan p = {};
	char err[RL_ERRLEN];
	int ret, lock = -1;
	size_t done = 0;

	if (a->check + a->diff + a->detach > 1 || (a->prune && (a->check || a->detach))) {
		pr_err("apply: --check, --diff and --detach exclude each other, and --prune goes "
		       "with applying or --diff");
		return 2;
	}
	if (rl_apply_load(&f, a->pos[0], err, sizeof(err))) {
		pr_err("%s", err);
		return 2;
	}
	/* --diff is diff(1)'s: 1 says the kernel differs, so its trouble is 2. */
	ret = a->diff ? 2 : 1;
	/*
	 * --check runs what apply runs up to its first change, so that a file it
	 * passes, apply takes: the kernel's features, the interfaces, the live
	 * attach options, the rules compiled against the live ones.
	 */
	if (rl_check_env(err, sizeof(err)))
		goto fail;
	rl_loader_quiet();
	if (!a->diff && rl_check_kernel(err, sizeof(err)))
		goto fail;
	/*
	 * One lock from reading the kernel to the last change: the plan stays
	 * true. --check and --diff take it too, though they change nothing: the
	 * plan reads the copies, the tries and the program in several steps,
	 * and a change half made meanwhile could read as a state that is
	 * neither; the plan takes milliseconds, so an apply waits no longer.
	 */
	lock = rl_lock(err, sizeof(err));
	if (lock < 0)
		goto fail;
	if (a->detach ? rl_apply_plan_detach(&f, &p, err, sizeof(err)) :
			rl_apply_plan(&f, a->prune, &p, err, sizeof(err)))
		goto fail;
	/* What attach and set warn of, for what this apply would make live. */
	for (size_t i = 0; i < p.n; i++) {
		const struct rl_apply_step *s = &p.steps[i];

		if ((s->action == RL_APPLY_ATTACH || s->action == RL_APPLY_SET) &&
		    rl_policy_tcp_warning(&s->want->pol, err, sizeof(err)))
			pr_warn("%s: %s", s->ifc.name, err);
	}
	if (a->check) {
		ret = check(a, &f);
		goto out;
	}
	if (a->diff) {
		print_steps(a, p.steps, p.n);
		ret = 0;
		for (size_t i = 0; i < p.n; i++)
			if (p.steps[i].action != RL_APPLY_NONE)
				ret = 1;
		goto out;
	}
	if (rl_apply_run(&p, &done, err, sizeof(err))) {
		/* Report what was done before the failure, then the failure. */
		if (done && !a->json)
			print_steps(a, p.steps, done);
		pr_err("%s%s", done ? "stopped after the steps above: " : "", err);
		goto out;
	}
	print_steps(a, p.steps, p.n);
	ret = 0;
	goto out;
fail:
	pr_err("%s", err);
out:
	rl_apply_plan_free(&p);
	if (lock >= 0)
		rl_unlock(lock);
	rl_apply_free(&f);
	return ret;
}
