// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * make install and make uninstall into temporary trees; the installed systemd
 * units through systemd-analyze verify, and their Exec commands run for real on
 * a veth; the installed bash completion. Run from the source tree (tests/run.sh
 * does): the tests call make there, with BUILD pointing at the tested build.
 */
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "netns.h"
#include "test.h"

/* A fresh directory under /tmp, removed by rm_tree(). */
static bool mk_tmp(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/rl-install-XXXXXX");
	return ASSERT_TRUE(mkdtemp(dir) != NULL, "temporary directory");
}

static void rm_tree(const char *dir)
{
	if (*dir && !strncmp(dir, "/tmp/rl-install-", 16))
		rl_sh(NULL, "rm -rf '%s'", dir);
}

/* make TARGET VARS in the source tree, on the tested build. */
static bool make(const char *target, const char *vars)
{
	if (!ASSERT_OK(access("Makefile", R_OK) || access("dist", R_OK),
		       "run from the source tree"))
		return false;
	return ASSERT_OK(rl_sh(NULL, "env -u MAKEFLAGS -u MFLAGS make -s BUILD=%s %s %s >/dev/null",
			       rl_build_dir, target, vars),
			 target);
}

/* Every entry under @root with its mode, one per line, sorted. */
static char *listing(const char *root)
{
	char *out = NULL;

	if (rl_sh(&out, "cd '%s' && find . -mindepth 1 -printf '%%M %%P\\n' | LC_ALL=C sort",
		  root)) {
		free(out);
		return NULL;
	}
	return out;
}

static char *slurp_file(const char *path)
{
	char *out = NULL;

	if (rl_sh(&out, "cat '%s'", path)) {
		free(out);
		return NULL;
	}
	return out;
}

/* What make install DESTDIR=root PREFIX=/usr must make, besides examples/ (see below). */
static const char *const installed[] = {
	"drwxr-xr-x usr",
	"drwxr-xr-x usr/lib",
	"drwxr-xr-x usr/lib/systemd",
	"drwxr-xr-x usr/lib/systemd/system",
	"-rw-r--r-- usr/lib/systemd/system/xdp-ratelimit-exporter.service",
	"-rw-r--r-- usr/lib/systemd/system/xdp-ratelimit-sync@.service",
	"-rw-r--r-- usr/lib/systemd/system/xdp-ratelimit.service",
	"-rw-r--r-- usr/lib/systemd/system/xdp-ratelimit@.service",
	"drwxr-xr-x usr/sbin",
	"-rwxr-xr-x usr/sbin/keep-me", /* made by the test: uninstall must leave it */
	"-rwxr-xr-x usr/sbin/xdp-ratelimit",
	"drwxr-xr-x usr/share",
	"drwxr-xr-x usr/share/bash-completion",
	"drwxr-xr-x usr/share/bash-completion/completions",
	"-rw-r--r-- usr/share/bash-completion/completions/xdp-ratelimit",
	"drwxr-xr-x usr/share/man",
	"drwxr-xr-x usr/share/man/man8",
	"-rw-r--r-- usr/share/man/man8/xdp-ratelimit.8",
	"drwxr-xr-x usr/share/xdp-ratelimit", /* the package's own: uninstall removes it */
	"-rw-r--r-- usr/share/xdp-ratelimit/grafana-dashboard.json",
};

/* The expected listing; @after_uninstall: only the test's file and the shared directories. */
static char *expected(bool after_uninstall)
{
	size_t n = sizeof(installed) / sizeof(installed[0]);
	char *buf = NULL, *ex = NULL, *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	glob_t g = {};

	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *e = installed[i];

		if (after_uninstall && e[0] == '-' && !strstr(e, "keep-me"))
			continue;
		if (after_uninstall && !strcmp(e, "drwxr-xr-x usr/share/xdp-ratelimit"))
			continue;
		fprintf(f, "%s\n", e);
	}
	/* The example configuration files of apply. */
	if (!after_uninstall && !glob("examples/*.yaml", 0, NULL, &g) && g.gl_pathc) {
		fprintf(f, "drwxr-xr-x usr/share/doc\n");
		fprintf(f, "drwxr-xr-x usr/share/doc/xdp-ratelimit\n");
		fprintf(f, "drwxr-xr-x usr/share/doc/xdp-ratelimit/examples\n");
		for (size_t i = 0; i < g.gl_pathc; i++)
			fprintf(f, "-rw-r--r-- usr/share/doc/xdp-ratelimit/%s\n", g.gl_pathv[i]);
	} else if (after_uninstall && !glob("examples/*.yaml", 0, NULL, &g) && g.gl_pathc) {
		/* usr/share/doc was made by install; only the package's own directory goes. */
		fprintf(f, "drwxr-xr-x usr/share/doc\n");
	}
	globfree(&g);
	fclose(f);
	/* Sorted the way listing() sorts. */
	if (asprintf(&ex, "printf '%%s' '%s' | LC_ALL=C sort", buf) >= 0)
		rl_sh(&out, "%s", ex);
	free(ex);
	free(buf);
	return out;
}

TEST(install_uninstall)
{
	char tmp[64] = "", vars[256], path[512];
	char *got = NULL, *want = NULL, *unit = NULL;

	if (!mk_tmp(tmp, sizeof(tmp)))
		return;
	/* A file of someone else's in a directory install shares. */
	if (!ASSERT_OK(rl_sh(NULL, "install -D -m 0755 /dev/null %s/root/usr/sbin/keep-me", tmp),
		       "pre-existing file"))
		goto out;
	snprintf(vars, sizeof(vars), "DESTDIR=%s/root PREFIX=/usr", tmp);
	if (!make("install", vars))
		goto out;
	snprintf(path, sizeof(path), "%s/root", tmp);
	got = listing(path);
	want = expected(false);
	ASSERT_STREQ(got, want, "the installed tree");
	ASSERT_OK(rl_sh(NULL,
			"cmp %s/xdp-ratelimit %s/root/usr/sbin/xdp-ratelimit &&"
			" cmp %s/xdp-ratelimit.8 %s/root/usr/share/man/man8/xdp-ratelimit.8",
			rl_build_dir, tmp, rl_build_dir, tmp),
		  "the installed binary and man page are the built ones");

	/* The unit carries PREFIX, not DESTDIR, and no placeholder is left. */
	snprintf(path, sizeof(path), "%s/root/usr/lib/systemd/system/xdp-ratelimit@.service", tmp);
	unit = slurp_file(path);
	ASSERT_CONTAINS(unit, "\nExecStart=/usr/sbin/xdp-ratelimit attach %I ", "ExecStart");
	ASSERT_CONTAINS(unit, "\nEnvironmentFile=/etc/xdp-ratelimit/%I.env\n", "EnvironmentFile");
	ASSERT_OK(rl_sh(NULL, "! grep -l '@[A-Z]*@' %s/root/usr/lib/systemd/system/*", tmp),
		  "no @PLACEHOLDER@ left in the units");

	if (!make("uninstall", vars))
		goto out;
	free(got);
	free(want);
	snprintf(path, sizeof(path), "%s/root", tmp);
	got = listing(path);
	want = expected(true);
	ASSERT_STREQ(got, want, "after uninstall: the other file and the shared directories");

	/* SYSTEMDUNITDIR moves the units, and uninstall finds them there. */
	snprintf(vars, sizeof(vars),
		 "DESTDIR=%s/alt PREFIX=/usr SYSTEMDUNITDIR=/lib/systemd/system", tmp);
	if (!make("install", vars))
		goto out;
	ASSERT_OK(rl_sh(NULL,
			"test -f '%s/alt/lib/systemd/system/xdp-ratelimit@.service' &&"
			" ! test -e '%s/alt/usr/lib/systemd'",
			tmp, tmp),
		  "units in SYSTEMDUNITDIR");
	if (!make("uninstall", vars))
		goto out;
	ASSERT_OK(rl_sh(NULL, "test -z \"$(find '%s/alt' -not -type d)\"", tmp),
		  "uninstall from SYSTEMDUNITDIR");
out:
	free(got);
	free(want);
	free(unit);
	rm_tree(tmp);
}

/* systemd-analyze verify FILE: 0 and no warning. */
static int verify(const char *prefix, const char *unit, char **err)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "MANPATH=%s/share/man systemd-analyze verify '%s/lib/systemd/system/%s'", prefix,
		 prefix, unit);
	return rl_run(cmd, NULL, err);
}

/*
 * PID 1 is not systemd here: systemd-analyze verify checks the units as
 * files. It checks that ExecStart= is executable and that man: pages exist,
 * so the tree is installed with PREFIX a temporary directory (its paths are
 * in the units) and MANPATH pointing into it.
 */
TEST(install_units_verify)
{
	static const char *const units[] = {
		"xdp-ratelimit@.service",	  "xdp-ratelimit@eth0.service",
		"xdp-ratelimit-exporter.service", "xdp-ratelimit.service",
		"xdp-ratelimit-sync@.service",	  "xdp-ratelimit-sync@eth0.service"
	};
	char tmp[64] = "", vars[256], prefix[128];
	char *err = NULL;

	if (access("/usr/bin/systemd-analyze", X_OK)) {
		rl_test_skip("no systemd-analyze (make deps installs systemd)");
		return;
	}
	if (!mk_tmp(tmp, sizeof(tmp)))
		return;
	snprintf(prefix, sizeof(prefix), "%s/prefix", tmp);
	snprintf(vars, sizeof(vars), "PREFIX=%s", prefix);
	if (!make("install", vars))
		goto out;
	/* An instance of the template as systemctl enable would name it. */
	if (!ASSERT_OK(rl_sh(NULL,
			     "ln -s xdp-ratelimit@.service %s/lib/systemd/system/"
			     "xdp-ratelimit@eth0.service && "
			     "ln -s xdp-ratelimit-sync@.service %s/lib/systemd/system/"
			     "xdp-ratelimit-sync@eth0.service",
			     prefix, prefix),
		       "instance link"))
		goto out;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		ASSERT_EQ(verify(prefix, units[i], &err), 0, units[i]);
		ASSERT_STREQ(err, "", units[i]);
		free(err);
		err = NULL;
	}
	/* The check has teeth: a unit whose binary is missing fails it. */
	if (!ASSERT_OK(rl_sh(NULL, "rm %s/sbin/xdp-ratelimit", prefix), "remove the binary"))
		goto out;
	ASSERT_EQ(verify(prefix, "xdp-ratelimit@eth0.service", &err), 1, "missing binary");
	ASSERT_CONTAINS(err, "is not executable", "verify names the missing binary");
out:
	free(err);
	rm_tree(tmp);
}

/* The value of "Key=" in @unit, %I and %i replaced by @iface, or NULL. */
static char *unit_value(const char *unit, const char *key, const char *iface)
{
	char needle[64], *v, *p;
	const char *s, *e;
	size_t n = 0;

	snprintf(needle, sizeof(needle), "\n%s=", key);
	s = strstr(unit, needle);
	if (!s)
		return NULL;
	s += strlen(needle);
	e = strchrnul(s, '\n');
	v = malloc((size_t)(e - s) * (strlen(iface) + 1) + 1);
	if (!v)
		return NULL;
	for (p = v; s < e; s++) {
		if (s[0] == '%' && (s[1] == 'I' || s[1] == 'i')) {
			n += (size_t)sprintf(p + n, "%s", iface);
			s++;
		} else {
			p[n++] = *s;
		}
	}
	p[n] = '\0';
	return v;
}

/*
 * Run an Exec line of the unit as systemd would: its EnvironmentFile's
 * variables, $VAR split at whitespace (the shell does the same with an
 * unquoted $VAR), in the receiving namespace; paths under the staged root.
 */
static int run_exec(struct rl_ns *ns, const char *root, const char *envfile, const char *cmd,
		    char **err)
{
	char *full = NULL;
	int ret;

	if (!ASSERT_TRUE(!strncmp(cmd, "/usr/sbin/xdp-ratelimit ", 24), cmd))
		return -1;
	if (asprintf(&full, "set -a; . '%s%s'; set +a; nsenter --net=/run/netns/%s %s%s", root,
		     envfile, ns->rx, root, cmd) < 0)
		return -1;
	ret = rl_run(full, NULL, err);
	free(full);
	return ret;
}

static bool write_env(const char *root, const char *envfile, const char *opts)
{
	return ASSERT_OK(rl_sh(NULL,
			       "mkdir -p \"$(dirname '%s%s')\" && printf '%%s\\n'"
			       " '# written by test_install' 'XDP_RATELIMIT_OPTS=\"%s\"'"
			       " 'XDP_RATELIMIT_ATTACH_OPTS=\"--mode skb\"' > '%s%s'",
			       root, envfile, opts, root, envfile),
			 "write the environment file");
}

/* The unit's commands on a veth: start attaches, reload runs set, stop detaches. */
TEST_FLAGS(install_unit_commands, RL_TEST_ROOT)
{
	char tmp[64] = "", vars[256], root[128], path[512], pins[512];
	char *unit = NULL, *env = NULL, *start = NULL, *reload = NULL, *stop = NULL;
	char *out = NULL, *err = NULL;
	struct rl_ns ns = {};
	unsigned int id = 0;

	if (!mk_tmp(tmp, sizeof(tmp)))
		return;
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(vars, sizeof(vars), "DESTDIR=%s PREFIX=/usr SYSCONFDIR=/etc", root);
	if (!make("install", vars))
		goto out;
	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		goto out;
	snprintf(path, sizeof(path), "%s/usr/lib/systemd/system/xdp-ratelimit@.service", root);
	unit = slurp_file(path);
	if (!ASSERT_TRUE(unit != NULL, "read the unit"))
		goto out;
	env = unit_value(unit, "EnvironmentFile", ns.rx_if);
	start = unit_value(unit, "ExecStart", ns.rx_if);
	reload = unit_value(unit, "ExecReload", ns.rx_if);
	stop = unit_value(unit, "ExecStop", ns.rx_if);
	if (!ASSERT_TRUE(env && start && reload && stop, "the unit's Exec lines"))
		goto out;
	if (!write_env(root, env, "--rate 1000 --burst 100"))
		goto out;

	ASSERT_EQ(run_exec(&ns, root, env, start, &err), 0, start);
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id), "read the XDP program");
	ASSERT_TRUE(id != 0, "ExecStart attached a program");
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "status %s --json", ns.rx_if), 0, "status");
	ASSERT_CONTAINS(out, "\"mode\":\"skb\"", "XDP_RATELIMIT_ATTACH_OPTS applied");
	ASSERT_CONTAINS(out, "\"burst\":100,", "XDP_RATELIMIT_OPTS applied");
	free(out);
	free(err);
	out = err = NULL;

	/* systemctl reload: the file changed, set applies it (set refuses --mode). */
	if (!write_env(root, env, "--rate 2000 --burst 300"))
		goto out;
	ASSERT_EQ(run_exec(&ns, root, env, reload, &err), 0, reload);
	ASSERT_STREQ(err, "", "reload's messages");
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "status %s --json", ns.rx_if), 0, "status");
	ASSERT_CONTAINS(out, "\"burst\":300,", "ExecReload applied the new file");
	ASSERT_CONTAINS(out, "\"mode\":\"skb\"", "still in skb mode");
	free(out);
	free(err);
	out = err = NULL;

	ASSERT_EQ(run_exec(&ns, root, env, stop, &err), 0, stop);
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id), "read the XDP program");
	ASSERT_EQ(id, 0, "ExecStop detached it");
	if (ASSERT_OK(rl_ns_pin_dir(ns.rx, ns.rx_if, pins, sizeof(pins)), "pin directory"))
		ASSERT_TRUE(access(pins, F_OK) != 0, "ExecStop removed the pins");
out:
	rl_ns_destroy(&ns);
	free(out);
	free(err);
	free(unit);
	free(env);
	free(start);
	free(reload);
	free(stop);
	rm_tree(tmp);
}

/* Run one of the unit's commands (staged paths) in the receiving namespace. */
static int run_unit(struct rl_ns *ns, const char *cmd, char **err)
{
	char *full = NULL;
	int ret;

	free(*err);
	*err = NULL;
	if (asprintf(&full, "nsenter --net=/run/netns/%s %s", ns->rx, cmd) < 0)
		return -1;
	ret = rl_run(full, NULL, err);
	free(full);
	return ret;
}

/* The live generation and burst on the receiving end. */
static bool status_of(struct rl_ns *ns, unsigned long long *gen, unsigned long long *burst)
{
	char *out = NULL;
	bool ok;

	ok = ASSERT_EQ(rl_ns_cli(ns, &out, NULL, "status %s --json", ns->rx_if), 0, "status") &&
	     ASSERT_TRUE(rl_json_u64(out, "generation", gen), "the generation") &&
	     ASSERT_TRUE(rl_json_u64(out, "burst", burst), "the burst");
	free(out);
	return ok;
}

/*
 * xdp-ratelimit.service's commands on a veth, as systemd runs them (no
 * environment file; the configuration file's path is SYSCONFDIR's, here a
 * temporary one): start applies the file, reload applies its new version
 * live, stop detaches.
 */
TEST_FLAGS(install_unit_apply_commands, RL_TEST_ROOT)
{
	char tmp[64] = "", vars[256], root[128], path[512], conf[256];
	char *unit = NULL, *cmd[3] = {}, *err = NULL;
	static const char *const keys[] = { "ExecStart", "ExecReload", "ExecStop" };
	unsigned long long gen = 0, burst = 0;
	struct rl_ns ns = {};
	unsigned int id = 0;

	if (!mk_tmp(tmp, sizeof(tmp)))
		return;
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(vars, sizeof(vars), "DESTDIR=%s PREFIX=/usr SYSCONFDIR=%s/etc", root, tmp);
	if (!make("install", vars))
		goto out;
	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		goto out;
	snprintf(path, sizeof(path), "%s/usr/lib/systemd/system/xdp-ratelimit.service", root);
	unit = slurp_file(path);
	if (!ASSERT_TRUE(unit != NULL, "read the unit"))
		goto out;
	snprintf(conf, sizeof(conf), "%s/etc/xdp-ratelimit/xdp-ratelimit.yaml", tmp);
	for (int i = 0; i < 3; i++) {
		char full[1024];

		cmd[i] = unit_value(unit, keys[i], "");
		if (!ASSERT_TRUE(cmd[i] && !strncmp(cmd[i], "/usr/sbin/xdp-ratelimit apply ", 30),
				 keys[i]))
			goto out;
		snprintf(full, sizeof(full), "%s%s", root, cmd[i]);
		free(cmd[i]);
		cmd[i] = strdup(full);
		ASSERT_CONTAINS(cmd[i], conf, "the unit applies SYSCONFDIR's file");
	}
	if (!ASSERT_OK(rl_sh(NULL,
			     "mkdir -p %s/etc/xdp-ratelimit && printf 'interfaces:\n  %s:\n"
			     "    mode: skb\n    rate: 1000\n    burst: 100\n' > %s",
			     tmp, ns.rx_if, conf),
		       "write the configuration file"))
		goto out;

	/* systemctl start */
	ASSERT_EQ(run_unit(&ns, cmd[0], &err), 0, keys[0]);
	ASSERT_STREQ(err, "", "start's messages");
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id), "read the XDP program");
	ASSERT_TRUE(id != 0, "ExecStart attached a program");
	if (!status_of(&ns, &gen, &burst))
		goto out;
	ASSERT_EQ(burst, 100, "the file's burst");

	/* systemctl reload, the file unchanged: nothing changes, not the generation. */
	ASSERT_EQ(run_unit(&ns, cmd[1], &err), 0, keys[1]);
	if (!status_of(&ns, &gen, &burst))
		goto out;
	ASSERT_EQ(gen, 1, "reload of the same file: the same generation");

	/* systemctl reload after an edit: live, the next generation. */
	if (!ASSERT_OK(rl_sh(NULL, "sed -i 's/burst: 100/burst: 300/' %s", conf), "edit the file"))
		goto out;
	ASSERT_EQ(run_unit(&ns, cmd[1], &err), 0, keys[1]);
	ASSERT_STREQ(err, "", "reload's messages");
	if (!status_of(&ns, &gen, &burst))
		goto out;
	ASSERT_EQ(gen, 2, "reload set the new policy live");
	ASSERT_EQ(burst, 300, "the edited burst");

	/* systemctl stop */
	ASSERT_EQ(run_unit(&ns, cmd[2], &err), 0, keys[2]);
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id), "read the XDP program");
	ASSERT_EQ(id, 0, "ExecStop detached it");
	if (ASSERT_OK(rl_ns_pin_dir(ns.rx, ns.rx_if, path, sizeof(path)), "pin directory"))
		ASSERT_TRUE(access(path, F_OK) != 0, "ExecStop removed the pins");
out:
	rl_ns_destroy(&ns);
	free(err);
	free(unit);
	for (int i = 0; i < 3; i++)
		free(cmd[i]);
	rm_tree(tmp);
}

/*
 * The installed completion: bash sources it, COMP_WORDS/COMP_CWORD are set as
 * bash sets them at a TAB (it splits "--opt=value" at '='), and COMPREPLY is
 * what it offers. In a network namespace of its own with its own sysfs, so
 * the interfaces are exactly "lo".
 */
struct comp_case {
	const char *words; /* a bash array's contents */
	int cword;
	const char *reply; /* COMPREPLY, joined by spaces; NULL: see contains */
	const char *contains, *lacks;
};

static const struct comp_case comp_cases[] = {
	{ .words = "xdp-ratelimit ''", .cword = 1, .contains = "attach set " },
	{ .words = "xdp-ratelimit -v ''", .cword = 2, .contains = "attach set " },
	{ .words = "xdp-ratelimit --ver", .cword = 1, .reply = "--verbose --version" },
	{ .words = "xdp-ratelimit help se", .cword = 2, .reply = "set" },
	{ .words = "xdp-ratelimit attach ''", .cword = 2, .reply = "lo" },
	{ .words = "xdp-ratelimit status ''", .cword = 2, .reply = "lo" },
	{ .words = "xdp-ratelimit attach lo --al", .cword = 3, .reply = "--algo" },
	{ .words = "xdp-ratelimit attach lo --algo ''",
	  .cword = 4,
	  .reply = "token-bucket gcra fixed-window sliding-window" },
	{ .words = "xdp-ratelimit attach lo --algo =",
	  .cword = 4,
	  .reply = "token-bucket gcra fixed-window sliding-window" },
	{ .words = "xdp-ratelimit attach lo --algo = g", .cword = 5, .reply = "gcra" },
	{ .words = "xdp-ratelimit attach --mode ''", .cword = 3, .reply = "native skb" },
	{ .words = "xdp-ratelimit set lo --action d", .cword = 4, .reply = "drop dry-run" },
	{ .words = "xdp-ratelimit set lo --clock ''", .cword = 4, .reply = "precise coarse" },
	{ .words = "xdp-ratelimit set lo --on-insert-fail ''", .cword = 4, .reply = "pass drop" },
	{ .words = "xdp-ratelimit set lo --malformed ''", .cword = 4, .reply = "pass drop" },
	/* A value with nothing to offer: nothing, not the options. */
	{ .words = "xdp-ratelimit attach lo --rate ''", .cword = 4, .reply = "" },
	/* The value of a short option is not the interface. */
	{ .words = "xdp-ratelimit stats -w 1 ''", .cword = 4, .reply = "lo" },
	{ .words = "xdp-ratelimit stats lo -w ''", .cword = 4, .reply = "" },
	{ .words = "xdp-ratelimit stats lo -w 1 --c", .cword = 5, .reply = "--count" },
	/* The interface given: the command's options, and only its own. */
	{ .words = "xdp-ratelimit attach lo ''",
	  .cword = 3,
	  .contains = "--rate --burst",
	  .lacks = "--watch" },
	{ .words = "xdp-ratelimit attach lo --m",
	  .cword = 3,
	  .reply = "--malformed --mode --max-sources --max-sources6" },
	{ .words = "xdp-ratelimit set lo --m", .cword = 3, .reply = "--malformed" },
	{ .words = "xdp-ratelimit detach lo --",
	  .cword = 3,
	  .reply = "--verbose --help --version --json" },
	/* cleanup's one word is an interface (the orphans of that name); its options after --. */
	{ .words = "xdp-ratelimit cleanup ''", .cword = 2, .contains = "lo" },
	{ .words = "xdp-ratelimit cleanup --", .cword = 2, .contains = "--dry-run", .lacks = "lo" },
	{ .words = "xdp-ratelimit cleanup --", .cword = 2, .contains = "--netns" },
	{ .words = "xdp-ratelimit simulate --trace comp-", .cword = 3, .reply = "comp-trace.txt" },
	{ .words = "xdp-ratelimit simulate --rules = comp-",
	  .cword = 4,
	  .reply = "comp-trace.txt" },
	/* apply's word is a file; its own options after it. */
	{ .words = "xdp-ratelimit apply comp-", .cword = 2, .reply = "comp-trace.txt" },
	{ .words = "xdp-ratelimit apply x --pr", .cword = 3, .reply = "--prune" },
	{ .words = "xdp-ratelimit nosuch ''", .cword = 2, .reply = "" },
};

TEST_FLAGS(install_completion, RL_TEST_ROOT)
{
	char tmp[64] = "", vars[1024], file[256], cmd[2048], what[256];
	char *out = NULL, *help = NULL;

	if (!mk_tmp(tmp, sizeof(tmp)))
		return;
	snprintf(vars, sizeof(vars), "DESTDIR=%s/root PREFIX=/usr", tmp);
	if (!make("install", vars))
		goto out;
	snprintf(file, sizeof(file), "%s/root/usr/share/bash-completion/completions/xdp-ratelimit",
		 tmp);
	if (!ASSERT_OK(rl_sh(NULL, "touch %s/comp-trace.txt", tmp), "a file to complete"))
		goto out;
	for (size_t i = 0; i < sizeof(comp_cases) / sizeof(comp_cases[0]); i++) {
		const struct comp_case *c = &comp_cases[i];

		snprintf(cmd, sizeof(cmd),
			 "cd %s && unshare --net --mount sh -c 'mount -t sysfs sysfs /sys &&"
			 " bash -c \"source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _xdp_ratelimit;"
			 " printf %%s \\\"\\${COMPREPLY[*]}\\\"\"'",
			 tmp, file, c->words, c->cword);
		snprintf(what, sizeof(what), "complete [%s] word %d", c->words, c->cword);
		if (!ASSERT_EQ(rl_run(cmd, &out, NULL), 0, what))
			goto out;
		if (c->reply)
			ASSERT_STREQ(out, c->reply, what);
		if (c->contains)
			ASSERT_CONTAINS(out, c->contains, what);
		if (c->lacks)
			ASSERT_TRUE(out && !strstr(out, c->lacks), what);
		free(out);
		out = NULL;
	}

	/* Exactly the commands of --help, and help (the list is generated, not copied). */
	snprintf(cmd, sizeof(cmd),
		 "%s/xdp-ratelimit --help | sed -n '/^Commands:/,/^$/p' |"
		 " awk 'NF > 1 { printf \"%%s \", $1 } END { printf \"help\" }'",
		 rl_build_dir);
	snprintf(
		vars, sizeof(vars),
		"bash -c 'source %s; COMP_WORDS=(xdp-ratelimit \"\"); COMP_CWORD=1; _xdp_ratelimit;"
		" printf %%s \"${COMPREPLY[*]}\"'",
		file);
	if (ASSERT_EQ(rl_run(cmd, &help, NULL), 0, "--help") &&
	    ASSERT_EQ(rl_run(vars, &out, NULL), 0, "complete the command"))
		ASSERT_STREQ(out, help, "the commands offered are those of --help");
	free(out);
	out = NULL;

	/* bash-completion finds it where it is installed, and loads it on demand. */
	if (access("/usr/share/bash-completion/bash_completion", R_OK)) {
		rl_test_skip("no bash-completion (make deps installs it)");
		goto out;
	}
	snprintf(cmd, sizeof(cmd),
		 "XDG_DATA_DIRS=%s/root/usr/share bash -c '. /usr/share/bash-completion/"
		 "bash_completion; _completion_loader xdp-ratelimit; complete -p xdp-ratelimit'",
		 tmp);
	ASSERT_EQ(rl_run(cmd, &out, NULL), 0, "bash-completion loads it");
	ASSERT_STREQ(out, "complete -F _xdp_ratelimit xdp-ratelimit\n", "its registration");
out:
	free(out);
	free(help);
	rm_tree(tmp);
}
