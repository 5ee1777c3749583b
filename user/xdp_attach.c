// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Attach and detach through libxdp; the pins themselves are pins.c's.
 *
 * Attach order, so that a failure at any step leaves the interface as it was:
 * check everything, create the maps, write the configuration, pin them (into
 * a staging directory renamed into place), then attach (libxdp loads the
 * object, through its dispatcher where it can, else alone). On failure
 * everything made is undone.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "pins.h"
#include "xdp_attach.h"
#include "xdp_ratelimit.skel.h"

#define PROG_NAME "xdp_ratelimit"

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

enum rl_presence rl_presence(const struct rl_iface *ifc)
{
	struct xdp_multiprog *mp;
	struct xdp_program *prog;
	bool pinned = rl_is_attached(ifc);
	enum rl_presence p;

	if (pinned && !rl_pins_owned(ifc))
		return RL_FOREIGN_PINS;
	mp = get_multiprog(ifc->ifindex);
	prog = find_ours(mp);
	if (!prog)
		p = pinned ? RL_STALE_PINS : RL_ABSENT;
	else if (!pinned)
		p = RL_ORPHAN_PROG;
	else
		p = rl_prog_uses_pins(xdp_program__fd(prog), ifc) ? RL_PRESENT : RL_ORPHAN_PROG;
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
			mode = xdp_multiprog__is_legacy(mp) ? "native" :
							      "native (libxdp dispatcher)";
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

static int write_first_config(struct xdp_ratelimit *skel, const struct rl_config *cfg,
			      const struct rl_iface *ifc)
{
	struct rl_ctl ctl = { .active = 0,
			      .ifindex = (__u32)ifc->ifindex,
			      .netns_ino = ifc->netns_ino };
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
		return mode == RL_MODE_NATIVE ? " (the driver has no native XDP: try --mode skb)" :
						"";
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
	int fds[RL_N_MAPS], ret;

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
	fds[0] = bpf_map__fd(maps->maps.rl_state);
	fds[1] = bpf_map__fd(maps->maps.rl_config);
	fds[2] = bpf_map__fd(maps->maps.rl_ctl);
	fds[3] = bpf_map__fd(maps->maps.rl_counters);
	if (rl_pins_make(ifc, fds, err, errlen))
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
		snprintf(
			err, errlen,
			"xdp-ratelimit is already attached to '%s' (use set to change it, detach to remove it)",
			ifc->name);
		return -EEXIST;
	case RL_FOREIGN_PINS:
		rl_pins_foreign_msg(ifc, err, errlen);
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
		ret = bpf_map__reuse_fd(skel->maps.rl_counters,
					bpf_map__fd(maps->maps.rl_counters));
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
		rl_pins_remove(ifc);
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
	bool pinned = rl_is_attached(ifc), foreign = pinned && !rl_pins_owned(ifc);
	int ret = 0;

	if (!prog && (!pinned || foreign)) {
		xdp_multiprog__close(mp);
		if (foreign)
			rl_pins_foreign_msg(ifc, err, errlen);
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
		rl_pins_remove(ifc);
	rmdir("/sys/fs/bpf/xdp"); /* libxdp's, left empty after a fallback attach */
	return 0;
}
