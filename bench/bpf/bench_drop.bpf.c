// SPDX-License-Identifier: GPL-2.0-only
/* The bare XDP drop of the end-to-end benchmark (bench/run.sh): the floor of any XDP filter. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bench_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
