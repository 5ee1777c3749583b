// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Other XDP programs on an interface, and libxdp's dispatcher on this kernel (see the header). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "pins.h"
#include "xdp_coexist.h"

static const char *mode_name(enum xdp_attach_mode m)
{
	switch (m) {
	case XDP_MODE_NATIVE:
		return "native";
	case XDP_MODE_SKB:
		return "skb";
	case XDP_MODE_HW:
		return "hw";
	default:
		return "unknown";
	}
}

int rl_xdp_other(int ifindex, char *desc, size_t len)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	long err = libxdp_get_error(mp);
	struct xdp_program *p;
	size_t used;
	int ret = 1;

	if (err == -ENOENT || (!err && !mp))
		return 0;
	if (err)
		return (int)err;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (!p || rl_prog_name_ours(xdp_program__name(p))) {
			ret = 0;
		} else {
			snprintf(desc, len, "'%s' (id %u, %s)", xdp_program__name(p),
				 xdp_program__id(p), mode_name(xdp_multiprog__attach_mode(mp)));
		}
		goto out;
	}
	snprintf(desc, len, "libxdp's dispatcher (%s mode) running",
		 mode_name(xdp_multiprog__attach_mode(mp)));
	for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp)) {
		used = strlen(desc);
		snprintf(desc + used, len - used, " '%s' (id %u, priority %u)",
			 xdp_program__name(p), xdp_program__id(p), xdp_program__run_prio(p));
	}
out:
	xdp_multiprog__close(mp);
	return ret;
}

/* libxdp's xdp-dispatcher.o with only its xdp_pass program to load; NULL with errno set. */
static struct xdp_program *dispatcher_pass(struct bpf_program **pass)
{
	struct xdp_program *xp = xdp_program__find_file("xdp-dispatcher.o", NULL, NULL);
	struct bpf_program *bp;
	struct bpf_object *obj;
	long err = libxdp_get_error(xp);

	if (err) {
		errno = (int)-err;
		return NULL;
	}
	obj = xdp_program__bpf_obj(xp);
	*pass = NULL;
	bpf_object__for_each_program(bp, obj)
	{
		bool is_pass = !strcmp(bpf_program__name(bp), "xdp_pass");

		bpf_program__set_autoload(bp, is_pass);
		if (is_pass)
			*pass = bp;
	}
	if (!*pass) {
		xdp_program__close(xp);
		errno = ENOENT;
		return NULL;
	}
	return xp;
}

int rl_dispatcher_probe(char *why, size_t len)
{
	struct xdp_program *tgt = NULL, *ext = NULL;
	struct bpf_program *tp, *ep;
	int ret;

	tgt = dispatcher_pass(&tp);
	if (!tgt) {
		ret = -errno;
		snprintf(why, len, "couldn't open libxdp's xdp-dispatcher.o: %s", strerror(errno));
		return ret;
	}
	ret = bpf_object__load(xdp_program__bpf_obj(tgt));
	if (ret) {
		snprintf(why, len, "couldn't load the XDP program of libxdp's dispatcher: %s",
			 strerror(-ret));
		goto out;
	}
	ext = dispatcher_pass(&ep);
	if (!ext) {
		ret = -errno;
		snprintf(why, len, "couldn't open libxdp's xdp-dispatcher.o: %s", strerror(errno));
		goto out;
	}
	/* What the dispatcher's slots are filled with: a program that replaces one of its functions. */
	bpf_program__set_type(ep, BPF_PROG_TYPE_EXT);
	bpf_program__set_expected_attach_type(ep, 0);
	ret = bpf_program__set_attach_target(ep, bpf_program__fd(tp), "xdp_pass");
	if (!ret)
		ret = bpf_object__load(xdp_program__bpf_obj(ext));
	if (ret)
		snprintf(why, len,
			 "the kernel refuses to load freplace (BPF_PROG_TYPE_EXT) programs, which "
			 "libxdp's dispatcher is made of: %s",
			 strerror(-ret));
out:
	xdp_program__close(ext);
	xdp_program__close(tgt);
	return ret;
}

/*
 * Both fit RL_ERRLEN (256) with 15-character names and 6-digit ids; the
 * evidence behind the first is in docs/design.md, "Sharing the interface".
 */
void rl_coexist_msg(const char *ifname, const char *other, char *err, size_t errlen)
{
	char why[256];
	int ret = rl_dispatcher_probe(why, sizeof(why));

	pr_debug("libxdp's dispatcher on this kernel: %s", ret ? why : "it loads");
	if (ret == -EPERM || ret == -EINVAL || ret == -EOPNOTSUPP)
		snprintf(err, errlen,
			 "couldn't attach to '%s': %s is attached; sharing needs libxdp's "
			 "dispatcher, whose freplace programs this kernel refuses: xdp-loader "
			 "unload %s --all first (man xdp-ratelimit: OTHER XDP PROGRAMS)",
			 ifname, other, ifname);
	else
		snprintf(err, errlen,
			 "couldn't attach to '%s': %s is attached; xdp-ratelimit attaches alone, "
			 "not behind libxdp's dispatcher: xdp-loader unload %s --all first (man "
			 "xdp-ratelimit: OTHER XDP PROGRAMS)",
			 ifname, other, ifname);
}
