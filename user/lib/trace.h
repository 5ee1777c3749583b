/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Packet traces ("TIMESTAMP [SOURCE [LENGTH [PROTO[/DPORT] [FLAGS]]]]") and
 * userspace models of the limiter: one policy (rl_sim), or rules (rl_rsim).
 */
#ifndef RL_TRACE_H
#define RL_TRACE_H

#include <stdbool.h>
#include <stdio.h>
#include "level.h"
#include "policy.h"
#include "rules.h"
#include "srctab.h"

struct rl_trace_pkt {
	__u64 ns; /* the timestamp, exactly */
	const char *time; /* the timestamp as written */
	struct rl_key key; /* masked source */
	bool has_source;
	__u32 len;
	/*
	 * L4, for rules: RL_PKT_PROTO with a PROTO field, RL_PKT_L4 when it
	 * has a port ("tcp/443": the L4 header is there; "tcp": it is not, as
	 * in a fragment after the first). FLAGS only with tcp and a port.
	 */
	__u8 info;
	__u8 proto;
	__u8 tcp_flags;
	__u16 dport;
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

/*
 * The limiter's decisions replayed in userspace through the shared core,
 * with the levels above the source (user/lib/level.h) in the program's
 * order. The source table never forgets a source (the kernel's evicts).
 */
struct rl_sim {
	struct rl_policy pol;
	struct rl_params params;
	struct rl_level lvl[RL_LVL_N];
	struct rl_srctab tab;
	struct rl_level_sim ls;
	__u64 passed, dropped, new_sources;
	unsigned int level; /* the last packet: the level that refused it (0: its source's) */
};

int rl_sim_init(struct rl_sim *s, const struct rl_policy *pol, char *err, size_t errlen);
void rl_sim_free(struct rl_sim *s);
/*
 * Mask @key by the policy's prefixes first. 1 pass, 0 drop (s->level says
 * which level refused it), -ENOMEM.
 */
int rl_sim_packet(struct rl_sim *s, struct rl_key *key, __u64 now, __u32 len, struct rl_src **src);

/*
 * Rules replayed in userspace: the first matching rule of the set decides
 * (rl_ruleset_match()); a limit rule steps its own per-source state through
 * rl_block_step(), the source masked with that rule's prefixes.
 */
struct rl_rsim {
	const struct rl_ruleset *set;
	struct rl_srctab *tabs; /* per rule: sources of limit rules */
	struct rl_level_sim *ls; /* per rule: the levels of limit rules */
	struct rl_rule_counters *cnt; /* per rule */
};

/* Why a rule passed or dropped a packet. */
enum rl_rule_reason {
	RL_REASON_ALLOWED = 0, /* allow rule */
	RL_REASON_DENIED = 1, /* deny rule */
	RL_REASON_PASSED = 2, /* limit rule, under the limit */
	RL_REASON_LIMITED = 3, /* limit rule, over the limit */
	RL_REASON_BLOCKED = 4, /* limit rule, source blocked */
	RL_REASON_AGG_LIMITED = 5, /* limit rule, its prefix aggregate over the limit */
	RL_REASON_IFACE_LIMITED = 6, /* limit rule, the rule's --iface-rate over the limit */
};

const char *rl_reason_name(enum rl_rule_reason r);

struct rl_rsim_result {
	size_t rule; /* index in the set */
	enum rl_rule_reason reason;
	bool dry_run; /* dropped but for dry-run: passed, counted would_drop */
	struct rl_key key; /* the source as the rule keys it (masked for a limit rule) */
	struct rl_src *src; /* its state (limit rules), else NULL */
};

/* @set must outlive the simulator and not change. -ENOMEM. */
int rl_rsim_init(struct rl_rsim *s, const struct rl_ruleset *set);
void rl_rsim_free(struct rl_rsim *s);
/* One packet at @now of @len bytes: 1 pass, 0 drop, -ENOMEM; what decided in *res. */
int rl_rsim_packet(struct rl_rsim *s, const struct rl_pkt_info *p, __u64 now, __u32 len,
		   struct rl_rsim_result *res);
/* The packet fields of a trace packet (its source unmasked). */
void rl_trace_pkt_info(const struct rl_trace_pkt *pkt, struct rl_pkt_info *p);

#endif /* RL_TRACE_H */
