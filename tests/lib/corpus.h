/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A corpus of frames for the replay tests: every kind the XDP program tells
 * apart (IPv4 with options and fragments, VLAN and QinQ, IPv6 with extension
 * headers, neighbour discovery, link-local and IPv4-mapped sources, TCP and
 * UDP ports for rules, ARP and LLDP, each malformed reason, L4 headers cut
 * short), from a small pool of sources so that limits bite, at times with
 * small gaps and now and then an idle second, and a share of them mutated
 * (bytes flipped, tails cut). Seeded: the same corpus for the same seed.
 */
#ifndef RL_CORPUS_H
#define RL_CORPUS_H

#include <stddef.h>
#include <linux/types.h>
#include "frames.h"
#include "pcapfile.h"

struct corpus {
	struct frame *f;
	struct pf_rec *r; /* r[i] is f[i], whole (caplen = len), at its time */
	size_t n;
	unsigned long kinds[32]; /* how many of each kind (coverage) */
	unsigned long mutated; /* with a byte flipped or the tail cut */
};

/* @n frames from time @t0; 0, or -1 (out of memory). */
int corpus_make(struct corpus *c, size_t n, __u64 t0, unsigned long long seed);
void corpus_free(struct corpus *c);

#endif /* RL_CORPUS_H */
