// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "live.h"
#include "maps.h"
#include "pins.h"

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
	struct bpf_map_info i4 = {};
	__u32 l4 = sizeof(i4);
	int ret;

	ret = rl_config_read(pins, &l->cfg, &l->active);
	if (!ret && bpf_obj_get_info_by_fd(pins->state4, &i4, &l4))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "couldn't read the configuration of '%s': %s", ifc->name,
			 strerror(-ret));
		return ret;
	}
	/* --max-sources as attached: rl_state4 is a one-entry stand-in when rl_sets4 is in use. */
	l->max_sources = ctl_max_sources4(pins) ?: i4.max_entries;
	l->max_sources6 = rl_max_sources6(pins);
	return 0;
}
