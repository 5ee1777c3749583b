/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The maps of a limiter, listed once. Every list of them is generated from
 * RL_MAPS(): the fds of struct rl_pins, the pin names (user/lib/pins.h), the
 * skeleton's maps in the same order (rl_skel_maps()), and from those the
 * reuse of live maps, the layouts checked and the fds closed.
 *
 * Each row is X(field, pin, skel, size, what):
 *   field  its fd in struct rl_pins (p->field), and its index RL_MAP_field
 *   pin    its name in the pin directory, the object's name for it
 *   skel   its member of the skeleton's maps: the object's name, but for
 *          rl_evctl and rl_hot, the sections .data.evctl and .data.hot, which
 *          libbpf calls data_evctl and data_hot
 *   size   how its entries are counted (enum rl_map_size below)
 *   what   what it holds, a phrase: the man page's FILES lists every map
 *          with it (user/cli/gen_man.c)
 * The order is the pins' order; a new map is a new row.
 */
#ifndef RL_MAPLIST_H
#define RL_MAPLIST_H

/*
 * How a map is sized (rl_map_entries() of user/lib/prog.h). A feature's map
 * has one entry while the feature is off (the code that would look it up is
 * not in the program: the feature is compiled in), and is made anew at full
 * size, swapped in with the program that turns the feature on.
 */
enum rl_map_size {
	RL_SIZE_OBJ, /* as the BPF object declares it (an LPM trie's memory grows with it) */
	RL_SIZE_TABLE4, /* IPv4 sources: the policy's table full, the others one entry */
	RL_SIZE_SRC6, /* IPv6 sources: --max-sources6 (rl_sets6) */
	RL_SIZE_RSTATE, /* states of limit rules: only with a limit rule */
	RL_SIZE_PORTS, /* the port table: only with a rule that matches ports */
	RL_SIZE_PFX, /* the networks of the source prefixes: only with a rule that has some */
	/* Sync counting's tables (include/rl_sync.h): only while counting is on. */
	RL_SIZE_SYNC_SLOTS, /* the set tables' counters: a word per slot */
	RL_SIZE_SYNC_DIRTY, /* a bit per counter word */
	RL_SIZE_SYNC4, /* IPv4 sources of the LRU table (when the policy uses it) */
	RL_SIZE_SYNC6, /* IPv6 sources: --max-sources6 */
	RL_SIZE_SYNCR, /* sources of limit rules: as rl_rstate, with a limit rule */
	RL_SIZE_AGG, /* the levels' states: only while a level is on (policy or rule) */
	RL_SIZE_ADMIT, /* the admission cap's refusals: only while the cap is on */
};

#define RL_MAPS(X)                                                                                  \
	/* The sources, the policy's copy and its slot, the counters. */                            \
	X(state4, rl_state4, rl_state4, RL_SIZE_TABLE4,                                             \
	  "IPv4 sources in an LRU hash: the table of a policy whose states do not fit the"          \
	  " slots of rl_sets4 (long bursts, wide byte windows), one entry otherwise")               \
	X(sets6, rl_sets6, rl_sets6, RL_SIZE_SRC6,                                                  \
	  "IPv6 sources (one per --prefix6 network) in a set-associative table: 128-byte "          \
	  "sets of four ways, each a lock word, a state and the source, 2 ways per source "         \
	  "of --max-sources6")                                                                      \
	X(config, rl_config, rl_config, RL_SIZE_OBJ,                                                \
	  "a copy of the configuration compiled into the program, in two slots, for "               \
	  "status and bpftool")                                                                     \
	X(ctl, rl_ctl, rl_ctl, RL_SIZE_OBJ,                                                         \
	  "which slot of rl_config is live, and the interface and network namespace the "           \
	  "maps belong to")                                                                         \
	X(counters, rl_counters, rl_counters, RL_SIZE_OBJ, "the per-CPU counters (see COUNTERS)")   \
	/* Drop samples: include/rl_events.h. */                                                    \
	X(events, rl_events, rl_events, RL_SIZE_OBJ, "the ring buffer of drop samples (events)")    \
	X(evctl, rl_evctl, data_evctl, RL_SIZE_OBJ,                                                 \
	  "the drop samples reader's switch: on, 1 in N, the cap and its window, the "              \
	  "reader's pid")                                                                           \
	X(evcpu, rl_evcpu, rl_evcpu, RL_SIZE_OBJ,                                                   \
	  "per CPU, for drop samples: the countdown, samples sent, over the cap, lost")             \
	/* Rules (user/lib/rulemaps.h): their copy, counters, per-source states, prefix tries. */   \
	X(rcfg, rl_rcfg, rl_rcfg, RL_SIZE_OBJ,                                                      \
	  "a readable copy of the rules: each rule's name, match, action and policy")               \
	X(rcnt, rl_rcnt, rl_rcnt, RL_SIZE_OBJ, "the per-CPU counters of each rule")                 \
	X(rstate, rl_rstate, rl_rstate, RL_SIZE_RSTATE,                                             \
	  "the per-source states of limit rules (one entry without a limit rule)")                  \
	X(src4a, rl_src4a, rl_src4a, RL_SIZE_OBJ,                                                   \
	  "the rules' IPv4 source prefixes, an LPM trie; rl_src4b is its twin, filled "             \
	  "while the program reads this one, so a rule change is one swap")                         \
	X(src6a, rl_src6a, rl_src6a, RL_SIZE_OBJ,                                                   \
	  "the rules' IPv6 source prefixes, an LPM trie, with its twin rl_src6b")                   \
	X(src4b, rl_src4b, rl_src4b, RL_SIZE_OBJ, "the twin of rl_src4a")                           \
	X(src6b, rl_src6b, rl_src6b, RL_SIZE_OBJ, "the twin of rl_src6a")                           \
	X(ports, rl_ports, rl_ports, RL_SIZE_PORTS,                                                 \
	  "the rules' destination ports (one entry without a --dport rule)")                        \
	/* Fleet sync (include/rl_sync.h): the counters the agent drains, its status. */            \
	X(sync_slots, rl_sync_slots, rl_sync_slots, RL_SIZE_SYNC_SLOTS,                             \
	  "fleet sync: the units each IPv4 source passed since the agent last drained them, a"      \
	  " counter word per slot of rl_sets4 (or way of rl_wide4) (one entry while no agent "      \
	  "counts)")                                                                                \
	X(sync_dirty, rl_sync_dirty, rl_sync_dirty, RL_SIZE_SYNC_DIRTY,                             \
	  "fleet sync: a bit per counter word of rl_sync_slots that holds units, so that a drain "  \
	  "reads only those")                                                                       \
	X(sync4, rl_sync4, rl_sync4, RL_SIZE_SYNC4,                                                 \
	  "fleet sync: the same for the IPv4 sources of rl_state4, in an LRU hash under their "     \
	  "key (one entry unless the policy uses rl_state4)")                                       \
	X(sync6, rl_sync6, rl_sync6, RL_SIZE_SYNC6,                                                 \
	  "fleet sync: the same for IPv6 sources, in an LRU hash of --max-sources6 entries")        \
	X(syncr, rl_syncr, rl_syncr, RL_SIZE_SYNCR,                                                 \
	  "fleet sync: the same for the sources of limit rules, in an LRU hash as large as "        \
	  "rl_rstate")                                                                              \
	X(sync_status, rl_sync_status, rl_sync_status, RL_SIZE_OBJ,                                 \
	  "the sync agent's status, as stats shows it")                                             \
	/*                                                                                        \
	 * IPv4 sources: state4 is the LRU hash rl_state4, sets4 the                              \
	 * set-associative rl_sets4 and wide4 its wide layout rl_wide4                            \
	 * (include/rl_sa.h); the policy uses one of them (struct rl_config's                     \
	 * table4), the others have a single entry. sweep: the timer that                         \
	 * sweeps sets4.                                                                          \
	 */ \
	X(sets4, rl_sets4, rl_sets4, RL_SIZE_TABLE4,                                                \
	  "IPv4 sources in the set-associative table most policies use: 64-byte sets of "           \
	  "eight 8-byte slots, 4 slots per source of --max-sources (one entry when the "            \
	  "policy uses another table)")                                                             \
	X(sweep, rl_sweep, rl_sweep, RL_SIZE_OBJ,                                                   \
	  "the timer that sweeps idle states out of rl_sets4")                                      \
	X(wide4, rl_wide4, rl_wide4, RL_SIZE_TABLE4,                                                \
	  "IPv4 sources in the wide layout of rl_sets4, for policies whose states need 64"          \
	  " bits (one entry otherwise)")                                                            \
	X(pfx, rl_pfx, rl_pfx, RL_SIZE_PFX,                                                         \
	  "the networks (/22) that hold a rule's source prefix, per family and pair of "            \
	  "tries: a source outside them skips the tries (one entry without prefixes)")              \
	/* The limited sources, for top: include/rl_hot.h. */                                       \
	X(hot, rl_hot, data_hot, RL_SIZE_OBJ,                                                       \
	  "the sources last dropped over their limit (4096 entries, one per hash), which top "      \
	  "reads instead of walking every source")                                                  \
	/* The levels above the source (include/rl_agg.h). */                                       \
	X(agg, rl_agg, rl_agg, RL_SIZE_AGG,                                                         \
	  "the states of the levels above the source: prefix aggregates, the interface's "          \
	  "limit, the admission cap and the new sources beyond it (an LRU hash; one entry "         \
	  "while no level is on)")                                                                  \
	X(admit, rl_admit, rl_admit, RL_SIZE_ADMIT,                                                 \
	  "the admission cap's memory of the new sources it refused, to admit them when seen "      \
	  "again (one entry while the cap is off)")

/* RL_MAP_state4, ...: a map's index in every list; RL_N_MAPS of them. */
enum {
#define RL_MAP_INDEX(field, pin, skel, size, what) RL_MAP_##field,
	RL_MAPS(RL_MAP_INDEX)
#undef RL_MAP_INDEX
		RL_N_MAPS
};

/*
 * File descriptors of the maps of a limiter: by name (p->state4) or by
 * index (p->fd[RL_MAP_state4]), one storage.
 */
struct rl_pins {
	union {
		struct {
#define RL_PINS_FIELD(field, pin, skel, size, what) int field;
			RL_MAPS(RL_PINS_FIELD)
#undef RL_PINS_FIELD
		};
		int fd[RL_N_MAPS];
	};
};

_Static_assert(sizeof(struct rl_pins) == RL_N_MAPS * sizeof(int), "one fd per map, no padding");

/* The pin names, in the order of struct rl_pins. */
extern const char *const rl_map_names[RL_N_MAPS];

/* What each holds (the rows' what), in the same order. */
extern const char *const rl_map_whats[RL_N_MAPS];

/* How each is sized, in the same order. */
extern const enum rl_map_size rl_map_sizes[RL_N_MAPS];

/* The skeleton's maps in struct rl_pins order. */
struct xdp_ratelimit;
struct bpf_map;
void rl_skel_maps(const struct xdp_ratelimit *skel, struct bpf_map *maps[RL_N_MAPS]);

#endif /* RL_MAPLIST_H */
