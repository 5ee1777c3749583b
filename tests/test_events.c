// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Drop samples (include/rl_events.h) through BPF_PROG_TEST_RUN and the test
 * clock, read from the ring buffer as the events command reads it.
 *
 *	events_off		no reader: packets dropped, nothing sent, no tally moves
 *	events_one_in_n		exactly drops 1, N + 1, 2N + 1... are sent; passes never
 *	events_max_rate		at most M in each second of the clock, exactly
 *	events_fields		reason, source, length, bytes, time, ifindex of a sample
 *	events_takeover		a live reader is refused, a dead one's switch is taken over
 *	events_survive_set	a new program (set) keeps the reader's switch and countdown
 *	events_e2e		events --pcap (tcpdump, tshark), a second reader refused,
 *				one killed taken over, --json; on a veth pair
 *
 * The policy is 1 packet an hour with a burst of 1: a source's first packet
 * passes, every later one (within the test's hour) is dropped. The countdown
 * is per CPU, so every test pins itself to one CPU while it runs frames.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "events.h"
#include "frames.h"
#include "harness.h"
#include "netns.h"
#include "source.h"
#include "test.h"

#define SEC	   1000000000ULL
#define MAX_EVENTS 256
/* Small tables: a few sources per test (see test_prog.c). */
#define TEST_MAX_SOURCES 1024

struct ev_test {
	struct rl_prog p;
	struct ring_buffer *rb;
	struct rl_event ev[MAX_EVENTS];
	int n;
	cpu_set_t old_cpus;
};

static int collect(void *ctx, void *data, size_t size)
{
	struct ev_test *t = ctx;

	if (size < sizeof(struct rl_event) || t->n >= MAX_EVENTS)
		return 0;
	memcpy(&t->ev[t->n++], data, sizeof(struct rl_event));
	return 0;
}

static bool ev_start(struct ev_test *t, const char *const *opts)
{
	struct rl_config cfg;
	cpu_set_t one;

	memset(t, 0, sizeof(*t));
	sched_getaffinity(0, sizeof(t->old_cpus), &t->old_cpus);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (!ASSERT_OK(sched_setaffinity(0, sizeof(one), &one), "pin to one CPU"))
		return false;
	if (!rl_build_config(&cfg, opts, NULL) || !rl_prog_load(&t->p, true, TEST_MAX_SOURCES))
		return false;
	if (!rl_prog_configure(&t->p, 0, &cfg))
		goto fail;
	t->rb = ring_buffer__new(t->p.maps.events, collect, t, NULL);
	if (!ASSERT_TRUE(t->rb != NULL, "ring_buffer__new on rl_events"))
		goto fail;
	return true;
fail:
	rl_prog_close(&t->p);
	return false;
}

static void ev_stop(struct ev_test *t)
{
	ring_buffer__free(t->rb);
	rl_prog_close(&t->p);
	sched_setaffinity(0, sizeof(t->old_cpus), &t->old_cpus);
}

/* Samples sent since the last call, into t->ev (from index 0). */
static int ev_drain(struct ev_test *t)
{
	t->n = 0;
	if (ring_buffer__consume(t->rb) < 0)
		return -1;
	return t->n;
}

/* One frame at @now, arriving on ifindex 1 (lo, which every namespace has). */
static int ev_run(struct ev_test *t, __u64 now, const struct frame *f)
{
	struct xdp_md ctx = { .data_end = f->len, .ingress_ifindex = 1 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = f->len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);
	__u32 zero = 0;

	if (f->bad || bpf_map_update_elem(t->p.clock_fd, &zero, &now, BPF_ANY))
		return -1;
	if (bpf_prog_test_run_opts(t->p.prog_fd, &opts))
		return -1;
	return (int)opts.retval;
}

static void udp4(struct frame *f, const char *src, unsigned int len)
{
	fr_init(f);
	fr_eth(f, ETH_P_IP);
	fr_ipv4(f, src, NULL);
	fr_pad(f, len);
}

static const char *const hourly[] = { "--rate", "1/h", "--burst", "1", NULL };

TEST_FLAGS(events_off, RL_TEST_ROOT)
{
	struct ev_test t;
	struct rl_counters c;
	struct rl_evcpu tally;
	struct frame f;
	int drops = 0;

	if (!ev_start(&t, hourly))
		return;
	udp4(&f, "198.18.0.1", 60);
	for (int i = 0; i < 100; i++)
		drops += ev_run(&t, 10 * SEC, &f) == XDP_DROP;
	ASSERT_EQ(drops, 99, "every packet after the first is dropped");
	if (rl_prog_counters(&t.p, &c))
		ASSERT_EQ(c.dropped, 99, "counted as dropped");
	ASSERT_EQ(ev_drain(&t), 0, "no reader: no sample sent");
	if (ASSERT_OK(rl_events_tally(&t.p.maps, &tally), "read rl_evcpu"))
		ASSERT_TRUE(!tally.sent && !tally.capped && !tally.lost,
			    "the sampler never ran (nothing picked, capped or lost)");
	/* Turned on and off again: off is off. */
	if (ASSERT_OK(rl_events_enable(&t.p.maps, 1, 100, getpid(), NULL, 0), "enable") &&
	    ASSERT_OK(rl_events_disable(&t.p.maps, getpid()), "disable")) {
		for (int i = 0; i < 10; i++)
			ev_run(&t, 11 * SEC, &f);
		ASSERT_EQ(ev_drain(&t), 0, "turned off: no sample sent");
	}
	ev_stop(&t);
}

TEST_FLAGS(events_one_in_n, RL_TEST_ROOT)
{
	static const __u32 ns[] = { 1, 2, 7, 100 };
	char err[RL_ERRLEN] = "";

	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		__u32 n = ns[k], drops = 3 * n + 1, passes = 0;
		struct ev_test t;
		struct rl_evcpu tally;
		struct frame f, g;
		char src[32];

		if (!ev_start(&t, hourly))
			return;
		if (!ASSERT_OK(rl_events_enable(&t.p.maps, n, RL_EV_MAX_RATE, getpid(), err,
						sizeof(err)),
			       err))
			goto next;
		udp4(&f, "198.18.0.1", 60);
		ASSERT_EQ(ev_run(&t, 5 * SEC, &f), XDP_PASS, "the source's first packet passes");
		/* Drop i has length 60 + i, so the samples say which drops were picked. */
		for (__u32 i = 0; i < drops; i++) {
			udp4(&f, "198.18.0.1", 60 + i);
			ASSERT_EQ(ev_run(&t, 5 * SEC, &f), XDP_DROP, "over the limit");
			/* Between drops, a new source's first packet: it passes. */
			snprintf(src, sizeof(src), "198.18.%u.%u", 1 + i / 250, i % 250);
			udp4(&g, src, 60);
			passes += ev_run(&t, 5 * SEC + i, &g) == XDP_PASS;
		}
		ASSERT_TRUE(passes > 0, "passed packets were interleaved");
		ASSERT_EQ(ev_drain(&t), 4, "exactly 1 in N of 3N + 1 drops: 4 samples");
		for (int i = 0; i < t.n && i < 4; i++) {
			ASSERT_EQ(t.ev[i].len, 60 + (__u32)i * n, "drops 1, N + 1, 2N + 1, 3N + 1");
			ASSERT_EQ(t.ev[i].reason, RL_EV_LIMITED, "limited");
			/* The passes came from 198.18.1-2.x: none of them is here. */
			ASSERT_EQ(t.ev[i].src.addr[3], htonl(0xc6120001),
				  "only the dropped source");
		}
		if (ASSERT_OK(rl_events_tally(&t.p.maps, &tally), "read rl_evcpu"))
			ASSERT_EQ(tally.sent, 4, "tally: 4 sent");
next:
		ev_stop(&t);
	}
}

TEST_FLAGS(events_max_rate, RL_TEST_ROOT)
{
	static const struct {
		__u64 t; /* ns */
		int drops, sent; /* in this burst */
	} steps[] = {
		{ 10 * SEC, 20, 5 }, /* a new second: the cap */
		{ 10 * SEC + SEC / 2, 10, 0 }, /* same second: nothing more */
		{ 11 * SEC - 1, 10, 0 }, /* its last ns */
		{ 11 * SEC, 3, 3 }, /* the next second, from its first ns */
		{ 11 * SEC + 1, 10, 2 },
		{ 14 * SEC + 999999999, 10, 5 }, /* seconds later */
	};
	char err[RL_ERRLEN] = "";
	struct rl_evcpu tally;
	struct ev_test t;
	struct frame f;
	int sent = 0, drops = 0;

	if (!ev_start(&t, hourly))
		return;
	if (!ASSERT_OK(rl_events_enable(&t.p.maps, 1, 5, getpid(), err, sizeof(err)), err))
		goto out;
	udp4(&f, "198.18.0.1", 60);
	ev_run(&t, 9 * SEC, &f); /* the first packet: passes */
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		for (int i = 0; i < steps[s].drops; i++)
			ASSERT_EQ(ev_run(&t, steps[s].t, &f), XDP_DROP, "dropped");
		ASSERT_EQ(ev_drain(&t), steps[s].sent, "samples within the cap of the second");
		sent += steps[s].sent;
		drops += steps[s].drops;
	}
	if (ASSERT_OK(rl_events_tally(&t.p.maps, &tally), "read rl_evcpu")) {
		ASSERT_EQ(tally.sent, sent, "tally: sent");
		ASSERT_EQ(tally.capped, drops - sent, "tally: every other drop over the cap");
		ASSERT_EQ(tally.lost, 0, "none lost");
	}
out:
	ev_stop(&t);
}

/* The sample of one dropped frame @f at @now: false if there is not exactly one. */
static bool one_sample(struct ev_test *t, __u64 now, const struct frame *f, int verdict)
{
	if (!ASSERT_EQ(ev_run(t, now, f), verdict, "verdict"))
		return false;
	return ASSERT_EQ(ev_drain(t), 1, "one sample");
}

static void check_fields(const struct rl_event *e, const struct frame *f, __u32 reason,
			 const char *src, __u64 now)
{
	struct rl_key k = {};
	__u32 cap = f->len < RL_EV_SNAP ? f->len : RL_EV_SNAP;

	if (src)
		ASSERT_OK(rl_key_parse(src, &k), src);
	ASSERT_EQ(e->reason, reason, "reason");
	ASSERT_EQ(e->len, f->len, "the frame's length");
	ASSERT_EQ(e->caplen, cap, "captured: the frame, at most RL_EV_SNAP");
	ASSERT_TRUE(!memcmp(e->data, f->data, cap), "the frame's first bytes");
	ASSERT_TRUE(!memcmp(&e->src, &k, sizeof(k)), "the source, unmasked, IPv4-mapped");
	ASSERT_EQ(e->time_ns, now, "the packet's time");
	ASSERT_EQ(e->ifindex, 1, "the interface it came in on");
	ASSERT_EQ(e->rule, 0, "the default rule");
}

TEST_FLAGS(events_fields, RL_TEST_ROOT)
{
	static const char *const v4_24[] = { "--rate",	  "1/h", "--burst", "1",
					     "--prefix4", "24",	 NULL };
	static const char *const dry[] = { "--rate",   "1/h",	  "--burst", "1",
					   "--action", "dry-run", NULL };
	struct ev_test t;
	struct frame f;
	__u64 now = 20 * SEC + 12345;

	/* IPv4, longer than the snapshot: the source is the host's, not its /24. */
	if (!ev_start(&t, v4_24))
		return;
	if (!ASSERT_OK(rl_events_enable(&t.p.maps, 1, 100, getpid(), NULL, 0), "enable"))
		goto out;
	udp4(&f, "198.18.0.7", 300);
	for (int i = 0; i < 300 - 42; i++)
		f.data[42 + i] = (__u8)(i * 7 + 1); /* a payload to compare */
	ev_run(&t, now, &f);
	if (one_sample(&t, now, &f, XDP_DROP))
		check_fields(&t.ev[0], &f, RL_EV_LIMITED, "198.18.0.7", now);
	/* Another host of the same /24 shares its limit: dropped, named by its own address. */
	udp4(&f, "198.18.0.99", 64);
	if (one_sample(&t, now + 1, &f, XDP_DROP))
		check_fields(&t.ev[0], &f, RL_EV_LIMITED, "198.18.0.99", now + 1);
	/* IPv6, shorter than the snapshot. */
	fr_init(&f);
	fr_eth(&f, ETH_P_IPV6);
	fr_ipv6(&f, "2001:db8::7", 0);
	fr_pad(&f, 90);
	ev_run(&t, now, &f);
	if (one_sample(&t, now + 2, &f, XDP_DROP))
		check_fields(&t.ev[0], &f, RL_EV_LIMITED, "2001:db8::7", now + 2);
	/* Malformed (dropped by default): a truncated IPv4 header, no source. */
	udp4(&f, "198.18.0.8", 60);
	fr_cut(&f, ETH_HLEN + 10);
	if (one_sample(&t, now + 3, &f, XDP_DROP))
		check_fields(&t.ev[0], &f, RL_EV_MALFORMED + RL_BAD_IPV4, NULL, now + 3);
	/* An IHL under 5: malformed-ihl. */
	{
		struct fr_ip4 o = { .ihl = 4, .set_ihl = true };

		fr_init(&f);
		fr_eth(&f, ETH_P_IP);
		fr_ipv4(&f, "198.18.0.9", &o);
		fr_pad(&f, 60);
		if (one_sample(&t, now + 4, &f, XDP_DROP))
			check_fields(&t.ev[0], &f, RL_EV_MALFORMED + RL_BAD_IHL, NULL, now + 4);
	}
	/* Passed frames are never sampled: not IP, a new source. */
	fr_init(&f);
	fr_arp(&f);
	ASSERT_EQ(ev_run(&t, now + 5, &f), XDP_PASS, "ARP passes");
	udp4(&f, "198.18.5.1", 60);
	ASSERT_EQ(ev_run(&t, now + 5, &f), XDP_PASS, "a new source passes");
	ASSERT_EQ(ev_drain(&t), 0, "passed: no sample");
	ev_stop(&t);

	/* Dry-run: passed, but sampled as would-drop. */
	if (!ev_start(&t, dry))
		return;
	if (!ASSERT_OK(rl_events_enable(&t.p.maps, 1, 100, getpid(), NULL, 0), "enable"))
		goto out;
	udp4(&f, "198.18.0.10", 60);
	ASSERT_EQ(ev_run(&t, now, &f), XDP_PASS, "first");
	ASSERT_EQ(ev_drain(&t), 0, "within the limit: no sample");
	if (one_sample(&t, now + 6, &f, XDP_PASS))
		check_fields(&t.ev[0], &f, RL_EV_WOULD_DROP, "198.18.0.10", now + 6);
out:
	ev_stop(&t);
}

TEST_FLAGS(events_takeover, RL_TEST_ROOT)
{
	char err[RL_ERRLEN] = "";
	struct ev_test t;
	struct rl_evctl ctl;
	__u32 zero = 0;
	pid_t dead;

	if (!ev_start(&t, hourly))
		return;
	/* A live reader (our parent, the test runner's parent) holds it: refused. */
	if (!ASSERT_OK(rl_events_enable(&t.p.maps, 1, 100, getppid(), err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(rl_events_enable(&t.p.maps, 1, 100, getpid(), err, sizeof(err)), -EBUSY,
		  "a second reader while the first lives");
	ASSERT_CONTAINS(err, "another reader", "says who");
	/* Disabling is the reader's: ours does not turn theirs off. */
	ASSERT_OK(rl_events_disable(&t.p.maps, getpid()), "disable (not ours)");
	if (ASSERT_OK(bpf_map_lookup_elem(t.p.maps.evctl, &zero, &ctl), "read rl_evctl"))
		ASSERT_TRUE(ctl.on && ctl.pid == (__u32)getppid(), "still theirs");
	/* A reader that died with sampling on: taken over. */
	dead = fork();
	if (dead == 0)
		_exit(0);
	if (!ASSERT_TRUE(dead > 0, "fork"))
		goto out;
	waitpid(dead, NULL, 0);
	ASSERT_OK(rl_events_disable(&t.p.maps, 0), "turned off, whoever reads");
	ASSERT_OK(rl_events_enable(&t.p.maps, 1, 100, dead, err, sizeof(err)), err);
	err[0] = '\0';
	ASSERT_OK(rl_events_enable(&t.p.maps, 3, 100, getpid(), err, sizeof(err)),
		  "taken over from a dead reader");
	if (ASSERT_OK(bpf_map_lookup_elem(t.p.maps.evctl, &zero, &ctl), "read rl_evctl"))
		ASSERT_TRUE(ctl.on && ctl.pid == (__u32)getpid() && ctl.one_in == 3,
			    "ours now, with our parameters");
	ASSERT_OK(rl_events_disable(&t.p.maps, getpid()), "disable");
	if (ASSERT_OK(bpf_map_lookup_elem(t.p.maps.evctl, &zero, &ctl), "read rl_evctl"))
		ASSERT_TRUE(!ctl.on, "off");
out:
	ev_stop(&t);
}

/*
 * End to end: the limiter on one end of a veth pair, a flood from one source
 * on the other, and the events command in the receiving namespace writing a
 * pcap file (read back by tcpdump and tshark) and then JSON lines. Each flood
 * runs about 1 s (5000 frames at a 200 us gap, killed after 10 s), far longer
 * than events needs for K samples; events stops after K samples or 20 s.
 * Everything is removed on every path.
 */
#define E2E_K	20
#define E2E_SRC "198.18.0.10"
#define E2E_FLOOD                                                            \
	{                                                                    \
		.src = E2E_SRC, .count = 5000, .gap = "200us", .limit_s = 10 \
	}

/* Lines of @s. */
static int lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

/* Does every line of @s contain @needle? */
static bool every_line_has(const char *s, const char *needle)
{
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		if (!memmem(s, len, needle, strlen(needle)))
			return false;
		s += len + (nl != NULL);
	}
	return true;
}

/* events IFACE ARGS --count K while a flood runs: 0 exit status, its output in *out. */
static bool run_events(struct rl_ns *ns, const char *args, char **out)
{
	struct rl_flow f = E2E_FLOOD;
	char *err = NULL;
	int rc;

	if (!ASSERT_OK(rl_flow_start(ns, &f), "start the flood"))
		return false;
	rc = rl_ns_cli(ns, out, &err, "events %s %s --count %d --duration 20s", ns->rx_if, args,
		       E2E_K);
	ASSERT_OK(rl_flow_wait(&f), "the flood ends");
	rl_flow_stop(&f);
	if (!ASSERT_EQ(rc, 0, "events")) {
		fprintf(stderr, "    events %s: %s", args, err ? err : "");
		free(err);
		return false;
	}
	free(err);
	return true;
}

/* The switch of the namespace's limiter, from its pin. */
static bool read_evctl(struct rl_ns *ns, struct rl_evctl *ctl)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	__u32 zero = 0;
	bool ok;
	int fd;

	if (rl_ns_pin_dir(ns->rx, ns->rx_if, dir, sizeof(dir)))
		return false;
	snprintf(path, sizeof(path), "%s/rl_evctl", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return false;
	ok = !bpf_map_lookup_elem(fd, &zero, ctl);
	close(fd);
	return ok;
}

/* sampling is off again in the namespace's limiter, and nobody holds it. */
static bool sampling_off(struct rl_ns *ns)
{
	struct rl_evctl ctl;

	if (!ASSERT_TRUE(read_evctl(ns, &ctl), "read the pinned rl_evctl"))
		return false;
	return ASSERT_TRUE(!ctl.on && !ctl.pid, "events turned sampling off at its end");
}

/* A reader in the background (events --duration 20s), once it has turned sampling on; 0: failed. */
static pid_t background_reader(struct rl_ns *ns)
{
	char netns[64], prog[PATH_MAX];
	struct rl_evctl ctl;
	pid_t pid;

	snprintf(netns, sizeof(netns), "--net=/run/netns/%s", ns->rx);
	snprintf(prog, sizeof(prog), "%s/xdp-ratelimit", rl_build_dir);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		/* nsenter without --fork execs the command: the pid is the reader's. */
		execlp("nsenter", "nsenter", netns, prog, "events", ns->rx_if, "--duration", "20s",
		       (char *)NULL);
		_exit(127);
	}
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return 0;
	for (int i = 0; i < 500; i++) {
		if (read_evctl(ns, &ctl) && ctl.on && ctl.pid == (__u32)pid)
			return pid;
		usleep(10000);
	}
	rl_test_fail(__FILE__, __LINE__, "the background reader did not turn sampling on in 5 s");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

TEST_FLAGS(events_e2e, RL_TEST_ROOT)
{
	char pcap[64], args[96], *out = NULL, *err = NULL;
	pid_t reader = 0;
	struct rl_ns ns;

	snprintf(pcap, sizeof(pcap), "/tmp/rlt-events-%d.pcap", getpid());
	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		goto out;
	if (!ASSERT_EQ(rl_ns_cli(&ns, NULL, &err, "attach %s --rate 100 --burst 10", ns.rx_if), 0,
		       "attach")) {
		fprintf(stderr, "    %s", err ? err : "");
		goto out;
	}
	/* A pcap file: tcpdump and tshark each read exactly K frames from the flood's source. */
	snprintf(args, sizeof(args), "--pcap %s", pcap);
	if (!run_events(&ns, args, NULL) || !sampling_off(&ns))
		goto out;
	if (ASSERT_EQ(rl_sh(&out, "tcpdump -nn -r %s 2>/dev/null", pcap), 0, "tcpdump -r")) {
		ASSERT_EQ(lines(out), E2E_K, "tcpdump reads K packets");
		ASSERT_TRUE(every_line_has(out, "IP " E2E_SRC ".40000 > " RL_NS_RX_ADDR4 ".9: UDP"),
			    "each from the flooding source");
	}
	free(out);
	out = NULL;
	if (ASSERT_EQ(
		    rl_sh(&out, "tshark -r %s -T fields -e ip.src -e frame.len 2>/dev/null", pcap),
		    0, "tshark -r")) {
		ASSERT_EQ(lines(out), E2E_K, "tshark reads K packets");
		ASSERT_TRUE(every_line_has(out, E2E_SRC "\t60"),
			    "each from the flooding source, 60 bytes long");
	}
	free(out);
	out = NULL;
	/* Text lines: TIME REASON SOURCE LEN BYTES, the bytes from the destination MAC on. */
	if (!run_events(&ns, "", &out))
		goto out;
	{
		char want[64], mac[13];
		unsigned int m[6];

		if (ASSERT_EQ(sscanf(ns.rx_mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
				     &m[4], &m[5]),
			      6, "the receiving MAC")) {
			snprintf(mac, sizeof(mac), "%02x%02x%02x%02x%02x%02x", m[0], m[1], m[2],
				 m[3], m[4], m[5]);
			snprintf(want, sizeof(want), " limited        %-15s    60  %s", E2E_SRC,
				 mac);
			ASSERT_EQ(lines(out), E2E_K, "K text lines");
			ASSERT_TRUE(every_line_has(out, want), want);
		}
	}
	free(out);
	out = NULL;
	/*
	 * A second reader is refused while the first lives; once the first is
	 * killed with SIGKILL (no chance to turn sampling off), the next one
	 * takes over: the JSON run below.
	 */
	reader = background_reader(&ns);
	if (!reader)
		goto out;
	free(err);
	err = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, NULL, &err, "events %s --count 1 --duration 2s", ns.rx_if), 1,
		  "a second reader is refused");
	snprintf(args, sizeof(args), "another reader (pid %d)", (int)reader);
	ASSERT_CONTAINS(err, args, "naming the first");
	kill(reader, SIGKILL);
	waitpid(reader, NULL, 0);
	reader = 0;
	/* JSON lines. */
	if (!run_events(&ns, "--json", &out) || !sampling_off(&ns))
		goto out;
	ASSERT_EQ(lines(out), E2E_K, "K JSON lines");
	ASSERT_TRUE(every_line_has(out, "\"reason\":\"limited\",\"src\":\"" E2E_SRC "\""),
		    "each a limited packet from the flooding source");
	ASSERT_TRUE(every_line_has(out, "\"len\":60,\"caplen\":60"), "each 60 bytes, all captured");
	/* SIGTERM: the reader turns sampling off and exits 0 (within 3 s). */
	reader = background_reader(&ns);
	if (reader) {
		int status = -1;
		pid_t done = 0;

		kill(reader, SIGTERM);
		for (int i = 0; i < 300 && !done; i++) {
			done = waitpid(reader, &status, WNOHANG);
			if (!done)
				usleep(10000);
		}
		if (ASSERT_TRUE(done == reader, "events ends on SIGTERM")) {
			reader = 0;
			ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status 0");
			sampling_off(&ns);
		}
	}
out:
	if (reader > 0) {
		kill(reader, SIGKILL);
		waitpid(reader, NULL, 0);
	}
	free(out);
	free(err);
	rl_ns_destroy(&ns);
	unlink(pcap);
}

/* set loads a new program on the same maps: a reader's switch and its countdown carry on. */
TEST_FLAGS(events_survive_set, RL_TEST_ROOT)
{
	static const char *const hourly2[] = { "--rate", "2/h", "--burst", "1", NULL };
	struct rl_config cfg;
	struct ev_test t;
	struct frame f;

	if (!ev_start(&t, hourly))
		return;
	if (!ASSERT_OK(rl_events_enable(&t.p.maps, 2, 100, getpid(), NULL, 0), "enable"))
		goto out;
	udp4(&f, "198.18.0.1", 60);
	ev_run(&t, 5 * SEC, &f);
	for (int i = 0; i < 3; i++)
		ev_run(&t, 5 * SEC, &f); /* drops 1, 2, 3: 1 and 3 sent, the next is 5 */
	ASSERT_EQ(ev_drain(&t), 2, "drops 1 and 3");
	if (!rl_build_config(&cfg, hourly2, NULL) || !rl_prog_configure(&t.p, 1, &cfg))
		goto out;
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(ev_run(&t, 5 * SEC, &f), XDP_DROP, "dropped by the new program");
	ASSERT_EQ(ev_drain(&t), 2, "drops 5 and 7: still on, the countdown carried on");
out:
	ev_stop(&t);
}
