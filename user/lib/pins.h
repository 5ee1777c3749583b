/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where a limiter's maps are pinned, and whose they are.
 *
 * Interface names are unique only within a network namespace, and bpffs refuses
 * '.' in names, so the pins are keyed by namespace, then by the encoded name:
 *
 *   /sys/fs/bpf/xdp-ratelimit/               RL_PIN_ROOT, 0700
 *     netns-4026531840/                      one directory per network namespace: the
 *                                            inode of /proc/self/ns/net there (what
 *                                            `ls -iL /proc/PID/ns/net` and lsns show)
 *       eth0/                                one per interface, named by its name with
 *       eth0%2e100/                          '.' written %2e and '%' written %25 (and
 *                                            nothing else changed): eth0.100 here, and
 *                                            eth0_100 stays eth0_100, so no two collide
 *         rl_state4 rl_sets4 ...             the maps, 0600: one pin per row of RL_MAPS()
 *                                            (user/lib/maplist.h), named as its map
 *   /sys/fs/bpf/xdp-ratelimit-staging/       the same tree: attach pins there first and
 *                                            renames the directory into place
 *
 * rl_ctl also records the ifindex and the namespace inode the maps were made for.
 * Interfaces that share one limiter (attach --share) each have a directory of
 * pins of the same maps; rl_ctl then names one of them, its owner, handed over
 * to another member when the owner is detached (see rl_pins_owned()).
 * Pins whose maps no loaded program uses are orphans: their namespace was deleted,
 * their interface removed, or a command was killed (see rl_list_orphans()).
 */
#ifndef RL_PINS_H
#define RL_PINS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <net/if.h>
#include <linux/types.h>
#include "maplist.h"
#include "rl_common.h"

#define RL_STAGING_ROOT RL_PIN_ROOT "-staging"
/* An encoded interface name: at worst every character becomes three. */
#define RL_PINNAME_MAX (3 * IF_NAMESIZE)

struct rl_iface {
	char name[IF_NAMESIZE];
	char pinname[RL_PINNAME_MAX]; /* the name encoded for bpffs */
	int ifindex; /* 0: no such interface (any more) */
	__u64 netns_ino; /* our network namespace */
	char pindir[PATH_MAX];
};

/* The bpffs name of interface @name (see above). 0, or -EINVAL if it is not a valid name. */
int rl_pin_encode(const char *name, char *out, size_t len);
/* The reverse: 0, or -EINVAL if @enc is no encoding of an interface name. */
int rl_pin_decode(const char *enc, char *name, size_t len);
/* The pin directory of @name in the namespace with inode @netns_ino (under @root). */
int rl_pin_dir(const char *root, __u64 netns_ino, const char *name, char *out, size_t len);

/* Look up an interface of our namespace by name; fills the pin directory. */
int rl_iface_get(const char *name, struct rl_iface *ifc, char *err, size_t errlen);
/* Is the limiter's pin directory there? */
bool rl_is_attached(const struct rl_iface *ifc);
/*
 * Do the pins belong to this interface in this namespace? Yes if rl_ctl names
 * it, or if it runs a program on these maps (it shares the limiter). Pins
 * whose maps no program uses are nobody's: they count as ours, to be replaced
 * or removed; so do pins of a shared limiter when every interface that runs it
 * has pins of its own (ours were left by a killed attach --share or detach).
 */
bool rl_pins_owned(const struct rl_iface *ifc);
/* The message for pins that are not ours (see rl_pins_owned()). */
void rl_pins_foreign_msg(const struct rl_iface *ifc, char *err, size_t errlen);
/* Does the program @prog_fd use the maps pinned for @ifc? 1, 0, or -errno: could not tell. */
int rl_prog_uses_pins(int prog_fd, const struct rl_iface *ifc);
/*
 * The id of the rl_counters map pinned in @pindir, 0 if none: it names a
 * limiter, whichever interfaces share it.
 */
__u32 rl_pins_id(const char *pindir);
/* Does the program @prog_fd use the map with id @map_id? 1, 0, or -errno. */
int rl_prog_uses_map(int prog_fd, __u32 map_id);

/*
 * Several interfaces of one namespace may share one limiter (attach
 * --share): one program and one set of maps, so a source is limited across
 * them together. Its members are the interfaces whose attached program uses
 * its maps; each has its own directory of pins of the same maps.
 */
#define RL_MAX_MEMBERS 64
/*
 * The names of our XDP program, as the kernel reports them: with rules,
 * SYN cookies and levels, and without (bpf/xdp_ratelimit.bpf.c).
 */
#define RL_PROG_NAME	   "xdp_ratelimit"
#define RL_PROG_NAME_BASIC "xdp_ratelimit_b"

/* Is @name one of our XDP program's? */
static inline bool rl_prog_name_ours(const char *name)
{
	return name && (!strcmp(name, RL_PROG_NAME) || !strcmp(name, RL_PROG_NAME_BASIC));
}

struct rl_member {
	char name[IF_NAMESIZE];
	int ifindex;
};

/*
 * The interfaces of our namespace whose program, attached alone, uses the
 * map with id @limiter_id (rl_pins_id()). Returns how many, -E2BIG if there
 * are more than @max, or -errno if what is attached could not be read.
 */
int rl_members_of(__u32 limiter_id, struct rl_member *m, int max);
/* The members of the limiter pinned for @ifc (0 if it has no pins). */
int rl_members(const struct rl_iface *ifc, struct rl_member *m, int max);

/*
 * The program attached alone to @ifindex, the way this version attaches:
 * 1 with its fd in *fd (to close) and XDP_FLAGS_*_MODE in *mode, 0 if there
 * is none of ours attached alone, -errno if we could not tell. A program
 * behind libxdp's dispatcher is user/lib/xdp_attach.c's to find: 0.
 */
int rl_prog_alone(int ifindex, int *fd, __u32 *mode);

/* Pin the maps @fds (struct rl_pins order) for @ifc: whole or not at all. */
int rl_pins_make(const struct rl_iface *ifc, const int fds[RL_N_MAPS], char *err, size_t errlen);
/* Remove the pins of @ifc (and a staging copy), and the directories left empty. */
void rl_pins_remove(const struct rl_iface *ifc);
/*
 * detach of an interface that no longer exists in our namespace: remove its
 * pins. 0, -ENOENT if it has none, -EBUSY if a program still uses them.
 */
int rl_unpin_gone(const char *name);

/* Pin map @fd as @name (one of rl_map_names[]) of @ifc in place of the one pinned there. */
int rl_pins_replace(const struct rl_iface *ifc, const char *name, int fd, char *err, size_t errlen);
/*
 * Open the pinned maps in the pin directory @pindir, without asking whose
 * they are (the exporter, which lists directories; rl_pins_open() of
 * user/lib/xdp_attach.h asks first): every map opened and checked by
 * rl_pins_check(), or none (and -errno with the reason in @err).
 */
int rl_pins_open_dir(const char *pindir, struct rl_pins *pins, char *err, size_t errlen);
void rl_pins_close(struct rl_pins *pins);
/*
 * Are the maps @pins (opened from @pindir) laid out as this build's object
 * declares them (type, key and value size)? A limiter made by another version
 * would otherwise have its maps read into buffers of the wrong size. 0, or
 * -EPROTO with the map and both layouts in @err.
 */
/* bpf_map_lookup_elem() into @value of @size bytes: -EPROTO if the map's values are not. */
int rl_map_lookup_sized(int fd, const void *key, void *value, __u32 size);
int rl_pins_check(const struct rl_pins *pins, const char *pindir, char *err, size_t errlen);

/* The interfaces of our namespace with a pin directory; returns how many (at most @max). */
int rl_list_attached(char names[][IF_NAMESIZE], int max);

/* A limiter's pin directory in any namespace (rl_list_pinned()). */
struct rl_pinned {
	char name[IF_NAMESIZE]; /* the interface, decoded */
	__u64 netns_ino; /* its namespace */
	char pindir[PATH_MAX];
	bool orphan; /* no loaded program uses its maps */
};
/*
 * Every pin directory under RL_PIN_ROOT/netns-INODE/, in every namespace, with
 * orphans marked; returns how many (at most @max). Telling an orphan costs a
 * walk of the loaded programs per map: it is meant for a scrape, not a packet.
 */
int rl_list_pinned(struct rl_pinned *p, int max);

/* A pin directory whose maps no loaded program uses. */
struct rl_orphan {
	char path[PATH_MAX];
	char name[IF_NAMESIZE]; /* the interface it was made for */
	__u64 netns_ino; /* in this namespace */
	__u32 ifindex; /* from rl_ctl; 0 if unreadable */
};
/* Every orphaned pin directory on the host, in any namespace; returns how many (<= @max). */
int rl_list_orphans(struct rl_orphan *o, int max);
/* Remove one if it is still an orphan: 0, -EBUSY if a program uses it now, or -errno. */
int rl_orphan_remove(const struct rl_orphan *o);

#endif /* RL_PINS_H */
