// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The Redis side of fleet sync: see sync_redis.h for the keys. The script is
 * the whole protocol: one EVALSHA per interval carries every source this node
 * passed, and its reply carries back only the sources that other nodes passed
 * too, so a source seen on one node costs its few bytes out and nothing back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <sys/socket.h>
#include <hiredis/hiredis.h>
#include "sync_redis.h"

/*
 * KEYS[1] = "rl:{GROUP}"; ARGV = node, ttl_ms, stale_ms, policy, then pairs of
 * (source, units). Returns { live nodes, first node with another policy or "",
 * its policy or "", then pairs (index of the source in the request, counting
 * from 0; units the other nodes passed since this node last asked) for the
 * sources with any }.
 *
 * A node whose policy differs from a live node's is told so and changes
 * nothing: it is not registered, so the nodes already running go on (a node
 * changed by set stops; the others do not).
 *
 * Per source, t sums every node's units; l (per node) is t as that node last
 * saw it, so t - l - units is what the others added since; s (per node) is
 * when. A node that had not synced the source for stale_ms gets nothing (and
 * starts from the present total): a source idle here must not inherit the
 * others' past. A script runs atomically, so plain reads and writes do: no
 * other node's round trip can fall between them.
 *
 * The sources are fields of a few big hashes, not keys of their own, so a
 * round trip costs a few commands per 2000 sources (HMGET and HSET of a whole
 * chunk) instead of a few per source. Redis 7.0 cannot expire a field, so the
 * hashes are per epoch of ttl_ms: written in the current one, read from it or
 * else from the previous one, and each expires 2 ttl after its last write.
 * A source idle for two epochs is gone with them: memory follows the sources
 * active in the last 2-3 ttl, and returns to nothing when all go idle.
 *
 * Every number goes back into Redis through string.format('%d'): Lua 5.1
 * turns a number into text with %.14g, which would round totals above 1e14
 * (bytes in byte mode). Chunks of 2000 keep unpack() within Lua's C stack.
 */
static const char script[] =
	"local p = KEYS[1]\n"
	"local node, ttl, stale, pol = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]\n"
	"local tm = redis.call('TIME')\n"
	"local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)\n"
	"local nows = string.format('%d', now)\n"
	"local nk, pk = p .. ':nodes', p .. ':policy'\n"
	"local seen = redis.call('HGETALL', nk)\n"
	"local live, bad, badpol = 1, '', ''\n"
	"for i = 1, #seen, 2 do\n"
	"  if seen[i] == node then\n"
	"  elseif now - tonumber(seen[i + 1]) <= ttl then\n"
	"    live = live + 1\n"
	"    if bad == '' then\n"
	"      local q = redis.call('HGET', pk, seen[i])\n"
	"      if q and q ~= pol then bad, badpol = seen[i], q end\n"
	"    end\n"
	"  else\n"
	"    redis.call('HDEL', nk, seen[i])\n"
	"    redis.call('HDEL', pk, seen[i])\n"
	"  end\n"
	"end\n"
	"local out = { live, bad, badpol }\n"
	"if bad ~= '' then return out end\n"
	"redis.call('HSET', nk, node, nows)\n"
	"redis.call('HSET', pk, node, pol)\n"
	"redis.call('PEXPIRE', nk, ttl)\n"
	"redis.call('PEXPIRE', pk, ttl)\n"
	"local n = (#ARGV - 4) / 2\n"
	"if n < 1 then return out end\n"
	"local e = math.floor(now / ttl)\n"
	"local function ks(x)\n"
	"  return p .. ':t:' .. x, p .. ':l:' .. node .. ':' .. x, p .. ':s:' .. node .. ':' .. x\n"
	"end\n"
	"local tk, lk, sk = ks(e)\n"
	"local tk0, lk0, sk0 = ks(e - 1)\n"
	"for c = 0, n - 1, 2000 do\n"
	"  local m = math.min(2000, n - c)\n"
	"  local src = {}\n"
	"  for j = 1, m do src[j] = ARGV[3 + 2 * (c + j)] end\n"
	"  local t = redis.call('HMGET', tk, unpack(src))\n"
	"  local l = redis.call('HMGET', lk, unpack(src))\n"
	"  local s = redis.call('HMGET', sk, unpack(src))\n"
	"  local miss = {}\n"
	"  for j = 1, m do\n"
	"    if not t[j] or not l[j] then miss[#miss + 1] = j end\n"
	"  end\n"
	"  if #miss > 0 then\n"
	"    local ms = {}\n"
	"    for q = 1, #miss do ms[q] = src[miss[q]] end\n"
	"    local t0 = redis.call('HMGET', tk0, unpack(ms))\n"
	"    local l0 = redis.call('HMGET', lk0, unpack(ms))\n"
	"    local s0 = redis.call('HMGET', sk0, unpack(ms))\n"
	"    for q = 1, #miss do\n"
	"      local j = miss[q]\n"
	"      if not t[j] then t[j] = t0[q] end\n"
	"      if not l[j] then l[j], s[j] = l0[q], s0[q] end\n"
	"    end\n"
	"  end\n"
	"  local tw, lw, sw = {}, {}, {}\n"
	"  for j = 1, m do\n"
	"    local i = c + j - 1\n"
	"    local u = tonumber(ARGV[6 + 2 * i])\n"
	"    local tot = (tonumber(t[j]) or 0) + u\n"
	"    if l[j] and s[j] and now - tonumber(s[j]) <= stale then\n"
	"      local o = tot - tonumber(l[j]) - u\n"
	"      if o > 0 then\n"
	"        out[#out + 1] = i\n"
	"        out[#out + 1] = o\n"
	"      end\n"
	"    end\n"
	"    local ts = string.format('%d', tot)\n"
	"    tw[2 * j - 1], tw[2 * j] = src[j], ts\n"
	"    lw[2 * j - 1], lw[2 * j] = src[j], ts\n"
	"    sw[2 * j - 1], sw[2 * j] = src[j], nows\n"
	"  end\n"
	"  redis.call('HSET', tk, unpack(tw))\n"
	"  redis.call('HSET', lk, unpack(lw))\n"
	"  redis.call('HSET', sk, unpack(sw))\n"
	"end\n"
	"redis.call('PEXPIRE', tk, 2 * ttl)\n"
	"redis.call('PEXPIRE', lk, 2 * ttl)\n"
	"redis.call('PEXPIRE', sk, 2 * ttl)\n"
	"return out\n";

/* ---- the URL ---- */

static int bad_url(const char *s, char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen,
		 "--redis: '%s' %s (redis://[:PASSWORD@]HOST:PORT[/DB], "
		 "unix://[:PASSWORD@]/PATH, sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER "
		 "or cluster://[:PASSWORD@]HOST:PORT[,HOST:PORT...])",
		 s, why);
	return -EINVAL;
}

/* Digits only, in [min, max]. */
static bool parse_num(const char *s, size_t n, unsigned long max, unsigned int *out)
{
	unsigned long v = 0;

	if (!n || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = (unsigned int)v;
	return true;
}

/* ":PASSWORD@" at @p, if there: advances *p past it. */
static int parse_password(const char *s, const char **p, struct rl_redis_url *u, char *err,
			  size_t errlen)
{
	const char *at = strrchr(*p, '@');
	size_t n;

	if (!at)
		return 0;
	if (**p != ':')
		return bad_url(s, err, errlen,
			       "has a user name: only a password is supported (\":PASSWORD@\")");
	n = (size_t)(at - *p - 1);
	if (!n)
		return bad_url(s, err, errlen, "has an empty password");
	if (n >= sizeof(u->password))
		return bad_url(s, err, errlen, "has a password too long");
	memcpy(u->password, *p + 1, n);
	u->password[n] = '\0';
	*p = at + 1;
	return 0;
}

/* HOST:PORT at *@p, HOST a name, an IPv4 address or [IPv6]; *@p ends past the port. */
static int parse_hostport(const char *s, const char **p, struct rl_redis_addr *a, char *err,
			  size_t errlen)
{
	const char *q = *p, *end, *colon;
	size_t n;

	if (*q == '[') {
		end = strchr(q, ']');
		if (!end || end == q + 1)
			return bad_url(s, err, errlen,
				       "has an unterminated or empty [IPv6] address");
		for (const char *c = q + 1; c < end; c++)
			if (!strchr("0123456789abcdefABCDEF:.", *c))
				return bad_url(s, err, errlen, "has an invalid IPv6 address");
		n = (size_t)(end - q - 1);
		memcpy(a->host, q + 1, n);
		a->host[n] = '\0';
		colon = end + 1;
		if (*colon != ':')
			return bad_url(s, err, errlen, "has no :PORT after the host");
	} else {
		colon = q + strcspn(q, ":,/");
		n = (size_t)(colon - q);
		if (!n)
			return bad_url(s, err, errlen, "has no host");
		if (*colon != ':')
			return bad_url(s, err, errlen, "has no :PORT after the host");
		if (n >= sizeof(a->host))
			return bad_url(s, err, errlen, "has a host name too long");
		for (const char *c = q; c < colon; c++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-",
				    *c))
				return bad_url(s, err, errlen, "has an invalid host name");
		memcpy(a->host, q, n);
		a->host[n] = '\0';
	}
	q = colon + 1;
	n = strcspn(q, ",/");
	if (!parse_num(q, n, 65535, &a->port) || !a->port)
		return bad_url(s, err, errlen, "has no valid PORT (1-65535)");
	*p = q + n;
	return 0;
}

/* HOST:PORT[,HOST:PORT...] at *@p (sentinel, cluster): into u->addrs. */
static int parse_addrs(const char *s, const char **p, struct rl_redis_url *u, char *err,
		       size_t errlen)
{
	int ret;

	for (;;) {
		if (u->naddrs == RL_REDIS_ADDRS_MAX)
			return bad_url(s, err, errlen, "lists more than 16 servers");
		ret = parse_hostport(s, p, &u->addrs[u->naddrs], err, errlen);
		if (ret)
			return ret;
		for (unsigned int i = 0; i < u->naddrs; i++)
			if (u->addrs[i].port == u->addrs[u->naddrs].port &&
			    !strcmp(u->addrs[i].host, u->addrs[u->naddrs].host))
				return bad_url(s, err, errlen, "lists a server twice");
		u->naddrs++;
		if (**p != ',')
			break;
		(*p)++;
	}
	snprintf(u->host, sizeof(u->host), "%s", u->addrs[0].host);
	u->port = u->addrs[0].port;
	return 0;
}

static int parse_unix(const char *s, struct rl_redis_url *u, char *err, size_t errlen)
{
	const char *p = s + 7;
	int ret;

	u->kind = RL_REDIS_UNIX;
	u->is_unix = true;
	ret = parse_password(s, &p, u, err, errlen);
	if (ret)
		return ret;
	if (*p != '/')
		return bad_url(s, err, errlen, "needs an absolute socket path");
	if (strlen(p) >= sizeof(u->path))
		return bad_url(s, err, errlen, "has a socket path too long");
	if (!p[1] || p[strlen(p) - 1] == '/')
		return bad_url(s, err, errlen, "names a directory, not a socket");
	strcpy(u->path, p);
	return 0;
}

int rl_redis_url_parse(const char *s, struct rl_redis_url *u, char *err, size_t errlen)
{
	struct rl_redis_addr a;
	const char *p;
	size_t n;
	int ret;

	memset(u, 0, sizeof(*u));
	if (!strncmp(s, "unix://", 7))
		return parse_unix(s, u, err, errlen);
	if (!strncmp(s, "sentinel://", 11) || !strncmp(s, "cluster://", 10)) {
		bool sentinel = s[0] == 's';

		u->kind = sentinel ? RL_REDIS_SENTINEL : RL_REDIS_CLUSTER;
		p = s + (sentinel ? 11 : 10);
		ret = parse_password(s, &p, u, err, errlen);
		if (!ret)
			ret = parse_addrs(s, &p, u, err, errlen);
		if (ret)
			return ret;
		if (!sentinel)
			return *p ? bad_url(s, err, errlen,
					    "has something after the servers (a cluster has "
					    "no DB or master name)") :
				    0;
		if (*p != '/' || !p[1])
			return bad_url(s, err, errlen, "has no /MASTER name after the sentinels");
		p++;
		n = strlen(p);
		if (n >= sizeof(u->master))
			return bad_url(s, err, errlen, "has a master name too long");
		for (size_t i = 0; i < n; i++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
				    p[i]))
				return bad_url(s, err, errlen, "has an invalid master name");
		memcpy(u->master, p, n + 1);
		return 0;
	}
	if (strncmp(s, "redis://", 8))
		return bad_url(s, err, errlen, "is not a Redis URL");
	p = s + 8;
	ret = parse_password(s, &p, u, err, errlen);
	if (!ret)
		ret = parse_hostport(s, &p, &a, err, errlen);
	if (ret)
		return ret;
	if (*p == ',')
		return bad_url(s, err, errlen,
			       "lists several servers: use sentinel:// or cluster://");
	memcpy(u->host, a.host, sizeof(u->host));
	u->port = a.port;
	if (!*p)
		return 0;
	p++;
	if (!parse_num(p, strlen(p), 2147483647UL, &u->db))
		return bad_url(s, err, errlen, "has no valid DB number after '/'");
	return 0;
}

/* HOST:PORT, in brackets for an IPv6 address. */
void rl_redis_addr_str(const char *host, unsigned int port, char *buf, size_t len)
{
	snprintf(buf, len, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}

void rl_redis_url_str(const struct rl_redis_url *u, char *buf, size_t len)
{
	size_t off;

	switch (u->kind) {
	case RL_REDIS_UNIX:
		snprintf(buf, len, "unix://%s", u->path);
		return;
	case RL_REDIS_SENTINEL:
	case RL_REDIS_CLUSTER:
		off = (size_t)snprintf(buf, len, "%s://",
				       u->kind == RL_REDIS_SENTINEL ? "sentinel" : "cluster");
		for (unsigned int i = 0; i < u->naddrs && off < len; i++) {
			if (i)
				off += (size_t)snprintf(buf + off, len - off, ",");
			if (off < len)
				rl_redis_addr_str(u->addrs[i].host, u->addrs[i].port, buf + off,
						  len - off);
			off += strlen(buf + off);
		}
		if (u->kind == RL_REDIS_SENTINEL && off < len)
			snprintf(buf + off, len - off, "/%s", u->master);
		return;
	default:
		snprintf(buf, len, strchr(u->host, ':') ? "redis://[%s]:%u/%u" : "redis://%s:%u/%u",
			 u->host, u->port, u->db);
	}
}

/* ---- the connection ---- */

/*
 * Every wait for the server is a poll() of at most this long, so that the
 * agent's stop check runs at least this often: a SIGTERM in the middle of a
 * round trip ends it within this time, whatever the server does.
 */
#define POLL_SLICE_MS 50
/*
 * The longest string any reply of ours holds: a node name (63), a SHA1 (40),
 * an error, or another node's policy text (under 4 KiB, rl_sync_kern_policy()).
 * 16 KiB is four times that; a longer one is not from our script.
 */
#define REPLY_STR_MAX 16384
/*
 * What a reply may take on the wire: a fixed part for the strings and the
 * headers (two strings of REPLY_STR_MAX and their headers fit), and per
 * source of the request its index and its units, each at most ":" 20
 * digits CRLF: 46 bytes, rounded up to 48. The largest reply the script can
 * give to the request asked, and not more: a reply past it is refused as
 * soon as its bytes exceed it, so what one round trip can make the agent
 * buffer is bounded by its own request (64 KiB with a few sources, 48 MiB
 * with the 2^20 sources the agent remembers at most).
 */
#define REPLY_FIXED_MAX	 (64 * 1024)
#define REPLY_PER_SOURCE 48

struct rl_redis {
	redisContext *c; /* the socket (c->fd); hiredis's own I/O is not used */
	redisReader *rd; /* our reader, with the limits below */
	char sha[41];
	char name[300]; /* the URL without its password, for messages */
	__u64 timeout_ns; /* the bound of a whole exchange */
	__u64 tx, rx;
	struct rl_redis_stop stop;
	/* The reader's limits for the reply being read, and why it refused one ("" if not). */
	size_t max_elements;
	bool nested; /* arrays in arrays allowed (rl_redis_command(): ROLE, CLUSTER SLOTS) */
	char refused[96];
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * The reader's objects, as hiredis's own (freeReplyObject() frees them), but
 * refusing what no reply of ours holds: an array inside an array, an array
 * longer than the request can be answered with, a string over REPLY_STR_MAX.
 * A refusal (NULL) stops the reader with an error.
 */
static void *reply_obj(const redisReadTask *task, int type)
{
	redisReply *r = calloc(1, sizeof(*r)), *parent;

	if (!r)
		return NULL;
	r->type = type;
	if (task->parent) {
		parent = task->parent->obj;
		parent->element[task->idx] = r;
	}
	return r;
}

static void *reply_string(const redisReadTask *task, char *str, size_t len)
{
	struct rl_redis *rr = task->privdata;
	redisReply *r;
	char *buf;

	if (len > REPLY_STR_MAX) {
		snprintf(rr->refused, sizeof(rr->refused), "a string of %zu bytes", len);
		return NULL;
	}
	buf = malloc(len + 1);
	if (!buf)
		return NULL;
	r = reply_obj(task, task->type);
	if (!r) {
		free(buf);
		return NULL;
	}
	memcpy(buf, str, len);
	buf[len] = '\0';
	r->str = buf;
	r->len = len;
	return r;
}

static void *reply_array(const redisReadTask *task, int elements)
{
	struct rl_redis *rr = task->privdata;
	redisReply *r;

	if (task->parent && !rr->nested) {
		snprintf(rr->refused, sizeof(rr->refused), "an array inside an array");
		return NULL;
	}
	if (elements > 0 && (size_t)elements > rr->max_elements) {
		snprintf(rr->refused, sizeof(rr->refused), "an array of %d elements (at most %zu)",
			 elements, rr->max_elements);
		return NULL;
	}
	r = reply_obj(task, REDIS_REPLY_ARRAY);
	if (!r)
		return NULL;
	if (elements > 0) {
		r->element = calloc((size_t)elements, sizeof(*r->element));
		if (!r->element) {
			free(r);
			return NULL;
		}
	}
	r->elements = elements > 0 ? (size_t)elements : 0;
	return r;
}

static void *reply_integer(const redisReadTask *task, long long value)
{
	redisReply *r = reply_obj(task, REDIS_REPLY_INTEGER);

	if (r)
		r->integer = value;
	return r;
}

static void *reply_nil(const redisReadTask *task)
{
	return reply_obj(task, REDIS_REPLY_NIL);
}

static redisReplyObjectFunctions reply_fns = {
	.createString = reply_string,
	.createArray = reply_array,
	.createInteger = reply_integer,
	.createNil = reply_nil,
	.freeObject = freeReplyObject,
};

/* Wait for @events on the socket until @deadline: 1 ready, 0 timed out, -EINTR stopped. */
static int wait_fd(struct rl_redis *r, short events, __u64 deadline, short *revents)
{
	for (;;) {
		struct pollfd p = { .fd = r->c->fd, .events = events };
		__u64 now = mono_ns();
		int ms, n;

		if (r->stop.fn && r->stop.fn(r->stop.ctx))
			return -EINTR;
		if (now >= deadline)
			return 0;
		ms = (int)((deadline - now + 999999ULL) / 1000000ULL);
		if (ms > POLL_SLICE_MS)
			ms = POLL_SLICE_MS;
		n = poll(&p, 1, ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0) {
			*revents = p.revents;
			return 1;
		}
	}
}

static int timed_out(struct rl_redis *r, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: no answer within %llu ms", r->name,
		 (unsigned long long)(r->timeout_ns / 1000000ULL));
	return -ETIMEDOUT;
}

static int stopped(struct rl_redis *r, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: stopped while waiting for the server", r->name);
	return -EINTR;
}

/* What is readable now into the reader; -EPROTO past @cap bytes, -EPIPE at the end of the stream. */
static int read_some(struct rl_redis *r, __u64 *got, __u64 cap, char *err, size_t errlen)
{
	char buf[16384];
	ssize_t n = recv(r->c->fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		snprintf(err, errlen, "%s: %s", r->name, strerror(errno));
		return -EIO;
	}
	if (!n) {
		snprintf(err, errlen, "%s: the server closed the connection", r->name);
		return -EPIPE;
	}
	r->rx += (__u64)n;
	*got += (__u64)n;
	if (*got > cap) {
		snprintf(err, errlen,
			 "%s: the server answered more than the %llu bytes the request can be "
			 "answered with",
			 r->name, (unsigned long long)cap);
		return -EPROTO;
	}
	if (redisReaderFeed(r->rd, buf, (size_t)n) != REDIS_OK) {
		snprintf(err, errlen, "%s: %s", r->name, r->rd->errstr);
		return -ENOMEM;
	}
	return 0;
}

/*
 * One exchange: send @out (@ncmd commands in RESP) and read back exactly
 * @ncmd replies into @rep, the whole before r->timeout_ns from now and in at
 * most @cap bytes, each reply an array of at most @max_elements. Anything
 * the server sent before the request or beyond the replies is not an answer
 * to it: a protocol error (the caller drops the connection, so a reply never
 * lands in the wrong round trip).
 */
static int exchange(struct rl_redis *r, const char *out, size_t outlen, int ncmd, redisReply **rep,
		    __u64 cap, size_t max_elements, char *err, size_t errlen)
{
	__u64 deadline = mono_ns() + r->timeout_ns, got = 0;
	size_t sent = 0;
	int ret, nrep = 0;
	char peek;
	ssize_t n;

	r->max_elements = max_elements;
	r->refused[0] = '\0';
	r->rd->privdata = r;
	n = recv(r->c->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0 || r->rd->len > r->rd->pos) {
		snprintf(err, errlen, "%s: the server sent a reply nobody asked for", r->name);
		return -EPROTO;
	}
	if (!n) {
		snprintf(err, errlen, "%s: the server closed the connection", r->name);
		return -EPIPE;
	}
	while (nrep < ncmd) {
		void *reply = NULL;
		short ev = 0;

		if (redisReaderGetReply(r->rd, &reply) != REDIS_OK) {
			if (r->refused[0])
				snprintf(err, errlen,
					 "%s: the server answered %s: not a reply of ours", r->name,
					 r->refused);
			else
				snprintf(err, errlen, "%s: %s", r->name, r->rd->errstr);
			ret = -EPROTO;
			goto fail;
		}
		if (reply) {
			/* A reply before the whole request went out answers nothing we asked. */
			if (sent < outlen) {
				freeReplyObject(reply);
				snprintf(err, errlen, "%s: the server answered before the request",
					 r->name);
				ret = -EPROTO;
				goto fail;
			}
			rep[nrep++] = reply;
			continue;
		}
		ret = wait_fd(r, sent < outlen ? POLLIN | POLLOUT : POLLIN, deadline, &ev);
		if (ret < 0) {
			if (ret == -EINTR)
				stopped(r, err, errlen);
			else
				snprintf(err, errlen, "%s: %s", r->name, strerror(-ret));
			goto fail;
		}
		if (!ret) {
			ret = timed_out(r, err, errlen);
			goto fail;
		}
		if (ev & POLLOUT && sent < outlen) {
			n = send(r->c->fd, out + sent, outlen - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				snprintf(err, errlen, "%s: %s", r->name, strerror(errno));
				ret = -EIO;
				goto fail;
			}
			if (n > 0) {
				sent += (size_t)n;
				r->tx += (__u64)n;
			}
		}
		if (ev & (POLLIN | POLLHUP | POLLERR)) {
			ret = read_some(r, &got, cap, err, errlen);
			if (ret)
				goto fail;
		}
	}
	/* Bytes beyond the replies, read with them or already waiting: more replies than requests. */
	n = recv(r->c->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT);
	if (r->rd->len > r->rd->pos || n > 0) {
		snprintf(err, errlen, "%s: the server sent more replies than it was asked for",
			 r->name);
		ret = -EPROTO;
		goto fail;
	}
	return 0;
fail:
	while (nrep)
		freeReplyObject(rep[--nrep]);
	return ret;
}

/*
 * One command and its reply; an error reply is returned as a reply (the
 * caller tells them apart), a failure of the connection as NULL with @err
 * and *@ret.
 */
static redisReply *command(struct rl_redis *r, int argc, const char **argv, const size_t *len,
			   __u64 cap, size_t max_elements, int *ret, char *err, size_t errlen)
{
	redisReply *rep = NULL;
	char *cmd = NULL;
	int n;

	n = redisFormatCommandArgv(&cmd, argc, argv, len);
	if (n < 0) {
		snprintf(err, errlen, "%s: out of memory for a command", r->name);
		*ret = -ENOMEM;
		return NULL;
	}
	*ret = exchange(r, cmd, (size_t)n, 1, &rep, cap, max_elements, err, errlen);
	redisFreeCommand(cmd);
	return *ret ? NULL : rep;
}

/* A command whose error reply is a failure too; -EACCES for authentication errors. */
static int command_ok(struct rl_redis *r, int argc, const char **argv, const char *what,
		      redisReply **out, char *err, size_t errlen)
{
	size_t len[4];
	redisReply *rep;
	int ret;

	for (int i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	rep = command(r, argc, argv, len, REPLY_FIXED_MAX, 0, &ret, err, errlen);
	if (!rep)
		return ret;
	if (rep->type == REDIS_REPLY_ERROR) {
		bool auth = !strncmp(rep->str, "NOAUTH", 6) || !strncmp(rep->str, "WRONGPASS", 9) ||
			    strstr(rep->str, "invalid password") ||
			    strstr(rep->str, "without any password");

		snprintf(err, errlen, "%s: %s refused: %s%s", r->name, what, rep->str,
			 !strncmp(rep->str, "NOAUTH", 6) ? " (give :PASSWORD@ in the URL)" : "");
		freeReplyObject(rep);
		return auth ? -EACCES : -EPROTO;
	}
	if (out)
		*out = rep;
	else
		freeReplyObject(rep);
	return 0;
}

static int load_script(struct rl_redis *r, char *err, size_t errlen)
{
	const char *argv[] = { "SCRIPT", "LOAD", script };
	redisReply *rep;
	int ret;

	ret = command_ok(r, 3, argv, "SCRIPT LOAD", &rep, err, errlen);
	if (ret)
		return ret;
	if (rep->type != REDIS_REPLY_STRING || rep->len != 40) {
		snprintf(err, errlen, "%s: SCRIPT LOAD answered no SHA1", r->name);
		freeReplyObject(rep);
		return -EPROTO;
	}
	memcpy(r->sha, rep->str, 40);
	r->sha[40] = '\0';
	freeReplyObject(rep);
	return 0;
}

int rl_redis_set_timeout(struct rl_redis *r, __u64 timeout_ns)
{
	r->timeout_ns = timeout_ns;
	return 0;
}

/* The non-blocking connect's end, before @deadline. */
static int connect_wait(struct rl_redis *r, __u64 deadline, char *err, size_t errlen)
{
	socklen_t len = sizeof(int);
	short ev = 0;
	int ret, soerr = 0;

	ret = wait_fd(r, POLLOUT, deadline, &ev);
	if (ret < 0)
		return ret == -EINTR ? stopped(r, err, errlen) : ret;
	if (!ret) {
		snprintf(err, errlen, "couldn't connect to %s: no answer within %llu ms", r->name,
			 (unsigned long long)(r->timeout_ns / 1000000ULL));
		return -ETIMEDOUT;
	}
	if (getsockopt(r->c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
		soerr = errno;
	if (soerr) {
		snprintf(err, errlen, "couldn't connect to %s: %s", r->name, strerror(soerr));
		return -ECONNREFUSED;
	}
	return 0;
}

int rl_redis_connect(const struct rl_redis_url *u, __u64 timeout_ns,
		     const struct rl_redis_stop *stop, struct rl_redis **out, char *err,
		     size_t errlen)
{
	return rl_redis_connect_to(u, u->host, u->port, 0, timeout_ns, stop, out, err, errlen);
}

int rl_redis_connect_to(const struct rl_redis_url *u, const char *host, unsigned int port,
			unsigned int flags, __u64 timeout_ns, const struct rl_redis_stop *stop,
			struct rl_redis **out, char *err, size_t errlen)
{
	__u64 deadline = mono_ns() + timeout_ns, left;
	struct rl_redis *r = calloc(1, sizeof(*r));
	char db[16];
	int ret;

	if (!r)
		return -ENOMEM;
	r->timeout_ns = timeout_ns;
	if (stop)
		r->stop = *stop;
	if (u->kind == RL_REDIS_UNIX || u->kind == RL_REDIS_TCP)
		rl_redis_url_str(u, r->name, sizeof(r->name));
	else
		rl_redis_addr_str(host, port, r->name, sizeof(r->name));
	/*
	 * Non-blocking from the connect on: every wait is a poll() against the
	 * deadline (a name is still resolved by a blocking getaddrinfo()).
	 */
	if (u->kind == RL_REDIS_UNIX)
		r->c = redisConnectUnixNonBlock(u->path);
	else
		r->c = redisConnectNonBlock(host, (int)port);
	r->rd = redisReaderCreateWithFunctions(&reply_fns);
	if (!r->c || !r->rd) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s: couldn't allocate a connection", r->name);
		goto err;
	}
	if (r->c->err) {
		ret = -ECONNREFUSED;
		snprintf(err, errlen, "couldn't connect to %s: %s", r->name, r->c->errstr);
		goto err;
	}
	ret = connect_wait(r, deadline, err, errlen);
	if (ret)
		goto err;
	/* The rest of the handshake within what is left of the same bound. */
	left = mono_ns();
	r->timeout_ns = deadline > left ? deadline - left : 1;
	if (u->password[0] && !(flags & RL_REDIS_NO_AUTH)) {
		const char *argv[] = { "AUTH", u->password };

		ret = command_ok(r, 2, argv, "AUTH", NULL, err, errlen);
		if (ret)
			goto err;
	}
	if (u->db && !(flags & RL_REDIS_NO_SCRIPT)) {
		const char *argv[] = { "SELECT", db };

		snprintf(db, sizeof(db), "%u", u->db);
		ret = command_ok(r, 2, argv, "SELECT", NULL, err, errlen);
		if (ret)
			goto err;
	}
	if (!(flags & RL_REDIS_NO_SCRIPT)) {
		ret = load_script(r, err, errlen);
		if (ret)
			goto err;
	}
	r->timeout_ns = timeout_ns;
	*out = r;
	return 0;
err:
	/* The messages name the whole bound, not what was left of it. */
	if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "%s: no answer within %llu ms", r->name,
			 (unsigned long long)(timeout_ns / 1000000ULL));
	rl_redis_close(r);
	return ret;
}

void rl_redis_close(struct rl_redis *r)
{
	if (!r)
		return;
	if (r->rd)
		redisReaderFree(r->rd);
	if (r->c)
		redisFree(r->c);
	free(r);
}

void rl_redis_bytes(const struct rl_redis *r, __u64 *tx, __u64 *rx)
{
	*tx = r->tx;
	*rx = r->rx;
}

const char *rl_redis_name(const struct rl_redis *r)
{
	return r->name;
}

int rl_redis_command(struct rl_redis *r, int argc, const char **argv, size_t max_elements,
		     redisReply **out, char *err, size_t errlen)
{
	size_t *len = calloc((size_t)argc, sizeof(*len));
	redisReply *rep;
	int ret;

	if (!len)
		return -ENOMEM;
	for (int i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	r->nested = true;
	rep = command(r, argc, argv, len, REPLY_FIXED_MAX + 64 * (__u64)max_elements, max_elements,
		      &ret, err, errlen);
	r->nested = false;
	free(len);
	if (!rep)
		return ret;
	*out = rep;
	return 0;
}

int rl_redis_subscribe(struct rl_redis *r, const char *channel, char *err, size_t errlen)
{
	const char *argv[] = { "SUBSCRIBE", channel };
	size_t len[] = { 9, strlen(channel) };
	redisReply *rep;
	int ret;

	/* Its confirmation: ["subscribe", channel, 1]. */
	rep = command(r, 2, argv, len, REPLY_FIXED_MAX, 3, &ret, err, errlen);
	if (!rep)
		return ret;
	if (rep->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "%s: SUBSCRIBE refused: %s", r->name, rep->str);
		ret = !strncmp(rep->str, "NOAUTH", 6) ? -EACCES : -EPROTO;
		freeReplyObject(rep);
		return ret;
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 3 ||
	    rep->element[0]->type != REDIS_REPLY_STRING ||
	    strcmp(rep->element[0]->str, "subscribe") ||
	    rep->element[1]->type != REDIS_REPLY_STRING || strcmp(rep->element[1]->str, channel)) {
		snprintf(err, errlen, "%s: SUBSCRIBE answered something unexpected", r->name);
		freeReplyObject(rep);
		return -EPROTO;
	}
	freeReplyObject(rep);
	return 0;
}

/*
 * What one call of rl_redis_message() reads at most: a message of ours is a
 * few hundred bytes, so a sender flooding the subscription costs a bounded
 * read per round trip, and the reader never holds more than this and one
 * message being read.
 */
#define MESSAGE_READ_MAX (64 * 1024)

int rl_redis_message(struct rl_redis *r, redisReply **out, char *err, size_t errlen)
{
	__u64 got = 0, before;
	void *reply = NULL;
	int ret;

	*out = NULL;
	r->max_elements = 3; /* ["message", channel, payload] */
	r->nested = false;
	r->refused[0] = '\0';
	r->rd->privdata = r;
	for (;;) {
		if (redisReaderGetReply(r->rd, &reply) != REDIS_OK) {
			snprintf(err, errlen, "%s: %s", r->name,
				 r->refused[0] ? r->refused : r->rd->errstr);
			return -EPROTO;
		}
		if (reply) {
			*out = reply;
			return 1;
		}
		if (got >= MESSAGE_READ_MAX)
			return 0;
		before = got;
		ret = read_some(r, &got, ~0ULL, err, errlen);
		if (ret)
			return ret;
		if (got == before)
			return 0; /* nothing more has come */
	}
}

/* ---- the round trip ---- */

#define FIXED_ARGS 8 /* EVALSHA sha 1 prefix node ttl stale policy */

static int parse_reply(struct rl_redis *r, const redisReply *rep, struct rl_sync_item *items,
		       size_t n, struct rl_sync_reply *out, char *err, size_t errlen)
{
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 3 || rep->elements % 2 == 0 ||
	    rep->element[0]->type != REDIS_REPLY_INTEGER ||
	    rep->element[1]->type != REDIS_REPLY_STRING ||
	    rep->element[2]->type != REDIS_REPLY_STRING || rep->element[0]->integer < 1)
		goto bad;
	out->nodes = (__u64)rep->element[0]->integer;
	snprintf(out->other_node, sizeof(out->other_node), "%s", rep->element[1]->str);
	snprintf(out->other_policy, sizeof(out->other_policy), "%s", rep->element[2]->str);
	for (size_t i = 3; i < rep->elements; i += 2) {
		const redisReply *ix = rep->element[i], *un = rep->element[i + 1];

		/* Each source at most once: a second charge for one is not the script's. */
		if (ix->type != REDIS_REPLY_INTEGER || un->type != REDIS_REPLY_INTEGER ||
		    ix->integer < 0 || (size_t)ix->integer >= n || un->integer <= 0 ||
		    items[ix->integer].remote)
			goto bad;
		items[ix->integer].remote = (__u64)un->integer;
		out->shared++;
	}
	return 0;
bad:
	for (size_t i = 0; i < n; i++)
		items[i].remote = 0;
	out->shared = 0;
	snprintf(err, errlen, "%s: the sync script answered something unexpected", r->name);
	return -EPROTO;
}

int rl_redis_sync(struct rl_redis *r, const struct rl_sync_req *req, struct rl_sync_item *items,
		  size_t n, struct rl_sync_reply *rep, char *err, size_t errlen)
{
	size_t argc = FIXED_ARGS + 2 * n;
	const char **argv = malloc(argc * sizeof(*argv));
	size_t *len = malloc(argc * sizeof(*len));
	char *nums = malloc((n + 2) * 24), prefix[8 + RL_SYNC_NAME_MAX];
	__u64 cap = REPLY_FIXED_MAX + (__u64)REPLY_PER_SOURCE * n;
	redisReply *reply = NULL;
	int ret = -ENOMEM;

	memset(rep, 0, sizeof(*rep));
	if (!argv || !len || !nums) {
		snprintf(err, errlen, "out of memory for %zu sources", n);
		goto out;
	}
	snprintf(prefix, sizeof(prefix), "rl:{%s}", req->group);
	argv[0] = "EVALSHA";
	argv[1] = r->sha;
	argv[2] = "1";
	argv[3] = prefix;
	argv[4] = req->node;
	snprintf(nums, 24, "%llu", (unsigned long long)req->ttl_ms);
	snprintf(nums + 24, 24, "%llu", (unsigned long long)req->stale_ms);
	argv[5] = nums;
	argv[6] = nums + 24;
	argv[7] = req->policy;
	for (size_t i = 0; i < n; i++) {
		char *num = nums + (i + 2) * 24;

		snprintf(num, 24, "%llu", (unsigned long long)items[i].units);
		argv[FIXED_ARGS + 2 * i] = items[i].src;
		argv[FIXED_ARGS + 2 * i + 1] = num;
		items[i].remote = 0;
	}
	for (size_t i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	for (int attempt = 0;; attempt++) {
		rep->commands++;
		/* The reply: 3 fixed elements, then at most a pair per source. */
		reply = command(r, (int)argc, argv, len, cap, 3 + 2 * n, &ret, err, errlen);
		if (!reply)
			goto out;
		if (reply->type != REDIS_REPLY_ERROR)
			break;
		/* A restarted server has lost the script: load it once more. */
		if (!attempt && !strncmp(reply->str, "NOSCRIPT", 8)) {
			freeReplyObject(reply);
			reply = NULL;
			rep->commands++;
			ret = load_script(r, err, errlen);
			if (ret)
				goto out;
			argv[1] = r->sha;
			continue;
		}
		snprintf(err, errlen, "%s: the sync script failed: %s", r->name, reply->str);
		/* READONLY: a replica (a master demoted by a failover): -EROFS, ask again. */
		ret = !strncmp(reply->str, "NOAUTH", 6)	  ? -EACCES :
		      !strncmp(reply->str, "READONLY", 8) ? -EROFS :
							    -EPROTO;
		goto out;
	}
	ret = parse_reply(r, reply, items, n, rep, err, errlen);
out:
	if (reply)
		freeReplyObject(reply);
	free(nums);
	free(len);
	free(argv);
	return ret;
}

bool rl_sync_policy_diff(const char *mine, const char *theirs, const char *node, char *buf,
			 size_t len)
{
	const char *a = mine, *b = theirs;

	while (*a || *b) {
		size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");

		if (na != nb || memcmp(a, b, na)) {
			/* Name the key if both lines have the same one. */
			size_t ka = strcspn(a, "=\n"), kb = strcspn(b, "=\n");

			if (na && nb && ka == kb && ka < na && !memcmp(a, b, ka))
				snprintf(buf, len, "%.*s: %.*s here, %.*s on %s", (int)ka, a,
					 (int)(na - ka - 1), a + ka + 1, (int)(nb - kb - 1),
					 b + kb + 1, node);
			else
				snprintf(buf, len, "'%.*s' here, '%.*s' on %s", (int)na, a, (int)nb,
					 b, node);
			return true;
		}
		a += na + (a[na] == '\n');
		b += nb + (b[nb] == '\n');
	}
	return false;
}
