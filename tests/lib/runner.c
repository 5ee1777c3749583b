// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The test runner: runs every registered test, ends with "N passed, N failed". */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "test.h"

static struct rl_test *tests, **tail = &tests;
static int cur_failed, cur_skipped;
static char skip_reason[256];
static unsigned long long seed;
unsigned long long rl_test_checks;
const char *rl_build_dir = "build";

void rl_test_register(struct rl_test *t)
{
	*tail = t;
	tail = &t->next;
}

void rl_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "    FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cur_failed++;
}

double rl_test_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rl_test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
	cur_skipped = 1;
}

unsigned long long rl_test_seed(void)
{
	return seed;
}

unsigned long long rl_rand(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

unsigned long long rl_rand_below(unsigned long long *s, unsigned long long n)
{
	return n ? rl_rand(s) % n : 0;
}

static char *slurp(FILE *f)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	size_t n;

	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

int rl_proc_stop(pid_t *pid, int sig, int timeout_ms, int *wstatus)
{
	if (*pid <= 0)
		return -1;
	kill(*pid, sig);
	for (int i = 0; i < timeout_ms / 10; i++) {
		if (waitpid(*pid, wstatus, WNOHANG) == *pid) {
			*pid = 0;
			return 0;
		}
		usleep(10000);
	}
	kill(*pid, SIGKILL);
	waitpid(*pid, wstatus, 0);
	*pid = 0;
	return -1;
}

int rl_run(const char *cmd, char **out, char **err)
{
	char errfile[] = "/tmp/rl-test-stderr-XXXXXX", *full;
	int fd = mkstemp(errfile), status;
	FILE *p;

	if (fd < 0)
		return -1;
	close(fd);
	if (asprintf(&full, "(%s) 2>%s", cmd, errfile) < 0)
		return -1;
	p = popen(full, "r");
	free(full);
	if (!p)
		return -1;
	if (out)
		*out = slurp(p);
	else
		while (fgetc(p) != EOF)
			;
	status = pclose(p);
	if (err) {
		FILE *f = fopen(errfile, "r");

		*err = f ? slurp(f) : NULL;
		if (f)
			fclose(f);
	}
	unlink(errfile);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0, slow = 0, checks = 0, times = 0;
	unsigned long long before;
	struct timespec t0, t1;
	double total = 0, secs;
	const char *filter = NULL, *s;
	struct rl_test *t;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--slow"))
			slow = 1;
		else if (!strcmp(argv[i], "--checks"))
			checks = 1;
		else if (!strcmp(argv[i], "--times"))
			times = 1;
		else if (!strcmp(argv[i], "--build") && i + 1 < argc)
			rl_build_dir = argv[++i];
		else
			filter = argv[i];
	}
	s = getenv("RL_SEED");
	seed = s ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL);
	printf("seed %llu (set RL_SEED to repeat)\n", seed);
	for (t = tests; t; t = t->next) {
		if (filter && !strstr(t->name, filter))
			continue;
		if ((t->flags & RL_TEST_SLOW) && !slow)
			continue;
		cur_failed = 0;
		cur_skipped = 0;
		/* A test that quiets the library's warnings quiets only itself. */
		rl_verbose = 0;
		before = rl_test_checks;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if ((t->flags & RL_TEST_ROOT) && geteuid() != 0)
			rl_test_skip("needs root");
		else
			t->fn();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		total += secs;
		if (cur_failed) {
			printf("FAIL %s\n", t->name);
			failed++;
		} else if (cur_skipped) {
			printf("SKIP %s: %s\n", t->name, skip_reason);
			skipped++;
		} else {
			printf("ok   %s", t->name);
			if (checks)
				printf(" (%llu checks)", rl_test_checks - before);
			if (times)
				printf(" [%.1f s]", secs);
			putchar('\n');
			passed++;
		}
		fflush(stdout);
	}
	if (checks)
		printf("%llu checks\n", rl_test_checks);
	if (times)
		printf("%.1f s in tests\n", total);
	if (skipped)
		printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	else
		printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
