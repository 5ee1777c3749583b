// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench sync-kernel: the kernel side of a fleet sync interval. A limiter
 * with sync counting on (the default table, a million sources), N sources (a
 * power of two) passing a packet each (bench_ref's driver), then the drain
 * (rl_sync_drain()) and the charge of the N drained sources (rl_sync_charge(),
 * one unit each), timed:
 *
 *	rl-bench [--ifname IFACE] sync-kernel --sources N [--rounds R]
 *
 * Prints one line: sources rounds drained drain_ms_median drain_ms_max
 * charge_ms_median charge_ms_max (drained: sources of the last drain).
 *
 * Apart from sync-cost (bench/sync_cost.c), which bench/sync.sh also builds
 * against the library before issue #27, where none of this exists.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "bench_ref.skel.h"
#include "prog.h"
#include "rl_skel.h"
#include "sync_kern.h"

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int kernel_cost(unsigned long sources, unsigned long rounds)
{
	static const char *const pol[] = { "--rate", "1000000000", "--burst", "1000000000", NULL };
	double *drain = calloc(rounds, sizeof(double)), *charge = calloc(rounds, sizeof(double));
	struct xdp_ratelimit *lim = NULL;
	struct rl_sync_kern *k = NULL;
	struct bpf_link *link = NULL;
	struct bench_ref *drv = NULL;
	struct rl_sync_src *v = NULL;
	struct bench_frame f;
	struct rl_config cfg;
	struct rl_pins pins;
	char err[1024];
	size_t n = 0;
	int ret = 1, e;

	if (!drain || !charge || bench_config(&cfg, pol))
		goto out;
	cfg.sync_count = 1;
	lim = bench_limiter(&cfg, RL_DEFAULT_MAX_SOURCES, RL_DEFAULT_MAX_SOURCES6);
	drv = bench_ref__open();
	if (!lim || !drv)
		goto out;
	/* The driver only: the references' maps as small as they go. */
	bpf_map__set_max_entries(drv->maps.ref_lookup_map, 16);
	bpf_map__set_max_entries(drv->maps.ref_gcra_map, 16);
	bpf_map__set_max_entries(drv->maps.ref_gcra_lean_map, 16);
	bpf_map__set_max_entries(drv->maps.ref_gcra_lean4_map, 16);
	/* The driver tail-calls the limiter: xdp.frags as it is, where the kernel has it. */
	e = bench_frags(drv->obj);
	if (!e)
		e = bench_ref__load(drv);
	if (e) {
		fprintf(stderr, "rl-bench sync-kernel: couldn't load bench_ref: %s\n",
			strerror(-e));
		goto out;
	}
	link = bench_attach(drv->progs.bench_driver, &e);
	if (e)
		goto out;
	bench_frame_ipv4(&f, 64);
	drv->bss->bench_off = f.src_off;
	drv->bss->bench_base = sources <= BENCH_NET4_SIZE ? BENCH_NET4 : BENCH_WIDE4;
	drv->data->bench_mul = 0x9e3779b1U;
	rl_prog_maps(lim, &pins);
	e = bench_set_target(drv, rl_prog_fd(lim), (__u32)sources);
	if (e)
		snprintf(err, sizeof(err), "couldn't point the driver at the limiter: %s",
			 strerror(-e));
	if (e || rl_sync_kern_from_pins(&pins, -1, &k, err, sizeof(err))) {
		fprintf(stderr, "rl-bench sync-kernel: %s\n", err);
		goto out;
	}
	/* The sources in, and a first drain and charge: the agent's programs loaded. */
	if (bench_run_driver(drv, &f, (__u32)sources, NULL, NULL) || rl_sync_drain(k, &v, &n) ||
	    rl_sync_charge(k, v, n, NULL))
		goto out;
	for (unsigned long r = 0; r < rounds; r++) {
		double t0, t1;

		free(v);
		v = NULL;
		if (bench_run_driver(drv, &f, (__u32)sources, NULL, NULL))
			goto out;
		t0 = wall_now();
		if (rl_sync_drain(k, &v, &n))
			goto out;
		t1 = wall_now();
		for (size_t i = 0; i < n; i++)
			v[i].units = 1;
		if (rl_sync_charge(k, v, n, NULL))
			goto out;
		drain[r] = (t1 - t0) * 1000;
		charge[r] = (wall_now() - t1) * 1000;
	}
	printf("%lu\t%lu\t%zu\t%.2f\t%.2f\t%.2f\t%.2f\n", sources, rounds, n,
	       bench_median(drain, (int)rounds), bench_max(drain, (int)rounds),
	       bench_median(charge, (int)rounds), bench_max(charge, (int)rounds));
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "rl-bench sync-kernel: the kernel side failed\n");
	free(v);
	rl_sync_kern_close(k, false);
	bpf_link__destroy(link);
	bench_ref__destroy(drv);
	if (lim)
		rl_prog_destroy(lim);
	free(drain);
	free(charge);
	return ret;
}

int bench_sync_kernel(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sources", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' },
		{},
	};
	unsigned long sources = 0, rounds = 9;
	int c;

	bench_opts_begin();
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sources = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (!sources || sources > BENCH_WIDE4_SIZE || (sources & (sources - 1)) || !rounds) {
		fprintf(stderr,
			"rl-bench sync-kernel: --sources 1-%u, a power of two [--rounds R]\n",
			BENCH_WIDE4_SIZE);
		return 2;
	}
	return kernel_cost(sources, rounds);
}
