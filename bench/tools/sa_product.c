// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Issue #11, after adoption: the product's XDP program at 1 and 1M IPv4
 * sources through bench_ref's driver (scattered order, as bench/setassoc.c
 * measures its programs), net of the driver alone. Built against a tree's
 * build by sa_product.sh, which runs it with the IPv4 table the policy gets
 * (rl_sets4) and with RL_BENCH_TABLE4=lru (rl_state4: bench_limiter() forces
 * it), and prints the ratios. Prints "round sources ns".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "config.h"
#include "prog.h"
#include "rl_skel.h"
#include "bench_ref.skel.h"

static int set_target(struct bench_ref *drv, int prog_fd, __u32 sources)
{
	__u32 zero = 0;

	drv->bss->bench_mask = sources - 1;
	if (bpf_map_update_elem(bpf_map__fd(drv->maps.bench_jmp), &zero, &prog_fd, BPF_ANY))
		return -errno;
	return 0;
}

static int run(struct bench_ref *drv, const struct bench_frame *f, __u32 reps, double *wall)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = f->len,
		    .repeat = reps);
	__u64 fail = drv->bss->bench_tail_fail;

	drv->bss->bench_t0 = 0;
	if (bpf_prog_test_run_opts(bpf_program__fd(drv->progs.bench_driver), &opts))
		return -errno;
	if (drv->bss->bench_tail_fail != fail)
		return -EINVAL;
	if (wall)
		*wall = (double)(drv->bss->bench_t1 - drv->bss->bench_t0) /
			(double)(drv->bss->bench_n1 - drv->bss->bench_n0);
	return 0;
}

int main(int argc, char **argv)
{
	/* A rate no test_run reaches: every packet passes and takes the compare-and-swap. */
	const char *args[] = { "--algo",  "gcra",    "--rate", "100000000000",
			       "--burst", "1000000", NULL };
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	__u32 M1 = 1U << 20, reps = 1000000;
	struct bench_frame frame;
	struct xdp_ratelimit *lim;
	struct rl_config cfg;
	struct rl_counters c;
	struct bench_ref *drv;
	double w, d;

	bench_frame_ipv4(&frame, 64);
	if (bench_config(&cfg, args))
		return 1;
	lim = bench_limiter(&cfg, M1, 16);
	drv = bench_ref__open();
	if (!lim || !drv)
		return 1;
	drv->rodata->ref_interval_ns = 10;
	drv->rodata->ref_tau_ns = 10000000;
	bpf_map__set_max_entries(drv->maps.ref_lookup_map, 16);
	bpf_map__set_max_entries(drv->maps.ref_gcra_map, 16);
	bpf_map__set_max_entries(drv->maps.ref_gcra_lean_map, 16);
	if (bench_ref__load(drv))
		return 1;
	bench_pin_cpu(1);
	drv->bss->bench_off = frame.src_off;
	drv->bss->bench_base = 0xc6120000U;
	/* Fill: every source once (and a sixteenth again). */
	drv->data->bench_mul = 1;
	if (set_target(drv, rl_prog_fd(lim), M1) || run(drv, &frame, M1 + M1 / 16, NULL))
		return 1;
	drv->data->bench_mul = 0x9e3779b1U;
	bench_rt(true);
	for (int r = 0; r < rounds; r++) {
		for (int s = 0; s < 2; s++) {
			__u32 n = s ? M1 : 1;

			if (set_target(drv, bpf_program__fd(drv->progs.bench_nop), n) ||
			    run(drv, &frame, reps, &d) || set_target(drv, rl_prog_fd(lim), n) ||
			    run(drv, &frame, reps, &w))
				return 1;
			printf("%d\t%u\t%.2f\n", r, n, w - d);
			fflush(stdout);
		}
	}
	bench_rt(false);
	bench_counters(lim, &c);
	fprintf(stderr, "passed %llu dropped %llu new %llu exhausted %llu\n",
		(unsigned long long)c.passed, (unsigned long long)c.dropped,
		(unsigned long long)c.new_sources, (unsigned long long)c.cas_exhausted);
	return 0;
}
