/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The stack's half of SYN cookies (docs/design.md, "SYN cookies"): the XDP
 * program answers SYNs and checks the cookies that come back; netfilter's
 * SYNPROXY in the network stack opens the real connection to the server
 * when a valid cookie's ACK arrives. This unit reads what the SYN-ACK must
 * say from the interface and the stack, and makes the stack ready (or checks
 * it): sysctls and nftables rules, in the current network namespace.
 *
 * --syn-proxy nft: the table "inet xdp_ratelimit" holds, per interface, a
 * chain "raw-IFACE" (prerouting, raw priority: SYNs to the ports untracked)
 * and "in-IFACE" (input: their untracked and invalid packets to synproxy,
 * what is still invalid dropped). Other interfaces' chains and other tables
 * are never touched.
 */
#ifndef RL_SYNPROXY_H
#define RL_SYNPROXY_H

#include <stdbool.h>
#include <stddef.h>
#include "rl_syn.h"

/* The nftables table of --syn-proxy nft, one per network namespace. */
#define RL_SYNPROXY_TABLE "xdp_ratelimit"

/*
 * Fill what the SYN-ACK says on @ifname: the MSS from its MTU (less 40 for
 * IPv4, 60 for IPv6), the window scale the stack would choose (from
 * net.ipv4.tcp_rmem and net.core.rmem_max, as tcp_select_initial_window()),
 * the TTL (net.ipv4.ip_default_ttl). 0 or -errno with a message.
 */
int rl_synproxy_params(const char *ifname, struct rl_syn_cfg *syn, char *err, size_t errlen);

/*
 * --syn-proxy nft: the sysctls and the chains of @ifname for the ports of
 * @syn (replacing what they held, in one nftables transaction). 0, or
 * -errno with a message naming what failed (nothing of the chains made).
 */
int rl_synproxy_setup(const char *ifname, const struct rl_syn_cfg *syn, char *err, size_t errlen);

/*
 * --syn-proxy check: 0 if the sysctls hold the values SYNPROXY needs and
 * the ruleset has a synproxy rule, else -ENOENT and @err naming each thing
 * that is missing.
 */
int rl_synproxy_check(const struct rl_syn_cfg *syn, char *err, size_t errlen);

/*
 * What attach and set do for the stack before the program changes: fill
 * what the SYN-ACK says (rl_synproxy_params(), also without ports: syn-cookies
 * rules answer with it), then, with ports in @syn, set the stack up (@check
 * false: rl_synproxy_setup()) or check it (rl_synproxy_check()). 1 if it made
 * chains (to remove if what follows fails), 0, or -errno with a message.
 */
int rl_synproxy_prepare(const char *ifname, struct rl_syn_cfg *syn, bool check, char *err,
			size_t errlen);

/*
 * Remove the chains of @ifname from the table (and the table when no chain
 * is left). 1 if there were any, 0 if not, -errno with a message.
 */
int rl_synproxy_remove(const char *ifname, char *err, size_t errlen);

#endif /* RL_SYNPROXY_H */
