// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libpcap on demand (see dynlib_pcap.h). */
#include "dynlib_pcap.h"

struct rl_pcap_fns rl_pcap;

#define SYM(f) RL_DYN_SYM(struct rl_pcap_fns, f)
static const struct rl_dynsym syms[] = { RL_PCAP_FNS(SYM) };

static struct rl_dynlib lib = {
	.soname = RL_PCAP_SONAME,
	.package = RL_PCAP_PACKAGE,
	.package13 = RL_PCAP_PACKAGE13,
	.syms = syms,
	.nsyms = sizeof(syms) / sizeof(syms[0]),
	.table = &rl_pcap,
	.size = sizeof(rl_pcap),
};

int rl_pcap_load(const char *who, char *err, size_t errlen)
{
	return rl_dynlib_load(&lib, who, err, errlen);
}
