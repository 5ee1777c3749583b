/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Drop samples from userspace: turning sampling on and off in a limiter's
 * rl_evctl (include/rl_events.h) and naming what a sample says. The events
 * command reads the ring; tests use these directly.
 */
#ifndef RL_EVENTS_USER_H
#define RL_EVENTS_USER_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "maps.h"
#include "rl_events.h"

/*
 * Turn sampling on for reader @pid: 1 in @one_in drops (per CPU), at most
 * @max_rate a second. Refused with -EBUSY (and a message) when another live
 * process reads (its pid is in rl_evctl and kill(pid, 0) finds it); a reader
 * that died without turning sampling off is taken over. Resets the per-CPU
 * countdowns and the cap's window, so the first drop after it is picked.
 */
int rl_events_enable(const struct rl_pins *pins, __u32 one_in, __u32 max_rate, pid_t pid, char *err,
		     size_t errlen);
/* Turn sampling off, if @pid is still the reader (0: whoever it is). */
int rl_events_disable(const struct rl_pins *pins, pid_t pid);
/* The per-CPU tallies (sent, capped, lost) summed over CPUs. */
int rl_events_tally(const struct rl_pins *pins, struct rl_evcpu *sum);
/* "limited", "would-drop", "malformed-ipv4"...; "unknown" past the enum. */
const char *rl_ev_reason_name(__u32 reason);
/*
 * A sample's reason with the level that refused it: "limited" (its
 * source's limit), "limited-aggregate", "would-drop-iface", "limited-new"
 * (include/rl_agg.h's levels).
 */
const char *rl_ev_what(const struct rl_event *e, char *buf, size_t len);

#endif /* RL_EVENTS_USER_H */
