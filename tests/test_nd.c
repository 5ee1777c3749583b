// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * IPv6 on one link, through BPF_PROG_TEST_RUN and through userspace keying:
 *
 *	nd_passes_untouched	neighbour discovery (ICMPv6 133-137, hop limit
 *				255) passes under any limit, counted in nd only
 *	nd_lookalikes_limited	other ICMPv6, ND with a lower hop limit, behind an
 *				extension header or cut before its type: limited
 *	nd_link_local_per_host	fe80::/10 sources are keyed /128, others by
 *				--prefix6, in the kernel
 *	nd_link_local_userspace	rl_key_mask(), rl_key_str() and rl_sim_packet()
 *				key them the same way
 */
#include <arpa/inet.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include "frames.h"
#include "harness.h"
#include "source.h"
#include "test.h"
#include "trace.h"

#define SEC_NS 1000000000ULL
#define T0     (1000 * SEC_NS)

static bool start(struct rl_prog *p, const char *const *opts)
{
	struct rl_config cfg;

	if (!rl_build_config(&cfg, opts, NULL) || !rl_prog_load(p, true, 1024))
		return false;
	if (!rl_prog_configure(p, 0, &cfg)) {
		rl_prog_close(p);
		return false;
	}
	return true;
}

static int run(struct rl_prog *p, const struct frame *f)
{
	return rl_prog_run(p, T0, f->data, f->len, 1);
}

/* An ICMPv6 frame, with one VLAN tag if @vlan. */
static void icmp6_frame(struct frame *f, const char *src, __u8 type, __u8 hops, bool vlan)
{
	fr_init(f);
	if (vlan) {
		fr_eth(f, ETH_P_8021Q);
		fr_vlan(f, 7, ETH_P_IPV6);
	} else {
		fr_eth(f, ETH_P_IPV6);
	}
	fr_icmp6(f, src, type, hops);
	fr_pad(f, FRAME_MIN);
}

static void udp6_frame(struct frame *f, const char *src)
{
	fr_init(f);
	fr_eth(f, ETH_P_IPV6);
	fr_ipv6(f, src, 0);
	fr_pad(f, FRAME_MIN);
}

static const char *const tight[] = { "--rate", "1", "--burst", "1", NULL };

TEST_FLAGS(nd_passes_untouched, RL_TEST_ROOT)
{
	static const char *const srcs[] = { "fe80::1", "2001:db8::1", "::" };
	struct rl_counters before, after;
	struct rl_prog p;
	struct frame f;
	char what[96];
	unsigned int n = 0;

	if (!start(&p, tight))
		return;
	if (!rl_prog_counters(&p, &before))
		goto out;
	for (__u8 type = 133; type <= 137; type++) {
		for (size_t s = 0; s < sizeof(srcs) / sizeof(srcs[0]); s++) {
			for (int vlan = 0; vlan < 2; vlan++) {
				snprintf(what, sizeof(what), "ND type %u from %s%s", type, srcs[s],
					 vlan ? ", VLAN" : "");
				icmp6_frame(&f, srcs[s], type, 255, vlan);
				if (!ASSERT_TRUE(!f.bad, what))
					goto out;
				/* Far over a limit of 1 packet: every one passes. */
				for (int i = 0; i < 5; i++, n++)
					ASSERT_EQ(run(&p, &f), XDP_PASS, what);
			}
		}
	}
	if (!rl_prog_counters(&p, &after))
		goto out;
	ASSERT_EQ(after.nd - before.nd, n, "counted in nd");
	ASSERT_EQ(after.passed - before.passed, n, "passed");
	ASSERT_EQ(after.ipv6 - before.ipv6, 0, "not counted as rate-limited IPv6");
	ASSERT_EQ(after.not_ip - before.not_ip, 0, "not counted as not IP");
	ASSERT_EQ(after.new_sources - before.new_sources, 0, "no source tracked");
out:
	rl_prog_close(&p);
}

TEST_FLAGS(nd_lookalikes_limited, RL_TEST_ROOT)
{
	struct rl_counters before, after;
	struct rl_prog p;
	struct frame f;
	unsigned int n = 0;

	if (!start(&p, (const char *const[]){ "--rate", "1", "--burst", "1", "--prefix6", "128",
					      NULL }))
		return;
	if (!rl_prog_counters(&p, &before))
		goto out;
#define LIMITED(what)                                                               \
	do {                                                                        \
		ASSERT_TRUE(!f.bad, what);                                          \
		ASSERT_EQ(run(&p, &f), XDP_PASS, what ": first, within the burst"); \
		ASSERT_EQ(run(&p, &f), XDP_DROP, what ": second, over the limit");  \
		n++;                                                                \
	} while (0)
	/* Echo request, and the types on either side of ND. */
	icmp6_frame(&f, "2001:db8::a", 128, 255, false);
	LIMITED("echo request");
	icmp6_frame(&f, "2001:db8::b", 132, 255, false);
	LIMITED("type 132");
	icmp6_frame(&f, "2001:db8::c", 138, 255, false);
	LIMITED("type 138");
	/* From off the link: hop limit below 255 (RFC 4861: not ND). */
	icmp6_frame(&f, "2001:db8::d", 135, 254, false);
	LIMITED("neighbour solicitation, hop limit 254");
	/* Behind a hop-by-hop header: not looked into. */
	icmp6_frame(&f, "2001:db8::e", 135, 255, false);
	f.data[ETH_HLEN + 6] = 0;
	LIMITED("neighbour solicitation behind a hop-by-hop header");
	/* Cut right after the IPv6 header: no type byte to read. */
	icmp6_frame(&f, "2001:db8::f", 135, 255, false);
	fr_cut(&f, ETH_HLEN + 40);
	LIMITED("ICMPv6 cut before its type");
#undef LIMITED
	if (!rl_prog_counters(&p, &after))
		goto out;
	ASSERT_EQ(after.nd - before.nd, 0, "none counted as ND");
	ASSERT_EQ(after.ipv6 - before.ipv6, 2 * n, "all rate limited as IPv6");
	ASSERT_EQ(after.limited - before.limited, n, "one of each limited");
out:
	rl_prog_close(&p);
}

/* Whether rl_state holds exactly @src (unmasked) under generation 1. */
static bool tracked_whole(struct rl_prog *p, const char *src)
{
	struct rl_state_key k;
	__u64 state;

	memset(&k, 0, sizeof(k));
	if (rl_key_parse(src, &k.src))
		return false;
	k.gen = 1;
	return rl_state_lookup(&p->maps, &k, &state) == 0;
}

TEST_FLAGS(nd_link_local_per_host, RL_TEST_ROOT)
{
	static const struct {
		const char *src;
		int verdict;
	} steps[] = {
		/* One flooding neighbour does not block the others on the link. */
		{ "fe80::1", XDP_PASS },
		{ "fe80::1", XDP_DROP },
		{ "fe80::2", XDP_PASS },
		{ "fe80::2", XDP_DROP },
		{ "fe80::1:2:3:4", XDP_PASS },
		/* The last of fe80::/10. */
		{ "febf::1", XDP_PASS },
		{ "febf::2", XDP_PASS },
		/* Just outside it: one /64, as --prefix6 says. */
		{ "fec0::1", XDP_PASS },
		{ "fec0::2", XDP_DROP },
		{ "fe7f::1", XDP_PASS },
		{ "fe7f::2", XDP_DROP },
		/* Global addresses keep their /64. */
		{ "2001:db8::1", XDP_PASS },
		{ "2001:db8::2", XDP_DROP },
	};
	struct rl_prog p;
	struct frame f;
	char what[96];

	if (!start(&p,
		   (const char *const[]){ "--rate", "1", "--burst", "1", "--prefix6", "64", NULL }))
		return;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		snprintf(what, sizeof(what), "step %zu: UDP from %s", i, steps[i].src);
		udp6_frame(&f, steps[i].src);
		if (!ASSERT_TRUE(!f.bad, what))
			break;
		ASSERT_EQ(run(&p, &f), steps[i].verdict, what);
	}
	ASSERT_TRUE(tracked_whole(&p, "fe80::1:2:3:4"), "link-local keyed by its full address");
	ASSERT_TRUE(!tracked_whole(&p, "2001:db8::1") && tracked_whole(&p, "2001:db8::"),
		    "global keyed by its /64");
	rl_prog_close(&p);
}

TEST(nd_link_local_userspace)
{
	struct rl_policy pol;
	struct rl_key k;
	struct rl_sim sim;
	char buf[RL_KEY_STRLEN], err[RL_ERRLEN];
	__u64 t = T0;

	ASSERT_OK(rl_key_parse("fe80::1:2:3:4", &k), "parse");
	rl_key_mask(&k, 24, 64);
	ASSERT_STREQ(rl_key_str(&k, 24, 64, buf, sizeof(buf)), "fe80::1:2:3:4", "link-local, /128");
	ASSERT_OK(rl_key_parse("2001:db8::1:2:3:4", &k), "parse");
	rl_key_mask(&k, 24, 64);
	ASSERT_STREQ(rl_key_str(&k, 24, 64, buf, sizeof(buf)), "2001:db8::/64", "global, /64");
	ASSERT_OK(rl_key_parse("fe80::1:2:3:4", &k), "parse");
	rl_key_mask(&k, 32, 0);
	ASSERT_STREQ(rl_key_str(&k, 32, 0, buf, sizeof(buf)), "fe80::1:2:3:4",
		     "link-local, /128 even with --prefix6 0");

	rl_policy_defaults(&pol);
	ASSERT_OK(rl_parse_rate("1", &pol.rate_num, &pol.rate_den, &pol.bytes, err, sizeof(err)),
		  "rate");
	pol.rate_set = true;
	pol.burst = 1;
	pol.burst_set = true;
	if (!ASSERT_OK(rl_sim_init(&sim, &pol, err, sizeof(err)), err))
		return;
	ASSERT_OK(rl_key_parse("fe80::1", &k), "parse");
	ASSERT_EQ(rl_sim_packet(&sim, &k, t, 64, NULL), 1, "fe80::1 first");
	ASSERT_OK(rl_key_parse("fe80::1", &k), "parse");
	ASSERT_EQ(rl_sim_packet(&sim, &k, t, 64, NULL), 0, "fe80::1 second");
	ASSERT_OK(rl_key_parse("fe80::2", &k), "parse");
	ASSERT_EQ(rl_sim_packet(&sim, &k, t, 64, NULL), 1, "fe80::2: a source of its own");
	ASSERT_EQ(sim.tab.count, 2, "two sources");
	rl_sim_free(&sim);
}
