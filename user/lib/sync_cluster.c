// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet sync on a Redis Cluster: see sync_cluster.h. The rounds themselves
 * (pipelining, MOVED, ASK, TRYAGAIN, the bounds) are rl_sync_round()'s in
 * sync_redis.c; this unit only knows where the slots are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <hiredis/hiredis.h>
#include "sync_cluster.h"

/*
 * Nodes kept at most (masters seen in slot maps and redirections). Redis
 * Cluster suggests 1000 nodes at most; a sync group needs a fraction.
 */
#define MASTERS_MAX 256
#define NO_MASTER   0xffff

struct master {
	char host[256];
	unsigned int port;
	struct rl_redis *r; /* NULL: not connected */
	bool serves; /* in the slot map */
	bool broken; /* failed this round: closed after it, and not used again in it */
	bool tried; /* a connection was tried this round (once per round) */
};

struct rl_cluster {
	struct rl_redis_url url;
	struct rl_redis_stop stop;
	__u64 timeout_ns;
	__u64 deadline; /* of the round under way: connections made in it end by then */
	struct master m[MASTERS_MAX];
	size_t nm;
	unsigned short slot[RL_CLUSTER_SLOTS]; /* index into m, or NO_MASTER */
	bool stale; /* ask the map again before the next round */
	/* The group whose tags are below (computed at its first round). */
	char group[RL_SYNC_NAME_MAX + 1];
	char tags[RL_CLUSTER_BUCKETS][RL_SYNC_NAME_MAX + 16];
	unsigned int gslot, bslot[RL_CLUSTER_BUCKETS];
	__u64 tx_closed, rx_closed;
	__u64 remapped; /* slots moved in the map since the last round said so */
	struct rl_cluster_counters n;
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), as Redis Cluster hashes keys. */
static unsigned int crc16(const char *p, size_t len)
{
	unsigned int crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (unsigned int)(unsigned char)p[i] << 8;
		for (int b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
		crc &= 0xffff;
	}
	return crc;
}

unsigned int rl_cluster_slot(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len), *close;

	/* The hash tag: from the first '{' to the first '}' after it, if not empty. */
	if (open) {
		close = memchr(open + 1, '}', len - (size_t)(open + 1 - key));
		if (close && close > open + 1)
			return crc16(open + 1, (size_t)(close - open - 1)) & (RL_CLUSTER_SLOTS - 1);
	}
	return crc16(key, len) & (RL_CLUSTER_SLOTS - 1);
}

void rl_cluster_bucket_tag(const char *group, unsigned int b, unsigned int nbuckets, char *buf,
			   size_t len)
{
	unsigned int lo = b * RL_CLUSTER_SLOTS / nbuckets,
		     hi = (b + 1) * RL_CLUSTER_SLOTS / nbuckets;

	snprintf(buf, len, "%s:%u", group, b);
	/* One slot in nbuckets falls in the range: about nbuckets tries; the bound is never met. */
	for (unsigned int s = 1; s < 1000000; s++) {
		unsigned int slot = rl_cluster_slot(buf, strlen(buf));

		if (slot >= lo && slot < hi)
			return;
		snprintf(buf, len, "%s:%u.%u", group, b, s);
	}
}

static struct master *find_master(struct rl_cluster *c, const char *host, unsigned int port,
				  bool add)
{
	for (size_t i = 0; i < c->nm; i++)
		if (c->m[i].port == port && !strcmp(c->m[i].host, host))
			return &c->m[i];
	if (!add || c->nm == MASTERS_MAX || strlen(host) >= sizeof(c->m[0].host))
		return NULL;
	memset(&c->m[c->nm], 0, sizeof(c->m[0]));
	snprintf(c->m[c->nm].host, sizeof(c->m[0].host), "%s", host);
	c->m[c->nm].port = port;
	return &c->m[c->nm++];
}

static void drop_conn(struct rl_cluster *c, struct master *m)
{
	__u64 tx, rx;

	if (!m->r)
		return;
	rl_redis_bytes(m->r, &tx, &rx);
	c->tx_closed += tx;
	c->rx_closed += rx;
	rl_redis_close(m->r);
	m->r = NULL;
}

/* Connect to @m with the scripts, once per round at most: 0, or -errno with @err. */
static int master_connect(struct rl_cluster *c, struct master *m, char *err, size_t errlen)
{
	char name[300];
	__u64 now = mono_ns(), left;
	int ret;

	if (m->r && !m->broken)
		return 0;
	rl_redis_addr_str(m->host, m->port, name, sizeof(name));
	if (m->broken || m->tried) {
		snprintf(err, errlen, "%s: the connection failed in this round", name);
		return -ECONNREFUSED;
	}
	m->tried = true;
	left = c->deadline > now ? c->deadline - now : 1000000ULL;
	ret = rl_redis_connect_to(&c->url, m->host, m->port, 0, left, &c->stop, &m->r, err, errlen);
	if (ret) {
		m->r = NULL;
		return ret;
	}
	rl_redis_set_timeout(m->r, c->timeout_ns);
	c->n.connects++;
	return 0;
}

static struct rl_redis *master_conn(struct rl_cluster *c, struct master *m, char *err,
				    size_t errlen)
{
	return master_connect(c, m, err, errlen) ? NULL : m->r;
}

/*
 * A CLUSTER SLOTS reply into the map: [[start, end, [host, port, ...], replicas...], ...].
 * @asked: the server that answered, as messages name it; @asked_host: its host
 * (a master whose host is "" is that one).
 */
static int apply_map(struct rl_cluster *c, const redisReply *rep, const char *asked,
		     const char *asked_host, char *err, size_t errlen)
{
	unsigned short slot[RL_CLUSTER_SLOTS];
	bool serves[MASTERS_MAX] = {};
	size_t covered = 0, moved = 0;

	if (rep->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "%s: CLUSTER SLOTS refused: %s%s", asked, rep->str,
			 strstr(rep->str, "cluster support disabled") ?
				 " (not a cluster node: use redis://)" :
				 "");
		return !strncmp(rep->str, "NOAUTH", 6) ? -EACCES : -EPROTO;
	}
	if (rep->type != REDIS_REPLY_ARRAY)
		goto bad;
	for (size_t i = 0; i < RL_CLUSTER_SLOTS; i++)
		slot[i] = NO_MASTER;
	for (size_t i = 0; i < rep->elements; i++) {
		const redisReply *e = rep->element[i], *node;
		const char *host;
		struct master *m;
		long long lo, hi;

		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
		    e->element[0]->type != REDIS_REPLY_INTEGER ||
		    e->element[1]->type != REDIS_REPLY_INTEGER ||
		    e->element[2]->type != REDIS_REPLY_ARRAY)
			goto bad;
		lo = e->element[0]->integer;
		hi = e->element[1]->integer;
		node = e->element[2];
		if (lo < 0 || hi < lo || hi >= RL_CLUSTER_SLOTS || node->elements < 2 ||
		    node->element[0]->type != REDIS_REPLY_STRING ||
		    node->element[1]->type != REDIS_REPLY_INTEGER ||
		    node->element[1]->integer < 1 || node->element[1]->integer > 65535)
			goto bad;
		/* "" (or "?"): the node does not know its own address; it is the one asked. */
		host = node->element[0]->str;
		if (!host[0] || !strcmp(host, "?"))
			host = asked_host;
		m = find_master(c, host, (unsigned int)node->element[1]->integer, true);
		if (!m) {
			snprintf(err, errlen, "%s: the slot map names more than %d nodes", asked,
				 MASTERS_MAX);
			return -E2BIG;
		}
		serves[m - c->m] = true;
		for (long long s = lo; s <= hi; s++) {
			covered += slot[s] == NO_MASTER;
			slot[s] = (unsigned short)(m - c->m);
		}
	}
	if (!covered) {
		snprintf(err, errlen, "%s: the cluster serves no slot (is it created?)", asked);
		return -ENOENT;
	}
	for (size_t i = 0; i < RL_CLUSTER_SLOTS; i++)
		moved += c->slot[i] != NO_MASTER && c->slot[i] != slot[i];
	c->n.remapped += moved;
	c->remapped += moved;
	memcpy(c->slot, slot, sizeof(slot));
	for (size_t i = 0; i < c->nm; i++) {
		c->m[i].serves = serves[i];
		/* A master that serves nothing any more (failed over, removed): let it go. */
		if (!serves[i])
			drop_conn(c, &c->m[i]);
	}
	c->n.maps++;
	c->stale = false;
	return 0;
bad:
	snprintf(err, errlen, "%s: CLUSTER SLOTS answered something unexpected", asked);
	return -EPROTO;
}

/* CLUSTER SLOTS on @r (the server at @host:@port) into the map. */
static int map_from(struct rl_cluster *c, struct rl_redis *r, const char *host, char *err,
		    size_t errlen)
{
	const char *argv[] = { "CLUSTER", "SLOTS" };
	redisReply *rep = NULL;
	int ret;

	ret = rl_redis_command(r, 2, argv, RL_CLUSTER_SLOTS, &rep, err, errlen);
	if (ret)
		return ret;
	ret = apply_map(c, rep, rl_redis_name(r), host, err, errlen);
	freeReplyObject(rep);
	return ret;
}

/*
 * The slot map, asked of a master already connected or else of the URL's
 * servers in turn, within @timeout_ns. 0, or the last server's cause.
 */
static int read_map(struct rl_cluster *c, __u64 timeout_ns, char *err, size_t errlen)
{
	__u64 deadline = mono_ns() + timeout_ns;
	int ret = -ECONNREFUSED;

	snprintf(err, errlen, "no server of the cluster answered");
	for (size_t i = 0; i < c->nm; i++) {
		struct master *m = &c->m[i];

		if (!m->r || m->broken)
			continue;
		ret = map_from(c, m->r, m->host, err, errlen);
		if (!ret)
			return 0;
		if (ret == -EINTR)
			return ret;
		/* Its connection may be out of step now: drop it. */
		drop_conn(c, m);
	}
	for (unsigned int i = 0; i < c->url.naddrs; i++) {
		const struct rl_redis_addr *a = &c->url.addrs[i];
		__u64 now = mono_ns();
		struct rl_redis *r = NULL;

		if (now >= deadline) {
			if (ret != -EACCES)
				ret = -ETIMEDOUT;
			break;
		}
		ret = rl_redis_connect_to(&c->url, a->host, a->port, RL_REDIS_NO_SCRIPT,
					  deadline - now, &c->stop, &r, err, errlen);
		if (!ret) {
			__u64 tx, rx;

			ret = map_from(c, r, a->host, err, errlen);
			rl_redis_bytes(r, &tx, &rx);
			c->tx_closed += tx;
			c->rx_closed += rx;
			rl_redis_close(r);
		}
		/* A wrong password or a server that is no cluster: the others will say the same. */
		if (!ret || ret == -EINTR || ret == -EACCES)
			return ret;
	}
	return ret;
}

int rl_cluster_open(const struct rl_redis_url *u, __u64 timeout_ns,
		    const struct rl_redis_stop *stop, struct rl_cluster **out, char *err,
		    size_t errlen)
{
	struct rl_cluster *c = calloc(1, sizeof(*c));
	char why[256];
	int ret;

	if (!c)
		return -ENOMEM;
	c->url = *u;
	if (stop)
		c->stop = *stop;
	c->timeout_ns = timeout_ns;
	c->deadline = mono_ns() + timeout_ns;
	for (size_t i = 0; i < RL_CLUSTER_SLOTS; i++)
		c->slot[i] = NO_MASTER;
	ret = read_map(c, timeout_ns, err, errlen);
	if (ret) {
		rl_cluster_close(c);
		return ret;
	}
	/*
	 * Every master now, within the same bound: a wrong password is said at
	 * the start. One that cannot be reached fails its buckets until it can.
	 */
	for (size_t i = 0; i < c->nm; i++) {
		if (!c->m[i].serves)
			continue;
		ret = master_connect(c, &c->m[i], why, sizeof(why));
		c->m[i].tried = false;
		if (ret == -EACCES || ret == -EINTR) {
			snprintf(err, errlen, "%s", why);
			rl_cluster_close(c);
			return ret;
		}
	}
	*out = c;
	return 0;
}

void rl_cluster_close(struct rl_cluster *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nm; i++)
		drop_conn(c, &c->m[i]);
	free(c);
}

void rl_cluster_set_timeout(struct rl_cluster *c, __u64 timeout_ns)
{
	c->timeout_ns = timeout_ns;
	for (size_t i = 0; i < c->nm; i++)
		if (c->m[i].r)
			rl_redis_set_timeout(c->m[i].r, timeout_ns);
}

void rl_cluster_bytes(const struct rl_cluster *c, __u64 *tx, __u64 *rx)
{
	*tx = c->tx_closed;
	*rx = c->rx_closed;
	for (size_t i = 0; i < c->nm; i++) {
		__u64 t, r;

		if (!c->m[i].r)
			continue;
		rl_redis_bytes(c->m[i].r, &t, &r);
		*tx += t;
		*rx += r;
	}
}

void rl_cluster_counters(const struct rl_cluster *c, struct rl_cluster_counters *out)
{
	*out = c->n;
}

void rl_cluster_masters(const struct rl_cluster *c, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->nm && off + 1 < len; i++) {
		if (!c->m[i].serves)
			continue;
		if (off)
			off += (size_t)snprintf(buf + off, len - off, ",");
		if (off + 1 < len)
			rl_redis_addr_str(c->m[i].host, c->m[i].port, buf + off, len - off);
		off += strlen(buf + off);
	}
}

/* ---- the router of rl_sync_round() ---- */

static unsigned int slot_of(const struct rl_cluster *c, int b)
{
	return b < 0 ? c->gslot : c->bslot[b];
}

static const char *cl_tag(void *ctx, int b)
{
	struct rl_cluster *c = ctx;

	return b < 0 ? c->group : c->tags[b];
}

static struct rl_redis *cl_conn(void *ctx, int b, char *err, size_t errlen)
{
	struct rl_cluster *c = ctx;
	unsigned int s = slot_of(c, b);

	if (c->slot[s] == NO_MASTER) {
		snprintf(err, errlen, "no master serves slot %u (the cluster is being changed?)",
			 s);
		return NULL;
	}
	return master_conn(c, &c->m[c->slot[s]], err, errlen);
}

static struct rl_redis *cl_redirect(void *ctx, int b, bool ask, const char *addr, char *err,
				    size_t errlen)
{
	struct rl_cluster *c = ctx;
	const char *colon = strrchr(addr, ':');
	char host[256];
	struct master *m;
	unsigned long port;
	char *end;

	/* "HOST:PORT", HOST an IPv6 address without brackets as Redis writes it. */
	if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof(host)) {
		snprintf(err, errlen, "a redirection to '%s': no HOST:PORT", addr);
		return NULL;
	}
	port = strtoul(colon + 1, &end, 10);
	if (*end || !port || port > 65535) {
		snprintf(err, errlen, "a redirection to '%s': no HOST:PORT", addr);
		return NULL;
	}
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	m = find_master(c, host, (unsigned int)port, true);
	if (!m) {
		snprintf(err, errlen, "a redirection to '%s': more than %d nodes", addr,
			 MASTERS_MAX);
		return NULL;
	}
	if (!ask) {
		/* The slot has moved for good: serve it from there, and read the whole map again. */
		c->slot[slot_of(c, b)] = (unsigned short)(m - c->m);
		m->serves = true;
		c->stale = true;
	}
	return master_conn(c, m, err, errlen);
}

static void cl_broken(void *ctx, struct rl_redis *r)
{
	struct rl_cluster *c = ctx;

	for (size_t i = 0; i < c->nm; i++)
		if (c->m[i].r == r)
			c->m[i].broken = true;
}

int rl_cluster_sync(struct rl_cluster *c, const struct rl_sync_req *req, struct rl_sync_item *items,
		    size_t n, struct rl_sync_reply *rep, char *err, size_t errlen)
{
	struct rl_sync_router rt = {
		.nbuckets = RL_CLUSTER_BUCKETS,
		.tag = cl_tag,
		.conn = cl_conn,
		.redirect = cl_redirect,
		.broken = cl_broken,
		.ctx = c,
	};
	char why[256];
	int ret;

	if (strcmp(c->group, req->group)) {
		snprintf(c->group, sizeof(c->group), "%s", req->group);
		c->gslot = rl_cluster_slot(c->group, strlen(c->group));
		for (unsigned int b = 0; b < RL_CLUSTER_BUCKETS; b++) {
			rl_cluster_bucket_tag(c->group, b, RL_CLUSTER_BUCKETS, c->tags[b],
					      sizeof(c->tags[b]));
			c->bslot[b] = rl_cluster_slot(c->tags[b], strlen(c->tags[b]));
		}
	}
	for (size_t i = 0; i < c->nm; i++)
		c->m[i].tried = c->m[i].broken = false;
	/* A master failed or a slot moved last round: the map first (it keeps the old one if none answers). */
	if (c->stale) {
		ret = read_map(c, c->timeout_ns, why, sizeof(why));
		if (ret == -EINTR) {
			memset(rep, 0, sizeof(*rep));
			snprintf(err, errlen, "%s", why);
			return ret;
		}
	}
	c->deadline = mono_ns() + c->timeout_ns;
	ret = rl_sync_round(&rt, req, items, n, rep, c->timeout_ns, err, errlen);
	c->n.moved += rep->moved;
	c->n.ask += rep->ask;
	c->n.tryagain += rep->tryagain;
	rep->remapped = c->remapped;
	c->remapped = 0;
	for (size_t i = 0; i < c->nm; i++) {
		struct master *m = &c->m[i];

		/* Broken, or a connection tried and failed: the map may have changed (a failover). */
		if (m->broken || (m->tried && !m->r)) {
			drop_conn(c, m);
			c->stale = true;
		}
	}
	return ret;
}
