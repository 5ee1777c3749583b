// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Every shipped systemd unit (the .service.in files of dist/) run with exactly the
 * privileges it grants. PID 1 is not systemd here, so the test does what
 * systemd would: it reads the unit itself (not a copy of it) for its
 * CapabilityBoundingSet, AmbientCapabilities, User, NoNewPrivileges,
 * EnvironmentFile and Exec lines, and runs each Exec line under setpriv(1)
 * with that bounding set and those capabilities, in the receiving namespace
 * of a veth pair it makes. Then it checks that the command did what the
 * unit is for:
 *	xdp-ratelimit@.service		start attaches, reload sets, stop detaches
 *	xdp-ratelimit.service		start applies a small file, reload applies it
 *					again, stop detaches
 *	xdp-ratelimit-sync@.service	sync syncs with a redis-server of the test's
 *	xdp-ratelimit-exporter.service	the exporter answers a scrape on loopback
 * A unit found in dist/ with no case here fails the test: a new unit must
 * come with one. The limiters the agent and the exporter need are attached
 * first as full root.
 */
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "metrics.h"
#include "netns.h"
#include "redis_srv.h"
#include "test.h"

/* One unit as read from its file, placeholders replaced. */
struct unit {
	char *text;
	char *caps; /* setpriv's --bounding-set: "-all,+bpf,+sys_admin" */
	char *ambient; /* setpriv's --ambient-caps, or NULL */
	char *user; /* User=, or NULL: root */
	bool nnp; /* NoNewPrivileges=yes */
	char *envfile; /* EnvironmentFile= without its '-', or NULL */
};

/* A server-like command started in the background: its pid and the file of its stderr. */
struct bg {
	pid_t pid;
	char log[64];
};

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r"), *m;
	int c;

	if (!f)
		return NULL;
	m = open_memstream(&buf, &len);
	if (!m) {
		fclose(f);
		return NULL;
	}
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* @s with @from replaced by @to everywhere (malloc'd); @s is freed. */
static char *replace(char *s, const char *from, const char *to)
{
	char *buf = NULL, *p = s, *q;
	size_t len = 0;
	FILE *m;

	if (!s)
		return NULL;
	m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	while ((q = strstr(p, from))) {
		fwrite(p, 1, (size_t)(q - p), m);
		fputs(to, m);
		p = q + strlen(from);
	}
	fputs(p, m);
	fclose(m);
	free(s);
	return buf;
}

/*
 * Every value of "Key=" in the [Service] section, joined by spaces (systemd
 * merges repeated capability lines the same way), or NULL if none.
 */
static char *service_value(const char *text, const char *key)
{
	const char *svc = strstr(text, "\n[Service]\n"), *p;
	size_t kl = strlen(key);
	char *buf = NULL;
	size_t len = 0;
	bool any = false;
	FILE *m;

	if (!svc)
		return NULL;
	m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	for (p = svc + 1; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t n = strcspn(p, "\n");

		if (p != svc + 1 && *p == '[')
			break;
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			fprintf(m, "%s%.*s", any ? " " : "", (int)(n - kl - 1), p + kl + 1);
			any = true;
		}
	}
	fclose(m);
	if (!any) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* "CAP_BPF CAP_SYS_ADMIN" as setpriv takes it: "+bpf,+sys_admin"; NULL on a bad name. */
static char *setpriv_caps(const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL, *buf = NULL;
	size_t len = 0;
	bool ok = true, first = true;
	FILE *m;

	if (!copy)
		return NULL;
	m = open_memstream(&buf, &len);
	if (!m) {
		free(copy);
		return NULL;
	}
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		/* "~CAP_X" (all but) would need the complement: none of ours uses it. */
		if (strncmp(tok, "CAP_", 4)) {
			ok = false;
			break;
		}
		fputs(first ? "+" : ",+", m);
		first = false;
		for (const char *c = tok + 4; *c; c++)
			fputc(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c, m);
	}
	fclose(m);
	free(copy);
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void unit_free(struct unit *u)
{
	free(u->text);
	free(u->caps);
	free(u->ambient);
	free(u->user);
	free(u->envfile);
	memset(u, 0, sizeof(*u));
}

/* Read dist/@name: @SBINDIR@ the tested build, @SYSCONFDIR@ @etc, %I and %i @iface. */
static bool unit_read(struct unit *u, const char *path, const char *etc, const char *iface)
{
	char *bnd = NULL, *amb = NULL, *v;

	memset(u, 0, sizeof(*u));
	u->text = slurp(path);
	u->text = replace(u->text, "@SBINDIR@", rl_build_dir);
	u->text = replace(u->text, "@SYSCONFDIR@", etc);
	u->text = replace(u->text, "%I", iface);
	u->text = replace(u->text, "%i", iface);
	if (!ASSERT_TRUE(u->text != NULL, path))
		return false;
	for (const char *p = strchr(u->text, '@'); p; p = strchr(p + 1, '@')) {
		size_t n = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");

		if (!ASSERT_TRUE(!n || p[n + 1] != '@', "no @PLACEHOLDER@ the test does not know"))
			return false;
	}
	bnd = service_value(u->text, "CapabilityBoundingSet");
	/* Least privilege: every unit says what it may have. */
	if (!ASSERT_TRUE(bnd != NULL, "the unit has a CapabilityBoundingSet"))
		return false;
	v = setpriv_caps(bnd);
	free(bnd);
	if (!ASSERT_TRUE(v != NULL, "CapabilityBoundingSet: CAP_ names"))
		return false;
	if (asprintf(&u->caps, "-all%s%s", *v ? "," : "", v) < 0)
		u->caps = NULL;
	free(v);
	amb = service_value(u->text, "AmbientCapabilities");
	if (amb) {
		u->ambient = setpriv_caps(amb);
		free(amb);
		if (!ASSERT_TRUE(u->ambient != NULL, "AmbientCapabilities: CAP_ names"))
			return false;
	}
	u->user = service_value(u->text, "User");
	v = service_value(u->text, "NoNewPrivileges");
	u->nnp = v && !strcmp(v, "yes");
	free(v);
	v = service_value(u->text, "EnvironmentFile");
	if (v) {
		u->envfile = strdup(v + (*v == '-'));
		free(v);
	}
	return ASSERT_TRUE(u->caps != NULL, "the capability set");
}

/*
 * The shell command that runs @exec as systemd would run it for @u: the
 * environment file's variables ($VAR then split at whitespace, as systemd
 * splits an unquoted $VAR), in the receiving namespace, with the unit's
 * bounding set and no other capability than what that leaves root (and the
 * ambient ones), as the unit's user. Kernels since 5.11 charge BPF memory to
 * the memory cgroup, so LimitMEMLOCK is not reproduced.
 */
static char *unit_cmd(const struct unit *u, struct rl_ns *ns, const char *exec)
{
	char *cmd = NULL, user[160] = "", amb[256] = "";

	if (u->user)
		snprintf(user, sizeof(user), " --reuid=%s --regid=%s --init-groups", u->user,
			 u->user);
	if (u->ambient)
		snprintf(amb, sizeof(amb), ",%s --ambient-caps=%s", u->ambient, u->ambient);
	if (asprintf(&cmd,
		     "%s%s%s exec nsenter --net=/run/netns/%s setpriv --bounding-set=%s"
		     " --inh-caps=-all%s%s%s -- %s",
		     u->envfile ? "set -a; . '" : "", u->envfile ? u->envfile : "",
		     u->envfile ? "'; set +a;" : "", ns->rx, u->caps, amb, user,
		     u->nnp ? " --no-new-privs" : "", exec) < 0)
		return NULL;
	return cmd;
}

/* Run the unit's @key line to its end: its exit status; its stderr in *@err. */
static int unit_run(const struct unit *u, struct rl_ns *ns, const char *key, char **err)
{
	char *exec = service_value(u->text, key), *cmd;
	int ret;

	free(*err);
	*err = NULL;
	if (!ASSERT_TRUE(exec != NULL, key))
		return -1;
	if (!ASSERT_TRUE(!strncmp(exec, rl_build_dir, strlen(rl_build_dir)),
			 "runs the installed binary"))
		return -1;
	cmd = unit_cmd(u, ns, exec);
	free(exec);
	if (!cmd)
		return -1;
	ret = rl_run(cmd, NULL, err);
	if (ret)
		fprintf(stderr, "    %s: exit %d: %s\n", key, ret, *err ? *err : "");
	free(cmd);
	return ret;
}

/* Start the unit's ExecStart in the background, its stderr into b->log. */
static bool unit_start(const struct unit *u, struct rl_ns *ns, struct bg *b)
{
	char *exec = service_value(u->text, "ExecStart"), *cmd = NULL, *full = NULL;

	memset(b, 0, sizeof(*b));
	snprintf(b->log, sizeof(b->log), "/tmp/rlt-%d-unit-XXXXXX", (int)getpid());
	if (!ASSERT_TRUE(exec != NULL, "ExecStart") || !ASSERT_TRUE(mkstemp(b->log) >= 0, "log"))
		goto fail;
	cmd = unit_cmd(u, ns, exec);
	if (!cmd || asprintf(&full, "%s 2>%s </dev/null >/dev/null", cmd, b->log) < 0)
		goto fail;
	b->pid = fork();
	if (b->pid == 0) {
		/* Never outlives the runner. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", full, (char *)NULL);
		_exit(127);
	}
	free(exec);
	free(cmd);
	free(full);
	return ASSERT_TRUE(b->pid > 0, "fork");
fail:
	free(exec);
	free(cmd);
	free(full);
	return false;
}

/* Stop it with @sig (SIGKILL after 5 s): its exit status, or -1. */
static int bg_stop(struct bg *b, int sig)
{
	int st = 0;

	if (rl_proc_stop(&b->pid, sig, 5000, &st))
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void bg_cleanup(struct bg *b)
{
	bg_stop(b, SIGTERM);
	if (b->log[0])
		unlink(b->log);
	b->log[0] = '\0';
}

/* Wait (at most 5 s) for @what in its log, or for its end; the log so far in *@log. */
static bool bg_wait_for(struct bg *b, const char *what, char **log)
{
	for (int i = 0; i < 500; i++) {
		int st;

		free(*log);
		*log = slurp(b->log);
		if (*log && strstr(*log, what))
			return true;
		if (b->pid > 0 && waitpid(b->pid, &st, WNOHANG) == b->pid) {
			b->pid = 0;
			free(*log);
			*log = slurp(b->log);
			break;
		}
		usleep(10000);
	}
	fprintf(stderr, "    never said '%s': %s\n", what, *log ? *log : "(no output)");
	return false;
}

static bool write_file(const char *path, const char *text)
{
	FILE *f;

	if (rl_sh(NULL, "mkdir -p \"$(dirname '%s')\"", path))
		return false;
	f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	return !fclose(f);
}

static bool attached(struct rl_ns *ns)
{
	unsigned int id = 0;

	return !rl_ns_xdp_prog_id(ns, &id) && id != 0;
}

static bool burst_is(struct rl_ns *ns, const char *want)
{
	char *out = NULL;
	bool ok = !rl_ns_cli(ns, &out, NULL, "status %s --json", ns->rx_if) && out &&
		  strstr(out, want);

	free(out);
	return ok;
}

/* xdp-ratelimit@IFACE: attach, set, detach. */
static void case_iface(const struct unit *u, struct rl_ns *ns)
{
	char *err = NULL, env[512];

	snprintf(env, sizeof(env),
		 "XDP_RATELIMIT_OPTS=\"--rate 1000 --burst 100\"\n"
		 "XDP_RATELIMIT_ATTACH_OPTS=\"--mode skb\"\n");
	if (!ASSERT_TRUE(u->envfile && write_file(u->envfile, env), "the environment file"))
		return;
	if (ASSERT_EQ(unit_run(u, ns, "ExecStart", &err), 0, "ExecStart (attach)"))
		ASSERT_TRUE(attached(ns), "ExecStart attached the limiter");
	snprintf(env, sizeof(env), "XDP_RATELIMIT_OPTS=\"--rate 1000 --burst 300\"\n");
	if (write_file(u->envfile, env) &&
	    ASSERT_EQ(unit_run(u, ns, "ExecReload", &err), 0, "ExecReload (set)"))
		ASSERT_TRUE(burst_is(ns, "\"burst\":300,"), "ExecReload set the new burst");
	if (ASSERT_EQ(unit_run(u, ns, "ExecStop", &err), 0, "ExecStop (detach)"))
		ASSERT_TRUE(!attached(ns), "ExecStop detached it");
	free(err);
}

/* xdp-ratelimit.service: apply, apply again after an edit, apply --detach. */
static void case_apply(const struct unit *u, struct rl_ns *ns, const char *etc)
{
	char path[256], text[256], *err = NULL;

	snprintf(path, sizeof(path), "%s/xdp-ratelimit/xdp-ratelimit.yaml", etc);
	snprintf(text, sizeof(text),
		 "interfaces:\n  %s:\n    mode: skb\n    rate: 1000\n"
		 "    burst: 100\n",
		 ns->rx_if);
	if (!ASSERT_TRUE(write_file(path, text), "the configuration file"))
		return;
	if (ASSERT_EQ(unit_run(u, ns, "ExecStart", &err), 0, "ExecStart (apply)"))
		ASSERT_TRUE(attached(ns) && burst_is(ns, "\"burst\":100,"),
			    "ExecStart applied the file");
	snprintf(text, sizeof(text),
		 "interfaces:\n  %s:\n    mode: skb\n    rate: 1000\n"
		 "    burst: 300\n",
		 ns->rx_if);
	if (write_file(path, text) &&
	    ASSERT_EQ(unit_run(u, ns, "ExecReload", &err), 0, "ExecReload (apply)"))
		ASSERT_TRUE(burst_is(ns, "\"burst\":300,"), "ExecReload applied the edit");
	if (ASSERT_EQ(unit_run(u, ns, "ExecStop", &err), 0, "ExecStop (apply --detach)"))
		ASSERT_TRUE(!attached(ns), "ExecStop detached it");
	free(err);
}

/* xdp-ratelimit-sync@IFACE: the agent syncs through Redis, and SIGTERM stops it. */
static void case_sync(const struct unit *u, struct rl_ns *ns)
{
	struct redis_srv s = {};
	struct bg b = {};
	char env[512], args[128], *log = NULL, *out = NULL;
	bool synced = false;

	if (!redis_srv_available()) {
		rl_test_skip("no redis-server (make deps installs it)");
		return;
	}
	snprintf(args, sizeof(args), "attach %s --rate 1000 --mode skb", ns->rx_if);
	if (!rl_ns_cli_ok(ns, "attach as root", args) ||
	    !ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	snprintf(
		env, sizeof(env),
		"XDP_RATELIMIT_SYNC_OPTS=\"--redis %s --group units --node n1 --interval 100ms\"\n",
		s.url);
	if (!ASSERT_TRUE(u->envfile && write_file(u->envfile, env), "the environment file") ||
	    !unit_start(u, ns, &b))
		goto out;
	if (!ASSERT_TRUE(bg_wait_for(&b, "node(s) live", &log), "sync started"))
		goto out;
	for (int i = 0; i < 50 && !synced; i++) {
		free(out);
		out = NULL;
		synced = !rl_ns_cli(ns, &out, NULL, "stats %s --json", ns->rx_if) && out &&
			 strstr(out, "\"state\":\"connected\"") &&
			 !strstr(out, "\"syncs_total\":0,");
		if (!synced)
			usleep(100000);
	}
	ASSERT_TRUE(synced, "stats: connected, round trips made");
	ASSERT_EQ(bg_stop(&b, SIGTERM), 0, "SIGTERM stops it cleanly");
out:
	free(log);
	free(out);
	bg_cleanup(&b);
	redis_srv_stop(&s);
}

/* The scrape errors of a scrape as root, every capability held: -1 if it fails. */
static int root_errors(void)
{
	const char *p;
	size_t len;
	char *out;
	int n = -1;

	if (rl_metrics_render(&out, &len))
		return -1;
	p = strstr(out, "\nxdp_ratelimit_scrape_errors ");
	if (p)
		n = atoi(p + strlen("\nxdp_ratelimit_scrape_errors "));
	free(out);
	return n;
}

/* xdp-ratelimit-exporter: a scrape on loopback shows the limiter. */

static void case_exporter(const struct unit *u, struct rl_ns *ns)
{
	char args[128], *log = NULL, *body = NULL, want[64];
	const char *p;
	struct bg b = {};
	int port = 0;

	snprintf(args, sizeof(args), "attach %s --rate 1000 --mode skb", ns->rx_if);
	if (!rl_ns_cli_ok(ns, "attach as root", args))
		return;
	/* The file is optional (EnvironmentFile=-): the test's says where to listen. */
	if (!ASSERT_TRUE(u->envfile && write_file(u->envfile, "XDP_RATELIMIT_EXPORTER_OPTS="
							      "\"--listen 127.0.0.1:0\"\n"),
			 "the environment file") ||
	    !unit_start(u, ns, &b))
		goto out;
	if (!ASSERT_TRUE(bg_wait_for(&b, "listening on http://127.0.0.1:", &log),
			 "the exporter listens"))
		goto out;
	p = strstr(log, "listening on http://127.0.0.1:");
	port = atoi(p + strlen("listening on http://127.0.0.1:"));
	if (!ASSERT_TRUE(port > 0, "its port"))
		goto out;
	if (ASSERT_OK(rl_ns_rx_sh(ns, &body, "curl -sf --max-time 10 http://127.0.0.1:%d/metrics",
				  port),
		      "scrape")) {
		snprintf(want, sizeof(want), "iface=\"%s\"", ns->rx_if);
		ASSERT_CONTAINS(body, want, "the scrape shows the limiter");
		/*
		 * Read without errors of its own: as many as a scrape with
		 * every capability (limiters of another build on the host,
		 * whose maps this one cannot read, are errors for both).
		 */
		snprintf(want, sizeof(want), "xdp_ratelimit_scrape_errors %d\n", root_errors());
		ASSERT_CONTAINS(body, want, "read without errors of its own");
	}
	ASSERT_EQ(bg_stop(&b, SIGTERM), 0, "SIGTERM stops it cleanly");
out:
	free(log);
	free(body);
	bg_cleanup(&b);
}

TEST_FLAGS(units_run_with_their_capabilities, RL_TEST_ROOT)
{
	static const char *const known[] = {
		"xdp-ratelimit@.service.in",
		"xdp-ratelimit.service.in",
		"xdp-ratelimit-sync@.service.in",
		"xdp-ratelimit-exporter.service.in",
	};
	char tmp[64] = "/tmp/rlt-units-XXXXXX", etc[96];
	glob_t g = {};
	int seen = 0;

	if (!ASSERT_TRUE(mkdtemp(tmp) != NULL, "temporary directory"))
		return;
	snprintf(etc, sizeof(etc), "%s/etc", tmp);
	if (!ASSERT_OK(glob("dist/*.service.in", 0, NULL, &g), "dist/*.service.in (run from the "
							       "source tree)"))
		goto out;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *name = strrchr(g.gl_pathv[i], '/') + 1;
		struct rl_ns ns = {};
		struct unit u;
		size_t k;

		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (!strcmp(name, known[k]))
				break;
		if (!ASSERT_TRUE(k < sizeof(known) / sizeof(known[0]),
				 "a case in tests/test_units.c for every unit"))
			continue;
		if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
			continue;
		if (unit_read(&u, g.gl_pathv[i], etc, ns.rx_if)) {
			switch (k) {
			case 0:
				case_iface(&u, &ns);
				break;
			case 1:
				case_apply(&u, &ns, etc);
				break;
			case 2:
				case_sync(&u, &ns);
				break;
			case 3:
				case_exporter(&u, &ns);
				break;
			}
			seen++;
		}
		unit_free(&u);
		rl_ns_destroy(&ns);
	}
	ASSERT_EQ(seen, sizeof(known) / sizeof(known[0]), "every shipped unit was run");
out:
	globfree(&g);
	rl_sh(NULL, "rm -rf '%s'", tmp);
}

/* "xdp-ratelimit ARGS" in the receiving namespace under bounding set @bnd (root's caps: it). */
static int run_with(struct rl_ns *ns, const char *bnd, const char *args, char **err)
{
	char cmd[512];

	free(*err);
	*err = NULL;
	snprintf(cmd, sizeof(cmd),
		 "nsenter --net=/run/netns/%s setpriv --bounding-set=%s --inh-caps=-all -- "
		 "%s/xdp-ratelimit %s >/dev/null",
		 ns->rx, bnd, rl_build_dir, args);
	return rl_run(cmd, NULL, err);
}

/*
 * What each command checks for (user/lib/env.h): the commands that only read
 * (status, stats, top, blocked, as the exporter) run with CAP_BPF and
 * CAP_SYS_ADMIN alone; those that change a limiter need CAP_NET_ADMIN too and
 * say so, changing nothing.
 */
TEST_FLAGS(units_command_capabilities, RL_TEST_ROOT)
{
	static const char *const readers[] = { "status %s", "status %s --json", "stats %s",
					       "top %s", "blocked %s" };
	static const char *const writers[] = { "attach %s --rate 10", "set %s --rate 10",
					       "detach %s" };
	const char *bnd = "-all,+bpf,+sys_admin";
	char args[128], *err = NULL;
	struct rl_ns ns = {};

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		return;
	snprintf(args, sizeof(args), "attach %s --rate 1000 --burst 100 --mode skb", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach as root", args))
		goto out;
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		snprintf(args, sizeof(args), readers[i], ns.rx_if);
		ASSERT_EQ(run_with(&ns, bnd, args, &err), 0, args);
		ASSERT_TRUE(!err || !strstr(err, "capabilit"), "no word of capabilities");
	}
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++) {
		snprintf(args, sizeof(args), writers[i], ns.rx_if);
		ASSERT_EQ(run_with(&ns, bnd, args, &err), 1, args);
		ASSERT_CONTAINS(err, "missing capabilities: CAP_NET_ADMIN", args);
	}
	ASSERT_TRUE(burst_is(&ns, "\"burst\":100,") && attached(&ns), "nothing changed");
out:
	free(err);
	rl_ns_destroy(&ns);
}
