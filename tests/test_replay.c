// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * simulate --pcap against the kernel, frame for frame: a capture is replayed
 * through the XDP program (BPF_PROG_TEST_RUN, the test clock set to each
 * frame's capture time) and through the built xdp-ratelimit binary
 * (simulate --pcap), and every verdict, the interface's counters and each
 * rule's counters must be the same.
 *
 *	replay_kernel_agree	a corpus of every kind of frame (tests/lib/corpus.c)
 *				under four policies, one with rules; the same
 *				frames as Linux cooked captures (SLL, SLL2, with
 *				frames the host sent, which are skipped) and as
 *				pcapng
 *	replay_tcpdump_flood	a flood from trafgen in a test namespace, recorded
 *				by tcpdump, replayed; and the what-if report on it
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include "capture.h"
#include "corpus.h"
#include "counters.h"
#include "harness.h"
#include "netns.h"
#include "pcapfile.h"
#include "rulemaps.h"
#include "rules.h"
#include "test.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The corpus's clock starts near today's (the capture's clock is the wall clock). */
#define T0 1765000000000000000ULL

struct policy {
	const char *opts; /* simulate's words, and the kernel's configuration */
	const char *rules; /* a --rules file's text, or NULL */
};

static const struct policy policies[] = {
	{ "--rate 100 --burst 10", NULL },
	{ "--algo gcra --rate 100kbit --burst 2000 --prefix4 24 --malformed pass", NULL },
	{ "--algo sliding-window --rate 200 --window 50ms --prefix6 48 --action dry-run", NULL },
	{ "--algo fixed-window --rate 20 --window 100ms",
	  "lan --src 198.18.0.8/29 --allow\n"
	  "web --proto tcp --dport 443 --tcp-flags syn --rate 200 --burst 5 --block 20ms\n"
	  "dns --proto udp --dport 5353 --rate 100 --burst 3\n"
	  "frag --proto 0 --deny\n"
	  "v6 --src 2001:db8::/64 --rate 300 --burst 4 --prefix6 128\n"
	  "echo --proto icmpv6 --rate 50 --burst 1 --action dry-run\n" },
};

static const char *bin(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/xdp-ratelimit", rl_build_dir);
	return path;
}

/* The words of @s (modified in place) into @v, NULL-terminated; how many. */
static size_t words(char *s, const char **v, size_t max)
{
	size_t n = 0;

	for (char *save = NULL, *t = strtok_r(s, " \n", &save); t && n + 1 < max;
	     t = strtok_r(NULL, " \n", &save))
		v[n++] = t;
	v[n] = NULL;
	return n;
}

/* The kernel with policy @p: the program, its default configuration, its rules. */
struct kern {
	struct rl_prog prog;
	struct rl_config def;
	struct rl_ruleset set;
	struct rl_rules_cfg cfg;
	bool loaded, has_set;
};

static void kern_stop(struct kern *k)
{
	if (k->has_set)
		rl_ruleset_free(&k->set);
	if (k->loaded)
		rl_prog_close(&k->prog);
	memset(k, 0, sizeof(*k));
}

static bool kern_start(struct kern *k, const struct policy *p)
{
	char *copy = strdup(p->opts), err[RL_ERRLEN] = "";
	const char *v[32];
	struct rl_rules_cfg old;
	struct rl_policy pol;
	struct rl_opts o;
	bool ok = false;

	memset(k, 0, sizeof(*k));
	if (!ASSERT_TRUE(copy != NULL, "strdup"))
		return false;
	words(copy, v, ARRAY_SIZE(v));
	if (!rl_build_config(&k->def, v, NULL) || !rl_prog_load(&k->prog, true, 1 << 16))
		goto out;
	k->loaded = true;
	rl_config_policy(&k->def, &pol, &o);
	if (!ASSERT_OK(rl_ruleset_init(&k->set, &pol, &o, err, sizeof(err)), err))
		goto out;
	k->has_set = true;
	if (p->rules) {
		char *text = strdup(p->rules), *save = NULL;

		for (char *line = strtok_r(text, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			const char *w[32];
			struct rl_rule r;
			char *l = strdup(line);

			words(l, w, ARRAY_SIZE(w));
			if (!ASSERT_OK(rl_rule_parse(&r, NULL, w, err, sizeof(err)), err) ||
			    !ASSERT_OK(rl_ruleset_add(&k->set, &r, NULL, err, sizeof(err)), err)) {
				free(l);
				free(text);
				goto out;
			}
			free(l);
		}
		free(text);
		if (!ASSERT_OK(rl_rules_read(&k->prog.maps, &old), "read rules") ||
		    !ASSERT_OK(rl_rules_compile(&k->set, &old, &k->cfg, err, sizeof(err)), err) ||
		    !ASSERT_OK(rl_rules_fill(&k->prog.maps, &k->set, &k->cfg, &old, NULL, err,
					     sizeof(err)),
			       err) ||
		    !ASSERT_OK(rl_rules_commit(&k->prog.maps, &k->cfg, err, sizeof(err)), err))
			goto out;
	}
	ok = rl_prog_configure(&k->prog, 0, &k->def);
out:
	free(copy);
	return ok;
}

/* The verdicts of "simulate --pcap ... --json" in order (1 pass, 0 drop) into @v; how many. */
static size_t sim_verdicts(const char *json, int *v, size_t max)
{
	const char *pat = "\"verdict\":\"", *p = json;
	size_t n = 0;

	while (p && (p = strstr(p, pat)) && n < max) {
		p += strlen(pat);
		v[n++] = !strncmp(p, "allow", 5);
	}
	return n;
}

/*
 * Run simulate on @path under @p; its JSON in *@out (free it). 0, or the
 * exit status (its stderr shown).
 */
static int simulate(const char *path, const struct policy *p, const char *extra, char **out)
{
	char rules[64] = "", *cmd = NULL, *err = NULL;
	int ret;

	*out = NULL;
	if (p->rules) {
		FILE *f;

		if (pf_tmpname(rules, sizeof(rules), ".rules"))
			return -1;
		f = fopen(rules, "w");
		if (!f || fputs(p->rules, f) < 0 || fclose(f)) {
			unlink(rules);
			return -1;
		}
	}
	if (asprintf(&cmd, "%s simulate --pcap %s %s %s%s --json %s", bin(), path, p->opts,
		     *rules ? "--rules " : "", rules, extra) < 0)
		cmd = NULL;
	ret = cmd ? rl_run(cmd, out, &err) : -1;
	if (ret)
		fprintf(stderr, "    %s: exit %d: %s\n", cmd, ret, err ? err : "");
	free(cmd);
	free(err);
	if (*rules)
		unlink(rules);
	return ret;
}

/* The interface's counters and each rule's in @json equal the kernel's. */
static bool counters_agree(struct kern *k, const char *json, const char *what)
{
	const char *c = json ? strstr(json, "\"counters\":") : NULL;
	struct rl_counters kc;
	bool ok = true;

	if (!ASSERT_TRUE(c != NULL, "simulate's counters") ||
	    !ASSERT_TRUE(rl_prog_counters(&k->prog, &kc), "kernel counters"))
		return false;
	for (size_t i = 0; i < rl_counter_count; i++) {
		__u64 kv = *(const __u64 *)((const char *)&kc + rl_counter_table[i].off);
		unsigned long long sv = ~0ULL;

		rl_json_u64(c, rl_counter_table[i].name, &sv);
		if (kv != sv) {
			rl_test_fail(__FILE__, __LINE__,
				     "%s: counter %s: kernel %llu, simulate %llu", what,
				     rl_counter_table[i].name, (unsigned long long)kv, sv);
			ok = false;
		}
	}
	/* Each rule's: simulate's "rules" array is in the set's order, default last. */
	for (__u32 i = 0; i < k->cfg.n; i++) {
		struct rl_rule_counters rc;
		char pat[64];
		const char *r;
		unsigned long long sv[7];
		const char *names[] = { "passed",  "dropped", "allowed",   "denied",
					"limited", "blocked", "would_drop" };
		__u64 kv[7];

		if (!ASSERT_OK(rl_rules_counters(&k->prog.maps, k->cfg.r[i].slot, &rc), "rule"))
			return false;
		kv[0] = rc.passed, kv[1] = rc.dropped, kv[2] = rc.allowed, kv[3] = rc.denied;
		kv[4] = rc.limited, kv[5] = rc.blocked, kv[6] = rc.would_drop;
		snprintf(pat, sizeof(pat), "\"name\":\"%s\"", k->cfg.r[i].name);
		r = strstr(json, pat);
		if (!ASSERT_TRUE(r != NULL, pat))
			return false;
		for (int j = 0; j < 7; j++) {
			sv[j] = ~0ULL;
			rl_json_u64(r, names[j], &sv[j]);
			if (kv[j] != sv[j]) {
				rl_test_fail(__FILE__, __LINE__,
					     "%s: rule %s: %s: kernel %llu, simulate %llu", what,
					     k->cfg.r[i].name, names[j], (unsigned long long)kv[j],
					     sv[j]);
				ok = false;
			}
		}
	}
	return ok;
}

static void hexdump(const __u8 *f, __u32 len)
{
	fprintf(stderr, "    frame (%u bytes):", len);
	for (__u32 i = 0; i < len && i < 96; i++)
		fprintf(stderr, "%s%02x", i % 32 ? "" : "\n      ", f[i]);
	fputc('\n', stderr);
}

/*
 * @n frames @r (whole Ethernet frames) through the kernel under @p, and
 * @paths (captures of the same frames, in any link type) through simulate:
 * the same verdict for each frame, the same counters. The number of
 * mismatches (failures reported), or -1.
 */
static long agree(const struct pf_rec *r, size_t n, const char *const *paths, size_t npaths,
		  const struct policy *p, struct rl_counters *kc)
{
	int *kv = calloc(n + 1, sizeof(int)), *sv = calloc(n + 1, sizeof(int));
	struct kern k = {};
	long bad = 0;
	char *json = NULL;

	if (!kv || !sv || !kern_start(&k, p)) {
		free(kv);
		free(sv);
		kern_stop(&k);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int v = rl_prog_run(&k.prog, r[i].ns, r[i].data, r[i].len, 1);

		if (!ASSERT_TRUE(v == XDP_PASS || v == XDP_DROP, "kernel verdict")) {
			bad = -1;
			goto out;
		}
		kv[i] = v == XDP_PASS;
	}
	if (!ASSERT_TRUE(rl_prog_counters(&k.prog, kc), "kernel counters")) {
		bad = -1;
		goto out;
	}
	for (size_t c = 0; c < npaths; c++) {
		size_t got;

		free(json);
		json = NULL;
		if (!ASSERT_OK(simulate(paths[c], p, "", &json), p->opts)) {
			bad = -1;
			goto out;
		}
		got = sim_verdicts(json, sv, n + 1);
		if (!ASSERT_EQ(got, n, "frames simulate replayed")) {
			bad = -1;
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			if (kv[i] == sv[i])
				continue;
			if (bad++ < 5) {
				rl_test_fail(__FILE__, __LINE__,
					     "%s, %s: frame %zu at %llu ns: kernel %s, simulate %s",
					     paths[c], p->opts, i + 1, (unsigned long long)r[i].ns,
					     kv[i] ? "pass" : "drop", sv[i] ? "pass" : "drop");
				hexdump(r[i].data, r[i].len);
			}
		}
		if (!counters_agree(&k, json, paths[c]))
			bad++;
	}
out:
	free(json);
	free(kv);
	free(sv);
	kern_stop(&k);
	return bad;
}

TEST_FLAGS(replay_kernel_agree, RL_TEST_ROOT)
{
	char eth[64] = "", sll[64] = "", sll2[64] = "", ng[64] = "";
	struct pf_rec *cooked = NULL;
	struct corpus c;
	size_t n = 3000, ncooked = 0, covered = 0;
	unsigned long long rng = rl_test_seed();

	if (!ASSERT_OK(corpus_make(&c, n, T0, rl_test_seed()), "corpus"))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(c.kinds); i++)
		covered += c.kinds[i] > 0;
	/* The cooked captures also hold frames the host sent: simulate must skip them. */
	cooked = calloc(n * 2, sizeof(*cooked));
	if (!ASSERT_TRUE(cooked != NULL, "calloc"))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!rl_rand_below(&rng, 20)) {
			cooked[ncooked] = c.r[i];
			cooked[ncooked++].outgoing = true;
		}
		cooked[ncooked++] = c.r[i];
	}
	if (pf_tmpname(eth, sizeof(eth), ".pcap") || pf_tmpname(sll, sizeof(sll), ".pcap") ||
	    pf_tmpname(sll2, sizeof(sll2), ".pcap") || pf_tmpname(ng, sizeof(ng), ".pcapng") ||
	    !ASSERT_OK(pf_write(eth, PF_ETHER, c.r, n), "write pcap") ||
	    !ASSERT_OK(pf_write(sll, PF_SLL, cooked, ncooked), "write SLL") ||
	    !ASSERT_OK(pf_write(sll2, PF_SLL2, cooked, ncooked), "write SLL2") ||
	    !ASSERT_OK(rl_sh(NULL, "editcap -F pcapng %s %s", eth, ng), "editcap to pcapng"))
		goto out;
	printf("    %zu frames of %zu kinds (%lu mutated or cut at random)\n", n, covered,
	       c.mutated);
	for (size_t i = 0; i < ARRAY_SIZE(policies); i++) {
		/* Every link type under the first policy, the plain capture under the others. */
		const char *const all[] = { eth, sll, sll2, ng };
		struct rl_counters kc;
		long bad = agree(c.r, n, all, i ? 1 : 4, &policies[i], &kc);

		if (bad < 0)
			break;
		printf("    %s%s: %zu frames x %zu capture%s: %llu dropped (%llu over the limit), "
		       "%llu would be, %ld mismatches\n",
		       policies[i].opts, policies[i].rules ? " + 6 rules" : "", n,
		       (size_t)(i ? 1 : 4), i ? "" : "s", (unsigned long long)kc.dropped,
		       (unsigned long long)kc.limited, (unsigned long long)kc.would_drop, bad);
		ASSERT_EQ(bad, 0, "frames on which kernel and simulate differ");
		/* Each policy's limit must bite, or the comparison says little. */
		ASSERT_TRUE(kc.limited + kc.would_drop > 0 && kc.passed > 0,
			    "the policy limits some frames and passes some");
	}
out:
	unlink(eth);
	unlink(sll);
	unlink(sll2);
	unlink(ng);
	free(cooked);
	corpus_free(&c);
}

/* The frames of the capture @path as simulate reads them (Ethernet, each at its time); -1 or n. */
static long read_capture(const char *path, struct pf_rec **out, __u8 **store)
{
	struct rl_capture *cap;
	struct rl_capture_frame cf;
	char err[RL_ERRLEN];
	size_t n = 0, cap_n = 0, used = 0, room = 0;
	struct pf_rec *r = NULL;
	__u8 *buf = NULL;
	int ret;

	if (!ASSERT_OK(rl_capture_open(&cap, path, err, sizeof(err)), err))
		return -1;
	while ((ret = rl_capture_next(cap, &cf, err, sizeof(err))) > 0) {
		if (n == cap_n) {
			cap_n = cap_n * 2 + 1024;
			r = realloc(r, cap_n * sizeof(*r));
		}
		if (used + cf.caplen > room) {
			room = room * 2 + (1 << 20) + cf.caplen;
			buf = realloc(buf, room);
		}
		if (!r || !buf)
			break;
		memcpy(buf + used, cf.data, cf.caplen);
		/* Offsets for now: buf moves while it grows. */
		r[n++] = (struct pf_rec){ .data = (const __u8 *)(uintptr_t)used,
					  .caplen = cf.caplen,
					  .len = cf.len,
					  .ns = cf.ns };
		used += cf.caplen;
	}
	rl_capture_close(cap);
	if (!ASSERT_TRUE(ret == 0 && r && buf, err)) {
		free(r);
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		/* The kernel is given the frame as captured: tcpdump -s 0 kept it whole. */
		if (!ASSERT_EQ(r[i].caplen, r[i].len, "a whole frame"))
			break;
		r[i].data = buf + (uintptr_t)r[i].data;
	}
	*out = r;
	*store = buf;
	return (long)n;
}

/* Frames a trafgen run sends along the floods: VLAN, IPv6, not IP, a truncated IPv4 header. */
static const char *mix_cfg =
	"{ eth(da=%s, type=0x8100), vlan(id=100), ipv4(sa=198.18.0.5, da=" RL_NS_RX_ADDR4 "),"
	" udp(dp=9), fill(0x00, 18) }\n"
	"{ eth(da=%s, type=0x0800), fill(0x45, 10) }\n"
	"{ eth(da=ff:ff:ff:ff:ff:ff, type=0x0806), fill(0x00, 28) }\n"
	"{ eth(da=%s, type=0x86dd), ipv6(sa=2001:db8::5, da=" RL_NS_RX_ADDR6 ", hl=64),"
	" udp(dp=9), fill(0x00, 18) }\n";

TEST_FLAGS(replay_tcpdump_flood, RL_TEST_ROOT)
{
	struct rl_flow heavy = { .src = "198.18.0.66", .count = 12000, .gap = "10us" };
	struct rl_flow spoof = {
		.src = "198.18.3.0", .rand_bytes = 1, .count = 3000, .gap = "60us"
	};
	struct rl_flow six = { .src = "2001:db8::66", .count = 3000, .gap = "60us" };
	struct rl_flow calm = { .src = "198.18.0.7", .count = 200, .gap = "1ms" };
	struct rl_flow *flows[] = { &heavy, &spoof, &six, &calm };
	char pcap[64] = "", cfg[64] = "", log[64] = "", png[64] = "", *out = NULL, *cmd = NULL;
	const struct policy p = { "--rate 1000 --burst 100 --prefix6 64", NULL };
	const char *const paths[1] = { pcap };
	struct rl_counters kc;
	struct pf_rec *r = NULL;
	__u8 *store = NULL, head[8] = "";
	pid_t td = 0;
	struct rl_ns ns;
	long n = 0, bad;
	int st;
	FILE *f;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		return;
	if (pf_tmpname(pcap, sizeof(pcap), ".pcap") || pf_tmpname(cfg, sizeof(cfg), ".cfg") ||
	    pf_tmpname(log, sizeof(log), ".log") || pf_tmpname(png, sizeof(png), ".png"))
		goto out;
	f = fopen(cfg, "w");
	if (!ASSERT_TRUE(f != NULL, "trafgen config"))
		goto out;
	fprintf(f, mix_cfg, ns.rx_mac, ns.rx_mac, ns.rx_mac);
	fclose(f);
	/* tcpdump on the receiving end, received frames only, whole, each as it comes. */
	td = fork();
	if (td == 0) {
		int fd = open(log, O_WRONLY | O_TRUNC);

		setpgid(0, 0);
		if (fd >= 0)
			dup2(fd, 2);
		execlp("timeout", "timeout", "-k", "1", "30", "ip", "netns", "exec", ns.rx,
		       "tcpdump", "-i", ns.rx_if, "-w", pcap, "-U", "--immediate-mode", "-B",
		       "16384", "-s", "0", "-n", "-Q", "in", (char *)NULL);
		_exit(127);
	}
	if (!ASSERT_TRUE(td > 0, "fork tcpdump"))
		goto out;
	for (int i = 0; i < 300; i++) {
		free(out);
		out = NULL;
		if (!rl_sh(&out, "cat %s", log) && out && strstr(out, "listening on"))
			break;
		usleep(10000);
	}
	if (!ASSERT_TRUE(out && strstr(out, "listening on"), "tcpdump listens"))
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(flows); i++)
		if (!ASSERT_OK(rl_flow_start(&ns, flows[i]), flows[i]->src))
			goto out;
	/* The mix, 400 frames over 0.4 s, while the floods run. */
	ASSERT_OK(rl_sh(NULL,
			"timeout -k 1 10 ip netns exec %s trafgen -o %s -i %s -n 400 -t 1ms "
			"-P 1 -Q >/dev/null",
			ns.tx, ns.tx_if, cfg),
		  "trafgen mix");
	for (size_t i = 0; i < ARRAY_SIZE(flows); i++)
		ASSERT_OK(rl_flow_wait(flows[i]), flows[i]->src);
	usleep(300000);
	rl_proc_stop(&td, SIGINT, 5000, &st);
	free(out);
	out = NULL;
	rl_sh(&out, "tail -3 %s | tr '\\n' ' '", log);
	printf("    tcpdump: %s\n", out ? out : "?");
	n = read_capture(pcap, &r, &store);
	if (n < 0)
		goto out;
	/* The floods and the mix, and no more than that (ND and such of the pair aside). */
	if (!ASSERT_TRUE(n > 12000 && n < 30000, "frames captured"))
		goto out;
	bad = agree(r, (size_t)n, paths, 1, &p, &kc);
	printf("    %ld frames recorded by tcpdump, replayed under %s: kernel %llu passed, %llu "
	       "dropped; %ld mismatches\n",
	       n, p.opts, (unsigned long long)kc.passed, (unsigned long long)kc.dropped, bad);
	ASSERT_EQ(bad, 0, "frames on which kernel and simulate differ");
	ASSERT_TRUE(kc.limited > 0 && kc.not_ip > 0 && kc.malformed[RL_BAD_IPV4] > 0 && kc.ipv6,
		    "the capture has floods limited, frames not IP, malformed, IPv6");
	/* The what-if report on it, printed, and its plot drawn. */
	if (asprintf(&cmd,
		     "%s simulate --pcap %s --compare '{rate: 500, burst: 50}' "
		     "'{rate: 5000, burst: 500}' '{rate: 1000, burst: 100, prefix4: 16}' "
		     "--sources 3 --plot %s",
		     bin(), pcap, png) < 0)
		goto out;
	free(out);
	out = NULL;
	if (!ASSERT_OK(rl_run(cmd, &out, NULL), cmd))
		goto out;
	printf("    $ xdp-ratelimit simulate --pcap flood.pcap --compare ...\n");
	for (char *l = out, *e; l && *l; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		printf("    | %.*s\n", e ? (int)(e - l) : (int)strlen(l), l);
	}
	ASSERT_CONTAINS(out, "198.18.0.66", "the flood's source is the most affected");
	f = fopen(png, "rb");
	ASSERT_TRUE(f && fread(head, 1, 8, f) == 8 && !memcmp(head, "\x89PNG\r\n\x1a\n", 8),
		    "--plot drew a PNG");
	if (f)
		fclose(f);
out:
	if (td > 0)
		rl_proc_stop(&td, SIGINT, 3000, &st);
	for (size_t i = 0; i < ARRAY_SIZE(flows); i++)
		rl_flow_stop(flows[i]);
	rl_ns_destroy(&ns);
	free(cmd);
	free(out);
	free(r);
	free(store);
	unlink(pcap);
	unlink(cfg);
	unlink(log);
	unlink(png);
}
