// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One TCP flow (iperf3) through the limiter on a veth pair, with the burst
 * the README recommends for TCP (rate x 200 ms): it must get at least 80%
 * of a 100 Mbit/s byte rate, and not more than the rate allows. attach and
 * set stay quiet at that burst and warn below it.
 *
 *	tcp_burst_reaches_rate
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "netns.h"
#include "test.h"

#define IPERF_PORT 5201
/* Measured after the first second (iperf3 -O 1): the steady state, not slow start. */
#define IPERF_SECONDS 4
#define BURST	      2500000.0
#define RATE_BPS      100e6

/* Received bits per second from iperf3 -J output (end.sum_received), or -1. */
static double received_bps(const char *json)
{
	const char *p = json ? strstr(json, "\"sum_received\"") : NULL;

	if (!p || !(p = strstr(p, "\"bits_per_second\":")))
		return -1;
	return strtod(p + strlen("\"bits_per_second\":"), NULL);
}

TEST_FLAGS(tcp_burst_reaches_rate, RL_TEST_ROOT)
{
	struct rl_ns ns = {};
	char *out = NULL, *err = NULL, *cmd = NULL;
	long server = 0;
	double bps;

	if (rl_run("command -v iperf3 >/dev/null", NULL, NULL)) {
		rl_test_skip("iperf3 is not installed (Debian package iperf3; make deps)");
		return;
	}
	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		goto out;
	if (!ASSERT_OK(rl_ns_cli(&ns, NULL, &err, "attach %s --rate 100mbit --burst 2500000",
				 ns.rx_if),
		       "attach"))
		goto out;
	ASSERT_TRUE(err && !strstr(err, "warning"), "no warning at rate x 200 ms");
	free(err);
	err = NULL;
	/* Below rate x 200 ms: a warning, and the change is made all the same. */
	ASSERT_OK(rl_ns_cli(&ns, NULL, &err, "set %s --burst 150000", ns.rx_if),
		  "set, short burst");
	ASSERT_CONTAINS(err, "warning: --burst 150000 bytes is under 200 ms at 100 Mbit/s",
			"set warns");
	free(err);
	err = NULL;
	if (!ASSERT_OK(rl_ns_cli(&ns, NULL, NULL, "set %s --burst 2500000", ns.rx_if), "set back"))
		goto out;

	/* The server takes one client and is bounded in time; its pid to stop it early. */
	if (asprintf(
		    &cmd,
		    "ip netns exec %s timeout 20 iperf3 -s -1 -B %s -p %d >/dev/null 2>&1 & echo $!",
		    ns.rx, RL_NS_RX_ADDR4, IPERF_PORT) < 0)
		goto out;
	rl_run(cmd, &out, NULL);
	free(cmd);
	cmd = NULL;
	server = out ? strtol(out, NULL, 10) : 0;
	free(out);
	out = NULL;
	if (!ASSERT_TRUE(server > 0, "iperf3 server started"))
		goto out;
	/* Wait (at most 2 s) until it listens. */
	for (int i = 0; i < 40; i++) {
		if (!rl_ns_rx_sh(&ns, NULL, "ss -Hltn sport = :%d | grep -q LISTEN", IPERF_PORT))
			break;
		usleep(50000);
	}
	if (asprintf(&cmd, "ip netns exec %s timeout %d iperf3 -c %s -p %d -t %d -O 1 -J", ns.tx,
		     IPERF_SECONDS + 10, RL_NS_RX_ADDR4, IPERF_PORT, IPERF_SECONDS) < 0)
		goto out;
	if (!ASSERT_OK(rl_run(cmd, &out, NULL), "iperf3 client"))
		goto out;
	bps = received_bps(out);
	printf("    TCP through a 100 Mbit/s limit, burst 2500000 bytes: %.1f Mbit/s received\n",
	       bps / 1e6);
	ASSERT_LE(0.8 * RATE_BPS, bps, "at least 80% of the rate");
	/* Frames are counted with their headers: goodput stays under the rate, plus the burst. */
	ASSERT_LE(bps, RATE_BPS + 8 * BURST / IPERF_SECONDS, "no more than the rate allows");
out:
	if (server > 0)
		kill((pid_t)server, SIGTERM);
	free(cmd);
	free(out);
	free(err);
	rl_ns_destroy(&ns);
}
