/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Capture files for the tests of simulate --pcap, written with libpcap (as
 * tcpdump writes them): Ethernet frames as they are, or wrapped in a Linux
 * cooked header (SLL, SLL2) as tcpdump -i any writes them, nanosecond
 * timestamps. A file is made whole or not at all (pf_write() removes a
 * partial one).
 */
#ifndef RL_PCAPFILE_H
#define RL_PCAPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* How records are written. */
enum pf_link {
	PF_ETHER, /* DLT_EN10MB: the frame */
	PF_SLL, /* DLT_LINUX_SLL: a 16-byte cooked header, then the frame after its Ethernet header */
	PF_SLL2, /* DLT_LINUX_SLL2: the same with the 20-byte header */
};

/* One record: an Ethernet frame, the bytes captured of it, when. */
struct pf_rec {
	const __u8 *data;
	__u32 caplen, len; /* caplen <= len: a snapped frame */
	__u64 ns;
	bool outgoing; /* cooked: marked as sent by the host (PACKET_OUTGOING) */
};

/* Write @n records to @path. 0, or -1 with a message on stderr. */
int pf_write(const char *path, enum pf_link link, const struct pf_rec *r, size_t n);

/* A new temporary file name (the file made empty) under /tmp, with @suffix; 0 or -1. */
int pf_tmpname(char *path, size_t len, const char *suffix);

#endif /* RL_PCAPFILE_H */
