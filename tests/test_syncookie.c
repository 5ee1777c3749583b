// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * SYN cookies in the XDP program (bpf/syncookie.h), through
 * BPF_PROG_TEST_RUN: a SYN in, the SYN-ACK out, checked field by field here
 * (checksums recomputed in userspace); the ACK that brings the cookie back,
 * a forged one, and options cut short or malformed.
 *
 *	syn_answer		IPv4, IPv6, one and two VLAN tags, with and without options
 *	syn_ack_cookie		the cookie's ACK goes on (limited), a wrong one is dropped
 *	syn_options_malformed	options cut short, zero sizes, overlong: answered, never read past
 *	syn_no_state		SYNs from 1000 sources leave the source tables empty
 *	syn_other_limited	UDP, TCP to another port, a VLAN tag: limited per source,
 *				never a SYN-cookie verdict
 *	syn_dry_run		a bad cookie in dry-run goes on, counted
 *	syn_rule		a syn-cookies rule between a deny and a limit rule
 *	syn_cli			--syn-proxy check and nft through attach, set, detach
 *	syn_e2e_flood		a SYN flood and 200 HTTP clients through a veth, with
 *				SYN cookies (asserted) and without (printed)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h"
#include "harness.h"
#include "rulemaps.h"
#include "rules.h"
#include "maps.h"
#include "netns.h"
#include "test.h"
#include "rl_syn.h"

#define ARRAY_SIZE(a)	 (sizeof(a) / sizeof((a)[0]))
#define TEST_MAX_SOURCES 16384
#define SYN_PORT	 8080
#define F_FIN		 0x01
#define F_SYN		 0x02
#define F_RST		 0x04
#define F_PSH		 0x08
#define F_ACK		 0x10
#define F_ECE		 0x40
#define F_CWR		 0x80

/* A TCP frame: Ethernet, @vlans tags, IPv4 or IPv6, TCP with @opts. */
struct tcpf {
	__u8 d[256];
	unsigned int len, l3, l4;
	int v6;
};

struct tcp_spec {
	const char *src; /* IPv4 or IPv6 */
	int vlans; /* 0, 1 or 2 tags */
	__u16 sport, dport;
	__u32 seq, ack;
	__u8 flags;
	const __u8 *opts; /* TCP options, padded to 4 bytes with EOLs */
	unsigned int optlen;
	unsigned int payload; /* bytes of data after the header */
};

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void put32(__u8 *p, __u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static __u32 get32(const __u8 *p)
{
	return (__u32)get16(p) << 16 | get16(p + 2);
}

static __u32 sum16(const __u8 *p, unsigned int len, __u32 sum)
{
	for (unsigned int i = 0; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (__u32)p[len - 1] << 8;
	return sum;
}

static __u16 fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* The TCP checksum over the pseudo header and @len bytes at l4: 0xffff when right. */
static __u16 tcp_sum(const struct tcpf *f, unsigned int len)
{
	__u32 s = 0;

	if (f->v6)
		s = sum16(f->d + f->l3 + 8, 32, 0);
	else
		s = sum16(f->d + f->l3 + 12, 8, 0);
	s += 6 + len;
	return fold(sum16(f->d + f->l4, len, s));
}

static bool build(struct tcpf *f, const struct tcp_spec *s)
{
	unsigned int optlen = (s->optlen + 3) & ~3U, tlen = 20 + optlen, n = 0;
	static const __u8 dst[6] = { 0x02, 0, 0, 0, 0, 0x02 }, srcm[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	__u8 *p = f->d;

	memset(f, 0, sizeof(*f));
	f->v6 = strchr(s->src, ':') != NULL;
	memcpy(p, dst, 6);
	memcpy(p + 6, srcm, 6);
	n = 12;
	for (int i = 0; i < s->vlans; i++) {
		put16(p + n, i == 0 && s->vlans == 2 ? ETH_P_8021AD : ETH_P_8021Q);
		put16(p + n + 2, (__u16)(100 + i));
		n += 4;
	}
	put16(p + n, f->v6 ? ETH_P_IPV6 : ETH_P_IP);
	n += 2;
	f->l3 = n;
	if (f->v6) {
		p[n] = 0x60;
		put16(p + n + 4, (__u16)(tlen + s->payload));
		p[n + 6] = 6;
		p[n + 7] = 64;
		if (inet_pton(AF_INET6, s->src, p + n + 8) != 1 ||
		    inet_pton(AF_INET6, "2001:db8::2", p + n + 24) != 1)
			return false;
		n += 40;
	} else {
		p[n] = 0x45;
		put16(p + n + 2, (__u16)(20 + tlen + s->payload));
		p[n + 8] = 64;
		p[n + 9] = 6;
		if (inet_pton(AF_INET, s->src, p + n + 12) != 1 ||
		    inet_pton(AF_INET, "198.18.0.2", p + n + 16) != 1)
			return false;
		put16(p + n + 10, (__u16)~fold(sum16(p + n, 20, 0)));
		n += 20;
	}
	f->l4 = n;
	put16(p + n, s->sport);
	put16(p + n + 2, s->dport);
	put32(p + n + 4, s->seq);
	put32(p + n + 8, s->ack);
	p[n + 12] = (__u8)((tlen / 4) << 4);
	p[n + 13] = s->flags;
	put16(p + n + 14, 64240);
	if (s->optlen)
		memcpy(p + n + 20, s->opts, s->optlen);
	f->len = n + tlen + s->payload;
	put16(p + n + 16, (__u16)~tcp_sum(f, tlen + s->payload));
	return f->len <= sizeof(f->d);
}

/* Run @in; the verdict, the frame out in *@out. */
static int run(struct rl_prog *p, const struct tcpf *in, struct tcpf *out)
{
	__u8 buf[512];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in->d, .data_size_in = in->len,
		    .data_out = buf, .data_size_out = sizeof(buf), .repeat = 1);
	__u32 zero = 0;
	__u64 now = 1000000000ULL;
	int err;

	if (bpf_map_update_elem(p->clock_fd, &zero, &now, BPF_ANY))
		return -errno;
	err = bpf_prog_test_run_opts(p->prog_fd, &o);
	if (err)
		return err;
	if (out) {
		*out = *in;
		memset(out->d, 0, sizeof(out->d));
		memcpy(out->d, buf, o.data_size_out < sizeof(out->d) ? o.data_size_out : 0);
		out->len = o.data_size_out;
	}
	return (int)o.retval;
}

static bool start(struct rl_prog *p, const char *const *opts)
{
	struct rl_config cfg;

	if (!rl_build_config(&cfg, opts, NULL) || !rl_prog_load(p, true, TEST_MAX_SOURCES))
		return false;
	if (!rl_prog_configure(p, 0, &cfg)) {
		rl_prog_close(p);
		return false;
	}
	return true;
}

static const char *const syn_opts[] = { "--rate", "1000", "--syn-cookies", "22,8000-8099", NULL };

/* Linux's SYN options: MSS 1460, SACK permitted, timestamps, NOP, window scale 7. */
static const __u8 linux_opts[] = { 2,	 4,    0x05, 0xb4, 4, 2, 8, 10, 0x11, 0x22,
				   0x33, 0x44, 0,    0,	   0, 0, 1, 3,	3,    7 };

/*
 * Check the SYN-ACK @out answers @in: addresses, ports, numbers, flags,
 * checksums, the options (@ts: a timestamp option with the client's values;
 * @ws: the client's window scale, 0xf none; @sack). The cookie in *@cookie.
 */
static bool check_synack(const struct tcpf *in, const struct tcpf *out, bool ts, int ws, bool sack,
			 __u32 *cookie)
{
	const __u8 *o = out->d + out->l4 + 20;
	unsigned int iplen = in->v6 ? 40 : 20;
	bool ok = true;
	__u32 tsval;

	ok &= ASSERT_EQ(out->len, in->l3 + iplen + RL_SYN_TCP_LEN, "SYN-ACK length");
	if (!ok)
		return false;
	ok &= ASSERT_TRUE(!memcmp(out->d, in->d + 6, 6) && !memcmp(out->d + 6, in->d, 6),
			  "MACs swapped");
	ok &= ASSERT_TRUE(!memcmp(out->d + 12, in->d + 12, in->l3 - 12), "VLAN tags kept");
	if (in->v6) {
		ok &= ASSERT_TRUE(!memcmp(out->d + out->l3 + 8, in->d + in->l3 + 24, 16) &&
					  !memcmp(out->d + out->l3 + 24, in->d + in->l3 + 8, 16),
				  "IPv6 addresses swapped");
		ok &= ASSERT_EQ(get16(out->d + out->l3 + 4), RL_SYN_TCP_LEN, "payload length");
		ok &= ASSERT_EQ(out->d[out->l3 + 6], 6, "next header");
		ok &= ASSERT_EQ(out->d[out->l3 + 7], RL_SYN_DEFAULT_TTL, "hop limit");
	} else {
		ok &= ASSERT_TRUE(!memcmp(out->d + out->l3 + 12, in->d + in->l3 + 16, 4) &&
					  !memcmp(out->d + out->l3 + 16, in->d + in->l3 + 12, 4),
				  "IPv4 addresses swapped");
		ok &= ASSERT_EQ(out->d[out->l3], 0x45, "IPv4 version and IHL");
		ok &= ASSERT_EQ(get16(out->d + out->l3 + 2), 20 + RL_SYN_TCP_LEN, "total length");
		ok &= ASSERT_EQ(out->d[out->l3 + 8], RL_SYN_DEFAULT_TTL, "TTL");
		ok &= ASSERT_EQ(fold(sum16(out->d + out->l3, 20, 0)), 0xffff, "IPv4 checksum");
	}
	ok &= ASSERT_EQ(get16(out->d + out->l4), get16(in->d + in->l4 + 2), "source port");
	ok &= ASSERT_EQ(get16(out->d + out->l4 + 2), get16(in->d + in->l4), "destination port");
	ok &= ASSERT_EQ(get32(out->d + out->l4 + 8), get32(in->d + in->l4 + 4) + 1,
			"ack = seq + 1");
	ok &= ASSERT_EQ(out->d[out->l4 + 12] >> 4, RL_SYN_TCP_LEN / 4, "data offset");
	ok &= ASSERT_EQ(out->d[out->l4 + 13] & (F_SYN | F_ACK | F_RST | F_FIN), F_SYN | F_ACK,
			"flags SYN ACK");
	ok &= ASSERT_EQ(get16(out->d + out->l4 + 14), 0, "window 0");
	ok &= ASSERT_EQ(tcp_sum(out, RL_SYN_TCP_LEN), 0xffff, "TCP checksum");
	ok &= ASSERT_TRUE(o[0] == 2 && o[1] == 4, "MSS option first");
	ok &= ASSERT_EQ(get16(o + 2), in->v6 ? RL_SYN_DEFAULT_MSS6 : RL_SYN_DEFAULT_MSS4,
			"MSS advertised");
	if (ts) {
		ok &= ASSERT_TRUE(o[6] == 8 && o[7] == 10, "timestamp option");
		ok &= ASSERT_TRUE(sack ? o[4] == 4 && o[5] == 2 : o[4] == 1 && o[5] == 1,
				  "SACK-permitted or NOPs before it");
		tsval = get32(o + 8);
		ok &= ASSERT_EQ(get32(o + 12), 0x11223344, "TSecr echoes the client's TSval");
		ok &= ASSERT_EQ(tsval & RL_SYN_TS_WSCALE, (__u32)ws, "window scale in TSval");
		ok &= ASSERT_EQ(!!(tsval & RL_SYN_TS_SACK), sack, "SACK in TSval");
		if (ws != 0xf)
			ok &= ASSERT_TRUE(o[16] == 1 && o[17] == 3 && o[18] == 3 &&
						  o[19] == RL_SYN_DEFAULT_WSCALE,
					  "window scale option");
		else
			ok &= ASSERT_TRUE(!o[16] && !o[17] && !o[18] && !o[19], "no window scale");
	} else {
		for (int i = 4; i < 20; i++)
			ok &= ASSERT_EQ(o[i], 0, "no option past the MSS without timestamps");
	}
	*cookie = get32(out->d + out->l4 + 4);
	return ok;
}

static bool counters(struct rl_prog *p, struct rl_counters *c)
{
	return ASSERT_TRUE(rl_prog_counters(p, c), "counters");
}

/* The ACK @syn's client sends back for @cookie: ack = cookie + 1. */
static bool ack_for(struct tcpf *f, const struct tcp_spec *syn, __u32 cookie, __u8 flags,
		    unsigned int payload)
{
	struct tcp_spec s = *syn;

	s.seq = syn->seq + 1;
	s.ack = cookie + 1;
	s.flags = flags;
	s.opts = NULL;
	s.optlen = 0;
	s.payload = payload;
	return build(f, &s);
}

TEST_FLAGS(syn_answer, RL_TEST_ROOT)
{
	static const struct {
		const char *src;
		int vlans;
		bool opts;
	} cases[] = {
		{ "198.18.0.1", 0, true },  { "198.18.0.1", 0, false }, { "198.18.0.1", 1, true },
		{ "198.18.0.1", 2, false }, { "2001:db8::1", 0, true }, { "2001:db8::1", 0, false },
		{ "2001:db8::1", 2, true },
	};
	struct rl_counters c;
	struct rl_prog p;
	__u32 cookie;

	if (!start(&p, syn_opts))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tcp_spec s = { .src = cases[i].src,
				      .vlans = cases[i].vlans,
				      .sport = 40000,
				      .dport = 8042,
				      .seq = 0x12345678 + (__u32)i,
				      .flags = F_SYN,
				      .opts = cases[i].opts ? linux_opts : NULL,
				      .optlen = cases[i].opts ? sizeof(linux_opts) : 0 };
		struct tcpf in, out;
		int v;

		if (!ASSERT_TRUE(build(&in, &s), "frame"))
			break;
		v = run(&p, &in, &out);
		if (!ASSERT_EQ(v, XDP_TX, "a SYN to a protected port is answered"))
			continue;
		check_synack(&in, &out, cases[i].opts, cases[i].opts ? 7 : 0xf, cases[i].opts,
			     &cookie);
	}
	/* A SYN to another port goes to the per-source step, and makes a source. */
	{
		struct tcp_spec s = {
			.src = "198.18.0.9", .sport = 1, .dport = 8100, .flags = F_SYN
		};
		struct tcpf in;

		if (ASSERT_TRUE(build(&in, &s), "frame"))
			ASSERT_EQ(run(&p, &in, NULL), XDP_PASS,
				  "SYN to an unprotected port passes");
	}
	if (counters(&p, &c)) {
		ASSERT_EQ(c.syncookies_sent, ARRAY_SIZE(cases), "syncookies_sent");
		ASSERT_EQ(c.new_sources, 1, "only the unprotected SYN made a source");
		ASSERT_EQ(c.rx_packets, ARRAY_SIZE(cases) + 1, "rx counts the answered SYNs");
		ASSERT_EQ(c.passed, 1, "passed");
		ASSERT_EQ(c.dropped, 0, "dropped");
		ASSERT_EQ(c.ipv4 + c.ipv6, 1, "the answered SYNs are neither ipv4 nor ipv6");
	}
	rl_prog_close(&p);
}

TEST_FLAGS(syn_ack_cookie, RL_TEST_ROOT)
{
	static const char *const srcs[] = { "198.18.0.1", "2001:db8::1" };
	struct rl_counters c;
	struct rl_prog p;
	int valid = 0, invalid = 0;

	if (!start(&p, syn_opts))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(srcs); i++) {
		for (int vlans = 0; vlans < 2; vlans++) {
			struct tcp_spec s = { .src = srcs[i],
					      .vlans = vlans,
					      .sport = 40001,
					      .dport = 22,
					      .seq = 1000,
					      .flags = F_SYN,
					      .opts = linux_opts,
					      .optlen = sizeof(linux_opts) };
			struct tcpf in, out, ack;
			__u32 cookie = 0;

			if (!ASSERT_TRUE(build(&in, &s), "frame") ||
			    !ASSERT_EQ(run(&p, &in, &out), XDP_TX, "SYN answered") ||
			    !check_synack(&in, &out, true, 7, true, &cookie))
				continue;
			/* The ACK with the cookie; then one with data (the client's first segment). */
			ack_for(&ack, &s, cookie, F_ACK, 0);
			valid += ASSERT_EQ(run(&p, &ack, NULL), XDP_PASS, "valid cookie goes on");
			ack_for(&ack, &s, cookie, F_ACK | F_PSH, 100);
			valid += ASSERT_EQ(run(&p, &ack, NULL), XDP_PASS, "data with the cookie");
			/* Forged: another cookie, another client port, a RST, a bare FIN. */
			ack_for(&ack, &s, cookie ^ 0x5a5a, F_ACK, 0);
			invalid += ASSERT_EQ(run(&p, &ack, NULL), XDP_DROP, "wrong cookie dropped");
			s.sport++;
			ack_for(&ack, &s, cookie, F_ACK, 0);
			invalid += ASSERT_EQ(run(&p, &ack, NULL), XDP_DROP,
					     "cookie of another connection dropped");
			ack_for(&ack, &s, cookie, F_RST | F_ACK, 0);
			invalid += ASSERT_EQ(run(&p, &ack, NULL), XDP_DROP, "RST dropped");
			ack_for(&ack, &s, cookie, F_FIN, 0);
			invalid += ASSERT_EQ(run(&p, &ack, NULL), XDP_DROP, "FIN dropped");
		}
	}
	if (counters(&p, &c)) {
		ASSERT_EQ(c.syncookies_sent, 4, "syncookies_sent");
		ASSERT_EQ(c.syncookies_valid, (__u64)valid, "syncookies_valid");
		ASSERT_EQ(c.syncookies_invalid, (__u64)invalid, "syncookies_invalid");
		ASSERT_EQ(c.dropped, (__u64)invalid, "invalid ones dropped");
		/* The valid ACKs went through the per-source step: one source per address. */
		ASSERT_EQ(c.new_sources, 2, "the valid ACKs' sources");
		ASSERT_EQ(c.passed, (__u64)valid, "passed");
	}
	rl_prog_close(&p);
}

TEST_FLAGS(syn_options_malformed, RL_TEST_ROOT)
{
	/* Each a TCP option area (padded with EOL to 4 bytes); none must be read past its end. */
	static const struct {
		__u8 o[40];
		unsigned int len;
		bool ts; /* a whole timestamp option before the damage */
	} cases[] = {
		{ { 8, 10, 0x11, 0x22 }, 4, false }, /* timestamp cut by the header's end */
		{ { 2, 0 }, 2, false }, /* size 0 */
		{ { 3, 1 }, 2, false }, /* size 1 */
		{ { 2, 255, 1, 1 }, 4, false }, /* size past the header */
		{ { 1, 1, 1, 8 }, 4, false }, /* a kind with no size byte */
		{ { 8, 10, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, 3, 40 }, 12, true }, /* then bad */
		{ { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
		  40,
		  false }, /* 40 NOPs */
		{ { 3, 3, 200, 0 }, 4, false }, /* window scale over 14, no timestamps */
		{ { 8, 9, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, 0, 0 }, 12, false }, /* TS size 9 */
	};
	struct rl_counters c;
	struct rl_prog p;
	__u32 cookie;

	if (!start(&p, syn_opts))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tcp_spec s = { .src = "198.18.0.3",
				      .sport = 40002,
				      .dport = 8000,
				      .seq = 77,
				      .flags = F_SYN,
				      .opts = cases[i].o,
				      .optlen = cases[i].len };
		struct tcpf in, out;

		if (!ASSERT_TRUE(build(&in, &s), "frame"))
			break;
		if (!ASSERT_EQ(run(&p, &in, &out), XDP_TX, "answered whatever the options"))
			continue;
		check_synack(&in, &out, cases[i].ts, 0xf, false, &cookie);
	}
	/* Cut short: the frame ends inside the options (the TCP header claims more). */
	{
		struct tcp_spec s = { .src = "198.18.0.3",
				      .sport = 40003,
				      .dport = 8000,
				      .flags = F_SYN,
				      .opts = linux_opts,
				      .optlen = sizeof(linux_opts) };
		struct tcpf in;

		if (ASSERT_TRUE(build(&in, &s), "frame")) {
			in.len -= 10;
			ASSERT_TRUE(run(&p, &in, NULL) >= 0, "a cut SYN runs");
		}
	}
	if (counters(&p, &c))
		ASSERT_EQ(c.syncookies_sent, ARRAY_SIZE(cases), "syncookies_sent");
	rl_prog_close(&p);
}

/* Count the sources in the IPv4 and IPv6 tables. */
static unsigned int sources(struct rl_prog *p)
{
	struct rl_counters c;

	return rl_prog_counters(p, &c) ? (unsigned int)c.new_sources : ~0U;
}

TEST_FLAGS(syn_no_state, RL_TEST_ROOT)
{
	struct rl_counters c;
	struct rl_prog p;
	char src[64];

	if (!start(&p, syn_opts))
		return;
	for (int i = 0; i < 1000; i++) {
		struct tcp_spec s = { .src = src,
				      .sport = (__u16)(1024 + i),
				      .dport = 22,
				      .seq = (__u32)i * 7919,
				      .flags = F_SYN };
		struct tcpf in;

		if (i & 1)
			snprintf(src, sizeof(src), "198.18.%d.%d", i >> 8, i & 255);
		else
			snprintf(src, sizeof(src), "2001:db8:%x::1", i);
		if (!ASSERT_TRUE(build(&in, &s), "frame") ||
		    !ASSERT_EQ(run(&p, &in, NULL), XDP_TX, "SYN answered"))
			break;
	}
	ASSERT_EQ(sources(&p), 0, "no source made by SYNs");
	if (counters(&p, &c))
		ASSERT_EQ(c.syncookies_sent, 1000, "1000 SYNs answered");
	rl_prog_close(&p);
}

/*
 * What --syn-cookies does not look at (UDP, even to a protected port; TCP to
 * another port; IPv4, IPv6, behind a VLAN tag) goes past the step to its
 * source's limit: syn_first() answers for untagged frames in line, a tagged
 * one through rl_syn_step(). Each kind from its own source, 6 frames against
 * a burst of 4 at a clock that does not move: 4 pass, 2 are limited.
 */
TEST_FLAGS(syn_other_limited, RL_TEST_ROOT)
{
	static const char *const opts[] = { "--rate",	     "1000", "--burst", "4",
					    "--syn-cookies", "22",   NULL };
	static const struct {
		const char *src;
		int vlans, udp;
		__u16 dport;
	} kinds[] = {
		{ "198.18.1.1", 0, 1, 22 },	 { "198.18.1.2", 0, 0, 9000 },
		{ "198.18.1.3", 1, 1, 22 },	 { "2001:db8:1::1", 0, 1, 22 },
		{ "2001:db8:2::1", 0, 0, 9000 }, { "2001:db8:3::1", 2, 0, 9000 },
	};
	struct rl_counters c;
	struct rl_prog p;

	if (!start(&p, opts))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		struct tcp_spec s = { .src = kinds[i].src,
				      .vlans = kinds[i].vlans,
				      .sport = 40000,
				      .dport = kinds[i].dport,
				      .flags = F_ACK };
		struct tcpf in;

		if (!ASSERT_TRUE(build(&in, &s), "frame"))
			break;
		/* The same ports, as UDP: the protocol's byte, the checksum unread. */
		if (kinds[i].udp)
			in.d[in.l3 + (in.v6 ? 6 : 9)] = 17;
		for (int k = 0; k < 6; k++)
			if (!ASSERT_EQ(run(&p, &in, NULL), k < 4 ? XDP_PASS : XDP_DROP,
				       kinds[i].src))
				break;
	}
	if (counters(&p, &c)) {
		ASSERT_EQ(c.new_sources, ARRAY_SIZE(kinds), "a source for each kind");
		ASSERT_EQ(c.passed, 4 * ARRAY_SIZE(kinds), "passed");
		ASSERT_EQ(c.limited, 2 * ARRAY_SIZE(kinds), "limited");
		ASSERT_EQ(c.syncookies_sent + c.syncookies_invalid + c.syncookies_valid, 0,
			  "no SYN-cookie verdict");
	}
	rl_prog_close(&p);
}

TEST_FLAGS(syn_dry_run, RL_TEST_ROOT)
{
	static const char *const opts[] = { "--rate",  "1000", "--syn-cookies", "22", "--action",
					    "dry-run", NULL };
	struct tcp_spec s = {
		.src = "198.18.0.4", .sport = 5, .dport = 22, .flags = F_ACK, .ack = 9
	};
	struct rl_counters c;
	struct rl_prog p;
	struct tcpf in;

	if (!start(&p, opts))
		return;
	if (ASSERT_TRUE(build(&in, &s), "frame"))
		ASSERT_EQ(run(&p, &in, NULL), XDP_PASS, "a bad cookie goes on in dry-run");
	if (counters(&p, &c)) {
		ASSERT_EQ(c.syncookies_invalid, 1, "counted invalid");
		ASSERT_EQ(c.would_drop, 1, "and would-drop");
		ASSERT_EQ(c.dropped, 0, "not dropped");
	}
	rl_prog_close(&p);
}

/* A rule set made live on @p (as a change does), from "NAME OPTIONS" lines. */
static bool rules_live(struct rl_prog *p, const struct rl_config *def, const char *const *lines)
{
	struct rl_rules_cfg old, cfg;
	char err[RL_ERRLEN] = "";
	struct rl_ruleset set;
	struct rl_policy pol;
	struct rl_opts o;
	bool ok = false;

	rl_config_policy(def, &pol, &o);
	if (!ASSERT_OK(rl_ruleset_init(&set, &pol, &o, err, sizeof(err)), err))
		return false;
	for (; *lines; lines++) {
		char *copy = strdup(*lines), *save = NULL, *words[32];
		struct rl_rule r;
		size_t n = 0;
		int ret;

		for (char *t = strtok_r(copy, " ", &save); t && n < ARRAY_SIZE(words) - 1;
		     t = strtok_r(NULL, " ", &save))
			words[n++] = t;
		words[n] = NULL;
		ret = rl_rule_parse(&r, NULL, (const char *const *)words, err, sizeof(err));
		if (!ret && (ret = rl_ruleset_add(&set, &r, NULL, err, sizeof(err))))
			rl_rule_free(&r);
		free(copy);
		if (!ASSERT_OK(ret, err))
			goto out;
	}
	ok = ASSERT_OK(rl_rules_read(&p->maps, &old), "read rules") &&
	     ASSERT_OK(rl_rules_compile(&set, &old, &cfg, err, sizeof(err)), err) &&
	     ASSERT_OK(rl_rules_fill(&p->maps, &set, &cfg, &old, NULL, err, sizeof(err)), err) &&
	     ASSERT_OK(rl_rules_commit(&p->maps, &cfg, err, sizeof(err)), err) &&
	     rl_prog_configure(p, 0, def);
out:
	rl_ruleset_free(&set);
	return ok;
}

/*
 * A syn-cookies rule between a deny rule and a limit rule on the same port:
 * a denied source gets no SYN-ACK, a SYN is answered, the cookie's ACK goes
 * on to the limit rule, a forged one is dropped and counted by the rule.
 */
TEST_FLAGS(syn_rule, RL_TEST_ROOT)
{
	static const char *const def[] = { "--rate", "1000", "--burst", "1000", NULL };
	static const char *const rules[] = {
		"deny9 --src 198.18.9.0/24 --deny",
		"web --proto tcp --dport 443 --syn-cookies",
		"lim --proto tcp --dport 443 --rate 1 --burst 1",
		NULL,
	};
	struct tcp_spec s = { .src = "198.18.0.1",
			      .sport = 40000,
			      .dport = 443,
			      .seq = 5,
			      .flags = F_SYN,
			      .opts = linux_opts,
			      .optlen = sizeof(linux_opts) };
	struct rl_rule_counters rc;
	struct tcpf in, out, ack;
	struct rl_counters c;
	struct rl_config cfg;
	struct rl_prog p;
	__u32 cookie = 0;

	if (!rl_build_config(&cfg, def, NULL) || !rl_prog_load(&p, true, TEST_MAX_SOURCES))
		return;
	if (!rules_live(&p, &cfg, rules))
		goto out;
	if (ASSERT_TRUE(build(&in, &s), "frame") &&
	    ASSERT_EQ(run(&p, &in, &out), XDP_TX, "SYN answered by the rule"))
		check_synack(&in, &out, true, 7, true, &cookie);
	ack_for(&ack, &s, cookie, F_ACK, 0);
	ASSERT_EQ(run(&p, &ack, NULL), XDP_PASS, "the cookie's ACK goes on, within lim");
	ack_for(&ack, &s, cookie, F_ACK | F_PSH, 10);
	ASSERT_EQ(run(&p, &ack, NULL), XDP_DROP, "the next is over lim's 1/s");
	ack_for(&ack, &s, cookie + 7, F_ACK, 0);
	ASSERT_EQ(run(&p, &ack, NULL), XDP_DROP, "a forged cookie is dropped");
	s.src = "198.18.9.5";
	if (ASSERT_TRUE(build(&in, &s), "frame"))
		ASSERT_EQ(run(&p, &in, NULL), XDP_DROP, "a denied source gets no SYN-ACK");
	s.src = "198.18.0.1";
	s.dport = 80;
	if (ASSERT_TRUE(build(&in, &s), "frame"))
		ASSERT_EQ(run(&p, &in, NULL), XDP_PASS, "a SYN to another port: default");
	if (counters(&p, &c)) {
		ASSERT_EQ(c.syncookies_sent, 1, "syncookies_sent");
		ASSERT_EQ(c.syncookies_valid, 2, "syncookies_valid");
		ASSERT_EQ(c.syncookies_invalid, 1, "syncookies_invalid");
	}
	/* The rules in slot order: deny9 0, web 1, lim 2. */
	if (ASSERT_OK(rl_rules_counters(&p.maps, 1, &rc), "web's counters")) {
		ASSERT_EQ(rc.denied, 1, "web: the forged ACK, denied");
		ASSERT_EQ(rc.dropped, 1, "web: dropped");
		ASSERT_EQ(rc.passed, 0, "web passes nothing itself");
	}
	if (ASSERT_OK(rl_rules_counters(&p.maps, 2, &rc), "lim's counters")) {
		ASSERT_EQ(rc.passed, 1, "lim passed the first ACK");
		ASSERT_EQ(rc.limited, 1, "and limited the second");
	}
out:
	rl_prog_close(&p);
}

/* ------------------------------------------------------------------------ */
/*
 * End to end: an HTTP server (python3 -m http.server) in the receiving
 * namespace behind the limiter, a SYN flood at its port from random sources
 * of 198.18.0.0/16 (trafgen: hping3 --rand-source would draw from all of
 * IPv4, and test traffic keeps to 198.18.0.0/15), and meanwhile 200 HTTP
 * requests from 198.18.0.1 (python3 http.client, a new connection each).
 */
#define E2E_PORT    8080
#define E2E_CLIENTS 200

struct e2e {
	unsigned long ok; /* requests answered */
	unsigned long long drops, overflows; /* TcpExtListenDrops, TcpExtListenOverflows */
	unsigned long long sources_before, sources_after;
	struct rl_counters c;
	long flood_sent;
};

/* A number after @key in @text ("TcpExtListenDrops    3   0.0"). */
static unsigned long long field_after(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;

	return p ? strtoull(p + strlen(key), NULL, 10) : ~0ULL;
}

static unsigned long long stats_sources(struct rl_ns *ns)
{
	unsigned long long v = ~0ULL;
	char *out = NULL;

	if (!rl_ns_cli(ns, &out, NULL, "stats %s --json", ns->rx_if))
		rl_json_u64(out, "sources", &v);
	free(out);
	return v;
}

/* argv: connections, threads; prints how many got their 200. */
static const char client_py[] =
	"import http.client, sys, threading\n"
	"n, t, ok, lock = int(sys.argv[1]), int(sys.argv[2]), [0], threading.Lock()\n"
	"def run(k):\n"
	"    for i in range(k):\n"
	"        try:\n"
	"            c = http.client.HTTPConnection('" RL_NS_RX_ADDR4 "', %d, timeout=3)\n"
	"            c.request('GET', '/')\n"
	"            r = c.getresponse()\n"
	"            r.read()\n"
	"            c.close()\n"
	"            with lock:\n"
	"                ok[0] += r.status == 200\n"
	"        except Exception:\n"
	"            pass\n"
	"th = [threading.Thread(target=run, args=(n // t,)) for _ in range(t)]\n"
	"[x.start() for x in th]\n"
	"[x.join() for x in th]\n"
	"print(ok[0])\n";

static unsigned long long nstat_get(struct rl_ns *ns, const char *key)
{
	unsigned long long v;
	char *out = NULL;

	/* -s: absolute counters, and no history file (/tmp/.nstat.u$UID) left behind. */
	rl_ns_rx_sh(ns, &out, "nstat -azs %s", key);
	v = field_after(out, key);
	free(out);
	return v;
}

/*
 * One run on @ns, whose HTTP server listens: attach (@syn: --syn-cookies),
 * the flood for @flood_s seconds and the clients within it, detach.
 */
static bool e2e_run(struct rl_ns *ns, const char *script, bool syn, unsigned int flood_s,
		    struct e2e *r)
{
	struct rl_flow f = { .src = "198.18.0.0",
			     .rand_bytes = 2,
			     .syn_dport = E2E_PORT,
			     .count = 50000000,
			     .limit_s = flood_s + 5 };
	unsigned long long drops, overflows;
	struct rl_counters base;
	char *out = NULL;
	bool ok = false;
	double t0;

	memset(r, 0, sizeof(*r));
	if (!ASSERT_EQ(
		    rl_ns_cli(
			    ns, NULL, NULL,
			    "attach %s --rate 20000 --burst 20000 --max-sources 131072 --mode skb%s",
			    ns->rx_if, syn ? " --syn-cookies 8080" : ""),
		    0, "attach"))
		return false;
	drops = nstat_get(ns, "TcpExtListenDrops");
	overflows = nstat_get(ns, "TcpExtListenOverflows");
	r->sources_before = stats_sources(ns);
	if (!ASSERT_OK(rl_ns_counters(ns, &base), "counters") ||
	    !ASSERT_OK(rl_flow_start(ns, &f), "SYN flood"))
		goto out;
	t0 = rl_now();
	/*
	 * The clients once the flood runs, 4 at a time (http.server listens with a
	 * backlog of 5); the flood goes on until @flood_s.
	 */
	usleep(500000);
	rl_sh(&out, "ip netns exec %s timeout 20 python3 %s %d 4", ns->tx, script, E2E_CLIENTS);
	r->ok = out ? strtoul(out, NULL, 10) : 0;
	free(out);
	while (rl_now() < t0 + flood_s && !rl_flow_done(&f))
		usleep(50000);
	rl_flow_stop(&f);
	if (!ASSERT_OK(rl_ns_counters(ns, &r->c), "counters"))
		goto out;
	for (size_t i = 0; i < sizeof(r->c) / sizeof(__u64); i++)
		((__u64 *)&r->c)[i] -= ((__u64 *)&base)[i];
	r->sources_after = stats_sources(ns);
	r->drops = nstat_get(ns, "TcpExtListenDrops") - drops;
	r->overflows = nstat_get(ns, "TcpExtListenOverflows") - overflows;
	ok = true;
out:
	rl_flow_stop(&f);
	ASSERT_EQ(rl_ns_cli(ns, NULL, NULL, "detach %s", ns->rx_if), 0, "detach");
	return ok;
}

/* The flood's length with SYN cookies on, and off (only printed). */
#define E2E_ON_S  4
#define E2E_OFF_S 2

TEST_FLAGS(syn_e2e_flood, RL_TEST_ROOT)
{
	char dir[] = "/tmp/rl-syn-XXXXXX", script[64] = "", *out = NULL;
	struct rl_ns ns = {};
	struct e2e on, off;
	long server = 0;
	FILE *sf;

	if (rl_run("command -v python3 >/dev/null && command -v trafgen >/dev/null && "
		   "command -v nstat >/dev/null && command -v nft >/dev/null",
		   NULL, NULL)) {
		rl_test_skip("python3, trafgen, nstat or nft is not installed (make deps)");
		return;
	}
	if (!ASSERT_TRUE(mkdtemp(dir) != NULL, "temporary directory"))
		return;
	snprintf(script, sizeof(script), "%s/client.py", dir);
	sf = fopen(script, "w");
	if (!ASSERT_TRUE(sf != NULL, "client script"))
		goto out;
	fprintf(sf, client_py, E2E_PORT);
	fclose(sf);
	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		goto out;
	rl_sh(&out,
	      "cd %s && ip netns exec %s timeout %u python3 -m http.server %d --bind %s "
	      ">/dev/null 2>&1 & echo $!",
	      dir, ns.rx, E2E_ON_S + E2E_OFF_S + 30, E2E_PORT, RL_NS_RX_ADDR4);
	server = out ? strtol(out, NULL, 10) : 0;
	free(out);
	if (!ASSERT_TRUE(server > 0, "HTTP server started"))
		goto out;
	for (int i = 0; i < 100; i++) {
		if (!rl_ns_rx_sh(&ns, NULL, "ss -Hltn sport = :%d | grep -q LISTEN", E2E_PORT))
			break;
		usleep(50000);
	}
	if (!e2e_run(&ns, script, true, E2E_ON_S, &on))
		goto out;
	printf("    SYN cookies on, %d s flood: %lu of %d connections, ListenDrops %llu, "
	       "ListenOverflows %llu, sources %llu -> %llu, cookies sent %llu valid %llu "
	       "invalid %llu\n",
	       E2E_ON_S, on.ok, E2E_CLIENTS, on.drops, on.overflows, on.sources_before,
	       on.sources_after, (unsigned long long)on.c.syncookies_sent,
	       (unsigned long long)on.c.syncookies_valid,
	       (unsigned long long)on.c.syncookies_invalid);
	ASSERT_TRUE(on.ok * 100 >= E2E_CLIENTS * 99, "at least 99% of the connections complete");
	ASSERT_EQ(on.drops, 0, "TcpExtListenDrops");
	ASSERT_EQ(on.overflows, 0, "TcpExtListenOverflows");
	/* The client's one source at most: the flood's SYNs make none. */
	ASSERT_TRUE(on.sources_after <= on.sources_before + 1, "no table grew from the flood");
	ASSERT_TRUE(on.c.syncookies_sent > 1000, "the flood was answered with cookies");
	ASSERT_TRUE(on.c.syncookies_valid >= on.ok, "each connection brought a valid cookie");
	/* The same without SYN cookies, shorter: printed, for the difference. */
	if (!e2e_run(&ns, script, false, E2E_OFF_S, &off))
		goto out;
	printf("    SYN cookies off, %d s flood: %lu of %d connections, ListenDrops %llu, "
	       "ListenOverflows %llu, sources %llu -> %llu, flood %llu SYNs\n",
	       E2E_OFF_S, off.ok, E2E_CLIENTS, off.drops, off.overflows, off.sources_before,
	       off.sources_after, (unsigned long long)off.c.rx_packets);
out:
	if (server > 0)
		kill((pid_t)server, SIGTERM);
	rl_ns_destroy(&ns);
	if (script[0])
		unlink(script);
	rmdir(dir);
}

/*
 * The CLI: --syn-proxy check refuses (naming what is missing) and changes
 * nothing; --syn-proxy nft makes the chains for the ports, set changes
 * them, set --syn-cookies none removes them.
 */
TEST_FLAGS(syn_cli, RL_TEST_ROOT)
{
	char *out = NULL, *err = NULL;
	struct rl_ns ns = {};

	if (rl_run("command -v nft >/dev/null", NULL, NULL)) {
		rl_test_skip("nft is not installed (make deps)");
		return;
	}
	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		return;
	ASSERT_EQ(rl_ns_cli(&ns, NULL, &err,
			    "attach %s --rate 100 --max-sources 4096 --mode skb --syn-cookies 22 "
			    "--syn-proxy check",
			    ns.rx_if),
		  1, "--syn-proxy check refuses");
	ASSERT_TRUE(err && strstr(err, "nf_conntrack_tcp_loose is 1 (needs 0)") &&
			    strstr(err, "no synproxy rule"),
		    "it names the sysctl and the rule");
	free(err);
	err = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "status %s", ns.rx_if), 1, "nothing attached");
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "attach %s --rate 100 --syn-proxy nft", ns.rx_if), 2,
		  "--syn-proxy without --syn-cookies is refused");
	if (!ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL,
				 "attach %s --rate 100 --max-sources 4096 --mode skb --syn-cookies "
				 "22,8000-8099",
				 ns.rx_if),
		       0, "attach --syn-cookies"))
		goto out;
	rl_ns_rx_sh(&ns, &out, "nft list table inet xdp_ratelimit");
	ASSERT_TRUE(out && strstr(out, "raw-") && strstr(out, "{ 22, 8000-8099 }") &&
			    strstr(out, "synproxy mss 1460"),
		    "the chains hold the ports");
	free(out);
	out = NULL;
	rl_ns_rx_sh(&ns, &out, "sysctl -n net.netfilter.nf_conntrack_tcp_loose");
	ASSERT_TRUE(out && atoi(out) == 0, "nf_conntrack_tcp_loose set to 0");
	free(out);
	out = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "status %s --json", ns.rx_if), 0, "status");
	ASSERT_TRUE(out && strstr(out, "\"syn_cookies\":\"22,8000-8099\""),
		    "status shows the ports");
	free(out);
	out = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "set %s --syn-cookies 443", ns.rx_if), 0, "set");
	rl_ns_rx_sh(&ns, &out, "nft list table inet xdp_ratelimit");
	ASSERT_TRUE(out && strstr(out, "dport 443") && !strstr(out, "8000-8099"),
		    "set replaced the ports");
	free(out);
	out = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "set %s --syn-cookies none", ns.rx_if), 0, "set none");
	ASSERT_TRUE(rl_ns_rx_sh(&ns, NULL, "nft list table inet xdp_ratelimit >/dev/null 2>&1"),
		    "SYN cookies off: the table is gone");
	/* detach removes them the same way (rl_synproxy_remove()). */
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "detach %s", ns.rx_if), 0, "detach");
out:
	free(out);
	free(err);
	rl_ns_destroy(&ns);
}
