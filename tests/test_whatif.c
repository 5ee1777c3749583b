// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The what-if report (simulate --pcap FILE --compare, user/lib/whatif.c), run
 * as a user runs it, on captures whose answers are worked out by hand:
 *
 *	whatif_report		each policy's drops, sources hit, most affected
 *				sources and drops over time, in text and JSON, from
 *				the command's options, inline policies, a policy
 *				file and apply's file (FILE:IFACE)
 *	whatif_errors		bad policies and options: the message names the
 *				file and line, the key, or the option
 *	whatif_plot		--plot draws a PNG with gnuplot, and says so when
 *				gnuplot is missing
 *	whatif_bins		the time bins widen as the capture goes on and keep
 *				every frame and drop
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include "frames.h"
#include "netns.h"
#include "opts.h"
#include "pcapfile.h"
#include "test.h"
#include "whatif.h"

#define SEC  1000000000ULL
#define MSEC 1000000ULL
#define T0   (1765000000ULL * SEC)

static const char *bin(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/xdp-ratelimit", rl_build_dir);
	return path;
}

/*
 * The capture of the README's example and more: 198.18.0.1 sends 30 frames
 * in 20 ms after 5 s (a GCRA of 10/s with a burst of 20 passes 21), then
 * 198.18.0.2 sends 5 in 5 ms; an ARP frame and a truncated IPv4 header
 * after them.
 */
static struct frame frames[40];
static struct pf_rec recs[40];

static size_t make_capture(void)
{
	size_t n = 0;

	for (int i = 0; i < 30; i++, n++) {
		fr_init(&frames[n]);
		fr_eth(&frames[n], ETH_P_IP);
		fr_ipv4(&frames[n], "198.18.0.1", NULL);
		fr_pad(&frames[n], FRAME_MIN);
		recs[n].ns = T0 + 5 * SEC + (__u64)i * 20 * MSEC / 30;
	}
	for (int i = 0; i < 5; i++, n++) {
		fr_init(&frames[n]);
		fr_eth(&frames[n], ETH_P_IP);
		fr_ipv4(&frames[n], "198.18.0.2", NULL);
		fr_pad(&frames[n], FRAME_MIN);
		recs[n].ns = T0 + 5 * SEC + 100 * MSEC + (__u64)i * MSEC;
	}
	fr_init(&frames[n]);
	fr_arp(&frames[n]);
	recs[n++].ns = T0 + 6 * SEC;
	fr_init(&frames[n]);
	fr_eth(&frames[n], ETH_P_IP);
	fr_ipv4(&frames[n], "198.18.0.3", NULL);
	fr_cut(&frames[n], ETH_HLEN + 10);
	recs[n++].ns = T0 + 7 * SEC;
	for (size_t i = 0; i < n; i++) {
		recs[i].data = frames[i].data;
		recs[i].caplen = recs[i].len = frames[i].len;
	}
	return n;
}

static bool write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(text, f) >= 0;

	if (f)
		ok = !fclose(f) && ok;
	return ASSERT_TRUE(ok, path);
}

/* The JSON object of the policy named @name in a report, from its start on. */
static const char *policy_json(const char *json, const char *name)
{
	char pat[256];

	snprintf(pat, sizeof(pat), "{\"name\":\"%s\",\"rules\":[", name);
	return strstr(json, pat);
}

static unsigned long long field(const char *obj, const char *key)
{
	unsigned long long v = ~0ULL;

	rl_json_u64(obj, key, &v);
	return v;
}

TEST(whatif_report)
{
	char pcap[64] = "", pol[64] = "", conf[64] = "", *cmd = NULL, *out = NULL, *p;
	size_t n = make_capture();
	/* Drops by hand: gcra 10/s burst 20 passes 21 of 30; token bucket burst 5 passes 5. */
	static const struct {
		const char *name;
		unsigned long long dropped, hit, cut;
		const char *top;
	} want[] = {
		{ "(the command's options)", 9 + 1, 1, 0, "198.18.0.1" },
		{ "{rate: 10, burst: 5}", 25 + 1, 1, 0, "198.18.0.1" },
		/* Rules: 198.18.0.2 denied, 198.18.0.1 at 100/s with a burst of 30: nothing. */
		{ "POLICY", 5 + 1, 1, 1, "198.18.0.2" },
		/* The second interface of apply's file: malformed frames passed, 10/s burst 25. */
		{ "CONF:eth1", 5, 1, 0, "198.18.0.1" },
	};

	if (pf_tmpname(pcap, sizeof(pcap), ".pcap") || pf_tmpname(pol, sizeof(pol), ".yaml") ||
	    pf_tmpname(conf, sizeof(conf), ".yaml") ||
	    !ASSERT_OK(pf_write(pcap, PF_ETHER, recs, n), "pcap") ||
	    !write_text(pol, "rate: 100\nburst: 30\nrules:\n  - name: b\n    src: 198.18.0.2\n"
			     "    deny: true\n") ||
	    !write_text(conf, "interfaces:\n  eth0:\n    rate: 1000\n  eth1:\n    rate: 10\n"
			      "    burst: 25\n    malformed: pass\n"))
		goto out;
	if (asprintf(&cmd,
		     "%s simulate --pcap %s --algo gcra --rate 10 --burst 20 --compare "
		     "'{rate: 10, burst: 5}' %s %s:eth1 --sources 1 --json",
		     bin(), pcap, pol, conf) < 0 ||
	    !ASSERT_OK(rl_run(cmd, &out, NULL), cmd))
		goto out;
	ASSERT_CONTAINS(out, "\"frames\":37", "the capture's frames");
	ASSERT_CONTAINS(out, "\"ip_frames\":35", "its IP frames");
	ASSERT_CONTAINS(out, "\"sources\":2", "its sources (a truncated header shows none)");
	for (int i = 0; i < 4; i++) {
		char name[128];
		const char *o;

		snprintf(name, sizeof(name), "%s", want[i].name);
		if (!strcmp(want[i].name, "POLICY"))
			snprintf(name, sizeof(name), "%s", pol);
		else if (!strcmp(want[i].name, "CONF:eth1"))
			snprintf(name, sizeof(name), "%s:eth1", conf);
		o = policy_json(out, name);
		if (!ASSERT_TRUE(o != NULL, name))
			break;
		ASSERT_EQ(field(o, "dropped"), want[i].dropped, want[i].name);
		ASSERT_EQ(field(o, "sources_hit"), want[i].hit, want[i].name);
		ASSERT_EQ(field(o, "sources_all_dropped"), want[i].cut, want[i].name);
		p = strstr(o, "\"most_affected\":[{\"source\":\"");
		ASSERT_TRUE(p && !strncmp(p + 28, want[i].top, strlen(want[i].top)), want[i].top);
	}
	/* The same report as text. */
	free(cmd);
	free(out);
	out = NULL;
	if (asprintf(&cmd,
		     "%s simulate --pcap %s --algo gcra --rate 10 --burst 20 --compare "
		     "'{rate: 10, burst: 5}' %s",
		     bin(), pcap, pol) < 0 ||
	    !ASSERT_OK(rl_run(cmd, &out, NULL), cmd))
		goto out;
	ASSERT_CONTAINS(out, "37 frames over 2.000 s", "the capture");
	ASSERT_CONTAINS(out, "1 (the command's options)          10   27.0%", "policy 1's drops");
	ASSERT_CONTAINS(out, "drops 10 frames: 9 over the default policy's limit, 1 malformed",
			"policy 1's reasons");
	ASSERT_CONTAINS(out, "drops 6 frames: 5 denied by rules, 1 malformed",
			"policy 3's reasons");
	ASSERT_CONTAINS(out, "   198.18.0.1                                        9         21",
			"the most affected source of policy 1");
	ASSERT_CONTAINS(out, "b --src 198.18.0.2/32 --deny", "policy 3's rules");
	ASSERT_CONTAINS(out, "Drops over time", "the plot");
out:
	free(cmd);
	free(out);
	unlink(pcap);
	unlink(pol);
	unlink(conf);
}

/* simulate ARGS exits @status with @msg in its stderr. */
static void fails(const char *args, int status, const char *msg)
{
	char *cmd = NULL, *err = NULL;

	if (asprintf(&cmd, "%s simulate %s", bin(), args) < 0)
		return;
	ASSERT_EQ(rl_run(cmd, NULL, &err), status, args);
	ASSERT_CONTAINS(err, msg, args);
	free(cmd);
	free(err);
}

TEST(whatif_errors)
{
	char pcap[64] = "", f[64] = "", args[512], msg[160];
	size_t n = make_capture();

	if (pf_tmpname(pcap, sizeof(pcap), ".pcap") || pf_tmpname(f, sizeof(f), ".yaml") ||
	    !ASSERT_OK(pf_write(pcap, PF_ETHER, recs, n), "pcap"))
		goto out;
#define ARGS(...) (snprintf(args, sizeof(args), __VA_ARGS__), args)
	fails(ARGS("--pcap %s --compare '{rate: ten}'", pcap), 2,
	      "{rate: ten}:1: policy: rate: 'ten' is not a rate");
	fails(ARGS("--pcap %s --compare '{rate: 10, brust: 4}'", pcap), 2,
	      "unknown key 'brust' (did you mean 'burst'?)");
	fails(ARGS("--pcap %s --compare /nonexistent.yaml", pcap), 2, "/nonexistent.yaml");
	write_text(f, "rate: 10\nrules:\n  - name: x\n    proto: tcp\n    dport: 99999\n"
		      "    deny: true\n");
	snprintf(msg, sizeof(msg), "%s:5: policy: rule x: dport:", f);
	fails(ARGS("--pcap %s --compare %s", pcap, f), 2, msg);
	write_text(f, "interfaces:\n  eth0:\n    rate: 10\n  eth1:\n    rate: 20\n");
	snprintf(msg, sizeof(msg), "%s: names several interfaces eth0, eth1: give one as %s:IFACE",
		 f, f);
	fails(ARGS("--pcap %s --compare %s", pcap, f), 2, msg);
	fails(ARGS("--pcap %s --compare %s:eth9", pcap, f), 2, "no interface 'eth9'");
	write_text(f, "interfaces:\n  eth0:\n    rate: 10\n  eth1:\n    share: eth0\n");
	fails(ARGS("--pcap %s --compare %s:eth1", pcap, f), 2, "shares the limiter of eth0");
	fails(ARGS("--pcap %s --compare", pcap), 2, "give the policies to compare");
	/* SYN cookies are the kernel's: refused, not replayed without them. */
	fails(ARGS("--pcap %s --compare '{rate: 10, syn-cookies: 443}'", pcap), 2,
	      "syn-cookies: SYN cookies are kernel-only");
	write_text(f, "rate: 10\nrules:\n  - name: sc\n    proto: tcp\n    dport: 443\n"
		      "    syn-cookies: true\n");
	snprintf(msg, sizeof(msg), "%s: rule sc is a syn-cookies rule: SYN cookies are kernel-only",
		 f);
	fails(ARGS("--pcap %s --compare %s", pcap, f), 2, msg);
	fails(ARGS("--pcap %s --rate 10 '{rate: 5}'", pcap), 2,
	      "unexpected argument '{rate: 5}' (the policies to compare follow --compare)");
	fails(ARGS("--pcap %s --rate 10 --plot x.png", pcap), 2,
	      "--plot is an option of --compare");
	fails(ARGS("--pcap %s --rate 10 --summary --compare '{rate: 5}'", pcap), 2,
	      "--summary means nothing");
	fails(ARGS("--rate 10 --malformed pass"), 2, "--malformed is an option of --pcap");
	fails(ARGS("--rate 10 --compare '{rate: 5}'"), 2, "--compare is an option of --pcap");
	fails(ARGS("--rate 10 '{rate: 5}'"), 2,
	      "unexpected argument '{rate: 5}' (policies to compare follow --pcap FILE --compare");
	fails(ARGS("--pcap %s --trace %s --rate 10", pcap, pcap), 2, "give --trace or --pcap");
#undef ARGS
out:
	unlink(pcap);
	unlink(f);
}

TEST(whatif_plot)
{
	char pcap[64] = "", png[64] = "", *cmd = NULL, *err = NULL;
	unsigned char head[8] = "";
	size_t n = make_capture();
	FILE *f;

	if (pf_tmpname(pcap, sizeof(pcap), ".pcap") || pf_tmpname(png, sizeof(png), ".png") ||
	    !ASSERT_OK(pf_write(pcap, PF_ETHER, recs, n), "pcap"))
		goto out;
	/* gnuplot-nox is one of make deps' packages. */
	if (asprintf(
		    &cmd,
		    "%s simulate --pcap %s --compare '{rate: 10}' \"{rate: 5, burst: 1}\" --plot %s",
		    bin(), pcap, png) < 0 ||
	    !ASSERT_OK(rl_run(cmd, NULL, &err), err ? err : cmd))
		goto out;
	f = fopen(png, "rb");
	ASSERT_TRUE(f && fread(head, 1, 8, f) == 8 && !memcmp(head, "\x89PNG\r\n\x1a\n", 8),
		    "a PNG image");
	if (f)
		fclose(f);
	/* Without gnuplot on the PATH: said so, exit status 1, the report still printed. */
	free(cmd);
	free(err);
	err = NULL;
	if (asprintf(&cmd,
		     "PATH=/nonexistent %s simulate --pcap %s --compare '{rate: 10}' --plot %s",
		     bin(), pcap, png) < 0)
		goto out;
	ASSERT_EQ(rl_run(cmd, NULL, &err), 1, "no gnuplot");
	ASSERT_CONTAINS(err, "--plot needs gnuplot, which is not installed", "the message");
out:
	free(cmd);
	free(err);
	unlink(pcap);
	unlink(png);
}

TEST(whatif_bins)
{
	const char *const words[] = { "--rate", "10", "--burst", "2", NULL };
	struct rl_whatif w;
	struct rl_ruleset set;
	struct rl_policy pol;
	struct rl_opts o;
	struct frame f;
	char err[RL_ERRLEN];
	__u64 now = T0, rx = 0, drops = 0;
	unsigned long long rng = rl_test_seed();
	size_t n = 20000, widths = 0;

	if (!ASSERT_OK(rl_policy_parse(&pol, &o, words, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_ruleset_init(&set, &pol, &o, err, sizeof(err)), err))
		return;
	rl_whatif_init(&w);
	fr_init(&f);
	fr_eth(&f, ETH_P_IP);
	fr_ipv4(&f, "198.18.0.1", NULL);
	fr_pad(&f, FRAME_MIN);
	if (!ASSERT_OK(rl_whatif_add(&w, "p", &set, true), "add"))
		goto out;
	for (size_t i = 0; i < n; i++) {
		__u64 width = w.width;

		/* Gaps from 0 to ~2^(i/1000) us: the capture outgrows its bins again and again. */
		now += rl_rand_below(&rng, 1000ULL << (i / 1000 < 20 ? i / 1000 : 20));
		if (!ASSERT_OK(rl_whatif_frame(&w, f.data, f.len, f.len, now, NULL), "frame"))
			break;
		widths += w.width != width;
		if (!ASSERT_TRUE(w.nbins <= RL_WHATIF_BINS && (now - w.t0) / w.width < w.nbins,
				 "the last frame is in the last bin"))
			break;
	}
	for (size_t i = 0; i < RL_WHATIF_BINS; i++) {
		rx += w.rx[i];
		drops += w.c[0].drops[i];
		if (i >= w.nbins && !ASSERT_TRUE(!w.rx[i], "no frame past the last bin"))
			break;
	}
	ASSERT_EQ(rx, n, "every frame in a bin");
	ASSERT_EQ(drops, w.c[0].model.cnt.dropped, "every drop in a bin");
	ASSERT_TRUE(widths >= 10 && w.nbins > RL_WHATIF_BINS / 2, "widened, bins kept full");
	printf("    %zu frames over %.1f s: %zu widenings, %zu bins of %.3f s\n", n,
	       (double)(now - w.t0) / 1e9, widths, w.nbins, (double)w.width / 1e9);
out:
	rl_whatif_free(&w);
	rl_ruleset_free(&set);
}
