/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Attaching, detaching and finding the limiter on an interface: libxdp, libbpf, bpffs pins. */
#ifndef RL_LOADER_H
#define RL_LOADER_H

#include <stdbool.h>
#include <linux/types.h>
#include <net/if.h>
#include <limits.h>
#include "rl_common.h"

enum rl_mode {
	RL_MODE_NATIVE = 0,
	RL_MODE_SKB = 1,
};

struct rl_iface {
	char name[IF_NAMESIZE];
	char pinname[IF_NAMESIZE];	/* name with '.' replaced by '_' */
	int ifindex;
	char pindir[PATH_MAX];
};

/* File descriptors of the pinned maps of one attachment. */
struct rl_pins {
	int state, config, ctl, counters;
};

/* Route libbpf's and libxdp's messages through our log (shown with -v). */
void rl_loader_quiet(void);
/* Root, and bpffs mounted at /sys/fs/bpf (mounting it if needed). 0 or -errno with a message. */
int rl_check_env(char *err, size_t errlen);
/* What attach needs from the kernel: XDP, LRU hash maps, BPF compare-and-swap (and BTF). */
int rl_check_kernel(char *err, size_t errlen);
/* Look up an interface by name; fills the pin directory. */
int rl_iface_get(const char *name, struct rl_iface *ifc, char *err, size_t errlen);
/* Is the limiter's pin directory there? */
bool rl_is_attached(const struct rl_iface *ifc);

/* What is on an interface: consistent, nothing, or what a killed command left. */
enum rl_presence {
	RL_ABSENT,		/* neither program nor pins */
	RL_PRESENT,		/* our program, using the pinned maps */
	RL_ORPHAN_PROG,		/* our program without (its) pins: an attach was killed */
	RL_STALE_PINS,		/* pins without the program: a detach was killed */
	RL_FOREIGN_PINS,	/* pins of a same-named interface elsewhere */
};
enum rl_presence rl_presence(const struct rl_iface *ifc);

/* An exclusive lock for attach, set and detach; returns an fd for rl_unlock(). */
int rl_lock(void);
void rl_unlock(int fd);

int rl_attach(const struct rl_iface *ifc, enum rl_mode mode, __u32 max_sources,
	      const struct rl_config *cfg, char *err, size_t errlen);
int rl_detach(const struct rl_iface *ifc, char *err, size_t errlen);

/* Remove the pins of an interface that no longer exists; -ENOENT if it has none. */
int rl_unpin_gone(const char *name);

int rl_pins_open(const struct rl_iface *ifc, struct rl_pins *pins, char *err, size_t errlen);
void rl_pins_close(struct rl_pins *pins);

/* The live configuration and its slot. */
int rl_config_read(const struct rl_pins *pins, struct rl_config *cfg, __u32 *active);
/* Write @cfg into the slot not in use, then make it live with one 32-bit write. */
int rl_config_swap(const struct rl_pins *pins, const struct rl_config *cfg, __u32 active);
/*
 * After a set that made slot @live live: move every source's state to the new
 * generation (see migrate.c) and then stop the lookups of the old one.
 * *moved counts the states moved.
 */
int rl_migrate(const struct rl_pins *pins, const struct rl_config *cfg, __u32 live,
	       __u64 *moved);
/* The per-CPU counters in map @map_fd, summed over every possible CPU. */
int rl_counters_sum(int map_fd, struct rl_counters *sum);
/* Counters summed over CPUs. */
int rl_counters_read(const struct rl_pins *pins, struct rl_counters *sum);
/* The mode the program is attached in ("native", "skb", ...), or "not attached". */
const char *rl_attach_mode(const struct rl_iface *ifc);
/* Sources tracked under generation @gen (a walk of the table: not for every second). */
int rl_count_sources(const struct rl_pins *pins, __u32 gen, __u64 *n);
/* The interfaces with a pin directory, one name per call; 0 at the end. */
int rl_list_attached(char names[][IF_NAMESIZE], int max);

#endif /* RL_LOADER_H */
