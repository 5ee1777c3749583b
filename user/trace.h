/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Packet traces ("TIMESTAMP [SOURCE [LENGTH]]") and a userspace model of the limiter. */
#ifndef RL_TRACE_H
#define RL_TRACE_H

#include <stdbool.h>
#include <stdio.h>
#include "policy.h"
#include "srctab.h"

struct rl_trace_pkt {
	__u64 ns; /* the timestamp, exactly */
	const char *time; /* the timestamp as written */
	struct rl_key key; /* masked source */
	bool has_source;
	__u32 len;
};

/* "12.000000001" -> ns, exactly; 0 or -EINVAL. */
int rl_parse_timestamp(const char *s, __u64 *ns);

/* The longest trace line read, without its newline: ample for a packet and a comment. */
#define RL_TRACE_LINE_MAX 4096

/*
 * Read one line of @in into @buf (@size > RL_TRACE_LINE_MAX), without its
 * newline. Returns 1 for a line, 0 at the end of the input, -EINVAL (with a
 * message in @err) for a line that holds a NUL byte or is longer than
 * RL_TRACE_LINE_MAX bytes, or -EIO for a read error (errno set).
 */
int rl_trace_getline(FILE *in, char *buf, size_t size, char *err, size_t errlen);

/*
 * Parse one trace line in place. Returns 1 for a packet, 0 for a blank or
 * comment line, -EINVAL with a message in @err for a malformed one.
 */
int rl_trace_line(char *line, struct rl_trace_pkt *pkt, char *err, size_t errlen);

/* The limiter's decisions replayed in userspace through the shared core. */
struct rl_sim {
	struct rl_policy pol;
	struct rl_params params;
	struct rl_srctab tab;
	__u64 passed, dropped;
};

int rl_sim_init(struct rl_sim *s, const struct rl_policy *pol, char *err, size_t errlen);
void rl_sim_free(struct rl_sim *s);
/* Mask @key by the policy's prefixes first. 1 pass, 0 drop, -ENOMEM. */
int rl_sim_packet(struct rl_sim *s, struct rl_key *key, __u64 now, __u32 len, struct rl_src **src);

#endif /* RL_TRACE_H */
