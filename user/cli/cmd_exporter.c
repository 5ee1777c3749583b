// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * exporter: GET /metrics in the Prometheus text format, over libmicrohttpd.
 *
 * One polling thread (epoll) serves every connection, so an idle or slow
 * client costs a socket and a slot of the table below, never a thread, and
 * scrapes run one at a time by construction. Hostile clients are bounded
 * three ways:
 *  - slots: at most MAX_CONNS connections, PER_IP_CONNS of them from one
 *    address (MHD closes the others at once); when every slot is taken, MHD
 *    leaves new connections in the kernel's backlog and the reaper thread
 *    closes the oldest connection that has not sent a whole request, so an
 *    idle flood from many addresses cannot keep a scraper out;
 *  - time: a connection has REQUEST_TIME_S to send its request line and
 *    headers, counted from its accept() or its previous answer, however
 *    slowly it trickles them (MHD's own timeout, CONN_TIMEOUT, is an idle
 *    one that each byte restarts: it alone does not stop a slowloris);
 *  - memory: CONN_MEMORY per connection, request line and headers included.
 * A request line MHD would accept but is not HTTP (a NUL or a byte that is
 * not a token character in the method, a NUL or a control in the target,
 * more than one space between the parts) is answered 400: see
 * request_line_ok().
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "cli.h"
#include "dynlib_mhd.h"
#include "env.h"
#include "metrics.h"

/*
 * Connections at once. Scrapers are few (a Prometheus server keeps one
 * connection per target, an HA pair two); 64 leaves room for those and for
 * curl while a flood holds some. Each costs an fd and CONN_MEMORY.
 */
#define MAX_CONNS 64
/*
 * From one address at once: more than any scraper needs, and one hostile
 * host holds at most an eighth of the slots; MHD closes the rest on accept.
 */
#define PER_IP_CONNS 8
/* Per connection, request and headers included: a scrape request is a few hundred bytes. */
#define CONN_MEMORY (16 * 1024)
/*
 * Seconds a connection may stay idle (nothing read or written) before MHD
 * closes it: bounds a client that stops reading its answer, and keep-alive
 * connections between scrapes (Prometheus reconnects at no cost).
 */
#define CONN_TIMEOUT 5
/*
 * Seconds to send a whole request, however slowly: Prometheus sends its
 * request in one write, so 3 s is generous even over a slow link, and a
 * slowloris client holds its slot 3 s at most.
 */
#define REQUEST_TIME_S 3
/* How often the reaper looks at the slots when nothing wakes it. */
#define REAP_PERIOD_MS 250
/*
 * A scrape may take the body of the previous one if that one read the maps
 * after this connection was accepted (after its request was answered, for a
 * keep-alive one) and at most this long ago: a flood of scrapes then costs a
 * few readings a second, not one each, and every answer is still fresher
 * than the request that got it, older by 250 ms at most.
 */
#define SHARE_MS 250

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * One connection as the reaper sees it. MHD calls the notify callback with
 * CLOSED before it closes the socket, and both that callback and the reaper
 * hold slots_lock: the reaper's shutdown() can only ever hit the
 * connection's own, still open, socket.
 */
struct slot {
	bool used;
	bool busy; /* its request is whole: being answered, never reaped */
	bool shut; /* the reaper shut it down; MHD closes it next */
	int fd;
	uint64_t since_ms; /* accepted, or its previous answer sent (CLOCK_MONOTONIC) */
};

static struct slot slots[MAX_CONNS];
static unsigned int nslots;
static bool reaper_stop;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reaper_wake;

/* Sentinels for *req (the per-request pointer): the request line was checked, and how. */
static char req_ok, req_bad, uri_bad;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **sctx,
			  enum MHD_ConnectionNotificationCode what)
{
	const union MHD_ConnectionInfo *ci;
	struct slot *s = *sctx;

	(void)cls;
	pthread_mutex_lock(&slots_lock);
	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = rl_mhd.MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		for (unsigned int i = 0; ci && i < MAX_CONNS; i++) {
			if (slots[i].used)
				continue;
			slots[i] = (struct slot){ .used = true,
						  .fd = ci->connect_fd,
						  .since_ms = now_ms() };
			*sctx = &slots[i];
			if (++nslots == MAX_CONNS)
				pthread_cond_signal(&reaper_wake); /* full: make room */
			break;
		}
	} else if (s) {
		s->used = false;
		nslots--;
		*sctx = NULL;
	}
	pthread_mutex_unlock(&slots_lock);
}

static struct slot *conn_slot(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		rl_mhd.MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void slot_set_busy(struct MHD_Connection *conn, bool busy)
{
	struct slot *s = conn_slot(conn);

	if (!s)
		return;
	pthread_mutex_lock(&slots_lock);
	s->busy = busy;
	if (!busy)
		s->since_ms = now_ms(); /* a keep-alive connection: its next request's time */
	pthread_mutex_unlock(&slots_lock);
}

/* A request answered (or abandoned): its connection may be reaped again. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)req;
	(void)toe;
	slot_set_busy(conn, false);
}

/*
 * Shut down every connection past its REQUEST_TIME_S, and when every slot is
 * taken, the oldest one without a whole request: MHD sees the end of the
 * stream and closes it, which frees its slot for the backlog.
 */
static void *reaper(void *arg)
{
	struct timespec ts;

	(void)arg;
	pthread_mutex_lock(&slots_lock);
	while (!reaper_stop) {
		uint64_t now = now_ms();
		struct slot *oldest = NULL;
		unsigned int live = 0;

		for (unsigned int i = 0; i < MAX_CONNS; i++) {
			struct slot *s = &slots[i];

			if (!s->used || s->shut)
				continue;
			if (!s->busy && now - s->since_ms >= REQUEST_TIME_S * 1000) {
				shutdown(s->fd, SHUT_RDWR);
				s->shut = true;
				continue;
			}
			live++;
			if (!s->busy && (!oldest || s->since_ms < oldest->since_ms))
				oldest = s;
		}
		if (nslots == MAX_CONNS && live == MAX_CONNS && oldest) {
			shutdown(oldest->fd, SHUT_RDWR);
			oldest->shut = true;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += REAP_PERIOD_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&reaper_wake, &slots_lock, &ts);
	}
	pthread_mutex_unlock(&slots_lock);
	return NULL;
}

/*
 * The raw request target, before MHD unescapes it: visible ASCII only (no
 * NUL, control, space or byte above 0x7e) and no %00, which unescaping would
 * turn into an end of string ("/metrics%00x" served as "/metrics"). Returns
 * what MHD stores as the request's pointer: where the target ends in MHD's
 * buffer, for request_line_ok(), or &uri_bad.
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	const char *p;

	(void)cls;
	(void)conn;
	if (!uri || !*uri)
		return &uri_bad;
	for (p = uri; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return &uri_bad;
	if (strstr(uri, "%00"))
		return &uri_bad;
	return (void *)p;
}

/* RFC 9110's tchar: what a method may be made of. */
static bool is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/*
 * MHD 0.9.75 splits the request line in place: it writes a NUL over the
 * space after the method and over the one before the version, and passes
 * pointers into that buffer. A NUL the client sent ends the C string early,
 * so "GET\0 /metrics" reaches us as method "GET"; but then the target does not
 * start right after the method's end, and "GET /metrics\0 HTTP/1.1" leaves the
 * version not right after the target's raw end (@uri_end, from on_uri()).
 * Checking those two adjacencies finds a NUL anywhere in the line (MHD itself
 * refuses one in the version), and two spaces where HTTP allows one.
 */
static bool request_line_ok(const char *method, const char *url, const char *version,
			    const char *uri_end)
{
	size_t mlen = strlen(method);

	if (!mlen || uri_end == &uri_bad)
		return false;
	for (size_t i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)method[i]))
			return false;
	return url == method + mlen + 1 && version == uri_end + 1;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *text)
{
	struct MHD_Response *r = rl_mhd.MHD_create_response_from_buffer(strlen(text), (void *)text,
									MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	rl_mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				       "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		rl_mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	/* After a request that is not HTTP, nothing on the connection can be trusted. */
	if (status == MHD_HTTP_BAD_REQUEST)
		rl_mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = rl_mhd.MHD_queue_response(conn, status, r);
	rl_mhd.MHD_destroy_response(r);
	return ret;
}

/*
 * The last body rendered and when its reading began. Only MHD's one polling
 * thread answers requests, so only it touches this.
 */
static struct shared_body {
	char *body;
	size_t len;
	uint64_t start_ms;
} shared;

/* May @conn's scrape take the shared body (see SHARE_MS)? */
static bool share_ok(struct MHD_Connection *conn)
{
	struct slot *s = conn_slot(conn);
	uint64_t since;

	if (!shared.body || !s)
		return false;
	pthread_mutex_lock(&slots_lock);
	since = s->since_ms;
	pthread_mutex_unlock(&slots_lock);
	/* Strictly after: a reading begun in the millisecond of the accept may predate it. */
	return shared.start_ms > since && now_ms() - shared.start_ms <= SHARE_MS;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	uint64_t start;
	size_t len;
	char *body;
	int err;

	(void)cls;
	(void)upload;
	/*
	 * Called first with the headers only (*req is what on_uri() returned):
	 * check the request line while MHD's buffer is as it parsed it, then
	 * answer on the second call, as MHD wants.
	 */
	if (*req != &req_ok && *req != &req_bad) {
		slot_set_busy(conn, true);
		*req = request_line_ok(method, url, version, *req) ? &req_ok : &req_bad;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* a body we never read */
		return MHD_YES;
	}
	if (*req == &req_bad)
		return reply(conn, MHD_HTTP_BAD_REQUEST, "malformed request line\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK, RL_PROG " exporter: the metrics are at /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
	if (!share_ok(conn)) {
		start = now_ms();
		err = rl_metrics_render(&body, &len);
		if (err) {
			pr_warn("exporter: couldn't render the metrics: %s", strerror(-err));
			return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     "couldn't read the limiters\n");
		}
		free(shared.body);
		shared = (struct shared_body){ .body = body, .len = len, .start_ms = start };
	}
	r = rl_mhd.MHD_create_response_from_buffer(shared.len, shared.body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	rl_mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
	ret = rl_mhd.MHD_queue_response(conn, MHD_HTTP_OK, r);
	rl_mhd.MHD_destroy_response(r);
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
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d = NULL;
	pthread_condattr_t ca;
	pthread_t reaper_tid;
	int sig, port, ret = 1;
	sigset_t set;

	if (rl_listen_parse(listen, &ss, err, sizeof(err))) {
		pr_err("exporter: --listen: %s", err);
		return 2;
	}
	if (rl_check_env(err, sizeof(err)) || rl_mhd_load("the exporter", err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	/*
	 * MHD sets IPV6_V6ONLY on an IPv6 socket unless told otherwise: [::]
	 * then took no IPv4 client. Dual-stack (IPV6_V6ONLY=0) on the any
	 * address, as [::] means to its users; a given IPv6 address only.
	 */
	if (ss.ss_family == AF_INET6)
		flags |= IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr) ?
				 MHD_USE_DUAL_STACK :
				 MHD_USE_IPv6;
	/*
	 * SIGINT and SIGTERM blocked before MHD starts its threads (they inherit
	 * the mask): only this thread takes them, in sigwait().
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN); /* a client gone mid-response: an error on its socket only */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&reaper_wake, &ca);
	pthread_condattr_destroy(&ca);
	reaper_stop = false;
	errno = pthread_create(&reaper_tid, NULL, reaper, NULL);
	if (errno) {
		pr_err("exporter: couldn't start its reaper thread: %s", strerror(errno));
		goto out_cond;
	}
	d = rl_mhd.MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, NULL,
		/* first, or MHD prints what it says about the others itself */
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)PER_IP_CONNS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONN_TIMEOUT,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL, MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_END);
	if (!d) {
		pr_err("exporter: couldn't listen on %s: %s", listen, strerror(errno));
		goto out_reaper;
	}
	info = rl_mhd.MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
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
	/* MHD closes every connection (each CLOSED notified) before the reaper goes. */
	rl_mhd.MHD_stop_daemon(d);
	free(shared.body);
	shared.body = NULL;
	fprintf(stderr, RL_PROG ": exporter stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	ret = 0;
out_reaper:
	pthread_mutex_lock(&slots_lock);
	reaper_stop = true;
	pthread_cond_signal(&reaper_wake);
	pthread_mutex_unlock(&slots_lock);
	pthread_join(reaper_tid, NULL);
out_cond:
	pthread_cond_destroy(&reaper_wake);
	return ret;
}
