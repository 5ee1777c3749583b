// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* events: the drop samples of a limiter, live, as text, JSON lines or a pcap file. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "dynlib_pcap.h"
#include "env.h"
#include "events.h"
#include "json_writer.h"
#include "level.h"
#include "lock.h"
#include "pins.h"
#include "source.h"
#include "xdp_attach.h"

/* How long a poll waits, so that a signal, --duration or a quiet ring is noticed. */
#define POLL_MS 100
/* Bytes of a frame a text line shows. */
#define TEXT_BYTES 32

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct reader {
	const char *iface;
	bool json;
	bool shared; /* other interfaces share the limiter: samples name theirs */
	pcap_dumper_t *dump;
	__u64 mono_to_wall; /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	__u64 count, n; /* the most to show (0: no end), shown */
};

static __u64 ns_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * bpf_ktime_get_ns() is CLOCK_MONOTONIC: the offset to the wall clock, read
 * between two monotonic reads (their midpoint is the realtime read's moment,
 * within half their gap). A clock step (NTP, date -s) while events runs is
 * not followed: the times stay consistent with each other.
 */
static __u64 wall_offset(void)
{
	__u64 m0 = ns_of(CLOCK_MONOTONIC), r = ns_of(CLOCK_REALTIME);
	__u64 m1 = ns_of(CLOCK_MONOTONIC);

	return r - (m0 + (m1 - m0) / 2);
}

static void hex(char *out, const __u8 *b, __u32 n)
{
	for (__u32 i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

static void source_str(const struct rl_key *k, char *buf, size_t len)
{
	static const struct rl_key none;

	if (!memcmp(k, &none, sizeof(none)))
		snprintf(buf, len, "-");
	else
		rl_key_str(k, 32, 128, buf, len);
}

static int on_sample(void *ctx, void *data, size_t size)
{
	const struct rl_event *e = data;
	struct reader *r = ctx;
	char src[RL_KEY_STRLEN], bytes[2 * RL_EV_SNAP + 1], when[32], ifname[IF_NAMESIZE];
	char what[48];
	__u32 caplen;
	__u64 wall;
	time_t sec;
	struct tm tm;

	if (size < sizeof(*e) || (r->count && r->n >= r->count))
		return 0;
	caplen = e->caplen < RL_EV_SNAP ? e->caplen : RL_EV_SNAP;
	wall = e->time_ns + r->mono_to_wall;
	r->n++;
	if (r->dump) {
		struct pcap_pkthdr h = { .caplen = caplen, .len = e->len };

		/* A nanosecond-precision file: tv_usec holds the ns (pcap_open_dead_with_tstamp_precision). */
		h.ts.tv_sec = (time_t)(wall / 1000000000ULL);
		h.ts.tv_usec = (suseconds_t)(wall % 1000000000ULL);
		rl_pcap.pcap_dump((u_char *)r->dump, &h, e->data);
		return 0;
	}
	source_str(&e->src, src, sizeof(src));
	/* The interface the frame came in on: with a shared limiter, not always ours. */
	if (!if_indextoname(e->ifindex, ifname))
		snprintf(ifname, sizeof(ifname), "%s", r->iface);
	sec = (time_t)(wall / 1000000000ULL);
	if (r->json) {
		struct rl_json w;

		gmtime_r(&sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%09lluZ",
			 (unsigned long long)(wall % 1000000000ULL));
		hex(bytes, e->data, caplen);
		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_string_field(&w, "time", when);
		jw_uint_field(&w, "time_ns", wall);
		jw_string_field(&w, "iface", ifname);
		jw_uint_field(&w, "ifindex", e->ifindex);
		jw_uint_field(&w, "rule", e->rule);
		jw_string_field(&w, "reason", rl_ev_reason_name(e->reason));
		jw_string_field(&w, "src", src);
		jw_uint_field(&w, "len", e->len);
		jw_uint_field(&w, "caplen", caplen);
		jw_string_field(&w, "data", bytes);
		/*
		 * The level that refused it (include/rl_agg.h): source, aggregate,
		 * iface, new. After the fields a sample always had, for readers that
		 * rely on their order.
		 */
		jw_string_field(&w, "level", rl_level_name(e->level));
		jw_end_object(&w);
		jw_end(&w);
		return 0;
	}
	localtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	hex(bytes, e->data, caplen < TEXT_BYTES ? caplen : TEXT_BYTES);
	rl_ev_what(e, what, sizeof(what));
	if (r->shared)
		printf("%s.%09llu %-15s %-14s %-15s %5u  %s\n", when,
		       (unsigned long long)(wall % 1000000000ULL), ifname, what, src, e->len,
		       bytes);
	else
		printf("%s.%09llu %-14s %-15s %5u  %s\n", when,
		       (unsigned long long)(wall % 1000000000ULL), what, src, e->len, bytes);
	fflush(stdout);
	return 0;
}

static int open_pcap(const char *file, pcap_t **p, pcap_dumper_t **d)
{
	char err[RL_ERRLEN];

	/* Before the file is made or sampling turned on: a missing libpcap changes nothing. */
	if (rl_pcap_load("events --pcap", err, sizeof(err))) {
		pr_err("%s", err);
		return -ELIBACC;
	}
	*p = rl_pcap.pcap_open_dead_with_tstamp_precision(DLT_EN10MB, RL_EV_SNAP,
							  PCAP_TSTAMP_PRECISION_NANO);
	if (!*p) {
		pr_err("couldn't set up a pcap writer");
		return -ENOMEM;
	}
	*d = rl_pcap.pcap_dump_open(*p, file);
	if (!*d) {
		pr_err("couldn't open '%s' for writing: %s", file, rl_pcap.pcap_geterr(*p));
		rl_pcap.pcap_close(*p);
		*p = NULL;
		return -EIO;
	}
	return 0;
}

static int enable(const struct rl_pins *pins, const struct rl_args *a, const char *iface)
{
	char err[RL_ERRLEN];
	int lock, ret;

	/* Under the lock: two readers starting at once must not both take over. */
	lock = rl_lock(err, sizeof(err));
	if (lock < 0) {
		pr_err("%s", err);
		return lock;
	}
	ret = rl_events_enable(pins, (__u32)a->one_in, (__u32)a->max_rate, getpid(), err,
			       sizeof(err));
	rl_unlock(lock);
	if (ret)
		pr_err("%s: %s", iface, err);
	return ret;
}

int cmd_events(const struct rl_args *a)
{
	struct reader r = { .iface = a->pos[0], .json = a->json, .count = a->count };
	struct ring_buffer *rb = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	char err[RL_ERRLEN];
	struct rl_evcpu tally;
	struct rl_iface ifc;
	struct rl_pins pins;
	pcap_t *pcap = NULL;
	__u64 end = 0;
	int ret = 1, n;

	if (a->pcap && a->json) {
		pr_err("events: --json and --pcap exclude each other (a pcap file has its own format)");
		return 2;
	}
	if (rl_check_env(err, sizeof(err)) || rl_iface_get(r.iface, &ifc, err, sizeof(err)) ||
	    rl_pins_open(&ifc, &pins, err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	{
		struct rl_member m[RL_MAX_MEMBERS];

		r.shared = rl_members(&ifc, m, RL_MAX_MEMBERS) > 1;
	}
	if (a->pcap && open_pcap(a->pcap, &pcap, &r.dump))
		goto out;
	rb = ring_buffer__new(pins.events, on_sample, &r, NULL);
	if (!rb) {
		pr_err("couldn't read the ring buffer of '%s': %s", r.iface, strerror(errno));
		goto out;
	}
	/* No SA_RESTART: a signal must end the poll, not restart it. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (enable(&pins, a, r.iface))
		goto out;
	r.mono_to_wall = wall_offset();
	if (a->duration_ns)
		end = ns_of(CLOCK_MONOTONIC) + a->duration_ns;
	ret = 0;
	while (!stop && (!r.count || r.n < r.count)) {
		int ms = POLL_MS;

		if (end) {
			__u64 now = ns_of(CLOCK_MONOTONIC);

			if (now >= end)
				break;
			if (end - now < (__u64)POLL_MS * 1000000)
				ms = (int)((end - now + 999999) / 1000000);
		}
		n = ring_buffer__poll(rb, ms);
		/*
		 * The program wakes us only when its ring is half full: a poll
		 * that timed out reads what came meanwhile.
		 */
		if (n == 0)
			n = ring_buffer__consume(rb);
		if (n < 0 && n != -EINTR) {
			pr_err("couldn't read the ring buffer of '%s': %s", r.iface, strerror(-n));
			ret = 1;
			break;
		}
	}
	rl_events_disable(&pins, getpid());
	/* What was sent before the switch went off, up to --count. */
	if (!ret && (!r.count || r.n < r.count))
		ring_buffer__consume(rb);
	if (!rl_events_tally(&pins, &tally) && (r.dump || tally.lost || tally.capped) && !r.json)
		fprintf(stderr,
			"%llu samples%s%s; %llu over the cap of a second, %llu lost (ring full)\n",
			(unsigned long long)r.n, r.dump ? " written to " : "",
			r.dump ? a->pcap : "", (unsigned long long)tally.capped,
			(unsigned long long)tally.lost);
out:
	ring_buffer__free(rb);
	if (r.dump)
		rl_pcap.pcap_dump_close(r.dump);
	if (pcap)
		rl_pcap.pcap_close(pcap);
	rl_pins_close(&pins);
	return ret;
}
