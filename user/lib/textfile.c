// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Opening the files that configure the limiter: a regular file of a bounded size (textfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "textfile.h"

static const char *kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

const char *rl_textfile_size_str(size_t n, char *buf, size_t len)
{
	if (n >= (1 << 20) && !(n % (1 << 20)))
		snprintf(buf, len, "%zu MiB", n >> 20);
	else if (n >= (1 << 10) && !(n % (1 << 10)))
		snprintf(buf, len, "%zu KiB", n >> 10);
	else
		snprintf(buf, len, "%zu bytes", n);
	return buf;
}

static int check(const char *path, const struct stat *st, size_t max, char *err, size_t errlen)
{
	char s[32];

	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "'%s' is %s, not a regular file", path, kind(st->st_mode));
		return -EINVAL;
	}
	if ((unsigned long long)st->st_size > max) {
		snprintf(err, errlen, "'%s' is larger than %s", path,
			 rl_textfile_size_str(max, s, sizeof(s)));
		return -EFBIG;
	}
	return 0;
}

int rl_textfile_open(const char *path, size_t max, char *err, size_t errlen)
{
	struct stat st;
	int fd, ret;

	/* stat() first: a device or a FIFO is refused without being opened. */
	if (stat(path, &st)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't open '%s': %s", path, strerror(errno));
		return ret;
	}
	ret = check(path, &st, max, err, errlen);
	if (ret)
		return ret;
	/* O_NONBLOCK: should it have become a FIFO since, the open does not wait for a writer. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "couldn't open '%s': %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't open '%s': %s", path, strerror(errno));
		goto out;
	}
	ret = check(path, &st, max, err, errlen);
	if (ret)
		goto out;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't open '%s': %s", path, strerror(errno));
		goto out;
	}
	return fd;
out:
	close(fd);
	return ret;
}

FILE *rl_textfile_fopen(const char *path, size_t max, int *ret, char *err, size_t errlen)
{
	int fd = rl_textfile_open(path, max, err, errlen);
	FILE *f;

	if (fd < 0) {
		*ret = fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		*ret = -errno;
		snprintf(err, errlen, "couldn't open '%s': %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	*ret = 0;
	return f;
}

int rl_textfile_read(const char *path, size_t max, char **buf, size_t *len, char *err,
		     size_t errlen)
{
	size_t n = 0, cap = 0;
	char *b = NULL, s[32];
	int fd, ret = 0;

	fd = rl_textfile_open(path, max, err, errlen);
	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t r;

		if (cap - n < 4096 + 1) {
			/* Room for one more byte than @max: a file that grew past it is seen. */
			size_t c = cap ? 2 * cap : 65536;
			char *nb;

			if (c > max + 4096 + 2)
				c = max + 4096 + 2;
			nb = realloc(b, c);
			if (!nb) {
				ret = -ENOMEM;
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			b = nb;
			cap = c;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			snprintf(err, errlen, "reading '%s': %s", path, strerror(errno));
			goto out;
		}
		if (!r)
			break;
		n += (size_t)r;
		if (n > max) {
			ret = -EFBIG;
			snprintf(err, errlen, "'%s' is larger than %s", path,
				 rl_textfile_size_str(max, s, sizeof(s)));
			goto out;
		}
	}
	if (!b) {
		b = malloc(1);
		if (!b) {
			ret = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
out:
	free(b);
	close(fd);
	return ret;
}
