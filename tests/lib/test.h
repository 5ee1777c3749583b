/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A small test harness in the style of the kernel's BPF selftests: ASSERT_*
 * macros print what failed and return bool, so a test can stop early with
 * "if (!ASSERT_OK(err, "load")) goto out;". A test passes if none of its
 * assertions failed. The runner ends with "N passed, N failed".
 */
#ifndef RL_TEST_H
#define RL_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

struct rl_test {
	const char *name;
	void (*fn)(void);
	unsigned int flags;
	struct rl_test *next;
};

/* Flags: the test needs root and a BPF-capable kernel. */
#define RL_TEST_ROOT 1
/* Flags: the test is long; run only with --slow (make fuzz, make bench). */
#define RL_TEST_SLOW 2

void rl_test_register(struct rl_test *t);
void rl_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Mark the running test as skipped, with the reason; it counts as neither. */
void rl_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* CLOCK_MONOTONIC in seconds, for tests that time what they wait for. */
double rl_test_mono(void);
/* A fixed seed per test run, printed, settable with RL_SEED. */
unsigned long long rl_test_seed(void);
/*
 * Assertions evaluated so far (each ASSERT_* adds one): the runner's --checks
 * prints them per test, so a refactoring of the tests can show it kept them.
 */
extern unsigned long long rl_test_checks;

#define TEST_FLAGS(name, flags_)                                                  \
	static void test_##name(void);                                            \
	static struct rl_test rl_t_##name = { #name, test_##name, flags_, NULL }; \
	__attribute__((constructor)) static void rl_reg_##name(void)              \
	{                                                                         \
		rl_test_register(&rl_t_##name);                                   \
	}                                                                         \
	static void test_##name(void)
#define TEST(name) TEST_FLAGS(name, 0)

#define ASSERT_TRUE(cond, what)                                                                 \
	({                                                                                      \
		bool ok_ = (cond);                                                              \
		rl_test_checks++;                                                               \
		if (!ok_)                                                                       \
			rl_test_fail(__FILE__, __LINE__, "%s: expected true: %s", what, #cond); \
		ok_;                                                                            \
	})
#define ASSERT_EQ(a, b, what)                                                                 \
	({                                                                                    \
		unsigned long long a_ = (unsigned long long)(a);                              \
		unsigned long long b_ = (unsigned long long)(b);                              \
		bool ok_ = a_ == b_;                                                          \
		rl_test_checks++;                                                             \
		if (!ok_)                                                                     \
			rl_test_fail(__FILE__, __LINE__, "%s: %s = %llu, expected %s = %llu", \
				     what, #a, a_, #b, b_);                                   \
		ok_;                                                                          \
	})
#define ASSERT_LE(a, b, what)                                                                    \
	({                                                                                       \
		unsigned long long a_ = (unsigned long long)(a);                                 \
		unsigned long long b_ = (unsigned long long)(b);                                 \
		bool ok_ = a_ <= b_;                                                             \
		rl_test_checks++;                                                                \
		if (!ok_)                                                                        \
			rl_test_fail(__FILE__, __LINE__, "%s: %s = %llu, expected <= %s = %llu", \
				     what, #a, a_, #b, b_);                                      \
		ok_;                                                                             \
	})
#define ASSERT_OK(err, what)                                                                      \
	({                                                                                        \
		long long e_ = (long long)(err);                                                  \
		bool ok_ = e_ == 0;                                                               \
		rl_test_checks++;                                                                 \
		if (!ok_)                                                                         \
			rl_test_fail(__FILE__, __LINE__, "%s: %s = %lld, expected 0", what, #err, \
				     e_);                                                         \
		ok_;                                                                              \
	})
#define ASSERT_STREQ(a, b, what)                                                              \
	({                                                                                    \
		const char *a_ = (a), *b_ = (b);                                              \
		bool ok_ = a_ && b_ && !strcmp(a_, b_);                                       \
		rl_test_checks++;                                                             \
		if (!ok_)                                                                     \
			rl_test_fail(__FILE__, __LINE__, "%s: \"%s\", expected \"%s\"", what, \
				     a_ ? a_ : "(null)", b_ ? b_ : "(null)");                 \
		ok_;                                                                          \
	})
#define ASSERT_CONTAINS(hay, needle, what)                                                     \
	({                                                                                     \
		const char *h_ = (hay), *n_ = (needle);                                        \
		bool ok_ = h_ && strstr(h_, n_);                                               \
		rl_test_checks++;                                                              \
		if (!ok_)                                                                      \
			rl_test_fail(__FILE__, __LINE__, "%s: \"%s\" does not contain \"%s\"", \
				     what, h_ ? h_ : "(null)", n_);                            \
		ok_;                                                                           \
	})

/* splitmix64: a small seeded generator, the same on every machine. */
unsigned long long rl_rand(unsigned long long *state);
/* Uniform in [0, n) (0 when n is 0). */
unsigned long long rl_rand_below(unsigned long long *state, unsigned long long n);

/* Run a shell command; its stdout (and stderr, if @err) into malloc'd strings. Returns the exit status. */
int rl_run(const char *cmd, char **out, char **err);
/*
 * Stop child @*pid with @sig and reap it, waiting at most @timeout_ms, then
 * SIGKILL it: 0 with its wait status in *@wstatus, or -1 if it had to be
 * killed (or @*pid was not a child). *@pid is 0 afterwards.
 */
int rl_proc_stop(pid_t *pid, int sig, int timeout_ms, int *wstatus);
/* The directory of build outputs (where xdp-ratelimit is). */
extern const char *rl_build_dir;

#endif /* RL_TEST_H */
