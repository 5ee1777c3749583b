// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bad invocations of the CLI: each must print one message naming the problem,
 * exit non-zero, and leave the interface, the pins and the maps exactly as
 * they were. Runs in a network namespace of its own with a veth pair: one end
 * with the limiter attached, one without.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "rl_common.h"
#include "test.h"

struct bad_case {
	const char *args; /* after the binary; IFA: attached, IFB: not */
	int status; /* expected exit status */
	const char *msg; /* expected in the message */
};

static const struct bad_case bad_cases[] = {
	{ "", 2, "Usage" },
	{ "frobnicate", 2, "unknown command 'frobnicate'" },
	{ "--bogus", 2, "unknown option '--bogus'" },
	{ "--version extra", 2, "--version takes no argument ('extra'" },
	{ "status --version IFA", 2, "status: --version takes no argument" },
	{ "attach", 2, "give an interface name" },
	{ "attach IFB --rate", 2, "--rate needs a value" },
	{ "attach IFB --rate fast", 2, "'fast' is not a rate" },
	{ "attach IFB --rate 10xyz", 2, "unknown rate unit 'xyz'" },
	{ "attach IFB --rate 0", 2, "zero" },
	{ "attach IFB --rate 200gbyte", 2, "--rate is too high" },
	{ "attach IFB --rate 10.0000000001", 2, "at most 9 decimals" },
	{ "attach IFB --rate 10 --burst 0", 2, "--burst: 0 is out of range" },
	{ "attach IFB --rate 10 --burst -5", 2, "--burst: '-5' is not a whole number" },
	{ "attach IFB --rate 10 --burst 99999999999999999999", 2, "--burst" },
	{ "attach IFB --algo leaky --rate 10", 2, "unknown algorithm 'leaky'" },
	{ "attach IFB --algo fixed-window --rate 10 --burst 5", 2,
	  "--burst has no meaning for fixed-window" },
	{ "attach IFB --rate 10 --window 1s", 2, "--window has no meaning for token-bucket" },
	{ "attach IFB --algo sliding-window --rate 10 --window 150ms", 2,
	  "whole limit per window" },
	{ "attach IFB --algo fixed-window --rate 10 --window 5", 2, "needs a unit" },
	{ "attach IFB --algo fixed-window --rate 10 --window 2d", 2, "needs a unit" },
	{ "attach IFB --algo fixed-window --rate 10 --window 48h", 2, "out of range" },
	{ "attach IFB --rate 10 --prefix4 33", 2, "--prefix4: 33 is out of range" },
	{ "attach IFB --rate 10 --prefix6 abc", 2, "--prefix6: 'abc' is not a whole number" },
	{ "attach IFB --rate 10 --burst 10 --initial 20", 2,
	  "--initial 20 is more than the burst" },
	{ "attach IFB --rate 10 --mode turbo", 2, "--mode" },
	{ "attach IFB --rate 10 --max-sources 0", 2, "--max-sources: 0 is out of range" },
	{ "attach IFB --rate 10 --action maybe", 2,
	  "--action: 'maybe' is neither drop nor dry-run" },
	{ "attach IFB --rate 10 --on-insert-fail", 2, "--on-insert-fail needs a value" },
	{ "attach IFB --rate 10 --clock sundial", 2,
	  "--clock: 'sundial' is neither precise nor coarse" },
	/* A tick is 1 to 10 ms: 10^6/s earns 1000 or more in one, far over a burst of 100. */
	{ "attach IFB --rate 1000000 --burst 100 --clock coarse", 2,
	  "--clock coarse: the burst (100 packets) is less than the rate earns in one kernel tick" },
	{ "attach IFB --algo fixed-window --rate 1000000 --window 100us --clock coarse", 2,
	  "is shorter than one kernel tick" },
	{ "attach IFB", 2, "--rate is required" },
	{ "attach IFB --rate 100 --rate 200", 2, "--rate is given twice" },
	{ "attach --rate=100 IFB --burst 5 --burst=6", 2, "--burst is given twice" },
	{ "attach IFB IFA --rate 10", 2, "unexpected argument 'IFA'" },
	{ "attach IFB --rate 10 -x", 2, "unknown option '-x'" },
	{ "-v attach IFB --rate 10 --json --json", 2, "--json is given twice" },
	{ "attach nosuch0 --rate 10", 1, "no such interface 'nosuch0'" },
	{ "attach IFA --rate 10", 1, "already attached to 'IFA'" },
	{ "attach lo --rate 10", 1, "try --mode skb" },
	{ "set IFB --rate 10", 1, "not attached to 'IFB'" },
	{ "set IFA", 2, "nothing to change" },
	{ "set IFA --rate 10 --rate 10", 2, "--rate is given twice" },
	{ "set IFA --rate 10 --window 1s", 2, "--window has no meaning for token-bucket" },
	{ "set IFA --burst 0", 2, "--burst: 0 is out of range" },
	{ "set IFA --initial 100000", 2, "--initial 100000 is more than the burst" },
	{ "set IFA --rate 1000000 --burst 100 --clock coarse", 2, "less than the rate earns" },
	{ "set IFA --rate 10 --bogus", 2, "unknown option '--bogus'" },
	{ "detach IFB", 1, "not attached to 'IFB'" },
	{ "detach IFA extra", 2, "unexpected argument 'extra'" },
	{ "stats IFB", 1, "not attached to 'IFB'" },
	{ "stats IFA --watch 0", 2, "--watch: 0 is out of range" },
	{ "stats IFA --watch 0.01", 2, "--watch: 0.01 is out of range: from 0.1 to 3600 seconds" },
	{ "stats IFA --watch 1s", 2, "--watch: '1s' is not a number of seconds" },
	{ "stats IFA -w nan", 2, "-w: 'nan' is not a number of seconds" },
	{ "stats IFA --count 3", 2, "--count only applies with --watch" },
	{ "top IFA -n 0", 2, "-n: 0 is out of range" },
	{ "top IFA --all --source 198.18.0.1", 2, "--all reads every source: not with --source" },
	{ "top IFA --all --sample 10", 2, "--all reads every source: not with --sample" },
	{ "top IFA --sample 0", 2, "--sample: 0 is out of range" },
	{ "top", 2, "give an interface name" },
	{ "status nosuch0", 1, "no such interface 'nosuch0'" },
	{ "simulate --rate 10 --trace /nonexistent/trace", 1,
	  "cannot open trace '/nonexistent/trace'" },
	{ "simulate --rate 10 --trace TRACE", 1,
	  "trace line 2: source 'garbage' is not an IPv4 or IPv6 address" },
};

struct env {
	char ns[64], ifa[16], ifb[16], trace[64];
	char pins[128]; /* the namespace's pin directory (user/lib/pins.h) */
};

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		cmd = NULL;
	va_end(ap);
	if (!cmd)
		return -1;
	ret = rl_run(cmd, NULL, NULL);
	free(cmd);
	return ret;
}

/* The state a bad command must not change: link (with its XDP program), pins, maps. */
static char *snapshot(const struct env *e)
{
	char *cmd, *out = NULL;

	if (asprintf(
		    &cmd,
		    "ip -n %s -d link show; find %s/%s %s/%s %s/lo -printf '%%p %%m %%u\\n' 2>/dev/null"
		    " | sort; for m in rl_config rl_ctl rl_counters rl_state; do"
		    " bpftool map dump pinned %s/%s/$m; done",
		    e->ns, e->pins, e->ifa, e->pins, e->ifb, e->pins, e->pins, e->ifa) < 0)
		return NULL;
	rl_run(cmd, &out, NULL);
	free(cmd);
	return out;
}

static char *subst(const char *s, const struct env *e)
{
	static char buf[512];
	const char *names[] = { "IFA", "IFB", "TRACE" };
	const char *vals[] = { e->ifa, e->ifb, e->trace };
	size_t n = 0;

	while (*s && n < sizeof(buf) - 64) {
		size_t k;

		for (k = 0; k < 3; k++) {
			if (!strncmp(s, names[k], strlen(names[k]))) {
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", vals[k]);
				s += strlen(names[k]);
				break;
			}
		}
		if (k == 3)
			buf[n++] = *s++;
	}
	buf[n] = '\0';
	return buf;
}

static bool setup(struct env *e)
{
	struct stat st;
	char path[96];
	FILE *f;

	memset(e, 0, sizeof(*e));
	snprintf(e->ns, sizeof(e->ns), "rlcli-%d", getpid());
	snprintf(e->ifa, sizeof(e->ifa), "rlc%da", getpid() % 100000);
	snprintf(e->ifb, sizeof(e->ifb), "rlc%db", getpid() % 100000);
	snprintf(e->trace, sizeof(e->trace), "/tmp/rl-cli-trace-%d", getpid());
	f = fopen(e->trace, "w");
	if (!f)
		return false;
	fprintf(f, "1.0 198.18.0.1\n2.0 garbage\n");
	fclose(f);
	if (sh("ip netns add %s", e->ns))
		return false;
	snprintf(path, sizeof(path), "/run/netns/%s", e->ns);
	if (stat(path, &st))
		return false;
	snprintf(e->pins, sizeof(e->pins), RL_PIN_ROOT "/netns-%llu",
		 (unsigned long long)st.st_ino);
	return sh("ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 && ip -n %s link add %s type veth peer name %s && "
		  "ip -n %s link set %s up && ip -n %s link set %s up && ip -n %s link set lo up",
		  e->ns, e->ns, e->ifa, e->ifb, e->ns, e->ifa, e->ns, e->ifb, e->ns) == 0;
}

static void teardown(const struct env *e)
{
	sh("nsenter --net=/var/run/netns/%s %s/xdp-ratelimit detach %s", e->ns, rl_build_dir,
	   e->ifa);
	sh("ip netns del %s", e->ns);
	/* Whatever a failed run left: pins are per host, not per namespace. */
	if (e->pins[0])
		sh("rm -rf %s; rmdir " RL_PIN_ROOT " 2>/dev/null; true", e->pins);
	unlink(e->trace);
}

static int lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

TEST_FLAGS(cli_bad_invocations, RL_TEST_ROOT)
{
	struct env e;
	char *before = NULL, *after = NULL, *out = NULL, *err = NULL, *cmd, want[256];
	int status;

	if (!ASSERT_TRUE(setup(&e), "namespace and veth pair"))
		goto out;
	if (!ASSERT_EQ(
		    sh("nsenter --net=/var/run/netns/%s %s/xdp-ratelimit attach %s --rate 1000 --burst 50",
		       e.ns, rl_build_dir, e.ifa),
		    0, "attach"))
		goto out;
	before = snapshot(&e);
	ASSERT_CONTAINS(before, "prog/xdp", "attached before");
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		char label[600];

		snprintf(label, sizeof(label), "xdp-ratelimit %s", subst(c->args, &e));
		if (asprintf(&cmd, "nsenter --net=/var/run/netns/%s %s/xdp-ratelimit %s", e.ns,
			     rl_build_dir, subst(c->args, &e)) < 0)
			break;
		status = rl_run(cmd, &out, &err);
		free(cmd);
		snprintf(want, sizeof(want), "%s", subst(c->msg, &e));
		ASSERT_EQ(status, c->status, label);
		ASSERT_CONTAINS(err, want, label);
		/* One message (the bare usage text is the only multi-line answer). */
		if (strcmp(c->args, ""))
			ASSERT_EQ(lines(err), 1, label);
		after = snapshot(&e);
		ASSERT_STREQ(after, before, label);
		free(after);
		free(out);
		free(err);
		after = out = err = NULL;
	}
	/* Not root: the same message and nothing changed. */
	if (asprintf(
		    &cmd,
		    "nsenter --net=/var/run/netns/%s setpriv --reuid=nobody --regid=nogroup --clear-groups %s/xdp-ratelimit attach %s --rate 10",
		    e.ns, rl_build_dir, e.ifb) >= 0) {
		status = rl_run(cmd, NULL, &err);
		free(cmd);
		ASSERT_EQ(status, 1, "non-root attach");
		ASSERT_CONTAINS(err, "missing capabilities: CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN",
				"non-root attach");
		after = snapshot(&e);
		ASSERT_STREQ(after, before, "non-root attach changes nothing");
	}
out:
	free(before);
	free(after);
	free(err);
	teardown(&e);
}

/* detach leaves nothing: no XDP program on the link, no pins. */
TEST_FLAGS(cli_attach_detach_clean, RL_TEST_ROOT)
{
	struct env e;
	char *out = NULL;

	if (!ASSERT_TRUE(setup(&e), "namespace and veth pair"))
		goto out;
	ASSERT_EQ(
		sh("nsenter --net=/var/run/netns/%s %s/xdp-ratelimit attach %s --rate 100 --mode skb",
		   e.ns, rl_build_dir, e.ifa),
		0, "attach --mode skb");
	{
		char *cmd;

		if (asprintf(&cmd, "ls %s", e.pins) >= 0) {
			rl_run(cmd, &out, NULL);
			free(cmd);
		}
	}
	ASSERT_CONTAINS(out, e.ifa, "pinned");
	free(out);
	out = NULL;
	ASSERT_EQ(
		sh("nsenter --net=/var/run/netns/%s %s/xdp-ratelimit status %s | grep -q 'attached (skb, program [0-9]*)'",
		   e.ns, rl_build_dir, e.ifa),
		0, "status says skb");
	ASSERT_EQ(sh("stat -c %%a %s/%s/rl_sets4 | grep -qx 600", e.pins, e.ifa), 0,
		  "pins are root only");
	ASSERT_EQ(sh("nsenter --net=/var/run/netns/%s %s/xdp-ratelimit detach %s", e.ns,
		     rl_build_dir, e.ifa),
		  0, "detach");
	{
		char *cmd;

		if (asprintf(&cmd, "ip -n %s -d link show", e.ns) >= 0) {
			rl_run(cmd, &out, NULL);
			free(cmd);
		}
	}
	ASSERT_TRUE(out && !strstr(out, "prog/xdp"), "no XDP program left");
	ASSERT_EQ(sh("test -e %s/%s", e.pins, e.ifa), 1, "no pins left");
out:
	free(out);
	teardown(&e);
}

/*
 * --json anywhere on the line makes an error a JSON document on stdout too,
 * whether the error comes before --json or after it; without --json, stdout
 * stays empty. Each is a parse error: no interface is touched.
 */
struct json_case {
	const char *args;
	int status;
	const char *out; /* stdout, exactly */
};

#define SEE_STATUS " (see xdp-ratelimit status --help)"
#define SEE_RULE   " (see xdp-ratelimit rule --help)"

static const struct json_case json_cases[] = {
	{ "status --bogus --json", 2,
	  "{\"error\":\"status: unknown option '--bogus'" SEE_STATUS "\"}\n" },
	{ "status --json --bogus", 2,
	  "{\"error\":\"status: unknown option '--bogus'" SEE_STATUS "\"}\n" },
	{ "status -j --bogus", 2,
	  "{\"error\":\"status: unknown option '--bogus'" SEE_STATUS "\"}\n" },
	{ "status --bogus -j", 2,
	  "{\"error\":\"status: unknown option '--bogus'" SEE_STATUS "\"}\n" },
	/* The first error is the one reported, the later ones only skipped. */
	{ "status --bogus --worse --json -x", 2,
	  "{\"error\":\"status: unknown option '--bogus'" SEE_STATUS "\"}\n" },
	{ "status a b --json", 2,
	  "{\"error\":\"status: unexpected argument 'b'" SEE_STATUS "\"}\n" },
	{ "status --bogus", 2, "" },
	{ "status --json -j", 2, "{\"error\":\"status: -j is given twice" SEE_STATUS "\"}\n" },
	/* --json as an option's value is not --json. */
	{ "attach nosuch0 --rate --json", 2, "" },
	{ "rule --json", 2, "{\"error\":\"rule: give add, del or list" SEE_RULE "\"}\n" },
	{ "rule bogus --json", 2, "{\"error\":\"rule: give add, del or list" SEE_RULE "\"}\n" },
	{ "rule bogus", 2, "" },
	{ "rule list --bogus --json", 2,
	  "{\"error\":\"rule list: unknown option '--bogus'" SEE_RULE "\"}\n" },
	{ "rule del IFB r1 extra --json", 2,
	  "{\"error\":\"rule del: unexpected argument 'extra'" SEE_RULE "\"}\n" },
	{ "rule list IFB extra -j", 2,
	  "{\"error\":\"rule list: give one interface" SEE_RULE "\"}\n" },
	{ "rule add --json", 2,
	  "{\"error\":\"rule add: give an interface and a rule name" SEE_RULE "\"}\n" },
	{ "rule add IFB r1 --bogus --json", 2,
	  "{\"error\":\"rule add: unknown option '--bogus'" SEE_RULE "\"}\n" },
	/* --json is an option of rule add as of every command, and parsed with the rule's. */
	{ "rule add IFB r1 --json --rate 10 --src", 2,
	  "{\"error\":\"rule add: --src needs a value" SEE_RULE "\"}\n" },
	{ "rule add IFB r1 --rate 10 --json --json", 2,
	  "{\"error\":\"rule add: --json is given twice" SEE_RULE "\"}\n" },
	/* Before the command only the global options: no --json there. */
	{ "--json status", 2, "" },
};

/* help, --help and -h, at each level: the usage on stdout, status 0. */
struct help_case {
	const char *args;
	const char *out; /* in stdout */
};

static const struct help_case help_cases[] = {
	{ "help", "Commands:" },
	{ "--help", "Commands:" },
	{ "-h status", "Commands:" },
	{ "help nosuch", "Commands:" },
	{ "help status", "Usage: xdp-ratelimit status [IFACE]" },
	{ "status --help", "Usage: xdp-ratelimit status [IFACE]" },
	{ "status -h IFA", "Usage: xdp-ratelimit status [IFACE]" },
	{ "help rule", "       xdp-ratelimit rule del IFACE RULE\n" },
	{ "rule --help", "       xdp-ratelimit rule list IFACE [--json] [-v] [-h]\n" },
	{ "rule bogus -h", "Usage: xdp-ratelimit rule add IFACE NAME" },
	{ "rule add --help", "Usage: xdp-ratelimit rule add IFACE NAME" },
	{ "rule add IFB r1 --rate 10 -h", "Usage: xdp-ratelimit rule add IFACE NAME" },
	{ "rule del -h", "Usage: xdp-ratelimit rule add IFACE NAME" },
	{ "rule list IFB --help", "Usage: xdp-ratelimit rule add IFACE NAME" },
};

TEST(cli_json_errors_and_help)
{
	struct env e = { .ifa = "nosuch0", .ifb = "nosuch1", .trace = "/nonexistent" };
	char *out = NULL, *err = NULL, *cmd, label[300];
	int status;

	for (size_t i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]); i++) {
		const struct json_case *c = &json_cases[i];

		snprintf(label, sizeof(label), "xdp-ratelimit %s", subst(c->args, &e));
		if (asprintf(&cmd, "%s/xdp-ratelimit %s", rl_build_dir, subst(c->args, &e)) < 0)
			break;
		status = rl_run(cmd, &out, &err);
		free(cmd);
		ASSERT_EQ(status, c->status, label);
		ASSERT_STREQ(out, c->out, label);
		ASSERT_EQ(lines(err), 1, label);
		free(out);
		free(err);
		out = err = NULL;
	}
	for (size_t i = 0; i < sizeof(help_cases) / sizeof(help_cases[0]); i++) {
		const struct help_case *c = &help_cases[i];

		snprintf(label, sizeof(label), "xdp-ratelimit %s", subst(c->args, &e));
		if (asprintf(&cmd, "%s/xdp-ratelimit %s", rl_build_dir, subst(c->args, &e)) < 0)
			break;
		status = rl_run(cmd, &out, &err);
		free(cmd);
		ASSERT_EQ(status, 0, label);
		ASSERT_CONTAINS(out, c->out, label);
		ASSERT_STREQ(err, "", label);
		free(out);
		free(err);
		out = err = NULL;
	}
}
