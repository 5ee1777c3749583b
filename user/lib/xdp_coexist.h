/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Other XDP programs on an interface, and whether libxdp's dispatcher (the
 * way XDP programs share an interface) can run on this kernel: what attach
 * says when the interface is taken (docs/design.md, "Sharing the interface").
 */
#ifndef RL_XDP_COEXIST_H
#define RL_XDP_COEXIST_H

#include <stddef.h>

/*
 * The XDP program on @ifindex if it is not xdp-ratelimit, described in
 * @desc ("'xdpfilt_alw_all' (id 42, skb)", or "libxdp's dispatcher
 * (native: 'a' 'b')"): 1 if there is one, 0 if none (or ours), -errno.
 */
int rl_xdp_other(int ifindex, char *desc, size_t len);

/*
 * Load what libxdp's dispatcher is made of, as libxdp checks it before using
 * it: an XDP program of its xdp-dispatcher.o, then a freplace
 * (BPF_PROG_TYPE_EXT) program that replaces it. 0 if the kernel takes both;
 * -errno otherwise, with what failed in @why (EPERM: this kernel refuses
 * freplace programs; ENOENT: libxdp's xdp-dispatcher.o is not installed).
 * Nothing is attached; both are unloaded before it returns.
 */
int rl_dispatcher_probe(char *why, size_t len);

/*
 * The error of an attach to @ifname refused because of @other (as
 * rl_xdp_other() describes it): what is there, why xdp-ratelimit cannot run
 * beside it here (rl_dispatcher_probe()'s answer) and what to do.
 */
void rl_coexist_msg(const char *ifname, const char *other, char *err, size_t errlen);

#endif /* RL_XDP_COEXIST_H */
