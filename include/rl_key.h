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
 */
#ifndef RL_KEY_H
#define RL_KEY_H

#include <linux/types.h>

struct rl_key {
	__u32 addr[4];	/* network byte order */
};

#endif /* RL_KEY_H */
