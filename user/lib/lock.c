// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The cross-process lock: see lock.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

/* "pid 1234 (xdp-ratelimit apply /etc/x.yaml), stopped" from what the holder wrote. */
static void holder(int fd, char *buf, size_t len)
{
	char line[256], path[64], stat[512];
	ssize_t n = pread(fd, line, sizeof(line) - 1, 0);
	const char *state = "";
	long pid;
	FILE *f;

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
	int fd = open(RL_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	long long limit = wait_s(), start = mono_ns();
	bool told = false;
	char who[320];
	int ret;

	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "couldn't open the lock file " RL_LOCK_FILE ": %s",
			 strerror(errno));
		return ret;
	}
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		long long waited = mono_ns() - start;
		struct timespec ts = { 0, LOCK_POLL_NS };

		if (errno != EWOULDBLOCK && errno != EINTR) {
			ret = -errno;
			snprintf(err, errlen, "couldn't lock " RL_LOCK_FILE ": %s",
				 strerror(errno));
			close(fd);
			return ret;
		}
		if (waited >= limit * 1000000000LL) {
			holder(fd, who, sizeof(who));
			snprintf(err, errlen,
				 "another command has held " RL_LOCK_FILE " for over %llds: %s; "
				 "nothing changed (" RL_LOCK_WAIT_ENV "=SECONDS waits longer)",
				 limit, who);
			close(fd);
			return -EBUSY;
		}
		if (!told && waited >= 1000000000LL) {
			holder(fd, who, sizeof(who));
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
	if (fd >= 0) {
		/* Nobody holds it now: a reader of the file must not name us. */
		if (ftruncate(fd, 0))
			pr_debug("couldn't clear " RL_LOCK_FILE);
		close(fd);
	}
}
