/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The environment the CLI runs in: privileges, bpffs, the network namespace. */
#ifndef RL_ENV_H
#define RL_ENV_H

#include <stddef.h>
#include <linux/types.h>

/*
 * The effective capabilities a command needs, and why (found on kernel 6.18 with
 * kernel.unprivileged_bpf_disabled=2, Debian's default):
 * CAP_BPF        any bpf() call: maps, pins, loading the program;
 * CAP_NET_ADMIN  loading an XDP program and attaching it over netlink: only the
 *                commands that load or attach (not the exporter, which only reads);
 * CAP_SYS_ADMIN  looking programs up by id (BPF_PROG_GET_NEXT_ID/FD_BY_ID), which libxdp
 *                does to find what is on an interface and we do to tell live pins from
 *                orphans; also mounting bpffs;
 * CAP_DAC_OVERRIDE  only for a uid other than 0: the pins are root's, mode 0600.
 */
enum rl_caps {
	RL_CAP_BPF = 1U << 0,
	RL_CAP_NET_ADMIN = 1U << 1,
	RL_CAP_SYS_ADMIN = 1U << 2,
};
/* A command that loads, attaches or changes a program: all of them. */
#define RL_CAPS_CHANGE (RL_CAP_BPF | RL_CAP_NET_ADMIN | RL_CAP_SYS_ADMIN)
/* One that only reads the pins and tells live ones from orphans. */
#define RL_CAPS_READ (RL_CAP_BPF | RL_CAP_SYS_ADMIN)
/*
 * What rl_check_env() asks for (enum rl_caps): RL_CAPS_CHANGE unless the
 * caller (the CLI, from its command's row) says the command needs less.
 */
extern unsigned int rl_env_caps;
/*
 * Fill @buf with those of @need (enum rl_caps) missing ("CAP_BPF, CAP_SYS_ADMIN"),
 * and CAP_DAC_OVERRIDE for a uid other than 0; "" if none; -errno on failure.
 */
int rl_missing_caps(unsigned int need, char *buf, size_t len);
/* The capabilities of rl_env_caps, and bpffs mounted at /sys/fs/bpf (mounting it if needed). */
int rl_check_env(char *err, size_t errlen);
/* The inode of our network namespace (what `ls -iL /proc/self/ns/net` shows); 0 if unknown. */
__u64 rl_netns_ino(void);
/*
 * The inode of the network namespace @spec names: a number is the inode
 * itself (as status prints it, for a namespace deleted since), a word with
 * a '/' a path to a namespace file (/proc/PID/ns/net), any other word a
 * namespace of "ip netns" (/run/netns/WORD). 0, or -EINVAL (-ENOENT) with a
 * message in @err.
 */
int rl_netns_resolve(const char *spec, __u64 *ino, char *err, size_t errlen);

#endif /* RL_ENV_H */
