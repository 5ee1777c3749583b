// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * exporter: GET /metrics in the Prometheus text format, over libmicrohttpd.
 *
 * One thread per connection (MHD_USE_THREAD_PER_CONNECTION): a client that
 * sends its request a byte a minute holds its own thread only, never the
 * others', and MHD_OPTION_CONNECTION_TIMEOUT ends it. The number of
 * connections, so of threads, is bounded; each connection's memory (request
 * line and headers included) is bounded too, so a huge header is refused.
 * Scrapes are serialized: two Prometheus servers scraping at once walk the
 * source tables one after the other, not both on one CPU each.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include "cli.h"
#include "env.h"
#include "metrics.h"

/* Connections at once: scrapers are few; more only queue in the kernel's backlog. */
#define MAX_CONNS 32
/* Per connection, request and headers included: a scrape request is a few hundred bytes. */
#define CONN_MEMORY (16 * 1024)
/* Seconds a connection may stay idle before it is closed. */
#define CONN_TIMEOUT 10

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

static pthread_mutex_t scrape_lock = PTHREAD_MUTEX_INITIALIZER;

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *text)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len;
	char *body;
	int err;

	(void)cls;
	(void)version;
	(void)upload;
	/* Called first with the headers only: answer on the second call, as MHD wants. */
	if (!*req) {
		*req = (void *)1;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* a body we never read */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK, RL_PROG " exporter: the metrics are at /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
	pthread_mutex_lock(&scrape_lock);
	err = rl_metrics_render(&body, &len);
	pthread_mutex_unlock(&scrape_lock);
	if (err) {
		pr_warn("exporter: couldn't render the metrics: %s", strerror(-err));
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "couldn't read the limiters\n");
	}
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd's own messages (a refused connection, a header too large), shown with -v. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	pr_debug("libmicrohttpd: %s", msg);
}

int cmd_exporter(const struct rl_args *a)
{
	const char *listen = a->listen ? a->listen : RL_EXPORTER_LISTEN_STR;
	char err[RL_ERRLEN], addr[INET6_ADDRSTRLEN];
	struct sockaddr_storage ss;
	unsigned int flags =
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	sigset_t set;
	int sig, port;

	if (rl_listen_parse(listen, &ss, err, sizeof(err))) {
		pr_err("exporter: --listen: %s", err);
		return 2;
	}
	if (rl_check_env(err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/*
	 * SIGINT and SIGTERM blocked before MHD starts its threads (they inherit
	 * the mask): only this thread takes them, in sigwait().
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN); /* a client gone mid-response: an error on its socket only */
	d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
			     (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
			     (unsigned int)MAX_CONNS, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			     (size_t)CONN_MEMORY, MHD_OPTION_CONNECTION_TIMEOUT,
			     (unsigned int)CONN_TIMEOUT, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			     MHD_OPTION_END);
	if (!d) {
		pr_err("exporter: couldn't listen on %s: %s", listen, strerror(errno));
		return 1;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	port = info ? info->port : 0;
	if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof(addr));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof(addr));
	fprintf(stderr, RL_PROG ": exporter listening on http://%s%s%s:%d/metrics\n",
		ss.ss_family == AF_INET6 ? "[" : "", addr, ss.ss_family == AF_INET6 ? "]" : "",
		port);
	fflush(stderr);
	while (sigwait(&set, &sig))
		;
	MHD_stop_daemon(d);
	fprintf(stderr, RL_PROG ": exporter stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	return 0;
}
