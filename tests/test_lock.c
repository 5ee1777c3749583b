// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The host lock (user/lib/lock.c): a command that finds it held by a stopped
 * command waits a bounded time, then fails naming the holder's pid, command
 * line and state; once the holder is gone the lock is free again.
 *	lock_file_removed	a released lock file is removed; a held one is not
 *				removed by a process that does not hold it
 *	lock_file_race		a taker that waited in flock() on a file removed by
 *				its holder does not keep that stale file: it takes
 *				the new one, and a third process is refused
 *	lock_host_file_removed	rl_lock()'s /run/xdp-ratelimit.lock (in a /run of
 *				its own) is gone after rl_unlock()
 *	lock_cli_leaves_none	attach, set, detach on a veth leave no lock file
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lock.h"
#include "netns.h"
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

/* A fresh path in a fresh directory under /tmp. */
static bool tmp_lock_path(char *dir, size_t dlen, char *path, size_t plen)
{
	snprintf(dir, dlen, "/tmp/rlt-%d-lock-XXXXXX", (int)getpid());
	if (!ASSERT_TRUE(mkdtemp(dir) != NULL, "temporary directory"))
		return false;
	snprintf(path, plen, "%s/x.lock", dir);
	return true;
}

static ino_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

TEST(lock_file_removed)
{
	char dir[64], path[96];
	int a, b;

	if (!tmp_lock_path(dir, sizeof(dir), path, sizeof(path)))
		return;
	a = rl_lock_file(path, 0600, LOCK_EX | LOCK_NB);
	if (!ASSERT_TRUE(a >= 0, "locked"))
		goto out;
	ASSERT_TRUE(access(path, F_OK) == 0, "the file exists while held");
	b = rl_lock_file(path, 0600, LOCK_EX | LOCK_NB);
	ASSERT_EQ(b, -EWOULDBLOCK, "held: a second taker is refused");
	ASSERT_TRUE(access(path, F_OK) == 0, "and the refused one removed nothing");
	/* Released by one that does not hold it (another file now at the path): not removed. */
	b = open(path, O_RDONLY);
	if (ASSERT_TRUE(b >= 0, "open")) {
		char other[128];

		snprintf(other, sizeof(other), "%s/y.lock", dir);
		ASSERT_OK(rename(path, other), "move the held file away");
		ASSERT_TRUE(close(open(path, O_CREAT | O_RDWR, 0600)) == 0, "another file there");
		rl_lock_file_release(b, path);
		ASSERT_TRUE(access(path, F_OK) == 0, "the other file is not removed");
		unlink(other);
	}
	rl_lock_file_release(a, path);
	unlink(path);
	a = rl_lock_file(path, 0600, LOCK_EX | LOCK_NB);
	if (ASSERT_TRUE(a >= 0, "locked again")) {
		rl_lock_file_release(a, path);
		ASSERT_TRUE(access(path, F_OK) != 0, "released: the file is gone");
	}
out:
	rl_sh(NULL, "rm -rf '%s'", dir);
}

/* Is process @pid waiting in flock() (a "->" line of /proc/locks)? */
static bool waits_in_flock(pid_t pid)
{
	char *out = NULL;
	bool ret;

	rl_sh(&out, "grep -c -- '-> FLOCK  ADVISORY  WRITE %d ' /proc/locks || true", (int)pid);
	ret = out && atoi(out) > 0;
	free(out);
	return ret;
}

TEST(lock_file_race)
{
	char dir[64], path[96], got[32] = "";
	int a = -1, b, pipefd[2] = { -1, -1 }, status;
	pid_t pid = 0;
	struct pollfd pfd;
	char *end;

	if (!tmp_lock_path(dir, sizeof(dir), path, sizeof(path)))
		return;
	if (!ASSERT_OK(pipe(pipefd), "pipe"))
		goto out;
	a = rl_lock_file(path, 0600, LOCK_EX);
	if (!ASSERT_TRUE(a >= 0, "the first holder"))
		goto out;
	pid = fork();
	if (pid == 0) {
		/* The second taker: blocks in flock() on the first file, then says what it holds. */
		struct stat st;
		char msg[32];
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* The parent's lock is on the open file, which the fork shared: not ours to keep. */
		close(a);
		fd = rl_lock_file(path, 0600, LOCK_EX);
		if (fd < 0 || fstat(fd, &st))
			_exit(1);
		snprintf(msg, sizeof(msg), "%lu %lu\n", (unsigned long)st.st_nlink,
			 (unsigned long)st.st_ino);
		if (write(pipefd[1], msg, strlen(msg)) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	if (!ASSERT_TRUE(pid > 0, "fork"))
		goto out;
	close(pipefd[1]);
	pipefd[1] = -1;
	pfd = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	for (int i = 0; i < 500 && !waits_in_flock(pid); i++)
		usleep(10000);
	if (!ASSERT_TRUE(waits_in_flock(pid), "the second taker waits in flock() on the file"))
		goto out;
	/* Released: the file is removed under the waiter. */
	rl_lock_file_release(a, path);
	a = -1;
	if (!ASSERT_TRUE(poll(&pfd, 1, 5000) == 1 && read(pipefd[0], got, sizeof(got) - 1) > 0,
			 "the second taker got it (within 5 s)"))
		goto out;
	/* (The new file may reuse the removed one's inode number: the link count tells.) */
	ASSERT_EQ(strtoul(got, &end, 10), 1, "it holds a file that is linked, not the removed one");
	ASSERT_EQ(strtoul(end, NULL, 10), (unsigned long)ino_of(path), "the one at the path");
	b = rl_lock_file(path, 0600, LOCK_EX | LOCK_NB);
	ASSERT_EQ(b, -EWOULDBLOCK, "a third taker is refused while it holds it");
	if (b >= 0)
		close(b);
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (a >= 0)
		close(a);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	rl_sh(NULL, "rm -rf '%s'", dir);
}

TEST_FLAGS(lock_host_file_removed, RL_TEST_ROOT)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		char err[256];
		int fd;

		/* A /run of its own: the host's lock is other commands' business. */
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("rlt", "/run", "tmpfs", 0, NULL))
			_exit(10);
		fd = rl_lock(err, sizeof(err));
		if (fd < 0)
			_exit(11);
		if (access(RL_LOCK_FILE, F_OK))
			_exit(12);
		rl_unlock(fd);
		_exit(access(RL_LOCK_FILE, F_OK) ? 0 : 13);
	}
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return;
	waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFEXITED(status), "the child exited");
	ASSERT_TRUE(WEXITSTATUS(status) != 10, "a /run of its own");
	ASSERT_TRUE(WEXITSTATUS(status) != 11 && WEXITSTATUS(status) != 12, "locked");
	ASSERT_EQ(WEXITSTATUS(status), 0, "the lock file is gone after rl_unlock()");
}

TEST_FLAGS(lock_cli_leaves_none, RL_TEST_ROOT)
{
	char *out = NULL;
	struct rl_ns ns = {};

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		return;
	/* In the pair's namespace, with a /run of its own (after nsenter: /run/netns is there). */
	ASSERT_OK(rl_sh(&out,
			"nsenter --net=/run/netns/%s unshare -m --propagation private sh -c '"
			"mount -t tmpfs rlt /run && B=%s/xdp-ratelimit &&"
			" $B attach %s --rate 100 --mode skb >/dev/null &&"
			" $B set %s --rate 200 >/dev/null && $B detach %s >/dev/null &&"
			" ls -A /run'",
			ns.rx, rl_build_dir, ns.rx_if, ns.rx_if, ns.rx_if),
		  "attach, set, detach");
	ASSERT_STREQ(out, "", "no lock file left in /run");
	free(out);
	rl_ns_destroy(&ns);
}
