// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Attach and detach through libxdp, and the pins under RL_PIN_ROOT/IFACE/.
 *
 * Attach order, so that a failure at any step leaves the interface as it was:
 * check everything, attach (libxdp loads the object, through its dispatcher
 * where it can, else alone), write the configuration, pin the maps into a
 * staging directory and rename it into place. Until the rename, the
 * attachment is not visible to the other commands; on failure it is undone.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "loader.h"
#include "xdp_ratelimit.skel.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

#define PROG_NAME "xdp_ratelimit"
#define FOREIGN_MSG                                                                            \
	"%s belongs to another interface named '%s' (in another network namespace, or one that was removed): detach it there, or remove that directory"
/* Serialises attach, set and detach across processes. */
#define RL_LOCK_FILE "/run/xdp-ratelimit.lock"
/* Pins are made here, then renamed into RL_PIN_ROOT (bpffs refuses '.' in names). */
#define RL_STAGING_ROOT RL_PIN_ROOT "-staging"

static const char *const map_names[] = { "rl_state", "rl_config", "rl_ctl", "rl_counters" };
#define N_MAPS (sizeof(map_names) / sizeof(map_names[0]))

/* libbpf's and libxdp's chatter only with -v: every failure is reported by us, named. */
static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return rl_verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static int print_libxdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return rl_verbose ? vfprintf(stderr, fmt, ap) : 0;
}

void rl_loader_quiet(void)
{
	libbpf_set_print(print_libbpf);
	libxdp_set_print(print_libxdp);
}

static bool same_ns(const char *a, const char *b)
{
	struct stat sa, sb;

	/* If either cannot be read, assume the same: only a positive difference refuses. */
	if (stat(a, &sa) || stat(b, &sb))
		return true;
	return sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

static __u64 netns_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (__u64)st.st_ino;
}

int rl_check_env(char *err, size_t errlen)
{
	struct statfs st;

	if (geteuid() != 0) {
		snprintf(err, errlen, "must be run as root (it needs CAP_BPF and CAP_NET_ADMIN)");
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
		snprintf(err, errlen,
			 "no bpffs at /sys/fs/bpf in this mount namespace (ip netns exec remounts /sys): pins would not outlive this command; in a network namespace run it with nsenter --net=/run/netns/NAME");
		return -ENOENT;
	}
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		snprintf(err, errlen, "bpffs is not mounted at /sys/fs/bpf and mounting it failed: %s",
			 strerror(errno));
		return -errno;
	}
	return 0;
}

/* Load a four-instruction XDP program that uses BPF compare-and-swap (kernel 5.12+). */
static bool probe_atomics(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8, .imm = BPF_CMPXCHG },
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

int rl_check_kernel(char *err, size_t errlen)
{
	struct stat st;

	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL) != 1) {
		snprintf(err, errlen, "this kernel cannot load XDP programs (needs 4.8+, CONFIG_BPF_SYSCALL)");
		return -EOPNOTSUPP;
	}
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_LRU_HASH, NULL) != 1) {
		snprintf(err, errlen, "this kernel has no LRU hash maps (needs 4.10+)");
		return -EOPNOTSUPP;
	}
	if (!probe_atomics()) {
		snprintf(err, errlen,
			 "this kernel has no BPF compare-and-swap (needs 5.12+): per-source state could not be updated exactly");
		return -EOPNOTSUPP;
	}
	if (stat("/sys/kernel/btf/vmlinux", &st))
		pr_warn("no kernel BTF (/sys/kernel/btf/vmlinux): bpftool may not print the maps' fields by name");
	return 0;
}

static void pin_paths(struct rl_iface *ifc, const char *name)
{
	/* bpffs refuses '.' in names: eth0.100 is pinned as eth0_100. */
	snprintf(ifc->pinname, sizeof(ifc->pinname), "%s", name);
	for (char *p = ifc->pinname; *p; p++)
		if (*p == '.')
			*p = '_';
	snprintf(ifc->pindir, sizeof(ifc->pindir), RL_PIN_ROOT "/%s", ifc->pinname);
}

int rl_iface_get(const char *name, struct rl_iface *ifc, char *err, size_t errlen)
{
	memset(ifc, 0, sizeof(*ifc));
	if (!*name || strlen(name) >= IF_NAMESIZE || strchr(name, '/')) {
		snprintf(err, errlen, "'%s' is not a valid interface name", name);
		return -EINVAL;
	}
	ifc->ifindex = (int)if_nametoindex(name);
	if (!ifc->ifindex) {
		snprintf(err, errlen, "no such interface '%s'", name);
		return -ENODEV;
	}
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	pin_paths(ifc, name);
	return 0;
}

bool rl_is_attached(const struct rl_iface *ifc)
{
	struct stat st;

	return stat(ifc->pindir, &st) == 0;
}

int rl_lock(void)
{
	int fd = open(RL_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	return fd;
}

void rl_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* Our program on @ifindex, if any: the main program or one behind libxdp's dispatcher. */
static struct xdp_program *find_ours(struct xdp_multiprog *mp)
{
	struct xdp_program *p;

	if (!mp || libxdp_get_error(mp))
		return NULL;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		return p && !strcmp(xdp_program__name(p), PROG_NAME) ? p : NULL;
	}
	for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp))
		if (!strcmp(xdp_program__name(p), PROG_NAME))
			return p;
	return NULL;
}

static struct xdp_multiprog *get_multiprog(int ifindex)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);

	return libxdp_get_error(mp) ? NULL : mp;
}

/* Does program @prog_fd use the map pinned at @pin? */
static bool prog_uses_pin(int prog_fd, const char *pin)
{
	struct bpf_map_info minfo = {};
	struct bpf_prog_info pinfo = {};
	__u32 ids[16], len = sizeof(minfo);
	int map_fd = bpf_obj_get(pin);
	bool found = false;

	if (map_fd < 0)
		return false;
	if (bpf_obj_get_info_by_fd(map_fd, &minfo, &len))
		goto out;
	pinfo.nr_map_ids = 16;
	pinfo.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pinfo);
	if (bpf_obj_get_info_by_fd(prog_fd, &pinfo, &len))
		goto out;
	for (__u32 i = 0; i < pinfo.nr_map_ids && i < 16; i++)
		found |= ids[i] == minfo.id;
out:
	close(map_fd);
	return found;
}

/* Is the map with this id used by any loaded program? */
static bool map_in_use(__u32 map_id)
{
	__u32 id = 0, ids[16];

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { .nr_map_ids = 16, .map_ids = (__u64)(unsigned long)ids };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			for (__u32 i = 0; i < info.nr_map_ids && i < 16; i++)
				if (ids[i] == map_id) {
					close(fd);
					return true;
				}
		close(fd);
	}
	return false;
}

/*
 * Do the pins belong to this interface in this network namespace? Pins whose
 * maps no program uses any more (their namespace is gone, say) are nobody's:
 * they count as ours, to be cleaned up.
 */
static bool pins_ours(const struct rl_iface *ifc)
{
	struct rl_ctl ctl;
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, ret;

	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	bool ours;

	snprintf(path, sizeof(path), "%s/rl_ctl", ifc->pindir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return true; /* incomplete pins: stale, whoever made them */
	ret = bpf_map_lookup_elem(fd, &zero, &ctl);
	ours = ret || (ctl.ifindex == (__u32)ifc->ifindex && ctl.netns_ino == netns_ino());
	if (!ours && !bpf_obj_get_info_by_fd(fd, &info, &len))
		ours = !map_in_use(info.id);
	close(fd);
	return ours;
}

enum rl_presence rl_presence(const struct rl_iface *ifc)
{
	struct xdp_multiprog *mp;
	struct xdp_program *prog;
	bool pinned = rl_is_attached(ifc);
	enum rl_presence p;
	char pin[PATH_MAX];

	if (pinned && !pins_ours(ifc))
		return RL_FOREIGN_PINS;
	mp = get_multiprog(ifc->ifindex);
	prog = find_ours(mp);
	if (!prog)
		p = pinned ? RL_STALE_PINS : RL_ABSENT;
	else if (!pinned)
		p = RL_ORPHAN_PROG;
	else {
		snprintf(pin, sizeof(pin), "%s/rl_state", ifc->pindir);
		p = prog_uses_pin(xdp_program__fd(prog), pin) ? RL_PRESENT : RL_ORPHAN_PROG;
	}
	xdp_multiprog__close(mp);
	return p;
}

const char *rl_attach_mode(const struct rl_iface *ifc)
{
	struct xdp_multiprog *mp = get_multiprog(ifc->ifindex);
	const char *mode = "not attached";

	if (find_ours(mp)) {
		switch (xdp_multiprog__attach_mode(mp)) {
		case XDP_MODE_NATIVE:
			mode = xdp_multiprog__is_legacy(mp) ? "native" : "native (libxdp dispatcher)";
			break;
		case XDP_MODE_SKB:
			mode = xdp_multiprog__is_legacy(mp) ? "skb" : "skb (libxdp dispatcher)";
			break;
		case XDP_MODE_HW:
			mode = "hw";
			break;
		default:
			mode = "unknown";
		}
	}
	xdp_multiprog__close(mp);
	return mode;
}

static void unpin_dir(const char *dir)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < N_MAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, map_names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static int pin_maps(struct xdp_ratelimit *skel, const char *dir, char *err, size_t errlen)
{
	struct bpf_map *maps[N_MAPS] = { skel->maps.rl_state, skel->maps.rl_config,
					 skel->maps.rl_ctl, skel->maps.rl_counters };
	char path[PATH_MAX];
	int ret;

	if (mkdir(RL_PIN_ROOT, 0700) && errno != EEXIST)
		goto fail_errno;
	if (mkdir(RL_STAGING_ROOT, 0700) && errno != EEXIST)
		goto fail_errno;
	if (mkdir(dir, 0700))
		goto fail_errno;
	for (size_t i = 0; i < N_MAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, map_names[i]);
		ret = bpf_obj_pin(bpf_map__fd(maps[i]), path);
		if (ret) {
			ret = -errno;
			snprintf(err, errlen, "couldn't pin %s: %s", path, strerror(errno));
			unpin_dir(dir);
			return ret;
		}
		/* Root only: the state and the configuration are security-relevant. */
		chmod(path, 0600);
	}
	return 0;
fail_errno:
	ret = -errno;
	snprintf(err, errlen, "couldn't create %s: %s", dir, strerror(errno));
	return ret;
}

static int write_first_config(struct xdp_ratelimit *skel, const struct rl_config *cfg,
			      const struct rl_iface *ifc)
{
	struct rl_ctl ctl = { .active = 0, .ifindex = (__u32)ifc->ifindex, .netns_ino = netns_ino() };
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.rl_config), &zero, cfg, BPF_ANY))
		return -errno;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.rl_ctl), &zero, &ctl, BPF_ANY))
		return -errno;
	return 0;
}

static const char *attach_hint(int ret, enum rl_mode mode)
{
	switch (-ret) {
	case EOPNOTSUPP:
		return mode == RL_MODE_NATIVE ? " (the driver has no native XDP: try --mode skb)"
					      : "";
	case EEXIST:
	case EBUSY:
		return " (another XDP program is attached: libxdp could not share the interface)";
	case E2BIG:
	case ERANGE:
		return " (the MTU is too large for XDP on this interface)";
	case EPERM:
		return " (the kernel refused: memlock limit, lockdown, or missing BTF/BPF support)";
	}
	return "";
}

/*
 * Create the maps (without loading the program), write the configuration and
 * pin them where the other commands look. Until a program uses them, these
 * pins are "stale" and every command treats the interface as free.
 */
static struct xdp_ratelimit *create_maps(const struct rl_iface *ifc, __u32 max_sources,
					 const struct rl_config *cfg, char *err, size_t errlen)
{
	struct xdp_ratelimit *maps = xdp_ratelimit__open();
	char staging[PATH_MAX];
	int ret;

	if (!maps) {
		snprintf(err, errlen, "couldn't open the BPF object: %s", strerror(errno));
		return NULL;
	}
	bpf_program__set_autoload(maps->progs.xdp_ratelimit, false);
	ret = bpf_map__set_max_entries(maps->maps.rl_state, max_sources);
	if (!ret)
		ret = xdp_ratelimit__load(maps);
	if (ret) {
		snprintf(err, errlen, "couldn't create the maps (%u sources): %s", max_sources,
			 strerror(-ret));
		goto fail;
	}
	ret = write_first_config(maps, cfg, ifc);
	if (ret) {
		snprintf(err, errlen, "couldn't write the configuration: %s", strerror(-ret));
		goto fail;
	}
	/* Pin into a staging directory, then rename: the pin set appears whole. */
	snprintf(staging, sizeof(staging), RL_STAGING_ROOT "/%s", ifc->pinname);
	unpin_dir(staging);
	if (pin_maps(maps, staging, err, errlen))
		goto fail;
	ret = rename(staging, ifc->pindir);
	if (ret) {
		snprintf(err, errlen, "couldn't move the pins into %s: %s", ifc->pindir,
			 strerror(errno));
		unpin_dir(staging);
	}
	rmdir(RL_STAGING_ROOT);
	if (ret)
		goto fail;
	return maps;
fail:
	xdp_ratelimit__destroy(maps);
	return NULL;
}

/*
 * The attach is the commit point: killed before it, the interface is as it
 * was (and the pins are stale, removed by the next attach or detach); after
 * it, everything is in place. libxdp loads the program itself, so that it can
 * load it into its dispatcher where that works; the program reuses the maps
 * made above.
 */
int rl_attach(const struct rl_iface *ifc, enum rl_mode mode, __u32 max_sources,
	      const struct rl_config *cfg, char *err, size_t errlen)
{
	enum xdp_attach_mode xmode = mode == RL_MODE_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	DECLARE_LIBXDP_OPTS(xdp_program_opts, opts, .prog_name = PROG_NAME);
	struct xdp_ratelimit *maps, *skel = NULL;
	struct xdp_program *prog = NULL;
	int ret;

	switch (rl_presence(ifc)) {
	case RL_PRESENT:
		snprintf(err, errlen,
			 "xdp-ratelimit is already attached to '%s' (use set to change it, detach to remove it)",
			 ifc->name);
		return -EEXIST;
	case RL_FOREIGN_PINS:
		snprintf(err, errlen, FOREIGN_MSG, ifc->pindir, ifc->name);
		return -EBUSY;
	case RL_ORPHAN_PROG:
	case RL_STALE_PINS:
		/* Left by a command that was killed: we hold the lock, so nobody is using it. */
		pr_debug("removing what an interrupted command left on '%s'", ifc->name);
		ret = rl_detach(ifc, err, errlen);
		if (ret)
			return ret;
		break;
	case RL_ABSENT:
		break;
	}
	maps = create_maps(ifc, max_sources, cfg, err, errlen);
	if (!maps)
		return -EIO;
	skel = xdp_ratelimit__open();
	if (!skel) {
		ret = -errno;
		snprintf(err, errlen, "couldn't open the BPF object: %s", strerror(errno));
		goto out;
	}
	ret = bpf_map__set_max_entries(skel->maps.rl_state, max_sources);
	if (!ret)
		ret = bpf_map__reuse_fd(skel->maps.rl_state, bpf_map__fd(maps->maps.rl_state));
	if (!ret)
		ret = bpf_map__reuse_fd(skel->maps.rl_config, bpf_map__fd(maps->maps.rl_config));
	if (!ret)
		ret = bpf_map__reuse_fd(skel->maps.rl_ctl, bpf_map__fd(maps->maps.rl_ctl));
	if (!ret)
		ret = bpf_map__reuse_fd(skel->maps.rl_counters, bpf_map__fd(maps->maps.rl_counters));
	if (ret) {
		snprintf(err, errlen, "couldn't reuse the maps: %s", strerror(-ret));
		goto out;
	}
	opts.obj = skel->obj;
	prog = xdp_program__create(&opts);
	ret = (int)libxdp_get_error(prog);
	if (ret) {
		prog = NULL;
		snprintf(err, errlen, "couldn't prepare the XDP program: %s", strerror(-ret));
		goto out;
	}
	ret = xdp_program__attach(prog, ifc->ifindex, xmode, 0);
	if (ret)
		snprintf(err, errlen, "couldn't attach to '%s' in %s mode: %s%s", ifc->name,
			 mode == RL_MODE_SKB ? "skb" : "native", strerror(-ret),
			 attach_hint(ret, mode));
out:
	if (ret) {
		unpin_dir(ifc->pindir);
		rmdir(RL_PIN_ROOT);
		rmdir("/sys/fs/bpf/xdp");
	}
	xdp_program__close(prog);
	xdp_ratelimit__destroy(skel);
	xdp_ratelimit__destroy(maps);
	return ret;
}

int rl_detach(const struct rl_iface *ifc, char *err, size_t errlen)
{
	struct xdp_multiprog *mp = get_multiprog(ifc->ifindex);
	struct xdp_program *prog = find_ours(mp);
	bool pinned = rl_is_attached(ifc), foreign = pinned && !pins_ours(ifc);
	char staging[PATH_MAX];
	int ret = 0;

	if (!prog && (!pinned || foreign)) {
		xdp_multiprog__close(mp);
		if (foreign)
			snprintf(err, errlen, FOREIGN_MSG, ifc->pindir, ifc->name);
		else
			snprintf(err, errlen, "xdp-ratelimit is not attached to '%s'", ifc->name);
		return foreign ? -EBUSY : -ENOENT;
	}
	if (prog) {
		ret = xdp_program__detach(prog, ifc->ifindex, xdp_multiprog__attach_mode(mp), 0);
		if (ret) {
			snprintf(err, errlen, "couldn't detach from '%s': %s", ifc->name,
				 strerror(-ret));
			xdp_multiprog__close(mp);
			return ret;
		}
	}
	xdp_multiprog__close(mp);
	if (!foreign)
		unpin_dir(ifc->pindir);
	snprintf(staging, sizeof(staging), RL_STAGING_ROOT "/%s", ifc->pinname);
	unpin_dir(staging);
	rmdir(RL_STAGING_ROOT); /* these only if empty */
	rmdir(RL_PIN_ROOT);
	rmdir("/sys/fs/bpf/xdp"); /* libxdp's, left empty after a fallback attach */
	return 0;
}

int rl_unpin_gone(const char *name)
{
	struct rl_iface ifc = {};
	struct stat st;

	if (!*name || strlen(name) >= IF_NAMESIZE || strchr(name, '/') || if_nametoindex(name))
		return -EINVAL;
	pin_paths(&ifc, name);
	if (stat(ifc.pindir, &st))
		return -ENOENT;
	/* ifindex 0 never owns pins: only unused (stale) pins pass this. */
	if (!pins_ours(&ifc))
		return -EBUSY;
	unpin_dir(ifc.pindir);
	rmdir(RL_PIN_ROOT);
	return 0;
}

int rl_pins_open(const struct rl_iface *ifc, struct rl_pins *pins, char *err, size_t errlen)
{
	int *fds[N_MAPS] = { &pins->state, &pins->config, &pins->ctl, &pins->counters };
	char path[PATH_MAX];

	for (size_t i = 0; i < N_MAPS; i++)
		*fds[i] = -1;
	switch (rl_presence(ifc)) {
	case RL_PRESENT:
		break;
	case RL_ABSENT:
	case RL_STALE_PINS: /* an attach in progress, or killed before it attached */
		snprintf(err, errlen, "xdp-ratelimit is not attached to '%s' (see attach --help)",
			 ifc->name);
		return -ENOENT;
	case RL_ORPHAN_PROG:
		snprintf(err, errlen,
			 "the xdp-ratelimit program on '%s' has lost its pins: run detach %s, then attach again",
			 ifc->name, ifc->name);
		return -EIO;
	case RL_FOREIGN_PINS:
		snprintf(err, errlen, FOREIGN_MSG, ifc->pindir, ifc->name);
		return -EBUSY;
	}
	for (size_t i = 0; i < N_MAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", ifc->pindir, map_names[i]);
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			int ret = -errno;

			snprintf(err, errlen, "couldn't open %s: %s", path, strerror(errno));
			rl_pins_close(pins);
			return ret;
		}
	}
	return 0;
}

void rl_pins_close(struct rl_pins *pins)
{
	int *fds[N_MAPS] = { &pins->state, &pins->config, &pins->ctl, &pins->counters };

	for (size_t i = 0; i < N_MAPS; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int rl_config_read(const struct rl_pins *pins, struct rl_config *cfg, __u32 *active)
{
	struct rl_ctl ctl;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(pins->ctl, &zero, &ctl))
		return -errno;
	if (ctl.active > 1)
		return -EINVAL;
	if (bpf_map_lookup_elem(pins->config, &ctl.active, cfg))
		return -errno;
	*active = ctl.active;
	return 0;
}

int rl_config_swap(const struct rl_pins *pins, const struct rl_config *cfg, __u32 active)
{
	__u32 zero = 0, slot = !active;
	struct rl_ctl ctl;

	if (bpf_map_lookup_elem(pins->ctl, &zero, &ctl))
		return -errno;
	ctl.active = slot;
	if (bpf_map_update_elem(pins->config, &slot, cfg, BPF_ANY))
		return -errno;
	/* The flip: one aligned 32-bit store in the array value. */
	if (bpf_map_update_elem(pins->ctl, &zero, &ctl, BPF_ANY))
		return -errno;
	return 0;
}

int rl_counters_sum(int map_fd, struct rl_counters *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rl_counters *per;
	__u32 zero = 0;
	int ret = 0;

	if (ncpu < 1)
		return -EINVAL;
	per = calloc((size_t)ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(map_fd, &zero, per)) {
		ret = -errno;
		goto out;
	}
	for (int c = 0; c < ncpu; c++) {
		__u64 *d = (__u64 *)sum, *s = (__u64 *)&per[c];

		for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
			d[i] += s[i];
	}
out:
	free(per);
	return ret;
}

int rl_counters_read(const struct rl_pins *pins, struct rl_counters *sum)
{
	return rl_counters_sum(pins->counters, sum);
}

int rl_count_sources(const struct rl_pins *pins, __u32 gen, __u64 *n)
{
	struct rl_state_key keys[1024];
	__u64 vals[1024];
	void *in = NULL, *out;
	__u32 cnt;
	int r;

	*n = 0;
	for (;;) {
		cnt = 1024;
		r = bpf_map_lookup_batch(pins->state, in, &out, keys, vals, &cnt, NULL);
		if (r && errno != ENOENT)
			return -errno;
		for (__u32 i = 0; i < cnt; i++)
			*n += keys[i].gen == gen;
		if (r)
			return 0;
		in = &out;
	}
}

int rl_list_attached(char names[][IF_NAMESIZE], int max)
{
	DIR *d = opendir(RL_PIN_ROOT);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.' || len >= IF_NAMESIZE)
			continue;
		snprintf(names[n++], IF_NAMESIZE, "%s", e->d_name);
	}
	closedir(d);
	return n;
}
