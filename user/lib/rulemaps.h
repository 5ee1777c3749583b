/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rules in the kernel's maps (docs/design.md, "Rules in the data path"): a
 * rule set compiled into the struct rl_rules_cfg the program is built with,
 * its source prefixes written into a pair of LPM tries, and read back.
 *
 * A change: rl_rules_compile() against the live copy, rl_rules_fill() the
 * pair not in use, load a program with the new rl_rules_cfg and swap it in,
 * then rl_rules_commit() (rl_rules_make_live() of user/lib/xdp_attach.h). Until the swap nothing the live program reads has
 * changed, so any failure before it changes nothing.
 */
#ifndef RL_RULEMAPS_H
#define RL_RULEMAPS_H

#include <stddef.h>
#include <linux/types.h>
#include "maps.h"
#include "rl_rules.h"
#include "rules.h"

/*
 * Compile the rules of @set but "default" into @out against the live copy
 * @old (all zeros when there are no rules yet): a rule whose name is in @old
 * keeps its slot and generation (so its sources' states), a new one takes a
 * free slot with that slot's next generation; @out uses the other pair of
 * tries. A rule that stays but whose states would mean something else (its
 * action, rate parameters or prefixes changed) takes its slot's next
 * generation: its sources start afresh. -EINVAL, with a message.
 */
int rl_rules_compile(const struct rl_ruleset *set, const struct rl_rules_cfg *old,
		     struct rl_rules_cfg *out, char *err, size_t errlen);
/*
 * Write the prefixes of @set into the tries of @cfg->pair (emptied first) and
 * zero the counters of the slots of rules @old did not have (by name). The
 * live program reads neither. @elapsed_ns (optional): the time the tries took.
 */
int rl_rules_fill(const struct rl_pins *pins, const struct rl_ruleset *set,
		  const struct rl_rules_cfg *cfg, const struct rl_rules_cfg *old, __u64 *elapsed_ns,
		  char *err, size_t errlen);
/*
 * The program built for @cfg is live: record @cfg, empty the other pair of
 * tries and delete the per-source states of rules that are gone.
 */
int rl_rules_commit(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, char *err,
		    size_t errlen);
/*
 * The ports the --dport rules of @cfg name, into @bits (rl_rules.h,
 * RL_DPORT_WORDS; per protocol, 0 tcp, 1 udp): the program's rl_dport_bits,
 * made again at every load from the rules it is built with.
 */
void rl_dport_bits_of(const struct rl_rules_cfg *cfg, __u64 bits[2][RL_DPORT_WORDS]);
/* The live copy (all zeros: no rules). */
int rl_rules_read(const struct rl_pins *pins, struct rl_rules_cfg *cfg);
/*
 * The rule set as it is in the maps: the rules of @cfg with their prefixes
 * read back from its tries, then "default" with the policy of @def.
 */
int rl_rules_load(const struct rl_pins *pins, const struct rl_rules_cfg *cfg,
		  const struct rl_config *def, struct rl_ruleset *set, char *err, size_t errlen);
/* The counters of slot @slot summed over CPUs. */
int rl_rules_counters(const struct rl_pins *pins, __u32 slot, struct rl_rule_counters *sum);
/* Sources tracked by the rule in @slot with generation @gen (a walk of rl_rstate). */
int rl_rules_sources(const struct rl_pins *pins, __u32 slot, __u32 gen, __u64 *n);
/*
 * For every rule of @cfg at once (one walk of rl_rstate, where
 * rl_rules_sources() walks it per rule): @sources[i], the sources the rule
 * cfg->r[i] tracks, and @blocked[i], those of them blocked at @now (on the
 * packet clock: CLOCK_MONOTONIC, or its _COARSE for --clock coarse). The
 * arrays hold RL_RULE_SLOTS each. 0 or -errno.
 */
int rl_rules_tally(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, __u64 now,
		   __u64 *sources, __u64 *blocked);

#endif /* RL_RULEMAPS_H */
