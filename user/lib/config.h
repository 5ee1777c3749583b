/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Building the configuration record the XDP program reads (struct rl_config). */
#ifndef RL_CONFIG_H
#define RL_CONFIG_H

#include "policy.h"
#include "rl_common.h"

/* --syn-proxy: who makes the stack ready for SYN cookies (user/lib/synproxy.h). */
enum rl_syn_proxy {
	RL_SYN_PROXY_NFT = 0, /* the CLI: sysctls and an nftables table of its own */
	RL_SYN_PROXY_CHECK = 1, /* the user: the CLI checks, and refuses what is missing */
};

/* Options beyond the rate policy, shared by attach and set. */
struct rl_opts {
	enum rl_action action;
	enum rl_fail_policy fail_policy;
	int malformed_drop; /* 1: drop malformed IP frames */
	enum rl_clock clock;
	bool action_set, fail_set, malformed_set, clock_set;
	/* --syn-cookies PORTS (the ports; what the SYN-ACK says is filled at attach) */
	struct rl_syn_cfg syn;
	bool syn_set, syn_proxy_set;
	int syn_proxy; /* enum rl_syn_proxy */
};

/*
 * Parse --syn-cookies' value into @syn's ports: a comma-separated list of
 * ports (1-65535) and ranges (8000-8999), at most RL_SYN_MAX_RANGES, or
 * none (SYN cookies off). 0 or -EINVAL with a message in @err.
 */
int rl_syn_ports_parse(const char *val, struct rl_syn_cfg *syn, char *err, size_t errlen);
/* @syn's ports as rl_syn_ports_parse() reads them ("none" for none) into @buf. */
char *rl_syn_ports_str(const struct rl_syn_cfg *syn, char *buf, size_t len);

void rl_opts_defaults(struct rl_opts *o);

/*
 * Fill @cfg for @pol and @o. @prev is the live configuration being replaced
 * (NULL for a first one): the new one gets the next generation and carries
 * each source's state over from it (see rl_carry_state()).
 */
int rl_config_build(struct rl_config *cfg, const struct rl_policy *pol, const struct rl_opts *o,
		    const struct rl_config *prev, char *err, size_t errlen);

/* The step of bpf_ktime_get_coarse_ns() on this machine (one kernel tick), in ns. */
__u64 rl_coarse_tick_ns(void);

/*
 * True if @a and @b enforce the same policy with the same options: everything
 * but the generation and what carries state over from the one before. set
 * leaves the live configuration alone when the new one is the same.
 */
bool rl_config_same(const struct rl_config *a, const struct rl_config *b);

/* The policy and options a configuration was built from (for status and set). */
void rl_config_policy(const struct rl_config *cfg, struct rl_policy *pol, struct rl_opts *o);

#endif /* RL_CONFIG_H */
