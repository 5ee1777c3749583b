// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The cross-process lock: see lock.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "lock.h"

int rl_lock(char *err, size_t errlen)
{
	int fd = open(RL_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	int ret;

	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "couldn't open the lock file " RL_LOCK_FILE ": %s",
			 strerror(errno));
		return ret;
	}
	if (flock(fd, LOCK_EX)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't lock " RL_LOCK_FILE ": %s", strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
}

void rl_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
