// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opts.h"
#include "harness.h"
#include "maps.h"
#include "prog.h"
#include "rulemaps.h"
#include "rules.h"
#include "sa.h"
#include "test.h"

void rl_prog_close(struct rl_prog *p)
{
	if (p->test_clock)
		rl_state_clock_fd = -1;
	rl_prog_destroy(p->skel);
	rl_prog_destroy(p->mapskel);
	p->skel = p->mapskel = NULL;
}

bool rl_prog_load(struct rl_prog *p, bool test_clock, __u32 max_sources)
{
	struct rl_prog_opts po = { .max_sources4 = max_sources,
				   .max_sources6 = max_sources,
				   .both_tables4 = true, /* each configuration picks its own */
				   .test_clock = test_clock };
	struct rl_config none = {};
	char err[RL_ERRLEN];

	memset(p, 0, sizeof(*p));
	p->test_clock = test_clock;
	/* The maps, made by a program that never runs; each configuration loads its own. */
	p->mapskel = rl_prog_open(&none, &po, err, sizeof(err));
	if (!p->mapskel) {
		rl_test_fail(__FILE__, __LINE__, "load the maps: %s", err);
		return false;
	}
	rl_prog_maps(p->mapskel, &p->maps);
	p->clock_fd = bpf_map__fd(p->mapskel->maps.rl_clock);
	/* rl_sets4's states read back near the clock the program reads. */
	if (test_clock)
		rl_state_clock_fd = p->clock_fd;
	p->counters_fd = p->maps.counters;
	p->prog_fd = -1;
	return true;
}

bool rl_prog_configure(struct rl_prog *p, __u32 slot, const struct rl_config *cfg)
{
	return rl_prog_configure_table4(p, slot, cfg, -1);
}

bool rl_prog_configure_table4(struct rl_prog *p, __u32 slot, const struct rl_config *cfg,
			      int table4)
{
	struct rl_prog_opts po = { .reuse = &p->maps,
				   .reuse_clock = p->clock_fd,
				   .test_clock = p->test_clock };
	struct rl_ctl ctl = { .active = slot };
	struct rl_config c = *cfg, live;
	struct xdp_ratelimit *skel;
	char err[RL_ERRLEN];
	__u32 zero = 0, bits, a;

	/* The IPv4 table as attach and set choose it; the previous one from the live copy. */
	if (!ASSERT_OK(rl_sa_bits_live(&p->maps, &bits), "size of rl_sets4"))
		return false;
	rl_table4_choose(&c, bits);
	if (table4 >= 0)
		c.table4 = (__u16)table4;
	c.prev_table4 =
		p->prog_fd >= 0 && !rl_config_read(&p->maps, &live, &a) ? live.table4 : c.table4;
	cfg = &c;
	if (!ASSERT_OK(bpf_map_update_elem(p->maps.config, &slot, cfg, BPF_ANY), "write rl_config"))
		return false;
	if (!ASSERT_OK(bpf_map_update_elem(p->maps.ctl, &zero, &ctl, BPF_ANY), "write rl_ctl"))
		return false;
	skel = rl_prog_open(cfg, &po, err, sizeof(err));
	if (!skel) {
		rl_test_fail(__FILE__, __LINE__, "load the program: %s", err);
		return false;
	}
	rl_prog_destroy(p->skel);
	p->skel = skel;
	p->prog_fd = rl_prog_fd(skel);
	return true;
}

bool rl_build_config(struct rl_config *cfg, const char *const *opts, const struct rl_config *prev)
{
	char err[RL_ERRLEN] = "";
	struct rl_policy pol;
	struct rl_opts o;

	if (rl_policy_parse(&pol, &o, opts, err, sizeof(err))) {
		rl_test_fail(__FILE__, __LINE__, "options: %s", err);
		return false;
	}
	if (rl_config_build(cfg, &pol, &o, prev, err, sizeof(err))) {
		rl_test_fail(__FILE__, __LINE__, "rl_config_build: %s", err);
		return false;
	}
	return true;
}

int rl_prog_run(struct rl_prog *p, __u64 now, const void *frame, __u32 len, __u32 repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = len,
		    .repeat = repeat);
	__u32 zero = 0;
	int err;

	if (p->test_clock && bpf_map_update_elem(p->clock_fd, &zero, &now, BPF_ANY))
		return -errno;
	err = bpf_prog_test_run_opts(p->prog_fd, &opts);
	return err ? err : (int)opts.retval;
}

bool rl_prog_counters(struct rl_prog *p, struct rl_counters *sum)
{
	return ASSERT_OK(rl_counters_sum(p->counters_fd, sum), "read rl_counters");
}

/* See harness.h. */
int rl_prog_refers_to(int prog_fd, int map_fd)
{
	struct bpf_prog_info info = {};
	struct bpf_map_info mi = {};
	__u32 len = sizeof(info), mlen = sizeof(mi), n;
	struct bpf_insn *insns;
	int found = 0;

	if (bpf_obj_get_info_by_fd(map_fd, &mi, &mlen) ||
	    bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -1;
	n = info.xlated_prog_len / sizeof(*insns);
	insns = calloc(n, sizeof(*insns));
	if (!insns)
		return -1;
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = n * sizeof(*insns);
	info.xlated_prog_insns = (__u64)(unsigned long)insns;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len)) {
		free(insns);
		return -1;
	}
	for (__u32 i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_DW | BPF_IMM) &&
		    (insns[i].src_reg == BPF_PSEUDO_MAP_FD ||
		     insns[i].src_reg == BPF_PSEUDO_MAP_VALUE) &&
		    (__u32)insns[i].imm == mi.id)
			found = 1;
	free(insns);
	return found;
}

bool rl_prog_rules(struct rl_prog *p, const struct rl_config *def, const char *const *rules)
{
	char err[RL_ERRLEN] = "", *copy, *save = NULL, *words[32];
	struct rl_rules_cfg old, *cfg = calloc(1, sizeof(*cfg));
	struct rl_ruleset set;
	struct rl_policy pol;
	struct rl_opts o;
	bool ok = false;

	rl_config_policy(def, &pol, &o);
	if (!cfg || !ASSERT_OK(rl_ruleset_init(&set, &pol, &o, err, sizeof(err)), err)) {
		free(cfg);
		return false;
	}
	for (int i = 0; rules[i]; i++) {
		struct rl_rule r;
		size_t nw = 0;

		copy = strdup(rules[i]);
		for (char *t = strtok_r(copy, " ", &save); t && nw < 31;
		     t = strtok_r(NULL, " ", &save))
			words[nw++] = t;
		words[nw] = NULL;
		if (!ASSERT_OK(
			    rl_rule_parse(&r, NULL, (const char *const *)words, err, sizeof(err)),
			    err)) {
			free(copy);
			goto out;
		}
		free(copy);
		if (!ASSERT_OK(rl_ruleset_add(&set, &r, NULL, err, sizeof(err)), err)) {
			rl_rule_free(&r);
			goto out;
		}
	}
	ok = ASSERT_OK(rl_rules_read(&p->maps, &old), "rules") &&
	     ASSERT_OK(rl_rules_compile(&set, &old, cfg, err, sizeof(err)), err) &&
	     ASSERT_OK(rl_rules_fill(&p->maps, &set, cfg, &old, NULL, err, sizeof(err)), err) &&
	     ASSERT_OK(rl_rules_commit(&p->maps, cfg, err, sizeof(err)), err) &&
	     rl_prog_configure(p, 0, def);
out:
	rl_ruleset_free(&set);
	free(cfg);
	return ok;
}

bool rl_test_rule_add(struct rl_ruleset *set, const char *s, const char *before)
{
	char *copy = strdup(s), *save = NULL, *words[64], err[RL_ERRLEN] = "";
	struct rl_rule r;
	size_t n = 0;
	int ret;

	if (!ASSERT_TRUE(copy != NULL, "strdup"))
		return false;
	for (char *t = strtok_r(copy, " ", &save); t && n < sizeof(words) / sizeof(*words) - 1;
	     t = strtok_r(NULL, " ", &save))
		words[n++] = t;
	words[n] = NULL;
	ret = rl_rule_parse(&r, NULL, (const char *const *)words, err, sizeof(err));
	if (!ret) {
		ret = rl_ruleset_add(set, &r, before, err, sizeof(err));
		if (ret)
			rl_rule_free(&r);
	}
	if (ret)
		rl_test_fail(__FILE__, __LINE__, "rule '%s': %s", s, err);
	free(copy);
	return !ret;
}
