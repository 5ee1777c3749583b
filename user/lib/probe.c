// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Kernel feature probes: see probe.h. */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "probe.h"

/* Load a four-instruction XDP program that uses BPF compare-and-swap (kernel 5.12+). */
static bool probe_atomics(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW,
		  .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1,
		  .off = -8,
		  .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "rl_probe", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool rl_probe_xdp_frags(void)
{
	static int known = -1;
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = BPF_F_XDP_HAS_FRAGS);
	int fd;

	if (known >= 0)
		return known;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "rl_probe_frags", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &o);
	known = fd >= 0;
	if (fd >= 0)
		close(fd);
	else
		pr_debug(
			"this kernel loads no xdp.frags program (%s): jumbo frames need --mode skb",
			strerror(errno));
	return known;
}

int rl_check_kernel(char *err, size_t errlen)
{
	struct stat st;

	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL) != 1) {
		snprintf(err, errlen,
			 "this kernel cannot load XDP programs (needs 4.8+, CONFIG_BPF_SYSCALL)");
		return -EOPNOTSUPP;
	}
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_LRU_HASH, NULL) != 1) {
		snprintf(err, errlen, "this kernel has no LRU hash maps (needs 4.10+)");
		return -EOPNOTSUPP;
	}
	if (!probe_atomics()) {
		snprintf(
			err, errlen,
			"this kernel has no BPF compare-and-swap (needs 5.12+): per-source state could not be updated exactly");
		return -EOPNOTSUPP;
	}
	if (stat("/sys/kernel/btf/vmlinux", &st))
		pr_warn("no kernel BTF (/sys/kernel/btf/vmlinux): bpftool may not print the maps' fields by name");
	return 0;
}
