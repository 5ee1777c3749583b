// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Privileges, bpffs and the network namespace: see env.h. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/capability.h>
#include "env.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

unsigned int rl_env_caps = RL_CAPS_CHANGE;

static const struct {
	int cap;
	const char *name;
	unsigned int need; /* enum rl_caps; 0: only for a uid other than 0 */
} needed[] = {
	{ CAP_BPF, "CAP_BPF", RL_CAP_BPF },
	{ CAP_NET_ADMIN, "CAP_NET_ADMIN", RL_CAP_NET_ADMIN },
	{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN", RL_CAP_SYS_ADMIN },
	{ CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE", 0 },
};

int rl_missing_caps(unsigned int need, char *buf, size_t len)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	size_t n = 0;

	buf[0] = '\0';
	/* The raw syscall: libcap is not a dependency, and capget(2) is all we need. */
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		int c = needed[i].cap;

		if (needed[i].need ? !(needed[i].need & need) : geteuid() == 0)
			continue;
		if (data[c / 32].effective & (1U << (c % 32)))
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? ", " : "",
				      needed[i].name);
	}
	return 0;
}

static bool same_ns(const char *a, const char *b)
{
	struct stat sa, sb;

	/* If either cannot be read, assume the same: only a positive difference refuses. */
	if (stat(a, &sa) || stat(b, &sb))
		return true;
	return sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

__u64 rl_netns_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (__u64)st.st_ino;
}

int rl_netns_resolve(const char *spec, __u64 *ino, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct statfs fs;
	struct stat st;
	char *end;

	if (*spec && strspn(spec, "0123456789") == strlen(spec)) {
		errno = 0;
		*ino = strtoull(spec, &end, 10);
		if (errno || !*ino) {
			snprintf(err, errlen, "'%s' is not a namespace's inode number", spec);
			return -EINVAL;
		}
		return 0;
	}
	if (!*spec || strchr(spec, '/'))
		snprintf(path, sizeof(path), "%s", spec);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", spec);
	/* A file of nsfs, or its inode is not a namespace's. */
	if (!*spec || stat(path, &st) || statfs(path, &fs) || fs.f_type != NSFS_MAGIC) {
		snprintf(err, errlen,
			 "no network namespace '%s' (give a name of ip netns, a path such as "
			 "/proc/PID/ns/net, or the inode number status shows)",
			 spec);
		return -ENOENT;
	}
	*ino = (__u64)st.st_ino;
	return 0;
}

int rl_check_env(char *err, size_t errlen)
{
	char missing[128];
	struct statfs st;
	int ret;

	ret = rl_missing_caps(rl_env_caps, missing, sizeof(missing));
	if (ret) {
		snprintf(err, errlen, "couldn't read this process's capabilities: %s",
			 strerror(-ret));
		return ret;
	}
	if (*missing) {
		snprintf(err, errlen,
			 "missing capabilities: %s (run it as root, or give it those capabilities)",
			 missing);
		return -EPERM;
	}
	if (statfs("/sys/fs/bpf", &st) == 0 && st.f_type == BPF_FS_MAGIC)
		return 0;
	/*
	 * "ip netns exec" gives the command a /sys of its own, without the
	 * host's bpffs: pins made there would vanish when the command ends.
	 */
	/* kthreadd (pid 2) lives in the initial namespaces, and its links are readable. */
	if (!same_ns("/proc/self/ns/mnt", "/proc/2/ns/mnt")) {
		snprintf(
			err, errlen,
			"no bpffs at /sys/fs/bpf in this mount namespace (ip netns exec remounts /sys): pins would not outlive this command; in a network namespace run it with nsenter --net=/run/netns/NAME");
		return -ENOENT;
	}
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		ret = -errno;
		snprintf(err, errlen,
			 "bpffs is not mounted at /sys/fs/bpf and mounting it failed: %s",
			 strerror(errno));
		return ret;
	}
	return 0;
}
