/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Attaching, replacing and detaching the limiter, and what is on an interface. */
#ifndef RL_XDP_ATTACH_H
#define RL_XDP_ATTACH_H

#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>
#include "attach_mode.h"
#include "pins.h"
#include "rl_common.h"

/* Route libbpf's and libxdp's messages through our log (shown with -v). */
void rl_loader_quiet(void);

/* What is on an interface: consistent, nothing, or what a killed command left. */
enum rl_presence {
	RL_ABSENT, /* neither program nor pins */
	RL_PRESENT, /* our program, using the pinned maps */
	RL_ORPHAN_PROG, /* our program without (its) pins: an attach was killed */
	RL_STALE_PINS, /* pins without the program: a detach was killed */
	RL_FOREIGN_PINS, /* pins in use by another interface (renamed since) */
	RL_UNKNOWN, /* couldn't tell (out of file descriptors, ...): errno says why */
};
enum rl_presence rl_presence(const struct rl_iface *ifc);
/* Open the pinned maps of the limiter on @ifc (checked to be attached and ours). */
int rl_pins_open(const struct rl_iface *ifc, struct rl_pins *pins, char *err, size_t errlen);

/* Call these holding rl_lock(). */
int rl_attach(const struct rl_iface *ifc, enum rl_mode mode, __u32 max_sources, __u32 max_sources6,
	      const struct rl_config *cfg, char *err, size_t errlen);
/*
 * rl_attach() with the rules of @set (NULL: none) from the start: compiled
 * into the one program attached, their prefixes written into the new maps
 * before the attach, so no packet meets the policy without them.
 */
struct rl_ruleset;
int rl_attach_rules(const struct rl_iface *ifc, enum rl_mode mode, __u32 max_sources,
		    __u32 max_sources6, const struct rl_config *cfg, const struct rl_ruleset *set,
		    char *err, size_t errlen);
/*
 * Attach the limiter that runs on @with to @ifc as well: the same program,
 * so the same maps, pinned again for @ifc. As rl_attach(), the attach is the
 * commit point.
 */
int rl_attach_share(const struct rl_iface *ifc, const struct rl_iface *with, enum rl_mode mode,
		    char *err, size_t errlen);
/*
 * Swap the attached program for @prog_fd in one step on @ifc and on every
 * interface that shares its limiter: every packet is seen by the old program
 * or by the new one. Fails, changing nothing, if the program on an interface
 * is not the one found just before; a member that fails after others were
 * swapped puts them back. Only if that fails too does it return
 * -ENOTRECOVERABLE: each member then runs the old program or the new one,
 * both on the same maps, as @err says.
 */
int rl_replace(const struct rl_iface *ifc, int prog_fd, char *err, size_t errlen);
/*
 * set: make @cfg (built against the live copy read from slot @active) live
 * on @ifc. Loads its program on the live maps and swaps it in, records the
 * copy for status, moves the states to the new generation and deletes the
 * rest (rl_migrate()), then swaps in a program that no longer looks up the
 * old generation. < 0: nothing changed; 0: done; > 0: @cfg is live but a
 * later step failed (@err says which, for a warning).
 */
struct rl_pins;
int rl_set_live(const struct rl_iface *ifc, const struct rl_pins *pins, const struct rl_config *cfg,
		__u32 active, __u64 *moved, char *err, size_t errlen);
/*
 * rl_set_live() that also makes the rules of @set live (NULL: the live ones
 * stay), in the same swap: the new rules are compiled against the live ones
 * and their prefixes written into the tries the live program does not read
 * before it, and one program carries both the policy and the rules. Killed
 * at any moment, the limiter runs the old policy and rules or the new ones;
 * the program is the record readers go by (rl_live_compiled()), the copies
 * for status are rewritten after it (the rules' with rl_rules_commit()).
 */
int rl_set_live_rules(const struct rl_iface *ifc, const struct rl_pins *pins,
		      const struct rl_config *cfg, __u32 active, const struct rl_ruleset *set,
		      __u64 *moved, char *err, size_t errlen);
/*
 * The whole change on the limiter of @ifc (call it holding rl_lock()): make
 * @set live with the default rule's configuration @def, against the live
 * copy @old; the new copy in *@out. Compiles, fills, loads a program built
 * for it on the live maps, swaps it in (rl_replace()), commits. < 0: nothing
 * changed (@err ends in "nothing changed"); 0: done; 1: the new rules are
 * live but the cleanup failed (@err says what, for a warning).
 */
struct rl_rules_cfg;
int rl_rules_make_live(const struct rl_iface *ifc, const struct rl_pins *pins,
		       const struct rl_config *def, const struct rl_rules_cfg *old,
		       const struct rl_ruleset *set, struct rl_rules_cfg *out, char *err,
		       size_t errlen);
/*
 * Load the program for @cfg (the live rules) on the live maps @pins and swap
 * it in on @ifc and on every member, as set does but with nothing else
 * changed (sync_kern.c turns counting on and off with it). The maps of the
 * features @cfg turns on are made at full size before the swap, those it
 * turns off again with one entry (rl_map_entries()), and pinned after it;
 * @pins then holds the maps live (those it replaced are closed). < 0:
 * nothing changed; 0: done; 1: the program is live but a pin couldn't be
 * replaced (@err says which).
 */
int rl_swap_live(const struct rl_iface *ifc, struct rl_pins *pins, const struct rl_config *cfg,
		 char *err, size_t errlen);
/*
 * A command killed between the members of a shared limiter leaves them
 * running different programs (both on its maps, one with the policy before).
 * If they do, swap in the program for @cfg, the live copy, on every member:
 * 1 if it did, 0 if they ran one program already, or -errno.
 */
int rl_members_converge(const struct rl_iface *ifc, const struct rl_pins *pins,
			const struct rl_config *cfg, char *err, size_t errlen);
/* The id of our attached program, 0 if none. */
__u32 rl_attached_prog_id(const struct rl_iface *ifc);
/*
 * Detach from @ifc and remove its pins. A member of a shared limiter leaves
 * the others running it; if rl_ctl names @ifc, it is handed to one of them.
 */
int rl_detach(const struct rl_iface *ifc, char *err, size_t errlen);

/* The mode the program is attached in ("native", "skb", ...), or "not attached". */
const char *rl_attach_mode(const struct rl_iface *ifc);

#endif /* RL_XDP_ATTACH_H */
