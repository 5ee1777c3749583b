// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench fill --iface IFACE --sources N: N IPv4 sources (a power of two)
 * into the tables of the limiter attached to IFACE in this network
 * namespace, one BPF_PROG_TEST_RUN of the driver (bench_ref) tail-calling
 * the attached program N times, each with the next source. For measuring
 * what reads a full table (top, stats). Sources above 128k come from
 * 10.0.0.0/8, in test_run frames only (bench.h): nothing is sent.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "bench_ref.skel.h"

int bench_fill(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "sources", required_argument, NULL, 'n' },
		{},
	};
	const char *iface = NULL;
	struct bench_ref *drv = NULL;
	struct bench_frame f;
	__u32 sources = 0, id = 0;
	int c, ifindex, prog_fd = -1, err;

	bench_opts_begin();
	while ((c = bench_next_opt("fill", argc, argv, opts)) != -1) {
		if (c == 'i')
			iface = optarg;
		else if (c == 'n')
			sources = (__u32)strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (!iface || !sources || (sources & (sources - 1)) || sources > BENCH_WIDE4_SIZE) {
		fprintf(stderr,
			"rl-bench fill: --iface IFACE --sources N (a power of two) needed\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(iface);
	if (!ifindex || bpf_xdp_query_id(ifindex, 0, &id) || !id) {
		fprintf(stderr, "rl-bench fill: no XDP program on '%s'\n", iface);
		return 1;
	}
	prog_fd = bpf_prog_get_fd_by_id(id);
	/*
	 * The driver tail-calls the limiter, which the kernel allows only
	 * between programs alike in xdp.frags: as this build loads them first,
	 * then (a limiter of another build) the other way.
	 */
	for (int frags = 1; prog_fd >= 0 && frags >= 0; frags--) {
		bench_ref__destroy(drv);
		drv = bench_ref__open();
		if (!drv || (frags && bench_frags(drv->obj)) || bench_ref__load(drv)) {
			bench_ref__destroy(drv);
			drv = NULL;
			continue;
		}
		err = bench_set_target(drv, prog_fd, sources);
		if (err != -EINVAL)
			break;
	}
	if (prog_fd < 0 || !drv) {
		fprintf(stderr, "rl-bench fill: couldn't open the program or the driver\n");
		err = 1;
		goto out;
	}
	bench_frame_ipv4(&f, 64);
	drv->bss->bench_off = f.src_off;
	drv->bss->bench_base = sources <= BENCH_NET4_SIZE ? BENCH_NET4 : BENCH_WIDE4;
	if (!err)
		err = bench_run_driver(drv, &f, sources, NULL, NULL);
	if (err)
		fprintf(stderr, "rl-bench fill: %s\n", strerror(-err));
	err = err ? 1 : 0;
out:
	bench_ref__destroy(drv);
	if (prog_fd >= 0)
		close(prog_fd);
	return err;
}
