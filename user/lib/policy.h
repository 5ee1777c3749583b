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
/*
 * A full-size frame: a 1500-byte MTU packet with its Ethernet header and two
 * VLAN tags (XDP never sees the FCS). The smallest default byte burst, and
 * the least a token-bucket byte burst or a byte limit per window must hold
 * (rl_policy_check()). Jumbo frames need more; RL_MAX_FRAME is the kernel's
 * bound on the cost of one packet, not what a link carries.
 */
#define RL_FULL_FRAME 1522

/*
 * A level above the source as given (include/rl_agg.h): its rate (0/0: off)
 * and burst. The algorithm and window are the policy's.
 */
struct rl_level_policy {
	__u64 rate_num, rate_den; /* cost units per second; rate_num 0: the level is off */
	bool bytes;
	__u64 burst; /* cost units; burst_set: given, else one second at the rate */
	bool rate_set, burst_set; /* given (set changes only what is given) */
};

/* What the user asked for; the *_set flags tell given from default. */
struct rl_policy {
	enum rl_algo algo;
	bool bytes; /* rate given in bits or bytes: cost = frame length */
	__u64 rate_num; /* rate = rate_num / rate_den cost units per second */
	__u64 rate_den;
	__u64 burst; /* cost units */
	__u64 window_ns;
	__u64 initial; /* cost units */
	unsigned int prefix4;
	unsigned int prefix6;
	bool algo_set, rate_set, burst_set, window_set, initial_set, prefix4_set, prefix6_set;
	/*
	 * The levels above the source (user/lib/level.h): the prefix
	 * aggregate (--aggregate4, --aggregate6: -1 off; --aggregate-rate,
	 * --aggregate-burst), the interface (--iface-rate, --iface-burst),
	 * the admission cap (--admit-rate, --admit-burst: new sources per
	 * second).
	 */
	int agg_prefix4, agg_prefix6;
	bool agg_prefix4_set, agg_prefix6_set;
	struct rl_level_policy agg, iface, admit;
};

void rl_policy_defaults(struct rl_policy *pol);

/*
 * Parsers for single option values. Each returns 0, or -EINVAL with a message
 * in @err that names the problem (the caller adds the flag's name).
 */
int rl_parse_algo(const char *s, enum rl_algo *algo, char *err, size_t errlen);
/*
 * The names rl_parse_algo() takes, by enum rl_algo, NULL-terminated: also
 * --algo's choices in the option table (--help, the man page, completion).
 */
extern const char *const rl_algo_names[RL_ALGO__COUNT + 1];
int rl_parse_rate(const char *s, __u64 *num, __u64 *den, bool *bytes, char *err, size_t errlen);
int rl_parse_duration(const char *s, __u64 *ns, char *err, size_t errlen);
int rl_parse_u64(const char *s, __u64 min, __u64 max, __u64 *val, char *err, size_t errlen);

/*
 * A refusal of a policy (or a rule) as a whole is mostly about one option,
 * and each place that shows it spells that option its own way: the command
 * line "--burst 100 is too large ...", a configuration file "burst 100 is
 * too large ..." at the key that gave it. The *_about() checks keep the two
 * apart: *@about gets the option's long name ("burst") and @err what follows
 * it (" 100 is too large ..."); or *@about is NULL and @err the whole
 * message. rl_about_cli() joins them as the command line spells them, which
 * is what the checks without _about() return.
 */
void rl_about_cli(char *err, size_t errlen, const char *about);

/* Check the policy as a whole and precompute the packet-path parameters. */
int rl_params_init(struct rl_params *p, const struct rl_policy *pol, char *err, size_t errlen);
int rl_params_init_about(struct rl_params *p, const struct rl_policy *pol, const char **about,
			 char *err, size_t errlen);

/*
 * What a user may ask for, beyond what rl_params_init() can compute: refuses
 * (-EINVAL, with a message) a byte-rate token-bucket burst or a byte limit
 * per window below one full-size frame (RL_FULL_FRAME), which would drop
 * full-size frames, or pass one whatever the limit. attach, set (through
 * rl_config_build()) and simulate check it; the core itself takes any burst.
 */
int rl_policy_check(const struct rl_policy *pol, char *err, size_t errlen);
int rl_policy_check_about(const struct rl_policy *pol, const char **about, char *err,
			  size_t errlen);

/*
 * The least burst, in ms at the rate, that lets one TCP flow reach a byte
 * rate: a sender's bursts outgrow rate x RTT, and losses at the tail of each
 * halve its window. iperf3 over veth at 100 Mbit/s, steady state: 8 Mbit/s
 * at 12 ms, about half the rate at 100 ms, 91-92% at 200 ms, 98% at 300 ms
 * (tests/test_tcp.c checks at least 80% at this value). A divisor of 1000.
 */
#define RL_TCP_BURST_MS 200

/*
 * True, with a message in @msg, when a byte-rate token-bucket or gcra burst
 * is below rate x RL_TCP_BURST_MS: a TCP flow would get well under the rate
 * (see the README's "Sizing a burst for TCP"). A warning, not a refusal.
 */
bool rl_policy_tcp_warning(const struct rl_policy *pol, char *msg, size_t len);

const char *rl_algo_name(enum rl_algo algo);
/*
 * "10/s", "0.5/s", "20/min", "5/hour", "100mbit", "1.544mbit", "125.125byte"
 * into @buf: rl_parse_rate() reads it back to the same rate.
 */
char *rl_rate_str(const struct rl_policy *pol, char *buf, size_t len);

#endif /* RL_POLICY_H */
