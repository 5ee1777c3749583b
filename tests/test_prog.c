// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP program itself, through BPF_PROG_TEST_RUN: frames in, verdicts and
 * counters out. Every test loads its own skeleton with the test clock
 * switched on (rl_test_clock), so each frame runs at a time the test chooses.
 *
 *	prog_frames		parsing: one row per frame shape, verdict and counters
 *	prog_runts		frames under 14 bytes, where the kernel can feed them
 *	prog_token_bucket	rate 10 burst 5 at exact refill boundaries
 *	prog_dry_run		over-limit frames pass and count as would-drop
 *	prog_sources		separate buckets per source and per family
 *	prog_prefix4/6		prefix aggregation
 *	prog_bytes(_vlan)	byte mode: the cost is the whole frame's length
 *	prog_vs_sim		random traces: kernel and rl_sim_packet() agree
 *	prog_basic_or_full	the XDP program without rules, SYN cookies,
 *				levels and rl_wide4 for a policy with none,
 *				the other for one
 *	prog_set_*		live configuration change with state carried over
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opts.h"
#include "config.h"
#include "frames.h"
#include "harness.h"
#include "source.h"
#include "test.h"
#include "trace.h"
#include "rl_skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MSEC	      1000000ULL
#define SEC	      1000000000ULL

#ifndef ETH_P_LLDP
#define ETH_P_LLDP 0x88cc
#endif
#define IP_MF 0x2000

/*
 * The state table of a test program. The production default (1M sources)
 * is preallocated, about 100 MB per skeleton; no test here tracks more than
 * a few dozen sources, far from where a table would evict one.
 */
#define TEST_MAX_SOURCES 16384

/* Load, and make the configuration built from @opts live in slot 0. */
static bool prog_start(struct rl_prog *p, const char *const *opts, struct rl_config *cfg)
{
	struct rl_config local;

	if (!cfg)
		cfg = &local;
	if (!rl_build_config(cfg, opts, NULL) || !rl_prog_load(p, true, TEST_MAX_SOURCES))
		return false;
	if (!rl_prog_configure(p, 0, cfg)) {
		rl_prog_close(p);
		return false;
	}
	return true;
}

/*
 * Run one frame at time @now: XDP_PASS or XDP_DROP, or the negative errno of
 * BPF_PROG_TEST_RUN. Older kernels refuse input shorter than an Ethernet
 * header but accept a runt behind XDP metadata (a multiple of 4 bytes, at
 * most 32): the program sees only what lies between ctx->data and data_end.
 * Newer ones (6.18 here) check the length after the metadata too: a runt
 * cannot reach an XDP program that way at all, and prog_runts skips.
 */
static int prog_try(struct rl_prog *p, __u64 now, const struct frame *f)
{
	unsigned int meta = f->len < ETH_HLEN ? (ETH_HLEN - f->len + 3) & ~3U : 0;
	struct xdp_md ctx = { .data = meta, .data_end = meta + f->len };
	__u8 buf[32 + FRAME_MAX] = { 0 };
	__u32 zero = 0;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = meta + f->len,
		    .repeat = 1);
	int err;

	memcpy(buf + meta, f->data, f->len);
	if (meta) {
		opts.ctx_in = &ctx;
		opts.ctx_size_in = sizeof(ctx);
	}
	if (bpf_map_update_elem(p->clock_fd, &zero, &now, BPF_ANY))
		return -errno;
	err = bpf_prog_test_run_opts(p->prog_fd, &opts);
	return err ? err : (int)opts.retval;
}

/* prog_try(), failing the test on an error or a verdict other than pass or drop. */
static int prog_run(struct rl_prog *p, __u64 now, const struct frame *f)
{
	int v;

	if (!ASSERT_TRUE(!f->bad, "frame built"))
		return -1;
	v = prog_try(p, now, f);
	if (v < 0) {
		rl_test_fail(__FILE__, __LINE__, "BPF_PROG_TEST_RUN of %u bytes: %s", f->len,
			     strerror(-v));
		return -1;
	}
	if (v != XDP_PASS && v != XDP_DROP) {
		rl_test_fail(__FILE__, __LINE__, "verdict %d: neither XDP_PASS nor XDP_DROP", v);
		return -1;
	}
	return v;
}

/* Whether rl_state holds @src masked to /@p4 or /@p6, under generation @gen. */
static bool prog_tracks(struct rl_prog *p, const char *src, unsigned int p4, unsigned int p6,
			__u32 gen)
{
	struct rl_state_key k;
	__u64 state;

	memset(&k, 0, sizeof(k));
	if (!ASSERT_OK(rl_key_parse(src, &k.src), src))
		return false;
	rl_key_mask(&k.src, p4, p6);
	k.gen = gen;
	return rl_state_lookup(&p->maps, &k, &state) == 0;
}

#define CNT(f)                                      \
	{                                           \
#f, offsetof(struct rl_counters, f) \
	}
static const struct {
	const char *name;
	size_t off;
} cnt_fields[] = {
	CNT(rx_packets),
	CNT(rx_bytes),
	CNT(passed),
	CNT(passed_bytes),
	CNT(dropped),
	CNT(dropped_bytes),
	CNT(limited),
	CNT(would_drop),
	CNT(would_drop_bytes),
	CNT(ipv4),
	CNT(ipv6),
	CNT(not_ip),
	CNT(malformed[RL_BAD_ETH]),
	CNT(malformed[RL_BAD_VLAN]),
	CNT(malformed[RL_BAD_IPV4]),
	CNT(malformed[RL_BAD_IHL]),
	CNT(malformed[RL_BAD_IPV6]),
	CNT(new_sources),
	CNT(carried),
	CNT(insert_failed),
	CNT(cas_retries),
	CNT(cas_exhausted),
	CNT(nd),
	CNT(sync_lost),
	CNT(agg_limited),
	CNT(iface_limited),
	CNT(new_limited),
	CNT(unadmitted),
	CNT(admitted_seen),
	CNT(agg_new),
	CNT(agg_overdraft),
	CNT(agg_failed),
	CNT(evicted),
	CNT(evicted_seen),
	CNT(syncookies_sent),
	CNT(syncookies_sent_bytes),
	CNT(syncookies_valid),
	CNT(syncookies_invalid),
};
_Static_assert(ARRAY_SIZE(cnt_fields) * sizeof(__u64) == sizeof(struct rl_counters),
	       "every counter of struct rl_counters is named in cnt_fields");

static __u64 cnt_get(const struct rl_counters *c, size_t i)
{
	return *(const __u64 *)((const char *)c + cnt_fields[i].off);
}

/* after - before must equal @exp in every counter. */
static bool check_delta(const struct rl_counters *before, const struct rl_counters *after,
			const struct rl_counters *exp, const char *what)
{
	bool ok = true;

	for (size_t i = 0; i < ARRAY_SIZE(cnt_fields); i++) {
		__u64 d = cnt_get(after, i) - cnt_get(before, i), e = cnt_get(exp, i);

		if (d != e) {
			rl_test_fail(__FILE__, __LINE__,
				     "%s: counter %s went up by %llu, expected %llu", what,
				     cnt_fields[i].name, (unsigned long long)d,
				     (unsigned long long)e);
			ok = false;
		}
	}
	return ok;
}

/* ------------------------------------------------------------------------ */
/* Frames for the rate tests: an IP frame of @len bytes from @src. */

static void ip_frame(struct frame *f, const char *src, unsigned int len)
{
	fr_init(f);
	if (strchr(src, ':')) {
		fr_eth(f, ETH_P_IPV6);
		fr_ipv6(f, src, 0);
	} else {
		fr_eth(f, ETH_P_IP);
		fr_ipv4(f, src, NULL);
	}
	/* An IPv6 frame is 62 bytes with its UDP header: cut to 60 if asked. */
	fr_pad(f, len);
	fr_cut(f, len);
}

static const char *verdict_name(int v)
{
	return v == XDP_PASS ? "XDP_PASS" : v == XDP_DROP ? "XDP_DROP" : "error";
}

/*
 * A scripted run: each step is a frame at a time with its expected verdict.
 * @tally adds what the steps should have done to the counters.
 */
struct step {
	__u64 t;
	const char *src;
	unsigned int len; /* 0: FRAME_MIN */
	int verdict;
	unsigned int repeat; /* 0: once */
};

static bool run_steps(struct rl_prog *p, const struct step *s, size_t n, bool dry_run,
		      struct rl_counters *tally, const char *what)
{
	struct frame f;
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		unsigned int len = s[i].len ? s[i].len : FRAME_MIN;

		ip_frame(&f, s[i].src, len);
		for (unsigned int r = 0; r < (s[i].repeat ? s[i].repeat : 1); r++) {
			int v = prog_run(p, s[i].t, &f);
			bool over = dry_run ? s[i].verdict == XDP_DROP : false;
			int exp = over ? XDP_PASS : s[i].verdict;

			if (v != exp) {
				rl_test_fail(
					__FILE__, __LINE__,
					"%s: step %zu (%s, %u bytes at %llu ns), frame %u: %s, expected %s",
					what, i, s[i].src, len, (unsigned long long)s[i].t, r + 1,
					verdict_name(v), verdict_name(exp));
				ok = false;
			}
			if (!tally)
				continue;
			tally->rx_packets++;
			tally->rx_bytes += len;
			if (exp == XDP_PASS) {
				tally->passed++;
				tally->passed_bytes += len;
			} else {
				tally->dropped++;
				tally->dropped_bytes += len;
				tally->limited++;
			}
			if (over) {
				tally->would_drop++;
				tally->would_drop_bytes += len;
			}
			if (strchr(s[i].src, ':'))
				tally->ipv6++;
			else
				tally->ipv4++;
		}
	}
	return ok;
}

/* ------------------------------------------------------------------------ */
/* Parsing: a table of frames. */

/* A frame, built by build_frame() from the builders of frames.h. */
struct fspec {
	__u16 tpid[3]; /* VLAN tags, outermost first; 0 ends the list */
	__u16 proto; /* the EtherType after the tags */
	const char *src; /* IP source */
	struct fr_ip4 ip4; /* IPv4 header fields */
	unsigned int version; /* IPv6 version field (0: 6) */
	bool cut; /* cut the frame to len bytes (else pad to len, default 60) */
	unsigned int len;
};

static void build_frame(struct frame *f, const struct fspec *s)
{
	unsigned int ntags = 0;

	fr_init(f);
	while (ntags < 3 && s->tpid[ntags])
		ntags++;
	fr_eth(f, ntags ? s->tpid[0] : s->proto);
	for (unsigned int i = 0; i < ntags; i++)
		fr_vlan(f, (__u16)(100 + i), i + 1 < ntags ? s->tpid[i + 1] : s->proto);
	switch (s->proto) {
	case ETH_P_IP:
		fr_ipv4(f, s->src, &s->ip4);
		break;
	case ETH_P_IPV6:
		fr_ipv6(f, s->src, s->version);
		break;
	case ETH_P_ARP:
		fr_arp(f);
		break;
	case ETH_P_LLDP:
		fr_lldp(f);
		break;
	}
	if (s->cut)
		fr_cut(f, s->len);
	else
		fr_pad(f, s->len ? s->len : FRAME_MIN);
}

/*
 * One row: a frame, its verdict under --malformed drop (the default) and
 * --malformed pass, and what it adds to the counters besides rx_*, passed*
 * and dropped* (those follow from the verdict and the frame's length).
 * tracked: the source is in rl_state afterwards (/32, /64, generation 1).
 */
struct frame_case {
	const char *name;
	struct fspec f;
	int verdict[2];
	struct rl_counters exp;
	bool tracked;
};

#define PASSES                     \
	{                          \
		XDP_PASS, XDP_PASS \
	}
#define MALFORMED                  \
	{                          \
		XDP_DROP, XDP_PASS \
	}
#define NEW_V4                              \
	{                                   \
		.ipv4 = 1, .new_sources = 1 \
	}
#define NEW_V6                              \
	{                                   \
		.ipv6 = 1, .new_sources = 1 \
	}
#define NOT_IP              \
	{                   \
		.not_ip = 1 \
	}
#define BAD(reason)                    \
	{                              \
		.malformed[reason] = 1 \
	}
#define Q  ETH_P_8021Q
#define AD ETH_P_8021AD
/* The first n bytes of an IPv4 frame. */
#define RUNT(n)                                                                            \
	{                                                                                  \
		"runt of " #n " bytes",                                                    \
			{ .proto = ETH_P_IP, .src = "198.18.9.9", .cut = true, .len = n }, \
			MALFORMED, BAD(RL_BAD_ETH), false                                  \
	}

/*
 * The rows run in order against one program, each with its own source, but
 * for the later fragment, which must find the bucket its first fragment made.
 */
static const struct frame_case frame_cases[] = {
	{ "ipv4", { .proto = ETH_P_IP, .src = "198.18.0.1" }, PASSES, NEW_V4, true },
	{ "ipv4 header only, 34 bytes",
	  { .proto = ETH_P_IP, .src = "198.18.0.2", .cut = true, .len = 34 },
	  PASSES,
	  NEW_V4,
	  true },
	{ "ipv4 full size",
	  { .proto = ETH_P_IP, .src = "198.18.0.3", .len = 1514 },
	  PASSES,
	  NEW_V4,
	  true },
	{ "ipv4 options, ihl 6",
	  { .proto = ETH_P_IP, .src = "198.18.0.4", .ip4 = { .ihl = 6 } },
	  PASSES,
	  NEW_V4,
	  true },
	{ "ipv4 options, ihl 15",
	  { .proto = ETH_P_IP, .src = "198.18.0.5", .ip4 = { .ihl = 15 } },
	  PASSES,
	  NEW_V4,
	  true },
	{ "ipv4 ihl 15, header ends the frame",
	  { .proto = ETH_P_IP, .src = "198.18.0.6", .ip4 = { .ihl = 15 }, .cut = true, .len = 74 },
	  PASSES,
	  NEW_V4,
	  true },
	{ "ipv4 first fragment",
	  { .proto = ETH_P_IP, .src = "198.18.0.7", .ip4 = { .frag = IP_MF } },
	  PASSES,
	  NEW_V4,
	  true },
	{ "ipv4 later fragment, same source",
	  { .proto = ETH_P_IP, .src = "198.18.0.7", .ip4 = { .frag = 185 } },
	  PASSES,
	  { .ipv4 = 1 },
	  true },
	{ "ipv4 middle fragment, new source",
	  { .proto = ETH_P_IP, .src = "198.18.0.8", .ip4 = { .frag = IP_MF | 370 } },
	  PASSES,
	  NEW_V4,
	  true },
	{ "802.1Q ipv4",
	  { .tpid = { Q }, .proto = ETH_P_IP, .src = "198.18.1.1" },
	  PASSES,
	  NEW_V4,
	  true },
	{ "802.1ad+802.1Q ipv4",
	  { .tpid = { AD, Q }, .proto = ETH_P_IP, .src = "198.18.1.2" },
	  PASSES,
	  NEW_V4,
	  true },
	{ "802.1Q+802.1Q ipv4",
	  { .tpid = { Q, Q }, .proto = ETH_P_IP, .src = "198.18.1.3" },
	  PASSES,
	  NEW_V4,
	  true },
	{ "802.1ad+802.1Q ipv4 options",
	  { .tpid = { AD, Q }, .proto = ETH_P_IP, .src = "198.18.1.4", .ip4 = { .ihl = 9 } },
	  PASSES,
	  NEW_V4,
	  true },
	{ "ipv6", { .proto = ETH_P_IPV6, .src = "2001:db8::1" }, PASSES, NEW_V6, true },
	{ "ipv6 header only, 54 bytes",
	  { .proto = ETH_P_IPV6, .src = "2001:db8:1::1", .cut = true, .len = 54 },
	  PASSES,
	  NEW_V6,
	  true },
	{ "802.1Q ipv6",
	  { .tpid = { Q }, .proto = ETH_P_IPV6, .src = "2001:db8:2::1" },
	  PASSES,
	  NEW_V6,
	  true },
	{ "802.1ad+802.1Q ipv6",
	  { .tpid = { AD, Q }, .proto = ETH_P_IPV6, .src = "2001:db8:3::1" },
	  PASSES,
	  NEW_V6,
	  true },
	{ "arp", { .proto = ETH_P_ARP }, PASSES, NOT_IP, false },
	{ "802.1Q arp", { .tpid = { Q }, .proto = ETH_P_ARP }, PASSES, NOT_IP, false },
	{ "lldp", { .proto = ETH_P_LLDP }, PASSES, NOT_IP, false },
	{ "unknown ethertype 0x88b5", { .proto = 0x88b5 }, PASSES, NOT_IP, false },
	{ "ethernet header only, arp",
	  { .proto = ETH_P_ARP, .cut = true, .len = 14 },
	  PASSES,
	  NOT_IP,
	  false },
	{ "three tags 802.1Q",
	  { .tpid = { Q, Q, Q }, .proto = ETH_P_IP, .src = "198.18.2.1" },
	  MALFORMED,
	  BAD(RL_BAD_VLAN),
	  false },
	{ "three tags 802.1ad+802.1Q+802.1Q",
	  { .tpid = { AD, Q, Q }, .proto = ETH_P_IP, .src = "198.18.2.2" },
	  MALFORMED,
	  BAD(RL_BAD_VLAN),
	  false },
	{ "truncated 802.1Q tag",
	  { .tpid = { Q }, .proto = ETH_P_IP, .src = "198.18.2.3", .cut = true, .len = 17 },
	  MALFORMED,
	  BAD(RL_BAD_VLAN),
	  false },
	{ "802.1Q tag, nothing after the ethernet header",
	  { .tpid = { Q }, .proto = ETH_P_IP, .src = "198.18.2.4", .cut = true, .len = 14 },
	  MALFORMED,
	  BAD(RL_BAD_VLAN),
	  false },
	{ "truncated inner tag of QinQ",
	  { .tpid = { AD, Q }, .proto = ETH_P_IP, .src = "198.18.2.5", .cut = true, .len = 20 },
	  MALFORMED,
	  BAD(RL_BAD_VLAN),
	  false },
	{ "ipv4 ethertype, nothing after",
	  { .proto = ETH_P_IP, .src = "198.18.3.1", .cut = true, .len = 14 },
	  MALFORMED,
	  BAD(RL_BAD_IPV4),
	  false },
	{ "truncated ipv4 header, 19 of 20 bytes",
	  { .proto = ETH_P_IP, .src = "198.18.3.2", .cut = true, .len = 33 },
	  MALFORMED,
	  BAD(RL_BAD_IPV4),
	  false },
	{ "802.1Q, truncated ipv4 header",
	  { .tpid = { Q }, .proto = ETH_P_IP, .src = "198.18.3.3", .cut = true, .len = 37 },
	  MALFORMED,
	  BAD(RL_BAD_IPV4),
	  false },
	{ "ipv4 ihl 15, frame ends 1 byte short",
	  { .proto = ETH_P_IP, .src = "198.18.3.4", .ip4 = { .ihl = 15 }, .cut = true, .len = 73 },
	  MALFORMED,
	  BAD(RL_BAD_IPV4),
	  false },
	{ "ipv4 ihl 6, only the fixed header present",
	  { .proto = ETH_P_IP, .src = "198.18.3.5", .ip4 = { .ihl = 6 }, .cut = true, .len = 34 },
	  MALFORMED,
	  BAD(RL_BAD_IPV4),
	  false },
	{ "ipv4 ihl 4",
	  { .proto = ETH_P_IP, .src = "198.18.4.1", .ip4 = { .ihl = 4, .set_ihl = true } },
	  MALFORMED,
	  BAD(RL_BAD_IHL),
	  false },
	{ "ipv4 ihl 0",
	  { .proto = ETH_P_IP, .src = "198.18.4.2", .ip4 = { .ihl = 0, .set_ihl = true } },
	  MALFORMED,
	  BAD(RL_BAD_IHL),
	  false },
	{ "ipv4 ethertype, version 6",
	  { .proto = ETH_P_IP, .src = "198.18.4.3", .ip4 = { .version = 6 } },
	  MALFORMED,
	  BAD(RL_BAD_IHL),
	  false },
	{ "ipv4 ethertype, version 5",
	  { .proto = ETH_P_IP, .src = "198.18.4.4", .ip4 = { .version = 5 } },
	  MALFORMED,
	  BAD(RL_BAD_IHL),
	  false },
	{ "ipv6 ethertype, nothing after",
	  { .proto = ETH_P_IPV6, .src = "2001:db8:4::1", .cut = true, .len = 14 },
	  MALFORMED,
	  BAD(RL_BAD_IPV6),
	  false },
	{ "truncated ipv6 header, 39 of 40 bytes",
	  { .proto = ETH_P_IPV6, .src = "2001:db8:4::2", .cut = true, .len = 53 },
	  MALFORMED,
	  BAD(RL_BAD_IPV6),
	  false },
	{ "QinQ, truncated ipv6 header",
	  { .tpid = { AD, Q },
	    .proto = ETH_P_IPV6,
	    .src = "2001:db8:4::3",
	    .cut = true,
	    .len = 61 },
	  MALFORMED,
	  BAD(RL_BAD_IPV6),
	  false },
	{ "ipv6 ethertype, version 4",
	  { .proto = ETH_P_IPV6, .src = "2001:db8:4::4", .version = 4 },
	  MALFORMED,
	  BAD(RL_BAD_IPV6),
	  false },
};

/* Ethernet runts: the first 0 to 13 bytes of an IPv4 frame. */
static const struct frame_case runt_cases[] = {
	RUNT(0), RUNT(1), RUNT(2), RUNT(3),  RUNT(4),  RUNT(5),	 RUNT(6),
	RUNT(7), RUNT(8), RUNT(9), RUNT(10), RUNT(11), RUNT(12), RUNT(13),
};

/*
 * Run @cases in order against one program. Returns how many rows the kernel
 * refused to run (a runt, on a kernel that cannot feed one to XDP), or -1.
 */
static int frame_table(const struct frame_case *cases, size_t n, bool malformed_pass)
{
	const char *const opts[] = { "--rate", "1000",	      "--burst",
				     "1000",   "--malformed", malformed_pass ? "pass" : "drop",
				     NULL };
	const char *policy = malformed_pass ? "--malformed pass" : "--malformed drop";
	struct rl_counters before, after, exp;
	struct frame f;
	struct rl_prog p;
	char what[160];
	int refused = 0;

	if (!prog_start(&p, opts, NULL))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct frame_case *c = &cases[i];
		int want = c->verdict[malformed_pass], v;

		snprintf(what, sizeof(what), "%s: %s", policy, c->name);
		build_frame(&f, &c->f);
		if (!ASSERT_TRUE(!f.bad, what))
			continue;
		if (c->f.cut && !ASSERT_EQ(f.len, c->f.len, what))
			continue;
		if (!rl_prog_counters(&p, &before))
			break;
		if (f.len < ETH_HLEN && prog_try(&p, SEC, &f) == -EINVAL) {
			refused++;
			continue;
		}
		v = prog_run(&p, SEC, &f);
		if (v != want)
			rl_test_fail(__FILE__, __LINE__, "%s (%u bytes): %s, expected %s", what,
				     f.len, verdict_name(v), verdict_name(want));
		if (!rl_prog_counters(&p, &after))
			break;
		exp = c->exp;
		exp.rx_packets = 1;
		exp.rx_bytes = f.len;
		if (want == XDP_PASS) {
			exp.passed = 1;
			exp.passed_bytes = f.len;
		} else {
			exp.dropped = 1;
			exp.dropped_bytes = f.len;
		}
		check_delta(&before, &after, &exp, what);
		if (c->tracked)
			ASSERT_TRUE(prog_tracks(&p, c->f.src, 32, 64, 1), what);
	}
	rl_prog_close(&p);
	return refused;
}

TEST_FLAGS(prog_frames, RL_TEST_ROOT)
{
	ASSERT_EQ(frame_table(frame_cases, ARRAY_SIZE(frame_cases), false), 0, "--malformed drop");
	ASSERT_EQ(frame_table(frame_cases, ARRAY_SIZE(frame_cases), true), 0, "--malformed pass");
}

/* Runts, where the kernel lets a test feed them to XDP. */
TEST_FLAGS(prog_runts, RL_TEST_ROOT)
{
	int refused = frame_table(runt_cases, ARRAY_SIZE(runt_cases), false);

	if (refused >= 0 && frame_table(runt_cases, ARRAY_SIZE(runt_cases), true) >= 0 &&
	    refused == (int)ARRAY_SIZE(runt_cases))
		rl_test_skip(
			"the kernel refuses XDP test input of under %d bytes (behind metadata too)",
			ETH_HLEN);
}

/* ------------------------------------------------------------------------ */
/* Rate behaviour. */

#define T0 (5 * SEC)
#define A4 "198.18.0.1"
#define B4 "198.18.0.2"

static void rate_test(const char *const *opts, const struct step *s, size_t n, bool dry_run,
		      const struct rl_counters *extra, const char *what)
{
	struct rl_counters before, after, exp = { 0 };
	struct rl_prog p;

	if (!prog_start(&p, opts, NULL))
		return;
	if (!rl_prog_counters(&p, &before))
		goto out;
	run_steps(&p, s, n, dry_run, &exp, what);
	if (!rl_prog_counters(&p, &after))
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(cnt_fields); i++)
		*(__u64 *)((char *)&exp + cnt_fields[i].off) += cnt_get(extra, i);
	check_delta(&before, &after, &exp, what);
out:
	rl_prog_close(&p);
}

/* Rate 10/s, burst 5: one token every 100 ms, exactly. */
static const struct step bucket_steps[] = {
	{ T0, A4, 0, XDP_PASS, 5 },
	{ T0, A4, 0, XDP_DROP, 3 },
	{ T0 + 100 * MSEC - 1, A4, 0, XDP_DROP, 1 },
	{ T0 + 100 * MSEC, A4, 0, XDP_PASS, 1 },
	{ T0 + 100 * MSEC, A4, 0, XDP_DROP, 1 },
	/* 250 ms later: two tokens and a half. */
	{ T0 + 350 * MSEC, A4, 0, XDP_PASS, 2 },
	{ T0 + 350 * MSEC, A4, 0, XDP_DROP, 1 },
	{ T0 + 400 * MSEC, A4, 0, XDP_PASS, 1 },
	{ T0 + 400 * MSEC, A4, 0, XDP_DROP, 1 },
	/* Idle for 10 s: the bucket holds 5, not 100. */
	{ T0 + 10 * SEC, A4, 0, XDP_PASS, 5 },
	{ T0 + 10 * SEC, A4, 0, XDP_DROP, 1 },
};

TEST_FLAGS(prog_token_bucket, RL_TEST_ROOT)
{
	const struct rl_counters extra = { .new_sources = 1 };

	rate_test((const char *const[]){ "--algo", "token-bucket", "--rate", "10", "--burst", "5",
					 NULL },
		  bucket_steps, ARRAY_SIZE(bucket_steps), false, &extra,
		  "token-bucket 10/s burst 5");
}

/* The same steps in dry-run: what would have been dropped passes and is counted. */
TEST_FLAGS(prog_dry_run, RL_TEST_ROOT)
{
	const struct rl_counters extra = { .new_sources = 1 };

	rate_test((const char *const[]){ "--algo", "token-bucket", "--rate", "10", "--burst", "5",
					 "--action", "dry-run", NULL },
		  bucket_steps, ARRAY_SIZE(bucket_steps), true, &extra,
		  "dry-run token-bucket 10/s burst 5");
}

/* Every source its own bucket, IPv4 and IPv6 alike; /32 and /64 by default. */
TEST_FLAGS(prog_sources, RL_TEST_ROOT)
{
	static const struct step s[] = {
		{ T0, A4, 0, XDP_PASS, 5 },
		{ T0, A4, 0, XDP_DROP, 1 },
		{ T0, B4, 0, XDP_PASS, 5 },
		{ T0, B4, 0, XDP_DROP, 1 },
		{ T0, "198.18.0.3", 0, XDP_PASS, 5 },
		{ T0, "2001:db8::1", 0, XDP_PASS, 5 },
		{ T0, "2001:db8::1", 0, XDP_DROP, 1 },
		{ T0, "2001:db8:0:1::1", 0, XDP_PASS, 5 },
		{ T0, "2001:db8:0:1::1", 0, XDP_DROP, 1 },
		/* The IPv4-mapped key of 0.0.0.1 is not ::1. */
		{ T0, "0.0.0.1", 0, XDP_PASS, 5 },
		{ T0, "::1", 0, XDP_PASS, 5 },
		{ T0, A4, 0, XDP_DROP, 1 },
	};
	const struct rl_counters extra = { .new_sources = 7 };

	rate_test((const char *const[]){ "--rate", "10", "--burst", "5", NULL }, s, ARRAY_SIZE(s),
		  false, &extra, "separate sources");
}

/* --prefix4 24: a /24 shares one bucket; another /24 has its own. */
TEST_FLAGS(prog_prefix4, RL_TEST_ROOT)
{
	static const struct step s[] = {
		{ T0, A4, 0, XDP_PASS, 3 },
		{ T0, B4, 0, XDP_PASS, 2 },
		{ T0, B4, 0, XDP_DROP, 1 },
		{ T0, A4, 0, XDP_DROP, 1 },
		{ T0, "198.18.0.255", 0, XDP_DROP, 1 },
		{ T0, "198.18.1.1", 0, XDP_PASS, 5 },
		{ T0, "198.18.1.1", 0, XDP_DROP, 1 },
		{ T0 + 100 * MSEC, B4, 0, XDP_PASS, 1 },
		{ T0 + 100 * MSEC, A4, 0, XDP_DROP, 1 },
	};
	const struct rl_counters extra = { .new_sources = 2 };
	struct rl_prog p;

	rate_test((const char *const[]){ "--rate", "10", "--burst", "5", "--prefix4", "24", NULL },
		  s, ARRAY_SIZE(s), false, &extra, "prefix4 24");

	/* The key is the masked address. */
	if (!prog_start(&p, (const char *const[]){ "--rate", "10", "--prefix4", "24", NULL }, NULL))
		return;
	{
		struct step one = { T0, "198.18.0.77", 0, XDP_PASS, 1 };

		run_steps(&p, &one, 1, false, NULL, "prefix4 24 key");
	}
	ASSERT_TRUE(prog_tracks(&p, "198.18.0.0", 32, 64, 1), "key 198.18.0.0/24 in rl_state");
	ASSERT_TRUE(!prog_tracks(&p, "198.18.0.77", 32, 64, 1), "no key 198.18.0.77/32");
	rl_prog_close(&p);
}

/* --prefix6 64 (the default): a /64 shares one bucket. */
TEST_FLAGS(prog_prefix6, RL_TEST_ROOT)
{
	static const struct step s64[] = {
		{ T0, "2001:db8::1", 0, XDP_PASS, 3 },
		{ T0, "2001:db8::2", 0, XDP_PASS, 2 },
		{ T0, "2001:db8::2", 0, XDP_DROP, 1 },
		{ T0, "2001:db8::1", 0, XDP_DROP, 1 },
		{ T0, "2001:db8::ffff:ffff:ffff:ffff", 0, XDP_DROP, 1 },
		{ T0, "2001:db8:0:1::1", 0, XDP_PASS, 5 },
		{ T0, "2001:db8:0:1::1", 0, XDP_DROP, 1 },
	};
	static const struct step s48[] = {
		{ T0, "2001:db8::1", 0, XDP_PASS, 3 },
		{ T0, "2001:db8:0:ffff::2", 0, XDP_PASS, 2 },
		{ T0, "2001:db8:0:ffff::2", 0, XDP_DROP, 1 },
		{ T0, "2001:db8:1::1", 0, XDP_PASS, 5 },
	};
	/* Prefix 0 for both: all IPv4 one bucket, all IPv6 another. */
	static const struct step s0[] = {
		{ T0, A4, 0, XDP_PASS, 5 },
		{ T0, "203.0.113.9", 0, XDP_DROP, 1 },
		{ T0, "2001:db8::1", 0, XDP_PASS, 5 },
		{ T0, "2001:db8:ffff::9", 0, XDP_DROP, 1 },
	};
	const struct rl_counters extra = { .new_sources = 2 };

	rate_test((const char *const[]){ "--rate", "10", "--burst", "5", NULL }, s64,
		  ARRAY_SIZE(s64), false, &extra, "prefix6 64");
	rate_test((const char *const[]){ "--rate", "10", "--burst", "5", "--prefix6", "48", NULL },
		  s48, ARRAY_SIZE(s48), false, &extra, "prefix6 48");
	rate_test((const char *const[]){ "--rate", "10", "--burst", "5", "--prefix4", "0",
					 "--prefix6", "0", NULL },
		  s0, ARRAY_SIZE(s0), false, &extra, "prefix4 0, prefix6 0");
}

/* Byte mode: 1000 bytes/s, burst 2000 bytes (at least a full frame); each frame costs its length. */
TEST_FLAGS(prog_bytes, RL_TEST_ROOT)
{
	static const struct step s[] = {
		{ T0, A4, 800, XDP_PASS, 2 },
		{ T0, A4, 800, XDP_DROP, 1 },
		{ T0, A4, 401, XDP_DROP, 1 },
		{ T0, A4, 400, XDP_PASS, 1 },
		{ T0, A4, 60, XDP_DROP, 1 },
		/* 1 byte per ms */
		{ T0 + 59 * MSEC, A4, 60, XDP_DROP, 1 },
		{ T0 + 60 * MSEC, A4, 60, XDP_PASS, 1 },
		{ T0 + 60 * MSEC, "2001:db8::1", 1500, XDP_PASS, 1 },
		{ T0 + 60 * MSEC, "2001:db8::1", 501, XDP_DROP, 1 },
		{ T0 + 60 * MSEC, "2001:db8::1", 500, XDP_PASS, 1 },
		{ T0 + 60 * MSEC, "2001:db8::1", 60, XDP_DROP, 1 },
		/* Full again, and never more than full. */
		{ T0 + 10 * SEC, A4, 1500, XDP_PASS, 1 },
		{ T0 + 10 * SEC, A4, 501, XDP_DROP, 1 },
		{ T0 + 10 * SEC, A4, 500, XDP_PASS, 1 },
		{ T0 + 10 * SEC, A4, 60, XDP_DROP, 1 },
	};
	const struct rl_counters extra = { .new_sources = 2 };

	rate_test((const char *const[]){ "--rate", "1000byte", "--burst", "2000", NULL }, s,
		  ARRAY_SIZE(s), false, &extra, "bytes 1000/s burst 2000");
}

/* The cost is the whole frame, VLAN tags included. */
TEST_FLAGS(prog_bytes_vlan, RL_TEST_ROOT)
{
	const struct fspec qinq = { .tpid = { AD, Q }, .proto = ETH_P_IP, .src = A4, .len = 1000 };
	struct frame f;
	struct rl_prog p;

	if (!prog_start(&p, (const char *const[]){ "--rate", "1000byte", "--burst", "2000", NULL },
			NULL))
		return;
	build_frame(&f, &qinq);
	ASSERT_EQ(prog_run(&p, T0, &f), XDP_PASS, "qinq 1000 bytes, 2000 in the bucket");
	ASSERT_EQ(prog_run(&p, T0, &f), XDP_PASS, "qinq 1000 bytes, 1000 in the bucket");
	ASSERT_EQ(prog_run(&p, T0 + 999 * MSEC, &f), XDP_DROP,
		  "qinq 1000 bytes, 999 in the bucket");
	ASSERT_EQ(prog_run(&p, T0 + 1000 * MSEC, &f), XDP_PASS,
		  "qinq 1000 bytes, 1000 in the bucket");
	rl_prog_close(&p);
}

/* ------------------------------------------------------------------------ */
/* Kernel against simulate: random traces, verdict by verdict. */

static unsigned long long rng;

static __u64 rnd_below(__u64 n)
{
	return rl_rand_below(&rng, n);
}

struct sim_case {
	const char *name;
	const char *opts[16];
	__u64 gap; /* mean gap between packets, ns */
};

/*
 * Limits near what the traces offer (about ten sources, some sharing a
 * prefix), so that each run has both verdicts in good number.
 */
static const struct sim_case sim_cases[] = {
	{ "token-bucket pps",
	  { "--algo", "token-bucket", "--rate", "40", "--burst", "10", NULL },
	  2 * MSEC },
	{ "token-bucket pps, initial, /24",
	  { "--algo", "token-bucket", "--rate", "7.777", "--burst", "4", "--initial", "1",
	    "--prefix4", "24", NULL },
	  10 * MSEC },
	{ "token-bucket bytes",
	  { "--algo", "token-bucket", "--rate", "256kbit", "--burst", "6000", NULL },
	  2 * MSEC },
	{ "gcra pps", { "--algo", "gcra", "--rate", "40", "--burst", "8", NULL }, 2 * MSEC },
	{ "gcra pps, inexact rate",
	  { "--algo", "gcra", "--rate", "333.333333", "--burst", "4", "--prefix6", "48", NULL },
	  300000 },
	{ "gcra bytes",
	  { "--algo", "gcra", "--rate", "48kbyte", "--burst", "5000", "--prefix4", "24", NULL },
	  2 * MSEC },
	{ "fixed-window pps",
	  { "--algo", "fixed-window", "--rate", "40", "--window", "250ms", NULL },
	  2 * MSEC },
	{ "fixed-window bytes",
	  { "--algo", "fixed-window", "--rate", "40kbyte", "--window", "100ms", "--prefix6", "32",
	    NULL },
	  2 * MSEC },
	{ "sliding-window pps",
	  { "--algo", "sliding-window", "--rate", "30", "--window", "500ms", NULL },
	  2 * MSEC },
	{ "sliding-window bytes",
	  { "--algo", "sliding-window", "--rate", "320kbit", "--window", "50ms", "--prefix4", "16",
	    NULL },
	  2 * MSEC },
};

#define SIM_PACKETS 5000
#define SIM_SOURCES 10

static void sim_sources(char src[SIM_SOURCES][INET6_ADDRSTRLEN])
{
	static const unsigned int third[] = { 0, 1, 77 };
	static const unsigned int word[] = { 0, 0xa, 0xffff };

	for (int i = 0; i < SIM_SOURCES; i++) {
		/* Two link-local neighbours in one /64: keyed apart (rl_key.h). */
		if (i >= SIM_SOURCES - 2)
			snprintf(src[i], INET6_ADDRSTRLEN, "fe80::%x:%x",
				 (unsigned int)rnd_below(0x10000),
				 (unsigned int)rnd_below(0x10000));
		else if (i % 5 < 3)
			snprintf(src[i], INET6_ADDRSTRLEN, "198.%u.%u.%u",
				 18 + (unsigned int)rnd_below(2), third[rnd_below(3)],
				 1 + (unsigned int)rnd_below(254));
		else
			snprintf(src[i], INET6_ADDRSTRLEN, "2001:db8:%x:%x:%x:%x:%x:%x",
				 (unsigned int)rnd_below(2), word[rnd_below(3)],
				 (unsigned int)rnd_below(0x10000), (unsigned int)rnd_below(0x10000),
				 (unsigned int)rnd_below(0x10000),
				 (unsigned int)rnd_below(0x10000));
	}
}

static void sim_one(const struct sim_case *c, unsigned long long seed)
{
	char src[SIM_SOURCES][INET6_ADDRSTRLEN], err[RL_ERRLEN] = "";
	const char *const *opts = c->opts;
	struct rl_counters before, after;
	struct rl_policy pol;
	struct rl_config cfg;
	struct rl_sim sim;
	struct frame f;
	struct rl_prog p;
	__u64 t;

	rng = seed;
	sim_sources(src);
	/* The simulator's policy, from the same options. */
	if (!ASSERT_OK(rl_policy_parse(&pol, NULL, opts, err, sizeof(err)), err))
		return;
	if (!ASSERT_OK(rl_sim_init(&sim, &pol, err, sizeof(err)), err))
		return;
	if (!prog_start(&p, opts, &cfg))
		goto out_sim;
	if (!rl_prog_counters(&p, &before))
		goto out;
	t = SEC + rnd_below(1000000) * SEC;
	for (int n = 0; n < SIM_PACKETS; n++) {
		/* Skewed toward the first sources: some are hot, some idle. */
		unsigned int s = (unsigned int)rnd_below(SIM_SOURCES), s2;
		unsigned int len = 60 + (unsigned int)rnd_below(1514 - 60 + 1);
		unsigned int r = (unsigned int)rnd_below(100);
		struct rl_key key;
		int kv, sv;

		s2 = (unsigned int)rnd_below(SIM_SOURCES);
		s = s < s2 ? s : s2;
		if (r < 20)
			; /* back to back, same timestamp */
		else if (r < 94)
			t += rnd_below(2 * c->gap + 1);
		else if (r < 99)
			t = (t / MSEC + 1) * MSEC; /* on a ms boundary: window edges */
		else
			t += rnd_below(3 * SEC);
		ip_frame(&f, src[s], len);
		if (!ASSERT_OK(rl_key_parse(src[s], &key), src[s]))
			break;
		kv = prog_run(&p, t, &f);
		sv = rl_sim_packet(&sim, &key, t, len, NULL);
		if (kv < 0 || sv < 0 || (kv == XDP_PASS) != (sv == 1)) {
			rl_test_fail(
				__FILE__, __LINE__,
				"%s (RL_SEED=%llu): packet %d at %llu ns from %s, %u bytes: kernel %s, simulate %s",
				c->name, rl_test_seed(), n, (unsigned long long)t, src[s], len,
				verdict_name(kv),
				sv == 1 ? "pass" :
				sv == 0 ? "drop" :
					  "error");
			goto out;
		}
	}
	if (!rl_prog_counters(&p, &after))
		goto out;
	ASSERT_EQ(after.rx_packets - before.rx_packets, SIM_PACKETS, c->name);
	ASSERT_EQ(after.passed - before.passed, sim.passed, c->name);
	ASSERT_EQ(after.limited - before.limited, sim.dropped, c->name);
	ASSERT_EQ(after.new_sources - before.new_sources, sim.tab.count, c->name);
	/* RL_SIM_STATS=1 shows how hard each trace pushes its limit. */
	if (getenv("RL_SIM_STATS"))
		printf("    %s: %llu passed, %llu dropped, %zu sources\n", c->name,
		       (unsigned long long)sim.passed, (unsigned long long)sim.dropped,
		       sim.tab.count);
	/* A trace that never (or always) hits its limit would prove little. */
	ASSERT_LE(SIM_PACKETS / 20, sim.dropped, c->name);
	ASSERT_LE(SIM_PACKETS / 20, sim.passed, c->name);
out:
	rl_prog_close(&p);
out_sim:
	rl_sim_free(&sim);
}

TEST_FLAGS(prog_vs_sim, RL_TEST_ROOT)
{
	for (size_t i = 0; i < ARRAY_SIZE(sim_cases); i++)
		sim_one(&sim_cases[i], rl_test_seed() * 31 + i);
}

/* ------------------------------------------------------------------------ */
/* Live configuration change: the second config in slot 1, carrying state over. */

/* Build @opts on top of @prev and make it live in slot 1. */
static bool prog_set(struct rl_prog *p, const char *const *opts, const struct rl_config *prev,
		     struct rl_config *next)
{
	if (!rl_build_config(next, opts, prev))
		return false;
	if (!ASSERT_EQ(next->gen, prev->gen + 1, "next generation") ||
	    !ASSERT_EQ(next->has_prev, 1, "has_prev"))
		return false;
	return rl_prog_configure(p, 1, next);
}

/* Rate 10 -> 20, burst 5 both: the exhausted source stays limited, then refills at 20/s. */
TEST_FLAGS(prog_set_rate, RL_TEST_ROOT)
{
	static const struct step before_set[] = {
		{ T0, A4, 0, XDP_PASS, 5 },
		{ T0, A4, 0, XDP_DROP, 1 },
		{ T0, B4, 0, XDP_PASS, 2 },
	};
	static const struct step after_set[] = {
		{ T0, A4, 0, XDP_DROP, 1 },
		{ T0 + 50 * MSEC - 1, A4, 0, XDP_DROP, 1 },
		{ T0 + 50 * MSEC, A4, 0, XDP_PASS, 1 },
		{ T0 + 50 * MSEC, A4, 0, XDP_DROP, 1 },
		{ T0 + 100 * MSEC, A4, 0, XDP_PASS, 1 },
		/* B used 2 of 5 before the change: 3 left at T0, 2 more 100 ms later. */
		{ T0, B4, 0, XDP_PASS, 3 },
		{ T0, B4, 0, XDP_DROP, 1 },
		{ T0 + 100 * MSEC, B4, 0, XDP_PASS, 2 },
		{ T0 + 100 * MSEC, B4, 0, XDP_DROP, 1 },
		/* A new source starts with the new burst. */
		{ T0 + 100 * MSEC, "198.18.0.3", 0, XDP_PASS, 5 },
		{ T0 + 100 * MSEC, "198.18.0.3", 0, XDP_DROP, 1 },
	};
	struct rl_counters c0, c1, exp = { .new_sources = 3, .carried = 2 };
	struct rl_config first, second;
	struct rl_prog p;

	if (!prog_start(&p, (const char *const[]){ "--rate", "10", "--burst", "5", NULL }, &first))
		return;
	run_steps(&p, before_set, ARRAY_SIZE(before_set), false, NULL, "before set");
	if (!prog_set(&p, (const char *const[]){ "--rate", "20", "--burst", "5", NULL }, &first,
		      &second))
		goto out;
	if (!rl_prog_counters(&p, &c0))
		goto out;
	run_steps(&p, after_set, ARRAY_SIZE(after_set), false, &exp, "after set rate 10 -> 20");
	if (!rl_prog_counters(&p, &c1))
		goto out;
	check_delta(&c0, &c1, &exp, "after set rate 10 -> 20");
	ASSERT_TRUE(prog_tracks(&p, A4, 32, 64, 2), "A under generation 2");
	ASSERT_TRUE(prog_tracks(&p, A4, 32, 64, 1), "A under generation 1 (left to the migration)");
out:
	rl_prog_close(&p);
}

/*
 * Token bucket, burst 5 -> 20 -> 3 at the same rate: "a source keeps the
 * tokens it had, at most the new burst" (rl_carry_state()). One that had
 * none has none after the change, one that had 3 still has 3, one that had
 * 18 has 3 when the burst drops to 3.
 */
TEST_FLAGS(prog_set_burst, RL_TEST_ROOT)
{
	static const struct step before_set[] = {
		{ T0, A4, 0, XDP_PASS, 5 },
		{ T0, A4, 0, XDP_DROP, 1 },
		{ T0, B4, 0, XDP_PASS, 2 },
	};
	static const struct step after_up[] = {
		{ T0, A4, 0, XDP_DROP, 1 },	      { T0, B4, 0, XDP_PASS, 3 },
		{ T0, B4, 0, XDP_DROP, 1 },	      { T0, "198.18.0.3", 0, XDP_PASS, 20 },
		{ T0, "198.18.0.3", 0, XDP_DROP, 1 }, { T0, "198.18.0.4", 0, XDP_PASS, 2 },
	};
	static const struct step after_down[] = {
		{ T0, "198.18.0.4", 0, XDP_PASS, 3 },
		{ T0, "198.18.0.4", 0, XDP_DROP, 1 },
		{ T0, A4, 0, XDP_DROP, 1 },
		/* 3 at 10/s refill in 300 ms. */
		{ T0 + 300 * MSEC, A4, 0, XDP_PASS, 3 },
		{ T0 + 300 * MSEC, A4, 0, XDP_DROP, 1 },
	};
	struct rl_config first, second, third;
	struct rl_prog p;

	if (!prog_start(&p, (const char *const[]){ "--rate", "10", "--burst", "5", NULL }, &first))
		return;
	run_steps(&p, before_set, ARRAY_SIZE(before_set), false, NULL, "before set");
	if (!prog_set(&p, (const char *const[]){ "--rate", "10", "--burst", "20", NULL }, &first,
		      &second))
		goto out;
	run_steps(&p, after_up, ARRAY_SIZE(after_up), false, NULL, "after set burst 5 -> 20");
	/* The third configuration goes back into slot 0. */
	if (!rl_build_config(&third, (const char *const[]){ "--rate", "10", "--burst", "3", NULL },
			     &second) ||
	    !ASSERT_EQ(third.gen, 3, "third generation") || !rl_prog_configure(&p, 0, &third))
		goto out;
	run_steps(&p, after_down, ARRAY_SIZE(after_down), false, NULL, "after set burst 20 -> 3");
out:
	rl_prog_close(&p);
}

/* GCRA, burst 5 -> 10 and rate 10 -> 20: the queue level (in packets) is kept. */
TEST_FLAGS(prog_set_gcra, RL_TEST_ROOT)
{
	static const struct step before_set[] = {
		{ T0, A4, 0, XDP_PASS, 5 },
		{ T0, A4, 0, XDP_DROP, 1 },
		{ T0, B4, 0, XDP_PASS, 1 },
	};
	static const struct step after_set[] = {
		/* Level 5 of 10: five more. */
		{ T0, A4, 0, XDP_PASS, 5 },
		{ T0, A4, 0, XDP_DROP, 1 },
		/* Level 1 of 10: nine more. */
		{ T0, B4, 0, XDP_PASS, 9 },
		{ T0, B4, 0, XDP_DROP, 1 },
		/*
		 * The queue drains at 20/s: A's level is under 10 again 1 ns
		 * later; 10 + 1 - 1 ns then needs 50 ms more to go under 10.
		 */
		{ T0 + 1, A4, 0, XDP_PASS, 1 },
		{ T0 + 1, A4, 0, XDP_DROP, 1 },
		{ T0 + 50 * MSEC, A4, 0, XDP_DROP, 1 },
		{ T0 + 50 * MSEC + 1, A4, 0, XDP_PASS, 1 },
	};
	struct rl_counters c0, c1, exp = { .new_sources = 2, .carried = 2 };
	struct rl_config first, second;
	struct rl_prog p;

	if (!prog_start(
		    &p,
		    (const char *const[]){ "--algo", "gcra", "--rate", "10", "--burst", "5", NULL },
		    &first))
		return;
	run_steps(&p, before_set, ARRAY_SIZE(before_set), false, NULL, "before set");
	if (!prog_set(&p,
		      (const char *const[]){ "--algo", "gcra", "--rate", "20", "--burst", "10",
					     NULL },
		      &first, &second))
		goto out;
	if (!rl_prog_counters(&p, &c0))
		goto out;
	run_steps(&p, after_set, ARRAY_SIZE(after_set), false, &exp, "after set gcra");
	if (!rl_prog_counters(&p, &c1))
		goto out;
	check_delta(&c0, &c1, &exp, "after set gcra");
out:
	rl_prog_close(&p);
}

/* Fixed window, same window length: the count in the current window is kept. */
TEST_FLAGS(prog_set_window, RL_TEST_ROOT)
{
	static const struct step before_set[] = {
		{ T0, A4, 0, XDP_PASS, 10 },
		{ T0, A4, 0, XDP_DROP, 1 },
	};
	static const struct step after_set[] = {
		{ T0 + 1, A4, 0, XDP_PASS, 5 },
		{ T0 + 1, A4, 0, XDP_DROP, 1 },
		{ T0 + SEC, A4, 0, XDP_PASS, 15 },
		{ T0 + SEC, A4, 0, XDP_DROP, 1 },
	};
	struct rl_counters c0, c1, exp = { .new_sources = 1, .carried = 1 };
	struct rl_config first, second;
	struct rl_prog p;

	if (!prog_start(&p,
			(const char *const[]){ "--algo", "fixed-window", "--rate", "10", "--window",
					       "1s", NULL },
			&first))
		return;
	run_steps(&p, before_set, ARRAY_SIZE(before_set), false, NULL, "before set");
	if (!prog_set(&p,
		      (const char *const[]){ "--algo", "fixed-window", "--rate", "15", "--window",
					     "1s", NULL },
		      &first, &second))
		goto out;
	if (!rl_prog_counters(&p, &c0))
		goto out;
	run_steps(&p, after_set, ARRAY_SIZE(after_set), false, &exp,
		  "after set fixed-window 10 -> 15 per 1s");
	if (!rl_prog_counters(&p, &c1))
		goto out;
	check_delta(&c0, &c1, &exp, "after set fixed-window 10 -> 15 per 1s");
out:
	rl_prog_close(&p);
}

/* This CPU's window cache (struct rl_kcounters: win_k, win_start). */
static bool window_cache(struct rl_prog *p, int cpu, __u64 *k, __u64 *start)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rl_kcounters *per;
	__u32 zero = 0;
	bool ok;

	if (!ASSERT_TRUE(ncpu > cpu, "possible CPUs"))
		return false;
	per = calloc((size_t)ncpu, sizeof(*per));
	if (!ASSERT_TRUE(per, "calloc"))
		return false;
	ok = ASSERT_OK(bpf_map_lookup_elem(p->counters_fd, &zero, per), "read rl_counters");
	if (ok) {
		*k = per[cpu].win_k;
		*start = per[cpu].win_start;
	}
	free(per);
	return ok;
}

/*
 * The window algorithms take k from the CPU's last window while now is in
 * it (tick() in the XDP program): the pair must be checked against the
 * live W, not only against now. After a set from 1 s to 3 s windows, the
 * pair (5, 5 s) left by the 1 s policy would put 6.1 s in the same window
 * as 5.9 s (both less than 3 s past 5 s); in 3 s windows they are windows
 * 1 and 2. Pinned to one CPU, so that every packet meets the same cache.
 */
TEST_FLAGS(prog_window_cache_checked, RL_TEST_ROOT)
{
	static const struct step one_s[] = {
		{ T0 + 500 * MSEC, A4, 0, XDP_PASS, 10 },
		{ T0 + 600 * MSEC, A4, 0, XDP_DROP, 1 },
	};
	static const struct step three_s[] = {
		{ T0 + 900 * MSEC, "198.18.0.3", 0, XDP_PASS, 30 },
		{ T0 + 900 * MSEC, "198.18.0.3", 0, XDP_DROP, 1 },
		{ T0 + 1100 * MSEC, "198.18.0.3", 0, XDP_PASS, 30 },
		{ T0 + 1100 * MSEC, "198.18.0.3", 0, XDP_DROP, 1 },
		/* The clock going back: out of the cached window, recomputed. */
		{ T0 + 800 * MSEC, "198.18.0.4", 0, XDP_PASS, 30 },
		{ T0 + 800 * MSEC, "198.18.0.4", 0, XDP_DROP, 1 },
	};
	struct rl_config first, second;
	cpu_set_t one, old;
	__u64 k, start;
	struct rl_prog p;
	int cpu;

	if (!ASSERT_OK(sched_getaffinity(0, sizeof(old), &old), "affinity"))
		return;
	cpu = sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (!ASSERT_OK(sched_setaffinity(0, sizeof(one), &one), "pin to one CPU"))
		return;
	if (!prog_start(&p,
			(const char *const[]){ "--algo", "fixed-window", "--rate", "10", "--window",
					       "1s", NULL },
			&first))
		goto out_cpu;
	run_steps(&p, one_s, ARRAY_SIZE(one_s), false, NULL, "1 s windows");
	if (!window_cache(&p, cpu, &k, &start) || !ASSERT_EQ(k, 5, "cached window") ||
	    !ASSERT_EQ(start, 5 * SEC, "cached window start"))
		goto out;
	/* Nothing to carry between window lengths: no prog_set(), which expects has_prev. */
	if (!rl_build_config(&second,
			     (const char *const[]){ "--algo", "fixed-window", "--rate", "10",
						    "--window", "3s", NULL },
			     &first) ||
	    !rl_prog_configure(&p, 1, &second))
		goto out;
	run_steps(&p, three_s, ARRAY_SIZE(three_s), false, NULL, "3 s windows after 1 s");
	if (window_cache(&p, cpu, &k, &start)) {
		ASSERT_EQ(k, 1, "cached window after the clock went back");
		ASSERT_EQ(start, 3 * SEC, "its start");
	}
out:
	rl_prog_close(&p);
out_cpu:
	sched_setaffinity(0, sizeof(old), &old);
}

/* The name of @p's XDP program, as the kernel reports it, in @name; its length in instructions. */
static __u32 prog_name(const struct rl_prog *p, char *name, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);

	name[0] = 0;
	if (!ASSERT_OK(bpf_obj_get_info_by_fd(p->prog_fd, &info, &ilen), "program info"))
		return 0;
	snprintf(name, len, "%s", info.name);
	return info.xlated_prog_len / 8;
}

/*
 * A policy with no rule, no SYN cookies, no level above the source and
 * IPv4 in rl_sets4 loads xdp_ratelimit_b, whose object holds none of the
 * others' code (less to load, and for the verifier to remove); one with any
 * of them (rl_wide4 included) loads xdp_ratelimit. Either way set swaps one
 * for the other on the same maps.
 */
TEST_FLAGS(prog_basic_or_full, RL_TEST_ROOT)
{
	static const struct {
		const char *const opts[10];
		const char *name;
	} cases[] = {
		{ { "--rate", "100", "--burst", "10", NULL }, "xdp_ratelimit_b" },
		{ { "--rate", "100", "--algo", "sliding-window", NULL }, "xdp_ratelimit_b" },
		{ { "--rate", "100", "--aggregate4", "24", "--aggregate-rate", "1000", NULL },
		  "xdp_ratelimit" },
		{ { "--rate", "100", "--iface-rate", "100000", NULL }, "xdp_ratelimit" },
		{ { "--rate", "100", "--admit-rate", "1000", NULL }, "xdp_ratelimit" },
		{ { "--rate", "100", "--syn-cookies", "80", NULL }, "xdp_ratelimit" },
		/* A queue rl_sets4 cannot hold: rl_wide4, whose code only the full program has. */
		{ { "--rate", "10", "--algo", "gcra", "--burst", "100000", NULL },
		  "xdp_ratelimit" },
		{ { "--rate", "100", "--burst", "10", NULL }, "xdp_ratelimit_b" },
	};
	struct rl_config cfg, live;
	struct rl_prog p;
	char name[BPF_OBJ_NAME_LEN];
	__u32 basic = 0, full = 0, n, a;

	if (!rl_prog_load(&p, true, 4096))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (!rl_build_config(&cfg, cases[i].opts, NULL) || !rl_prog_configure(&p, 0, &cfg))
			break;
		n = prog_name(&p, name, sizeof(name));
		ASSERT_STREQ(name, cases[i].name, cases[i].opts[2]);
		if (i == 6 && ASSERT_OK(rl_config_read(&p.maps, &live, &a), "read the live policy"))
			ASSERT_EQ(live.table4, RL_TABLE4_WIDE, "the gcra queue is rl_wide4's");
		if (i == 0)
			basic = n;
		if (i == 5)
			full = n;
	}
	printf("    token-bucket: %u instructions; with SYN cookies: %u\n", basic, full);
	ASSERT_TRUE(basic && basic < full, "the basic program is the smaller");
	rl_prog_close(&p);
}
