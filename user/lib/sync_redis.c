// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The Redis side of fleet sync: see sync_redis.h for the keys. The script is
 * the whole protocol: one EVALSHA per interval carries every source this node
 * passed, and its reply carries back only the sources that other nodes passed
 * too, so a source seen on one node costs its few bytes out and nothing back.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <sys/socket.h>
#include <hiredis/hiredis.h>
#include "sync_redis.h"

/*
 * The group's script. KEYS = rl:{GROUP}:nodes, rl:{GROUP}:policy; ARGV =
 * node, ttl_ms, policy. Returns { server time (ms), live nodes, first live
 * node with another policy or "", its policy or "" }.
 *
 * A node whose policy differs from a live node's is told so and changes
 * nothing: it is not registered, so the nodes already running go on (a node
 * changed by set stops; the others do not).
 */
static const char group_script[] =
	"local nk, pk = KEYS[1], KEYS[2]\n"
	"local node, ttl, pol = ARGV[1], tonumber(ARGV[2]), ARGV[3]\n"
	"local tm = redis.call('TIME')\n"
	"local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)\n"
	"local nows = string.format('%d', now)\n"
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
	"local out = { now, live, bad, badpol }\n"
	"if bad ~= '' then return out end\n"
	"redis.call('HSET', nk, node, nows)\n"
	"redis.call('HSET', pk, node, pol)\n"
	"redis.call('PEXPIRE', nk, ttl)\n"
	"redis.call('PEXPIRE', pk, ttl)\n"
	"return out\n";

/*
 * A bucket's script: the sources of one bucket (see sync_redis.h for the
 * keys). KEYS = d:E-1, d:E, l:NODE:E-1, l:NODE:E, s:NODE:E-1, s:NODE:E,
 * o:F-1, o:F, m, with E and F the epochs the agent expects (the server's time
 * divided by the TTL and by the claim time); ARGV = node, ttl_ms, stale_ms,
 * claim_ms, E, F, asked (1: sent after an ASK), the keys' prefix "rl:{TAG}:",
 * the number of sources the agent holds as shared, then pairs of (source,
 * units), those first. Returns { server time, the bucket's id, L, I, then L
 * indexes (in the request, from 0) of the sources only this node has, I pairs
 * (source, units) of the inbox, then pairs (index, units the other nodes
 * passed since this node last asked) for the sources with any }; an error
 * "RLEPOCH TIME" when E or F is not the server's (the agent asks again with
 * the right keys).
 *
 * Only what is shared costs (issue #27). A source nobody else has reported is
 * claimed: o says this node's name, its units go nowhere, and the agent
 * stops sending it until the claim is due again (within the claim time).
 * When another node reports a source claimed by A, the source becomes shared
 * ("* NODE:TIME..." in o) and A's inbox gets it with the total then (its base)
 * and the time: A's next round (whichever bucket's script, A reads its inbox
 * in each) charges A what the others passed since the base and A sends the
 * source every round from then on. The inbox is in d, the epoch's hash
 * (fields "\ni:NODE" -> "FIRST LAST" and "\ni:NODE:SEQ" -> chunks of at most
 * 1000 lines "BASE TIME SOURCE"): a node that reads it reads a few chunks,
 * never a string of everything unread, and an inbox nobody reads expires
 * with its epoch (its owner, if it comes back, claims its sources again). The record in o names the nodes reporting
 * the source and when, each node's time written again once a quarter of a
 * TTL (when its last ask was in another quarter), so a source the agent holds
 * as shared costs no read or write of o in most rounds; at that rewrite, a
 * source no other node has reported for a TTL is this node's claim again.
 *
 * A shared source's total (d) sums every node's units; l (per node) is the
 * total as that node last saw it and s when, so total - l is what the others
 * added since. A node that had not synced the source for stale_ms gets
 * nothing (and starts from the present total): a source idle here must not
 * inherit the others' past. A script runs atomically, so plain reads and
 * writes do: no other node's round trip can fall between them.
 *
 * A slot migrating. Every key the script touches is one of KEYS, so the
 * cluster refuses the script (TRYAGAIN, or ASK once all are moved) rather
 * than run it with some keys elsewhere: a script is never run in part, nor
 * where a key it reads is missing. For the ASK to be served, every one of
 * the keys must exist: each has a field "" from the first round of its
 * epoch (the previous epoch's is made with it if the key is new), and the next epoch's
 * keys are made in the last eighth of the epoch before (in a pcall: the
 * cluster refuses a key not declared while its slot migrates, and the script
 * goes on without it; never after an ASK, where the key may still be on the
 * old node).
 *
 * Numbers go back into Redis as numbers (Redis writes them exactly up to
 * 2^53, without an exponent below 1e15) or, past 1e15, through
 * string.format('%d'): Lua 5.1 turns a number into text with %.14g, which
 * would round totals above 1e14 (bytes in byte mode). Text is made per
 * source only where it must be: string functions cost the server about a
 * microsecond each, a round's largest part. Chunks of 1000 sources keep
 * unpack() within Lua's C stack (8000); at most 10000 inbox entries are
 * answered per round (the rest wait).
 */
static const char bucket_script[] =
	"local D0, D1, L0, L1, S0, S1, O0, O1, M = unpack(KEYS)\n"
	"local node = ARGV[1]\n"
	"local ttl, stale, own = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])\n"
	"local e, oe, asked, p = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7] == '1', ARGV[8]\n"
	"local nsh = tonumber(ARGV[9])\n"
	"local tm = redis.call('TIME')\n"
	"local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)\n"
	"local nows = string.format('%d', now)\n"
	"if math.floor(now / ttl) ~= e or math.floor(now / own) ~= oe then\n"
	"  return redis.error_reply('RLEPOCH ' .. nows)\n"
	"end\n"
	"local function num(v)\n"
	"  if v < 1e15 then return v end\n"
	"  return string.format('%d', v)\n"
	"end\n"
	"local function mk(k, x, len)\n"
	"  if redis.call('HSETNX', k, '', nows) == 1 then\n"
	"    redis.call('PEXPIREAT', k, string.format('%d', (x + 2) * len))\n"
	"    return true\n"
	"  end\n"
	"  return false\n"
	"end\n"
	"if mk(D1, e, ttl) then mk(D0, e - 1, ttl) end\n"
	"if mk(L1, e, ttl) then mk(L0, e - 1, ttl) end\n"
	"if mk(S1, e, ttl) then mk(S0, e - 1, ttl) end\n"
	"if mk(O1, oe, own) then mk(O0, oe - 1, own) end\n"
	"if not asked and now >= (e + 1) * ttl - ttl / 8 then\n"
	"  local x = string.format('%d', e + 1)\n"
	"  pcall(mk, p .. 'd:' .. x, e + 1, ttl)\n"
	"  pcall(mk, p .. 'l:' .. node .. ':' .. x, e + 1, ttl)\n"
	"  pcall(mk, p .. 's:' .. node .. ':' .. x, e + 1, ttl)\n"
	"end\n"
	"if not asked and now >= (oe + 1) * own - own / 8 then\n"
	"  pcall(mk, p .. 'o:' .. string.format('%d', oe + 1), oe + 1, own)\n"
	"end\n"
	"local id = redis.call('HGET', M, '')\n"
	"if not id then\n"
	"  id = nows .. ':' .. node\n"
	"  redis.call('HSET', M, '', id)\n"
	"end\n"
	"redis.call('PEXPIRE', M, string.format('%d', 2 * own))\n"
	"local me = ' ' .. node .. ':'\n"
	"local quarter = math.floor(now * 4 / ttl)\n"
	"local ik = '\\ni:' .. node\n"
	"local inbox, nin = {}, 0\n"
	"local function take(K)\n"
	"  local cnt = redis.call('HGET', K, ik)\n"
	"  if not cnt then return end\n"
	"  local a, b = string.match(cnt, '^(%d+) (%d+)$')\n"
	"  local first, last = tonumber(a) or 1, tonumber(b) or 0\n"
	"  while first <= last do\n"
	"    local ck = ik .. ':' .. first\n"
	"    local raw = redis.call('HGET', K, ck)\n"
	"    if raw then\n"
	"      if nin > 0 and nin + (tonumber(string.match(raw, '^(%d+)')) or 0) > 10000 then break end\n"
	"      for b, t, x in string.gmatch(raw, '\\n(%d+) (%d+) ([^\\n]+)') do\n"
	"        if not inbox[x] then nin = nin + 1 end\n"
	"        inbox[x] = { tonumber(b), tonumber(t) }\n"
	"      end\n"
	"      redis.call('HDEL', K, ck)\n"
	"    end\n"
	"    first = first + 1\n"
	"  end\n"
	"  if first <= last then\n"
	"    redis.call('HSET', K, ik, first .. ' ' .. last)\n"
	"  else\n"
	"    redis.call('HDEL', K, ik)\n"
	"  end\n"
	"end\n"
	"take(D0)\n"
	"if nin < 10000 then take(D1) end\n"
	"local locs, ins, chs, notes = {}, {}, {}, {}\n"
	"local function vals(k0, k1, f)\n"
	"  local v = redis.call('HMGET', k1, unpack(f))\n"
	"  local miss, mf = {}, {}\n"
	"  for j = 1, #f do\n"
	"    if not v[j] then\n"
	"      miss[#miss + 1] = j\n"
	"      mf[#mf + 1] = f[j]\n"
	"    end\n"
	"  end\n"
	"  if #miss > 0 then\n"
	"    local v0 = redis.call('HMGET', k0, unpack(mf))\n"
	"    for q = 1, #miss do v[miss[q]] = v0[q] end\n"
	"  end\n"
	"  return v\n"
	"end\n"
	"local function recs(f)\n"
	"  local o = redis.call('HMGET', O1, unpack(f))\n"
	"  local cur, miss = {}, {}\n"
	"  for j = 1, #f do\n"
	"    cur[j] = o[j] ~= false\n"
	"    if not o[j] then miss[#miss + 1] = f[j] end\n"
	"  end\n"
	"  if #miss > 0 then\n"
	"    local o0 = redis.call('HMGET', O0, unpack(miss))\n"
	"    local q = 0\n"
	"    for j = 1, #f do\n"
	"      if not cur[j] then\n"
	"        q = q + 1\n"
	"        o[j] = o0[q]\n"
	"      end\n"
	"    end\n"
	"  end\n"
	"  return o, cur\n"
	"end\n"
	"local function since(x, tv, lv, sv)\n"
	"  local t, l, s = tonumber(tv) or 0, tonumber(lv), tonumber(sv)\n"
	"  local ib = inbox[x]\n"
	"  if ib then\n"
	"    if not s or ib[2] > s then l, s = ib[1], ib[2] end\n"
	"    inbox[x] = nil\n"
	"  end\n"
	"  if l and s and now - s <= stale and t > l then return t, t - l, s end\n"
	"  return t, 0, s\n"
	"end\n"
	"local n = (#ARGV - 9) / 2\n"
	"for c = 0, n - 1, 1000 do\n"
	"  local m = math.min(1000, n - c)\n"
	"  local src, sh, ow = {}, {}, {}\n"
	"  for j = 1, m do src[j] = ARGV[8 + 2 * (c + j)] end\n"
	"  local rec, cur = {}, {}\n"
	"  local cl = {}\n"
	"  for j = 1, m do\n"
	"    if c + j <= nsh then sh[#sh + 1] = j else cl[#cl + 1] = j end\n"
	"  end\n"
	"  if #cl > 0 then\n"
	"    local f = {}\n"
	"    for q = 1, #cl do f[q] = src[cl[q]] end\n"
	"    local o, oc = recs(f)\n"
	"    for q = 1, #cl do\n"
	"      local j = cl[q]\n"
	"      if not o[q] or o[q] == node then\n"
	"        locs[#locs + 1] = c + j - 1\n"
	"        inbox[src[j]] = nil\n"
	"        if not oc[q] then\n"
	"          ow[#ow + 1] = src[j]\n"
	"          ow[#ow + 1] = node\n"
	"        end\n"
	"      else\n"
	"        rec[j], cur[j] = o[q], oc[q]\n"
	"        sh[#sh + 1] = j\n"
	"      end\n"
	"    end\n"
	"  end\n"
	"  if #sh > 0 then\n"
	"    local f = {}\n"
	"    for q = 1, #sh do f[q] = src[sh[q]] end\n"
	"    local tv, lv, sv = vals(D0, D1, f), vals(L0, L1, f), vals(S0, S1, f)\n"
	"    local dw, lw, sw, due = {}, {}, {}, {}\n"
	"    for q = 1, #sh do\n"
	"      local j = sh[q]\n"
	"      local x = f[q]\n"
	"      local t, l, s = tonumber(tv[q]) or 0, tonumber(lv[q]), tonumber(sv[q])\n"
	"      local ib = inbox[x]\n"
	"      if ib then\n"
	"        if not s or ib[2] > s then l, s = ib[1], ib[2] end\n"
	"        inbox[x] = nil\n"
	"      end\n"
	"      if l and s and now - s <= stale and t > l then\n"
	"        chs[#chs + 1] = c + j - 1\n"
	"        chs[#chs + 1] = t - l\n"
	"      end\n"
	"      t = t + tonumber(ARGV[9 + 2 * (c + j)])\n"
	"      if t >= 1e15 then t = string.format('%d', t) end\n"
	"      dw[2 * q - 1], dw[2 * q] = x, t\n"
	"      lw[2 * q - 1], lw[2 * q] = x, t\n"
	"      sw[2 * q - 1], sw[2 * q] = x, now\n"
	"      if rec[j] or not s or math.floor(s * 4 / ttl) ~= quarter then due[#due + 1] = q end\n"
	"    end\n"
	"    redis.call('HSET', D1, unpack(dw))\n"
	"    redis.call('HSET', L1, unpack(lw))\n"
	"    redis.call('HSET', S1, unpack(sw))\n"
	"    if #due > 0 then\n"
	"      local df, dr = {}, {}\n"
	"      for k = 1, #due do\n"
	"        local j = sh[due[k]]\n"
	"        df[k] = f[due[k]]\n"
	"        dr[k] = rec[j]\n"
	"      end\n"
	"      local o, oc = {}, {}\n"
	"      local need = {}\n"
	"      for k = 1, #due do\n"
	"        if dr[k] then o[k], oc[k] = dr[k], cur[sh[due[k]]] else need[#need + 1] = k end\n"
	"      end\n"
	"      if #need > 0 then\n"
	"        local nf = {}\n"
	"        for k = 1, #need do nf[k] = df[need[k]] end\n"
	"        local no, nc = recs(nf)\n"
	"        for k = 1, #need do o[need[k]], oc[need[k]] = no[k] or node, no[k] and nc[k] end\n"
	"      end\n"
	"      for k = 1, #due do\n"
	"        local q = due[k]\n"
	"        local x, r, i = df[k], o[k], c + sh[q] - 1\n"
	"        if r == node then\n"
	"          if not oc[k] then\n"
	"            ow[#ow + 1] = x\n"
	"            ow[#ow + 1] = node\n"
	"          end\n"
	"          locs[#locs + 1] = i\n"
	"        elseif string.byte(r, 1) ~= 42 then\n"
	"          local note = notes[r] or {}\n"
	"          note[#note + 1] = '\\n' .. string.format('%d', tonumber(tv[q]) or 0) .. ' ' .. nows .. ' ' .. x\n"
	"          notes[r] = note\n"
	"          ow[#ow + 1] = x\n"
	"          ow[#ow + 1] = '* ' .. r .. ':' .. nows .. me .. nows\n"
	"        else\n"
	"          local ents, other = { '*' }, false\n"
	"          for y, ty in string.gmatch(r, ' ([^: ]+):(%d+)') do\n"
	"            local age = now - tonumber(ty)\n"
	"            if y ~= node and age <= 2 * ttl and #ents < 16 then\n"
	"              ents[#ents + 1] = ' ' .. y .. ':' .. ty\n"
	"              if age <= ttl then other = true end\n"
	"            end\n"
	"          end\n"
	"          ow[#ow + 1] = x\n"
	"          if other then\n"
	"            ents[#ents + 1] = me .. nows\n"
	"            ow[#ow + 1] = table.concat(ents)\n"
	"          else\n"
	"            ow[#ow + 1] = node\n"
	"            locs[#locs + 1] = i\n"
	"          end\n"
	"        end\n"
	"      end\n"
	"    end\n"
	"  end\n"
	"  if #ow > 0 then redis.call('HSET', O1, unpack(ow)) end\n"
	"end\n"
	"local rest = {}\n"
	"for x in pairs(inbox) do rest[#rest + 1] = x end\n"
	"for c = 1, #rest, 1000 do\n"
	"  local f = {}\n"
	"  for j = c, math.min(c + 999, #rest) do f[#f + 1] = rest[j] end\n"
	"  local tv, lv, sv = vals(D0, D1, f), vals(L0, L1, f), vals(S0, S1, f)\n"
	"  local lw, sw = {}, {}\n"
	"  for q = 1, #f do\n"
	"    local t, ch = since(f[q], tv[q], lv[q], sv[q])\n"
	"    ins[#ins + 1] = f[q]\n"
	"    ins[#ins + 1] = num(ch)\n"
	"    lw[2 * q - 1], lw[2 * q] = f[q], num(t)\n"
	"    sw[2 * q - 1], sw[2 * q] = f[q], now\n"
	"  end\n"
	"  redis.call('HSET', L1, unpack(lw))\n"
	"  redis.call('HSET', S1, unpack(sw))\n"
	"end\n"
	"for y, note in pairs(notes) do\n"
	"  local k = '\\ni:' .. y\n"
	"  local cnt = redis.call('HGET', D1, k)\n"
	"  local a, b = string.match(cnt or '', '^(%d+) (%d+)$')\n"
	"  local first, last = tonumber(a) or 1, tonumber(b) or 0\n"
	"  for c = 1, #note, 1000 do\n"
	"    local m = math.min(1000, #note - c + 1)\n"
	"    last = last + 1\n"
	"    redis.call('HSET', D1, k .. ':' .. last, m .. table.concat(note, '', c, c + m - 1))\n"
	"  end\n"
	"  redis.call('HSET', D1, k, first .. ' ' .. last)\n"
	"end\n"
	"local out = { now, id, #locs, #ins / 2 }\n"
	"for j = 1, #locs do out[#out + 1] = locs[j] end\n"
	"for j = 1, #ins do out[#out + 1] = ins[j] end\n"
	"for j = 1, #chs do out[#out + 1] = chs[j] end\n"
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
 * source of the request what the bucket's script can answer for it: its
 * index among the local ones (":" 20 digits CRLF, 23 bytes) and its index
 * and units among the charged ones (46), rounded up to 72; and per inbox
 * entry (INBOX_MAX at most) a source (a bulk string of at most 47 bytes and
 * its header) and its units: 96. The largest reply the scripts can give to
 * the request asked, and not more: a reply past it is refused as soon as its
 * bytes exceed it, so what one round trip can make the agent buffer is
 * bounded by its own request (64 KiB with a few sources, 72 MiB with the
 * 2^20 sources the agent remembers at most, plus 940 KiB per bucket).
 */
#define REPLY_FIXED_MAX	 (64 * 1024)
#define REPLY_PER_SOURCE 72
#define INBOX_MAX	 10000
#define REPLY_PER_INBOX	 96

struct rl_redis {
	redisContext *c; /* the socket (c->fd); hiredis's own I/O is not used */
	redisReader *rd; /* our reader, with the limits below */
	char sha_group[41], sha_bucket[41];
	char name[300]; /* the URL without its password, for messages */
	__u64 timeout_ns; /* the bound of a whole exchange */
	__u64 tx, rx;
	struct rl_redis_stop stop;
	/* The reader's limits for the reply being read, and why it refused one ("" if not). */
	size_t max_elements;
	bool nested; /* arrays in arrays allowed (rl_redis_command(): ROLE, CLUSTER SLOTS) */
	char refused[96];
	/*
	 * The server's clock less ours (CLOCK_REALTIME), in ms, as its last
	 * reply told: the epochs of a bucket's keys are the server's.
	 */
	__s64 clock_off_ms;
	bool clock_known;
	bool need_load; /* answered NOSCRIPT: load the scripts before asking again */
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
 * One connection's part of an exchange: send @out (@ncmd commands in RESP)
 * and read back exactly @ncmd replies into @rep, in at most @cap bytes, each
 * reply an array of at most @max_elements. Anything the server sent before
 * the request or beyond the replies is not an answer to it: a protocol error
 * (the caller drops the connection, so a reply never lands in the wrong
 * round trip). ret: 0, or -errno with @err once it failed.
 */
struct xfer {
	struct rl_redis *r;
	const char *out;
	size_t outlen, sent;
	/* Where each command ends in @out (NULL: one command): a reply before its end answers nothing asked. */
	const size_t *ends;
	int ncmd, nrep;
	redisReply **rep;
	__u64 cap, got;
	size_t max_elements;
	int ret;
	char err[320];
};

static void xfer_fail(struct xfer *x, int ret)
{
	x->ret = ret;
	while (x->nrep) {
		freeReplyObject(x->rep[--x->nrep]);
		x->rep[x->nrep] = NULL;
	}
}

/* The replies parsed so far into x->rep; false once it failed. */
static bool xfer_replies(struct xfer *x)
{
	struct rl_redis *r = x->r;

	r->rd->privdata = r;
	r->max_elements = x->max_elements;
	while (x->nrep < x->ncmd) {
		void *reply = NULL;

		if (redisReaderGetReply(r->rd, &reply) != REDIS_OK) {
			if (r->refused[0])
				snprintf(x->err, sizeof(x->err),
					 "%s: the server answered %s: not a reply of ours", r->name,
					 r->refused);
			else
				snprintf(x->err, sizeof(x->err), "%s: %s", r->name, r->rd->errstr);
			xfer_fail(x, -EPROTO);
			return false;
		}
		if (!reply)
			return true;
		/* A reply before its command went out whole answers nothing we asked. */
		if (x->sent < (x->ends ? x->ends[x->nrep] : x->outlen)) {
			freeReplyObject(reply);
			snprintf(x->err, sizeof(x->err),
				 "%s: the server answered before the request", r->name);
			xfer_fail(x, -EPROTO);
			return false;
		}
		x->rep[x->nrep++] = reply;
	}
	return true;
}

/*
 * The exchanges of @n connections at once, the whole before @deadline
 * (CLOCK_MONOTONIC ns): each connection's result in its x->ret. The stop
 * check of the first connection ends them all (-EINTR).
 */
static void exchange_many(struct xfer *xs, size_t n, __u64 deadline)
{
	struct pollfd *pf = calloc(n ? n : 1, sizeof(*pf));
	size_t *which = calloc(n ? n : 1, sizeof(*which));
	char peek;
	ssize_t got;

	if (!pf || !which) {
		for (size_t i = 0; i < n; i++) {
			snprintf(xs[i].err, sizeof(xs[i].err), "%s: out of memory", xs[i].r->name);
			xfer_fail(&xs[i], -ENOMEM);
		}
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct xfer *x = &xs[i];
		struct rl_redis *r = x->r;

		x->sent = 0;
		x->got = 0;
		x->nrep = 0;
		x->ret = 0;
		x->err[0] = '\0';
		r->refused[0] = '\0';
		got = recv(r->c->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT);
		if (got > 0 || r->rd->len > r->rd->pos) {
			snprintf(x->err, sizeof(x->err),
				 "%s: the server sent a reply nobody asked for", r->name);
			xfer_fail(x, -EPROTO);
		} else if (!got) {
			snprintf(x->err, sizeof(x->err), "%s: the server closed the connection",
				 r->name);
			xfer_fail(x, -EPIPE);
		}
	}
	for (;;) {
		const struct rl_redis_stop *stop = n ? &xs[0].r->stop : NULL;
		size_t np = 0;
		__u64 now;
		int ms, ready;

		for (size_t i = 0; i < n; i++) {
			struct xfer *x = &xs[i];

			if (x->ret || !xfer_replies(x) || x->nrep == x->ncmd)
				continue;
			pf[np].fd = x->r->c->fd;
			pf[np].events = x->sent < x->outlen ? POLLIN | POLLOUT : POLLIN;
			pf[np].revents = 0;
			which[np++] = i;
		}
		if (!np)
			break;
		now = mono_ns();
		if ((stop && stop->fn && stop->fn(stop->ctx)) || now >= deadline) {
			bool stopped = now < deadline;

			for (size_t k = 0; k < np; k++) {
				struct xfer *x = &xs[which[k]];

				if (stopped)
					snprintf(x->err, sizeof(x->err),
						 "%s: stopped while waiting for the server",
						 x->r->name);
				else
					snprintf(x->err, sizeof(x->err),
						 "%s: no answer within %llu ms", x->r->name,
						 (unsigned long long)(x->r->timeout_ns /
								      1000000ULL));
				xfer_fail(x, stopped ? -EINTR : -ETIMEDOUT);
			}
			break;
		}
		ms = (int)((deadline - now + 999999ULL) / 1000000ULL);
		if (ms > POLL_SLICE_MS)
			ms = POLL_SLICE_MS;
		ready = poll(pf, (nfds_t)np, ms);
		if (ready < 0 && errno != EINTR) {
			int e = errno;

			for (size_t k = 0; k < np; k++) {
				struct xfer *x = &xs[which[k]];

				snprintf(x->err, sizeof(x->err), "%s: %s", x->r->name, strerror(e));
				xfer_fail(x, -e);
			}
			break;
		}
		for (size_t k = 0; ready > 0 && k < np; k++) {
			struct xfer *x = &xs[which[k]];
			struct rl_redis *r = x->r;
			short ev = pf[k].revents;
			int ret;

			if (ev & POLLOUT && x->sent < x->outlen) {
				got = send(r->c->fd, x->out + x->sent, x->outlen - x->sent,
					   MSG_DONTWAIT | MSG_NOSIGNAL);
				if (got < 0 && errno != EAGAIN && errno != EINTR) {
					snprintf(x->err, sizeof(x->err), "%s: %s", r->name,
						 strerror(errno));
					xfer_fail(x, -EIO);
					continue;
				}
				if (got > 0) {
					x->sent += (size_t)got;
					r->tx += (__u64)got;
				}
			}
			if (ev & (POLLIN | POLLHUP | POLLERR)) {
				ret = read_some(r, &x->got, x->cap, x->err, sizeof(x->err));
				if (ret)
					xfer_fail(x, ret);
			}
		}
	}
	/* Bytes beyond the replies, read with them or already waiting: more replies than requests. */
	for (size_t i = 0; i < n; i++) {
		struct xfer *x = &xs[i];
		struct rl_redis *r = x->r;

		if (x->ret)
			continue;
		got = recv(r->c->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT);
		if (r->rd->len > r->rd->pos || got > 0) {
			snprintf(x->err, sizeof(x->err),
				 "%s: the server sent more replies than it was asked for", r->name);
			xfer_fail(x, -EPROTO);
		}
	}
out:
	free(pf);
	free(which);
}

/* One exchange on one connection, within r->timeout_ns from now (see struct xfer). */
static int exchange(struct rl_redis *r, const char *out, size_t outlen, int ncmd, redisReply **rep,
		    __u64 cap, size_t max_elements, char *err, size_t errlen)
{
	struct xfer x = {
		.r = r,
		.out = out,
		.outlen = outlen,
		.ncmd = ncmd,
		.rep = rep,
		.cap = cap,
		.max_elements = max_elements,
	};

	exchange_many(&x, 1, mono_ns() + r->timeout_ns);
	if (x.ret)
		snprintf(err, errlen, "%s", x.err);
	return x.ret;
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

/* SCRIPT LOAD of both scripts: their SHA1s into @r. */
static int load_scripts(struct rl_redis *r, char *err, size_t errlen)
{
	const char *text[2] = { group_script, bucket_script };
	char *sha[2] = { r->sha_group, r->sha_bucket };

	for (int i = 0; i < 2; i++) {
		const char *argv[] = { "SCRIPT", "LOAD", text[i] };
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
		memcpy(sha[i], rep->str, 40);
		sha[i][40] = '\0';
		freeReplyObject(rep);
	}
	r->need_load = false;
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
		ret = load_scripts(r, err, errlen);
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

__u32 rl_sync_src_hash(const char *src)
{
	__u32 h = 2166136261U; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)src; *p; p++)
		h = (h ^ *p) * 16777619U;
	return h;
}

void rl_sync_reply_free(struct rl_sync_reply *rep)
{
	free(rep->inbox);
	rep->inbox = NULL;
	rep->ninbox = 0;
}

static __s64 realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__s64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What the server's clock reads now, as far as its last reply told. */
static __u64 server_ms(const struct rl_redis *r)
{
	return (__u64)(realtime_ms() + (r->clock_known ? r->clock_off_ms : 0));
}

static void server_said(struct rl_redis *r, long long ms)
{
	r->clock_off_ms = (__s64)ms - realtime_ms();
	r->clock_known = true;
}

/*
 * How often a round asks one script at most: a reload (NOSCRIPT), an epoch
 * corrected (RLEPOCH), redirections (MOVED, ASK) and retries (TRYAGAIN)
 * each count one; past it the bucket fails this round.
 */
#define CMD_TRIES 8
/* A slot migrating (TRYAGAIN): how long to wait before asking again. */
#define TRYAGAIN_NS 10000000ULL

enum { C_PENDING, C_DONE, C_FAILED };

/* One script call of a round: the group's, or one bucket's. */
struct bcmd {
	int b; /* the bucket; -1: the group */
	size_t *idx, nidx; /* its items (indexes into the round's), those held as shared first */
	size_t nshared; /* how many */
	struct rl_redis *r; /* where it goes */
	bool asking; /* after an ASK: ASKING before it, once */
	int tries, state, ret;
	__u64 not_before; /* after a TRYAGAIN: not before this (CLOCK_MONOTONIC ns) */
	redisReply *rep;
	char err[320];
};

static void cmd_failed(struct bcmd *c, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cmd_failed(struct bcmd *c, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	c->state = C_FAILED;
	c->ret = ret;
}

/* The RESP of @c's script as the server's clock stands: *@out (free it), or -ENOMEM. */
static int format_cmd(const struct rl_sync_router *rt, const struct rl_sync_req *req,
		      const struct rl_sync_item *items, struct bcmd *c, char **out, size_t *outlen)
{
	char keys[9][48 + RL_SYNC_NAME_MAX * 3], nums[6][24], prefix[16 + RL_SYNC_NAME_MAX * 2];
	const char *tag = rt->tag(rt->ctx, c->b);
	size_t argc = c->b < 0 ? 8 : 22 + 2 * c->nidx, k = 0;
	const char **argv = malloc(argc * sizeof(*argv));
	size_t *len = malloc(argc * sizeof(*len));
	char *unum = malloc((c->nidx ? c->nidx : 1) * 24);
	int n = -1;

	if (!argv || !len || !unum)
		goto out;
	argv[k++] = "EVALSHA";
	if (c->b < 0) {
		snprintf(keys[0], sizeof(keys[0]), "rl:{%s}:nodes", tag);
		snprintf(keys[1], sizeof(keys[1]), "rl:{%s}:policy", tag);
		snprintf(nums[0], sizeof(nums[0]), "%llu", (unsigned long long)req->ttl_ms);
		argv[k++] = c->r->sha_group;
		argv[k++] = "2";
		argv[k++] = keys[0];
		argv[k++] = keys[1];
		argv[k++] = req->node;
		argv[k++] = nums[0];
		argv[k++] = req->policy;
	} else {
		__u64 now = server_ms(c->r), e = now / req->ttl_ms, f = now / req->claim_ms;

		snprintf(prefix, sizeof(prefix), "rl:{%s}:", tag);
		for (int i = 0; i < 2; i++) {
			unsigned long long x = e - 1 + (unsigned long long)i;

			snprintf(keys[i], sizeof(keys[i]), "%sd:%llu", prefix, x);
			snprintf(keys[2 + i], sizeof(keys[2 + i]), "%sl:%s:%llu", prefix, req->node,
				 x);
			snprintf(keys[4 + i], sizeof(keys[4 + i]), "%ss:%s:%llu", prefix, req->node,
				 x);
			snprintf(keys[6 + i], sizeof(keys[6 + i]), "%so:%llu", prefix,
				 (unsigned long long)(f - 1) + (unsigned long long)i);
		}
		snprintf(keys[8], sizeof(keys[8]), "%sm", prefix);
		snprintf(nums[0], sizeof(nums[0]), "%llu", (unsigned long long)req->ttl_ms);
		snprintf(nums[1], sizeof(nums[1]), "%llu", (unsigned long long)req->stale_ms);
		snprintf(nums[2], sizeof(nums[2]), "%llu", (unsigned long long)req->claim_ms);
		snprintf(nums[3], sizeof(nums[3]), "%llu", (unsigned long long)e);
		snprintf(nums[4], sizeof(nums[4]), "%llu", (unsigned long long)f);
		snprintf(nums[5], sizeof(nums[5]), "%zu", c->nshared);
		argv[k++] = c->r->sha_bucket;
		argv[k++] = "9";
		for (int i = 0; i < 9; i++)
			argv[k++] = keys[i];
		argv[k++] = req->node;
		for (int i = 0; i < 5; i++)
			argv[k++] = nums[i];
		argv[k++] = c->asking ? "1" : "0";
		argv[k++] = prefix;
		argv[k++] = nums[5];
		for (size_t i = 0; i < c->nidx; i++) {
			char *num = unum + i * 24;

			snprintf(num, 24, "%llu", (unsigned long long)items[c->idx[i]].units);
			argv[k++] = items[c->idx[i]].src;
			argv[k++] = num;
		}
	}
	for (size_t i = 0; i < k; i++)
		len[i] = strlen(argv[i]);
	n = redisFormatCommandArgv(out, (int)k, argv, len);
	if (n >= 0)
		*outlen = (size_t)n;
out:
	free(unum);
	free(len);
	free(argv);
	return n < 0 ? -ENOMEM : 0;
}

/* A growing buffer of commands. */
struct obuf {
	char *p;
	size_t len, cap;
};

static int obuf_put(struct obuf *o, const char *s, size_t n)
{
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		char *p;

		while (cap < o->len + n)
			cap *= 2;
		p = realloc(o->p, cap);
		if (!p)
			return -ENOMEM;
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	return 0;
}

static int obuf_argv(struct obuf *o, int argc, const char **argv)
{
	char *cmd = NULL;
	int n = redisFormatCommandArgv(&cmd, argc, argv, NULL);
	int ret;

	if (n < 0)
		return -ENOMEM;
	ret = obuf_put(o, cmd, (size_t)n);
	redisFreeCommand(cmd);
	return ret;
}

/* What one reply of a connection's exchange answers. */
struct slot_of {
	enum { R_LOAD_GROUP, R_LOAD_BUCKET, R_ASKING, R_CMD } what;
	struct bcmd *c;
};

/* One connection's exchange of a pass. */
struct conn_pass {
	struct xfer x;
	struct obuf o;
	struct slot_of *what;
	size_t *ends; /* each command's end in o */
	int nwhat;
	redisReply **rep;
};

/* A bucket's reply, checked whole before anything of it is used. */
static int parse_bucket(struct bcmd *c, struct rl_sync_item *items, struct rl_sync_reply *rep)
{
	const redisReply *r = c->rep;
	size_t nl, ni, nc, at;
	char *mark = NULL;
	struct rl_sync_item *in;
	__u64 h = 1469598103934665603ULL;

	if (r->type != REDIS_REPLY_ARRAY || r->elements < 4 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->type != REDIS_REPLY_STRING ||
	    r->element[2]->type != REDIS_REPLY_INTEGER ||
	    r->element[3]->type != REDIS_REPLY_INTEGER || r->element[2]->integer < 0 ||
	    r->element[3]->integer < 0 || r->element[3]->integer > INBOX_MAX ||
	    (size_t)r->element[2]->integer > c->nidx)
		return -EPROTO;
	nl = (size_t)r->element[2]->integer;
	ni = (size_t)r->element[3]->integer;
	if (4 + nl + 2 * ni > r->elements || (r->elements - 4 - nl - 2 * ni) % 2)
		return -EPROTO;
	nc = (r->elements - 4 - nl - 2 * ni) / 2;
	if (nc > c->nidx)
		return -EPROTO;
	/* Each source local at most once and charged at most once: bit 0 local, bit 1 charged. */
	mark = calloc(c->nidx ? c->nidx : 1, 1);
	if (!mark)
		return -ENOMEM;
	at = 4;
	for (size_t i = 0; i < nl; i++, at++) {
		const redisReply *e = r->element[at];

		if (e->type != REDIS_REPLY_INTEGER || e->integer < 0 ||
		    (size_t)e->integer >= c->nidx || mark[e->integer] & 1)
			goto bad;
		mark[e->integer] |= 1;
	}
	for (size_t i = 0; i < ni; i++, at += 2) {
		const redisReply *x = r->element[at], *u = r->element[at + 1];

		if (x->type != REDIS_REPLY_STRING || !x->len || x->len >= RL_SYNC_SRC_MAX ||
		    memchr(x->str, '\0', x->len) || u->type != REDIS_REPLY_INTEGER ||
		    u->integer < 0)
			goto bad;
	}
	for (size_t i = 0; i < nc; i++, at += 2) {
		const redisReply *ix = r->element[at], *un = r->element[at + 1];

		if (ix->type != REDIS_REPLY_INTEGER || un->type != REDIS_REPLY_INTEGER ||
		    ix->integer < 0 || (size_t)ix->integer >= c->nidx || un->integer <= 0 ||
		    mark[ix->integer] & 2)
			goto bad;
		mark[ix->integer] |= 2;
	}
	/* Whole and sound: apply it. */
	server_said(c->r, r->element[0]->integer);
	for (size_t i = 0; i < r->element[1]->len; i++)
		h = (h ^ (unsigned char)r->element[1]->str[i]) * 1099511628211ULL;
	rep->bucket_id[c->b] = h ? h : 1;
	for (size_t i = 0; i < c->nidx; i++)
		items[c->idx[i]].local = mark[i] & 1;
	at = 4 + nl;
	if (ni) {
		in = realloc(rep->inbox, (rep->ninbox + ni) * sizeof(*in));
		if (!in) {
			free(mark);
			return -ENOMEM;
		}
		rep->inbox = in;
		for (size_t i = 0; i < ni; i++, at += 2) {
			struct rl_sync_item *it = &rep->inbox[rep->ninbox++];

			memset(it, 0, sizeof(*it));
			memcpy(it->src, r->element[at]->str, r->element[at]->len);
			it->remote = (__u64)r->element[at + 1]->integer;
		}
	}
	for (size_t i = 0; i < nc; i++, at += 2)
		items[c->idx[r->element[at]->integer]].remote = (__u64)r->element[at + 1]->integer;
	free(mark);
	return 0;
bad:
	free(mark);
	return -EPROTO;
}

static int parse_group(struct bcmd *c, struct rl_sync_reply *out)
{
	const redisReply *r = c->rep;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 4 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->type != REDIS_REPLY_INTEGER ||
	    r->element[2]->type != REDIS_REPLY_STRING ||
	    r->element[3]->type != REDIS_REPLY_STRING || r->element[1]->integer < 1)
		return -EPROTO;
	server_said(c->r, r->element[0]->integer);
	out->nodes = (__u64)r->element[1]->integer;
	snprintf(out->other_node, sizeof(out->other_node), "%s", r->element[2]->str);
	snprintf(out->other_policy, sizeof(out->other_policy), "%s", r->element[3]->str);
	return 0;
}

/* The command's error reply: ask again (where, when), or fail it. */
static void on_error(const struct rl_sync_router *rt, struct bcmd *c, const char *msg,
		     struct rl_sync_reply *rep)
{
	char addr[300], why[256];
	long long ms;
	unsigned int slot;

	if (!strncmp(msg, "NOSCRIPT", 8)) {
		/* A restarted server has lost the scripts: load them once more. */
		c->r->need_load = true;
	} else if (sscanf(msg, "RLEPOCH %lld", &ms) == 1) {
		server_said(c->r, ms);
	} else if (sscanf(msg, "MOVED %u %299s", &slot, addr) == 2 ||
		   sscanf(msg, "ASK %u %299s", &slot, addr) == 2) {
		bool ask = msg[0] == 'A';
		struct rl_redis *to =
			rt->redirect ? rt->redirect(rt->ctx, c->b, ask, addr, why, sizeof(why)) :
				       NULL;

		if (!to) {
			if (!rt->redirect)
				snprintf(why, sizeof(why),
					 "%s answered %s: a cluster node (use cluster://)",
					 c->r->name, msg);
			cmd_failed(c, -EPROTO, "%s", why);
			return;
		}
		c->r = to;
		c->asking = ask;
		if (ask)
			rep->ask++;
		else
			rep->moved++;
	} else if (!strncmp(msg, "TRYAGAIN", 8)) {
		/* Asked again where the slot is served (an ASK is answered there again). */
		struct rl_redis *to = rt->conn(rt->ctx, c->b, why, sizeof(why));

		if (!to) {
			cmd_failed(c, -ECONNREFUSED, "%s", why);
			return;
		}
		c->r = to;
		c->not_before = mono_ns() + TRYAGAIN_NS;
		rep->tryagain++;
	} else {
		/* READONLY: a replica (a master demoted by a failover): -EROFS, ask again. */
		cmd_failed(c,
			   !strncmp(msg, "NOAUTH", 6)	? -EACCES :
			   !strncmp(msg, "READONLY", 8) ? -EROFS :
							  -EPROTO,
			   "%s: the sync script failed: %s", c->r->name, msg);
		return;
	}
	if (++c->tries >= CMD_TRIES)
		cmd_failed(c, -EPROTO, "%s: asked %d times, last answer: %s", c->r->name, c->tries,
			   msg);
}

/* Every command on @r fails (its connection broke): the router drops it. */
static void conn_broken(const struct rl_sync_router *rt, struct bcmd *cs, size_t ncs,
			struct rl_redis *r, int ret, const char *err)
{
	for (size_t i = 0; i < ncs; i++)
		if (cs[i].r == r && cs[i].state == C_PENDING)
			cmd_failed(&cs[i], ret, "%s", err);
	rt->broken(rt->ctx, r);
}

/* One pass: every pending command that may go now, one exchange per connection, at once. */
static int one_pass(const struct rl_sync_router *rt, const struct rl_sync_req *req,
		    struct rl_sync_item *items, struct bcmd *cs, size_t ncs, __u64 deadline,
		    struct rl_sync_reply *rep)
{
	struct conn_pass *ps = calloc(ncs, sizeof(*ps));
	__u64 now = mono_ns();
	size_t np = 0;
	int ret = 0;

	if (!ps)
		return -ENOMEM;
	for (size_t i = 0; i < ncs; i++) {
		struct bcmd *c = &cs[i];
		struct conn_pass *p = NULL;
		char *cmd = NULL;
		size_t len = 0;

		if (c->state != C_PENDING || c->not_before > now)
			continue;
		for (size_t k = 0; k < np && !p; k++)
			if (ps[k].x.r == c->r)
				p = &ps[k];
		if (!p) {
			p = &ps[np++];
			p->x.r = c->r;
			/* Three replies at most per command (a load of each script, ASKING). */
			p->what = calloc(2 + 2 * ncs, sizeof(*p->what));
			p->ends = calloc(2 + 2 * ncs, sizeof(*p->ends));
			if (!p->what || !p->ends) {
				ret = -ENOMEM;
				goto out;
			}
			if (c->r->need_load) {
				const char *lg[] = { "SCRIPT", "LOAD", group_script };
				const char *lb[] = { "SCRIPT", "LOAD", bucket_script };

				if (obuf_argv(&p->o, 3, lg) || obuf_argv(&p->o, 3, lb)) {
					ret = -ENOMEM;
					goto out;
				}
				/* Both loads end where the second does: never answered before it. */
				p->ends[p->nwhat] = p->o.len;
				p->what[p->nwhat++].what = R_LOAD_GROUP;
				p->ends[p->nwhat] = p->o.len;
				p->what[p->nwhat++].what = R_LOAD_BUCKET;
				p->x.cap += 256;
				rep->commands += 2;
			}
		}
		if (c->asking) {
			const char *a[] = { "ASKING" };

			if (obuf_argv(&p->o, 1, a)) {
				ret = -ENOMEM;
				goto out;
			}
			p->ends[p->nwhat] = p->o.len;
			p->what[p->nwhat].what = R_ASKING;
			p->what[p->nwhat++].c = c;
			p->x.cap += 256;
			rep->commands++;
		}
		if (format_cmd(rt, req, items, c, &cmd, &len) || obuf_put(&p->o, cmd, len)) {
			redisFreeCommand(cmd);
			ret = -ENOMEM;
			goto out;
		}
		redisFreeCommand(cmd);
		p->ends[p->nwhat] = p->o.len;
		p->what[p->nwhat].what = R_CMD;
		p->what[p->nwhat++].c = c;
		rep->commands++;
		if (c->b < 0) {
			p->x.cap += REPLY_FIXED_MAX;
		} else {
			p->x.cap += REPLY_FIXED_MAX + (__u64)REPLY_PER_SOURCE * c->nidx +
				    (__u64)REPLY_PER_INBOX * INBOX_MAX;
			if (p->x.max_elements < 4 + 3 * c->nidx + 2 * INBOX_MAX)
				p->x.max_elements = 4 + 3 * c->nidx + 2 * INBOX_MAX;
		}
	}
	for (size_t k = 0; k < np; k++) {
		struct conn_pass *p = &ps[k];

		p->rep = calloc((size_t)p->nwhat, sizeof(*p->rep));
		if (!p->rep) {
			ret = -ENOMEM;
			goto out;
		}
		p->x.out = p->o.p;
		p->x.outlen = p->o.len;
		p->x.ends = p->ends;
		p->x.ncmd = p->nwhat;
		p->x.rep = p->rep;
		if (p->x.max_elements < 4)
			p->x.max_elements = 4;
	}
	rep->exchanges += np;
	{
		struct xfer *xs = calloc(np ? np : 1, sizeof(*xs));

		if (!xs) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t k = 0; k < np; k++)
			xs[k] = ps[k].x;
		exchange_many(xs, np, deadline);
		for (size_t k = 0; k < np; k++)
			ps[k].x = xs[k];
		free(xs);
	}
	for (size_t k = 0; k < np; k++) {
		struct conn_pass *p = &ps[k];
		struct rl_redis *r = p->x.r;
		bool bad = false;

		if (p->x.ret) {
			conn_broken(rt, cs, ncs, r, p->x.ret, p->x.err);
			continue;
		}
		for (int w = 0; w < p->nwhat && !bad; w++) {
			redisReply *y = p->rep[w];
			struct bcmd *c = p->what[w].c;

			switch (p->what[w].what) {
			case R_LOAD_GROUP:
			case R_LOAD_BUCKET:
				if (y->type != REDIS_REPLY_STRING || y->len != 40) {
					bad = true;
					break;
				}
				memcpy(p->what[w].what == R_LOAD_GROUP ? r->sha_group :
									 r->sha_bucket,
				       y->str, 40);
				r->need_load = false;
				break;
			case R_ASKING:
				if (y->type != REDIS_REPLY_STATUS || strcmp(y->str, "OK")) {
					/* The command after it is answered too; it fails. */
					cmd_failed(c, -EPROTO, "%s: ASKING refused: %s", r->name,
						   y->str ? y->str : "?");
				}
				c->asking = false;
				break;
			case R_CMD:
				if (c->state != C_PENDING)
					break;
				if (y->type == REDIS_REPLY_ERROR) {
					on_error(rt, c, y->str, rep);
					break;
				}
				c->rep = y;
				p->rep[w] = NULL;
				c->state = C_DONE;
				break;
			}
		}
		if (bad)
			conn_broken(rt, cs, ncs, r, -EPROTO, "SCRIPT LOAD answered no SHA1");
	}
out:
	for (size_t k = 0; k < np; k++) {
		for (int w = 0; ps[k].rep && w < ps[k].nwhat; w++)
			if (ps[k].rep[w])
				freeReplyObject(ps[k].rep[w]);
		free(ps[k].rep);
		free(ps[k].what);
		free(ps[k].ends);
		free(ps[k].o.p);
	}
	free(ps);
	return ret;
}

int rl_sync_round(const struct rl_sync_router *rt, const struct rl_sync_req *req,
		  struct rl_sync_item *items, size_t n, struct rl_sync_reply *rep, __u64 timeout_ns,
		  char *err, size_t errlen)
{
	__u64 deadline = mono_ns() + timeout_ns;
	size_t ncs = req->group_only ? 1 : 1 + rt->nbuckets;
	struct bcmd *cs = calloc(ncs, sizeof(*cs));
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	unsigned int *bk = malloc((n ? n : 1) * sizeof(*bk));
	int ret = -ENOMEM;
	size_t at = 0;

	memset(rep, 0, sizeof(*rep));
	rep->nbuckets = rt->nbuckets;
	err[0] = '\0';
	if (!cs || !idx || !bk) {
		snprintf(err, errlen, "out of memory for %zu sources", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		items[i].remote = 0;
		items[i].failed = false;
	}
	/* The items bucket by bucket, each bucket's a slice of @idx. */
	for (size_t i = 0; i < n; i++)
		bk[i] = rl_sync_src_hash(items[i].src) % rt->nbuckets;
	cs[0].b = -1;
	for (size_t c = 1; c < ncs; c++) {
		cs[c].b = (int)c - 1;
		cs[c].idx = idx + at;
		/* Those the agent holds as shared first: the script skips what only a claim needs. */
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < n; i++)
				if (bk[i] == (unsigned int)cs[c].b && items[i].shared == !pass)
					idx[at++] = i;
		cs[c].nidx = (size_t)(idx + at - cs[c].idx);
		for (size_t i = 0; i < cs[c].nidx && items[cs[c].idx[i]].shared; i++)
			cs[c].nshared++;
	}
	for (size_t c = 0; c < ncs; c++) {
		cs[c].r = rt->conn(rt->ctx, cs[c].b, cs[c].err, sizeof(cs[c].err));
		if (!cs[c].r)
			cs[c].state = C_FAILED, cs[c].ret = -ECONNREFUSED;
	}
	for (;;) {
		__u64 now = mono_ns(), wake = ~0ULL;
		bool pending = false, ready = false;

		for (size_t c = 0; c < ncs; c++) {
			if (cs[c].state != C_PENDING)
				continue;
			pending = true;
			if (cs[c].not_before <= now)
				ready = true;
			else if (cs[c].not_before < wake)
				wake = cs[c].not_before;
		}
		if (!pending)
			break;
		if (now >= deadline) {
			for (size_t c = 0; c < ncs; c++)
				if (cs[c].state == C_PENDING)
					cmd_failed(&cs[c], -ETIMEDOUT,
						   "%s: a slot migrating for the whole interval",
						   cs[c].r->name);
			break;
		}
		if (!ready) {
			/* Only TRYAGAINs wait: sleep to the first, stopping as the exchanges do. */
			const struct rl_redis_stop *st = NULL;
			struct timespec ts;

			for (size_t c = 0; c < ncs && !st; c++)
				if (cs[c].state == C_PENDING)
					st = &cs[c].r->stop;
			if (st && st->fn && st->fn(st->ctx)) {
				for (size_t c = 0; c < ncs; c++)
					if (cs[c].state == C_PENDING)
						cmd_failed(
							&cs[c], -EINTR,
							"%s: stopped while waiting for the server",
							cs[c].r->name);
				break;
			}
			if (wake > deadline)
				wake = deadline;
			ts.tv_sec = 0;
			ts.tv_nsec = (long)(wake - now);
			nanosleep(&ts, NULL);
			continue;
		}
		ret = one_pass(rt, req, items, cs, ncs, deadline, rep);
		if (ret) {
			snprintf(err, errlen, "out of memory for a round trip");
			goto out;
		}
	}
	/* A stop ends the round whatever answered. */
	for (size_t c = 0; c < ncs; c++)
		if (cs[c].state == C_FAILED && cs[c].ret == -EINTR) {
			snprintf(err, errlen, "%s", cs[c].err);
			ret = -EINTR;
			goto out;
		}
	if (cs[0].state != C_DONE) {
		snprintf(err, errlen, "%s", cs[0].err);
		ret = cs[0].ret;
		goto out;
	}
	ret = parse_group(&cs[0], rep);
	if (ret) {
		snprintf(err, errlen, "%s: the group's script answered something unexpected",
			 cs[0].r->name);
		rt->broken(rt->ctx, cs[0].r);
		goto out;
	}
	if (rep->other_node[0]) {
		/* Another policy: nothing of the buckets counts (the agent falls back). */
		for (size_t i = 0; i < n; i++)
			items[i].remote = 0;
		rl_sync_reply_free(rep);
		ret = 0;
		goto out;
	}
	for (size_t c = 1; c < ncs; c++) {
		struct bcmd *b = &cs[c];

		if (b->state == C_DONE) {
			ret = parse_bucket(b, items, rep);
			if (ret == -ENOMEM) {
				snprintf(err, errlen, "out of memory for a round trip");
				goto out;
			}
			if (ret) {
				cmd_failed(b, ret,
					   "%s: the sync script answered something unexpected",
					   b->r->name);
				rt->broken(rt->ctx, b->r);
			}
		}
		if (b->state == C_FAILED) {
			rep->failed |= 1ULL << b->b;
			for (size_t i = 0; i < b->nidx; i++) {
				items[b->idx[i]].failed = true;
				items[b->idx[i]].remote = 0;
			}
			if (!err[0])
				snprintf(err, errlen, "%s", b->err);
		}
	}
	for (size_t i = 0; i < n; i++) {
		rep->shared += items[i].remote > 0;
		rep->local += !items[i].failed && items[i].local;
	}
	for (size_t i = 0; i < rep->ninbox; i++)
		rep->shared += rep->inbox[i].remote > 0;
	ret = 0;
out:
	if (ret && ret != -ENOMEM)
		for (size_t i = 0; i < n; i++)
			items[i].remote = 0;
	if (ret)
		rl_sync_reply_free(rep);
	for (size_t c = 0; cs && c < ncs; c++)
		if (cs[c].rep)
			freeReplyObject(cs[c].rep);
	free(cs);
	free(idx);
	free(bk);
	return ret;
}

/* ---- one server ---- */

struct one_server {
	struct rl_redis *r;
	const char *group;
	char tag[RL_SYNC_NAME_MAX + 8];
	bool broken;
};

static const char *one_tag(void *ctx, int b)
{
	struct one_server *o = ctx;

	return b < 0 ? o->group : o->tag;
}

static struct rl_redis *one_conn(void *ctx, int b, char *err, size_t errlen)
{
	struct one_server *o = ctx;

	(void)b;
	if (o->broken) {
		snprintf(err, errlen, "%s: the connection broke", o->r->name);
		return NULL;
	}
	return o->r;
}

static void one_broken(void *ctx, struct rl_redis *r)
{
	struct one_server *o = ctx;

	(void)r;
	o->broken = true;
}

int rl_redis_sync(struct rl_redis *r, const struct rl_sync_req *req, struct rl_sync_item *items,
		  size_t n, struct rl_sync_reply *rep, char *err, size_t errlen)
{
	struct one_server o = { .r = r, .group = req->group };
	struct rl_sync_router rt = {
		.nbuckets = 1,
		.tag = one_tag,
		.conn = one_conn,
		.broken = one_broken,
		.ctx = &o,
	};
	int ret;

	snprintf(o.tag, sizeof(o.tag), "%s:0", req->group);
	ret = rl_sync_round(&rt, req, items, n, rep, r->timeout_ns, err, errlen);
	/* One server: a connection that broke fails the round, whatever answered before. */
	if (!ret && o.broken) {
		for (size_t i = 0; i < n; i++)
			items[i].remote = 0;
		rl_sync_reply_free(rep);
		ret = -EPROTO;
	}
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
