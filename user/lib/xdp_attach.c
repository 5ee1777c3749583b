// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Attach and detach through libxdp; the pins themselves are pins.c's.
 *
 * Attach order, so that a failure at any step leaves the interface as it was:
 * check everything, load the program and its maps, write the configuration,
 * pin the maps (into a staging directory renamed into place), then attach.
 * On failure everything made is undone. libxdp is used to find and detach
 * what is on an interface, also when an older version attached through its
 * dispatcher.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "pins.h"
#include "policy.h"
#include "prog.h"
#include "rulemaps.h"
#include "sa.h"
#include "xdp_attach.h"
#include "xdp_coexist.h"

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
		return p && rl_prog_name_ours(xdp_program__name(p)) ? p : NULL;
	}
	for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp))
		if (rl_prog_name_ours(xdp_program__name(p)))
			return p;
	return NULL;
}

/* What is attached to @ifindex; NULL with errno set: ENOENT when nothing is. */
static struct xdp_multiprog *get_multiprog(int ifindex)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	long err = libxdp_get_error(mp);

	if (err) {
		errno = (int)-err;
		return NULL;
	}
	return mp;
}

enum rl_presence rl_presence(const struct rl_iface *ifc)
{
	struct xdp_multiprog *mp;
	struct xdp_program *prog;
	bool pinned = rl_is_attached(ifc);
	enum rl_presence p;
	int uses = 0, err, fd;
	__u32 mode;

	if (pinned && !rl_pins_owned(ifc))
		return RL_FOREIGN_PINS;
	uses = rl_prog_alone(ifc->ifindex, &fd, &mode);
	if (uses < 0) {
		errno = -uses;
		return RL_UNKNOWN;
	}
	if (uses > 0) {
		if (!pinned) {
			p = RL_ORPHAN_PROG;
		} else {
			uses = rl_prog_uses_pins(fd, ifc);
			p = uses > 0 ? RL_PRESENT : uses == 0 ? RL_ORPHAN_PROG : RL_UNKNOWN;
		}
		close(fd);
		errno = uses < 0 ? -uses : 0;
		return p;
	}
	mp = get_multiprog(ifc->ifindex);
	/* Out of file descriptors or memory is not "nothing attached". */
	if (!mp && errno != ENOENT)
		return RL_UNKNOWN;
	prog = find_ours(mp);
	if (!prog) {
		p = pinned ? RL_STALE_PINS : RL_ABSENT;
	} else if (!pinned) {
		p = RL_ORPHAN_PROG;
	} else {
		uses = rl_prog_uses_pins(xdp_program__fd(prog), ifc);
		p = uses > 0 ? RL_PRESENT : uses == 0 ? RL_ORPHAN_PROG : RL_UNKNOWN;
	}
	err = errno;
	xdp_multiprog__close(mp);
	errno = p == RL_UNKNOWN ? (uses < 0 ? -uses : err) : 0;
	return p;
}

int rl_pins_open(const struct rl_iface *ifc, struct rl_pins *pins, char *err, size_t errlen)
{
	for (size_t i = 0; i < RL_N_MAPS; i++)
		pins->fd[i] = -1;
	switch (rl_presence(ifc)) {
	case RL_PRESENT:
		break;
	case RL_ABSENT:
	case RL_STALE_PINS: /* an attach in progress, or killed before it attached */
		snprintf(err, errlen, "xdp-ratelimit is not attached to '%s' (see attach --help)",
			 ifc->name);
		return -ENOENT;
	case RL_ORPHAN_PROG:
		snprintf(
			err, errlen,
			"the xdp-ratelimit program on '%s' has lost its pins: run detach %s, then attach again",
			ifc->name, ifc->name);
		return -EIO;
	case RL_FOREIGN_PINS:
		rl_pins_foreign_msg(ifc, err, errlen);
		return -EBUSY;
	case RL_UNKNOWN: {
		int ret = -errno;

		snprintf(err, errlen, "couldn't inspect '%s': %s", ifc->name, strerror(errno));
		return ret;
	}
	}
	return rl_pins_open_dir(ifc->pindir, pins, err, errlen);
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

static int write_first_config(const struct rl_pins *maps, const struct rl_config *cfg,
			      const struct rl_iface *ifc, __u32 max_sources4, __u32 max_sources6)
{
	struct rl_ctl ctl = { .active = 0,
			      .ifindex = (__u32)ifc->ifindex,
			      .netns_ino = ifc->netns_ino,
			      .max_sources4 = max_sources4,
			      .max_sources6 = max_sources6 };
	__u32 zero = 0;

	if (bpf_map_update_elem(maps->config, &zero, cfg, BPF_ANY))
		return -errno;
	if (bpf_map_update_elem(maps->ctl, &zero, &ctl, BPF_ANY))
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
		return " (another XDP program is attached to it: xdp-ratelimit attaches alone)";
	case E2BIG:
	case ERANGE:
		return " (the MTU is too large for XDP on this interface)";
	case EPERM:
		return " (the kernel refused: memlock limit, lockdown, or missing BTF/BPF support)";
	}
	return "";
}

/* Pin @fds for @ifc and attach @prog there; on a failure to attach, the pins go again. */
static int pin_and_attach(const struct rl_iface *ifc, const int *fds, int prog, __u32 flags,
			  enum rl_mode mode, char *err, size_t errlen)
{
	int ret = rl_pins_make(ifc, fds, err, errlen);

	if (ret)
		return ret;
	ret = bpf_xdp_attach(ifc->ifindex, prog, flags, NULL);
	if (ret) {
		snprintf(err, errlen, "couldn't attach to '%s' in %s mode: %s%s", ifc->name,
			 mode == RL_MODE_SKB ? "skb" : "native", strerror(-ret),
			 attach_hint(ret, mode));
		rl_pins_remove(ifc);
	}
	return ret;
}

/*
 * Before an attach: remove what a killed command left on @ifc. 1 if a limiter
 * is attached there (the caller says how that is wrong), 0 if the way is
 * clear, or -errno with the reason in @err.
 */
static int clear_for_attach(const struct rl_iface *ifc, char *err, size_t errlen)
{
	int ret;

	switch (rl_presence(ifc)) {
	case RL_PRESENT:
		return 1;
	case RL_FOREIGN_PINS:
		rl_pins_foreign_msg(ifc, err, errlen);
		return -EBUSY;
	case RL_ORPHAN_PROG:
	case RL_STALE_PINS:
		/* Left by a command that was killed: we hold the lock, so nobody is using it. */
		pr_debug("removing what an interrupted command left on '%s'", ifc->name);
		return rl_detach(ifc, err, errlen);
	case RL_UNKNOWN:
		ret = -errno;
		snprintf(err, errlen, "couldn't inspect '%s': %s", ifc->name, strerror(errno));
		return ret;
	case RL_ABSENT:
		break;
	}
	return 0;
}

/*
 * Another program on @ifc: refused before anything is loaded or pinned, with
 * what is there, why we cannot run beside it and what to do (xdp_coexist.h).
 */
static int refuse_other(const struct rl_iface *ifc, char *err, size_t errlen)
{
	char other[512];
	int ret = rl_xdp_other(ifc->ifindex, other, sizeof(other));

	if (ret < 0) {
		snprintf(err, errlen, "couldn't inspect '%s': %s", ifc->name, strerror(-ret));
		return ret;
	}
	if (!ret)
		return 0;
	rl_coexist_msg(ifc->name, other, err, errlen);
	return -EBUSY;
}

/*
 * Load the program with new maps, write the configuration, pin the maps
 * (into a staging directory renamed into place), then attach: the attach is
 * the commit point. Killed before it, the interface is as it was (and the
 * pins are stale, removed by the next attach or detach); after it,
 * everything is in place. The program is attached alone (not behind
 * libxdp's dispatcher), so that set can replace it in one atomic step.
 */
int rl_attach(const struct rl_iface *ifc, enum rl_mode mode, __u32 max_sources, __u32 max_sources6,
	      const struct rl_config *cfg, char *err, size_t errlen)
{
	return rl_attach_rules(ifc, mode, max_sources, max_sources6, cfg, NULL, err, errlen);
}

/*
 * The rules of @set compiled for new maps (@none: no rules yet), in *@out,
 * ready to load with; -errno with the reason in @err.
 */
static int first_rules(const struct rl_ruleset *set, struct rl_rules_cfg **none,
		       struct rl_rules_cfg **out, char *err, size_t errlen)
{
	char why[RL_ERRLEN];
	int ret;

	*none = calloc(1, sizeof(**none));
	*out = calloc(1, sizeof(**out));
	if (!*none || !*out) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = rl_rules_compile(set, *none, *out, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "rules: %s", why);
	return ret;
}

int rl_attach_rules(const struct rl_iface *ifc, enum rl_mode mode, __u32 max_sources,
		    __u32 max_sources6, const struct rl_config *cfg, const struct rl_ruleset *set,
		    char *err, size_t errlen)
{
	struct rl_prog_opts po = { .max_sources4 = max_sources, .max_sources6 = max_sources6 };
	__u32 flags = XDP_FLAGS_UPDATE_IF_NOEXIST |
		      (mode == RL_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	struct rl_rules_cfg *none = NULL, *rules = NULL;
	struct xdp_ratelimit *skel = NULL;
	char why[RL_ERRLEN];
	struct rl_config c;
	struct rl_pins maps;
	int ret;

	ret = clear_for_attach(ifc, err, errlen);
	if (ret > 0) {
		snprintf(
			err, errlen,
			"xdp-ratelimit is already attached to '%s' (use set to change it, detach to remove it)",
			ifc->name);
		return -EEXIST;
	}
	if (!ret)
		ret = refuse_other(ifc, err, errlen);
	if (ret)
		return ret;
	/* The rules go live with the attach: one program, no moment without them. */
	if (set) {
		ret = first_rules(set, &none, &rules, err, errlen);
		if (ret)
			goto out;
		po.rules = rules;
	}
	/* The IPv4 table: the set-associative one if it holds the policy exactly. */
	c = *cfg;
	rl_table4_choose(&c, rl_sa_bits_for(max_sources ?: RL_DEFAULT_MAX_SOURCES));
	c.prev_table4 = c.table4;
	/* A new table, a new secret for its hash: every set keeps it (rl_config_build()). */
	ret = rl_sa_key_new(&c.sa_key);
	if (ret) {
		snprintf(err, errlen, "couldn't draw the secret of the source table's hash: %s",
			 strerror(-ret));
		goto out;
	}
	skel = rl_prog_open(&c, &po, err, errlen);
	if (!skel) {
		ret = -errno;
		goto out;
	}
	rl_prog_maps(skel, &maps);
	ret = write_first_config(
		&maps, &c, ifc, max_sources ?: RL_DEFAULT_MAX_SOURCES,
		max_sources6 ?: RL_MAX_SOURCES6_FOR(max_sources ?: RL_DEFAULT_MAX_SOURCES));
	if (ret) {
		snprintf(err, errlen, "couldn't write the configuration: %s", strerror(-ret));
		goto out;
	}
	if (rules) {
		__u32 zero = 0;

		/* New maps: nothing reads them until the attach. */
		ret = rl_rules_fill(&maps, set, rules, none, NULL, why, sizeof(why));
		if (!ret && bpf_map_update_elem(maps.rcfg, &zero, rules, BPF_ANY)) {
			ret = -errno;
			snprintf(why, sizeof(why), "couldn't record the rules: %s",
				 strerror(errno));
		}
		if (ret) {
			snprintf(err, errlen, "rules: %s", why);
			goto out;
		}
	}
	ret = pin_and_attach(ifc, maps.fd, rl_prog_fd(skel), flags, mode, err, errlen);
out:
	if (skel)
		rl_prog_destroy(skel);
	free(none);
	free(rules);
	return ret;
}

/* The presence of @with, the limiter to share, as a message: 0 if it is there. */
static int share_source(const struct rl_iface *with, char *err, size_t errlen)
{
	int ret;

	switch (rl_presence(with)) {
	case RL_PRESENT:
		return 0;
	case RL_ABSENT:
	case RL_STALE_PINS:
		snprintf(err, errlen, "--share %s: xdp-ratelimit is not attached to '%s'",
			 with->name, with->name);
		return -ENOENT;
	case RL_ORPHAN_PROG:
		snprintf(
			err, errlen,
			"--share %s: the xdp-ratelimit program on '%s' has lost its pins: run detach "
			"%s, then attach again",
			with->name, with->name, with->name);
		return -EIO;
	case RL_FOREIGN_PINS:
		rl_pins_foreign_msg(with, err, errlen);
		return -EBUSY;
	case RL_UNKNOWN:
		break;
	}
	ret = -errno;
	snprintf(err, errlen, "couldn't inspect '%s': %s", with->name, strerror(errno));
	return ret;
}

int rl_attach_share(const struct rl_iface *ifc, const struct rl_iface *with, enum rl_mode mode,
		    char *err, size_t errlen)
{
	__u32 flags = XDP_FLAGS_UPDATE_IF_NOEXIST |
		      (mode == RL_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	int prog = -1, ret;
	struct rl_pins pins;
	__u32 with_mode;

	if (ifc->ifindex == with->ifindex) {
		snprintf(err, errlen, "--share %s: an interface cannot share its own limiter",
			 with->name);
		return -EINVAL;
	}
	ret = share_source(with, err, errlen);
	if (ret)
		return ret;
	{
		struct rl_member m[RL_MAX_MEMBERS];

		ret = rl_members(with, m, RL_MAX_MEMBERS);
		if (ret == RL_MAX_MEMBERS || ret == -E2BIG) {
			snprintf(err, errlen, "--share %s: at most %d interfaces share a limiter",
				 with->name, RL_MAX_MEMBERS);
			return -E2BIG;
		}
	}
	ret = clear_for_attach(ifc, err, errlen);
	if (ret > 0) {
		if (rl_pins_id(ifc->pindir) == rl_pins_id(with->pindir))
			snprintf(err, errlen, "'%s' shares the limiter of '%s' already", ifc->name,
				 with->name);
		else
			snprintf(
				err, errlen,
				"xdp-ratelimit is already attached to '%s' with a limiter of its own "
				"(detach it first to share the limiter of '%s')",
				ifc->name, with->name);
		return -EEXIST;
	}
	if (!ret)
		ret = refuse_other(ifc, err, errlen);
	if (ret)
		return ret;
	ret = rl_prog_alone(with->ifindex, &prog, &with_mode);
	if (ret < 0) {
		snprintf(err, errlen, "couldn't inspect '%s': %s", with->name, strerror(-ret));
		return ret;
	}
	if (!ret) {
		snprintf(err, errlen,
			 "'%s' runs xdp-ratelimit behind libxdp's dispatcher (an older attach): "
			 "detach and attach it again to share it",
			 with->name);
		return -EOPNOTSUPP;
	}
	ret = rl_pins_open(with, &pins, err, errlen);
	if (ret)
		goto out;
	/* The same maps pinned once more, under this interface's name. */
	ret = pin_and_attach(ifc, pins.fd, prog, flags, mode, err, errlen);
	rl_pins_close(&pins);
out:
	close(prog);
	return ret;
}

static bool fault(const char *what)
{
	const char *f = getenv("XDP_RATELIMIT_FAULT");

	return f && !strcmp(f, what);
}

/*
 * Swap @prog_fd in on one interface; the program it replaced is left open in
 * *@old (with its mode in *@mode), to be put back or closed by the caller.
 */
static int replace_one(int ifindex, const char *name, int prog_fd, int *old, __u32 *mode, char *err,
		       size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	int ret;

	ret = rl_prog_alone(ifindex, old, mode);
	if (ret < 0) {
		snprintf(err, errlen, "couldn't inspect '%s': %s", name, strerror(-ret));
		return ret;
	}
	if (!ret) {
		struct xdp_multiprog *mp = get_multiprog(ifindex);
		bool behind = find_ours(mp) != NULL;

		xdp_multiprog__close(mp);
		if (behind) {
			snprintf(
				err, errlen,
				"'%s' runs xdp-ratelimit behind libxdp's dispatcher (an older attach): detach and attach it again to change its policy",
				name);
			return -EOPNOTSUPP;
		}
		snprintf(err, errlen, "xdp-ratelimit is not attached to '%s'", name);
		return -ENOENT;
	}
	/* The kernel swaps only if the program attached is still the one we saw. */
	opts.old_prog_fd = *old;
	ret = bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_REPLACE | *mode, &opts);
	if (ret) {
		snprintf(err, errlen, "couldn't replace the program on '%s': %s", name,
			 strerror(-ret));
		close(*old);
		*old = -1;
	}
	return ret;
}

/* Append ", @name" (or @name first) to the list @buf of @len; returns how many it holds. */
static int list_add(char *buf, size_t len, int n, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", n ? ", " : "", name);
	return n + 1;
}

int rl_replace(const struct rl_iface *ifc, int prog_fd, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	struct rl_member m[RL_MAX_MEMBERS];
	int old[RL_MAX_MEMBERS], n, i, ret = 0, nback = 0, nstuck = 0;
	char back[256] = "", stuck[256] = "";
	__u32 mode[RL_MAX_MEMBERS];

	n = rl_members(ifc, m, RL_MAX_MEMBERS);
	if (n < 0) {
		snprintf(err, errlen,
			 "couldn't list the interfaces that share the limiter of '%s': %s",
			 ifc->name, strerror(-n));
		return n;
	}
	if (!n) {
		/* Not running it: replace_one() says why. */
		snprintf(m[0].name, sizeof(m[0].name), "%s", ifc->name);
		m[0].ifindex = ifc->ifindex;
		n = 1;
	}
	for (i = 0; i < n; i++) {
		/* Tests: killed between two members, deterministically. */
		if (i == 1 && fault("kill-between-members"))
			raise(SIGKILL);
		/* Tests: the second member refuses, as a driver out of memory would. */
		if (i == 1 && fault("replace-member")) {
			ret = -ENOMEM;
			snprintf(err, errlen,
				 "couldn't replace the program on '%s': %s (XDP_RATELIMIT_FAULT)",
				 m[i].name, strerror(-ret));
			break;
		}
		ret = replace_one(m[i].ifindex, m[i].name, prog_fd, &old[i], &mode[i], err, errlen);
		if (ret)
			break;
	}
	if (!ret) {
		for (i = 0; i < n; i++)
			close(old[i]);
		return 0;
	}
	/*
	 * Member i refused: put the old program back on the members before it,
	 * so that they all run one policy again (both programs run on the same
	 * maps, so every member kept limiting meanwhile).
	 */
	opts.old_prog_fd = prog_fd;
	for (int j = 0; j < i; j++) {
		if (bpf_xdp_attach(m[j].ifindex, old[j], XDP_FLAGS_REPLACE | mode[j], &opts))
			nstuck = list_add(stuck, sizeof(stuck), nstuck, m[j].name);
		else
			nback = list_add(back, sizeof(back), nback, m[j].name);
		close(old[j]);
	}
	if (nstuck) {
		size_t len = strlen(err);

		snprintf(
			err + len, len < errlen ? errlen - len : 0,
			", and the previous program couldn't be put back on %s: they run the new "
			"policy, the other members the previous one, on the same maps (run it again)",
			stuck);
		return -ENOTRECOVERABLE;
	}
	if (nback) {
		size_t len = strlen(err);

		snprintf(err + len, len < errlen ? errlen - len : 0,
			 " (%s, which share%s its limiter, run%s the previous program again)", back,
			 nback == 1 ? "s" : "", nback == 1 ? "s" : "");
	}
	return ret;
}

__u32 rl_attached_prog_id(const struct rl_iface *ifc)
{
	struct xdp_multiprog *mp = get_multiprog(ifc->ifindex);
	struct xdp_program *prog = find_ours(mp);
	__u32 id = prog ? xdp_program__id(prog) : 0;

	xdp_multiprog__close(mp);
	return id;
}

/*
 * Before @ifc leaves a shared limiter: if rl_ctl names it (or an interface
 * that no longer runs the limiter), name another member, so that the pins the
 * others keep stay theirs (rl_pins_owned()). We hold the lock: rl_ctl is not
 * written meanwhile (the program only reads it).
 */
static void handover(const struct rl_iface *ifc)
{
	struct rl_member m[RL_MAX_MEMBERS];
	char path[PATH_MAX];
	struct rl_ctl ctl;
	int n = rl_members(ifc, m, RL_MAX_MEMBERS), fd, to = -1;
	__u32 zero = 0;

	for (int i = 0; i < n && to < 0; i++)
		if (m[i].ifindex != ifc->ifindex)
			to = i;
	if (to < 0)
		return;
	snprintf(path, sizeof(path), "%s/rl_ctl", ifc->pindir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	if (!rl_map_lookup_sized(fd, &zero, &ctl, sizeof(ctl))) {
		bool member = false;

		for (int i = 0; i < n; i++)
			member |= ctl.ifindex == (__u32)m[i].ifindex &&
				  ctl.ifindex != (__u32)ifc->ifindex;
		if (!member) {
			ctl.ifindex = (__u32)m[to].ifindex;
			if (bpf_map_update_elem(fd, &zero, &ctl, BPF_ANY))
				pr_warn("couldn't hand the limiter of '%s' over to '%s': %s",
					ifc->name, m[to].name, strerror(errno));
			else
				pr_debug("the limiter of '%s' is '%s''s now", ifc->name,
					 m[to].name);
		}
	}
	close(fd);
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
	if (prog && !foreign)
		handover(ifc);
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

/*
 * Load the program for @cfg and @rules (NULL: the live ones) on the live maps
 * and swap it in.
 */
static int swap_in(const struct rl_iface *ifc, const struct rl_pins *pins,
		   const struct rl_config *cfg, const struct rl_rules_cfg *rules, char *err,
		   size_t errlen)
{
	struct rl_prog_opts po = { .reuse = pins, .rules = rules };
	struct xdp_ratelimit *skel;
	char why[RL_ERRLEN];
	int ret;

	skel = rl_prog_open(cfg, &po, why, sizeof(why));
	if (!skel) {
		ret = -errno;
		snprintf(err, errlen, "%s", why);
		return ret;
	}
	ret = rl_replace(ifc, rl_prog_fd(skel), err, errlen);
	/* Attached, the program lives on without our references. */
	rl_prog_destroy(skel);
	return ret;
}

int rl_members_converge(const struct rl_iface *ifc, const struct rl_pins *pins,
			const struct rl_config *cfg, char *err, size_t errlen)
{
	struct rl_member m[RL_MAX_MEMBERS];
	__u32 first = 0;
	bool differ = false;
	int n, ret;

	n = rl_members(ifc, m, RL_MAX_MEMBERS);
	if (n < 0) {
		snprintf(err, errlen,
			 "couldn't list the interfaces that share the limiter of '%s': %s",
			 ifc->name, strerror(-n));
		return n;
	}
	for (int i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		__u32 id;

		if (bpf_xdp_query(m[i].ifindex, 0, &q))
			continue; /* removed meanwhile: not a member any more */
		id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		if (!first)
			first = id;
		differ |= id != first;
	}
	if (!differ)
		return 0;
	ret = swap_in(ifc, pins, cfg, NULL, err, errlen);
	return ret ? ret : 1;
}

/* The fd of @p's IPv4 table of kind @t, to be replaced in a copy of @p. */
static int *table4_fd(struct rl_pins *p, enum rl_table4 t)
{
	return t == RL_TABLE4_LRU ? &p->state4 : t == RL_TABLE4_WIDE ? &p->wide4 : &p->sets4;
}

static const char *table4_name(enum rl_table4 t)
{
	return t == RL_TABLE4_LRU ? "rl_state4" : t == RL_TABLE4_WIDE ? "rl_wide4" : "rl_sets4";
}

/*
 * Pin @fd as @name in the pin directory of every interface that shares the
 * limiter of @ifc (each has its own directory of pins of the same maps).
 */
static int repin_members(const struct rl_iface *ifc, const char *name, int fd, char *err,
			 size_t errlen)
{
	struct rl_member m[RL_MAX_MEMBERS];
	int n = rl_members(ifc, m, RL_MAX_MEMBERS), ret;

	ret = rl_pins_replace(ifc, name, fd, err, errlen);
	for (int i = 0; i < n && !ret; i++) {
		struct rl_iface mi;

		if (m[i].ifindex == ifc->ifindex || rl_iface_get(m[i].name, &mi, err, errlen) ||
		    !rl_is_attached(&mi))
			continue; /* gone meanwhile, or no pins of its own */
		ret = rl_pins_replace(&mi, name, fd, err, errlen);
	}
	return ret;
}

/*
 * The maps of the features @cfg and @rules turn on or off that *@np (the
 * maps to load the program on) does not have at the size they need
 * (rl_map_entries(): full for a feature on, one entry for one off): made
 * anew in *@np, each like the map it replaces (type, key, value, flags,
 * BTF); *@made says which (bits of RL_MAP_*). Changes nothing live.
 */
_Static_assert(RL_N_MAPS <= 32, "feature_maps(): a bit of *made per map");

static int feature_maps(struct rl_pins *np, const struct rl_config *cfg,
			const struct rl_rules_cfg *rules, __u32 *made, char *err, size_t errlen)
{
	__u32 zero = 0, len, max4, max6, want = 0;
	struct rl_ctl ctl = {};
	int ret = 0, i;

	*made = 0;
	if (bpf_map_lookup_elem(np->ctl, &zero, &ctl)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't read the size of the source tables: %s",
			 strerror(errno));
		return ret;
	}
	max4 = ctl.max_sources4 ?: RL_DEFAULT_MAX_SOURCES;
	max6 = rl_max_sources6(np);
	for (i = 0; i < RL_N_MAPS; i++) {
		LIBBPF_OPTS(bpf_map_create_opts, o);
		struct bpf_map_info info = {};
		int fd, btf = -1;

		want = rl_map_entries(i, cfg, rules, max4, max6);
		len = sizeof(info);
		if (!want)
			continue;
		if (bpf_obj_get_info_by_fd(np->fd[i], &info, &len)) {
			ret = -errno;
			goto fail;
		}
		if (info.max_entries == want)
			continue;
		o.map_flags = info.map_flags;
		/* Its BTF too, so that bpftool prints its entries as the object's. */
		if (info.btf_id)
			btf = bpf_btf_get_fd_by_id(info.btf_id);
		if (btf >= 0) {
			o.btf_fd = btf;
			o.btf_key_type_id = info.btf_key_type_id;
			o.btf_value_type_id = info.btf_value_type_id;
		}
		fd = bpf_map_create(info.type, info.name, info.key_size, info.value_size, want, &o);
		ret = -errno;
		if (btf >= 0)
			close(btf);
		if (fd < 0)
			goto fail;
		np->fd[i] = fd;
		*made |= 1U << i;
	}
	return 0;
fail:
	snprintf(err, errlen, "couldn't make %s with %u entries: %s", rl_map_names[i], want,
		 strerror(-ret));
	for (int j = 0; j < i; j++)
		if (*made & (1U << j))
			close(np->fd[j]);
	*made = 0;
	return ret;
}

/* The maps feature_maps() made (@made of *@np): the pins and the program hold them now. */
static void feature_close(const struct rl_pins *np, __u32 made)
{
	for (int i = 0; i < RL_N_MAPS; i++)
		if (made & (1U << i))
			close(np->fd[i]);
}

/* The maps feature_maps() made, pinned for every member in place of those they replace. */
static int feature_pin(const struct rl_iface *ifc, const struct rl_pins *np, __u32 made, char *err,
		       size_t errlen)
{
	int ret = 0;

	for (int i = 0; i < RL_N_MAPS && !ret; i++)
		if (made & (1U << i))
			ret = repin_members(ifc, rl_map_names[i], np->fd[i], err, errlen);
	return ret;
}

/*
 * The program for @cfg and @rules swapped in on @np, the live maps with the
 * features' made by feature_maps(): < 0 and nothing changed; 0.
 */
static int feature_swap(const struct rl_iface *ifc, const struct rl_pins *np,
			const struct rl_config *cfg, const struct rl_rules_cfg *rules, char *err,
			size_t errlen)
{
	return swap_in(ifc, np, cfg, rules, err, errlen);
}

int rl_swap_live(const struct rl_iface *ifc, struct rl_pins *pins, const struct rl_config *cfg,
		 char *err, size_t errlen)
{
	struct rl_rules_cfg *rules = malloc(sizeof(*rules));
	struct rl_pins np = *pins;
	char why[RL_ERRLEN];
	__u32 made = 0;
	int ret;

	if (!rules) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = rl_rules_read(pins, rules);
	if (ret) {
		snprintf(err, errlen, "couldn't read the live rules: %s", strerror(-ret));
		goto out;
	}
	ret = feature_maps(&np, cfg, rules, &made, err, errlen);
	if (!ret)
		ret = feature_swap(ifc, &np, cfg, rules, err, errlen);
	if (ret) {
		feature_close(&np, made);
		goto out;
	}
	if (feature_pin(ifc, &np, made, why, sizeof(why))) {
		snprintf(err, errlen, "the new program is live, but %s", why);
		ret = 1;
	}
	/* @pins follows: the maps live now in place of those replaced. */
	for (int i = 0; i < RL_N_MAPS; i++)
		if (made & (1U << i)) {
			close(pins->fd[i]);
			pins->fd[i] = np.fd[i];
		}
out:
	free(rules);
	return ret;
}

int rl_rules_make_live(const struct rl_iface *ifc, const struct rl_pins *pins,
		       const struct rl_config *def, const struct rl_rules_cfg *old,
		       const struct rl_ruleset *set, struct rl_rules_cfg *out, char *err,
		       size_t errlen)
{
	struct rl_pins np = *pins;
	char why[RL_ERRLEN];
	__u32 made = 0;
	__u64 ns = 0;
	int ret;

	ret = rl_rules_compile(set, old, out, why, sizeof(why));
	/* The rules' maps they turn on, at full size, before they are filled. */
	if (!ret)
		ret = feature_maps(&np, def, out, &made, why, sizeof(why));
	if (!ret)
		ret = rl_rules_fill(&np, set, out, old, &ns, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s: nothing changed", why);
		goto out;
	}
	pr_debug("source prefixes written in %llu ms", (unsigned long long)(ns / 1000000));
	ret = feature_swap(ifc, &np, def, out, why, sizeof(why));
	if (ret) {
		/* -ENOTRECOVERABLE: the members of a shared limiter run different programs. */
		snprintf(err, errlen, "%s%s", why,
			 ret == -ENOTRECOVERABLE ? "" : ": nothing changed");
		goto out;
	}
	if (feature_pin(ifc, &np, made, why, sizeof(why)) ||
	    rl_rules_commit(&np, out, why, sizeof(why))) {
		snprintf(err, errlen, "the new rules are live, but %s", why);
		ret = 1;
	}
out:
	feature_close(&np, made);
	return ret;
}

/*
 * A set whose policy needs the other IPv4 table (rl_table4_choose()): make
 * that table at full size in *np (a copy of @pins), to load the new program
 * on. Its program carries each source over from the previous table (the
 * previous generation is looked up where it is: prev_table4), and the
 * migration moves the others; then the final program is loaded with a
 * one-entry stand-in in place of the previous table (finish_switch()).
 */
static int start_switch(const struct rl_pins *pins, const struct rl_config *c, __u32 bits,
			struct rl_pins *np, char *err, size_t errlen)
{
	struct rl_ctl ctl = {};
	__u32 zero = 0;
	int fd;

	if (bpf_map_lookup_elem(pins->ctl, &zero, &ctl)) {
		fd = -errno;
		goto fail;
	}
	fd = rl_table4_create(c->table4, ctl.max_sources4 ?: RL_DEFAULT_MAX_SOURCES, bits, false);
	if (fd < 0)
		goto fail;
	*np = *pins;
	*table4_fd(np, c->table4) = fd;
	return 0;
fail:
	snprintf(err, errlen, "couldn't create the IPv4 source table %s this policy needs: %s",
		 table4_name(c->table4), strerror(-fd));
	return fd;
}

int rl_set_live(const struct rl_iface *ifc, const struct rl_pins *pins, const struct rl_config *cfg,
		__u32 active, __u64 *moved, char *err, size_t errlen)
{
	return rl_set_live_rules(ifc, pins, cfg, active, NULL, moved, err, errlen);
}

/*
 * The rules the new program carries, in *@rules: those of @set compiled
 * against the live ones (*@old), or (@set NULL) the live ones. Changes
 * nothing live.
 */
static int stage_rules(const struct rl_pins *pins, const struct rl_ruleset *set,
		       struct rl_rules_cfg **old, struct rl_rules_cfg **rules, char *err,
		       size_t errlen)
{
	char why[RL_ERRLEN];
	int ret;

	*old = malloc(sizeof(**old));
	*rules = malloc(sizeof(**rules));
	if (!*old || !*rules) {
		snprintf(err, errlen, "out of memory: nothing changed");
		return -ENOMEM;
	}
	ret = rl_rules_read(pins, *old);
	if (ret) {
		snprintf(err, errlen, "couldn't read the live rules: %s: nothing changed",
			 strerror(-ret));
		return ret;
	}
	if (!set) {
		**rules = **old;
		return 0;
	}
	ret = rl_rules_compile(set, *old, *rules, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "rules: %s: nothing changed", why);
	return ret;
}

int rl_set_live_rules(const struct rl_iface *ifc, const struct rl_pins *pins,
		      const struct rl_config *cfg, __u32 active, const struct rl_ruleset *set,
		      __u64 *moved, char *err, size_t errlen)
{
	struct rl_rules_cfg *old_rules = NULL, *rules = NULL;
	struct rl_config c = *cfg, done, old;
	struct rl_pins np = *pins, fin;
	bool sw = false;
	char why[RL_ERRLEN];
	__u32 bits, a, made = 0;
	int ret, stand_in = -1;

	*moved = 0;
	ret = rl_config_read(pins, &old, &a);
	if (!ret)
		ret = rl_sa_bits_live(pins, &bits);
	if (ret) {
		snprintf(err, errlen,
			 "couldn't read the live policy's IPv4 table: %s: nothing changed",
			 strerror(-ret));
		return ret;
	}
	/* Everything staged first, where the live program does not look. */
	ret = stage_rules(pins, set, &old_rules, &rules, err, errlen);
	if (ret)
		goto out;
	rl_table4_choose(&c, bits);
	c.prev_table4 = old.table4;
	if (c.table4 != old.table4) {
		ret = start_switch(pins, &c, bits, &np, why, sizeof(why));
		if (ret) {
			snprintf(err, errlen, "%s: nothing changed", why);
			goto out;
		}
		sw = true;
	}
	/* The maps of the features the new policy and rules turn on (or off). */
	ret = feature_maps(&np, &c, rules, &made, why, sizeof(why));
	/* The rules' prefixes, into the tries the live program does not read. */
	if (!ret && set)
		ret = rl_rules_fill(&np, set, rules, old_rules, NULL, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s%s: nothing changed", set ? "rules: " : "", why);
		goto out;
	}
	/* The commit point: one program with the new policy and the new rules. */
	ret = feature_swap(ifc, &np, &c, rules, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s%s", why,
			 ret == -ENOTRECOVERABLE ? "" : ": nothing changed");
		goto out;
	}
	/*
	 * Killed from here on, the program is the record (rl_live_compiled()):
	 * the copies below only follow it, and the next change redoes them.
	 */
	ret = rl_config_swap(pins, &c, active);
	if (ret) {
		snprintf(err, errlen,
			 "the new policy is live, but its copy for status couldn't be written: %s",
			 strerror(-ret));
		ret = 1;
		goto out;
	}
	if (feature_pin(ifc, &np, made, why, sizeof(why))) {
		snprintf(err, errlen, "the new policy is live, but %s", why);
		ret = 1;
		goto out;
	}
	if (set) {
		ret = rl_rules_commit(&np, rules, why, sizeof(why));
		if (ret) {
			snprintf(err, errlen, "the new policy and rules are live, but %s", why);
			ret = 1;
			goto out;
		}
	}
	/* The new table is live: pinned, for every command that opens the limiter. */
	if (sw && repin_members(ifc, table4_name(c.table4), *table4_fd(&np, c.table4), why,
				sizeof(why))) {
		snprintf(err, errlen, "the new policy is live, but %s", why);
		ret = 1;
		goto out;
	}
	ret = rl_migrate(&np, &c, moved);
	if (ret == -EAGAIN) {
		ret = 0; /* longer prefixes: each source is carried over on its next packet */
		goto out;
	}
	if (ret) {
		snprintf(
			err, errlen,
			"the new policy is live, but moving source states failed: %s (they move on their next packet)",
			strerror(-ret));
		ret = 1;
		goto out;
	}
	if (!c.has_prev && !sw)
		goto out;
	/*
	 * Every state is under the new generation: a program that stops
	 * looking for the old one, and with a one-entry stand-in for the
	 * previous IPv4 table if the policy moved to the other one.
	 */
	done = c;
	done.has_prev = 0;
	done.prev_table4 = done.table4;
	fin = np;
	if (sw) {
		stand_in = rl_table4_create(old.table4, 1, bits, true);
		if (stand_in < 0) {
			snprintf(why, sizeof(why), "couldn't create a stand-in for %s: %s",
				 table4_name(old.table4), strerror(-stand_in));
			ret = stand_in;
			goto final_failed;
		}
		*table4_fd(&fin, old.table4) = stand_in;
	}
	ret = swap_in(ifc, &fin, &done, rules, why, sizeof(why));
	if (!ret)
		ret = rl_config_swap(pins, &done, !active);
	if (!ret && sw)
		ret = repin_members(ifc, table4_name(old.table4), stand_in, why, sizeof(why));
final_failed:
	if (ret) {
		snprintf(
			err, errlen,
			"the new policy is live, but its final program couldn't be swapped in (%s): new sources still look up the previous generation",
			why);
		ret = 1;
	}
out:
	if (stand_in >= 0)
		close(stand_in);
	if (sw)
		close(*table4_fd(&np, c.table4));
	feature_close(&np, made);
	free(old_rules);
	free(rules);
	return ret;
}
