/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A rate policy as the user gives it, and its translation into struct rl_params. */
#ifndef RL_POLICY_H
#define RL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "rl_algo.h"

#define RL_ERRLEN 256

/* Window lengths accepted: 1 us to 1 day. */
#define RL_WINDOW_MIN_NS 1000ULL
#define RL_WINDOW_MAX_NS (86400ULL * 1000000000ULL)

/* What the user asked for; the *_set flags tell given from default. */
struct rl_policy {
	enum rl_algo algo;
	bool bytes;		/* rate given in bits or bytes: cost = frame length */
	__u64 rate_num;		/* rate = rate_num / rate_den cost units per second */
	__u64 rate_den;
	__u64 burst;		/* cost units */
	__u64 window_ns;
	__u64 initial;		/* cost units */
	unsigned int prefix4;
	unsigned int prefix6;
	bool algo_set, rate_set, burst_set, window_set, initial_set, prefix4_set, prefix6_set;
};

void rl_policy_defaults(struct rl_policy *pol);

/*
 * Parsers for single option values. Each returns 0, or -EINVAL with a message
 * in @err that names the problem (the caller adds the flag's name).
 */
int rl_parse_algo(const char *s, enum rl_algo *algo, char *err, size_t errlen);
int rl_parse_rate(const char *s, __u64 *num, __u64 *den, bool *bytes, char *err, size_t errlen);
int rl_parse_duration(const char *s, __u64 *ns, char *err, size_t errlen);
int rl_parse_u64(const char *s, __u64 min, __u64 max, __u64 *val, char *err, size_t errlen);

/* Check the policy as a whole and precompute the packet-path parameters. */
int rl_params_init(struct rl_params *p, const struct rl_policy *pol, char *err, size_t errlen);

const char *rl_algo_name(enum rl_algo algo);
/* "10/s", "1.5/s", "100 Mbit/s" ... into @buf. */
char *rl_rate_str(const struct rl_policy *pol, char *buf, size_t len);

#endif /* RL_POLICY_H */
