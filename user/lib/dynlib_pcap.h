/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libpcap, loaded when a command reads or writes a capture (simulate --pcap,
 * events --pcap): see dynlib.h. Call through the table, rl_pcap.pcap_dump(...),
 * after rl_pcap_load().
 */
#ifndef RL_DYNLIB_PCAP_H
#define RL_DYNLIB_PCAP_H

#include <stddef.h>
/*
 * libpcap's classic-BPF header and the kernel's <linux/bpf.h> (libbpf's) both
 * define struct bpf_insn: keep libpcap's out, nothing here compiles filters.
 */
#define lib_pcap_bpf_h
#include <pcap/pcap.h>
#include <pcap/dlt.h>
#include "dynlib.h"

/* The SONAME of the libpcap the project is built against, and its Debian package. */
#define RL_PCAP_SONAME	"libpcap.so.0.8"
#define RL_PCAP_PACKAGE "libpcap0.8"
/* Debian 13's name for it (64-bit time_t). */
#define RL_PCAP_PACKAGE13 "libpcap0.8t64"

#define RL_PCAP_FNS(X)                              \
	X(pcap_fopen_offline_with_tstamp_precision) \
	X(pcap_open_dead_with_tstamp_precision)     \
	X(pcap_next_ex)                             \
	X(pcap_datalink)                            \
	X(pcap_datalink_val_to_name)                \
	X(pcap_datalink_val_to_description)         \
	X(pcap_major_version)                       \
	X(pcap_geterr)                              \
	X(pcap_dump_open)                           \
	X(pcap_dump)                                \
	X(pcap_dump_flush)                          \
	X(pcap_dump_close)                          \
	X(pcap_close)

struct rl_pcap_fns {
	RL_PCAP_FNS(RL_DYN_FIELD)
};

/* Filled by rl_pcap_load(). */
extern struct rl_pcap_fns rl_pcap;

/* Load libpcap for @who ("simulate --pcap"): 0, or -ELIBACC and why in @err (dynlib.h). */
int rl_pcap_load(const char *who, char *err, size_t errlen);

#endif /* RL_DYNLIB_PCAP_H */
