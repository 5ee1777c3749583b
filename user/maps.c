// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Configuration slots, counters and source counts of a limiter's maps: see maps.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "maps.h"

int rl_config_read(const struct rl_pins *pins, struct rl_config *cfg, __u32 *active)
{
	struct rl_ctl ctl;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(pins->ctl, &zero, &ctl))
		return -errno;
	if (ctl.active > 1)
		return -EINVAL;
	if (bpf_map_lookup_elem(pins->config, &ctl.active, cfg))
		return -errno;
	*active = ctl.active;
	return 0;
}

int rl_config_swap(const struct rl_pins *pins, const struct rl_config *cfg, __u32 active)
{
	__u32 zero = 0, slot = !active;
	struct rl_ctl ctl;

	if (bpf_map_lookup_elem(pins->ctl, &zero, &ctl))
		return -errno;
	ctl.active = slot;
	if (bpf_map_update_elem(pins->config, &slot, cfg, BPF_ANY))
		return -errno;
	/* The flip: one aligned 32-bit store in the array value. */
	if (bpf_map_update_elem(pins->ctl, &zero, &ctl, BPF_ANY))
		return -errno;
	return 0;
}

int rl_counters_sum(int map_fd, struct rl_counters *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rl_counters *per;
	__u32 zero = 0;
	int ret = 0;

	if (ncpu < 1)
		return -EINVAL;
	per = calloc((size_t)ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(map_fd, &zero, per)) {
		ret = -errno;
		goto out;
	}
	for (int c = 0; c < ncpu; c++) {
		__u64 *d = (__u64 *)sum, *s = (__u64 *)&per[c];

		for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
			d[i] += s[i];
	}
out:
	free(per);
	return ret;
}

int rl_counters_read(const struct rl_pins *pins, struct rl_counters *sum)
{
	return rl_counters_sum(pins->counters, sum);
}

int rl_count_sources(const struct rl_pins *pins, __u32 gen, __u64 *n)
{
	struct rl_state_key keys[1024];
	__u64 vals[1024];
	void *in = NULL, *out;
	__u32 cnt;
	int r;

	*n = 0;
	for (;;) {
		cnt = 1024;
		r = bpf_map_lookup_batch(pins->state, in, &out, keys, vals, &cnt, NULL);
		if (r && errno != ENOENT)
			return -errno;
		for (__u32 i = 0; i < cnt; i++)
			*n += keys[i].gen == gen;
		if (r)
			return 0;
		in = &out;
	}
}
