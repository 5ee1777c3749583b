// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opts.h"
#include "harness.h"
#include "maps.h"
#include "test.h"

void rl_prog_close(struct rl_prog *p)
{
	xdp_ratelimit__destroy(p->skel);
	p->skel = NULL;
}

bool rl_prog_load(struct rl_prog *p, bool test_clock, __u32 max_sources)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->skel = xdp_ratelimit__open();
	if (!ASSERT_TRUE(p->skel != NULL, "open skeleton"))
		return false;
	p->skel->rodata->rl_test_clock = test_clock;
	p->test_clock = test_clock;
	err = bpf_map__set_max_entries(p->skel->maps.rl_state, max_sources);
	if (!ASSERT_OK(err, "rl_state max_entries"))
		goto fail;
	err = xdp_ratelimit__load(p->skel);
	if (!ASSERT_OK(err, "load skeleton"))
		goto fail;
	p->prog_fd = bpf_program__fd(p->skel->progs.xdp_ratelimit);
	p->state_fd = bpf_map__fd(p->skel->maps.rl_state);
	p->config_fd = bpf_map__fd(p->skel->maps.rl_config);
	p->ctl_fd = bpf_map__fd(p->skel->maps.rl_ctl);
	p->counters_fd = bpf_map__fd(p->skel->maps.rl_counters);
	p->clock_fd = bpf_map__fd(p->skel->maps.rl_clock);
	return true;
fail:
	rl_prog_close(p);
	return false;
}

bool rl_prog_configure(struct rl_prog *p, __u32 slot, const struct rl_config *cfg)
{
	struct rl_ctl ctl = { .active = slot };
	__u32 zero = 0;

	if (!ASSERT_OK(bpf_map_update_elem(p->config_fd, &slot, cfg, BPF_ANY), "write rl_config"))
		return false;
	return ASSERT_OK(bpf_map_update_elem(p->ctl_fd, &zero, &ctl, BPF_ANY), "write rl_ctl");
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
