// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "source.h"

void rl_key_anon(struct rl_key *k)
{
	memset(k, 0xff, sizeof(*k));
}

bool rl_key_is_anon(const struct rl_key *k)
{
	return (k->addr[0] & k->addr[1] & k->addr[2] & k->addr[3]) == 0xffffffff;
}

bool rl_key_is_v4(const struct rl_key *k)
{
	return k->addr[0] == 0 && k->addr[1] == 0 && k->addr[2] == htonl(0xffff);
}

int rl_key_parse(const char *s, struct rl_key *k)
{
	struct in_addr a4;

	memset(k, 0, sizeof(*k));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		k->addr[2] = htonl(0xffff);
		k->addr[3] = a4.s_addr;
		return 0;
	}
	if (inet_pton(AF_INET6, s, k->addr) == 1)
		return 0;
	return -EINVAL;
}

bool rl_key_is_ll(const struct rl_key *k)
{
	return (k->addr[0] & htonl(RL_LL_MASK)) == htonl(RL_LL_PREFIX);
}

/* As the XDP program keys a source (see rl_key.h): link-local ones whole. */
void rl_key_mask(struct rl_key *k, unsigned int prefix4, unsigned int prefix6)
{
	unsigned int bits = rl_key_is_v4(k) ? 96 + prefix4 : rl_key_is_ll(k) ? 128 : prefix6;

	for (int i = 0; i < 4; i++) {
		unsigned int keep = bits > 32 ? 32 : bits;

		k->addr[i] &= keep ? htonl(~0U << (32 - keep)) : 0;
		bits -= keep;
	}
}

char *rl_key_str(const struct rl_key *k, unsigned int prefix4, unsigned int prefix6, char *buf,
		 size_t len)
{
	char a[INET6_ADDRSTRLEN];
	bool v4 = rl_key_is_v4(k);
	unsigned int prefix = v4 ? prefix4 : rl_key_is_ll(k) ? 128 : prefix6;

	if (rl_key_is_anon(k)) {
		snprintf(buf, len, "-");
		return buf;
	}

	if (v4)
		inet_ntop(AF_INET, &k->addr[3], a, sizeof(a));
	else
		inet_ntop(AF_INET6, k->addr, a, sizeof(a));
	if (prefix == (v4 ? 32U : 128U))
		snprintf(buf, len, "%s", a);
	else
		snprintf(buf, len, "%s/%u", a, prefix);
	return buf;
}
