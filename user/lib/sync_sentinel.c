// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The store of sentinel://: see sync_sentinel.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <hiredis/hiredis.h>
#include "log.h"
#include "sync_sentinel.h"

#define SWITCH_CHANNEL "+switch-master"
/* A lost subscription is made again at most this often: a sentinel down costs one try a second. */
#define RESUBSCRIBE_NS 1000000000ULL
/* ROLE on a master lists its replicas, one array each: more than any deployment has. */
#define ROLE_MAX_ELEMENTS 1024
/* Messages read per round trip at most; the rest wait for the next one (only +switch-master comes). */
#define MESSAGES_MAX 64
/* What a host from a sentinel may hold: a name, an IPv4 or a bare IPv6 address. */
#define HOST_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:"

/*
 * The sentinel that answered last, by URL. The agent closes the store on any
 * failure and opens it anew; the next open asks this one first, so a
 * sentinel that is down or hangs costs one try its share of the bound, not
 * every try (the order the Redis documentation asks of Sentinel clients).
 * One agent runs per process: one entry is enough, and a process with
 * several URLs only loses the hint.
 */
static struct {
	char url[300];
	unsigned int first;
} hint;

struct rl_sentinel {
	struct rl_redis_url url;
	struct rl_redis_stop stop;
	__u64 timeout_ns; /* the bound of a round trip, and of what it does first */
	struct rl_redis *m; /* the master */
	struct rl_redis_addr at; /* its address */
	struct rl_redis *sub; /* subscribed to +switch-master; NULL: none now */
	unsigned int sub_from; /* the sentinel it is (or was last) on */
	__u64 resub_ns; /* no new subscription before this (CLOCK_MONOTONIC) */
	bool moved; /* a switch was heard: move to @to before the next round trip */
	struct rl_redis_addr to;
	__u64 tx, rx; /* bytes of the connections closed since the open */
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* What is left until @deadline; at least 1 ns, so that a wait with none left times out at once. */
static __u64 left_ns(__u64 deadline)
{
	__u64 now = mono_ns();

	return deadline > now + 1 ? deadline - now : 1;
}

static bool same_addr(const struct rl_redis_addr *a, const struct rl_redis_addr *b)
{
	return a->port == b->port && !strcmp(a->host, b->host);
}

/* Close *@c, keeping its bytes in the store's count. */
static void drop(struct rl_sentinel *s, struct rl_redis **c)
{
	__u64 tx, rx;

	if (!*c)
		return;
	rl_redis_bytes(*c, &tx, &rx);
	s->tx += tx;
	s->rx += rx;
	rl_redis_close(*c);
	*c = NULL;
}

/* ---- the replies ---- */

/* @host and @port (not NUL-terminated, lengths given) as an address: false if either is invalid. */
static bool check_addr(const char *host, size_t hlen, const char *port, size_t plen,
		       struct rl_redis_addr *a)
{
	unsigned int p = 0;

	if (!hlen || hlen >= sizeof(a->host))
		return false;
	for (size_t i = 0; i < hlen; i++)
		if (!host[i] || !strchr(HOST_CHARS, host[i]))
			return false;
	if (!plen || plen > 5)
		return false;
	for (size_t i = 0; i < plen; i++) {
		if (port[i] < '0' || port[i] > '9')
			return false;
		p = p * 10 + (unsigned int)(port[i] - '0');
	}
	if (!p || p > 65535)
		return false;
	memcpy(a->host, host, hlen);
	a->host[hlen] = '\0';
	a->port = p;
	return true;
}

int rl_sentinel_parse_addr(const redisReply *rep, struct rl_redis_addr *a, char *why, size_t len)
{
	const redisReply *h, *p;

	if (rep->type == REDIS_REPLY_NIL) {
		snprintf(why, len, "no master of that name");
		return -ENOENT;
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
	    rep->element[0]->type != REDIS_REPLY_STRING ||
	    rep->element[1]->type != REDIS_REPLY_STRING) {
		snprintf(why, len, "not an address (two strings)");
		return -EPROTO;
	}
	h = rep->element[0];
	p = rep->element[1];
	if (!check_addr(h->str, h->len, p->str, p->len, a)) {
		snprintf(why, len, "an invalid address '%.64s' '%.16s'", h->str, p->str);
		return -EPROTO;
	}
	return 0;
}

const char *rl_sentinel_parse_role(const redisReply *rep)
{
	if (rep->type != REDIS_REPLY_ARRAY || !rep->elements ||
	    rep->element[0]->type != REDIS_REPLY_STRING)
		return NULL;
	return rep->element[0]->str;
}

bool rl_sentinel_parse_switch(const char *payload, const char *master, struct rl_redis_addr *to)
{
	const char *w[5];
	size_t wl[5];
	const char *p = payload;

	for (int i = 0; i < 5; i++) {
		if (i && *p++ != ' ')
			return false;
		w[i] = p;
		wl[i] = strcspn(p, " ");
		if (!wl[i])
			return false;
		p += wl[i];
	}
	if (*p || wl[0] != strlen(master) || memcmp(w[0], master, wl[0]))
		return false;
	return check_addr(w[3], wl[3], w[4], wl[4], to);
}

/* ---- the servers ---- */

/* A connection to sentinel @i before @deadline, with the URL's password if @auth. */
static int sentinel_connect(struct rl_sentinel *s, unsigned int i, bool auth, __u64 deadline,
			    struct rl_redis **out, char *err, size_t errlen)
{
	const struct rl_redis_addr *a = &s->url.addrs[i];
	int ret;

	ret = rl_redis_connect_to(&s->url, a->host, a->port,
				  RL_REDIS_NO_SCRIPT | (auth ? 0 : RL_REDIS_NO_AUTH),
				  left_ns(deadline), &s->stop, out, err, errlen);
	if (!ret)
		rl_redis_set_timeout(*out, left_ns(deadline));
	return ret;
}

static bool is_noauth(const redisReply *rep)
{
	return rep->type == REDIS_REPLY_ERROR && !strncmp(rep->str, "NOAUTH", 6);
}

/* Subscribe to sentinel @i's +switch-master before @deadline: *@out, or -errno. */
static int subscribe(struct rl_sentinel *s, unsigned int i, __u64 deadline, struct rl_redis **out,
		     char *err, size_t errlen)
{
	struct rl_redis *c = NULL;
	int ret = 0;

	for (int auth = 0; auth < 2; auth++) {
		ret = sentinel_connect(s, i, auth, deadline, &c, err, errlen);
		if (ret)
			return ret;
		ret = rl_redis_subscribe(c, SWITCH_CHANNEL, err, errlen);
		if (!ret) {
			*out = c;
			return 0;
		}
		drop(s, &c);
		/* NOAUTH: a sentinel with a password of its own; try the URL's. */
		if (ret != -EACCES || auth || !s->url.password[0])
			break;
	}
	return ret;
}

/* Ask sentinel @i for the master before @deadline: @a, or -errno. */
static int ask(struct rl_sentinel *s, unsigned int i, __u64 deadline, struct rl_redis_addr *a,
	       char *err, size_t errlen)
{
	const char *argv[] = { "SENTINEL", "get-master-addr-by-name", s->url.master };
	struct rl_redis *c = NULL;
	redisReply *rep = NULL;
	char why[128];
	int ret = 0;

	for (int auth = 0; auth < 2; auth++) {
		ret = sentinel_connect(s, i, auth, deadline, &c, err, errlen);
		if (ret)
			return ret;
		ret = rl_redis_command(c, 3, argv, 2, &rep, err, errlen);
		if (ret)
			break;
		if (is_noauth(rep) && !auth && s->url.password[0]) {
			freeReplyObject(rep);
			rep = NULL;
			drop(s, &c);
			continue;
		}
		if (rep->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "%s: SENTINEL get-master-addr-by-name refused: %s%s",
				 rl_redis_name(c), rep->str,
				 strstr(rep->str, "unknown command") ? " (is it a sentinel?)" :
				 is_noauth(rep)			     ? " (a sentinel's password "
								       "must be the master's)" :
								       "");
			ret = is_noauth(rep) ? -EACCES : -EPROTO;
		} else {
			ret = rl_sentinel_parse_addr(rep, a, why, sizeof(why));
			if (ret == -ENOENT)
				snprintf(err, errlen, "%s: knows no master named '%s'",
					 rl_redis_name(c), s->url.master);
			else if (ret)
				snprintf(err, errlen,
					 "%s: SENTINEL get-master-addr-by-name answered %s",
					 rl_redis_name(c), why);
		}
		break;
	}
	if (rep)
		freeReplyObject(rep);
	drop(s, &c);
	return ret;
}

/*
 * Connect to the master at @a before @deadline and check its ROLE: then it
 * is the store's master. -EAGAIN if it is not a master.
 */
static int connect_master(struct rl_sentinel *s, const struct rl_redis_addr *a, __u64 deadline,
			  char *err, size_t errlen)
{
	const char *argv[] = { "ROLE" };
	struct rl_redis *c = NULL;
	redisReply *rep = NULL;
	const char *role;
	int ret;

	ret = rl_redis_connect_to(&s->url, a->host, a->port, 0, left_ns(deadline), &s->stop, &c,
				  err, errlen);
	if (ret)
		return ret;
	rl_redis_set_timeout(c, left_ns(deadline));
	ret = rl_redis_command(c, 1, argv, ROLE_MAX_ELEMENTS, &rep, err, errlen);
	if (ret)
		goto out;
	role = rl_sentinel_parse_role(rep);
	if (rep->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "%s: ROLE refused: %s (the agent's Redis user needs +role)",
			 rl_redis_name(c), rep->str);
		ret = is_noauth(rep) ? -EACCES : -EPROTO;
	} else if (!role) {
		snprintf(err, errlen, "%s: ROLE answered something unexpected", rl_redis_name(c));
		ret = -EPROTO;
	} else if (strcmp(role, "master")) {
		/* Never written to: a replica, or a master demoted and not reconfigured yet. */
		snprintf(
			err, errlen,
			"%s, which the sentinels name as master '%s', is a %.16s (a failover under "
			"way?)",
			rl_redis_name(c), s->url.master, strcmp(role, "slave") ? role : "replica");
		ret = -EAGAIN;
	}
out:
	if (rep)
		freeReplyObject(rep);
	if (ret) {
		drop(s, &c);
		return ret;
	}
	rl_redis_set_timeout(c, s->timeout_ns);
	drop(s, &s->m);
	s->m = c;
	s->at = *a;
	return 0;
}

/*
 * Which of two failures to report: the one that says most about what to do.
 * A wrong password, a wrong master name, a sentinel that is not one, over a
 * failover under way, over a server that did not answer or refused.
 */
static int rank(int err)
{
	switch (err) {
	case -EACCES:
		return 6;
	case -ENOENT:
		return 5;
	case -EPROTO:
		return 4;
	case -EAGAIN:
		return 3;
	case -ETIMEDOUT:
		return 2;
	case -ECONNREFUSED:
		return 1;
	default:
		return 0;
	}
}

/*
 * Ask the sentinels in turn and connect to the master one names, all before
 * @deadline; subscribe on the first that answers if the store has no
 * subscription. Each sentinel, and the master it names, get an equal share
 * of what is left (the last one all of it): a master that hangs (stopped,
 * while the sentinels fail over) must not keep the next sentinels, which may
 * already name the new one, from being asked. A master that refused is not
 * tried twice; one that did not answer in its share is, in the next share.
 */
static int find_master(struct rl_sentinel *s, __u64 deadline, char *err, size_t errlen)
{
	struct rl_redis_addr tried[RL_REDIS_ADDRS_MAX];
	int tried_ret[RL_REDIS_ADDRS_MAX];
	unsigned int n = s->url.naddrs, ntried = 0, first = 0;
	char causes[1024] = "", cause[512], url[300];
	int ret = -ETIMEDOUT, best = 0;
	size_t off = 0;

	rl_redis_url_str(&s->url, url, sizeof(url));
	if (!strcmp(hint.url, url) && hint.first < n)
		first = hint.first;
	for (unsigned int k = 0; k < n; k++) {
		unsigned int i = (first + k) % n;
		__u64 now = mono_ns(), slice;
		struct rl_redis *sub = NULL;
		struct rl_redis_addr a;
		bool again = false;

		if (now >= deadline) {
			snprintf(cause, sizeof(cause), "no time left for the next sentinels");
			ret = -ETIMEDOUT;
			goto note;
		}
		slice = now + (deadline - now) / (n - k);
		if (!s->sub) {
			ret = subscribe(s, i, slice, &sub, cause, sizeof(cause));
			if (ret == -EINTR)
				goto stopped;
			/* Down or silent: the next one. Only refused: on without a subscription. */
			if (ret && ret != -EPROTO && ret != -EACCES)
				goto note;
		}
		ret = ask(s, i, slice, &a, cause, sizeof(cause));
		if (ret) {
			drop(s, &sub);
			if (ret == -EINTR)
				goto stopped;
			goto note;
		}
		snprintf(hint.url, sizeof(hint.url), "%s", url);
		hint.first = i;
		if (sub) {
			s->sub = sub;
			s->sub_from = i;
		}
		for (unsigned int j = 0; j < ntried; j++)
			again |= same_addr(&tried[j], &a) && tried_ret[j] != -ETIMEDOUT;
		if (again)
			continue; /* its refusal is noted already */
		ret = connect_master(s, &a, slice, cause, sizeof(cause));
		if (!ret)
			return 0;
		if (ret == -EINTR)
			goto stopped;
		tried[ntried] = a;
		tried_ret[ntried++] = ret;
note:
		if (!best || rank(ret) > rank(best))
			best = ret;
		if (off < sizeof(causes))
			off += (size_t)snprintf(causes + off, sizeof(causes) - off, "%s%s",
						off ? "; " : "", cause);
		if (ret == -ETIMEDOUT && now >= deadline)
			break;
	}
	snprintf(err, errlen, "%s: no master '%s' to write to: %s", url, s->url.master, causes);
	return best ? best : -ETIMEDOUT;
stopped:
	snprintf(err, errlen, "%s", cause);
	return -EINTR;
}

/* What the subscription brought, without waiting: a switch of our master sets s->moved. */
static void poll_switch(struct rl_sentinel *s)
{
	char err[256];

	for (int k = 0; s->sub && k < MESSAGES_MAX; k++) {
		struct rl_redis_addr to;
		redisReply *msg;
		int ret = rl_redis_message(s->sub, &msg, err, sizeof(err));

		if (ret < 0) {
			/* Its sentinel went away: another one at once, a switch may go unheard. */
			pr_debug("sync: the subscription to +switch-master ended: %s", err);
			drop(s, &s->sub);
			s->resub_ns = 0;
			return;
		}
		if (!ret)
			return;
		if (msg->type == REDIS_REPLY_ARRAY && msg->elements == 3 &&
		    msg->element[0]->type == REDIS_REPLY_STRING &&
		    msg->element[1]->type == REDIS_REPLY_STRING &&
		    msg->element[2]->type == REDIS_REPLY_STRING &&
		    !strcmp(msg->element[0]->str, "message") &&
		    !strcmp(msg->element[1]->str, SWITCH_CHANNEL) &&
		    rl_sentinel_parse_switch(msg->element[2]->str, s->url.master, &to)) {
			pr_debug("sync: +switch-master: '%s' is now at %s:%u", s->url.master,
				 to.host, to.port);
			s->moved = true;
			s->to = to;
		}
		freeReplyObject(msg);
	}
}

/*
 * Without a subscription, after a round trip, with what is left before
 * @deadline and at most once a second: subscribe to the next sentinel, and
 * ask it the master (a switch may have come while none listened).
 */
static void resubscribe(struct rl_sentinel *s, __u64 deadline)
{
	__u64 now = mono_ns();
	struct rl_redis_addr a;
	char err[512];
	unsigned int i;

	if (s->sub || now < s->resub_ns || now >= deadline)
		return;
	s->resub_ns = now + RESUBSCRIBE_NS;
	i = (s->sub_from + 1) % s->url.naddrs;
	s->sub_from = i;
	if (subscribe(s, i, deadline, &s->sub, err, sizeof(err))) {
		pr_debug("sync: no subscription to +switch-master: %s", err);
		return;
	}
	if (ask(s, i, deadline, &a, err, sizeof(err))) {
		pr_debug("sync: %s", err);
		return;
	}
	if (!same_addr(&a, &s->at)) {
		s->moved = true;
		s->to = a;
	}
}

/* ---- the store ---- */

int rl_sentinel_open(const struct rl_redis_url *u, __u64 timeout_ns,
		     const struct rl_redis_stop *stop, struct rl_sentinel **out, char *err,
		     size_t errlen)
{
	struct rl_sentinel *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->url = *u;
	if (stop)
		s->stop = *stop;
	s->timeout_ns = timeout_ns;
	ret = find_master(s, mono_ns() + timeout_ns, err, errlen);
	if (ret) {
		rl_sentinel_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

void rl_sentinel_close(struct rl_sentinel *s)
{
	if (!s)
		return;
	rl_redis_close(s->m);
	rl_redis_close(s->sub);
	free(s);
}

void rl_sentinel_set_timeout(struct rl_sentinel *s, __u64 timeout_ns)
{
	s->timeout_ns = timeout_ns;
	if (s->m)
		rl_redis_set_timeout(s->m, timeout_ns);
}

void rl_sentinel_bytes(const struct rl_sentinel *s, __u64 *tx, __u64 *rx)
{
	__u64 t, r;

	*tx = s->tx;
	*rx = s->rx;
	if (s->m) {
		rl_redis_bytes(s->m, &t, &r);
		*tx += t;
		*rx += r;
	}
	if (s->sub) {
		rl_redis_bytes(s->sub, &t, &r);
		*tx += t;
		*rx += r;
	}
}

int rl_sentinel_sync(struct rl_sentinel *s, const struct rl_sync_req *req,
		     struct rl_sync_item *items, size_t n, struct rl_sync_reply *rep, char *err,
		     size_t errlen)
{
	__u64 deadline = mono_ns() + s->timeout_ns;
	int ret;

	memset(rep, 0, sizeof(*rep));
	poll_switch(s);
	if (s->moved) {
		s->moved = false;
		if (!same_addr(&s->to, &s->at)) {
			char was[300], now[300];

			rl_redis_addr_str(s->at.host, s->at.port, was, sizeof(was));
			rl_redis_addr_str(s->to.host, s->to.port, now, sizeof(now));
			drop(s, &s->m);
			ret = connect_master(s, &s->to, deadline, err, errlen);
			if (ret)
				return ret;
			pr_debug("sync: master '%s' moved from %s to %s", s->url.master, was, now);
		}
	}
	for (int attempt = 0;; attempt++) {
		if (!s->m) {
			ret = find_master(s, deadline, err, errlen);
			if (ret)
				return ret;
		}
		rl_redis_set_timeout(s->m, left_ns(deadline));
		ret = rl_redis_sync(s->m, req, items, n, rep, err, errlen);
		if (ret != -EROFS || attempt)
			break;
		/* Demoted under us (READONLY): the sentinels name the new master. */
		pr_debug("sync: %s; asking the sentinels again", err);
		drop(s, &s->m);
	}
	if (s->m)
		rl_redis_set_timeout(s->m, s->timeout_ns);
	if (!ret)
		resubscribe(s, deadline);
	return ret;
}

void rl_sentinel_master(const struct rl_sentinel *s, char *buf, size_t len)
{
	rl_redis_addr_str(s->at.host, s->at.port, buf, len);
}

bool rl_sentinel_subscribed(const struct rl_sentinel *s)
{
	return s->sub != NULL;
}
