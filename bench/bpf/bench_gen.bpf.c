// SPDX-License-Identifier: GPL-2.0-only
/*
 * The XDP traffic generator of the end-to-end benchmark (rl-bench gen): run
 * with BPF_PROG_TEST_RUN in live-frames mode, it rewrites each IPv4/UDP frame's
 * source and redirects it out of a veth, so that the peer receives XDP frames
 * as from a NIC driver (no socket buffer, so no copy before its XDP program
 * runs, unlike frames a packet socket sends).
 *
 * Sources: 198.18.0.1, or random in 198.18.0.0/16. Nothing else is ever written.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

__u32 gen_ifindex; /* where frames go */
__u32 gen_random; /* 1: a random source per frame */
__u64 gen_frames; /* frames generated (one thread runs this) */

/* The IPv4 header checksum: ip_rcv() drops a frame whose checksum is wrong. */
static __always_inline __u16 ip_csum(struct iphdr *ip)
{
	__u16 *w = (__u16 *)ip;
	__u32 sum = 0;
	int i;

	ip->check = 0;
#pragma unroll
	for (i = 0; i < (int)(sizeof(*ip) / 2); i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

SEC("xdp")
int bench_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u32 src = 0xc6120001;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5)
		return XDP_DROP;
	if (gen_random)
		src = 0xc6120000 | (bpf_get_prandom_u32() & 0xffff);
	ip->saddr = bpf_htonl(src);
	ip->check = ip_csum(ip);
	gen_frames++;
	return bpf_redirect(gen_ifindex, 0);
}

char LICENSE[] SEC("license") = "GPL";
