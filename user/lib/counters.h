/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The limiter's counters, listed once: a row per field of struct
 * rl_counters (include/rl_common.h) with its name and a line saying what it
 * counts. stats prints them by these names (its JSON keys too), the exporter
 * serves them as these metrics, and the man page's COUNTERS section is
 * generated from the same rows (user/cli/gen_man.c), so none can be left out
 * of one of them.
 */
#ifndef RL_COUNTERS_H
#define RL_COUNTERS_H

#include <stddef.h>

struct rl_counter_info {
	const char *name; /* stats' name and JSON key: "would_drop" */
	size_t off; /* of its __u64 in struct rl_counters */
	const char *help; /* what it counts, one sentence: the man page, stats --help */
	/*
	 * The exporter's metric, without "xdp_ratelimit_" (NULL: not exported,
	 * as rx_packets = passed + dropped), and the label that tells the
	 * rows of one metric apart (NULL: the metric has one row).
	 */
	const char *metric, *label;
	/* The metric's HELP, on the first row of each metric; NULL on the others. */
	const char *metric_help;
};

extern const struct rl_counter_info rl_counter_table[];
extern const size_t rl_counter_count;

#endif /* RL_COUNTERS_H */
