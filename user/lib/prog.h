/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP program built for one configuration: the configuration is compiled
 * into its read-only data before load (see bpf/maps.h), so
 * every change of policy loads a new program, which reuses the live maps.
 */
#ifndef RL_PROG_H
#define RL_PROG_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "maps.h"
#include "pins.h"

struct xdp_ratelimit;
struct rl_rules_cfg;

struct rl_prog_opts {
	const struct rl_pins *reuse; /* the maps of a live limiter, or NULL: new maps */
	__u32 max_sources4, max_sources6; /* table sizes of new maps (0: the defaults) */
	/*
	 * New maps: every table at full size (tests, benchmarks): both IPv4
	 * tables rather than the one the policy uses (cfg->table4) and a
	 * stand-in, and the maps of every feature (rule states, the port
	 * table, sync counters) rather than those @cfg and the rules turn on.
	 */
	bool both_tables4;
	bool test_clock; /* read the clock from rl_clock (tests) */
	int reuse_clock; /* tests: the rl_clock map of an earlier load, or 0 */
	/*
	 * The rule set to compile in; NULL: the one in the reused maps' rl_rcfg
	 * (none for new maps).
	 */
	const struct rl_rules_cfg *rules;
	/*
	 * Load the sync charge and drain programs (SEC("syscall"),
	 * rl_charge_fd()) instead of the XDP program and the sweep's.
	 */
	bool charge;
};

/*
 * Open the BPF object, compile @cfg into it and load it. Returns the loaded
 * skeleton, or NULL with the reason in @err (and errno set). For tests, the
 * environment variable XDP_RATELIMIT_FAULT=prog-load makes the load fail
 * with EPERM before the kernel is asked, as a refusal by the verifier would.
 */
struct xdp_ratelimit *rl_prog_open(const struct rl_config *cfg, const struct rl_prog_opts *o,
				   char *err, size_t errlen);
void rl_prog_destroy(struct xdp_ratelimit *skel);
/*
 * The XDP program rl_prog_open() loaded (of the two of
 * bpf/xdp_ratelimit.bpf.c), its fd, and its maps' fds in struct rl_pins
 * (owned by the skeleton).
 */
struct bpf_program;
struct bpf_program *rl_prog_xdp(const struct xdp_ratelimit *skel);
int rl_prog_fd(const struct xdp_ratelimit *skel);
void rl_prog_maps(const struct xdp_ratelimit *skel, struct rl_pins *fds);
/*
 * The entries map @i (RL_MAP_*) needs in the program for @cfg and @rules, on
 * tables of @max4 IPv4 and @max6 IPv6 sources, if it is a feature's
 * (rl_map_is_feature(): sync counters, rule states, the port table): full
 * when the feature is on, 1 when off. 0 for the other maps.
 */
__u32 rl_map_entries(int i, const struct rl_config *cfg, const struct rl_rules_cfg *rules,
		     __u32 max4, __u32 max6);
bool rl_map_is_feature(int i);
/*
 * The sync charge program's fd, its batch map's and the drain program's
 * (loaded with rl_prog_opts.charge).
 */
int rl_charge_fd(const struct xdp_ratelimit *skel, int *batch_fd, int *drain_fd);

#endif /* RL_PROG_H */
