// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The replay tests' corpus of frames (see corpus.h). */
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include "corpus.h"
#include "test.h"

static const char *const v4[] = { "198.18.0.1", "198.18.0.2",	"198.18.0.9", "198.18.0.12",
				  "198.18.1.7", "198.18.1.200", "198.19.0.1", "198.18.7.3" };
static const char *const v6[] = { "2001:db8::1",       "2001:db8::2",	  "2001:db8:0:1::5",
				  "2001:db8:1::9",     "fe80::1",	  "fe80::2",
				  "::ffff:198.18.0.1", "2001:db8:ffff::7" };

#define NKINDS 28

/* Frame kind @k from source index @s into @f. */
static void build(struct frame *f, unsigned int k, unsigned int s, unsigned long long *rng)
{
	const char *a4 = v4[s % 8], *a6 = v6[s % 8];
	struct fr_ip4 o = { 0 };

	fr_init(f);
	switch (k) {
	case 0: /* the bulk: plain IPv4 UDP */
	case 1:
	case 2:
	case 3:
		fr_eth(f, ETH_P_IP);
		fr_ipv4(f, a4, NULL);
		fr_pad(f, FRAME_MIN + (unsigned int)rl_rand_below(rng, 200));
		break;
	case 4: /* TCP SYN and ACK to 443, UDP to 53 */
		fr_eth(f, ETH_P_IP);
		fr_ipv4_l4(f, a4, 6, 443, 0x02, 0);
		fr_pad(f, FRAME_MIN);
		break;
	case 5:
		fr_eth(f, ETH_P_IP);
		fr_ipv4_l4(f, a4, 6, 443, 0x10, 0);
		fr_pad(f, FRAME_MIN);
		break;
	case 6:
		fr_eth(f, ETH_P_IP);
		fr_ipv4_l4(f, a4, 17, 5353, 0, 0);
		fr_pad(f, FRAME_MIN);
		break;
	case 7: /* options, a fragment after the first */
		o.ihl = 8;
		fr_eth(f, ETH_P_IP);
		fr_ipv4(f, a4, &o);
		break;
	case 8:
		fr_eth(f, ETH_P_IP);
		fr_ipv4_l4(f, a4, 6, 443, 0x02, 0x2000 | 10);
		fr_pad(f, FRAME_MIN);
		break;
	case 9: /* one tag, two, three (malformed) */
		fr_eth(f, ETH_P_8021Q);
		fr_vlan(f, 100, ETH_P_IP);
		fr_ipv4(f, a4, NULL);
		fr_pad(f, FRAME_MIN);
		break;
	case 10:
		fr_eth(f, ETH_P_8021AD);
		fr_vlan(f, 100, ETH_P_8021Q);
		fr_vlan(f, 200, s & 1 ? ETH_P_IPV6 : ETH_P_IP);
		if (s & 1)
			fr_ipv6(f, a6, 0);
		else
			fr_ipv4(f, a4, NULL);
		fr_pad(f, FRAME_MIN);
		break;
	case 11:
		fr_eth(f, ETH_P_8021Q);
		fr_vlan(f, 1, ETH_P_8021Q);
		fr_vlan(f, 2, ETH_P_8021Q);
		fr_vlan(f, 3, ETH_P_IP);
		fr_ipv4(f, a4, NULL);
		break;
	case 12: /* IPv6: UDP, TCP SYN, an extension header */
	case 13:
		fr_eth(f, ETH_P_IPV6);
		fr_ipv6(f, a6, 0);
		fr_pad(f, FRAME_MIN + (unsigned int)rl_rand_below(rng, 100));
		break;
	case 14:
		fr_eth(f, ETH_P_IPV6);
		fr_ipv6_l4(f, a6, 6, 443, 0x02, false);
		break;
	case 15:
		fr_eth(f, ETH_P_IPV6);
		fr_ipv6_l4(f, a6, 17, 5353, 0, s & 1);
		break;
	case 16: /* ND (hop limit 255), the same at 254 (limited), an echo request */
		fr_eth(f, ETH_P_IPV6);
		fr_icmp6(f, s & 1 ? "fe80::1" : a6, 135, 255);
		break;
	case 17:
		fr_eth(f, ETH_P_IPV6);
		fr_icmp6(f, a6, 136, 254);
		break;
	case 18:
		fr_eth(f, ETH_P_IPV6);
		fr_icmp6(f, a6, 128, 64);
		break;
	case 19: /* not IP */
		fr_arp(f);
		break;
	case 20:
		fr_lldp(f);
		break;
	case 21: /* malformed: IPv4 cut, IHL 3, version 5, IPv6 cut, version 4, a tag cut */
		fr_eth(f, ETH_P_IP);
		fr_ipv4(f, a4, NULL);
		fr_cut(f, ETH_HLEN + 12);
		break;
	case 22:
		o.ihl = 3;
		o.set_ihl = true;
		fr_eth(f, ETH_P_IP);
		fr_ipv4(f, a4, &o);
		break;
	case 23:
		o.version = 5;
		fr_eth(f, ETH_P_IP);
		fr_ipv4(f, a4, &o);
		break;
	case 24:
		fr_eth(f, ETH_P_IPV6);
		fr_ipv6(f, a6, s & 1 ? 4 : 0);
		if (!(s & 1))
			fr_cut(f, ETH_HLEN + 30);
		break;
	case 25:
		fr_eth(f, ETH_P_8021Q);
		fr_vlan(f, 7, ETH_P_IP);
		fr_cut(f, ETH_HLEN + 2);
		break;
	case 26: /* an L4 header cut short; ND with its type byte cut */
		fr_eth(f, ETH_P_IP);
		fr_ipv4_l4(f, a4, 6, 443, 0x02, 0);
		fr_cut(f, ETH_HLEN + 20 + 10);
		break;
	default:
		fr_eth(f, ETH_P_IPV6);
		fr_icmp6(f, a6, 135, 255);
		fr_cut(f, ETH_HLEN + 40);
		break;
	}
}

int corpus_make(struct corpus *c, size_t n, __u64 t0, unsigned long long seed)
{
	unsigned long long rng = seed * 0x9e3779b97f4a7c15ULL | 1;
	__u64 now = t0;

	memset(c, 0, sizeof(*c));
	c->f = calloc(n, sizeof(*c->f));
	c->r = calloc(n, sizeof(*c->r));
	if (!c->f || !c->r) {
		corpus_free(c);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct frame *f = &c->f[i];
		unsigned int k = (unsigned int)rl_rand_below(&rng, NKINDS);
		unsigned int s = (unsigned int)rl_rand_below(&rng, 8);

		/* Half the frames from the first two sources, so that their limits bite. */
		if (rl_rand_below(&rng, 2))
			s = (unsigned int)rl_rand_below(&rng, 2);
		build(f, k, s, &rng);
		if (f->bad) {
			/* A builder that ran out of room: a plain frame instead. */
			k = 0;
			build(f, 0, s, &rng);
		}
		c->kinds[k]++;
		/* Now and then a mutation: a byte flipped past the addresses, a tail cut. */
		if (!rl_rand_below(&rng, 8)) {
			unsigned int at = 12 + (unsigned int)rl_rand_below(&rng, f->len - 12);

			f->data[at] ^= (__u8)(1 + rl_rand_below(&rng, 255));
			c->mutated++;
		} else if (!rl_rand_below(&rng, 16)) {
			fr_cut(f,
			       ETH_HLEN + (unsigned int)rl_rand_below(&rng, f->len - ETH_HLEN + 1));
			c->mutated++;
		}
		/* Gaps: mostly tens of microseconds, some none, now and then a second idle. */
		switch (rl_rand_below(&rng, 32)) {
		case 0:
			now += 1000000000ULL;
			break;
		case 1:
		case 2:
			break;
		default:
			now += rl_rand_below(&rng, 400000);
		}
		c->r[i] = (struct pf_rec){
			.data = f->data, .caplen = f->len, .len = f->len, .ns = now
		};
	}
	c->n = n;
	return 0;
}

void corpus_free(struct corpus *c)
{
	free(c->f);
	free(c->r);
	memset(c, 0, sizeof(*c));
}
