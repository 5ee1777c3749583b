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
#include <sys/time.h>
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

struct rl_redis {
	redisContext *c;
	char sha[41];
	char name[300]; /* the URL without its password, for messages */
	__u64 timeout_ns;
	__u64 tx, rx;
};

/* ---- the URL ---- */

static int bad_url(const char *s, char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen,
		 "--redis: '%s' %s (redis://[:PASSWORD@]HOST:PORT[/DB] or "
		 "unix://[:PASSWORD@]/PATH)",
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

int rl_redis_url_parse(const char *s, struct rl_redis_url *u, char *err, size_t errlen)
{
	const char *p, *end, *colon;
	size_t n;
	int ret;

	memset(u, 0, sizeof(*u));
	if (!strncmp(s, "unix://", 7)) {
		u->is_unix = true;
		p = s + 7;
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
	if (strncmp(s, "redis://", 8))
		return bad_url(s, err, errlen, "is not a Redis URL");
	p = s + 8;
	ret = parse_password(s, &p, u, err, errlen);
	if (ret)
		return ret;
	/* HOST: [IPv6] or name/IPv4 up to the port's ':'. */
	if (*p == '[') {
		end = strchr(p, ']');
		if (!end || end == p + 1)
			return bad_url(s, err, errlen,
				       "has an unterminated or empty [IPv6] address");
		for (const char *q = p + 1; q < end; q++)
			if (!strchr("0123456789abcdefABCDEF:.", *q))
				return bad_url(s, err, errlen, "has an invalid IPv6 address");
		n = (size_t)(end - p - 1);
		memcpy(u->host, p + 1, n);
		u->host[n] = '\0';
		colon = end + 1;
		if (*colon != ':')
			return bad_url(s, err, errlen, "has no :PORT after the host");
	} else {
		colon = strchr(p, ':');
		if (!colon)
			return bad_url(s, err, errlen, "has no :PORT after the host");
		n = (size_t)(colon - p);
		if (!n)
			return bad_url(s, err, errlen, "has no host");
		if (n >= sizeof(u->host))
			return bad_url(s, err, errlen, "has a host name too long");
		for (const char *q = p; q < colon; q++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-",
				    *q))
				return bad_url(s, err, errlen, "has an invalid host name");
		memcpy(u->host, p, n);
		u->host[n] = '\0';
	}
	p = colon + 1;
	n = strcspn(p, "/");
	if (!parse_num(p, n, 65535, &u->port) || !u->port)
		return bad_url(s, err, errlen, "has no valid PORT (1-65535)");
	p += n;
	if (!*p)
		return 0;
	p++;
	if (!parse_num(p, strlen(p), 2147483647UL, &u->db))
		return bad_url(s, err, errlen, "has no valid DB number after '/'");
	return 0;
}

void rl_redis_url_str(const struct rl_redis_url *u, char *buf, size_t len)
{
	if (u->is_unix)
		snprintf(buf, len, "unix://%s", u->path);
	else if (strchr(u->host, ':'))
		snprintf(buf, len, "redis://[%s]:%u/%u", u->host, u->port, u->db);
	else
		snprintf(buf, len, "redis://%s:%u/%u", u->host, u->port, u->db);
}

/* ---- the connection ---- */

/* The size of a command in RESP, as hiredis writes it. */
static __u64 resp_cmd_len(int argc, const size_t *len)
{
	char tmp[32];
	__u64 n = (__u64)snprintf(tmp, sizeof(tmp), "*%d\r\n", argc);

	for (int i = 0; i < argc; i++)
		n += (__u64)snprintf(tmp, sizeof(tmp), "$%zu\r\n", len[i]) + len[i] + 2;
	return n;
}

/* The size of a reply in RESP, as the server wrote it. */
static __u64 resp_reply_len(const redisReply *r)
{
	char tmp[32];
	__u64 n;

	switch (r->type) {
	case REDIS_REPLY_STRING:
		return (__u64)snprintf(tmp, sizeof(tmp), "$%zu\r\n", r->len) + r->len + 2;
	case REDIS_REPLY_ARRAY:
		n = (__u64)snprintf(tmp, sizeof(tmp), "*%zu\r\n", r->elements);
		for (size_t i = 0; i < r->elements; i++)
			n += resp_reply_len(r->element[i]);
		return n;
	case REDIS_REPLY_INTEGER:
		return (__u64)snprintf(tmp, sizeof(tmp), ":%lld\r\n", r->integer);
	case REDIS_REPLY_NIL:
		return 5; /* $-1\r\n */
	default: /* status, error */
		return r->len + 3;
	}
}

static const char *io_error(const redisContext *c, __u64 timeout_ns, char *buf, size_t len)
{
	if (c->err == REDIS_ERR_IO &&
	    (strstr(c->errstr, "temporarily unavailable") || strstr(c->errstr, "timed out"))) {
		snprintf(buf, len, "no answer within %llu ms",
			 (unsigned long long)(timeout_ns / 1000000));
		return buf;
	}
	if (c->err == REDIS_ERR_EOF)
		return "the server closed the connection";
	return c->errstr;
}

/*
 * One command and its reply; an error reply is returned as a reply (the
 * caller tells them apart), a failure of the connection as NULL with @err.
 */
static redisReply *command(struct rl_redis *r, int argc, const char **argv, const size_t *len,
			   char *err, size_t errlen)
{
	redisReply *rep;
	char buf[64];

	r->tx += resp_cmd_len(argc, len);
	rep = redisCommandArgv(r->c, argc, argv, len);
	if (!rep) {
		snprintf(err, errlen, "%s: %s", r->name,
			 io_error(r->c, r->timeout_ns, buf, sizeof(buf)));
		return NULL;
	}
	r->rx += resp_reply_len(rep);
	return rep;
}

/* A command whose error reply is a failure too; -EACCES for authentication errors. */
static int command_ok(struct rl_redis *r, int argc, const char **argv, const char *what,
		      redisReply **out, char *err, size_t errlen)
{
	size_t len[4];
	redisReply *rep;

	for (int i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	rep = command(r, argc, argv, len, err, errlen);
	if (!rep)
		return -EIO;
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

static struct timeval tv_of(__u64 ns)
{
	return (struct timeval){ .tv_sec = (time_t)(ns / 1000000000ULL),
				 .tv_usec = (suseconds_t)(ns % 1000000000ULL / 1000) };
}

int rl_redis_set_timeout(struct rl_redis *r, __u64 timeout_ns)
{
	if (redisSetTimeout(r->c, tv_of(timeout_ns)))
		return -EIO;
	r->timeout_ns = timeout_ns;
	return 0;
}

int rl_redis_connect(const struct rl_redis_url *u, __u64 timeout_ns, struct rl_redis **out,
		     char *err, size_t errlen)
{
	struct timeval tv = tv_of(timeout_ns);
	struct rl_redis *r = calloc(1, sizeof(*r));
	char db[16], buf[64];
	int ret;

	if (!r)
		return -ENOMEM;
	r->timeout_ns = timeout_ns;
	rl_redis_url_str(u, r->name, sizeof(r->name));
	if (u->is_unix)
		r->c = redisConnectUnixWithTimeout(u->path, tv);
	else
		r->c = redisConnectWithTimeout(u->host, (int)u->port, tv);
	if (!r->c) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s: couldn't allocate a connection", r->name);
		goto err;
	}
	if (r->c->err) {
		ret = -ECONNREFUSED;
		snprintf(err, errlen, "couldn't connect to %s: %s", r->name,
			 io_error(r->c, timeout_ns, buf, sizeof(buf)));
		goto err;
	}
	if (rl_redis_set_timeout(r, timeout_ns)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: couldn't set the timeout", r->name);
		goto err;
	}
	if (u->password[0]) {
		const char *argv[] = { "AUTH", u->password };

		ret = command_ok(r, 2, argv, "AUTH", NULL, err, errlen);
		if (ret)
			goto err;
	}
	if (u->db) {
		const char *argv[] = { "SELECT", db };

		snprintf(db, sizeof(db), "%u", u->db);
		ret = command_ok(r, 2, argv, "SELECT", NULL, err, errlen);
		if (ret)
			goto err;
	}
	ret = load_script(r, err, errlen);
	if (ret)
		goto err;
	*out = r;
	return 0;
err:
	rl_redis_close(r);
	return ret;
}

void rl_redis_close(struct rl_redis *r)
{
	if (!r)
		return;
	if (r->c)
		redisFree(r->c);
	free(r);
}

void rl_redis_bytes(const struct rl_redis *r, __u64 *tx, __u64 *rx)
{
	*tx = r->tx;
	*rx = r->rx;
}

/* ---- the round trip ---- */

#define FIXED_ARGS 8 /* EVALSHA sha 1 prefix node ttl stale policy */

static int parse_reply(struct rl_redis *r, const redisReply *rep, struct rl_sync_item *items,
		       size_t n, struct rl_sync_reply *out, char *err, size_t errlen)
{
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 3 || rep->elements % 2 == 0 ||
	    rep->element[0]->type != REDIS_REPLY_INTEGER ||
	    rep->element[1]->type != REDIS_REPLY_STRING ||
	    rep->element[2]->type != REDIS_REPLY_STRING)
		goto bad;
	out->nodes = (__u64)rep->element[0]->integer;
	snprintf(out->other_node, sizeof(out->other_node), "%s", rep->element[1]->str);
	snprintf(out->other_policy, sizeof(out->other_policy), "%s", rep->element[2]->str);
	for (size_t i = 3; i < rep->elements; i += 2) {
		const redisReply *ix = rep->element[i], *un = rep->element[i + 1];

		if (ix->type != REDIS_REPLY_INTEGER || un->type != REDIS_REPLY_INTEGER ||
		    ix->integer < 0 || (size_t)ix->integer >= n || un->integer <= 0)
			goto bad;
		items[ix->integer].remote = (__u64)un->integer;
		out->shared++;
	}
	return 0;
bad:
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
		reply = command(r, (int)argc, argv, len, err, errlen);
		if (!reply) {
			ret = -EIO;
			goto out;
		}
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
		ret = !strncmp(reply->str, "NOAUTH", 6) ? -EACCES : -EPROTO;
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
