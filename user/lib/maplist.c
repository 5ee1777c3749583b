// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The lists of a limiter's maps generated from RL_MAPS(): see maplist.h. */
#include <string.h>
#include "maplist.h"
#include "rl_skel.h"

const char *const rl_map_names[RL_N_MAPS] = {
#define RL_MAP_NAME(field, pin, skel, size, what) #pin,
	RL_MAPS(RL_MAP_NAME)
#undef RL_MAP_NAME
};

const char *const rl_map_whats[RL_N_MAPS] = {
#define RL_MAP_WHAT(field, pin, skel, size, what) what,
	RL_MAPS(RL_MAP_WHAT)
#undef RL_MAP_WHAT
};

const enum rl_map_size rl_map_sizes[RL_N_MAPS] = {
#define RL_MAP_SIZE(field, pin, skel, size, what) size,
	RL_MAPS(RL_MAP_SIZE)
#undef RL_MAP_SIZE
};

void rl_skel_maps(const struct xdp_ratelimit *skel, struct bpf_map *maps[RL_N_MAPS])
{
	struct bpf_map *m[] = {
#define RL_SKEL_MAP(field, pin, skel_map, size, what) skel->maps.skel_map,
		RL_MAPS(RL_SKEL_MAP)
#undef RL_SKEL_MAP
	};

	memcpy(maps, m, sizeof(m));
}
