// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Crash safety: SIGKILL the CLI at random moments during attach, set and
 * detach. After each kill the interface must be in the old or the new state,
 * never in between: an XDP program on the link iff status reports the limiter
 * attached, with the old or the new rate. Running the command again must then
 * reach the new state.
 */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "netns.h"
#include "test.h"

#define ROUNDS 12

struct crash_env {
	char ns[64], ifc[16], bin[512];
};

static long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static int run_in_ns(const struct crash_env *e, char *const args[], long kill_after_us)
{
	char path[128];
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "/var/run/netns/%s", e->ns);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), null = open("/dev/null", O_WRONLY);

		if (fd < 0 || setns(fd, CLONE_NEWNET))
			_exit(127);
		dup2(null, 1);
		dup2(null, 2);
		execv(e->bin, args);
		_exit(127);
	}
	if (kill_after_us >= 0) {
		usleep((useconds_t)kill_after_us);
		kill(pid, SIGKILL);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* 0: not attached, else the rate status reports; -1: inconsistent. */
static long observe(const struct crash_env *e, char *why, size_t len)
{
	char *cmd, *out = NULL;
	bool prog;
	long rate = 0;
	int st;

	if (asprintf(&cmd, "ip -n %s -d link show dev %s | grep -q 'prog/xdp'", e->ns, e->ifc) < 0)
		return -1;
	prog = rl_run(cmd, NULL, NULL) == 0;
	free(cmd);
	if (asprintf(&cmd, "nsenter --net=/var/run/netns/%s %s status %s --json", e->ns, e->bin,
		     e->ifc) < 0)
		return -1;
	st = rl_run(cmd, &out, NULL);
	free(cmd);
	if (st == 0 && out) {
		char *r = strstr(out, "\"rate\":\"");

		rate = r ? strtol(r + 8, NULL, 10) : -1;
	}
	free(out);
	if (prog && st == 0 && rate > 0)
		return rate;
	if (!prog && st != 0)
		return 0;
	snprintf(why, len, "XDP program on link: %s, status exit %d, rate %ld", prog ? "yes" : "no",
		 st, rate);
	return -1;
}

static bool setup(struct crash_env *e)
{
	char *cmd;
	int ret;

	snprintf(e->ns, sizeof(e->ns), "rlcrash-%d", getpid());
	snprintf(e->ifc, sizeof(e->ifc), "rlk%d", getpid() % 100000);
	if (!realpath(rl_build_dir, e->bin))
		return false;
	strncat(e->bin, "/xdp-ratelimit", sizeof(e->bin) - strlen(e->bin) - 1);
	if (asprintf(
		    &cmd,
		    "ip netns add %s && ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && "
		    "ip -n %s link add %s type veth peer name %sp && ip -n %s link set %s up && "
		    "ip -n %s link set %sp up",
		    e->ns, e->ns, e->ns, e->ifc, e->ifc, e->ns, e->ifc, e->ns, e->ifc) < 0)
		return false;
	ret = rl_run(cmd, NULL, NULL);
	free(cmd);
	return ret == 0;
}

static void teardown(const struct crash_env *e)
{
	char *const det[] = { (char *)e->bin, "detach", (char *)e->ifc, NULL };
	char *cmd, pins[PATH_MAX] = "/nonexistent";

	run_in_ns(e, det, -1);
	rl_ns_pin_dir(e->ns, e->ifc, pins, sizeof(pins));
	if (asprintf(&cmd,
		     "ip netns del %s; rm -rf %s; rmdir \"$(dirname %s)\" " RL_PIN_ROOT
		     " 2>/dev/null; true",
		     e->ns, pins, pins) >= 0) {
		rl_run(cmd, NULL, NULL);
		free(cmd);
	}
}

/*
 * How long each command takes here, un-killed, as the median of three runs:
 * kills are then spread over that span, so they land inside the commands on
 * a fast machine and on a slow one alike.
 */
static bool calibrate(const struct crash_env *e, long span_us[3])
{
	char *const attach[] = { (char *)e->bin, "attach", (char *)e->ifc, "--rate", "99", NULL };
	char *const set[] = { (char *)e->bin, "set", (char *)e->ifc, "--rate", "98", NULL };
	char *const detach[] = { (char *)e->bin, "detach", (char *)e->ifc, NULL };
	char *const *cmds[3] = { attach, set, detach };
	long t[3][3];

	for (int i = 0; i < 3; i++) {
		for (int c = 0; c < 3; c++) {
			long t0 = now_us();

			if (run_in_ns(e, cmds[c], -1) != 0)
				return false;
			t[c][i] = now_us() - t0;
		}
	}
	for (int c = 0; c < 3; c++) {
		long lo = t[c][0] < t[c][1] ? t[c][0] : t[c][1];
		long hi = t[c][0] < t[c][1] ? t[c][1] : t[c][0];
		long med = t[c][2] < lo ? lo : (t[c][2] > hi ? hi : t[c][2]);

		span_us[c] = med > 1000 ? med : 1000;
	}
	return true;
}

TEST_FLAGS(crash_sigkill_attach_set_detach, RL_TEST_ROOT)
{
	static const char *const names[3] = { "attach", "set", "detach" };
	struct crash_env e;
	char why[256], rate_a[16], rate_b[16];
	unsigned int seed = (unsigned int)rl_test_seed();
	long span_us[3], state, kills_mid = 0;

	if (!ASSERT_TRUE(setup(&e), "namespace and veth"))
		goto out;
	if (!ASSERT_TRUE(calibrate(&e, span_us), "attach, set and detach run un-killed"))
		goto out;
	printf("    un-killed: attach %ld us, set %ld us, detach %ld us (medians of 3)\n",
	       span_us[0], span_us[1], span_us[2]);
	for (int round = 0; round < ROUNDS; round++) {
		snprintf(rate_a, sizeof(rate_a), "%d", 100 + round);
		snprintf(rate_b, sizeof(rate_b), "%d", 500 + round);
		char *const attach[] = { e.bin, "attach", e.ifc, "--rate", rate_a, NULL };
		char *const set[] = { e.bin, "set", e.ifc, "--rate", rate_b, NULL };
		char *const detach[] = { e.bin, "detach", e.ifc, NULL };
		char *const *cmds[3] = { attach, set, detach };
		const long before[3] = { 0, 100 + round, 500 + round };
		const long after[3] = { 100 + round, 500 + round, 0 };

		for (int c = 0; c < 3; c++) {
			long delay = (long)(rand_r(&seed) % (unsigned int)span_us[c]);
			int st = run_in_ns(&e, cmds[c], delay);

			state = observe(&e, why, sizeof(why));
			if (!ASSERT_TRUE(state == before[c] || state == after[c], names[c])) {
				fprintf(stderr, "    round %d, killed after %ld us (exit %d): %s\n",
					round, delay, st, state < 0 ? why : "unexpected rate");
				goto out;
			}
			if (st == 128 + SIGKILL)
				kills_mid++;
			else if (span_us[c] > 2000)
				/* It finished first: this machine is faster now, aim earlier. */
				span_us[c] = span_us[c] * 3 / 4;
			if (state != after[c]) {
				/* Killed before its commit point: running it again recovers. */
				st = run_in_ns(&e, cmds[c], -1);
				ASSERT_EQ(st, 0, "re-run after a kill");
				state = observe(&e, why, sizeof(why));
				if (!ASSERT_EQ(state, after[c], "state after the re-run"))
					goto out;
			}
		}
	}
	/* The kills must have landed inside the commands, not only after them. */
	printf("    %ld of %d commands were killed while running\n", kills_mid, 3 * ROUNDS);
	ASSERT_TRUE(kills_mid >= ROUNDS, "enough kills landed while a command ran");
out:
	teardown(&e);
}
