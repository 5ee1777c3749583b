/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP program under BPF_PROG_TEST_RUN, for the kernel tests, the fuzzer
 * and the concurrency tests: load a skeleton (test clock on or off), write a
 * configuration built from command-line style options, run frames, read
 * counters.
 */
#ifndef RL_HARNESS_H
#define RL_HARNESS_H

#include <stdbool.h>
#include <linux/types.h>
#include "config.h"
#include "maps.h"
#include "rl_skel.h"

struct rl_prog {
	struct xdp_ratelimit *mapskel; /* owns the maps */
	struct xdp_ratelimit *skel; /* the program of the last configuration */
	struct rl_pins maps;
	int prog_fd, counters_fd, clock_fd;
	bool test_clock;
};

/*
 * Make the maps, with the test clock on or off and tables of @max_sources;
 * the program is loaded by rl_prog_configure().
 */
bool rl_prog_load(struct rl_prog *p, bool test_clock, __u32 max_sources);
void rl_prog_close(struct rl_prog *p);
/*
 * Load the program built for @cfg on the maps (as set does: the previous
 * program is unloaded) and write its copy into @slot of rl_config.
 */
bool rl_prog_configure(struct rl_prog *p, __u32 slot, const struct rl_config *cfg);
/*
 * rl_prog_configure() with the IPv4 table @table4 (enum rl_table4) instead
 * of the one attach would choose: every table holds every policy rl_sets4
 * holds, so a test runs one policy on each.
 */
bool rl_prog_configure_table4(struct rl_prog *p, __u32 slot, const struct rl_config *cfg,
			      int table4);
/*
 * The rules @rules (each the words of "rule add IFACE", NULL-terminated) in
 * front of the default policy @def, made live on the maps as a change makes
 * them (compile, fill the unused tries, commit), then the program for @def
 * loaded with them. False after a failed check.
 */
bool rl_prog_rules(struct rl_prog *p, const struct rl_config *def, const char *const *rules);
/* A policy and options as on the command line, e.g. { "--rate", "10", NULL }. */
bool rl_build_config(struct rl_config *cfg, const char *const *opts, const struct rl_config *prev);
/*
 * Run one frame (at @now with the test clock); @repeat runs of it. Returns
 * the verdict, or a negative errno from BPF_PROG_TEST_RUN.
 */
int rl_prog_run(struct rl_prog *p, __u64 now, const void *frame, __u32 len, __u32 repeat);
/* The per-CPU counters summed over every possible CPU. */
bool rl_prog_counters(struct rl_prog *p, struct rl_counters *sum);
/*
 * Does the verified program @prog_fd still refer to map @map_fd (an ld_imm64
 * of it left after the verifier removed the code it proved dead)? 1, 0, or
 * -1 if it cannot be read.
 */
int rl_prog_refers_to(int prog_fd, int map_fd);

struct rl_ruleset;
/*
 * Add the rule "NAME --opt val ..." @s to @set, before the rule named
 * @before (NULL: last); a failure is the running test's, naming the rule.
 */
bool rl_test_rule_add(struct rl_ruleset *set, const char *s, const char *before);

#endif /* RL_HARNESS_H */
