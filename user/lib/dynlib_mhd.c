// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libmicrohttpd on demand (see dynlib_mhd.h). */
#include "dynlib_mhd.h"

struct rl_mhd_fns rl_mhd;

#define SYM(f) RL_DYN_SYM(struct rl_mhd_fns, f)
static const struct rl_dynsym syms[] = { RL_MHD_FNS(SYM) };

static struct rl_dynlib lib = {
	.soname = RL_MHD_SONAME,
	.package = RL_MHD_PACKAGE,
	.package13 = RL_MHD_PACKAGE13,
	.syms = syms,
	.nsyms = sizeof(syms) / sizeof(syms[0]),
	.table = &rl_mhd,
	.size = sizeof(rl_mhd),
};

int rl_mhd_load(const char *who, char *err, size_t errlen)
{
	return rl_dynlib_load(&lib, who, err, errlen);
}
