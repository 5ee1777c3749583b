// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Capture files (user/lib/capture.c) and frames parsed from them
 * (user/lib/replay.c):
 *
 *	capture_link_types	pcap (ns and us), pcapng, Linux cooked SLL and SLL2:
 *				the same frames, times and lengths out of each
 *	capture_snapped		a frame cut by the snap length parses as the whole
 *				frame whenever the parser says the cut did not reach
 *				what it read; simulate refuses one that did
 *	capture_bad_files	every way a file can be wrong: a message naming the
 *				file and the problem, exit status 1
 *	capture_fuzz		truncated and corrupted pcap and pcapng files through
 *				the whole replay: an end or an error, never a crash
 *				(600 of them; capture_fuzz_long, in make fuzz: 50,000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_ether.h>
#include "capture.h"
#include "corpus.h"
#include "netns.h"
#include "opts.h"
#include "pcapfile.h"
#include "replay.h"
#include "test.h"
#include "whatif.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define T0	      1765000000123456789ULL

static const char *bin(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/xdp-ratelimit", rl_build_dir);
	return path;
}

/*
 * Every frame of @path equals @r[i] (@us: times to the microsecond), from
 * its byte @from (12 for cooked captures: the addresses are not kept, the
 * protocol is); frames the host sent are skipped.
 */
static void same_frames(const char *path, const struct pf_rec *r, size_t n, bool us, __u64 outgoing,
			unsigned int from)
{
	struct rl_capture *cap;
	struct rl_capture_frame f;
	char err[RL_ERRLEN];
	size_t i = 0;
	int ret;

	if (!ASSERT_OK(rl_capture_open(&cap, path, err, sizeof(err)), err))
		return;
	while ((ret = rl_capture_next(cap, &f, err, sizeof(err))) > 0) {
		while (i < n && r[i].outgoing)
			i++;
		if (!ASSERT_TRUE(i < n, "no more frames than written"))
			break;
		if (!ASSERT_EQ(f.len, r[i].len, path) || !ASSERT_EQ(f.caplen, r[i].caplen, path) ||
		    !ASSERT_TRUE(!memcmp(f.data + from, r[i].data + from, f.caplen - from),
				 "the frame's bytes") ||
		    !ASSERT_EQ(f.ns, us ? r[i].ns / 1000 * 1000 : r[i].ns, path) ||
		    !ASSERT_TRUE(!((uintptr_t)f.data & 1) && !((uintptr_t)(f.data + 14) & 3),
				 "the IP header after an untagged Ethernet header is aligned"))
			break;
		i++;
	}
	ASSERT_EQ(ret, 0, err);
	while (i < n && r[i].outgoing)
		i++;
	ASSERT_EQ(i, n, "every frame read");
	ASSERT_EQ(rl_capture_stats(cap)->outgoing, outgoing, "frames the host sent, skipped");
	rl_capture_close(cap);
}

TEST(capture_link_types)
{
	char eth[64] = "", us[64] = "", ng[64] = "", sll[64] = "", sll2[64] = "";
	struct pf_rec *w = NULL;
	struct corpus c;
	size_t n = 400, nw = 0;
	__u64 out = 0;

	if (!ASSERT_OK(corpus_make(&c, n, T0, rl_test_seed()), "corpus"))
		return;
	w = calloc(2 * n, sizeof(*w));
	if (!ASSERT_TRUE(w != NULL, "calloc"))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (i % 7 == 3) {
			w[nw] = c.r[i];
			w[nw++].outgoing = true;
			out++;
		}
		w[nw++] = c.r[i];
	}
	if (pf_tmpname(eth, sizeof(eth), ".pcap") || pf_tmpname(us, sizeof(us), ".pcap") ||
	    pf_tmpname(ng, sizeof(ng), ".pcapng") || pf_tmpname(sll, sizeof(sll), ".pcap") ||
	    pf_tmpname(sll2, sizeof(sll2), ".pcap") ||
	    !ASSERT_OK(pf_write(eth, PF_ETHER, c.r, n), "pcap") ||
	    !ASSERT_OK(pf_write(sll, PF_SLL, w, nw), "SLL") ||
	    !ASSERT_OK(pf_write(sll2, PF_SLL2, w, nw), "SLL2") ||
	    /* tshark's and dumpcap's format; a classic microsecond pcap, as most tools write. */
	    !ASSERT_OK(rl_sh(NULL, "editcap -F pcapng %s %s", eth, ng), "editcap pcapng") ||
	    !ASSERT_OK(rl_sh(NULL, "editcap -F pcap %s %s", eth, us), "editcap pcap"))
		goto out;
	same_frames(eth, c.r, n, false, 0, 0);
	same_frames(ng, c.r, n, false, 0, 0);
	same_frames(us, c.r, n, true, 0, 0);
	same_frames(sll, w, nw, false, out, 12);
	same_frames(sll2, w, nw, false, out, 12);
out:
	unlink(eth);
	unlink(us);
	unlink(ng);
	unlink(sll);
	unlink(sll2);
	free(w);
	corpus_free(&c);
}

static bool frames_equal(const struct rl_frame *a, const struct rl_frame *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == RL_PARSED_MALFORMED)
		return a->bad == b->bad;
	if (a->kind == RL_PARSED_NOT_IP)
		return true;
	return !memcmp(&a->pi, &b->pi, sizeof(a->pi));
}

TEST(capture_snapped)
{
	struct corpus c;
	unsigned long cuts = 0, sure = 0, snapped = 0, s96 = 0, plain = 0;
	char path[64] = "", *err = NULL;
	struct pf_rec r[3];
	struct frame ip;
	int ret;

	if (!ASSERT_OK(corpus_make(&c, 2000, T0, rl_test_seed()), "corpus"))
		return;
	for (size_t i = 0; i < c.n; i++) {
		const struct frame *f = &c.f[i];
		struct rl_frame whole, cut;

		rl_frame_parse(&whole, f->data, f->len, f->len, 1);
		if (!ASSERT_TRUE(!whole.snapped, "a whole frame is never snapped"))
			break;
		for (__u32 cap = 0; cap <= f->len; cap++) {
			rl_frame_parse(&cut, f->data, cap, f->len, 1);
			cuts++;
			if (cut.snapped) {
				snapped++;
				continue;
			}
			sure++;
			if (!frames_equal(&cut, &whole)) {
				rl_test_fail(__FILE__, __LINE__,
					     "frame %zu cut at %u of %u: not snapped, but parsed "
					     "as kind %d (whole: %d)",
					     i, cap, f->len, cut.kind, whole.kind);
				goto out;
			}
		}
		/* tcpdump -s 96 on the plain frames of the corpus is enough. */
		if (f->len > 96 && c.f[i].data[12] == 0x08 && c.f[i].data[13] == 0) {
			rl_frame_parse(&cut, f->data, 96, f->len, 1);
			plain++;
			s96 += !cut.snapped;
		}
	}
	printf("    %lu cuts of %zu frames: %lu parse as the whole frame, %lu snapped; -s 96: "
	       "%lu of %lu IPv4 frames usable\n",
	       cuts, c.n, sure, snapped, s96, plain);
	ASSERT_TRUE(snapped > 0 && sure > 0, "both outcomes seen");
	/* Through simulate: an IPv4 frame cut inside its header names the record and the way out. */
	fr_init(&ip);
	fr_eth(&ip, ETH_P_IP);
	fr_ipv4(&ip, "198.18.0.1", NULL);
	fr_pad(&ip, 100);
	r[0] = (struct pf_rec){ .data = ip.data, .caplen = ip.len, .len = ip.len, .ns = T0 };
	r[1] = (struct pf_rec){ .data = ip.data, .caplen = 20, .len = ip.len, .ns = T0 + 1 };
	if (pf_tmpname(path, sizeof(path), ".pcap") ||
	    !ASSERT_OK(pf_write(path, PF_ETHER, r, 2), "w"))
		goto out;
	{
		char *cmd = NULL;

		if (asprintf(&cmd, "%s simulate --pcap %s --rate 10 --quiet", bin(), path) > 0) {
			ret = rl_run(cmd, NULL, &err);
			ASSERT_EQ(ret, 1, "exit status for a snapped frame");
			ASSERT_CONTAINS(err, "record 2: 20 of the frame's", "names the record");
			ASSERT_CONTAINS(err, "tcpdump -s 0", "says how to capture");
		}
		free(cmd);
	}
out:
	if (*path)
		unlink(path);
	free(err);
	corpus_free(&c);
}

/* simulate on @path: exit status @want, stderr holding @msg. */
static void sim_fails(const char *path, int want, const char *msg)
{
	char *cmd = NULL, *err = NULL;

	if (asprintf(&cmd, "%s simulate --pcap '%s' --rate 10 --quiet --summary", bin(), path) < 0)
		return;
	ASSERT_EQ(rl_run(cmd, NULL, &err), want, msg);
	ASSERT_CONTAINS(err, msg, path);
	free(cmd);
	free(err);
}

/* @path holding @n bytes of @data. */
static bool put_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(data, 1, n, f) == n;

	if (f)
		ok = !fclose(f) && ok;
	return ASSERT_TRUE(ok, path);
}

static char *get_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	long len;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		b = malloc((size_t)len);
		if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
			free(b);
			b = NULL;
		}
		*n = (size_t)len;
	}
	fclose(f);
	return b;
}

TEST(capture_bad_files)
{
	char good[64] = "", bad[64] = "", dir[] = "/tmp/rl-test-capdir-XXXXXX", msg[128];
	struct corpus c;
	size_t n = 0;
	char *b = NULL;

	if (!ASSERT_OK(corpus_make(&c, 20, T0, 1), "corpus"))
		return;
	if (pf_tmpname(good, sizeof(good), ".pcap") || pf_tmpname(bad, sizeof(bad), ".pcap") ||
	    !ASSERT_OK(pf_write(good, PF_ETHER, c.r, c.n), "pcap") ||
	    !ASSERT_TRUE((b = get_file(good, &n)) != NULL && n > 200, "read it back"))
		goto out;
	sim_fails("/nonexistent/x.pcap", 1, "cannot open capture '/nonexistent/x.pcap'");
	if (ASSERT_TRUE(mkdtemp(dir) != NULL, "mkdtemp")) {
		snprintf(msg, sizeof(msg), "capture '%s' is a directory", dir);
		sim_fails(dir, 1, msg);
		rmdir(dir);
	}
	put_file(bad, "", 0);
	snprintf(msg, sizeof(msg), "capture '%s': ", bad);
	sim_fails(bad, 1, msg);
	put_file(bad, "1.5 198.18.0.1\n2.5 198.18.0.1\n", 28);
	sim_fails(bad, 1, "unknown file format");
	/* The file header cut: libpcap's words. */
	put_file(bad, b, 10);
	sim_fails(bad, 1, "truncated dump file");
	/* A record cut: its number. */
	put_file(bad, b, n - 5);
	snprintf(msg, sizeof(msg), "record %zu: truncated", c.n);
	sim_fails(bad, 1, msg);
	/* A link type simulate does not replay: raw IP (101). */
	b[20] = 101;
	put_file(bad, b, n);
	sim_fails(bad, 1, "link type RAW");
	b[20] = 1;
	/* The first record captures more than its frame holds (caplen at 32, len at 36). */
	b[24 + 8] = (char)(b[24 + 12] + 1);
	put_file(bad, b, n);
	sim_fails(bad, 1, "record 1: ");
out:
	free(b);
	unlink(good);
	unlink(bad);
	corpus_free(&c);
}

/* The whole replay of @path in-process: 1 read to its end, 0 an error with a message. */
static int replay_file(const char *path, const struct rl_ruleset *set, unsigned long *frames)
{
	struct rl_capture *cap;
	struct rl_capture_frame f;
	struct rl_whatif w;
	char err[RL_ERRLEN] = "";
	int ret;

	if (rl_capture_open(&cap, path, err, sizeof(err))) {
		ASSERT_CONTAINS(err, path, "an error names the file");
		return 0;
	}
	rl_whatif_init(&w);
	if (!ASSERT_OK(rl_whatif_add(&w, "p", set, true), "add")) {
		rl_capture_close(cap);
		return 0;
	}
	while ((ret = rl_capture_next(cap, &f, err, sizeof(err))) > 0) {
		(*frames)++;
		if (rl_whatif_frame(&w, f.data, f.caplen, f.len, f.ns, NULL))
			break;
	}
	if (ret < 0) {
		ASSERT_CONTAINS(err, path, "an error names the file");
		ASSERT_CONTAINS(err, "record ", "and the record");
	}
	/* The counters add up whatever was read. */
	ASSERT_EQ(w.c[0].model.cnt.rx_packets, w.frames, "frames counted");
	ASSERT_EQ(w.c[0].model.cnt.passed + w.c[0].model.cnt.dropped, w.frames, "verdicts");
	rl_whatif_free(&w);
	rl_capture_close(cap);
	return ret == 0;
}

/* @n damaged captures, the command run on one in 100 of them. */
static void fuzz(int n)
{
	unsigned long long rng = rl_test_seed() * 31 + 7;
	char eth[64] = "", ng[64] = "", v[64] = "", err[RL_ERRLEN], *cmd = NULL;
	unsigned long frames = 0, ends = 0, errors = 0, cli = 0;
	const char *src[2] = { eth, ng };
	struct rl_ruleset set;
	struct rl_policy pol;
	struct rl_opts o;
	struct corpus c;
	char *orig[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 };
	const char *words[] = { "--rate", "100", "--burst", "5", NULL };

	if (!ASSERT_OK(corpus_make(&c, 150, T0, rl_test_seed()), "corpus") ||
	    !ASSERT_OK(rl_policy_parse(&pol, &o, words, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_ruleset_init(&set, &pol, &o, err, sizeof(err)), err)) {
		corpus_free(&c);
		return;
	}
	if (pf_tmpname(eth, sizeof(eth), ".pcap") || pf_tmpname(ng, sizeof(ng), ".pcapng") ||
	    pf_tmpname(v, sizeof(v), ".cap") ||
	    !ASSERT_OK(pf_write(eth, PF_ETHER, c.r, c.n), "w") ||
	    !ASSERT_OK(rl_sh(NULL, "editcap -F pcapng %s %s", eth, ng), "editcap"))
		goto out;
	for (int k = 0; k < 2; k++)
		if (!ASSERT_TRUE((orig[k] = get_file(src[k], &len[k])) != NULL, "read"))
			goto out;
	for (int i = 0; i < n; i++) {
		int k = i & 1;
		size_t n = len[k];
		char *b = malloc(n);

		if (!b)
			break;
		memcpy(b, orig[k], n);
		switch (rl_rand_below(&rng, 4)) {
		case 0: /* cut anywhere */
			n = rl_rand_below(&rng, n);
			break;
		case 1: /* a few bytes flipped, anywhere */
			for (int j = (int)rl_rand_below(&rng, 8) + 1; j; j--)
				b[rl_rand_below(&rng, n)] ^= (char)(1 + rl_rand_below(&rng, 255));
			break;
		case 2: /* the header and record headers: the first 64 bytes */
			for (int j = (int)rl_rand_below(&rng, 4) + 1; j; j--)
				b[rl_rand_below(&rng, 64)] = (char)rl_rand_below(&rng, 256);
			break;
		default: /* a run of garbage, then cut */
		{
			size_t at = rl_rand_below(&rng, n), run = rl_rand_below(&rng, 64);

			for (size_t j = at; j < at + run && j < n; j++)
				b[j] = (char)rl_rand_below(&rng, 256);
			n -= rl_rand_below(&rng, n - at + 1);
			break;
		}
		}
		if (!put_file(v, b, n)) {
			free(b);
			break;
		}
		free(b);
		if (replay_file(v, &set, &frames))
			ends++;
		else
			errors++;
		/* Now and then the command itself: exit 0 or 1, never a signal. */
		if (i % 100 == 0) {
			int ret;

			free(cmd);
			if (asprintf(&cmd,
				     "%s simulate --pcap %s --rate 100 --burst 5 --quiet --summary "
				     ">/dev/null 2>&1",
				     bin(), v) < 0)
				break;
			ret = rl_run(cmd, NULL, NULL);
			ASSERT_TRUE(ret == 0 || ret == 1,
				    "simulate exits 0 or 1 on a damaged capture");
			cli++;
		}
	}
	printf("    %d damaged captures (pcap and pcapng): %lu read to their end, %lu refused "
	       "with a message, %lu frames replayed; %lu through the command\n",
	       n, ends, errors, frames, cli);
	ASSERT_TRUE(ends > 0 && errors > 0, "both outcomes seen");
out:
	free(cmd);
	free(orig[0]);
	free(orig[1]);
	unlink(eth);
	unlink(ng);
	unlink(v);
	rl_ruleset_free(&set);
	corpus_free(&c);
}

TEST(capture_fuzz)
{
	fuzz(600);
}

/* make fuzz: many more. */
TEST_FLAGS(capture_fuzz_long, RL_TEST_SLOW)
{
	fuzz(50000);
}
