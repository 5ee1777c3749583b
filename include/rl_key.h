/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The per-source key, shared by the XDP program and userspace.
 *
 * One 16-byte key serves both families: an IPv6 address as it is, an IPv4
 * address as IPv4-mapped IPv6 (::ffff:a.b.c.d), both masked to the
 * configured prefix. IPv4 prefix /N masks the mapped address to /(96 + N), so
 * an IPv4 key never equals an IPv6 key outside ::ffff:0:0/96 and prefix 0
 * still keeps the two families apart. An IPv6 packet from an IPv4-mapped
 * address (::ffff:a.b.c.d) is keyed as that IPv4 host, with --prefix4.
 *
 * A link-local IPv6 source (fe80::/10) is keyed by its full address (/128),
 * whatever --prefix6 says: every host on a link shares the one fe80::/64, so
 * a /64 key would let one flooding neighbour block all the others. The XDP
 * program and userspace (rl_key_mask()) key it the same way.
 */
#ifndef RL_KEY_H
#define RL_KEY_H

#include <linux/types.h>

struct rl_key {
	__u32 addr[4]; /* network byte order */
};

/* How a source is masked: by --prefix4, by --prefix6, or not at all (link-local). */
enum rl_key_kind {
	RL_KEY_V6 = 0,
	RL_KEY_V4 = 1,
	RL_KEY_LL = 2,
};

/* fe80::/10: the first 10 bits of the first word (in host order) are 1111111010. */
#define RL_LL_MASK   0xffc00000U
#define RL_LL_PREFIX 0xfe800000U

#endif /* RL_KEY_H */
