// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Jumbo frames: the program is loaded as xdp.frags where the kernel can
 * (user/lib/prog.c), so native mode attaches on a veth of MTU 9000, and a
 * frame that spans buffers costs its whole length (bpf/clock.h,
 * frame_len()).
 *
 *	frags_jumbo_native	MTU 9000, native mode; three 8042-byte pings against
 *				a 20000-byte bucket: two pass, the third is limited
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "netns.h"
#include "probe.h"
#include "test.h"

/* An ICMP echo of 8000 bytes: 8000 + 8 + 20 + 14 bytes on the wire. */
#define JUMBO_PING  8000
#define JUMBO_FRAME (JUMBO_PING + 8 + 20 + 14)

TEST_FLAGS(frags_jumbo_native, RL_TEST_ROOT)
{
	struct rl_counters before, after;
	unsigned long received = 0;
	struct rl_ns ns = {};
	char *out = NULL, *p;

	if (!rl_probe_xdp_frags()) {
		rl_test_skip("this kernel loads no xdp.frags program (5.18 and later do)");
		return;
	}
	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		goto out;
	if (!ASSERT_OK(rl_sh(NULL, "ip -n %s link set %s mtu 9000 && ip -n %s link set %s mtu 9000",
			     ns.tx, ns.tx_if, ns.rx, ns.rx_if),
		       "MTU 9000") ||
	    !ASSERT_OK(rl_sh(NULL, "ip -n %s neigh replace %s lladdr %s dev %s", ns.tx,
			     RL_NS_RX_ADDR4, ns.rx_mac, ns.tx_if),
		       "static neighbour"))
		goto out;
	/* 1000 bytes a second, a bucket of 20000: two jumbo frames fit, not three. */
	if (!ASSERT_EQ(
		    rl_ns_cli(
			    &ns, NULL, NULL,
			    "attach %s --rate 8kbit --burst 20000 --max-sources 4096 --mode native",
			    ns.rx_if),
		    0, "native attach on MTU 9000"))
		goto out;
	if (!ASSERT_OK(rl_ns_counters(&ns, &before), "counters"))
		goto out;
	rl_sh(&out, "ip netns exec %s timeout 10 ping -n -q -c 3 -i 0.01 -W 1 -s %d -M do %s",
	      ns.tx, JUMBO_PING, RL_NS_RX_ADDR4);
	p = out ? strstr(out, "transmitted, ") : NULL;
	if (p)
		received = strtoul(p + strlen("transmitted, "), NULL, 10);
	free(out);
	out = NULL;
	if (!ASSERT_OK(rl_ns_counters(&ns, &after), "counters"))
		goto out;
	printf("    3 pings of %d bytes: %lu answered, limited %llu, IPv4 bytes passed %llu\n",
	       JUMBO_FRAME, received, (unsigned long long)(after.limited - before.limited),
	       (unsigned long long)(after.passed_bytes - before.passed_bytes));
	ASSERT_EQ(received, 2, "two jumbo pings fit the bucket");
	ASSERT_EQ(after.limited - before.limited, 1,
		  "the third is limited: it costs its whole length");
	ASSERT_TRUE(after.passed_bytes - before.passed_bytes >= 2 * JUMBO_FRAME,
		    "passed bytes count whole frames");
out:
	rl_ns_destroy(&ns);
}
