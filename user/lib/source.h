/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Source addresses as rate-limit keys: parse, mask, format. */
#ifndef RL_SOURCE_H
#define RL_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include "rl_key.h"

/* Longest text rl_key_str() writes: an IPv6 address and "/128". */
#define RL_KEY_STRLEN 64

/*
 * The source of trace lines that name none: all ones, a multicast address
 * that no packet comes from, printed as "-" and never masked.
 */
void rl_key_anon(struct rl_key *k);
bool rl_key_is_anon(const struct rl_key *k);
/* True for an IPv4 address held as ::ffff:a.b.c.d. */
bool rl_key_is_v4(const struct rl_key *k);
/* True for an IPv6 link-local address (fe80::/10), keyed whole. */
bool rl_key_is_ll(const struct rl_key *k);
/* Parse an IPv4 or IPv6 address into an unmasked key; 0 or -EINVAL. */
int rl_key_parse(const char *s, struct rl_key *k);
/*
 * Keep the first /prefix4 (IPv4) or /prefix6 (IPv6) bits of the address, all
 * of a link-local one (fe80::/10), as the XDP program does.
 */
void rl_key_mask(struct rl_key *k, unsigned int prefix4, unsigned int prefix6);
/* "198.18.0.1", "198.18.0.0/24", "2001:db8::/64", "fe80::1" (link-local: /128) */
char *rl_key_str(const struct rl_key *k, unsigned int prefix4, unsigned int prefix6, char *buf,
		 size_t len);

#endif /* RL_SOURCE_H */
