// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libnftables on demand (see dynlib_nft.h). */
#include "dynlib_nft.h"

struct rl_nft_fns rl_nft;

#define SYM(f) RL_DYN_SYM(struct rl_nft_fns, f)
static const struct rl_dynsym syms[] = { RL_NFT_FNS(SYM) };

static struct rl_dynlib lib = {
	.soname = RL_NFT_SONAME,
	.package = RL_NFT_PACKAGE,
	.syms = syms,
	.nsyms = sizeof(syms) / sizeof(syms[0]),
	.table = &rl_nft,
	.size = sizeof(rl_nft),
};

int rl_nft_load(const char *who, char *err, size_t errlen)
{
	return rl_dynlib_load(&lib, who, err, errlen);
}
