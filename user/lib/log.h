/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* One log function for the library and the CLI (xdp-tools' pr_warn/pr_info/pr_debug). */
#ifndef RL_LOG_H
#define RL_LOG_H

#include <stdbool.h>

#define RL_PROG "xdp-ratelimit"

/* Debug messages (and libbpf's, libxdp's) are shown when > 0 (-v); below 0, warnings are not. */
extern int rl_verbose;
/* Set by --json: errors also go to stdout as {"error": "..."}. */
extern bool rl_json_errors;

/* Errors and warnings to stderr, prefixed with the program name and the level. */
void rl_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_err(...)  rl_log("error", __VA_ARGS__)
#define pr_warn(...) rl_log("warning", __VA_ARGS__)
#define pr_debug(...)                                 \
	do {                                          \
		if (rl_verbose)                       \
			rl_log("debug", __VA_ARGS__); \
	} while (0)

#endif /* RL_LOG_H */
