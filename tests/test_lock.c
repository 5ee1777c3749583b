// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The host lock (user/lib/lock.c): a command that finds it held by a stopped
 * command waits a bounded time, then fails naming the holder's pid, command
 * line and state; once the holder is gone the lock is free again.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lock.h"
#include "test.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TEST_FLAGS(lock_names_a_stopped_holder, RL_TEST_ROOT)
{
	char err[512] = "", want[64];
	int fd, ready[2], status;
	double t0, took;
	pid_t pid;

	if (!ASSERT_OK(pipe(ready), "pipe"))
		return;
	pid = fork();
	if (pid == 0) {
		char e[256];
		int lfd = rl_lock(e, sizeof(e));

		/* Locked (or not): say so, then stop while holding it. */
		if (write(ready[1], lfd >= 0 ? "1" : "0", 1) != 1)
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	close(ready[1]);
	if (!ASSERT_TRUE(pid > 0, "fork"))
		goto out;
	if (!ASSERT_TRUE(read(ready[0], want, 1) == 1 && want[0] == '1',
			 "the child holds the lock"))
		goto out;
	/* Stopped for sure before we look. */
	waitpid(pid, &status, WUNTRACED);
	setenv(RL_LOCK_WAIT_ENV, "1", 1);
	t0 = now_s();
	fd = rl_lock(err, sizeof(err));
	took = now_s() - t0;
	unsetenv(RL_LOCK_WAIT_ENV);
	if (!ASSERT_EQ(fd, -EBUSY, "a held lock times out")) {
		rl_unlock(fd);
		goto out;
	}
	ASSERT_TRUE(took >= 0.9 && took < 5, "waited about the second asked for");
	snprintf(want, sizeof(want), "pid %d (", (int)pid);
	ASSERT_CONTAINS(err, want, "names the holder's pid");
	ASSERT_CONTAINS(err, "test-runner", "and its command line");
	ASSERT_CONTAINS(err, "stopped", "and that it is stopped");
	ASSERT_CONTAINS(err, "nothing changed", "says nothing changed");
	/* The holder gone, the lock is free. */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	pid = 0;
	fd = rl_lock(err, sizeof(err));
	if (ASSERT_TRUE(fd >= 0, err))
		rl_unlock(fd);
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	close(ready[0]);
}
