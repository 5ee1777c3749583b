// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The store of fleet sync: see sync_store.h. A plain Redis is one
 * connection; the other kinds live in their own units (sentinel://:
 * sync_sentinel.c) and are reached through the switch on the URL's kind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sync_cluster.h"
#include "sync_sentinel.h"
#include "sync_store.h"

struct rl_sync_store {
	struct rl_redis_url url;
	struct rl_redis *r; /* redis://, unix:// */
	struct rl_sentinel *sn; /* sentinel:// */
	struct rl_cluster *cl; /* cluster:// */
};

int rl_sync_store_open(const struct rl_redis_url *u, __u64 timeout_ns,
		       const struct rl_redis_stop *stop, struct rl_sync_store **out, char *err,
		       size_t errlen)
{
	struct rl_sync_store *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->url = *u;
	if (u->kind == RL_REDIS_SENTINEL)
		ret = rl_sentinel_open(u, timeout_ns, stop, &s->sn, err, errlen);
	else if (u->kind == RL_REDIS_CLUSTER)
		ret = rl_cluster_open(u, timeout_ns, stop, &s->cl, err, errlen);
	else
		ret = rl_redis_connect(u, timeout_ns, stop, &s->r, err, errlen);
	if (ret) {
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

void rl_sync_store_close(struct rl_sync_store *s)
{
	if (!s)
		return;
	rl_redis_close(s->r);
	rl_sentinel_close(s->sn);
	rl_cluster_close(s->cl);
	free(s);
}

int rl_sync_store_set_timeout(struct rl_sync_store *s, __u64 timeout_ns)
{
	if (s->sn) {
		rl_sentinel_set_timeout(s->sn, timeout_ns);
		return 0;
	}
	if (s->cl) {
		rl_cluster_set_timeout(s->cl, timeout_ns);
		return 0;
	}
	return rl_redis_set_timeout(s->r, timeout_ns);
}

void rl_sync_store_bytes(const struct rl_sync_store *s, __u64 *tx, __u64 *rx)
{
	if (s->sn)
		rl_sentinel_bytes(s->sn, tx, rx);
	else if (s->cl)
		rl_cluster_bytes(s->cl, tx, rx);
	else
		rl_redis_bytes(s->r, tx, rx);
}

int rl_sync_store_sync(struct rl_sync_store *s, const struct rl_sync_req *req,
		       struct rl_sync_item *items, size_t n, struct rl_sync_reply *rep, char *err,
		       size_t errlen)
{
	if (s->sn)
		return rl_sentinel_sync(s->sn, req, items, n, rep, err, errlen);
	if (s->cl)
		return rl_cluster_sync(s->cl, req, items, n, rep, err, errlen);
	return rl_redis_sync(s->r, req, items, n, rep, err, errlen);
}

void rl_sync_store_master(const struct rl_sync_store *s, char *buf, size_t len)
{
	if (s->sn)
		rl_sentinel_master(s->sn, buf, len);
	else if (s->cl)
		rl_cluster_masters(s->cl, buf, len);
	else if (s->url.kind == RL_REDIS_UNIX)
		snprintf(buf, len, "%s", s->url.path);
	else
		rl_redis_addr_str(s->url.host, s->url.port, buf, len);
}
