/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The steps of the set-associative protocol on one set of slot words
 * (include/rl_sa.h; bench/bpf/bench_sa.bpf.c proves the protocol exact): the
 * source's slot, the victim of an insertion and the check for another copy
 * of the source. Of the set's words alone, with no map and no
 * configuration, so that the product (bpf/table4_sa.h) and the bench's study
 * (bench/bpf/bench_sa.bpf.c) run the same code; for any set type with a
 * w[RL_SA_WAYS] array of words.
 *
 * Statement macros rather than functions: clang simplifies an inlined
 * function's loop on its own before it inlines it, which changes the code of
 * sa_miss4() (a victim loop unrolled, a hundred instructions more after the
 * verifier's pruning); as macros the code is the one written in place.
 *
 * Includes include/rl_sa.h and libbpf's headers only.
 */
#ifndef RL_BPF_SA_SET_H
#define RL_BPF_SA_SET_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "rl_sa.h"

/*
 * The first slot of @set whose used, generation and tag bits (under @idm)
 * are @id: the source's, pending or not. Sets @hit to its index (-1 if
 * none) and @word to its word.
 */
#define SA_FIND(set, id, idm, hit, word)                           \
	do {                                                       \
		int i_;                                            \
                                                                   \
		(hit) = -1;                                        \
		for (i_ = 0; i_ < RL_SA_WAYS; i_++) {              \
			(word) = *(volatile __u64 *)&(set)->w[i_]; \
			if (((word) & (idm)) == (id)) {            \
				(hit) = i_;                        \
				break;                             \
			}                                          \
		}                                                  \
	} while (0)

/*
 * The victim of an insertion in @set: an empty slot, else, among the
 * sources not seen again (one packet passed since they were inserted), then
 * among those seen again, the one least ahead of the reference @ref (never a
 * pending one): the source that waited longest since its last passed
 * packet, whose loss changes least. So one-packet sources (a spoofed flood)
 * evict each other, never a source seen again, unless every slot holds one.
 * Sets @victim to its index (-1 when every slot is pending) and @vw to its
 * word (0 for an empty slot). A seen source's rank gets RL_SA_SEEN_RANK
 * by a multiply, not a branch: half the verifier's paths through the loop.
 */
#define SA_VICTIM(set, ref, bits, victim, vw)                                                  \
	do {                                                                                   \
		__s64 best_ = 0x7fffffffffffffffLL;                                            \
		__u64 w_;                                                                      \
		int i_;                                                                        \
                                                                                               \
		(victim) = -1;                                                                 \
		(vw) = 0;                                                                      \
		for (i_ = 0; i_ < RL_SA_WAYS; i_++) {                                          \
			__s64 ahead_;                                                          \
                                                                                               \
			w_ = *(volatile __u64 *)&(set)->w[i_];                                 \
			if (!w_) {                                                             \
				(victim) = i_;                                                 \
				(vw) = 0;                                                      \
				break;                                                         \
			}                                                                      \
			if (w_ & RL_SA_PEND)                                                   \
				continue;                                                      \
			ahead_ = (__s64)(rl_sa_get(w_, (ref), (bits)) - (ref));                \
			ahead_ += (__s64)((w_ & RL_SA_SEEN) * (RL_SA_SEEN_RANK / RL_SA_SEEN)); \
			if (ahead_ < best_) {                                                  \
				best_ = ahead_;                                                \
				(victim) = i_;                                                 \
				(vw) = w_;                                                     \
			}                                                                      \
		}                                                                              \
	} while (0)

/*
 * After claiming slot @victim of @set as pending: sets @twin to whether
 * another slot holds the source @id (under @idm; pending or not), read
 * again. If one does, another CPU is inserting the source or it is in, and
 * the claim must be undone.
 */
#define SA_TWIN(set, victim, id, idm, twin)                    \
	do {                                                   \
		__u64 w_;                                      \
		int i_;                                        \
                                                               \
		for (i_ = 0; i_ < RL_SA_WAYS; i_++) {          \
			if (i_ == (victim))                    \
				continue;                      \
			w_ = *(volatile __u64 *)&(set)->w[i_]; \
			if ((w_ & (idm)) == (id))              \
				break;                         \
		}                                              \
		(twin) = i_ < RL_SA_WAYS;                      \
	} while (0)

#endif /* RL_BPF_SA_SET_H */
