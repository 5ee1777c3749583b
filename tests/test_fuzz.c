// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Differential fuzzing of the packet path: random and mutated frames (runts,
 * truncated IPv4/IPv6, bad IHL, IPv4 options, IPv6 extension headers, VLAN
 * and QinQ stacks, fragments, non-IP, ICMPv6 and neighbour discovery,
 * link-local sources, flipped bytes) with random sources and
 * times go through the XDP program (BPF_PROG_TEST_RUN, test clock) and
 * through a userspace model: a parser written here from the documented
 * contract, on top of the same rate core (rl_sim). Verdicts must match frame
 * by frame and the counters at every checkpoint; XDP_ABORTED never happens.
 * A mismatch prints a reproducer: the frame in hex, its time, the policy.
 *
 * Beside each policy runs its twin with --syn-cookies (TWIN_PORTS): every
 * frame that the SYN-cookie step would not act on must get the same verdict
 * and counters there, through the in-line answer that skips the step
 * (bpf/syncookie.h, syn_first()); frames it would act on run in neither.
 *
 * fuzz_short runs in make test; fuzz_long (make fuzz) runs 10 million frames.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include "harness.h"
#include "source.h"
#include "test.h"
#include "trace.h"

#define MAX_FRAME   256
#define CHECK_EVERY 4096

static unsigned long long rng_state;

static __u64 rnd(void)
{
	return rl_rand(&rng_state);
}

static __u32 below(__u32 n)
{
	return (__u32)(rnd() % n);
}

struct coverage {
	unsigned long frames, ipv4, ipv6, not_ip, malformed[RL_BAD__COUNT], vlan[3];
	unsigned long options, fragments, ext_headers, pass, drop, would_drop, new_sources;
	unsigned long nd, link_local, tcp_twin, syn_skipped;
};

/* The twin's --syn-cookies: random TCP ports hit them now and then. */
#define TWIN_PORTS     "1-1024,40000-40100"
#define TWIN_PORTED(p) (((p) >= 1 && (p) <= 1024) || ((p) >= 40000 && (p) <= 40100))

/* What the model expects of one frame. */
struct expect {
	int verdict;
	struct rl_counters delta;
};

struct model {
	struct rl_sim sim;
	struct rl_config cfg;
	struct rl_counters cnt;
};

static void put16(__u8 *p, __u16 v)
{
	p[0] = (__u8)(v >> 8);
	p[1] = (__u8)v;
}

static __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/* A source from a pool, so that sources repeat and buckets fill. */
static void pick_source(__u8 *dst, bool v6)
{
	__u32 n = below(64);

	if (!v6) {
		dst[0] = 198;
		dst[1] = 18 + (__u8)(n >> 5);
		dst[2] = (__u8)(n & 3);
		dst[3] = (__u8)(n * 7);
		if (!below(16)) /* now and then anything at all */
			for (int i = 0; i < 4; i++)
				dst[i] = (__u8)rnd();
		return;
	}
	memset(dst, 0, 16);
	dst[0] = 0x20;
	dst[1] = 0x01;
	dst[2] = 0x0d;
	dst[3] = 0xb8;
	/* Link-local now and then (keyed /128), around both edges of fe80::/10. */
	if (!below(4)) {
		static const __u8 ll[][2] = {
			{ 0xfe, 0x80 }, { 0xfe, 0xbf }, { 0xfe, 0xc0 }, { 0xfe, 0x7f }
		};

		memcpy(dst, ll[below(8) ? 0 : below(4)], 2);
		dst[3] = 0;
	}
	dst[7] = (__u8)(n & 7);
	dst[15] = (__u8)n;
	if (!below(16))
		for (int i = 0; i < 16; i++)
			dst[i] = (__u8)rnd();
}

/* Build a frame; returns its length. */
static __u32 gen_frame(__u8 *f, struct coverage *cov)
{
	static const __u16 outer[] = { ETH_P_IP, ETH_P_IPV6, 0x8100, 0x88a8, 0x0806, 0x88cc };
	__u32 off = 14, len, ntags = below(8) < 5 ? 0 : below(4);
	__u16 proto;

	for (int i = 0; i < 12; i++)
		f[i] = (__u8)rnd();
	proto = below(10) ? (__u16)(below(2) ? ETH_P_IP : ETH_P_IPV6) : outer[below(6)];
	if (!below(20))
		proto = (__u16)rnd();
	/* VLAN tags: 0 to 3 (the third is malformed). */
	for (__u32 t = 0; t < ntags; t++) {
		put16(f + off - 2, t ? 0x8100 : (below(2) ? 0x88a8 : 0x8100));
		put16(f + off, (__u16)below(4096));
		off += 4;
	}
	put16(f + off - 2, proto);
	if (proto == ETH_P_IP) {
		__u32 ihl = below(10) ? 5 + (below(4) ? 0 : below(11)) : below(16);

		f[off] = (__u8)((below(20) ? 4 : below(16)) << 4 | ihl);
		f[off + 1] = 0;
		put16(f + off + 2, (__u16)(20 + below(200)));
		put16(f + off + 4, (__u16)rnd());
		/* Fragments: MF and offsets now and then. */
		put16(f + off + 6, below(4) ? 0 : (__u16)(0x2000 | below(0x1fff)));
		f[off + 8] = 64;
		f[off + 9] = (__u8)(below(2) ? 17 : 6);
		put16(f + off + 10, (__u16)rnd());
		pick_source(f + off + 12, false);
		for (int i = 16; i < 20; i++)
			f[off + i] = (__u8)rnd();
		for (__u32 i = 20; i < ihl * 4; i++)
			f[off + i] = (__u8)rnd();
		len = off + (ihl > 5 ? ihl * 4 : 20) + below(64);
		cov->options += ihl > 5;
		cov->fragments += get16(f + off + 6) != 0;
	} else if (proto == ETH_P_IPV6) {
		/* Extension headers are not parsed; the source is in the fixed header. */
		static const __u8 nexthdr[] = { 17, 6, 0, 43, 44, 60, 59, 58, 58 };

		f[off] = (__u8)((below(20) ? 6 : below(16)) << 4);
		f[off + 1] = f[off + 2] = f[off + 3] = 0;
		put16(f + off + 4, (__u16)below(200));
		f[off + 6] = nexthdr[below(9)];
		/* ND needs hop limit 255; ICMPv6 gets it mostly. */
		f[off + 7] = f[off + 6] == 58 && below(4) ? 255 : 64;
		pick_source(f + off + 8, true);
		for (int i = 24; i < 40; i++)
			f[off + i] = (__u8)rnd();
		cov->ext_headers +=
			f[off + 6] == 0 || f[off + 6] == 43 || f[off + 6] == 44 || f[off + 6] == 60;
		len = off + 40 + below(64);
		for (__u32 i = off + 40; i < len; i++)
			f[i] = (__u8)rnd();
		/* ICMPv6 types around neighbour discovery (133-137). */
		if (f[off + 6] == 58)
			f[off + 40] = (__u8)(130 + below(10));
	} else {
		len = off + below(64);
		for (__u32 i = off; i < len; i++)
			f[i] = (__u8)rnd();
	}
	if (len < 14)
		len = 14;
	/* Truncate anywhere (BPF_PROG_TEST_RUN takes no less than an Ethernet header). */
	if (!below(6))
		len = 14 + below(len - 13);
	/* Flip a few bytes. */
	if (!below(8))
		for (__u32 n = below(4) + 1; n; n--)
			f[below(len)] ^= (__u8)(1 + below(255));
	if (len > MAX_FRAME)
		len = MAX_FRAME;
	cov->vlan[ntags == 0 ? 0 : ntags < 3 ? 1 : 2]++;
	return len;
}

/* The model's parser: the contract of bpf/parsing.h, written again. */
static int model_parse(const __u8 *f, __u32 len, struct rl_key *key, __u32 *bad)
{
	__u32 off = 14;
	__u16 proto;

	if (len < 14) {
		*bad = RL_BAD_ETH;
		return -1;
	}
	proto = get16(f + 12);
	for (int i = 0; i < 3; i++) {
		if (proto != 0x8100 && proto != 0x88a8)
			break;
		if (i == 2 || off + 4 > len) {
			*bad = RL_BAD_VLAN;
			return -1;
		}
		proto = get16(f + off + 2);
		off += 4;
	}
	memset(key, 0, sizeof(*key));
	if (proto == ETH_P_IP) {
		if (off + 20 > len) {
			*bad = RL_BAD_IPV4;
			return -1;
		}
		if (f[off] >> 4 != 4 || (f[off] & 15) < 5) {
			*bad = RL_BAD_IHL;
			return -1;
		}
		if (off + (f[off] & 15u) * 4 > len) {
			*bad = RL_BAD_IPV4;
			return -1;
		}
		key->addr[2] = htonl(0xffff);
		memcpy(&key->addr[3], f + off + 12, 4);
		return 4;
	}
	if (proto == ETH_P_IPV6) {
		if (off + 40 > len || f[off] >> 4 != 6) {
			*bad = RL_BAD_IPV6;
			return -1;
		}
		memcpy(key->addr, f + off + 8, 16);
		/* Neighbour discovery: ICMPv6 right after the header, hop limit 255. */
		if (f[off + 6] == 58 && f[off + 7] == 255 && off + 41 <= len &&
		    f[off + 40] >= 133 && f[off + 40] <= 137)
			return 7;
		return 6;
	}
	return 0;
}

static int model_frame(struct model *m, const __u8 *f, __u32 len, __u64 now, struct coverage *cov)
{
	struct rl_counters *c = &m->cnt;
	struct rl_key key;
	struct rl_src *src;
	__u32 bad = 0;
	__u64 before;
	int fam = model_parse(f, len, &key, &bad), verdict = XDP_PASS, r;

	c->rx_packets++;
	c->rx_bytes += len;
	if (fam < 0) {
		c->malformed[bad]++;
		cov->malformed[bad]++;
		if (m->cfg.malformed_drop)
			verdict = XDP_DROP;
	} else if (fam == 0) {
		c->not_ip++;
		cov->not_ip++;
	} else if (fam == 7) {
		c->nd++;
		cov->nd++;
	} else {
		if (fam == 4) {
			c->ipv4++;
			cov->ipv4++;
		} else {
			c->ipv6++;
			cov->ipv6++;
			cov->link_local += rl_key_is_ll(&key);
		}
		before = m->sim.tab.count;
		r = rl_sim_packet(&m->sim, &key, now, len, &src);
		if (m->sim.tab.count != before) {
			c->new_sources++;
			cov->new_sources++;
		}
		if (r == 0 && m->cfg.action == RL_ACTION_DRY_RUN) {
			c->would_drop++;
			c->would_drop_bytes += len;
		} else if (r == 0) {
			c->limited++;
			verdict = XDP_DROP;
		}
	}
	if (verdict == XDP_DROP) {
		c->dropped++;
		c->dropped_bytes += len;
	} else {
		c->passed++;
		c->passed_bytes += len;
	}
	return verdict;
}

static void hexdump(const __u8 *f, __u32 len)
{
	fprintf(stderr, "    frame (%u bytes):", len);
	for (__u32 i = 0; i < len; i++)
		fprintf(stderr, "%s%02x", i % 32 ? "" : "\n      ", f[i]);
	fputc('\n', stderr);
}

/*
 * Would the SYN-cookie step act on frame @f (@len bytes)? A whole TCP
 * header (doff 5 or more) to one of TWIN_PORTS, of IPv4 that is not a
 * fragment or of IPv6 without an extension header, behind at most two VLAN
 * tags: the contract of rl_syn_step(), written again. It answers or drops
 * such a frame where the policy alone counts it against its source. Sets
 * *@tcp for any TCP header the twin looks past.
 */
static bool syn_acts(const __u8 *f, __u32 len, bool *tcp)
{
	__u32 off = 14, l4;
	__u16 proto;

	*tcp = false;
	if (len < 14)
		return false;
	proto = get16(f + 12);
	for (int i = 0; i < 2 && (proto == 0x8100 || proto == 0x88a8); i++) {
		if (off + 4 > len)
			return false;
		proto = get16(f + off + 2);
		off += 4;
	}
	if (proto == ETH_P_IP) {
		if (off + 20 > len || f[off] >> 4 != 4 || (f[off] & 15) < 5 || f[off + 9] != 6 ||
		    (get16(f + off + 6) & 0x3fff))
			return false;
		l4 = off + (f[off] & 15u) * 4;
	} else if (proto == ETH_P_IPV6) {
		if (off + 40 > len || f[off] >> 4 != 6 || f[off + 6] != 6)
			return false;
		l4 = off + 40;
	} else {
		return false;
	}
	if (l4 + 20 > len || f[l4 + 12] >> 4 < 5)
		return false;
	*tcp = true;
	return TWIN_PORTED(get16(f + l4 + 2));
}

/* @pol (NULL-terminated) with --syn-cookies TWIN_PORTS after it, in @out (of @n). */
static void twin_opts(const char *const *pol, const char **out, size_t n)
{
	size_t i = 0;

	while (pol[i] && i + 3 < n) {
		out[i] = pol[i];
		i++;
	}
	out[i++] = "--syn-cookies";
	out[i++] = TWIN_PORTS;
	out[i] = NULL;
}

static const char *const *const policies[] = {
	(const char *const[]){ "--rate", "1000", "--burst", "20", NULL },
	(const char *const[]){ "--algo", "gcra", "--rate", "1mbit", "--burst", "3000", "--prefix4",
			       "24", NULL },
	(const char *const[]){ "--algo", "fixed-window", "--rate", "500", "--window", "10ms",
			       "--malformed", "pass", NULL },
	(const char *const[]){ "--algo", "sliding-window", "--rate", "2000", "--window", "5ms",
			       "--prefix6", "48", NULL },
	(const char *const[]){ "--rate", "3", "--burst", "2", "--action", "dry-run", "--prefix4",
			       "16", "--prefix6", "32", NULL },
	(const char *const[]){ "--algo", "gcra", "--rate", "12345678", "--burst", "5", NULL },
};

static bool counters_equal(const struct rl_counters *a, const struct rl_counters *b)
{
	/* cas_* and the like never move in a single-threaded run: compare everything. */
	return !memcmp(a, b, sizeof(*a));
}

static void print_counters_diff(const struct rl_counters *k, const struct rl_counters *m)
{
	const __u64 *a = (const __u64 *)k, *b = (const __u64 *)m;

	for (size_t i = 0; i < sizeof(*k) / sizeof(__u64); i++)
		if (a[i] != b[i])
			fprintf(stderr, "    counter word %zu: kernel %llu, model %llu\n", i,
				(unsigned long long)a[i], (unsigned long long)b[i]);
}

static void fuzz(unsigned long frames)
{
	struct coverage cov = {};
	const size_t npol = sizeof(policies) / sizeof(policies[0]);
	unsigned long per = (frames + npol - 1) / npol;
	struct timespec t0, t1;
	__u8 f[MAX_FRAME];

	rng_state = rl_test_seed() * 0x9e3779b97f4a7c15ULL | 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
		struct rl_counters kc, tc;
		struct rl_prog prog, twin;
		struct rl_config tcfg;
		const char *topts[24];
		struct model m = {};
		struct rl_policy pol;
		struct rl_opts o;
		char err[RL_ERRLEN];
		__u64 now = 1000000000ULL + rnd() % (1ULL << 40);

		if (!rl_build_config(&m.cfg, policies[p], NULL))
			return;
		rl_config_policy(&m.cfg, &pol, &o);
		if (!ASSERT_OK(rl_sim_init(&m.sim, &pol, err, sizeof(err)), err))
			return;
		twin_opts(policies[p], topts, sizeof(topts) / sizeof(topts[0]));
		if (!rl_build_config(&tcfg, topts, NULL)) {
			rl_sim_free(&m.sim);
			return;
		}
		if (!rl_prog_load(&prog, true, 1 << 20) || !rl_prog_configure(&prog, 0, &m.cfg)) {
			rl_sim_free(&m.sim);
			return;
		}
		if (!rl_prog_load(&twin, true, 1 << 20)) {
			rl_prog_close(&prog);
			rl_sim_free(&m.sim);
			return;
		}
		if (!rl_prog_configure(&twin, 0, &tcfg))
			goto next;
		for (unsigned long i = 0; i < per; i++) {
			__u32 len = gen_frame(f, &cov);
			int want, got, tgot;
			bool tcp;

			/* Mostly small steps, sometimes none, now and then a long idle. */
			switch (below(16)) {
			case 0:
				break;
			case 1:
				now += rnd() % (10ULL * 1000000000ULL);
				break;
			default:
				now += rnd() % 2000000;
			}
			if (syn_acts(f, len, &tcp)) {
				cov.syn_skipped++;
				continue;
			}
			cov.tcp_twin += tcp;
			want = model_frame(&m, f, len, now, &cov);
			got = rl_prog_run(&prog, now, f, len, 1);
			tgot = rl_prog_run(&twin, now, f, len, 1);
			cov.frames++;
			cov.pass += got == XDP_PASS;
			cov.drop += got == XDP_DROP;
			if (got != want || tgot != got) {
				rl_test_fail(
					__FILE__, __LINE__,
					"frame %lu of policy %zu at %llu ns: kernel %d, model %d, kernel with --syn-cookies %d",
					i, p, (unsigned long long)now, got, want, tgot);
				hexdump(f, len);
				goto next;
			}
			if ((i + 1) % CHECK_EVERY == 0 || i + 1 == per) {
				if (!rl_prog_counters(&prog, &kc) || !rl_prog_counters(&twin, &tc))
					goto next;
				if (!counters_equal(&kc, &tc)) {
					rl_test_fail(
						__FILE__, __LINE__,
						"counters with --syn-cookies differ after frame %lu of policy %zu",
						i, p);
					print_counters_diff(&tc, &kc);
					goto next;
				}
				if (!counters_equal(&kc, &m.cnt)) {
					rl_test_fail(
						__FILE__, __LINE__,
						"counters differ after frame %lu of policy %zu (last frame at %llu ns)",
						i, p, (unsigned long long)now);
					print_counters_diff(&kc, &m.cnt);
					hexdump(f, len);
					goto next;
				}
			}
		}
next:
		cov.would_drop += m.cnt.would_drop;
		rl_prog_close(&twin);
		rl_prog_close(&prog);
		rl_sim_free(&m.sim);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("    %lu frames in %.1f s: ipv4 %lu (options %lu, fragments %lu), ipv6 %lu (ext headers %lu),\n"
	       "    not ip %lu, malformed eth/vlan/ipv4/ihl/ipv6 %lu/%lu/%lu/%lu/%lu (BPF_PROG_TEST_RUN takes no runt under 14 bytes),\n"
	       "    vlan tags 0/1-2/3 %lu/%lu/%lu, pass %lu, drop %lu, would-drop %lu, new sources %lu,\n"
	       "    neighbour discovery %lu, link-local ipv6 %lu,\n"
	       "    with --syn-cookies: tcp %lu the same, %lu for its step not run\n",
	       cov.frames, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       cov.ipv4, cov.options, cov.fragments, cov.ipv6, cov.ext_headers, cov.not_ip,
	       cov.malformed[RL_BAD_ETH], cov.malformed[RL_BAD_VLAN], cov.malformed[RL_BAD_IPV4],
	       cov.malformed[RL_BAD_IHL], cov.malformed[RL_BAD_IPV6], cov.vlan[0], cov.vlan[1],
	       cov.vlan[2], cov.pass, cov.drop, cov.would_drop, cov.new_sources, cov.nd,
	       cov.link_local, cov.tcp_twin, cov.syn_skipped);
	/* The generator must reach what it is there to reach. */
	ASSERT_TRUE(cov.nd > 0 && cov.link_local > 0, "neighbour discovery and link-local covered");
	ASSERT_TRUE(cov.tcp_twin > 0 && cov.syn_skipped > 0,
		    "tcp past --syn-cookies and frames for its step covered");
}

TEST_FLAGS(fuzz_short, RL_TEST_ROOT)
{
	fuzz(300000);
}

TEST_FLAGS(fuzz_long, RL_TEST_ROOT | RL_TEST_SLOW)
{
	fuzz(10000000);
}
