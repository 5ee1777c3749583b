// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The cross-process lock: see lock.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lock.h"
#include "log.h"

/* Between two tries of the lock: short next to any command's work. */
#define LOCK_POLL_NS (50 * 1000000LL)

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The seconds to wait: RL_LOCK_WAIT_ENV if it is a number of 0-3600, else the default. */
static long long wait_s(void)
{
	const char *s = getenv(RL_LOCK_WAIT_ENV);
	char *end;
	long v;

	if (!s || !*s)
		return RL_LOCK_WAIT_S;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 3600)
		return RL_LOCK_WAIT_S;
	return v;
}

int rl_lock_file(const char *path, mode_t mode, int op)
{
	struct stat held, named;
	int fd, ret;

	for (;;) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode);
		if (fd < 0)
			return -errno;
		if (flock(fd, op)) {
			ret = -errno;
			close(fd);
			return ret;
		}
		if (fstat(fd, &held)) {
			ret = -errno;
			close(fd);
			return ret;
		}
		/* Still the file at @path: no holder removed it before we got it. */
		if (!stat(path, &named) && named.st_dev == held.st_dev &&
		    named.st_ino == held.st_ino)
			return fd;
		/* Removed (or replaced) by the holder we waited for: take the one there now. */
		close(fd);
	}
}

void rl_lock_file_release(int fd, const char *path)
{
	struct stat held, named;

	if (fd < 0)
		return;
	/*
	 * Only our own file: a taker that finds @path gone or another file
	 * there starts again (rl_lock_file()), so removing it while we hold
	 * it is safe; a file that is not ours (replaced by hand) is left.
	 */
	if (!fstat(fd, &held) && !stat(path, &named) && named.st_dev == held.st_dev &&
	    named.st_ino == held.st_ino && flock(fd, LOCK_EX | LOCK_NB) == 0)
		unlink(path);
	close(fd);
}

/* "pid 1234 (xdp-ratelimit apply /etc/x.yaml), stopped" from what the holder wrote. */
static void holder(char *buf, size_t len)
{
	char line[256], path[64], stat[512];
	int fd = open(RL_LOCK_FILE, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, line, sizeof(line) - 1, 0) : -1;
	const char *state = "";
	long pid;
	FILE *f;

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, len, "a process that did not say which");
		return;
	}
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	pid = strtol(line, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = pid > 0 ? fopen(path, "r") : NULL;
	if (f) {
		/* The state follows the command's closing parenthesis: T is stopped. */
		if (fgets(stat, sizeof(stat), f)) {
			char *p = strrchr(stat, ')');

			if (p && (p[2] == 'T' || p[2] == 't'))
				state = ", stopped (SIGSTOP or a debugger): resume it with kill -CONT";
		}
		fclose(f);
	}
	snprintf(buf, len, "pid %s%s", line, state);
}

/* Who holds the lock now: "PID COMMAND LINE", for the next command that waits. */
static void record(int fd)
{
	char buf[256], cmd[200] = "";
	ssize_t n = 0;
	int c = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (c >= 0) {
		n = read(c, cmd, sizeof(cmd) - 1);
		close(c);
	}
	for (ssize_t i = 0; i < n; i++)
		if (cmd[i] == '\0' || cmd[i] == '\n')
			cmd[i] = ' ';
	cmd[n > 0 ? n : 0] = '\0';
	while (n > 0 && cmd[n - 1] == ' ')
		cmd[--n] = '\0';
	n = snprintf(buf, sizeof(buf), "%d (%s)\n", (int)getpid(), cmd);
	if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)n, 0) != n)
		pr_debug("couldn't record the lock's holder in " RL_LOCK_FILE);
}

int rl_lock(char *err, size_t errlen)
{
	long long limit = wait_s(), start = mono_ns();
	bool told = false;
	char who[320];
	int fd;

	while ((fd = rl_lock_file(RL_LOCK_FILE, 0600, LOCK_EX | LOCK_NB)) < 0) {
		long long waited = mono_ns() - start;
		struct timespec ts = { 0, LOCK_POLL_NS };

		if (fd != -EWOULDBLOCK && fd != -EINTR) {
			snprintf(err, errlen, "couldn't lock " RL_LOCK_FILE ": %s", strerror(-fd));
			return fd;
		}
		if (waited >= limit * 1000000000LL) {
			holder(who, sizeof(who));
			snprintf(err, errlen,
				 "another command has held " RL_LOCK_FILE " for over %llds: %s; "
				 "nothing changed (" RL_LOCK_WAIT_ENV "=SECONDS waits longer)",
				 limit, who);
			return -EBUSY;
		}
		if (!told && waited >= 1000000000LL) {
			holder(who, sizeof(who));
			pr_warn("waiting up to %llds for another command to finish: %s", limit,
				who);
			told = true;
		}
		nanosleep(&ts, NULL);
	}
	record(fd);
	return fd;
}

void rl_unlock(int fd)
{
	/* The file goes with the lock: none is left after a clean exit. */
	rl_lock_file_release(fd, RL_LOCK_FILE);
}
