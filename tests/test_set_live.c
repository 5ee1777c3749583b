// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * set on a live limiter, through the CLI, in namespaces of its own: under a
 * flood, set after set, every frame is counted once and sources under every
 * policy's rate never lose one; a set that fails leaves the old program and
 * policy in force; and the source tables hold each (masked) source once.
 *
 * These hold whether set flips a configuration slot in a map or loads a new
 * program specialized for the policy and swaps it in (XDP_FLAGS_REPLACE): they
 * look only at the CLI, the kernel's link and XDP state, and the pinned maps
 * (every pin whose name starts with rl_state is a source table).
 *
 * Sources: 198.18.1.0/24, 198.18.3.7 (the flood) and 198.19.2.0/24,
 * 2001:db8:2::/112 (the slow ones), all off the receiving end's subnet so its
 * kernel has no neighbour to resolve for them and sends nothing that could
 * come back and be counted; the sending end has IPv6 disabled (netns.c), so
 * the receiving end sees nothing but these frames.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "netns.h"
#include "rl_sa.h"
#include "rl_sa6.h"
#include "test.h"

/* Ports the slow sources send to, each counted by a socket: their passes. */
#define SLOW4_PORT 7001
#define SLOW6_PORT 7002
/* sets during one flood, and how many of them at least must run while frames arrive. */
#define NSETS	 12
#define MIN_SETS 10
/* Between two sets: the flood lasts 5-11 s here, so 12 sets of even 0.4 s each fit. */
#define SET_GAP_S 0.05

/*
 * The policies set cycles through, each different from the one before it:
 * rates, all four algorithms, prefix lengths, dry-run on and off, the
 * IPv4 table (rl_sets4 to rl_state4 and back). The slow
 * sources (at most ~500 pps per flow, ~2 pps per address) stay well under
 * every one of them, even grouped per /16 or /48; the flood is over most.
 */
#define ATTACH_POLICY "--rate 5000 --burst 1000"
static const char *const policies[NSETS] = {
	"--rate 3000",
	"--algo gcra --burst 500",
	"--prefix4 24 --prefix6 48",
	"--action dry-run",
	"--algo fixed-window --rate 4000 --window 1s",
	"--action drop --prefix4 16",
	/* A byte window rl_sets4 cannot count: to rl_state4, and back with the next one. */
	"--algo sliding-window --window 1s --rate 100mbit",
	"--algo token-bucket --rate 6000 --burst 2000 --prefix4 32 --prefix6 128",
	"--rate 2500 --action dry-run",
	"--algo gcra --prefix4 24 --action drop",
	"--algo token-bucket --rate 5000 --burst 1000 --prefix4 32 --prefix6 64",
	"--rate 4000 --prefix4 16",
};

/* The counters of "stats --json" this file looks at. */
struct stats {
	unsigned long long rx_packets, passed, dropped, would_drop, ipv4, ipv6, not_ip;
};

static bool get_stats(struct rl_ns *ns, struct stats *st)
{
	char *out = NULL, *err = NULL;
	bool ok = false;

	if (!ASSERT_EQ(rl_ns_cli(ns, &out, &err, "stats %s --json", ns->rx_if), 0,
		       "stats --json")) {
		fprintf(stderr, "    %s", err ? err : "");
		goto out;
	}
#define FIELD(f) ASSERT_TRUE(rl_json_u64(out, #f, &st->f), "stats --json has " #f)
	ok = FIELD(rx_packets) && FIELD(passed) && FIELD(dropped) && FIELD(would_drop) &&
	     FIELD(ipv4) && FIELD(ipv6) && FIELD(not_ip);
#undef FIELD
out:
	free(out);
	free(err);
	return ok;
}

/* "xdp-ratelimit ARGS" in the receiving namespace; prints what it said if it failed. */
static bool cli_ok(struct rl_ns *ns, const char *what, char **outp, const char *args)
{
	char *out = NULL, *err = NULL;
	bool ok = ASSERT_EQ(rl_ns_cli(ns, &out, &err, "%s", args), 0, what);

	if (!ok)
		fprintf(stderr, "    xdp-ratelimit %s:\n%s%s", args, out ? out : "",
			err ? err : "");
	if (outp)
		*outp = out;
	else
		free(out);
	free(err);
	return ok;
}

static bool setup(struct rl_ns *ns, const char *policy)
{
	char args[256];

	if (!ASSERT_OK(rl_ns_create(ns), "make the namespace pair"))
		return false;
	/* The slow IPv4 sources have no route back: no reverse-path check may drop them. */
	if (!ASSERT_OK(rl_ns_rx_sh(ns, NULL,
				   "sysctl -qw net.ipv4.conf.all.rp_filter=0 "
				   "net.ipv4.conf.%s.rp_filter=0",
				   ns->rx_if),
		       "rp_filter off"))
		return false;
	snprintf(args, sizeof(args), "attach %s %s", ns->rx_if, policy);
	return cli_ok(ns, "attach", NULL, args);
}

/* The flood, the slow sources, and the sets run from the watch's tick. */
struct flood {
	struct rl_ns *ns;
	struct rl_flow many, heavy, slow4, slow6;
	struct rl_watch w;
	int done, during; /* sets run; sets while frames kept arriving */
	bool failed;
	double next;
	unsigned long long tx0, rx0; /* the veths' counters before the flood */
	struct stats before;
};

static int set_tick(struct rl_watch *w, void *arg)
{
	struct flood *fl = arg;
	struct rl_counters c0, c1;
	char args[256], *out = NULL;
	bool ok;

	if (w->first < 0 || fl->done == NSETS || rl_now() < fl->next)
		return 0;
	if (rl_ns_counters(fl->ns, &c0))
		c0.rx_packets = ~0ULL;
	snprintf(args, sizeof(args), "set %s %s", fl->ns->rx_if, policies[fl->done]);
	ok = cli_ok(fl->ns, "set during the flood", &out, args);
	/* A set that changed nothing would prove nothing. */
	ok = ok && ASSERT_TRUE(out && !strstr(out, "unchanged"), "set changed the policy");
	free(out);
	if (!ok) {
		fl->failed = true;
		return 1;
	}
	/* The counters survive a program swap only if the maps are reused: read them again. */
	if (!rl_ns_counters(fl->ns, &c1) && c0.rx_packets != ~0ULL && c1.rx_packets > c0.rx_packets)
		fl->during++;
	fl->done++;
	fl->next = rl_now() + SET_GAP_S;
	return 0;
}

/*
 * Attach, then send: a flood from 256 addresses of 198.18.1.0/24 (each under
 * its limit per /32, the /24 over it), one heavy source over every limit, and
 * 256 slow IPv4 and 256 slow IPv6 sources; run the NSETS sets meanwhile.
 * Every flow is bounded by its count and by 25 s.
 */
static bool run_flood(struct rl_ns *ns, struct flood *fl)
{
	unsigned long long rx, tx;

	memset(fl, 0, sizeof(*fl));
	fl->ns = ns;
	fl->w.socks[0] = fl->w.socks[1] = -1;
	fl->many = (struct rl_flow){
		.src = "198.18.1.0", .rand_bytes = 1, .count = 200000, .gap = "5us", .limit_s = 25
	};
	fl->heavy = (struct rl_flow){
		.src = "198.18.3.7", .count = 100000, .gap = "20us", .limit_s = 25
	};
	fl->slow4 = (struct rl_flow){ .src = "198.19.2.0",
				      .rand_bytes = 1,
				      .dport = SLOW4_PORT,
				      .count = 2000,
				      .gap = "2ms",
				      .limit_s = 25 };
	fl->slow6 = (struct rl_flow){ .src = "2001:db8:2::",
				      .rand_bytes = 1,
				      .dport = SLOW6_PORT,
				      .count = 2000,
				      .gap = "2ms",
				      .limit_s = 25 };
	fl->w.flows[0] = &fl->many;
	fl->w.flows[1] = &fl->heavy;
	fl->w.flows[2] = &fl->slow4;
	fl->w.flows[3] = &fl->slow6;
	fl->w.nflows = 4;
	fl->w.tick = set_tick;
	fl->w.arg = fl;
	if (!setup(ns, ATTACH_POLICY))
		return false;
	fl->w.socks[0] = rl_ns_udp_socket(ns, AF_INET, SLOW4_PORT);
	fl->w.socks[1] = rl_ns_udp_socket(ns, AF_INET6, SLOW6_PORT);
	fl->w.nsocks = 2;
	if (!ASSERT_TRUE(fl->w.socks[0] >= 0 && fl->w.socks[1] >= 0, "UDP sockets") ||
	    !ASSERT_OK(rl_ns_link_packets(ns->tx, ns->tx_if, &rx, &fl->tx0), "sender's counters") ||
	    !ASSERT_OK(rl_ns_link_packets(ns->rx, ns->rx_if, &fl->rx0, &tx),
		       "receiver's counters") ||
	    !get_stats(ns, &fl->before))
		return false;
	if (!ASSERT_OK(rl_ns_watch(ns, &fl->w), "send the flood"))
		return false;
	for (int i = 0; i < fl->w.nsocks; i++)
		fl->w.received[i] += rl_udp_drain(fl->w.socks[i]);
	printf("    %d sets, %d of them while frames arrived, over %.2f s of flood\n", fl->done,
	       fl->during, fl->w.last - fl->w.first);
	return ASSERT_TRUE(!fl->failed, "every set succeeded") &&
	       ASSERT_EQ(fl->many.sent, fl->many.count, "trafgen sent the flood") &&
	       ASSERT_EQ(fl->heavy.sent, fl->heavy.count, "trafgen sent the heavy source") &&
	       ASSERT_EQ(fl->slow4.sent, fl->slow4.count, "trafgen sent the slow IPv4 sources") &&
	       ASSERT_EQ(fl->slow6.sent, fl->slow6.count, "trafgen sent the slow IPv6 sources") &&
	       ASSERT_LE(MIN_SETS, fl->during, "sets while the flood ran");
}

static void flood_free(struct flood *fl)
{
	for (int i = 0; i < 2; i++)
		if (fl->w.socks[i] >= 0)
			close(fl->w.socks[i]);
	rl_watch_free(&fl->w);
}

TEST_FLAGS(set_under_flood_counts_every_packet, RL_TEST_ROOT)
{
	unsigned long long n, rx, tx, srx, stx;
	char *out = NULL;
	unsigned int id = 0;
	struct flood fl;
	struct stats st;
	struct rl_ns ns;

	if (!run_flood(&ns, &fl))
		goto out;
	n = fl.many.count + fl.heavy.count + fl.slow4.count + fl.slow6.count;
	/* What the wire carried: exactly the N frames trafgen sent, nothing else. */
	if (!ASSERT_OK(rl_ns_link_packets(ns.tx, ns.tx_if, &srx, &stx), "sender's counters") ||
	    !ASSERT_OK(rl_ns_link_packets(ns.rx, ns.rx_if, &rx, &tx), "receiver's counters") ||
	    !get_stats(&ns, &st))
		goto out;
	printf("    N %llu: sender tx %llu, receiver rx %llu; limiter rx %llu, passed %llu, "
	       "dropped %llu, would_drop %llu\n",
	       n, stx - fl.tx0, rx - fl.rx0, st.rx_packets - fl.before.rx_packets,
	       st.passed - fl.before.passed, st.dropped - fl.before.dropped,
	       st.would_drop - fl.before.would_drop);
	ASSERT_EQ(stx - fl.tx0, n, "the sending veth sent N frames");
	ASSERT_EQ(rx - fl.rx0, n, "the receiving veth received N frames");
	/* No frame lost by a swap, none counted twice. */
	ASSERT_EQ(st.rx_packets - fl.before.rx_packets, n, "limiter rx = N");
	ASSERT_EQ((st.passed - fl.before.passed) + (st.dropped - fl.before.dropped), n,
		  "passed + dropped = N");
	ASSERT_EQ(st.ipv4 - fl.before.ipv4, n - fl.slow6.count, "IPv4 frames");
	ASSERT_EQ(st.ipv6 - fl.before.ipv6, fl.slow6.count, "IPv6 frames");
	ASSERT_EQ(st.not_ip - fl.before.not_ip, 0, "nothing else arrived");
	/* It limited and it passed: the counts come from a limiter at work. */
	ASSERT_TRUE(st.dropped > fl.before.dropped, "some frames were dropped");
	ASSERT_TRUE(st.would_drop > fl.before.would_drop, "dry-run counted would-drops");
	ASSERT_TRUE(st.passed > fl.before.passed, "some frames passed");
	if (ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "status %s --json", ns.rx_if), 0, "status"))
		ASSERT_CONTAINS(out, "\"state\":\"attached\"", "still attached");
	ASSERT_CONTAINS(out, "\"rate\":\"4000/s\"", "with the last policy");
	if (ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id), "ip link"))
		ASSERT_TRUE(id > 0, "a program is attached to the interface");
out:
	free(out);
	flood_free(&fl);
	rl_ns_destroy(&ns);
}

TEST_FLAGS(set_sources_under_allowed_rate_never_dropped, RL_TEST_ROOT)
{
	struct flood fl;
	struct stats st;
	struct rl_ns ns;

	if (!run_flood(&ns, &fl) || !get_stats(&ns, &st))
		goto out;
	printf("    slow IPv4: %lu of %lu received, slow IPv6: %lu of %lu; dropped overall %llu\n",
	       fl.w.received[0], fl.slow4.count, fl.w.received[1], fl.slow6.count,
	       st.dropped - fl.before.dropped);
	/* The flood was limited all along, so the slow sources' passes are not a matter of luck. */
	ASSERT_TRUE(st.dropped > fl.before.dropped, "the flood was limited");
	ASSERT_EQ(fl.w.received[0], fl.slow4.count, "every slow IPv4 frame passed");
	ASSERT_EQ(fl.w.received[1], fl.slow6.count, "every slow IPv6 frame passed");
out:
	flood_free(&fl);
	rl_ns_destroy(&ns);
}

/*
 * A short burst from a new source against "--rate 100 --burst 50": at most the
 * burst plus what the rate allows while it lasts passes, the rest is dropped.
 */
static void burst_is_limited(struct rl_ns *ns, const char *src)
{
	struct rl_flow f = { .src = src, .count = 500, .limit_s = 10 };
	struct rl_counters c0, c1;
	unsigned long long passed, dropped;
	double t0, t1;

	if (!ASSERT_OK(rl_ns_counters(ns, &c0), "counters"))
		return;
	t0 = rl_now();
	if (!ASSERT_OK(rl_flow_start(ns, &f), "burst") || !ASSERT_OK(rl_flow_wait(&f), "burst"))
		return;
	usleep(50000);
	t1 = rl_now();
	if (!ASSERT_OK(rl_ns_counters(ns, &c1), "counters"))
		return;
	passed = c1.passed - c0.passed;
	dropped = c1.dropped - c0.dropped;
	printf("    burst of %lu from %s in %.3f s: passed %llu, dropped %llu\n", f.count, src,
	       t1 - t0, passed, dropped);
	ASSERT_EQ(passed + dropped, f.count, "the burst arrived");
	ASSERT_LE(passed, (unsigned long long)(50 + 100 * (t1 - t0) + 1),
		  "at most burst + rate x time passed: the old policy limits");
}

/* The configuration as status --json shows it, and the attached program's id. */
static bool snapshot(struct rl_ns *ns, char **status, unsigned int *id)
{
	*status = NULL;
	return ASSERT_EQ(rl_ns_cli(ns, status, NULL, "status %s --json", ns->rx_if), 0,
			 "status --json") &&
	       ASSERT_OK(rl_ns_xdp_prog_id(ns, id), "ip link") && ASSERT_TRUE(*id > 0, "attached");
}

/*
 * The library's program load fails (XDP_RATELIMIT_FAULT=prog-load: -EPERM
 * before the kernel is asked): set says so and changes nothing.
 */
TEST_FLAGS(set_failed_load_keeps_old_program, RL_TEST_ROOT)
{
	char *st0 = NULL, *st1 = NULL, *err = NULL, *cmd = NULL;
	unsigned int id0 = 0, id1 = 0;
	struct rl_ns ns;
	int rc;

	if (!setup(&ns, "--rate 100 --burst 50") || !snapshot(&ns, &st0, &id0))
		goto out;
	if (asprintf(&cmd,
		     "XDP_RATELIMIT_FAULT=prog-load nsenter --net=/run/netns/%s %s/xdp-ratelimit"
		     " set %s --rate 100000 --burst 100000",
		     ns.rx, rl_build_dir, ns.rx_if) < 0) {
		cmd = NULL;
		goto out;
	}
	rc = rl_run(cmd, NULL, &err);
	printf("    set with a failing load: exit %d: %s", rc, err && *err ? err : "(no error)\n");
	ASSERT_TRUE(rc != 0 && rc < 128, "set exits non-zero, not killed");
	ASSERT_CONTAINS(err, "load", "the error names the load");
	ASSERT_CONTAINS(err, "Operation not permitted", "and its cause");
	if (!snapshot(&ns, &st1, &id1))
		goto out;
	ASSERT_EQ(id1, id0, "the same program is attached");
	ASSERT_STREQ(st1, st0, "the configuration is unchanged");
	burst_is_limited(&ns, "198.19.5.1");
out:
	free(cmd);
	free(err);
	free(st0);
	free(st1);
	rl_ns_destroy(&ns);
}

/*
 * The same, from a cause an operator meets without root: too few file
 * descriptors (ulimit -n). set needs a handful (the pins, the lock, and for a
 * new program its object, BTF and program); every limit below what it needs
 * makes it fail somewhere else, and wherever it fails it must change nothing.
 * The limit goes up until set succeeds.
 */
TEST_FLAGS(set_fd_limit_failure_keeps_old_program, RL_TEST_ROOT)
{
	char *st0 = NULL, *st1 = NULL, *err = NULL, *cmd = NULL;
	unsigned int id0 = 0, id1 = 0;
	int failures = 0, limit, first = 3, rc = -1;
	struct rl_ns ns;

	if (!setup(&ns, "--rate 100 --burst 50") || !snapshot(&ns, &st0, &id0))
		goto out;
	/*
	 * 3: stdin, stdout and stderr only; 96 is far more than any set needs
	 * (25 pinned maps and 25 reused by the new program: about 68).
	 */
	for (limit = 3; limit <= 96; limit++) {
		free(cmd);
		free(err);
		err = NULL;
		if (asprintf(
			    &cmd,
			    "nsenter --net=/run/netns/%s sh -c 'ulimit -n %d && exec %s/xdp-ratelimit"
			    " set %s --rate 100000 --burst 100000'",
			    ns.rx, limit, rl_build_dir, ns.rx_if) < 0) {
			cmd = NULL;
			goto out;
		}
		rc = rl_run(cmd, NULL, &err);
		if (!rc)
			break;
		/* The dynamic loader needs a few to open the libraries: set never ran. */
		if (rc == 127 && err && strstr(err, "error while loading shared libraries")) {
			first = limit + 1;
			continue;
		}
		failures++;
		printf("    ulimit -n %d: exit %d: %s", limit, rc,
		       err && *err ? err : "(no error)\n");
		if (!ASSERT_TRUE(rc < 128, "set fails, it is not killed"))
			break;
		/* Not "not attached" or "lost its pins" for a limiter that is fine. */
		ASSERT_CONTAINS(err, "Too many open files", "the error names the cause");
		free(st1);
		if (!snapshot(&ns, &st1, &id1) || !ASSERT_EQ(id1, id0, "the same program") ||
		    !ASSERT_STREQ(st1, st0, "the same configuration"))
			break;
	}
	printf("    set failed at ulimit -n %d to %d and changed nothing; succeeded at %d\n", first,
	       limit - 1, limit);
	ASSERT_TRUE(failures > 0, "set failed under the lowest limits");
	if (!ASSERT_EQ(rc, 0, "set succeeded under a limit high enough"))
		goto out;
	free(st1);
	if (ASSERT_EQ(rl_ns_cli(&ns, &st1, NULL, "status %s --json", ns.rx_if), 0, "status"))
		ASSERT_CONTAINS(st1, "\"rate\":\"100000/s\"", "the new policy is in force");
out:
	free(cmd);
	free(err);
	free(st0);
	free(st1);
	rl_ns_destroy(&ns);
}

/*
 * Sources in the pinned set-associative table @path: its published slots
 * (used, not pending: include/rl_sa.h; rl_sets6's identity words, used and
 * not locked: include/rl_sa6.h), read set by set with the batch syscall
 * rather than through the library that writes them.
 */
static long sets_entries(const char *path, bool wide, bool v6)
{
	__u32 in = 0, out, cnt, batch = 1024;
	struct rl_sa6_set *vals = NULL;
	__u32 *keys = NULL;
	long n = -1;
	int fd, r;

	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	keys = calloc(batch, sizeof(*keys));
	vals = calloc(batch, sizeof(*vals));
	if (!keys || !vals)
		goto out;
	n = 0;
	for (bool first = true;; first = false) {
		cnt = batch;
		r = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &cnt, NULL);
		if (r && errno != ENOENT) {
			n = -1;
			break;
		}
		/* rl_wide4: the first four words are the identity words. */
		for (__u32 i = 0; i < cnt && !v6; i++)
			for (int j = 0; j < (wide ? RL_SA_WIDE_WAYS : RL_SA_WAYS); j++)
				n += (((struct rl_sa_set *)vals)[i].w[j] &
				      (RL_SA_USED | RL_SA_PEND)) == RL_SA_USED;
		for (__u32 i = 0; i < cnt && v6; i++)
			for (int j = 0; j < RL_SA6_WAYS; j++)
				n += (vals[i].id[j] & (RL_SA6_USED | RL_SA6_LOCK)) == RL_SA6_USED;
		if (r)
			break;
		in = out;
	}
out:
	free(keys);
	free(vals);
	close(fd);
	return n;
}

/*
 * Entries of every pinned source table: the hash rl_state4 by bpftool, the
 * set tables (rl_sets4, rl_wide4, rl_sets6) by their published slots.
 */
static long state_entries(struct rl_ns *ns)
{
	char dir[PATH_MAX], *out = NULL;
	struct dirent *de;
	long total = 0, tables = 0;
	DIR *d;

	if (rl_ns_pin_dir(ns->rx, ns->rx_if, dir, sizeof(dir)))
		return -1;
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, "rl_sets4") || !strcmp(de->d_name, "rl_wide4") ||
		    !strcmp(de->d_name, "rl_sets6")) {
			char path[PATH_MAX + 16];
			long n;

			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			n = sets_entries(path, !strcmp(de->d_name, "rl_wide4"),
					 !strcmp(de->d_name, "rl_sets6"));
			if (n < 0) {
				total = -1;
				break;
			}
			total += n;
			tables++;
			continue;
		}
		if (strncmp(de->d_name, "rl_state", 8))
			continue;
		/* One element is {"key":[raw bytes],"value":[...],"formatted":{...}}. */
		if (rl_sh(&out,
			  "bpftool -j map dump pinned '%s/%s' | grep -o '{\"key\":\\[' | wc -l",
			  dir, de->d_name)) {
			total = -1;
			break;
		}
		total += strtol(out, NULL, 10);
		tables++;
		free(out);
		out = NULL;
	}
	free(out);
	closedir(d);
	return tables ? total : -1;
}

/* 1000 sources, 198.19.0-3.1-250 (the last byte counts up), one frame each, slowly. */
static bool send_1000_sources(struct rl_ns *ns, struct rl_flow f[4])
{
	static const char *const base[] = { "198.19.0.0", "198.19.1.0", "198.19.2.0",
					    "198.19.3.0" };

	for (int i = 0; i < 4; i++) {
		f[i] = (struct rl_flow){ .src = base[i],
					 .rand_bytes = 1,
					 .seq = true,
					 .count = 250,
					 .gap = "50us",
					 .limit_s = 10 };
		if (!ASSERT_OK(rl_flow_start(ns, &f[i]), "flow"))
			return false;
	}
	for (int i = 0; i < 4; i++)
		if (!ASSERT_OK(rl_flow_wait(&f[i]), "flow") ||
		    !ASSERT_EQ(f[i].sent, 250, "trafgen sent 250"))
			return false;
	return true;
}

/*
 * K = 1000 sources, one frame each (198.19.0-3.x, 250 per /24), then 5 sets:
 * each leaves one entry per source under the new prefix, no more (a source
 * held under two generations) and no fewer (a source forgotten).
 */
TEST_FLAGS(set_repeated_tables_hold_each_source_once, RL_TEST_ROOT)
{
	static const struct {
		const char *policy;
		long expect; /* distinct sources under the policy's prefix */
	} sets[] = {
		{ "--rate 2000", 1000 }, /* token-bucket to token-bucket, /32 */
		{ "--algo gcra", 1000 }, /* to gcra: the bucket level is carried */
		{ "--prefix4 24", 4 }, /* shorter: 4 groups of 250 */
		{ "--algo token-bucket --rate 1500", 4 }, /* back, same prefix */
		{ "--burst 300", 4 },
	};
	struct rl_flow f[4];
	struct stats st;
	struct rl_ns ns;
	long n;

	if (!setup(&ns, "--rate 1000 --burst 100 --prefix4 32"))
		goto out;
	if (!send_1000_sources(&ns, f))
		goto out;
	usleep(50000);
	if (!get_stats(&ns, &st) || !ASSERT_EQ(st.rx_packets, 1000, "1000 frames arrived"))
		goto out;
	n = state_entries(&ns);
	printf("    after 1000 sources: %ld entries\n", n);
	if (!ASSERT_EQ(n, 1000, "one entry per source"))
		goto out;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		char args[128];

		snprintf(args, sizeof(args), "set %s %s", ns.rx_if, sets[i].policy);
		if (!cli_ok(&ns, "set", NULL, args))
			goto out;
		n = state_entries(&ns);
		printf("    after set %s: %ld entries, expected %ld\n", sets[i].policy, n,
		       sets[i].expect);
		ASSERT_EQ(n, sets[i].expect, "one entry per (masked) source");
	}
out:
	rl_ns_destroy(&ns);
}

/* max_entries of the pinned map @name of the limiter in @ns, or 0. */
static __u32 pinned_size(struct rl_ns *ns, const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char dir[PATH_MAX], path[PATH_MAX + 32];
	int fd;

	if (rl_ns_pin_dir(ns->rx, ns->rx_if, dir, sizeof(dir)))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.max_entries = 0;
	close(fd);
	return info.max_entries;
}

/*
 * K = 1000 sources, then sets that move the IPv4 sources from rl_sets4 to
 * rl_wide4 (a bucket of 3000 s: more than 2^(m-2) vt for a table of 2^15
 * sets) and back, between bucket algorithms, whose states are carried over:
 * each time the table in use has its full size, the others one entry, and
 * the table in use holds every source once.
 */
TEST_FLAGS(set_moves_between_ipv4_tables, RL_TEST_ROOT)
{
	static const struct {
		const char *policy;
		bool wide;
	} sets[] = {
		{ "--algo gcra --rate 1000 --burst 3000000", true },
		{ "--algo token-bucket --rate 2000 --burst 100", false },
		{ "--algo token-bucket --rate 1000 --burst 3000000", true },
	};
	struct rl_flow f[4];
	struct rl_ns ns;
	long n;

	if (!setup(&ns, "--rate 1000 --burst 100 --max-sources 65536"))
		goto out;
	if (!ASSERT_EQ(pinned_size(&ns, "rl_sets4"), 1U << 15, "rl_sets4 in use: 2^15 sets") ||
	    !ASSERT_EQ(pinned_size(&ns, "rl_wide4"), 1, "rl_wide4: a stand-in") ||
	    !ASSERT_EQ(pinned_size(&ns, "rl_state4"), 1, "rl_state4: a stand-in"))
		goto out;
	if (!send_1000_sources(&ns, f))
		goto out;
	usleep(50000);
	if (!ASSERT_EQ(state_entries(&ns), 1000, "one entry per source"))
		goto out;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		char args[160];
		__u32 s4 = 0, w4 = 0, l4 = 0;

		snprintf(args, sizeof(args), "set %s %s", ns.rx_if, sets[i].policy);
		if (!cli_ok(&ns, "set", NULL, args))
			goto out;
		n = state_entries(&ns);
		s4 = pinned_size(&ns, "rl_sets4");
		w4 = pinned_size(&ns, "rl_wide4");
		l4 = pinned_size(&ns, "rl_state4");
		printf("    after set %s: %ld entries; rl_sets4 %u sets, rl_wide4 %u sets, rl_state4 %u entries\n",
		       sets[i].policy, n, s4, w4, l4);
		ASSERT_EQ(n, 1000, "every source, once");
		ASSERT_EQ(l4, 1, "rl_state4: a stand-in throughout");
		if (sets[i].wide) {
			ASSERT_EQ(w4, 1U << 15, "rl_wide4 in use, as many sets as rl_sets4");
			ASSERT_EQ(s4, 1, "rl_sets4: a stand-in");
		} else {
			ASSERT_EQ(s4, 1U << 15, "rl_sets4 in use again");
			ASSERT_EQ(w4, 1, "rl_wide4: a stand-in again");
		}
	}
	if (cli_ok(&ns, "status", NULL, "status --json")) {
		char *out = NULL;

		if (ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "status %s --json", ns.rx_if), 0,
			      "status"))
			ASSERT_CONTAINS(out, "\"max_sources\":65536", "--max-sources as attached");
		free(out);
	}
out:
	rl_ns_destroy(&ns);
}
