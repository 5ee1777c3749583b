// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A limiter's kernel memory: see memory.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "maps.h"
#include "memory.h"
#include "pins.h"

int rl_map_memlock(int fd, __u64 *bytes)
{
	char path[64], line[128];
	int ret = -ENOENT;
	FILE *f;

	/* libbpf 1.1's struct bpf_map_info has no bytes_memlock: bpftool reads it here too. */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %" SCNu64, (uint64_t *)bytes) == 1) {
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

static __u32 map_id(int fd, __u32 *max_entries)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	if (max_entries)
		*max_entries = info.max_entries;
	return info.id;
}

/* The maps of the program that runs the limiter with map ids @ids, but those. */
static int prog_maps(const __u32 ids[RL_N_MAPS], __u64 *bytes)
{
	struct rl_member m[RL_MAX_MEMBERS];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), pids[64], mode;
	int n, fd = -1, ret;

	*bytes = 0;
	n = rl_members_of(ids[RL_MAP_counters], m, RL_MAX_MEMBERS);
	if (n <= 0)
		return n; /* no program here: the pins are all there is */
	ret = rl_prog_alone(m[0].ifindex, &fd, &mode);
	if (ret <= 0)
		return ret;
	info.nr_map_ids = sizeof(pids) / sizeof(pids[0]);
	info.map_ids = (__u64)(unsigned long)pids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ret = -errno;
		goto out;
	}
	ret = 0;
	for (__u32 i = 0; i < info.nr_map_ids && i < sizeof(pids) / sizeof(pids[0]); i++) {
		bool pinned = false;
		__u64 b = 0;
		int mfd;

		for (int j = 0; j < RL_N_MAPS; j++)
			pinned |= ids[j] == pids[i];
		if (pinned)
			continue;
		mfd = bpf_map_get_fd_by_id(pids[i]);
		if (mfd < 0)
			continue; /* freed meanwhile */
		if (!rl_map_memlock(mfd, &b))
			*bytes += b;
		close(mfd);
	}
out:
	close(fd);
	return ret;
}

int rl_memory_read(const struct rl_pins *pins, struct rl_memory *m)
{
	__u32 ids[RL_N_MAPS], max4 = 0, zero = 0;
	struct rl_ctl ctl = {};
	int ret;

	memset(m, 0, sizeof(*m));
	for (int i = 0; i < RL_N_MAPS; i++) {
		ids[i] = map_id(pins->fd[i], i == RL_MAP_state4 ? &max4 : NULL);
		ret = rl_map_memlock(pins->fd[i], &m->map[i]);
		if (ret)
			return ret;
		m->total += m->map[i];
	}
	/* --max-sources as attached: rl_state4 is a one-entry stand-in when rl_sets4 is in use. */
	if (!bpf_map_lookup_elem(pins->ctl, &zero, &ctl) && ctl.max_sources4)
		max4 = ctl.max_sources4;
	m->max_sources4 = max4;
	m->max_sources6 = rl_max_sources6(pins);
	ret = prog_maps(ids, &m->prog);
	if (ret < 0)
		return ret;
	m->total += m->prog;
	return 0;
}
