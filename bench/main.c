// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench: the measuring program behind make bench (bench/run.sh).
 *
 *	rl-bench micro --out DIR [--rounds N] [--reps N] [--quick] [--only PHASE]
 *		per-packet cost with BPF_PROG_TEST_RUN, against the reference
 *		programs; cost against the number of sources; bytes per source
 *	rl-bench accuracy --out DIR [--seconds S]
 *		one source at 10x its limit from 2 CPUs: passed vs r*t + b
 *	rl-bench gen --to IFACE [--pps N] [--seconds S] [--random]
 *		XDP frames into a veth, for the end-to-end benchmark
 *	rl-bench setassoc --out DIR [--rounds N] [--reps N] [--quick] [--only PHASE]
 *	rl-bench syncookie --out DIR [--rounds N] [--reps N] [--quick]
 *		the set-associative IPv4 table study (issue #11): speed against an
 *		LRU hash and (c'), exactness on two CPUs, a spoofed flood
 *	rl-bench sync-cost --redis URL --sources N [--nodes K] [--rounds R]
 *		one node's sync round trip with N sources
 *	rl-bench sync-kernel --sources N [--rounds R]
 *		the kernel side of one interval: drain and charge of N sources
 *	rl-bench spread --out DIR [--rounds N] [--reps N] [--quick]
 *		the IPv4 table's access pattern in userspace, tables of 1M to 9M
 *		sources: lines against pages (issue #30)
 *
 * Results go to DIR as raw TSV and as markdown sections that run.sh joins.
 * This file is main() and the table of phases only: the phases are in their
 * own files and what they share in common.c, so calls go one way, from here
 * to the phases and from the phases to common.c.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <bpf/libbpf.h>
#include "bench.h"

/* A phase: its name on the command line (bpftool's cmds[]). */
struct bench_phase {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct bench_phase phases[] = {
	{ "micro", bench_micro },
	{ "accuracy", bench_accuracy },
	{ "gen", bench_gen },
	{ "setassoc", bench_setassoc },
	{ "sync-cost", bench_sync_cost },
	{ "fill", bench_fill },
	{ "sync-kernel", bench_sync_kernel },
	{ "syncookie", bench_syncookie },
	{ "spread", bench_spread },
	{},
};

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rl-bench [--ifname IFACE] micro --out DIR [--rounds N] [--reps N] [--quick]\n"
		"                  [--only matrix,sets,scale,memory,sampling,sync,paths]\n"
		"       rl-bench [--ifname IFACE] accuracy --out DIR [--seconds S]\n"
		"       rl-bench [--ifname IFACE] gen --to IFACE [--pps N] [--seconds S] [--count N]\n"
		"                [--random] [--cpu N]\n"
		"       rl-bench setassoc --out DIR [--rounds N] [--reps N] [--quick]\n"
		"                [--only speed|exact|flood]\n"
		"       rl-bench [--ifname IFACE] syncookie --out DIR [--rounds N] [--reps N] [--quick]\n"
		"       rl-bench sync-cost --redis URL --sources N [--nodes K] [--rounds R]\n"
		"       rl-bench [--ifname IFACE] sync-kernel --sources N [--rounds R]\n"
		"       rl-bench spread --out DIR [--rounds N] [--reps N] [--quick]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "ifname", required_argument, NULL, 'i' }, {} };
	int c;

	/* The options before the phase (getopt stops at its name). */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (c != 'i') {
			usage(stderr);
			return 2;
		}
		bench_ifindex = (int)if_nametoindex(optarg);
		if (!bench_ifindex) {
			fprintf(stderr, "rl-bench: no interface '%s'\n", optarg);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	libbpf_set_print(quiet_libbpf);
	for (const struct bench_phase *p = phases; p->name; p++)
		if (!strcmp(p->name, argv[optind]))
			return p->fn(argc - optind, argv + optind);
	usage(stderr);
	return 2;
}
