/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libnftables, loaded when --syn-cookies sets up or checks netfilter's
 * SYNPROXY (see dynlib.h). Call through the table, rl_nft.nft_ctx_new(...),
 * after rl_nft_load().
 */
#ifndef RL_DYNLIB_NFT_H
#define RL_DYNLIB_NFT_H

#include <stddef.h>
#include <nftables/libnftables.h>
#include "dynlib.h"

/* The SONAME of the libnftables the project is built against, and its Debian package. */
#define RL_NFT_SONAME  "libnftables.so.1"
#define RL_NFT_PACKAGE "libnftables1"

#define RL_NFT_FNS(X)                \
	X(nft_ctx_new)               \
	X(nft_ctx_free)              \
	X(nft_ctx_buffer_output)     \
	X(nft_ctx_buffer_error)      \
	X(nft_ctx_get_output_buffer) \
	X(nft_ctx_get_error_buffer)  \
	X(nft_run_cmd_from_buffer)

struct rl_nft_fns {
	RL_NFT_FNS(RL_DYN_FIELD)
};

/* Filled by rl_nft_load(). */
extern struct rl_nft_fns rl_nft;

/* Load libnftables for @who ("--syn-proxy nft"): 0, or -ELIBACC and why in @err (dynlib.h). */
int rl_nft_load(const char *who, char *err, size_t errlen);

#endif /* RL_DYNLIB_NFT_H */
