// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The option table and the one parser over it (see opts.h). A command names
 * the groups it takes; getopt_long does the parsing, so every option takes
 * "--name value" and "--name=value", and options and words mix in any order.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "opts.h"
#include "rl_events.h"
#include "rule.h"
#include "sync_defs.h"

#define A(field) offsetof(struct rl_args, field)

/* Index = enum value: RL_ACTION_DROP, RL_ACTION_DRY_RUN. */
static const char *const action_choices[] = { "drop", "dry-run", NULL };
/* RL_FAIL_PASS, RL_FAIL_DROP; and malformed_drop 0, 1. */
static const char *const pass_drop[] = { "pass", "drop", NULL };
/* RL_CLOCK_PRECISE, RL_CLOCK_COARSE. */
static const char *const clock_choices[] = { "precise", "coarse", NULL };
/*
 * Index = enum value, as above: RL_SYNC_FB_LOCAL, RL_SYNC_FB_SHARE (enum
 * rl_sync_fallback, sync_agent.h); RL_MODE_NATIVE, RL_MODE_SKB (enum rl_mode,
 * xdp_attach.h). The table sits below the units that define them and stores
 * the index; the default of each is its first choice, 0. tests/test_opts.c
 * holds the two orders to the enums.
 */
static const char *const fallback_choices[] = { "local", "share", NULL };
static const char *const mode_choices[] = { "native", "skb", NULL };
/* enum rl_syn_proxy (config.h). */
static const char *const syn_proxy_choices[] = { "nft", "check", NULL };

static int parse_syn_cookies(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	return rl_syn_ports_parse(val, &a->o.syn, err, errlen);
}

/* sync --interval: 0 and more than a minute get a message that says the range. */
static int parse_sync_interval(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	__u64 ns = 0;
	int ret = 0;

	/* A bare 0 has no unit, but what is wrong with it is that it is 0. */
	if (strspn(val, "0") != strlen(val))
		ret = rl_parse_duration(val, &ns, err, errlen);
	if (ret)
		return ret;
	if (ns < RL_SYNC_INTERVAL_MIN_NS || ns > RL_SYNC_INTERVAL_MAX_NS) {
		snprintf(err, errlen, "'%s' is out of range: from 1ms to 1m", val);
		return -EINVAL;
	}
	a->sync_interval_ns = ns;
	return 0;
}

/* --watch SECONDS: a decimal number of seconds, fractions allowed, in [RL_WATCH_MIN_S, MAX]. */
static int parse_watch(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	char *end;
	double s;

	/* strtod takes "inf", "nan", hex and leading blanks: a plain decimal only. */
	if (!*val || strspn(val, "0123456789.eE+-") != strlen(val)) {
		snprintf(err, errlen, "'%s' is not a number of seconds (e.g. 2 or 0.5)", val);
		return -EINVAL;
	}
	s = strtod(val, &end);
	/* Too large or too small for a double is out of range below. */
	if (*end || end == val) {
		snprintf(err, errlen, "'%s' is not a number of seconds (e.g. 2 or 0.5)", val);
		return -EINVAL;
	}
	if (!(s >= RL_WATCH_MIN_S && s <= RL_WATCH_MAX_S)) {
		snprintf(err, errlen, "%s is out of range: from 0.1 to 3600 seconds", val);
		return -EINVAL;
	}
	a->watch_s = s;
	return 0;
}

static int parse_algo(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	return rl_parse_algo(val, &a->pol.algo, err, errlen);
}

static int parse_rate(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	return rl_parse_rate(val, &a->pol.rate_num, &a->pol.rate_den, &a->pol.bytes, err, errlen);
}

/* A level's rate (user/lib/level.h), or off: the level goes (with set: from the live policy). */
static int level_rate(const char *val, struct rl_level_policy *lp, char *err, size_t errlen)
{
	if (!strcmp(val, "off")) {
		lp->rate_num = 0;
		lp->rate_den = 1;
		lp->bytes = false;
	} else if (rl_parse_rate(val, &lp->rate_num, &lp->rate_den, &lp->bytes, err, errlen)) {
		return -EINVAL;
	}
	lp->rate_set = true;
	return 0;
}

static int parse_agg_rate(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	return level_rate(val, &a->pol.agg, err, errlen);
}

static int parse_iface_rate(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	return level_rate(val, &a->pol.iface, err, errlen);
}

static int parse_admit_rate(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	return level_rate(val, &a->pol.admit, err, errlen);
}

/* --aggregate4 N, --aggregate6 N: a prefix length up to @max, or off. */
static int agg_prefix(const char *val, unsigned int max, int *out, char *err, size_t errlen)
{
	__u64 v;

	if (!strcmp(val, "off")) {
		*out = -1;
		return 0;
	}
	if (rl_parse_u64(val, 0, max, &v, err, errlen))
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int parse_agg4(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	return agg_prefix(val, 32, &a->pol.agg_prefix4, err, errlen);
}

static int parse_agg6(const char *val, struct rl_args *a, char *err, size_t errlen)
{
	return agg_prefix(val, 128, &a->pol.agg_prefix6, err, errlen);
}

/* The named value the level options take besides their numbers. */
static const char *const off_choice[] = { "off", NULL };

/*
 * The match options write into the rule being read (rl_rule_parse(),
 * rl_rule_from_args()), through rule.h's setters; without one, they are
 * refused rather than dropped.
 */
static int no_rule(char *err, size_t errlen)
{
	snprintf(err, errlen, "is an option of a rule (rule add, simulate --rules FILE)");
	return -EINVAL;
}

#define RULE_SETTER(opt)                                                                     \
	static int parse_##opt(const char *val, struct rl_args *a, char *err, size_t errlen) \
	{                                                                                    \
		if (!a->rule)                                                                \
			return no_rule(err, errlen);                                         \
		return rl_rule_set_##opt(a->rule, val, err, errlen);                         \
	}

RULE_SETTER(src)
RULE_SETTER(src_file)
RULE_SETTER(proto)
RULE_SETTER(dport)
RULE_SETTER(tcp_flags)

const struct rl_opt rl_opt_table[] = {
	{ "verbose", 'v', RL_OPT_FLAG, NULL, A(verbose), 0, 0, 0, NULL, NULL, RL_G_GLOBAL,
	  "Also show debug messages, libbpf's and libxdp's among them." },
	{ "help", 'h', RL_OPT_FLAG, NULL, A(help), 0, 0, 0, NULL, NULL, RL_G_GLOBAL,
	  "Show the usage of the program, or of the command it follows, and exit." },
	{ "version", 0, RL_OPT_FLAG, NULL, A(version), 0, 0, 0, NULL, NULL, RL_G_GLOBAL,
	  "Print the version and exit." },
	{ "json", 'j', RL_OPT_FLAG, NULL, A(json), 0, 0, 0, NULL, NULL, RL_G_JSON,
	  "Print the result as JSON (errors as {\"error\": \"...\"})." },

	{ "algo", 0, RL_OPT_CUSTOM, "ALGO", 0, A(pol.algo_set), 0, 0, rl_algo_names, parse_algo,
	  RL_G_POLICY, "token-bucket (default), gcra, fixed-window or sliding-window." },
	{ "rate", 0, RL_OPT_CUSTOM, "RATE", 0, A(pol.rate_set), 0, 0, NULL, parse_rate, RL_G_POLICY,
	  "Packets per second (10, 2.5, 10kpps, 1mpps, 1gpps), per minute, hour or day (30/m, "
	  "100/min, 5/h, 1000/day; also /s /sec /second /minute /hr /hour /d, and nginx's 30r/m), "
	  "or a byte rate with a unit: bit, kbit, mbit, gbit, tbit (x1000, bits per second) or "
	  "byte, kbyte, mbyte, gbyte (bytes per second; /s may follow). Rates are kept exact. A "
	  "byte rate makes each packet cost its frame length." },
	{ "burst", 0, RL_OPT_U64, "N", A(pol.burst), A(pol.burst_set), 1, 1ULL << 62, NULL, NULL,
	  RL_G_POLICY,
	  "token-bucket: bucket capacity; gcra: queue depth. In packets, or bytes with a byte "
	  "rate. Default: one second at RATE (at least 1 packet, or 1522 bytes). A byte burst "
	  "must hold one full-size frame (1522 bytes); for TCP give at least 200 ms at RATE "
	  "(a warning says so)." },
	{ "window", 0, RL_OPT_DURATION, "DUR", A(pol.window_ns), A(pol.window_set),
	  RL_WINDOW_MIN_NS, RL_WINDOW_MAX_NS, NULL, NULL, RL_G_POLICY,
	  "fixed-window, sliding-window: window length (ns, us, ms, s, m, h; default 1s, from "
	  "1us to 24h). The limit per window is RATE x DUR and must be a whole number." },
	{ "initial", 0, RL_OPT_U64, "N", A(pol.initial), A(pol.initial_set), 0, 1ULL << 62, NULL,
	  NULL, RL_G_POLICY,
	  "token-bucket: tokens a new source starts with (default BURST); gcra: queue level it "
	  "starts with (default 0)." },
	{ "prefix4", 0, RL_OPT_U32, "N", A(pol.prefix4), A(pol.prefix4_set), 0, 32, NULL, NULL,
	  RL_G_POLICY, "IPv4 sources share a limit per /N (0-32, default 32)." },
	{ "prefix6", 0, RL_OPT_U32, "N", A(pol.prefix6), A(pol.prefix6_set), 0, 128, NULL, NULL,
	  RL_G_POLICY,
	  "IPv6 sources share a limit per /N (0-128, default 64: a host rotating addresses inside "
	  "its /64 is one source)." },
	{ "aggregate4", 0, RL_OPT_CUSTOM, "N", 0, A(pol.agg_prefix4_set), 0, 0, off_choice,
	  parse_agg4, RL_G_POLICY,
	  "Besides its source's limit, charge each IPv4 packet to its /N aggregate (0-32, no "
	  "longer than --prefix4), limited by --aggregate-rate: a packet passes only if its "
	  "source and its aggregate both have credit, so a flood from many sources of one /24 "
	  "passes at the aggregate's rate. off: no IPv4 aggregate. In a rule: the rule's own "
	  "aggregates." },
	{ "aggregate6", 0, RL_OPT_CUSTOM, "N", 0, A(pol.agg_prefix6_set), 0, 0, off_choice,
	  parse_agg6, RL_G_POLICY,
	  "The same for IPv6 sources: their /N aggregate (0-128, no longer than --prefix6, e.g. "
	  "48). off: no IPv6 aggregate." },
	{ "aggregate-rate", 0, RL_OPT_CUSTOM, "RATE", 0, 0, 0, 0, off_choice, parse_agg_rate,
	  RL_G_POLICY,
	  "The limit of each aggregate (--aggregate4, --aggregate6), as --rate is written (packets "
	  "or bytes), with the policy's algorithm and window; off turns aggregates off. Its "
	  "states live in their own table (an LRU hash of --max-sources/16 aggregates, about 100 "
	  "bytes each, made while a level is on): an aggregate it forgets starts again full." },
	{ "aggregate-burst", 0, RL_OPT_U64, "N", A(pol.agg.burst), A(pol.agg.burst_set), 1,
	  1ULL << 62, NULL, NULL, RL_G_POLICY,
	  "token-bucket, gcra: the burst of each aggregate, as --burst (default: one second at "
	  "--aggregate-rate)." },
	{ "iface-rate", 0, RL_OPT_CUSTOM, "RATE", 0, 0, 0, 0, off_choice, parse_iface_rate,
	  RL_G_POLICY,
	  "A limit on every packet of the interface together (in a rule: on every packet the rule "
	  "limits), charged after its source's (and aggregate's), with the policy's algorithm; "
	  "a packet passes only if every level passes. One state word for the whole interface, "
	  "updated by every CPU. off turns it off." },
	{ "iface-burst", 0, RL_OPT_U64, "N", A(pol.iface.burst), A(pol.iface.burst_set), 1,
	  1ULL << 62, NULL, NULL, RL_G_POLICY,
	  "token-bucket, gcra: the burst of --iface-rate (default: one second at it)." },
	{ "admit-rate", 0, RL_OPT_CUSTOM, "RATE", 0, 0, 0, 0, off_choice, parse_admit_rate,
	  RL_G_POLICY,
	  "Cap how many new sources a second get a state (a fresh bucket) of their own: beyond "
	  "the cap a new source is inserted nowhere and its packets are limited together with "
	  "every other such source's, as one source of the policy, until it is seen again (a "
	  "packet of it within 60 s of one refused, remembered in a table of 8 bytes per "
	  "--max-sources). A spoofed flood then gets one source's rate and creates no state. "
	  "off: no cap (the default). Not in rules." },
	{ "admit-burst", 0, RL_OPT_U64, "N", A(pol.admit.burst), A(pol.admit.burst_set), 1,
	  1ULL << 62, NULL, NULL, RL_G_POLICY,
	  "New sources admitted at once beyond --admit-rate (default: one second of it)." },

	{ "action", 0, RL_OPT_CHOICE, "ACTION", A(o.action), A(o.action_set), 0, 0, action_choices,
	  NULL, RL_G_LIMITER | RL_G_SIMULATE,
	  "drop (default): drop packets over the limit; dry-run: count them as would-drop and "
	  "pass them." },
	{ "on-insert-fail", 0, RL_OPT_CHOICE, "POLICY", A(o.fail_policy), A(o.fail_set), 0, 0,
	  pass_drop, NULL, RL_G_LIMITER,
	  "pass (default) or drop a packet whose source cannot be added to the table (a map "
	  "error; a full table evicts the least recently seen source instead)." },
	{ "malformed", 0, RL_OPT_CHOICE, "POLICY", A(o.malformed_drop), A(o.malformed_set), 0, 0,
	  pass_drop, NULL, RL_G_LIMITER | RL_G_SIMULATE,
	  "drop (default) or pass truncated and malformed IP frames." },
	{ "clock", 0, RL_OPT_CHOICE, "CLOCK", A(o.clock), A(o.clock_set), 0, 0, clock_choices, NULL,
	  RL_G_LIMITER,
	  "precise (default): the kernel's ns clock, read per packet; coarse: the clock of the "
	  "last kernel tick, several times cheaper to read but it advances once per tick (1/HZ, "
	  "e.g. 4 ms): refused unless the burst covers a tick's worth of the rate, or the window "
	  "is at least a tick." },

	{ "syn-cookies", 0, RL_OPT_CUSTOM, "PORTS", 0, A(o.syn_set), 0, 0, NULL, parse_syn_cookies,
	  RL_G_SYN,
	  "Answer SYNs to these TCP ports (443; 80,443; 8000-8999; at most 16 ports and "
	  "ranges; none: off) from XDP with a SYN cookie, before any per-source step, so a "
	  "flood of SYNs from spoofed sources makes no state; the ACK that brings a valid "
	  "cookie back is limited like any packet and handed to the stack, where netfilter's "
	  "SYNPROXY opens the connection to the server (see --syn-proxy). Packets to these "
	  "ports of no connection and without a valid cookie are dropped. For services on this "
	  "host (a connection is known by its socket), IPv4 and IPv6, VLAN-tagged or not." },
	{ "syn-proxy", 0, RL_OPT_CHOICE, "WHO", A(o.syn_proxy), A(o.syn_proxy_set), 0, 0,
	  syn_proxy_choices, NULL, RL_G_SYN,
	  "With --syn-cookies: nft (default) makes the stack ready itself: the sysctls "
	  "net.ipv4.tcp_syncookies (1 unless set), net.ipv4.tcp_timestamps=1 and "
	  "net.netfilter.nf_conntrack_tcp_loose=0, and the nftables table inet xdp_ratelimit "
	  "with two chains for the interface (notrack for SYNs to the ports; synproxy for "
	  "their untracked and invalid packets), which set and detach update and remove; "
	  "check changes nothing there and refuses to attach while a sysctl or a synproxy "
	  "rule is missing, naming each." },

	{ "mode", 0, RL_OPT_CHOICE, "MODE", A(mode), 0, 0, 0, mode_choices, NULL, RL_G_ATTACH,
	  "native (default: in the driver) or skb (generic XDP, for drivers without XDP "
	  "support)." },
	{ "max-sources", 0, RL_OPT_U64, "N", A(max_sources), 0, 1, RL_MAX_SOURCES_LIMIT, NULL, NULL,
	  RL_G_ATTACH,
	  "The IPv4 sources the table is sized for (default 1048576, up to 67108864). The "
	  "set-associative table most policies use gets four 8-byte slots per source, in "
	  "64-byte sets of eight rounded up to a power of two of sets (1 MiB at least): N "
	  "sources have room with sets filled unevenly, and an idle source stays until its "
	  "set is full, so up to about 4N are tracked at once (stats counts them against the "
	  "slots). Each of N costs 32 bytes of kernel memory there (up to 64 with the "
	  "rounding), and 4 more in the IPv6 table sized from it: 37 MiB for the default, "
	  "every map counted (status and stats show it). When a source's set is full, the "
	  "one least ahead of the clock (which waited longest since it last passed) is "
	  "forgotten. A policy whose states do not fit its slots (very long bursts, wide "
	  "byte windows) uses the same sets laid out with a whole state per source: the "
	  "same memory, two ways per source. Size it for the sources you expect, up to "
	  "about twice: the table is allocated whole and its sources spread over all of "
	  "it, so a table far larger than its sources costs more per packet (they touch "
	  "more cache lines over more 4 KiB pages); 1M sources in a table for 9M cost about "
	  "1.6 to 1.8 times what they cost in one for 1M. Rules that limit add "
	  "104 bytes per source they track (up to 262144 of them: 26 MiB), a --dport rule 2 "
	  "MiB, source prefixes 2 MiB, and fleet sync 32 bytes per source while an agent "
	  "runs: these maps are made when the first rule or agent needs them and given back "
	  "after the last." },
	{ "max-sources6", 0, RL_OPT_U64, "N", A(max_sources6), 0, 1, RL_MAX_SOURCES_LIMIT, NULL,
	  NULL, RL_G_ATTACH,
	  "IPv6 sources the table of their own is sized for (default: a sixteenth of "
	  "--max-sources, 65536; each is one --prefix6 network): set-associative, two "
	  "ways of 32 bytes per source (the state and the source's key kept whole), 64 "
	  "bytes of kernel memory each (4 MiB for the default), and 32 more while a sync "
	  "agent runs. When a set is full, the source least ahead of the clock is "
	  "forgotten." },

	{ "share", 0, RL_OPT_STRING, "IFACE", A(share), 0, 0, 0, NULL, NULL, RL_G_ATTACH,
	  "Share the limiter attached to IFACE (of this network namespace) instead of making "
	  "one: the same program, source table and counters, so a source is limited across "
	  "both interfaces together (bond members, two uplinks). Its policy is IFACE's: give "
	  "no policy or limiter option." },

	{ "watch", 'w', RL_OPT_CUSTOM, "SECONDS", 0, 0, 0, 0, NULL, parse_watch, RL_G_WATCH,
	  "Every SECONDS (0.1 to 3600, fractions allowed: 0.5) until interrupted: stats prints "
	  "a line of per-second rates, top and blocked show their table again (redrawn on a "
	  "terminal; with --json one object per line)." },
	{ "count", 'c', RL_OPT_U64, "N", A(count), 0, 1, ~0ULL, NULL, NULL, RL_G_WATCH,
	  "With --watch: stop after N lines (stats) or views (top, blocked)." },

	{ "pcap", 'w', RL_OPT_STRING, "FILE", A(pcap), 0, 0, 0, NULL, NULL, RL_G_EVENTS,
	  "Write the samples to FILE in pcap format (- for standard output) instead of printing "
	  "them: the first bytes of each frame as captured bytes, its length as the original "
	  "length, the time of the drop as the record's time (ns precision)." },
	{ "one-in", 'N', RL_OPT_U64, "N", A(one_in), 0, 1, 1U << 31, NULL, NULL, RL_G_EVENTS,
	  "Sample 1 in N dropped packets (default 1: each), counted on each CPU." },
	{ "max-rate", 'M', RL_OPT_U64, "M", A(max_rate), 0, 1, RL_EV_MAX_RATE, NULL, NULL,
	  RL_G_EVENTS,
	  "At most M samples in each second of the clock (1-10000, default 100), on all CPUs "
	  "together." },
	{ "count", 'c', RL_OPT_U64, "N", A(count), 0, 1, ~0ULL, NULL, NULL, RL_G_EVENTS,
	  "Stop after N samples." },
	{ "duration", 'd', RL_OPT_DURATION, "DUR", A(duration_ns), 0, 1000000ULL, RL_BLOCK_MAX_NS,
	  NULL, NULL, RL_G_EVENTS, "Stop after DUR (e.g. 10s, 5m; from 1ms)." },

	{ "sources", 'n', RL_OPT_U64, "N", A(top_n), 0, 1, 1000000, NULL, NULL, RL_G_TOP,
	  "How many sources to list (default 10)." },
	{ "source", 0, RL_OPT_STRING, "ADDR", A(top_source), 0, 0, 0, NULL, NULL, RL_G_TOP,
	  "Look one source up: the states that hold ADDR, the default policy's and each rule's "
	  "(exit status 1 when none does)." },
	{ "sample", 0, RL_OPT_U64, "N", A(top_sample), 0, 1, 1ULL << 32, NULL, NULL, RL_G_TOP,
	  "Besides the sources the kernel last saw over their limit, read about N tracked "
	  "sources (default 65536), in the table's order from a set drawn at random (with "
	  "--watch, each view goes on from where the last one stopped)." },
	{ "all", 0, RL_OPT_FLAG, NULL, A(top_all), 0, 0, 0, NULL, NULL, RL_G_TOP,
	  "Read every tracked source instead of a sample: seconds for millions of them." },

	{ "trace", 't', RL_OPT_STRING, "FILE", A(trace), 0, 0, 0, NULL, NULL, RL_G_SIMULATE,
	  "Read the trace from FILE (default, or -: standard input)." },
	{ "summary", 's', RL_OPT_FLAG, NULL, A(summary), 0, 0, 0, NULL, NULL, RL_G_SIMULATE,
	  "Add per-source and total counts at the end." },
	{ "quiet", 'q', RL_OPT_FLAG, NULL, A(quiet), 0, 0, 0, NULL, NULL, RL_G_SIMULATE,
	  "No per-packet lines (use with --summary)." },
	{ "rules", 0, RL_OPT_STRING, "FILE", A(rules), 0, 0, 0, NULL, NULL, RL_G_SIMULATE,
	  "Replay through the rules in FILE, one per line as after \"rule add IFACE\" (NAME "
	  "[MATCH OPTIONS] ACTION, no --before), in order, before the default rule, which the "
	  "policy options make. Each output line ends with the deciding rule's name." },
	{ "pcap", 'r', RL_OPT_STRING, "FILE", A(pcap), 0, 0, 0, NULL, NULL, RL_G_SIMULATE,
	  "Replay the frames of a capture instead of a trace: pcap or pcapng as tcpdump -w, "
	  "tshark and dumpcap write them (- for standard input), of Ethernet frames (VLAN tags "
	  "too) or Linux cooked ones (tcpdump -i any). Each frame is parsed by the XDP "
	  "program's own parser at the time it was captured, costs its length on the wire "
	  "under a byte rate, and is counted as the program counts it. Capture received "
	  "frames only (tcpdump -Q in): cooked captures mark the ones sent, which are skipped." },
	{ "compare", 0, RL_OPT_FLAG, NULL, A(compare), 0, 0, 0, NULL, NULL, RL_G_SIMULATE,
	  "With --pcap: a what-if report instead of a verdict per frame, for each POLICY given "
	  "as a word of the command (up to 16), and first for the policy options if --rate or "
	  "--rules is given. A POLICY is a YAML mapping of an interface's keys of apply (rate, burst, "
	  "algo, malformed, action, rules: ...) written inline ('{rate: 500, burst: 50}') or "
	  "in a file, or apply's configuration file itself, FILE:IFACE naming the interface "
	  "(FILE alone if it names one)." },
	{ "sources", 'n', RL_OPT_U64, "N", A(top_n), 0, 1, 1000000, NULL, NULL, RL_G_SIMULATE,
	  "With --compare: how many of the sources each policy drops most frames of to list "
	  "(default 10)." },
	{ "plot", 0, RL_OPT_STRING, "FILE", A(plot), 0, 0, 0, NULL, NULL, RL_G_SIMULATE,
	  "With --compare: also draw the frames received and each policy's drops over time "
	  "into FILE, a PNG image, with gnuplot (apt-get install gnuplot-nox)." },

	{ "listen", 'l', RL_OPT_STRING, "ADDR:PORT", A(listen), 0, 0, 0, NULL, NULL, RL_G_EXPORTER,
	  "Where to serve /metrics: an IPv4 address, an IPv6 one in brackets ([::1]:9977; "
	  "[::]:9977 takes IPv4 clients too), a host name (its first IPv4 address, else its "
	  "first IPv6 one: localhost:9977 is 127.0.0.1), or none for every IPv4 address "
	  "(:9977); port 0 picks a free one. Default 127.0.0.1:9977 "
	  "(loopback: give :9977 for a Prometheus on another host)." },

	{ "check", 0, RL_OPT_FLAG, NULL, A(check), 0, 0, 0, NULL, NULL, RL_G_APPLY,
	  "Check FILE (syntax, keys, values, policies, rules) and every check apply makes against "
	  "the running state before its first change (the interfaces exist, the live attach "
	  "options match, the rules compile against the live ones), and change nothing. Exit "
	  "status 0 if apply would take it; root, as apply." },
	{ "diff", 0, RL_OPT_FLAG, NULL, A(diff), 0, 0, 0, NULL, NULL, RL_G_APPLY,
	  "Print what apply would change on each interface (attach, set with each changed value "
	  "as old -> new, rules, detach with --prune, or unchanged), then a line per rule that "
	  "changes (add RULE, del RULE, change OLD -> NEW, order OLD -> NEW, each rule as the "
	  "words of rule add), and change nothing. Exit status 0 if nothing would change, 1 "
	  "if something would (drift: the kernel differs from FILE), 2 on an error, with "
	  "--json too." },
	{ "prune", 0, RL_OPT_FLAG, NULL, A(prune), 0, 0, 0, NULL, NULL, RL_G_APPLY,
	  "Also detach the limiter from the interfaces of this network namespace that FILE does "
	  "not name (without it they are left alone)." },
	{ "detach", 0, RL_OPT_FLAG, NULL, A(detach), 0, 0, 0, NULL, NULL, RL_G_APPLY,
	  "Instead of applying FILE, detach the limiter from every interface it names (the "
	  "systemd unit's ExecStop); interfaces without it are skipped." },

	{ "dry-run", 'n', RL_OPT_FLAG, NULL, A(dry_run), 0, 0, 0, NULL, NULL, RL_G_CLEANUP,
	  "List the orphaned pins that cleanup would remove (with --json: as \"would_remove\"), "
	  "and remove nothing." },
	{ "netns", 0, RL_OPT_STRING, "NS", A(netns), 0, 0, 0, NULL, NULL, RL_G_CLEANUP,
	  "Only the orphans of this network namespace: a name of ip netns, a path to a "
	  "namespace file (/proc/PID/ns/net), or the inode number status shows (the only way "
	  "to name a namespace deleted since)." },

	{ "redis", 0, RL_OPT_STRING, "URL", A(redis), 0, 0, 0, NULL, NULL, RL_G_SYNC,
	  "The Redis server every node of the group uses: redis://[:PASSWORD@]HOST:PORT[/DB] "
	  "(HOST a name, an IPv4 address or an [IPv6] one), unix://[:PASSWORD@]/PATH (a local "
	  "socket, also reachable from another network namespace), "
	  "sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER: the master that Redis "
	  "Sentinels watch, followed through a failover (PASSWORD is the master's; the sentinels "
	  "are asked without one, or with it if they require one), or a Redis Cluster, "
	  "cluster://[:PASSWORD@]HOST:PORT[,HOST:PORT...] (nodes to ask for the slot map; the "
	  "sources are spread over every master). Required." },
	{ "group", 0, RL_OPT_STRING, "NAME", A(group), 0, 0, 0, NULL, NULL, RL_G_SYNC,
	  "The group of nodes that share one limit per source (default \"default\"); 1-63 of "
	  "A-Z a-z 0-9 . _ -. Every node of a group must run the same policy." },
	{ "node", 0, RL_OPT_STRING, "NAME", A(node), 0, 0, 0, NULL, NULL, RL_G_SYNC,
	  "This node's name in the group (default: the host name); unique in the group, so give "
	  "one per interface when one host syncs several." },
	{ "interval", 0, RL_OPT_CUSTOM, "DUR", 0, 0, 0, 0, NULL, parse_sync_interval, RL_G_SYNC,
	  "How often to sync (default 100ms, from 1ms to 1m): the error of the shared limit is "
	  "about what the other nodes pass in one or two intervals." },
	{ "fallback", 0, RL_OPT_CHOICE, "MODE", A(sync_fallback), 0, 0, 0, fallback_choices, NULL,
	  RL_G_SYNC,
	  "What to enforce while Redis fails: local (default), the full limit on each host; or "
	  "share, the limit divided by the number of nodes last seen." },

	{ "src", 0, RL_OPT_LIST, "CIDR[,CIDR...]", 0, 0, 0, 0, NULL, parse_src, RL_G_RULE,
	  "Match packets from these source prefixes, IPv4 or IPv6 (198.18.0.0/15, 2001:db8::/32; "
	  "an address alone is /32 or /128). May repeat. Host bits must be zero. An IPv4 prefix "
	  "matches IPv4 sources and IPv4-mapped IPv6 ones (::ffff:a.b.c.d), an IPv6 prefix the "
	  "other IPv6 sources; the source is matched unmasked. An empty list (--src none, "
	  "--src '', an empty --src-file) matches no source; a rule without --src or "
	  "--src-file matches any source." },
	{ "src-file", 0, RL_OPT_LIST, "FILE", 0, 0, 0, 0, NULL, parse_src_file, RL_G_RULE,
	  "Match the source prefixes listed in FILE, one per line; blank lines and everything "
	  "after '#' are ignored; a regular file (not a FIFO or a device) of at most 1000000 "
	  "lines and 64 MiB. May repeat, and add to --src. A file "
	  "that lists nothing leaves the rule matching no source (with a warning), never any "
	  "source." },
	{ "proto", 0, RL_OPT_CUSTOM, "PROTO", 0, 0, 0, 0, rl_proto_names, parse_proto, RL_G_RULE,
	  "Match this L4 protocol: tcp, udp, icmp, icmpv6 or a number 0-255 (IPv4's protocol, "
	  "IPv6's first next header: an extension header's number if there is one)." },
	{ "dport", 0, RL_OPT_CUSTOM, "N|N-M", 0, 0, 0, 0, NULL, parse_dport, RL_G_RULE,
	  "Match this destination port or inclusive range (0-65535); needs --proto tcp or udp. "
	  "Fragments after the first and truncated headers show no port and never match." },
	{ "tcp-flags", 0, RL_OPT_CUSTOM, "FLAGS", 0, 0, 0, 0, NULL, parse_tcp_flags, RL_G_RULE,
	  "Match TCP flags; needs --proto tcp. syn: SYN set and ACK clear (new connections, S/SA). "
	  "VALUE/MASK in tcpdump's letters (F S R P A U E W): the flags in MASK must be exactly "
	  "those in VALUE, e.g. SA/SA, R/R, /A (ACK clear); VALUE alone or VALUE/ is VALUE/VALUE." },
	{ "allow", 0, RL_OPT_FLAG, NULL, A(allow), 0, 0, 0, NULL, NULL, RL_G_RULE,
	  "Action: pass matching packets, never limited (counted as allowed)." },
	{ "deny", 0, RL_OPT_FLAG, NULL, A(deny), 0, 0, 0, NULL, NULL, RL_G_RULE,
	  "Action: drop matching packets (counted as denied; passed with --action dry-run). "
	  "Without --allow or --deny a rule limits with its own policy options, --rate first." },
	{ "syn-cookies", 0, RL_OPT_FLAG, NULL, A(syn_rule), 0, 0, 0, NULL, NULL, RL_G_RULE,
	  "Action: SYN cookies for the TCP packets the rule matches (needs --proto tcp; no "
	  "--tcp-flags: it must see every packet of a connection): a SYN is answered from XDP "
	  "with a cookie, a packet of no connection without a valid cookie is dropped (counted "
	  "as denied), and the others go on to the next rule that matches. Put it before limit "
	  "rules on the same port, so that SYNs make no state; the stack needs SYNPROXY for "
	  "the port, as with attach --syn-cookies (rule add checks it and warns)." },
	{ "block", 0, RL_OPT_DURATION, "DUR", A(block_ns), A(block_set), 1, RL_BLOCK_MAX_NS, NULL,
	  NULL, RL_G_RULE,
	  "With a limit policy: a source over the rule's limit is dropped whole (every packet "
	  "reaching this rule) for DUR (1ns to 8784h), then starts afresh as a new source." },
	{ "before", 0, RL_OPT_STRING, "RULE", A(before), 0, 0, 0, NULL, NULL, RL_G_RULE,
	  "rule add: insert before rule RULE (default: last before the default rule)." },
};

const size_t rl_opt_count = sizeof(rl_opt_table) / sizeof(rl_opt_table[0]);

_Static_assert(sizeof(rl_opt_table) / sizeof(rl_opt_table[0]) <=
		       sizeof(((struct rl_args *)0)->given) / sizeof(bool),
	       "rl_args.given[] has a slot per option");

void rl_args_defaults(struct rl_args *a)
{
	memset(a, 0, sizeof(*a));
	rl_policy_defaults(&a->pol);
	rl_opts_defaults(&a->o);
	a->mode = 0; /* native */
	a->max_sources = RL_DEFAULT_MAX_SOURCES;
	a->max_sources6 = 0; /* a sixteenth of max_sources: RL_MAX_SOURCES6_FOR() */
	a->top_n = 10;
	a->top_sample = RL_TOP_SAMPLE;
	a->one_in = 1;
	a->max_rate = 100;
	a->group = "default";
	a->sync_interval_ns = RL_SYNC_INTERVAL_DEFAULT_NS;
	a->sync_fallback = 0; /* local */
}

const struct rl_opt *rl_opt_find(const char *name, unsigned int groups)
{
	for (size_t i = 0; i < rl_opt_count; i++)
		if ((rl_opt_table[i].group & groups) && !strcmp(rl_opt_table[i].name, name))
			return &rl_opt_table[i];
	return NULL;
}

/*
 * The edit distance of @a and @b: insertions, deletions, substitutions and
 * swaps of two neighbours (brust -> burst is one), each costing 1.
 */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* Three rows: the one before the last too, for swaps. Words are short. */
	size_t r0[RL_SUGGEST_MAX + 1], r1[RL_SUGGEST_MAX + 1], r2[RL_SUGGEST_MAX + 1];
	size_t *pp = r0, *p = r1, *c = r2, *t;

	if (la > RL_SUGGEST_MAX || lb > RL_SUGGEST_MAX)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		p[j] = j;
	for (size_t i = 1; i <= la; i++) {
		c[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t d = p[j - 1] + (a[i - 1] != b[j - 1]);

			if (p[j] + 1 < d)
				d = p[j] + 1;
			if (c[j - 1] + 1 < d)
				d = c[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			c[j] = d;
		}
		t = pp;
		pp = p;
		p = c;
		c = t;
	}
	return p[lb];
}

/* Is @cand nearer to @word than *@best (at *@bestd), and near enough to be a typo? */
static void suggest_one(const char *word, const char *cand, const char **best, size_t *bestd)
{
	size_t len = strlen(word), d = edit_distance(word, cand);
	/* One slip in a short word, two in a longer one: farther is another word. */
	size_t most = len <= 4 ? 1 : 2;

	if (d && d <= most && d < *bestd) {
		*best = cand;
		*bestd = d;
	}
}

const char *rl_opt_suggest(const char *word, unsigned int groups, const char *const *extra)
{
	const char *best = NULL;
	size_t bestd = (size_t)-1;

	for (size_t i = 0; i < rl_opt_count; i++)
		if (rl_opt_table[i].group & groups)
			suggest_one(word, rl_opt_table[i].name, &best, &bestd);
	for (; extra && *extra; extra++)
		suggest_one(word, *extra, &best, &bestd);
	return best;
}

static void choices_str(const char *const *c, char *buf, size_t len)
{
	size_t n = 0, off = 0;

	while (c[n])
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i == 0	   ? "" :
					i + 1 == n ? (n == 2 ? " nor " : " or ") :
						     ", ",
					c[i]);
}

/* Set @opt from @val; an error says what is wrong with the value, not where it was given. */
static int opt_value(struct rl_args *a, const struct rl_opt *opt, const char *val, char *msg,
		     size_t msglen)
{
	char *base = (char *)a, list[128];
	__u64 v;
	int ret = 0, i;

	switch (opt->type) {
	case RL_OPT_FLAG:
		if (opt->off == A(verbose))
			a->verbose++;
		else
			*(bool *)(base + opt->off) = true;
		break;
	case RL_OPT_U64:
	case RL_OPT_U32:
		ret = rl_parse_u64(val, opt->min, opt->max, &v, msg, msglen);
		if (ret)
			break;
		if (opt->type == RL_OPT_U64)
			*(__u64 *)(base + opt->off) = v;
		else
			*(unsigned int *)(base + opt->off) = (unsigned int)v;
		break;
	case RL_OPT_DURATION:
		ret = rl_parse_duration(val, &v, msg, msglen);
		if (!ret && (v < opt->min || v > opt->max)) {
			snprintf(msg, msglen, "'%s' is out of range", val);
			ret = -EINVAL;
		}
		if (!ret)
			*(__u64 *)(base + opt->off) = v;
		break;
	case RL_OPT_CHOICE:
		for (i = 0; opt->choices[i]; i++)
			if (!strcmp(val, opt->choices[i]))
				break;
		if (!opt->choices[i]) {
			choices_str(opt->choices, list, sizeof(list));
			snprintf(msg, msglen, "'%s' is %s %s", val,
				 opt->choices[2] ? "not one of" : "neither", list);
			ret = -EINVAL;
			break;
		}
		*(int *)(base + opt->off) = i;
		break;
	case RL_OPT_STRING:
		*(const char **)(base + opt->off) = val;
		break;
	case RL_OPT_CUSTOM:
	case RL_OPT_LIST:
		ret = opt->parse(val, a, msg, msglen);
		break;
	}
	if (ret)
		return -EINVAL;
	if (opt->set_off)
		*(bool *)(base + opt->set_off) = true;
	return 0;
}

int rl_opt_give(struct rl_args *a, const struct rl_opt *opt, const char *val, char *err,
		size_t errlen)
{
	int ret = opt_value(a, opt, val, err, errlen);

	if (!ret)
		a->given[opt - rl_opt_table] = true;
	return ret;
}

int rl_opt_set(struct rl_args *a, const struct rl_opt *opt, const char *val, char *err,
	       size_t errlen)
{
	char msg[RL_ERRLEN];

	if (!opt_value(a, opt, val, msg, sizeof(msg)))
		return 0;
	snprintf(err, errlen, "--%s: %s", opt->name, msg);
	return -EINVAL;
}

static const char *opt_spelling(const struct rl_opt *opt, int c)
{
	static char s[64];

	if (c == opt->short_name && c)
		snprintf(s, sizeof(s), "-%c", c);
	else
		snprintf(s, sizeof(s), "--%s", opt->name);
	return s;
}

/* "unknown option '--brust'", and "(did you mean '--burst'?)" if one is that near. */
static void unknown_long(const char *word, unsigned int groups, char *err, size_t errlen)
{
	char name[RL_SUGGEST_MAX + 1];
	const char *near = NULL;
	size_t n;

	if (!strncmp(word, "--", 2)) {
		n = strcspn(word + 2, "=");
		if (n < sizeof(name)) {
			memcpy(name, word + 2, n);
			name[n] = '\0';
			near = rl_opt_suggest(name, groups, NULL);
		}
	}
	if (near)
		snprintf(err, errlen, "unknown option '%s' (did you mean '--%s'?)", word, near);
	else
		snprintf(err, errlen, "unknown option '%s'", word);
}

int rl_args_parse(struct rl_args *a, unsigned int groups, int max_pos, int argc, char **argv,
		  char *err, size_t errlen)
{
	struct option longopts[sizeof(rl_opt_table) / sizeof(rl_opt_table[0]) + 1];
	/*
	 * '-': words come back in order as 1; '+': stop at the first word (the
	 * command, after the global options); ':': a missing value is ':'.
	 */
	char shorts[2 * sizeof(rl_opt_table) / sizeof(rl_opt_table[0]) + 3] = "-:";
	size_t nl = 0, ns = 2;
	char msg[RL_ERRLEN];
	int c, idx, ret;

	for (size_t i = 0; i < rl_opt_count; i++) {
		const struct rl_opt *opt = &rl_opt_table[i];

		if (!(opt->group & groups))
			continue;
		longopts[nl++] =
			(struct option){ opt->name,
					 opt->type == RL_OPT_FLAG ? no_argument : required_argument,
					 NULL, (int)(256 + i) };
		if (opt->short_name) {
			shorts[ns++] = opt->short_name;
			if (opt->type != RL_OPT_FLAG)
				shorts[ns++] = ':';
		}
	}
	memset(&longopts[nl], 0, sizeof(longopts[nl]));
	shorts[ns] = '\0';
	if (max_pos < 0)
		shorts[0] = '+';
	opterr = 0;
	optind = 0; /* glibc: start afresh, as for a new argv */
	while ((c = getopt_long(argc, argv, shorts, longopts, &idx)) != -1) {
		const struct rl_opt *opt = NULL;

		if (c == 1) {
			if (a->npos >= max_pos ||
			    a->npos >= (int)(sizeof(a->pos) / sizeof(a->pos[0]))) {
				snprintf(err, errlen, "unexpected argument '%s'", optarg);
				return -EINVAL;
			}
			a->pos[a->npos++] = optarg;
			continue;
		}
		if (c == '?' || c == ':') {
			const char *word = argv[optind - 1];

			if (c == ':')
				snprintf(err, errlen, "%s needs a value", word);
			else if (optopt && optopt < 256)
				snprintf(err, errlen, "unknown option '-%c'", optopt);
			else
				unknown_long(word, groups, err, errlen);
			return -EINVAL;
		}
		if (c >= 256) {
			opt = &rl_opt_table[c - 256];
		} else {
			for (size_t i = 0; i < rl_opt_count && !opt; i++)
				if (rl_opt_table[i].short_name == c &&
				    (rl_opt_table[i].group & groups))
					opt = &rl_opt_table[i];
		}
		if (!opt)
			continue;
		idx = (int)(opt - rl_opt_table);
		/* -v and lists may repeat (-vv); any other option given twice is a mistake. */
		if (a->given[idx] && opt->off != A(verbose) && opt->type != RL_OPT_LIST) {
			snprintf(err, errlen, "%s is given twice", opt_spelling(opt, c));
			return -EINVAL;
		}
		a->given[idx] = true;
		ret = opt_value(a, opt, optarg, msg, sizeof(msg));
		if (ret) {
			snprintf(err, errlen, "%s: %s", opt_spelling(opt, c), msg);
			return ret;
		}
	}
	return max_pos < 0 ? optind : 0;
}

int rl_watch_sleep(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	/* No restart after EINTR: the caller's signal flag decides whether to go on. */
	return nanosleep(&ts, NULL) ? -errno : 0;
}

int rl_args_given(const struct rl_args *a, unsigned int groups)
{
	int n = 0;

	for (size_t i = 0; i < rl_opt_count; i++)
		n += a->given[i] && (rl_opt_table[i].group & groups);
	return n;
}

int rl_policy_parse(struct rl_policy *pol, struct rl_opts *o, const char *const *words, char *err,
		    size_t errlen)
{
	struct rl_args a;
	char *argv[64];
	int argc = 0, ret;

	argv[argc++] = "policy";
	for (; *words; words++) {
		if (argc == (int)(sizeof(argv) / sizeof(argv[0])) - 1) {
			snprintf(err, errlen, "too many words");
			return -E2BIG;
		}
		argv[argc++] = (char *)*words;
	}
	argv[argc] = NULL;
	rl_args_defaults(&a);
	ret = rl_args_parse(&a, RL_G_POLICY | RL_G_LIMITER | RL_G_SYN, 0, argc, argv, err, errlen);
	if (ret)
		return ret;
	*pol = a.pol;
	if (o)
		*o = a.o;
	return 0;
}

/* One option's spelling in --help and the man page: "-j, --json" or "--rate RATE". */
static void spell(const struct rl_opt *opt, char *buf, size_t len)
{
	int n = 0;

	if (opt->short_name)
		n = snprintf(buf, len, "-%c, ", opt->short_name);
	snprintf(buf + n, len - (size_t)n, "--%s%s%s", opt->name, opt->arg ? " " : "",
		 opt->arg ? opt->arg : "");
}

/* Print @text from column @indent, wrapped at 80. */
static void wrap(FILE *f, const char *text, int col, int indent)
{
	const char *p = text;

	while (*p) {
		const char *w = p;
		int wl;

		while (*w == ' ')
			w++;
		wl = (int)strcspn(w, " ");
		if (col > indent && col + 1 + wl > 80) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", wl, w);
		col += wl;
		p = w + wl;
	}
	fputc('\n', f);
}

void rl_opts_usage(FILE *f, unsigned int groups)
{
	char s[64];

	for (size_t i = 0; i < rl_opt_count; i++) {
		const struct rl_opt *opt = &rl_opt_table[i];
		int n;

		if (!(opt->group & groups))
			continue;
		spell(opt, s, sizeof(s));
		n = fprintf(f, "  %s%s", opt->short_name ? "" : "    ", s);
		if (n >= 24) {
			fprintf(f, "\n%24s", "");
			n = 24;
		}
		fprintf(f, "%*s", 24 - n, "");
		wrap(f, opt->help, 24, 24);
	}
}

void rl_man_text(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

void rl_opts_man(FILE *f, unsigned int groups)
{
	for (size_t i = 0; i < rl_opt_count; i++) {
		const struct rl_opt *opt = &rl_opt_table[i];

		if (!(opt->group & groups))
			continue;
		fputs(".TP\n", f);
		if (opt->short_name)
			fprintf(f, "\\fB\\-%c\\fR, ", opt->short_name);
		fputs("\\fB\\-\\-", f);
		rl_man_text(f, opt->name);
		fputs("\\fR", f);
		if (opt->arg) {
			fputs(" \\fI", f);
			rl_man_text(f, opt->arg);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		rl_man_text(f, opt->help);
		fputc('\n', f);
	}
}
