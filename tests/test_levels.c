// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The levels above the source (include/rl_agg.h, bpf/aggregate.h,
 * bpf/admission.h) through BPF_PROG_TEST_RUN on the test clock.
 *
 *	lvl_prefix_flood	a /24 flooded from spoofed sources at 50x its
 *				aggregate's rate: it passes exactly burst + r t,
 *				a source of another /24 all it sends, refused
 *				sources are never inserted
 *	lvl_source_first	a source over its own limit takes nothing of its
 *				aggregate: the others of its /24 keep their share
 *	lvl_iface		one limit for IPv4 and IPv6 sources together
 *	lvl_vs_sim		random traffic through every level: the kernel
 *				and simulate's model agree packet for packet
 *	lvl_set_carries		set changes the aggregate's rate: an aggregate in
 *				debt stays in debt, none is handed a fresh burst
 *	lvl_config_file		the levels' keys in a configuration file, a rule's
 *				too, and an error at its line
 *	lvl_rule		a limit rule with an aggregate, against rl_rsim
 *	lvl_admit		the admission cap: a spoofed flood gets one
 *				source's rate and no state, a source seen again
 *				gets its own
 *	lvl_admit6		the same with IPv6 sources, one per /64, which
 *				take the main program's straight line (rl_sets6)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "apply.h"
#include "frames.h"
#include "harness.h"
#include "level.h"
#include "opts.h"
#include "rulemaps.h"
#include "rules.h"
#include "source.h"
#include "test.h"
#include "trace.h"

#define MSEC 1000000ULL
#define SEC  1000000000ULL

struct lv {
	struct rl_prog p;
	struct rl_config cfg;
	struct frame f4, f6;
	bool loaded;
};

static bool lv_start(struct lv *l, const char *const *opts, __u32 max_sources)
{
	memset(l, 0, sizeof(*l));
	if (!rl_prog_load(&l->p, true, max_sources))
		return false;
	l->loaded = true;
	if (!rl_build_config(&l->cfg, opts, NULL) || !rl_prog_configure(&l->p, 0, &l->cfg))
		return false;
	fr_init(&l->f4);
	fr_eth(&l->f4, ETH_P_IP);
	fr_ipv4(&l->f4, "198.18.0.1", NULL);
	fr_pad(&l->f4, FRAME_MIN);
	fr_init(&l->f6);
	fr_eth(&l->f6, ETH_P_IPV6);
	fr_ipv6(&l->f6, "2001:db8::1", 0);
	fr_pad(&l->f6, 80);
	return ASSERT_TRUE(!l->f4.bad && !l->f6.bad, "frames built");
}

static void lv_stop(struct lv *l)
{
	if (l->loaded)
		rl_prog_close(&l->p);
}

/* One frame from @src (an address, IPv4 or IPv6) at @now: 1 passed, 0 dropped, -1 error. */
static int send_from(struct lv *l, const struct rl_key *src, __u64 now)
{
	struct frame *f = rl_key_is_v4(src) ? &l->f4 : &l->f6;
	int v;

	/* The source address only: the program checks no checksum. */
	if (f == &l->f4)
		memcpy(f->data + f->l3 + 12, &src->addr[3], 4);
	else
		memcpy(f->data + f->l3 + 8, src->addr, 16);
	v = rl_prog_run(&l->p, now, f->data, f->len, 1);
	if (v != XDP_PASS && v != XDP_DROP) {
		rl_test_fail(__FILE__, __LINE__, "BPF_PROG_TEST_RUN: %d", v);
		return -1;
	}
	return v == XDP_PASS;
}

static void key4(struct rl_key *k, __u32 addr)
{
	memset(k, 0, sizeof(*k));
	k->addr[2] = htonl(0xffff);
	k->addr[3] = htonl(addr);
}

/* 2001:db8:HHHH:LLLL::1, @net the /64's 32 bits after 2001:db8::/32. */
static void key6(struct rl_key *k, __u32 net)
{
	memset(k, 0, sizeof(*k));
	k->addr[0] = htonl(0x20010db8U);
	k->addr[1] = htonl(net);
	k->addr[3] = htonl(1);
}

/* What the algorithm passes for one bucket of @p fed back to back at @gap from @t0. */
static unsigned long model(const struct rl_params *p, __u64 t0, __u64 gap, unsigned long n)
{
	__u64 st = rl_initial_state(p, t0), next;
	unsigned long passed = 0;

	for (unsigned long i = 0; i < n; i++)
		if (rl_step(p, st, t0 + i * gap, 1, &next)) {
			st = next;
			passed++;
		}
	return passed;
}

/*
 * One /24 (198.18.1.0/24) flooded for 400 ms from random sources inside
 * it at 50x its aggregate's rate (one packet every 20 us against 1000/s),
 * while a source of another /24 (198.18.2.1) sends at its own rate (100/s,
 * the per-source limit). The aggregate passes exactly what one bucket of
 * its rate and burst passes; the other source everything; each spoofed
 * source that the aggregate refused is never inserted.
 */
TEST_FLAGS(lvl_prefix_flood, RL_TEST_ROOT)
{
	const char *opts[] = { "--rate",
			       "100",
			       "--burst",
			       "100",
			       "--aggregate4",
			       "24",
			       "--aggregate-rate",
			       "1000",
			       "--aggregate-burst",
			       "50",
			       NULL };
	const __u64 t0 = 10 * SEC, gap = 20000, span = 400 * MSEC;
	unsigned long flood = 0, flood_passed = 0, legit = 0, legit_passed = 0, expect;
	unsigned int seed = (unsigned int)rl_test_seed();
	struct rl_counters c;
	struct rl_key k;
	struct lv l;
	int v;

	if (!lv_start(&l, opts, 4096))
		goto out;
	for (__u64 t = t0; t < t0 + span; t += gap) {
		key4(&k, 0xc6120100U | ((__u32)rand_r(&seed) & 0xff));
		v = send_from(&l, &k, t);
		if (v < 0)
			goto out;
		flood++;
		flood_passed += (unsigned long)v;
		if ((t - t0) % (10 * MSEC))
			continue;
		key4(&k, 0xc6120201U);
		v = send_from(&l, &k, t + 1);
		if (v < 0)
			goto out;
		legit++;
		legit_passed += (unsigned long)v;
	}
	if (!rl_prog_counters(&l.p, &c))
		goto out;
	expect = model(&RL_LVL(&l.cfg, RL_LVL_PREFIX)->params, t0, gap, flood);
	printf("    flood %lu packets at 50x 1000/s: passed %lu (one bucket alone: %lu); "
	       "legit: sent %lu, passed %lu; agg_limited %llu, new sources %llu\n",
	       flood, flood_passed, expect, legit, legit_passed, (unsigned long long)c.agg_limited,
	       (unsigned long long)c.new_sources);
	ASSERT_EQ(flood_passed, expect, "the aggregate passes exactly burst + r t");
	ASSERT_EQ(legit_passed, legit, "the source of another /24 keeps its full rate");
	ASSERT_EQ(c.agg_limited, flood - flood_passed, "each refusal counted at its level");
	ASSERT_EQ(c.limited, c.agg_limited, "and as limited");
	/* At most 256 spoofed sources and the legitimate one: only those that passed. */
	ASSERT_LE(c.new_sources, 257, "refused sources are never inserted");
	ASSERT_EQ(c.agg_overdraft, 0, "one CPU: no race, no overdraft");
out:
	lv_stop(&l);
}

/*
 * The charging order: a source far over its own limit (10/s, sending
 * 1000/s) inside a /24 of aggregate 200/s, and another of that /24 at
 * 150/s. The first source's refused packets take nothing of the aggregate,
 * so the second, under its own limit and with the aggregate's credit, loses
 * nothing.
 */
TEST_FLAGS(lvl_source_first, RL_TEST_ROOT)
{
	const char *opts[] = { "--rate",	   "160", "--burst", "5", "--aggregate4", "24",
			       "--aggregate-rate", "200", NULL };
	const __u64 t0 = 10 * SEC;
	unsigned long heavy = 0, heavy_passed = 0, calm = 0, calm_passed = 0;
	struct rl_counters c;
	struct rl_key hk, ck;
	struct lv l;
	int v;

	if (!lv_start(&l, opts, 4096))
		goto out;
	key4(&hk, 0xc6120105U);
	key4(&ck, 0xc6120106U);
	/* 2 s: the heavy source every 1 ms (1000/s against 160), the calm one every 8 ms (125/s). */
	for (__u64 i = 0; i < 2000; i++) {
		v = send_from(&l, &hk, t0 + i * MSEC);
		if (v < 0)
			goto out;
		heavy++;
		heavy_passed += (unsigned long)v;
		if (i % 8)
			continue;
		v = send_from(&l, &ck, t0 + i * MSEC + 1);
		if (v < 0)
			goto out;
		calm++;
		calm_passed += (unsigned long)v;
	}
	if (!rl_prog_counters(&l.p, &c))
		goto out;
	printf("    heavy: sent %lu, passed %lu; calm: sent %lu, passed %lu; agg_limited %llu\n",
	       heavy, heavy_passed, calm, calm_passed, (unsigned long long)c.agg_limited);
	ASSERT_EQ(calm_passed, calm, "the calm source loses nothing to its neighbour's drops");
	ASSERT_EQ(heavy_passed, model(&l.cfg.params, t0, MSEC, heavy),
		  "the heavy one passes what its own bucket passes");
	ASSERT_EQ(c.agg_limited, 0, "the aggregate never refused: 160 + 125 x ... within 200");
out:
	lv_stop(&l);
}

/* --iface-rate: IPv4 and IPv6 sources of their own limits share one limit. */
TEST_FLAGS(lvl_iface, RL_TEST_ROOT)
{
	const char *opts[] = {
		"--rate", "1000", "--iface-rate", "300", "--iface-burst", "30", NULL
	};
	const __u64 t0 = 10 * SEC, gap = MSEC;
	unsigned long sent = 0, passed = 0, expect;
	struct rl_counters c;
	struct rl_key k[4];
	struct lv l;
	int v;

	if (!lv_start(&l, opts, 4096))
		goto out;
	key4(&k[0], 0xc6120101U);
	key4(&k[1], 0xc6130101U);
	if (!ASSERT_OK(rl_key_parse("2001:db8:1::1", &k[2]), "v6") ||
	    !ASSERT_OK(rl_key_parse("2001:db8:2::1", &k[3]), "v6"))
		goto out;
	/* Four sources in turn, one packet per ms: 1000/s against 300/s. */
	for (__u64 i = 0; i < 2000; i++) {
		v = send_from(&l, &k[i % 4], t0 + i * gap);
		if (v < 0)
			goto out;
		sent++;
		passed += (unsigned long)v;
	}
	if (!rl_prog_counters(&l.p, &c))
		goto out;
	expect = model(&RL_LVL(&l.cfg, RL_LVL_IFACE)->params, t0, gap, sent);
	printf("    4 sources, 2 families, 1000/s against 300/s: passed %lu of %lu (one bucket: %lu)\n",
	       passed, sent, expect);
	ASSERT_EQ(passed, expect, "the interface passes exactly burst + r t");
	ASSERT_EQ(c.iface_limited, sent - passed, "refusals counted at the interface's level");
out:
	lv_stop(&l);
}

/* Random traffic through every level, kernel and model side by side. */
static void vs_sim(const char *name, const char *const *opts, unsigned int n, bool admission)
{
	static const char *const pool[] = {
		"198.18.1.1",	     "198.18.1.2",	"198.18.1.3",	 "198.18.1.200",
		"198.18.2.1",	     "198.18.2.77",	"198.19.0.1",	 "2001:db8:1::1",
		"2001:db8:1:0:1::1", "2001:db8:1:2::1", "2001:db8:2::5", "fe80::1",
	};
	unsigned int seed = (unsigned int)rl_test_seed() ^ n;
	struct rl_counters c;
	struct rl_policy pol;
	struct rl_opts o;
	struct rl_sim sim;
	char err[RL_ERRLEN];
	__u64 t = 10 * SEC;
	struct lv l;

	memset(&sim, 0, sizeof(sim));
	if (!ASSERT_OK(rl_policy_parse(&pol, &o, opts, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_sim_init(&sim, &pol, err, sizeof(err)), err) || !lv_start(&l, opts, 4096))
		goto out;
	for (unsigned int i = 0; i < n; i++) {
		struct rl_key k, mk;
		int kv, sv;

		if (!ASSERT_OK(rl_key_parse(pool[(unsigned int)rand_r(&seed) % 12], &k), "key"))
			goto out;
		t += (__u64)rand_r(&seed) % (2 * MSEC);
		mk = k;
		kv = send_from(&l, &k, t);
		sv = rl_sim_packet(&sim, &mk, t, rl_key_is_v4(&k) ? l.f4.len : l.f6.len, NULL);
		if (kv < 0 || sv < 0 || kv != sv) {
			rl_test_fail(
				__FILE__, __LINE__,
				"%s (RL_SEED=%llu): packet %u at %llu ns: kernel %d, simulate %d",
				name, rl_test_seed(), i, (unsigned long long)t, kv, sv);
			goto out;
		}
	}
	if (!rl_prog_counters(&l.p, &c))
		goto out;
	printf("    %s: %u packets, passed %llu; refused by aggregate %llu, iface %llu, new %llu\n",
	       name, n, (unsigned long long)sim.passed,
	       (unsigned long long)sim.ls.limited[RL_LVL_PREFIX],
	       (unsigned long long)sim.ls.limited[RL_LVL_IFACE],
	       (unsigned long long)sim.ls.limited[RL_LVL_NEW]);
	ASSERT_EQ(c.passed, sim.passed, name);
	ASSERT_EQ(c.agg_limited, sim.ls.limited[RL_LVL_PREFIX], name);
	ASSERT_EQ(c.iface_limited, sim.ls.limited[RL_LVL_IFACE], name);
	ASSERT_EQ(c.new_limited, sim.ls.limited[RL_LVL_NEW], name);
	ASSERT_EQ(c.new_sources, sim.new_sources, name);
	ASSERT_EQ(c.unadmitted, sim.ls.unadmitted, name);
	ASSERT_EQ(c.admitted_seen, sim.ls.admitted_seen, name);
	/* Every level must have decided something, or the comparison proves little. */
	if (admission)
		ASSERT_TRUE(sim.ls.unadmitted && sim.ls.admitted_seen, name);
	else
		ASSERT_TRUE(sim.ls.limited[RL_LVL_PREFIX] && sim.ls.limited[RL_LVL_IFACE], name);
out:
	rl_sim_free(&sim);
	lv_stop(&l);
}

TEST_FLAGS(lvl_vs_sim, RL_TEST_ROOT)
{
	/* About 1000 packets a second over 12 sources, 5 of them in 198.18.1.0/24. */
	vs_sim("token-bucket",
	       (const char *const[]){ "--rate", "100", "--burst", "8", "--aggregate4", "24",
				      "--aggregate6", "48", "--aggregate-rate", "150",
				      "--aggregate-burst", "4", "--iface-rate", "500",
				      "--iface-burst", "10", NULL },
	       1500, false);
	vs_sim("gcra bytes",
	       (const char *const[]){ "--algo", "gcra", "--rate", "8kbyte", "--burst", "3000",
				      "--aggregate4", "16", "--aggregate6", "32",
				      "--aggregate-rate", "14kbyte", "--aggregate-burst", "4000",
				      "--iface-rate", "25kbyte", NULL },
	       1500, false);
	vs_sim("sliding-window",
	       (const char *const[]){ "--algo", "sliding-window", "--rate", "100", "--window",
				      "100ms", "--aggregate4", "24", "--aggregate6", "48",
				      "--aggregate-rate", "200", "--iface-rate", "700", NULL },
	       1500, false);
	vs_sim("admission",
	       (const char *const[]){ "--rate", "100", "--burst", "8", "--aggregate4", "24",
				      "--aggregate6", "48", "--aggregate-rate", "250",
				      "--iface-rate", "700", "--admit-rate", "2", "--admit-burst",
				      "2", NULL },
	       1500, true);
}

/* Add rule "@s" to @set. */
static bool rule_add(struct rl_ruleset *set, const char *s)
{
	return rl_test_rule_add(set, s, NULL);
}

/*
 * A limit rule with an aggregate and a limit of its own as a whole, beside
 * the default policy: the kernel and rl_rsim agree packet for packet, and
 * the rule's refusals are counted at their levels.
 */
TEST_FLAGS(lvl_rule, RL_TEST_ROOT)
{
	const char *def[] = { "--rate", "1000", NULL };
	struct rl_rules_cfg *cfg = NULL, *old = NULL;
	unsigned int seed = (unsigned int)rl_test_seed();
	bool has_set = false, has_sim = false;
	char err[RL_ERRLEN] = "";
	struct rl_policy pol;
	struct rl_ruleset set;
	struct rl_rsim sim;
	struct rl_opts o;
	__u64 t = 10 * SEC;
	struct lv l;

	cfg = calloc(1, sizeof(*cfg));
	old = calloc(1, sizeof(*old));
	if (!ASSERT_TRUE(cfg && old, "memory") || !lv_start(&l, def, 4096))
		goto out;
	rl_config_policy(&l.cfg, &pol, &o);
	if (!ASSERT_OK(rl_ruleset_init(&set, &pol, &o, err, sizeof(err)), err))
		goto out;
	has_set = true;
	if (!rule_add(&set, "agg --src 198.18.0.0/15 --rate 50 --burst 5 --aggregate4 24 "
			    "--aggregate-rate 100 --aggregate-burst 10 --iface-rate 320 "
			    "--iface-burst 20 --block 50ms"))
		goto out;
	if (!ASSERT_OK(rl_rules_read(&l.p.maps, old), "read rules") ||
	    !ASSERT_OK(rl_rules_compile(&set, old, cfg, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_rules_fill(&l.p.maps, &set, cfg, old, NULL, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_rules_commit(&l.p.maps, cfg, err, sizeof(err)), err) ||
	    !rl_prog_configure(&l.p, 0, &l.cfg) || !ASSERT_OK(rl_rsim_init(&sim, &set), "rsim"))
		goto out;
	has_sim = true;
	for (unsigned int i = 0; i < 3000; i++) {
		/* Sources of three /24s of the rule's /15, and one outside it. */
		__u32 a =
			0xc6120000U | ((__u32)rand_r(&seed) % 3) << 8 | ((__u32)rand_r(&seed) % 6);
		struct rl_rsim_result res;
		struct rl_pkt_info pi;
		struct rl_key k;
		int kv, sv;

		if (i % 10 == 9)
			a = 0xc6140001U;
		key4(&k, a);
		t += (__u64)rand_r(&seed) % (2 * MSEC);
		memset(&pi, 0, sizeof(pi));
		pi.src = k;
		pi.info = RL_PKT_PROTO;
		pi.proto = RL_PROTO_UDP;
		kv = send_from(&l, &k, t);
		sv = rl_rsim_packet(&sim, &pi, t, l.f4.len, &res);
		if (kv < 0 || sv < 0 || kv != sv) {
			rl_test_fail(
				__FILE__, __LINE__,
				"(RL_SEED=%llu) packet %u at %llu ns: kernel %d, simulate %d (%s)",
				rl_test_seed(), i, (unsigned long long)t, kv, sv,
				rl_reason_name(res.reason));
			goto out;
		}
	}
	{
		int ncpu = libbpf_num_possible_cpus();
		struct rl_rule_counters *per = calloc((size_t)ncpu, sizeof(*per)), sum = {};
		__u32 slot = cfg->r[0].slot;

		if (!ASSERT_TRUE(per != NULL, "memory") ||
		    !ASSERT_OK(bpf_map_lookup_elem(l.p.maps.rcnt, &slot, per), "rule counters")) {
			free(per);
			goto out;
		}
		for (int c = 0; c < ncpu; c++) {
			sum.agg_limited += per[c].agg_limited;
			sum.iface_limited += per[c].iface_limited;
			sum.limited += per[c].limited;
			sum.passed += per[c].passed;
		}
		free(per);
		printf("    rule: passed %llu, limited %llu, refused by its aggregates %llu, by its "
		       "whole %llu\n",
		       (unsigned long long)sum.passed, (unsigned long long)sum.limited,
		       (unsigned long long)sum.agg_limited, (unsigned long long)sum.iface_limited);
		ASSERT_EQ(sum.agg_limited, sim.cnt[0].agg_limited, "aggregate refusals");
		ASSERT_EQ(sum.iface_limited, sim.cnt[0].iface_limited, "whole-rule refusals");
		ASSERT_EQ(sum.passed, sim.cnt[0].passed, "passed");
		ASSERT_TRUE(sum.agg_limited && sum.iface_limited, "both levels refused some");
	}
out:
	if (has_sim)
		rl_rsim_free(&sim);
	if (has_set)
		rl_ruleset_free(&set);
	free(cfg);
	free(old);
	lv_stop(&l);
}

/*
 * The admission cap: 10,000 one-packet spoofed sources in one second
 * (100x --admit-rate 100, burst 10), and a legitimate source, new in the
 * middle of it, that sends every 10 ms. The cap gives states to what its
 * bucket passes; the others share one source's limit (100/s, burst 10)
 * and leave no state. The legitimate source's first packet is limited with
 * them; 10 ms later it is seen again, gets a state of its own and passes
 * every packet from then on. The kernel agrees with simulate's model.
 */
static void admit_flood(int v6)
{
	const char *opts[] = { "--rate", "100",		  "--burst", "10", "--admit-rate",
			       "100",	 "--admit-burst", "10",	     NULL };
	const __u64 t0 = 10 * SEC, gap = 100000;
	unsigned long flood = 0, flood_passed = 0, legit = 0, legit_passed = 0;
	unsigned long cap = 0, shared = 0;
	__u32 start = (__u32)rl_test_seed();
	const struct rl_level *lc, *ln;
	struct rl_counters c;
	struct rl_policy pol;
	struct rl_opts o;
	struct rl_sim sim;
	char err[RL_ERRLEN];
	__u64 capst, newst, next;
	__u32 len;
	struct lv l;

	memset(&sim, 0, sizeof(sim));
	if (!ASSERT_OK(rl_policy_parse(&pol, &o, opts, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_sim_init(&sim, &pol, err, sizeof(err)), err) ||
	    !lv_start(&l, opts, v6 ? 65536 : 4096))
		goto out;
	len = v6 ? l.f6.len : l.f4.len;
	lc = RL_LVL(&l.cfg, RL_LVL_ADMIT);
	ln = RL_LVL(&l.cfg, RL_LVL_NEW);
	capst = rl_initial_state(&lc->params, t0);
	newst = rl_initial_state(&ln->params, t0);
	for (__u64 t = t0; t < t0 + SEC; t += gap) {
		struct rl_key k, mk;
		int kv, sv;

		/*
		 * Spoofed: addresses of 198.18.0.0/15, each once (an odd stride
		 * mod 2^17); in IPv6, as many /64s of 2001:db8::/32.
		 */
		if (v6)
			key6(&k, (start + (__u32)flood * 40503U) & 0x1ffff);
		else
			key4(&k, 0xc6120000U | ((start + (__u32)flood * 40503U) & 0x1ffff));
		mk = k;
		kv = send_from(&l, &k, t);
		sv = rl_sim_packet(&sim, &mk, t, len, NULL);
		if (kv < 0 || kv != sv) {
			rl_test_fail(__FILE__, __LINE__,
				     "flood packet at %llu: kernel %d, simulate %d",
				     (unsigned long long)t, kv, sv);
			goto out;
		}
		flood++;
		flood_passed += (unsigned long)kv;
		/* The two buckets alone, for this flood of new sources. */
		if (rl_step(&lc->params, capst, t, 1, &next)) {
			capst = next;
			cap++;
		} else if (rl_step(&ln->params, newst, t, 1, &next)) {
			newst = next;
			shared++;
		}
		if (t < t0 + SEC / 2 || (t - t0) % (10 * MSEC))
			continue;
		if (v6)
			key6(&k, 0xfff00001U);
		else
			key4(&k, 0xc6140001U);
		mk = k;
		kv = send_from(&l, &k, t + 1);
		sv = rl_sim_packet(&sim, &mk, t + 1, len, NULL);
		if (kv < 0 || kv != sv) {
			rl_test_fail(__FILE__, __LINE__,
				     "legit packet at %llu: kernel %d, simulate %d",
				     (unsigned long long)t, kv, sv);
			goto out;
		}
		legit++;
		legit_passed += (unsigned long)kv;
	}
	if (!rl_prog_counters(&l.p, &c))
		goto out;
	printf("    flood %lu new sources at 100x the cap: passed %lu (cap %lu + shared %lu by the "
	       "buckets alone); states made %llu, unadmitted %llu; legit: sent %lu, passed %lu, "
	       "admitted when seen again: %llu\n",
	       flood, flood_passed, cap, shared, (unsigned long long)c.new_sources,
	       (unsigned long long)c.unadmitted, legit, legit_passed,
	       (unsigned long long)c.admitted_seen);
	/* The legitimate source's packets take a little of the buckets: within its count. */
	ASSERT_LE(flood_passed, cap + shared, "the flood passes what the two buckets pass");
	ASSERT_LE(cap + shared, flood_passed + legit, "no less");
	ASSERT_LE(c.new_sources, cap + 1, "states: only what the cap gives, and the legit source");
	ASSERT_EQ(c.admitted_seen, 1, "the legit source, seen again");
	ASSERT_LE(legit - 1, legit_passed, "every packet of it after its first passes");
	ASSERT_EQ(c.new_sources, sim.new_sources, "the kernel and the model agree");
	ASSERT_EQ(c.unadmitted, sim.ls.unadmitted, "on the refusals too");
out:
	rl_sim_free(&sim);
	lv_stop(&l);
}

TEST_FLAGS(lvl_admit, RL_TEST_ROOT)
{
	admit_flood(0);
}

TEST_FLAGS(lvl_admit6, RL_TEST_ROOT)
{
	admit_flood(1);
}

/*
 * set changes the aggregate's and the interface's rates while both are
 * empty: their states carry over (the tokens they had: none), so neither is
 * handed a fresh burst; without the carry the next packets would pass the
 * new bursts at once.
 */
TEST_FLAGS(lvl_set_carries, RL_TEST_ROOT)
{
	const char *o1[] = { "--rate",
			     "1000",
			     "--aggregate4",
			     "24",
			     "--aggregate-rate",
			     "100",
			     "--aggregate-burst",
			     "10",
			     NULL };
	const char *o2[] = { "--rate",
			     "1000",
			     "--aggregate4",
			     "24",
			     "--aggregate-rate",
			     "200",
			     "--aggregate-burst",
			     "20",
			     NULL };
	const __u64 t0 = 10 * SEC;
	unsigned long before = 0, after = 0;
	struct rl_config c2;
	struct rl_key k;
	struct lv l;
	int v;

	if (!lv_start(&l, o1, 4096))
		goto out;
	/* Empty the aggregate: 100 packets at once from sources of its /24. */
	for (__u32 i = 0; i < 100; i++) {
		key4(&k, 0xc6120100U | (i & 0xff));
		v = send_from(&l, &k, t0);
		if (v < 0)
			goto out;
		before += (unsigned long)v;
	}
	if (!rl_build_config(&c2, o2, &l.cfg) || !rl_prog_configure(&l.p, 1, &c2))
		goto out;
	/* 9.9 ms at 200/s from an empty bucket: one packet (at 5 ms); a fresh one: 20 at once. */
	for (__u64 i = 0; i < 100; i++) {
		key4(&k, 0xc6120100U | (__u32)(i & 0xff));
		v = send_from(&l, &k, t0 + 1 + i * (10 * MSEC / 100));
		if (v < 0)
			goto out;
		after += (unsigned long)v;
	}
	printf("    aggregate 100/s burst 10 emptied (%lu passed), set to 200/s burst 20: %lu "
	       "passed in the next 9.9 ms\n",
	       before, after);
	ASSERT_EQ(before, 10, "the first aggregate passes its burst");
	ASSERT_EQ(after, 1, "after set: what 9.9 ms at the new rate earns, no fresh burst");
out:
	lv_stop(&l);
}

/*
 * The levels' options from a configuration file, through the option table
 * (no schema of its own): the keys are the options' long names, a rule
 * takes its aggregate too, and an error names FILE:LINE and the option. The
 * rule prints back as the words that make it (what apply --diff compares).
 */
TEST(lvl_config_file)
{
	static const char good[] = "interfaces:\n"
				   "  eth0:\n"
				   "    rate: 100\n"
				   "    aggregate4: 24\n"
				   "    aggregate6: 48\n"
				   "    aggregate-rate: 2000\n"
				   "    iface-rate: 1mpps\n"
				   "    admit-rate: 500\n"
				   "    rules:\n"
				   "      - name: dns\n"
				   "        proto: udp\n"
				   "        rate: 10\n"
				   "        aggregate4: 16\n"
				   "        aggregate-rate: 200\n";
	static const char bad[] = "interfaces:\n"
				  "  eth0:\n"
				  "    rate: 100\n"
				  "    aggregate4: 28\n"
				  "    prefix4: 24\n"
				  "    aggregate-rate: 2000\n";
	char path[] = "/tmp/rlt-levels-XXXXXX", err[RL_ERRLEN] = "", words[512];
	struct rl_apply_file f = {};
	const struct rl_level *a;
	FILE *fp;
	int fd;

	fd = mkstemp(path);
	if (!ASSERT_TRUE(fd >= 0, "a temporary file"))
		return;
	fp = fdopen(fd, "w");
	if (!ASSERT_TRUE(fp != NULL, "open it")) {
		close(fd);
		goto out;
	}
	fputs(good, fp);
	fclose(fp);
	if (!ASSERT_OK(rl_apply_load(&f, path, err, sizeof(err)), err) ||
	    !ASSERT_EQ(f.n, 1, "one interface"))
		goto out;
	a = RL_LVL(&f.ifs[0].cfg, RL_LVL_PREFIX);
	ASSERT_EQ(a->on, RL_LVL_ON4 | RL_LVL_ON6, "aggregates of both families");
	ASSERT_EQ(a->prefix4, 24, "/24");
	ASSERT_EQ(a->prefix6, 48, "/48");
	ASSERT_EQ(a->burst, 2000, "default burst: one second at the rate");
	ASSERT_TRUE(RL_LVL(&f.ifs[0].cfg, RL_LVL_IFACE)->on, "the interface's limit");
	ASSERT_TRUE(RL_LVL(&f.ifs[0].cfg, RL_LVL_ADMIT)->on &&
			    RL_LVL(&f.ifs[0].cfg, RL_LVL_NEW)->on,
		    "the admission cap, and the new sources' level");
	if (ASSERT_EQ(f.ifs[0].nrules, 1, "one rule")) {
		rl_rule_format(&f.ifs[0].rules.rules[0], words, sizeof(words));
		ASSERT_STREQ(words,
			     "dns --proto udp --rate 10/s --aggregate4 16 --aggregate-rate 200/s "
			     "--aggregate-burst 200",
			     "the rule prints as it is made");
	}
	rl_apply_free(&f);
	memset(&f, 0, sizeof(f));
	fp = fopen(path, "w");
	if (!ASSERT_TRUE(fp != NULL, "rewrite it"))
		goto out;
	fputs(bad, fp);
	fclose(fp);
	ASSERT_EQ(rl_apply_load(&f, path, err, sizeof(err)), -EINVAL,
		  "an aggregate within a source");
	/* As a policy's other errors: at the interface, the option spelt as a flag. */
	ASSERT_CONTAINS(err, ":2: eth0: --aggregate4 28 is longer than --prefix4 (24)",
			"the file, its line and the option");
out:
	rl_apply_free(&f);
	unlink(path);
}
