// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "live.h"
#include "maps.h"
#include "pins.h"
#include "rl_skel.h"
#include "xdp_attach.h"

/* --max-sources as attached (0 for maps made before rl_ctl recorded it). */
static __u32 ctl_max_sources4(const struct rl_pins *pins)
{
	struct rl_ctl ctl = {};
	__u32 zero = 0;

	if (bpf_map_lookup_elem(pins->ctl, &zero, &ctl))
		return 0;
	return ctl.max_sources4;
}

int rl_live_read(const struct rl_iface *ifc, const struct rl_pins *pins, struct rl_live *l,
		 char *err, size_t errlen)
{
	struct bpf_map_info i4 = {}, i6 = {};
	__u32 l4 = sizeof(i4), l6 = sizeof(i6);
	int ret;

	ret = rl_config_read(pins, &l->cfg, &l->active);
	if (!ret && (bpf_obj_get_info_by_fd(pins->state4, &i4, &l4) ||
		     bpf_obj_get_info_by_fd(pins->state6, &i6, &l6)))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "couldn't read the configuration of '%s': %s", ifc->name,
			 strerror(-ret));
		return ret;
	}
	/* --max-sources as attached: rl_state4 is a one-entry stand-in when rl_sets4 is in use. */
	l->max_sources = ctl_max_sources4(pins) ?: i4.max_entries;
	l->max_sources6 = i6.max_entries;
	return 0;
}

/* The id of map @fd, 0 if it cannot be read. */
static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* Of the maps @ids of a program, the fd of the one named .rodata.cfg (libbpf's name). */
static int rodata_cfg_fd(const __u32 *ids, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue; /* freed meanwhile: not the program's any more */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, ".rodata.cfg") &&
		    info.value_size == sizeof(struct xdp_ratelimit__rodata_cfg))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int rl_live_compiled(const struct rl_pins *pins, struct rl_config *cfg, struct rl_rules_cfg *rules)
{
	struct xdp_ratelimit__rodata_cfg *v = NULL;
	struct rl_member m[RL_MAX_MEMBERS];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[64], id = 0, zero = 0;
	int prog = -1, fd = -1, ret = -ENOENT, n;

	/* The interfaces of this namespace that run a program on these maps. */
	n = rl_members_of(map_id(pins->counters), m, RL_MAX_MEMBERS);
	if (n <= 0)
		return n ? n : -ENOENT;
	for (int i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		__u32 mid;

		if (bpf_xdp_query(m[i].ifindex, 0, &q))
			continue; /* removed meanwhile: not a member any more */
		mid = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		/*
		 * Members on different programs: a change killed between their
		 * swaps, which wrote no copy yet. The copies are the old state,
		 * the one rl_members_converge() puts back on every member.
		 */
		if (id && mid != id)
			return -ENOENT;
		id = mid;
	}
	if (!id)
		return -ENOENT;
	prog = bpf_prog_get_fd_by_id(id);
	if (prog < 0)
		return errno == ENOENT ? -ENOENT : -errno; /* detached meanwhile */
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog, &info, &len)) {
		ret = -errno;
		goto out;
	}
	if (info.nr_map_ids > sizeof(ids) / sizeof(ids[0]))
		goto out; /* not ours: ours uses fewer maps */
	fd = rodata_cfg_fd(ids, info.nr_map_ids);
	if (fd < 0)
		goto out;
	v = malloc(sizeof(*v));
	if (!v) {
		ret = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		ret = -errno;
		goto out;
	}
	if (cfg)
		*cfg = v->rl_cfg;
	if (rules)
		*rules = v->rl_rules;
	ret = 0;
out:
	free(v);
	if (fd >= 0)
		close(fd);
	close(prog);
	return ret;
}
