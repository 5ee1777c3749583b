// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * simulate's trace reader (rl_trace_getline() in user/lib/trace.c): a NUL byte
 * in a line and an over-long line are errors naming the line, not a line
 * quietly read as something else.
 *
 *	trace_getline		lines, the last without a newline, the bounds
 *	trace_nul_long_cli	simulate's exit status and messages
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test.h"
#include "trace.h"

/* Read @len bytes of @data line by line; the results and lines in @got. */
static int read_all(const char *data, size_t len, char *got, size_t gotlen, char *err,
		    size_t errlen)
{
	char line[RL_TRACE_LINE_MAX + 1];
	FILE *f = fmemopen((void *)data, len, "r");
	int r, lines = 0;

	if (!f)
		return -errno;
	got[0] = '\0';
	while ((r = rl_trace_getline(f, line, sizeof(line), err, errlen)) > 0) {
		lines++;
		snprintf(got + strlen(got), gotlen - strlen(got), "[%s]", line);
	}
	fclose(f);
	return r < 0 ? r : lines;
}

TEST(trace_getline)
{
	char got[16384], err[RL_ERRLEN], *big;
	int r;

	r = read_all("1 a\n2 b\r\n\n3 c", 13, got, sizeof(got), err, sizeof(err));
	ASSERT_EQ(r, 4, "four lines, the last without a newline");
	ASSERT_STREQ(got, "[1 a][2 b\r][][3 c]", "lines as read");
	ASSERT_EQ(read_all("", 0, got, sizeof(got), err, sizeof(err)), 0, "empty input");

	/* "2.0 198.18.0.1\0garbage" used to read as "2.0 198.18.0.1". */
	err[0] = '\0';
	r = read_all("1.0 198.18.0.1\n2.0 198.18.0.1\0garbage\n", 38, got, sizeof(got), err,
		     sizeof(err));
	ASSERT_EQ(r, -EINVAL, "NUL byte");
	ASSERT_STREQ(got, "[1.0 198.18.0.1]", "the line before is read");
	ASSERT_CONTAINS(err, "holds a NUL byte (at byte 15)", "NUL byte");

	big = malloc(RL_TRACE_LINE_MAX + 3);
	if (!ASSERT_TRUE(big != NULL, "malloc"))
		return;
	/* Exactly the bound: read whole. */
	memset(big, ' ', RL_TRACE_LINE_MAX + 2);
	big[0] = '1';
	big[RL_TRACE_LINE_MAX] = '\n';
	r = read_all(big, RL_TRACE_LINE_MAX + 1, got, sizeof(got), err, sizeof(err));
	ASSERT_EQ(r, 1, "a line of 4096 bytes");
	ASSERT_EQ(strlen(got), RL_TRACE_LINE_MAX + 2, "all of it");
	/* One byte more. */
	big[RL_TRACE_LINE_MAX] = ' ';
	big[RL_TRACE_LINE_MAX + 1] = '\n';
	err[0] = '\0';
	r = read_all(big, RL_TRACE_LINE_MAX + 2, got, sizeof(got), err, sizeof(err));
	ASSERT_EQ(r, -EINVAL, "a line of 4097 bytes");
	ASSERT_CONTAINS(err, "is longer than 4096 bytes", "over-long line");
	/* The same without a newline at the end of the input. */
	err[0] = '\0';
	r = read_all(big, RL_TRACE_LINE_MAX + 1, got, sizeof(got), err, sizeof(err));
	ASSERT_EQ(r, -EINVAL, "4097 bytes, no newline");
	free(big);
}

/* Run simulate on @len bytes of @data: exit status, stdout and stderr. */
static int simulate_bytes(const char *data, size_t len, char **out, char **err)
{
	char path[] = "/tmp/rl-trace-XXXXXX", *cmd;
	int fd = mkstemp(path), status = -1;

	if (fd < 0)
		return -1;
	if (write(fd, data, len) == (ssize_t)len &&
	    asprintf(&cmd, "%s/xdp-ratelimit simulate --rate 10 --burst 5 --trace %s", rl_build_dir,
		     path) >= 0) {
		status = rl_run(cmd, out, err);
		free(cmd);
	}
	close(fd);
	unlink(path);
	return status;
}

TEST(trace_nul_long_cli)
{
	static const char nul[] = "1.0 198.18.0.1\n2.0 198.18.0.1\0garbage\n3.0 198.18.0.1\n";
	char *out = NULL, *err = NULL, *big;
	size_t n;

	ASSERT_EQ(simulate_bytes(nul, sizeof(nul) - 1, &out, &err), 1, "exit status, NUL");
	ASSERT_CONTAINS(err, "trace line 2: holds a NUL byte", "NUL names the line");
	ASSERT_STREQ(out, "1.0 198.18.0.1 allow\n", "only the line before");
	free(out);
	free(err);
	out = err = NULL;

	n = 3 * RL_TRACE_LINE_MAX;
	big = malloc(n + 32);
	if (!ASSERT_TRUE(big != NULL, "malloc"))
		return;
	strcpy(big, "1.0 198.18.0.1\n2.0 198.18.0.1 # ");
	memset(big + strlen(big), 'x', n);
	big[n] = '\n';
	ASSERT_EQ(simulate_bytes(big, n + 1, &out, &err), 1, "exit status, long line");
	ASSERT_CONTAINS(err, "trace line 2: is longer than 4096 bytes", "long line names the line");
	free(out);
	free(err);
	free(big);
}
