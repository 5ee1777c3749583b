// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The pins through the CLI, as root in namespaces of their own: dotted names,
 * the same name in two namespaces, orphans of a deleted namespace and their
 * cleanup, the capability check, a lock that cannot be taken, and stats
 * --watch across a detach and an attach.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "env.h"
#include "netns.h"
#include "pins.h"
#include "test.h"

/* A namespace with one veth pair in it, both ends up. */
struct pns {
	char name[48], a[IF_NAMESIZE], b[IF_NAMESIZE];
	char nsdir[PATH_MAX]; /* its pin directory, xdp-ratelimit/netns-INODE */
	bool up;
};

/* "xdp-ratelimit ARGS" in namespace @ns (the host's if NULL), as the README says to. */
static int cli(const struct pns *ns, char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int cli(const struct pns *ns, char **out, char **err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = rl_cli_vin(ns ? ns->name : NULL, out, err, fmt, ap);
	va_end(ap);
	return ret;
}

static bool pns_create(struct pns *ns, const char *tag, const char *a, const char *b)
{
	char pin[PATH_MAX], *slash;

	memset(ns, 0, sizeof(*ns));
	snprintf(ns->name, sizeof(ns->name), "rlpin-%d-%s", getpid(), tag);
	snprintf(ns->a, sizeof(ns->a), "%s", a);
	snprintf(ns->b, sizeof(ns->b), "%s", b);
	ns->up = true;
	if (rl_sh(NULL,
		  "ip netns add %1$s && ip -n %1$s link add '%2$s' type veth peer name '%3$s'"
		  " && ip -n %1$s link set '%2$s' up && ip -n %1$s link set '%3$s' up",
		  ns->name, a, b))
		return false;
	if (rl_ns_pin_dir(ns->name, "x", pin, sizeof(pin)))
		return false;
	slash = strrchr(pin, '/');
	*slash = '\0';
	snprintf(ns->nsdir, sizeof(ns->nsdir), "%s", pin);
	return true;
}

/* Detach both ends, delete the namespace, and remove whatever pins remain of it. */
static void pns_destroy(struct pns *ns)
{
	if (!ns->up)
		return;
	cli(ns, NULL, NULL, "detach '%s' 2>/dev/null", ns->a);
	cli(ns, NULL, NULL, "detach '%s' 2>/dev/null", ns->b);
	rl_sh(NULL, "ip netns del %s 2>/dev/null", ns->name);
	if (ns->nsdir[0])
		rl_sh(NULL, "rm -rf '%s'; rmdir " RL_PIN_ROOT " 2>/dev/null; true", ns->nsdir);
	ns->up = false;
}

static bool exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* status without an interface lists eth0.100, and eth0.100 and eth0_100 coexist. */
TEST_FLAGS(pins_dotted_names, RL_TEST_ROOT)
{
	char dotted[IF_NAMESIZE], under[IF_NAMESIZE], enc[RL_PINNAME_MAX], *out = NULL;
	struct pns ns;

	snprintf(dotted, sizeof(dotted), "rl%d.1", getpid());
	snprintf(under, sizeof(under), "rl%d_1", getpid());
	if (!ASSERT_TRUE(pns_create(&ns, "dot", dotted, under), "namespace"))
		goto out;
	if (!ASSERT_EQ(cli(&ns, NULL, NULL, "attach %s --rate 100", dotted), 0, "attach dotted"))
		goto out;
	ASSERT_EQ(cli(&ns, &out, NULL, "status"), 0, "status");
	ASSERT_CONTAINS(out, dotted, "status lists the dotted name");
	rl_pin_encode(dotted, enc, sizeof(enc));
	ASSERT_TRUE(exists(ns.nsdir, enc), "pinned under the encoded name");
	free(out);
	out = NULL;
	/* Before, both were pinned as rlPID_1: the second attach was refused. */
	ASSERT_EQ(cli(&ns, NULL, NULL, "attach %s --rate 200", under), 0, "attach underscore");
	ASSERT_EQ(cli(&ns, &out, NULL, "status"), 0, "status");
	ASSERT_CONTAINS(out, dotted, "status lists the dotted name");
	ASSERT_CONTAINS(out, "200/s,", "and the other");
	ASSERT_CONTAINS(out, "100/s,", "each with its own policy");
	free(out);
	out = NULL;
	ASSERT_EQ(cli(&ns, &out, NULL, "stats %s --json", dotted), 0, "stats of the dotted one");
	ASSERT_EQ(cli(&ns, NULL, NULL, "detach %s", dotted), 0, "detach dotted");
	ASSERT_EQ(cli(&ns, NULL, NULL, "status %s", under), 0, "the other is still attached");
	ASSERT_EQ(cli(&ns, NULL, NULL, "detach %s", under), 0, "detach underscore");
	ASSERT_TRUE(access(ns.nsdir, F_OK) != 0, "no pins left in the namespace");
out:
	free(out);
	pns_destroy(&ns);
}

/* The same interface name in two namespaces: both limited, each its own. */
TEST_FLAGS(pins_same_name_two_netns, RL_TEST_ROOT)
{
	char ifa[IF_NAMESIZE], ifb[IF_NAMESIZE], *out = NULL;
	struct pns n1, n2;

	snprintf(ifa, sizeof(ifa), "rl%de", getpid());
	snprintf(ifb, sizeof(ifb), "rl%dp", getpid());
	n2.up = false;
	if (!ASSERT_TRUE(pns_create(&n1, "one", ifa, ifb), "namespace 1") ||
	    !ASSERT_TRUE(pns_create(&n2, "two", ifa, ifb), "namespace 2"))
		goto out;
	ASSERT_TRUE(strcmp(n1.nsdir, n2.nsdir) != 0, "one pin directory per namespace");
	if (!ASSERT_EQ(cli(&n1, NULL, NULL, "attach %s --rate 111", ifa), 0, "attach in 1") ||
	    !ASSERT_EQ(cli(&n2, NULL, NULL, "attach %s --rate 222", ifa), 0, "attach in 2"))
		goto out;
	ASSERT_EQ(cli(&n1, &out, NULL, "status %s", ifa), 0, "status in 1");
	ASSERT_CONTAINS(out, "111/s,", "namespace 1 sees its own");
	free(out);
	out = NULL;
	ASSERT_EQ(cli(&n2, &out, NULL, "status"), 0, "status in 2");
	ASSERT_CONTAINS(out, "222/s,", "namespace 2 sees its own");
	ASSERT_TRUE(out && !strstr(out, "111/s,"), "and not the other's");
	free(out);
	out = NULL;
	ASSERT_EQ(cli(&n1, NULL, NULL, "detach %s", ifa), 0, "detach in 1");
	ASSERT_EQ(cli(&n2, NULL, NULL, "status %s", ifa), 0, "2 still attached");
	ASSERT_TRUE(exists(n2.nsdir, ifa), "2's pins still there");
out:
	free(out);
	pns_destroy(&n1);
	pns_destroy(&n2);
}

/*
 * A namespace deleted with its limiter leaves orphans: status shows them,
 * cleanup removes them and nothing live. detach of a gone interface works.
 */
TEST_FLAGS(pins_orphans_cleanup, RL_TEST_ROOT)
{
	char ifa[IF_NAMESIZE], ifb[IF_NAMESIZE], ifc[IF_NAMESIZE], gone[PATH_MAX] = "";
	char enc[RL_PINNAME_MAX], *out = NULL, *err = NULL;
	struct pns dead, live;

	snprintf(ifa, sizeof(ifa), "rl%do.1", getpid());
	snprintf(ifb, sizeof(ifb), "rl%dq", getpid());
	snprintf(ifc, sizeof(ifc), "rl%du", getpid());
	rl_pin_encode(ifa, enc, sizeof(enc));
	live.up = false;
	if (!ASSERT_TRUE(pns_create(&dead, "dead", ifa, ifb), "namespace to delete") ||
	    !ASSERT_TRUE(pns_create(&live, "live", ifa, ifb), "namespace that stays"))
		goto out;
	if (!ASSERT_EQ(cli(&dead, NULL, NULL, "attach %s --rate 100", ifa), 0,
		       "attach, to delete") ||
	    !ASSERT_EQ(cli(&live, NULL, NULL, "attach %s --rate 100", ifa), 0, "attach, live") ||
	    !ASSERT_OK(
		    rl_sh(NULL,
			  "ip -n %s link add %s type veth peer name %sv && ip -n %s link set %s up",
			  live.name, ifc, ifc, live.name, ifc),
		    "a second pair") ||
	    !ASSERT_EQ(cli(&live, NULL, NULL, "attach %s --rate 100", ifc), 0, "attach, to unplug"))
		goto out;
	rl_ns_pin_dir(dead.name, ifa, gone, sizeof(gone));
	/* A map another version names: the orphan goes all the same. */
	ASSERT_OK(rl_sh(NULL,
			"bpftool map create %s/rl_other_version type array key 4 value 4 "
			"entries 1 name rl_other",
			gone),
		  "a pin of another version");
	rl_sh(NULL, "ip netns del %s", dead.name);
	/* The namespace goes away asynchronously, with its interfaces and programs. */
	for (int i = 0; i < 100; i++) {
		free(out);
		out = NULL;
		cli(NULL, &out, NULL, "status");
		if (out && strstr(out, gone))
			break;
		usleep(50000);
	}
	ASSERT_CONTAINS(out, "orphaned pins", "status shows the orphans");
	ASSERT_CONTAINS(out, gone, "status names the orphan's directory");
	ASSERT_CONTAINS(out, ifa, "and its interface name, as it was");
	free(out);
	out = NULL;
	ASSERT_EQ(cli(NULL, &out, NULL, "status --json"), 0, "status --json");
	ASSERT_CONTAINS(out, "\"state\":\"orphaned\"", "JSON marks it orphaned");
	free(out);
	out = NULL;
	/* detach of an interface removed from a live namespace: its pins go. */
	ASSERT_EQ(rl_sh(NULL, "ip -n %s link del %s", live.name, ifc), 0, "remove the interface");
	ASSERT_EQ(cli(&live, &out, &err, "detach %s", ifc), 0, "detach of a gone interface");
	ASSERT_CONTAINS(out, "no longer exists", "says so");
	ASSERT_TRUE(!exists(live.nsdir, ifc), "its pins are gone");
	free(out);
	free(err);
	out = err = NULL;
	/*
	 * An interface removed and made again under its name, not detached in
	 * between: the old pins are nobody's, although the sweep's timer keeps
	 * a program on their maps.
	 */
	ASSERT_OK(rl_sh(NULL,
			"ip -n %s link add %s type veth peer name %sv && ip -n %s link set %s up",
			live.name, ifc, ifc, live.name, ifc),
		  "the pair again");
	ASSERT_EQ(cli(&live, NULL, NULL, "attach %s --rate 100", ifc), 0, "attach");
	ASSERT_OK(rl_sh(NULL,
			"ip -n %s link del %s && ip -n %s link add %s type veth peer name "
			"%sv && ip -n %s link set %s up",
			live.name, ifc, live.name, ifc, ifc, live.name, ifc),
		  "removed and made again");
	ASSERT_EQ(cli(&live, NULL, &err, "attach %s --rate 100", ifc), 0,
		  "attach to the new interface of that name");
	ASSERT_EQ(cli(&live, NULL, NULL, "detach %s", ifc), 0, "detach");
	free(err);
	err = NULL;
	ASSERT_EQ(cli(NULL, &out, &err, "cleanup"), 0, "cleanup");
	ASSERT_CONTAINS(out, gone, "cleanup says what it removed");
	ASSERT_TRUE(access(gone, F_OK) != 0, "the orphan is gone");
	ASSERT_TRUE(exists(live.nsdir, enc), "the live limiter's pins stay");
	ASSERT_EQ(cli(&live, NULL, NULL, "status %s", ifa), 0, "and it is still attached");
	free(out);
	out = NULL;
	ASSERT_EQ(cli(NULL, &out, NULL, "status"), 0, "status");
	ASSERT_TRUE(out && !strstr(out, gone), "no longer listed");
	free(out);
	out = NULL;
	ASSERT_EQ(cli(NULL, &out, NULL, "cleanup --json"), 0, "cleanup --json");
	ASSERT_CONTAINS(out, "{\"removed\":[", "JSON");
	ASSERT_TRUE(out && !strstr(out, gone), "nothing of ours left to remove");
out:
	free(out);
	free(err);
	if (gone[0] && dead.up)
		rl_sh(NULL, "rm -rf '%s'", gone);
	pns_destroy(&dead);
	pns_destroy(&live);
}

/* The inode of the namespace a pin directory .../netns-INODE is in. */
static unsigned long long nsdir_ino(const char *nsdir)
{
	const char *p = strrchr(nsdir, '-');

	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/*
 * cleanup --dry-run lists and removes nothing; cleanup IFACE and --netns NS
 * remove only their target's orphans. Two namespaces of the test's own, the
 * same interface name in each, both deleted with their limiters attached.
 * Every cleanup here is targeted: other runs' orphans are not ours to touch.
 */
TEST_FLAGS(pins_cleanup_dry_run_and_target, RL_TEST_ROOT)
{
	char ifa[IF_NAMESIZE], ifb[IF_NAMESIZE], gone1[PATH_MAX] = "", gone2[PATH_MAX] = "";
	char *out = NULL, *err = NULL, want[PATH_MAX + 64];
	unsigned long long ino1, ino2;
	struct pns n1, n2;

	snprintf(ifa, sizeof(ifa), "rl%dk", getpid());
	snprintf(ifb, sizeof(ifb), "rl%dl", getpid());
	n2.up = false;
	if (!ASSERT_TRUE(pns_create(&n1, "cl1", ifa, ifb), "namespace 1") ||
	    !ASSERT_TRUE(pns_create(&n2, "cl2", ifa, ifb), "namespace 2"))
		goto out;
	if (!ASSERT_EQ(cli(&n1, NULL, NULL, "attach %s --rate 100", ifa), 0, "attach in 1") ||
	    !ASSERT_EQ(cli(&n2, NULL, NULL, "attach %s --rate 100", ifa), 0, "attach in 2"))
		goto out;
	ino1 = nsdir_ino(n1.nsdir);
	ino2 = nsdir_ino(n2.nsdir);
	rl_ns_pin_dir(n1.name, ifa, gone1, sizeof(gone1));
	rl_ns_pin_dir(n2.name, ifa, gone2, sizeof(gone2));
	/* A target that cannot be found: refused before anything, nothing removed. */
	ASSERT_EQ(cli(NULL, &out, &err, "cleanup %s --netns rlnosuch-%d", ifa, getpid()), 2,
		  "cleanup --netns of no namespace");
	ASSERT_CONTAINS(err, "--netns: no network namespace 'rlnosuch-", "names the option");
	free(out);
	free(err);
	out = err = NULL;
	/* A live namespace is no orphan: by its name, nothing to remove. */
	ASSERT_EQ(cli(NULL, &out, NULL, "cleanup %s --netns %s", ifa, n1.name), 0,
		  "cleanup of a live namespace's");
	snprintf(want, sizeof(want), "no orphaned pins for %s in network namespace %llu\n", ifa,
		 ino1);
	ASSERT_STREQ(out, want, "nothing of a live limiter");
	ASSERT_TRUE(exists(n1.nsdir, ifa), "its pins stay");
	free(out);
	out = NULL;

	rl_sh(NULL, "ip netns del %s && ip netns del %s", n1.name, n2.name);
	/* The namespaces go away asynchronously, with their interfaces and programs. */
	for (int i = 0; i < 100; i++) {
		free(out);
		out = NULL;
		cli(NULL, &out, NULL, "cleanup %s --dry-run", ifa);
		if (out && strstr(out, gone1) && strstr(out, gone2))
			break;
		usleep(50000);
	}
	snprintf(want, sizeof(want), "would remove %s (was %s, ", gone1, ifa);
	ASSERT_CONTAINS(out, want, "--dry-run lists the first");
	snprintf(want, sizeof(want), "would remove %s (was %s, ", gone2, ifa);
	ASSERT_CONTAINS(out, want, "and the second");
	ASSERT_TRUE(!access(gone1, F_OK) && !access(gone2, F_OK), "--dry-run removed nothing");
	free(out);
	out = NULL;
	ASSERT_EQ(cli(NULL, &out, NULL, "cleanup %s --dry-run --json", ifa), 0, "--dry-run --json");
	ASSERT_CONTAINS(out, "{\"would_remove\":[", "JSON: would_remove");
	ASSERT_CONTAINS(out, gone1, "the first");
	ASSERT_CONTAINS(out, gone2, "the second");
	ASSERT_TRUE(!access(gone1, F_OK) && !access(gone2, F_OK), "still removed nothing");
	free(out);
	out = NULL;

	/* By namespace (its inode, the namespace gone): only the first. */
	ASSERT_EQ(cli(NULL, &out, NULL, "cleanup --netns %llu", ino1), 0, "cleanup --netns");
	snprintf(want, sizeof(want), "removed %s (was %s, ", gone1, ifa);
	ASSERT_CONTAINS(out, want, "removes the first");
	ASSERT_TRUE(out && !strstr(out, gone2), "and says nothing of the second");
	ASSERT_TRUE(access(gone1, F_OK) != 0, "the first is gone");
	ASSERT_TRUE(!access(gone2, F_OK), "the second stays");
	free(out);
	out = NULL;
	/* Another interface name in the second's namespace: nothing. */
	ASSERT_EQ(cli(NULL, &out, NULL, "cleanup %s --netns %llu", ifb, ino2), 0,
		  "cleanup of another name");
	ASSERT_TRUE(!access(gone2, F_OK), "the second stays");
	free(out);
	out = NULL;
	ASSERT_EQ(cli(NULL, &out, NULL, "cleanup %s --netns %llu --json", ifa, ino2), 0,
		  "cleanup IFACE --netns --json");
	ASSERT_CONTAINS(out, "{\"removed\":[{\"iface\":", "JSON: removed");
	ASSERT_CONTAINS(out, gone2, "the second");
	ASSERT_TRUE(access(gone2, F_OK) != 0, "the second is gone");
out:
	free(out);
	free(err);
	if (gone1[0] && n1.up)
		rl_sh(NULL, "rm -rf '%s'", gone1);
	if (gone2[0] && n2.up)
		rl_sh(NULL, "rm -rf '%s'", gone2);
	pns_destroy(&n1);
	pns_destroy(&n2);
}

/* A namespace by inode, path or name; anything else is named in the message. */
TEST(pins_netns_resolve)
{
	char err[256];
	__u64 ino = 0;

	if (ASSERT_OK(rl_netns_resolve("/proc/self/ns/net", &ino, err, sizeof(err)), err))
		ASSERT_EQ(ino, rl_netns_ino(), "a path: this namespace");
	if (ASSERT_OK(rl_netns_resolve("4026531840", &ino, err, sizeof(err)), err))
		ASSERT_EQ(ino, 4026531840ULL, "a number is the inode");
	ASSERT_EQ(rl_netns_resolve("/etc/hostname", &ino, err, sizeof(err)), -ENOENT,
		  "not a namespace file");
	ASSERT_CONTAINS(err, "no network namespace '/etc/hostname'", "named");
	ASSERT_EQ(rl_netns_resolve("rl-no-such-ns", &ino, err, sizeof(err)), -ENOENT,
		  "no such ip netns name");
	ASSERT_EQ(rl_netns_resolve("0", &ino, err, sizeof(err)), -EINVAL, "inode 0");
}

/*
 * The capabilities, not the uid: each missing one is named (by detach, which
 * needs all three; status, which only reads, needs no CAP_NET_ADMIN: see
 * tests/test_units.c).
 */
TEST_FLAGS(pins_capabilities, RL_TEST_ROOT)
{
	static const char *const caps[] = { "bpf", "net_admin", "sys_admin" };
	char *err = NULL, want[32];

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		int st;

		st = rl_sh(NULL,
			   "setpriv --inh-caps=-%s --bounding-set=-%s %s/xdp-ratelimit detach"
			   " rlnosuch0 >/dev/null 2>/tmp/rlpin-%d.err",
			   caps[i], caps[i], rl_build_dir, getpid());
		rl_sh(&err, "cat /tmp/rlpin-%d.err", getpid());
		snprintf(want, sizeof(want), "CAP_%s", caps[i]);
		for (char *p = want; *p; p++)
			*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
		ASSERT_EQ(st, 1, want);
		ASSERT_CONTAINS(err, want, "the message names the missing capability");
		free(err);
		err = NULL;
	}
	/* Not root, with what it needs as ambient capabilities: it works. */
	ASSERT_EQ(rl_sh(NULL,
			"setpriv --reuid=nobody --regid=nogroup --clear-groups"
			" --inh-caps=+bpf,+net_admin,+sys_admin,+dac_override"
			" --ambient-caps=+bpf,+net_admin,+sys_admin,+dac_override"
			" %s/xdp-ratelimit status >/dev/null",
			rl_build_dir),
		  0, "non-root with the capabilities: status works");
	ASSERT_EQ(
		rl_sh(NULL,
		      "setpriv --reuid=nobody --regid=nogroup --clear-groups"
		      " --inh-caps=+bpf,+net_admin,+sys_admin --ambient-caps=+bpf,+net_admin,+sys_admin"
		      " %s/xdp-ratelimit status 2>/tmp/rlpin-%d.err >/dev/null",
		      rl_build_dir, getpid()),
		1, "non-root without CAP_DAC_OVERRIDE");
	rl_sh(&err, "cat /tmp/rlpin-%d.err; rm -f /tmp/rlpin-%d.err", getpid(), getpid());
	ASSERT_CONTAINS(err, "CAP_DAC_OVERRIDE", "names it: the pins are root's");
	free(err);
}

/* A lock that cannot be taken stops attach, naming the file and the cause. */
TEST_FLAGS(pins_lock_failure, RL_TEST_ROOT)
{
	char ifa[IF_NAMESIZE], ifb[IF_NAMESIZE], *err = NULL, *cmd;
	struct pns ns;

	snprintf(ifa, sizeof(ifa), "rl%dl", getpid());
	snprintf(ifb, sizeof(ifb), "rl%dm", getpid());
	if (!ASSERT_TRUE(pns_create(&ns, "lock", ifa, ifb), "namespace"))
		goto out;
	/* A private /run where the lock file is a directory: only this command sees it. */
	if (asprintf(&cmd,
		     "nsenter --net=/run/netns/%s unshare -m --propagation private sh -c"
		     " 'mount -t tmpfs rlpin /run && mkdir /run/xdp-ratelimit.lock &&"
		     " exec %s/xdp-ratelimit attach %s --rate 10'",
		     ns.name, rl_build_dir, ifa) < 0)
		goto out;
	ASSERT_EQ(rl_run(cmd, NULL, &err), 1, "attach fails");
	free(cmd);
	ASSERT_CONTAINS(err, "/run/xdp-ratelimit.lock", "names the lock file");
	ASSERT_CONTAINS(err, "Is a directory", "and the cause");
	ASSERT_TRUE(cli(&ns, NULL, NULL, "status %s 2>/dev/null", ifa) != 0, "nothing attached");
out:
	free(err);
	pns_destroy(&ns);
}

/* stats --watch 0.2: a line every fifth of a second, rates per second still. */
TEST_FLAGS(pins_stats_watch_fraction, RL_TEST_ROOT)
{
	char *out = NULL, *line, *save;
	int lines = 0;
	double t0, dt;
	struct rl_ns ns;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		return;
	if (!ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "attach %s --rate 100000", ns.rx_if), 0,
		       "attach"))
		goto out;
	t0 = rl_now();
	if (!ASSERT_EQ(
		    rl_ns_cli(&ns, &out, NULL, "stats %s --json --watch 0.2 --count 5", ns.rx_if),
		    0, "stats --watch 0.2 --count 5"))
		goto out;
	dt = rl_now() - t0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		lines += strstr(line, "\"rx_packets_per_s\"") != NULL;
	ASSERT_EQ(lines, 5, "five lines");
	ASSERT_TRUE(dt >= 1.0 && dt < 4.0, "five intervals of 0.2 s: about a second");
out:
	free(out);
	rl_ns_destroy(&ns);
}

/* stats --watch follows a detach and a new attach, and shows the new maps' rates. */
TEST_FLAGS(pins_stats_watch_reattach, RL_TEST_ROOT)
{
	struct rl_flow f = { .src = "198.18.0.9", .count = 3000, .gap = "200us", .limit_s = 10 };
	char file[64], *out = NULL, *line, *save;
	long watcher = 0;
	unsigned long long v, after = 0;
	bool reattached = false, bogus = false;
	struct rl_ns ns;

	snprintf(file, sizeof(file), "/tmp/rlt-%d-watch.out", getpid());
	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		return;
	if (!ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "attach %s --rate 100000", ns.rx_if), 0,
		       "attach"))
		goto out;
	/* In the background, bounded; its output to a file. */
	if (!ASSERT_EQ(rl_sh(&out,
			     "timeout 20 nsenter --net=/run/netns/%s %s/xdp-ratelimit stats %s"
			     " --json --watch 1 --count 6 >%s 2>&1 </dev/null & echo $!",
			     ns.rx, rl_build_dir, ns.rx_if, file),
		       0, "stats --watch"))
		goto out;
	watcher = out ? strtol(out, NULL, 10) : 0;
	free(out);
	out = NULL;
	usleep(1500000);
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "detach %s", ns.rx_if), 0, "detach");
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "attach %s --rate 100000", ns.rx_if), 0,
		  "attach again");
	usleep(1200000);
	if (ASSERT_OK(rl_flow_start(&ns, &f), "flow"))
		rl_flow_wait(&f);
	/* The watch ends by itself after 6 lines (about 6 s from its start). */
	for (int i = 0; i < 100 && rl_sh(NULL, "test $(wc -l < %s) -ge 7", file); i++)
		usleep(100000);
	rl_sh(&out, "cat %s", file);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "\"event\":\"reattached\""))
			reattached = true;
		if (!rl_json_u64(line, "rx_packets_per_s", &v))
			continue;
		bogus |= v > 1000000000ULL; /* a negative difference, as unsigned */
		if (reattached)
			after += v;
	}
	ASSERT_TRUE(reattached, "the watch says the limiter was re-attached");
	ASSERT_TRUE(after > 0, "and shows the new maps' traffic");
	ASSERT_TRUE(!bogus, "no bogus rate across the two attachments");
out:
	free(out);
	if (watcher > 0)
		kill((pid_t)watcher,
		     SIGTERM); /* timeout(1) passes it on; gone already if it ended */
	unlink(file);
	rl_ns_destroy(&ns);
}
