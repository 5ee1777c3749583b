/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The limiters' counters in the Prometheus text exposition format (version
 * 0.0.4), read from the pins of every namespace: what "exporter" serves.
 */
#ifndef RL_METRICS_H
#define RL_METRICS_H

#include <stddef.h>
#include <sys/socket.h>

/*
 * The default address of "exporter": loopback, so that nothing is exposed
 * before the operator decides to. 9977 is in the Prometheus exporters' range
 * (9100-9999); see the man page for how it was picked.
 */
#define RL_EXPORTER_PORT       9977
#define RL_EXPORTER_LISTEN_STR "127.0.0.1:9977"

/*
 * Render every limiter on the host (every pin directory under RL_PIN_ROOT)
 * into a malloc'd buffer *@out of *@len bytes. An interface whose maps cannot
 * be read is left out and counted in xdp_ratelimit_scrape_errors. 0 or -errno.
 */
int rl_metrics_render(char **out, size_t *len);

/*
 * "ADDR:PORT" as --listen takes it: an IPv4 address, an IPv6 one in brackets
 * ([::1]:9977; [::] listens dual-stack, see cmd_exporter.c), a host name
 * (its first IPv4 address, else its first IPv6 one: localhost:9977 is
 * 127.0.0.1), or none (":9977": every IPv4 address). PORT 0 picks a free one.
 * -EINVAL with a message naming what is wrong (a name that does not resolve).
 */
int rl_listen_parse(const char *s, struct sockaddr_storage *ss, char *err, size_t errlen);

#endif /* RL_METRICS_H */
