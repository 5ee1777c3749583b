// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The fleet sync agent: see sync_agent.h and docs/design.md, "Fleet-wide limits". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "env.h"
#include "lock.h"
#include "log.h"
#include "pins.h"
#include "sync_agent.h"

static __u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

int rl_sync_name_check(const char *what, const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name);

	if (!n || n > RL_SYNC_NAME_MAX ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
		    n) {
		snprintf(err, errlen, "%s: '%s' is not 1-%d of the characters A-Z a-z 0-9 . _ -",
			 what, name, RL_SYNC_NAME_MAX);
		return -EINVAL;
	}
	return 0;
}

/*
 * A round trip may take the interval: waiting longer would only delay the
 * fallback, and the next interval's round trip carries the same counts again.
 * At least 5 ms, so a 1 ms interval still fits a loaded machine's scheduling.
 */
static __u64 cmd_timeout(const struct rl_sync_cfg *cfg)
{
	if (cfg->timeout_ns)
		return cfg->timeout_ns;
	return cfg->interval_ns > 5000000ULL ? cfg->interval_ns : 5000000ULL;
}

static void close_redis(struct rl_sync_agent *ag)
{
	__u64 tx, rx;

	if (!ag->r)
		return;
	rl_sync_store_bytes(ag->r, &tx, &rx);
	ag->tx_closed += tx;
	ag->rx_closed += rx;
	rl_sync_store_close(ag->r);
	ag->r = NULL;
}

static void update_bytes(struct rl_sync_agent *ag)
{
	__u64 tx = 0, rx = 0;

	if (ag->r)
		rl_sync_store_bytes(ag->r, &tx, &rx);
	ag->st.redis_tx_bytes_total = ag->tx_closed + tx;
	ag->st.redis_rx_bytes_total = ag->rx_closed + rx;
}

static void fill_req(const struct rl_sync_agent *ag, struct rl_sync_req *req)
{
	req->group = ag->cfg.group;
	req->node = ag->cfg.node;
	req->policy = ag->policy;
	req->ttl_ms = ag->ttl_ms;
	req->stale_ms = ag->stale_ms;
	req->claim_ms = ag->claim_ms;
	/* The policies compared before anything is synced: at first, after a set, while they differ. */
	req->group_only = ag->mismatch || strcmp(ag->verified, ag->policy);
}

static void policy_mismatch(struct rl_sync_agent *ag, const struct rl_sync_reply *rep, char *err,
			    size_t errlen)
{
	char diff[512];

	if (!rl_sync_policy_diff(ag->policy, rep->other_policy, rep->other_node, diff,
				 sizeof(diff)))
		snprintf(diff, sizeof(diff), "its policy text is longer than %zu bytes",
			 sizeof(rep->other_policy) - 1);
	snprintf(err, errlen,
		 "node '%s' of group '%s' has another policy (%s): every node of a group must "
		 "have the same one; falling back to %s until they agree",
		 rep->other_node, ag->cfg.group, diff,
		 ag->cfg.fallback == RL_SYNC_FB_SHARE ? "share" : "local");
}

/*
 * Parse "KEY=" of @policy as a number (and "/DEN" if @den): false if absent
 * or malformed. Its fields end at @sep: '\n' for the policy's lines, ' '
 * within a limit rule's line.
 */
static bool policy_num(const char *policy, char sep, const char *key, __u64 *v, __u64 *den)
{
	const char seps[3] = { sep, '\n', '\0' };
	size_t kl = strlen(key);

	for (const char *p = policy; *p && *p != (sep == '\n' ? '\0' : '\n');
	     p += strcspn(p, seps), p += *p == sep) {
		char *end;

		if (strncmp(p, key, kl) || p[kl] != '=')
			continue;
		errno = 0;
		*v = strtoull(p + kl + 1, &end, 10);
		if (errno || end == p + kl + 1)
			return false;
		if (!den)
			return *end == sep || *end == '\n' || !*end;
		if (*end != '/')
			return false;
		*den = strtoull(end + 1, &end, 10);
		return !errno && *den && (*end == sep || *end == '\n' || !*end);
	}
	return false;
}

/* rl_sync_charge_max() of one policy: the default's lines (@sep '\n') or a rule's (' '). */
static __u64 charge_max_of(const char *policy, char sep, __u64 nodes, __u64 stale_ms)
{
	unsigned __int128 w_ns = (unsigned __int128)2 * stale_ms * 1000000ULL, m;
	__u64 num, den, burst = 0, window = 1000000000ULL, bytes = 0, frame;
	const char *algo = policy;
	size_t al;

	while (strncmp(algo, "algo=", 5)) {
		algo += strcspn(algo, sep == '\n' ? "\n" : " \n");
		if (*algo != sep)
			return ~0ULL;
		algo++;
	}
	if (!policy_num(policy, sep, "rate", &num, &den))
		return ~0ULL;
	policy_num(policy, sep, "bytes", &bytes, NULL);
	/* The frame a window (or gcra) may pass past its limit in byte mode: the largest XDP sees. */
	frame = bytes ? 65536 : 0;
	algo += 5;
	al = strcspn(algo, sep == '\n' ? "\n" : " \n");
	if ((al == 12 && !strncmp(algo, "token-bucket", al)) ||
	    (al == 4 && !strncmp(algo, "gcra", al))) {
		if (!policy_num(policy, sep, "burst", &burst, NULL))
			return ~0ULL;
		m = (unsigned __int128)num * w_ns / ((unsigned __int128)den * 1000000000ULL);
		m += (unsigned __int128)burst + frame;
	} else if ((al == 12 && !strncmp(algo, "fixed-window", al)) ||
		   (al == 14 && !strncmp(algo, "sliding-window", al))) {
		if (!policy_num(policy, sep, "window_ns", &window, NULL) || !window)
			return ~0ULL;
		m = (unsigned __int128)num * window / ((unsigned __int128)den * 1000000000ULL);
		m = (m + frame) * (w_ns / window + 2);
	} else {
		return ~0ULL;
	}
	m *= nodes - 1;
	return m > ~0ULL ? ~0ULL : (__u64)m;
}

__u64 rl_sync_charge_max(const char *policy, __u64 nodes, __u64 stale_ms)
{
	__u64 max;

	if (nodes <= 1)
		return 0;
	max = charge_max_of(policy, '\n', nodes, stale_ms);
	/* And every limit rule's ("rule.NAME=limit algo=... rate=..."): the largest bound. */
	for (const char *p = policy; *p && max != ~0ULL; p += strcspn(p, "\n"), p += *p == '\n') {
		const char *v;
		__u64 r;

		if (strncmp(p, "rule.", 5))
			continue;
		v = p + strcspn(p, "=\n");
		if (strncmp(v, "=limit ", 7))
			continue;
		r = charge_max_of(v + 7, ' ', nodes, stale_ms);
		if (r > max)
			max = r;
	}
	return max;
}

/*
 * Refuse the charges no fleet can have made (rl_sync_charge_max()): a
 * forged or corrupted total in Redis must not block a source here. The
 * item gets nothing; the refusals are counted and said (one line per 10 s).
 */
static __u64 refuse_charges(struct rl_sync_agent *ag, struct rl_sync_item *items, size_t n,
			    __u64 nodes)
{
	__u64 max = rl_sync_charge_max(ag->policy, nodes, ag->stale_ms), now, refused = 0;

	for (size_t i = 0; i < n; i++) {
		if (items[i].remote <= max)
			continue;
		now = now_ns(CLOCK_MONOTONIC);
		if (!ag->refused_warned_ns || now - ag->refused_warned_ns >= 10000000000ULL) {
			pr_warn("sync: refused a charge of %llu units for %s: the other %llu "
				"node(s) of group '%s' can have passed at most %llu (is something "
				"else writing to rl:{%s}:*? see the trust boundary in the man page)",
				(unsigned long long)items[i].remote, items[i].src,
				(unsigned long long)(nodes - 1), ag->cfg.group,
				(unsigned long long)max, ag->cfg.group);
			ag->refused_warned_ns = now;
		}
		items[i].remote = 0;
		refused++;
	}
	ag->st.charges_refused_total += refused;
	return refused;
}

int rl_sync_agent_connect(struct rl_sync_agent *ag, const struct rl_sync_cfg *cfg, char *err,
			  size_t errlen)
{
	/*
	 * hiredis writes with write(2): a server gone mid-round trip would kill
	 * the agent with SIGPIPE instead of failing the round trip with EPIPE.
	 */
	signal(SIGPIPE, SIG_IGN);
	memset(ag, 0, sizeof(*ag));
	ag->cfg = *cfg;
	/*
	 * Keys live 10 intervals (at least 2 s): a node that misses a few round
	 * trips keeps its place. A node that had not synced a source for 3
	 * intervals (2, and one of slack for a late round trip), and at least
	 * RL_SYNC_STALE_MIN_MS, gets none of the others' units for it: the floor
	 * because a drain can take hundreds of ms on a loaded host (measured: up
	 * to 0.4 s on the 2-CPU test VM), and a node whose rounds come that late
	 * must still get its charges.
	 */
	ag->ttl_ms = cfg->interval_ns / 1000000ULL * 10;
	if (ag->ttl_ms < RL_SYNC_TTL_MIN_MS)
		ag->ttl_ms = RL_SYNC_TTL_MIN_MS;
	ag->stale_ms = (cfg->interval_ns * 3 + 999999ULL) / 1000000ULL;
	if (ag->stale_ms < RL_SYNC_STALE_MIN_MS)
		ag->stale_ms = RL_SYNC_STALE_MIN_MS;
	ag->claim_ms = ag->ttl_ms * RL_SYNC_CLAIM_TTLS;
	rl_redis_url_str(&cfg->url, ag->url_str, sizeof(ag->url_str));
	ag->st.interval_ns = cfg->interval_ns;
	ag->st.pid = (__u32)getpid();
	snprintf(ag->st.group, sizeof(ag->st.group), "%s", cfg->group);
	snprintf(ag->st.node, sizeof(ag->st.node), "%s", cfg->node);
	return rl_sync_store_open(&cfg->url, RL_SYNC_CONNECT_TIMEOUT_NS, &cfg->stop, &ag->r, err,
				  errlen);
}

int rl_sync_agent_start(struct rl_sync_agent *ag, const char *policy, char *err, size_t errlen)
{
	struct rl_sync_reply rep;
	struct rl_sync_req req;
	int ret;

	ag->policy = policy;
	fill_req(ag, &req);
	ret = rl_sync_store_sync(ag->r, &req, NULL, 0, &rep, err, errlen);
	ag->commands_total += rep.commands;
	ag->exchanges_total += rep.exchanges;
	rl_sync_reply_free(&rep);
	if (ret)
		goto err;
	rl_sync_store_set_timeout(ag->r, cmd_timeout(&ag->cfg));
	ag->st.nodes = rep.nodes;
	update_bytes(ag);
	/*
	 * Another policy on a live node: run in fallback rather than exit. An
	 * agent that exits leaves its host at the full limit for good, and a
	 * node registered with any policy by whoever can write to Redis would
	 * stop every agent of the group; in fallback it syncs again as soon as
	 * the policies agree.
	 */
	if (rep.other_node[0]) {
		policy_mismatch(ag, &rep, err, errlen);
		ag->mismatch = true;
		ag->st.state = RL_SYNC_POLICY_MISMATCH;
		return 1;
	}
	snprintf(ag->verified, sizeof(ag->verified), "%s", policy);
	ag->st.state = RL_SYNC_CONNECTED;
	return 0;
err:
	close_redis(ag);
	return ret;
}

int rl_sync_agent_init(struct rl_sync_agent *ag, const struct rl_sync_cfg *cfg, const char *policy,
		       char *err, size_t errlen)
{
	int ret = rl_sync_agent_connect(ag, cfg, err, errlen);

	return ret ? ret : rl_sync_agent_start(ag, policy, err, errlen);
}

int rl_sync_agent_down(struct rl_sync_agent *ag, const char *policy)
{
	ag->policy = policy;
	/* As after a failed round trip: the next steps connect, and say when syncing resumes. */
	ag->failed = 1;
	ag->skip = 0;
	ag->st.errors_total++;
	ag->st.state = ag->cfg.fallback == RL_SYNC_FB_SHARE ? RL_SYNC_FALLBACK_SHARE :
							      RL_SYNC_FALLBACK_LOCAL;
	return 1;
}

void rl_sync_agent_fini(struct rl_sync_agent *ag)
{
	close_redis(ag);
	rl_sync_reply_free(&ag->rep);
}

/* The fallback's charge of @it: share, each source its units times the others; never a claim. */
static __u64 fallback_charge(const struct rl_sync_agent *ag, const struct rl_sync_item *it)
{
	if (ag->cfg.fallback != RL_SYNC_FB_SHARE || ag->st.nodes <= 1 || it->local)
		return 0;
	return it->units * (ag->st.nodes - 1);
}

/* A cluster's redirections, said once per 10 s at most (a reshard moves many slots). */
static void say_redirects(struct rl_sync_agent *ag, const struct rl_sync_reply *rep)
{
	__u64 now;

	ag->moved_total += rep->moved;
	ag->ask_total += rep->ask;
	ag->tryagain_total += rep->tryagain;
	ag->remapped_total += rep->remapped;
	if (!rep->moved && !rep->ask && !rep->tryagain && !rep->remapped)
		return;
	now = now_ns(CLOCK_MONOTONIC);
	if (ag->redirect_said_ns && now - ag->redirect_said_ns < 10000000000ULL)
		return;
	ag->redirect_said_ns = now;
	fprintf(stderr,
		"sync: slots moving in the cluster: %llu slots on another master, followed "
		"%llu MOVED and %llu ASK, %llu TRYAGAIN so far\n",
		(unsigned long long)ag->remapped_total, (unsigned long long)ag->moved_total,
		(unsigned long long)ag->ask_total, (unsigned long long)ag->tryagain_total);
}

int rl_sync_agent_step(struct rl_sync_agent *ag, struct rl_sync_item *items, size_t n, char *err,
		       size_t errlen)
{
	bool share = ag->cfg.fallback == RL_SYNC_FB_SHARE;
	__u64 t0 = now_ns(CLOCK_MONOTONIC), charged = 0;
	struct rl_sync_reply *rep = &ag->rep;
	struct rl_sync_req req;
	char msg[512];
	int ret;

	rl_sync_reply_free(rep);
	memset(&ag->learned, 0, sizeof(ag->learned));
	ag->st.sources_active = n;
	ag->st.sources_shared = 0;
	for (size_t i = 0; i < n; i++) {
		items[i].remote = 0;
		items[i].failed = false;
	}
	if (!ag->r) {
		/* Backoff: see below. */
		if (ag->skip) {
			ag->skip--;
			goto fallback;
		}
		ret = rl_sync_store_open(&ag->cfg.url, cmd_timeout(&ag->cfg), &ag->cfg.stop, &ag->r,
					 msg, sizeof(msg));
		if (ret == -EINTR)
			goto stopped;
		if (ret)
			goto failed;
	}
	fill_req(ag, &req);
again:
	ret = rl_sync_store_sync(ag->r, &req, req.group_only ? NULL : items, req.group_only ? 0 : n,
				 rep, msg, sizeof(msg));
	ag->commands_total += rep->commands;
	ag->exchanges_total += rep->exchanges;
	say_redirects(ag, rep);
	if (ret) {
		/*
		 * A timed-out, overrun or broken connection may still deliver a
		 * late reply, and one that sent more than was asked is out of step:
		 * start anew, and charge nothing of this reply.
		 */
		close_redis(ag);
		for (size_t i = 0; i < n; i++)
			items[i].remote = 0;
		if (ret == -EINTR)
			goto stopped;
		goto failed;
	}
	if (rep->other_node[0]) {
		/* The script changed nothing: the connection is sound, the fallback charges. */
		for (size_t i = 0; i < n; i++)
			items[i].remote = 0;
		ag->st.nodes = rep->nodes;
		if (!ag->mismatch) {
			policy_mismatch(ag, rep, msg, sizeof(msg));
			pr_warn("sync: %s", msg);
		}
		ag->mismatch = true;
		ag->failed = 0;
		ag->skip = 0;
		goto fallback;
	}
	if (ag->mismatch)
		pr_warn("sync: the policies of group '%s' agree again: syncing resumed",
			ag->cfg.group);
	ag->mismatch = false;
	if (ag->failed)
		pr_warn("sync: %s answers again: syncing resumed after %u failed round trips",
			ag->url_str, ag->failed);
	ag->failed = 0;
	ag->skip = 0;
	ag->st.nodes = rep->nodes;
	if (req.group_only) {
		/* The policies agree: the sources go now, in a second exchange of this round. */
		snprintf(ag->verified, sizeof(ag->verified), "%s", ag->policy);
		req.group_only = false;
		rl_sync_reply_free(rep);
		goto again;
	}
	refuse_charges(ag, items, n, rep->nodes);
	refuse_charges(ag, rep->inbox, rep->ninbox, rep->nodes);
	/* Buckets that failed (a master down, a slot migrating too long): their sources fall back. */
	if (rep->failed) {
		ag->st.errors_total++;
		if (!ag->partial)
			pr_warn("sync: %s; the sources of %d of %u buckets fall back to %s until it "
				"answers",
				msg, __builtin_popcountll(rep->failed), rep->nbuckets,
				share ? "share" : "local");
		ag->partial = true;
		for (size_t i = 0; i < n; i++)
			if (items[i].failed)
				items[i].remote = fallback_charge(ag, &items[i]);
	} else if (ag->partial) {
		pr_warn("sync: every bucket answers again");
		ag->partial = false;
	}
	for (size_t i = 0; i < n; i++)
		charged += items[i].remote;
	for (size_t i = 0; i < rep->ninbox; i++)
		charged += rep->inbox[i].remote;
	ag->learned.synced = true;
	ag->learned.inbox = rep->inbox;
	ag->learned.ninbox = rep->ninbox;
	ag->learned.nbuckets = rep->nbuckets;
	ag->learned.bucket_id = rep->bucket_id;
	ag->st.state = RL_SYNC_CONNECTED;
	ag->st.last_sync_ns = now_ns(CLOCK_REALTIME);
	ag->st.lag_ns = now_ns(CLOCK_MONOTONIC) - t0;
	ag->st.sources_shared = rep->shared;
	{
		char master[sizeof(ag->st.master)];

		/* A failover (sentinel://) moves the writes: said, and shown by stats. */
		rl_sync_store_master(ag->r, master, sizeof(master));
		if (ag->st.master[0] && strcmp(master, ag->st.master))
			pr_warn("sync: now writing to %s (was %s)", master, ag->st.master);
		memcpy(ag->st.master, master, sizeof(master));
	}
	ag->st.syncs_total++;
	ag->st.charged_units_total += charged;
	update_bytes(ag);
	return 0;

failed:
	ag->mismatch = false;
	ag->st.errors_total++;
	/* Said once per outage; each failure with -v. */
	if (!ag->failed)
		pr_warn("sync: %s; falling back to %s until Redis answers", msg,
			share ? "share (the limit divided by the nodes last seen)" :
				"local (the full limit on this host)");
	else
		pr_debug("sync: still failing: %s", msg);
	ag->failed++;
	/*
	 * Backoff: after two failures in a row, try every other interval only,
	 * which halves what a fleet costs a recovering server; never longer, so
	 * that syncing resumes within two intervals of Redis answering again.
	 */
	ag->skip = ag->failed >= 2 ? 1 : 0;
fallback:
	/*
	 * Nothing is kept while Redis is down: the units drained now are charged
	 * by the fallback, or not at all, and forgotten. A source this node has
	 * claimed is only here: share does not divide its limit.
	 */
	rl_sync_reply_free(rep);
	for (size_t i = 0; i < n; i++) {
		items[i].remote = fallback_charge(ag, &items[i]);
		charged += items[i].remote;
	}
	ag->st.state = ag->mismatch ? RL_SYNC_POLICY_MISMATCH :
		       ag->failed   ? (share ? RL_SYNC_FALLBACK_SHARE : RL_SYNC_FALLBACK_LOCAL) :
				      RL_SYNC_CONNECTED;
	ag->st.fallback_intervals_total++;
	ag->st.charged_units_total += charged;
	ag->st.lag_ns = now_ns(CLOCK_MONOTONIC) - t0;
	update_bytes(ag);
	return 1;

stopped:
	snprintf(err, errlen, "%s", msg);
	update_bytes(ag);
	return -EINTR;
}

/* The lock file of the agent for @ifname in this network namespace. */
static int sync_lock_path(const char *ifname, char *path, size_t len)
{
	char enc[RL_PINNAME_MAX];
	int ret = rl_pin_encode(ifname, enc, sizeof(enc));

	if (ret)
		return ret;
	snprintf(path, len, RL_SYNC_LOCK_DIR "/sync-netns-%llu-%s.lock",
		 (unsigned long long)rl_netns_ino(), enc);
	return 0;
}

int rl_sync_lock(const char *ifname, char *err, size_t errlen)
{
	char path[128], pid[32];
	int fd, ret;
	ssize_t n;

	ret = sync_lock_path(ifname, path, sizeof(path));
	if (ret) {
		snprintf(err, errlen, "'%s' is not an interface name", ifname);
		return ret;
	}
	if (mkdir(RL_SYNC_LOCK_DIR, 0755) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "couldn't make " RL_SYNC_LOCK_DIR ": %s", strerror(errno));
		return ret;
	}
	fd = rl_lock_file(path, 0644, LOCK_EX | LOCK_NB);
	if (fd == -EWOULDBLOCK) {
		int rfd = open(path, O_RDONLY | O_CLOEXEC);

		n = rfd >= 0 ? pread(rfd, pid, sizeof(pid) - 1, 0) : -1;
		if (rfd >= 0)
			close(rfd);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		snprintf(err, errlen,
			 "another sync agent (pid %s) runs for %s in this network namespace",
			 pid[0] ? pid : "unknown", ifname);
		return -EBUSY;
	}
	if (fd < 0) {
		snprintf(err, errlen, "couldn't lock %s: %s", path, strerror(-fd));
		return fd;
	}
	/* The pid, for the message of the agent that comes second. */
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
		ret = -errno;
		snprintf(err, errlen, "couldn't write %s: %s", path, strerror(errno));
		rl_lock_file_release(fd, path);
		return ret;
	}
	return fd;
}

void rl_sync_unlock(const char *ifname, int fd)
{
	char path[128];

	if (fd < 0)
		return;
	if (sync_lock_path(ifname, path, sizeof(path)))
		close(fd);
	else
		rl_lock_file_release(fd, path);
}

/* Wait until @deadline (CLOCK_MONOTONIC ns): false if a signal or *@stop came first. */
static bool wait_until(__u64 deadline, bool signals, const sigset_t *set,
		       volatile sig_atomic_t *stop)
{
	for (;;) {
		__u64 now = now_ns(CLOCK_MONOTONIC);
		struct timespec ts;

		if (stop && *stop)
			return false;
		if (now >= deadline)
			return true;
		/* Without signals, look at *stop every 10 ms at most. */
		if (!signals && deadline - now > 10000000ULL)
			now = deadline - 10000000ULL;
		ts.tv_sec = (time_t)((deadline - now) / 1000000000ULL);
		ts.tv_nsec = (long)((deadline - now) % 1000000000ULL);
		if (signals) {
			int sig = sigtimedwait(set, NULL, &ts);

			if (sig == SIGINT || sig == SIGTERM)
				return false;
		} else {
			nanosleep(&ts, NULL);
		}
	}
}

void rl_sync_agent_recent_cfg(const struct rl_sync_agent *ag, struct rl_sync_recent_cfg *cfg)
{
	__u64 iv_ms = ag->cfg.interval_ns / 1000000ULL ? ag->cfg.interval_ns / 1000000ULL : 1;

	memset(cfg, 0, sizeof(*cfg));
	/* Shared: sent as long as its keys live in Redis. */
	cfg->keep = (unsigned int)(ag->ttl_ms / iv_ms);
	/* Claimed: again between a quarter and a half of the claim's life; forgotten idle as long. */
	cfg->claim_min = (unsigned int)(ag->claim_ms / 4 / iv_ms);
	cfg->claim_span = cfg->claim_min;
	cfg->keep_claimed = cfg->claim_min;
	cfg->claims_max = RL_SYNC_CLAIMS_MAX;
	cfg->max = RL_SYNC_RECENT_MAX;
}

int rl_sync_agent_round(struct rl_sync_agent *ag, struct rl_sync_recent *rc,
			const struct rl_sync_src *drained, size_t n, rl_sync_name_fn name,
			rl_sync_parse_fn parse, void *ctx, char *err, size_t errlen)
{
	int ret, res;

	ret = rl_sync_recent_merge(rc, drained, n, name, ctx);
	if (ret) {
		snprintf(err, errlen, "couldn't list the sources: %s", strerror(-ret));
		return ret;
	}
	res = rl_sync_agent_step(ag, rc->items, rc->nitems, err, errlen);
	if (res < 0)
		return res;
	/* Only what passed now counts as active; the others are remembered. */
	ag->st.sources_active = n;
	ret = rl_sync_recent_apply(rc, &ag->learned, parse, ctx);
	if (ret) {
		snprintf(err, errlen, "couldn't apply the round: %s", strerror(-ret));
		return ret;
	}
	return res;
}

static int kern_name(void *ctx, const struct rl_state_key *key, char *buf, size_t len)
{
	return rl_sync_src_format(ctx, key, buf, len);
}

static int kern_parse(void *ctx, const char *src, struct rl_state_key *key)
{
	return rl_sync_src_parse(ctx, src, key);
}

/* One interval: drain, round trip, charge, status. */
static int one_round(struct rl_sync_kern *k, struct rl_sync_agent *ag, struct rl_sync_recent *rc,
		     char *err, size_t errlen)
{
	__u64 t0 = now_ns(CLOCK_MONOTONIC), t1, t2;
	struct rl_sync_src *src = NULL;
	size_t n = 0, charged;
	int ret;

	ret = rl_sync_drain(k, &src, &n);
	t1 = now_ns(CLOCK_MONOTONIC);
	if (ret) {
		snprintf(err, errlen, "couldn't read what passed: %s", strerror(-ret));
		return ret;
	}
	ret = rl_sync_agent_round(ag, rc, src, n, kern_name, kern_parse, k, err, errlen);
	if (ret < 0)
		goto out;
	if (rl_verbose) {
		__u64 out = 0, back = 0;

		for (size_t i = 0; i < rc->nitems; i++)
			out += rc->items[i].units;
		for (size_t i = 0; i < rc->nchg; i++)
			back += rc->chg[i].units;
		pr_debug("sync: %zu sources passed here, %zu remembered; sent %zu (%zu claims): "
			 "%llu units out, %llu back; %zu shared, %zu claimed, %zu from the inbox; "
			 "drain %.1f ms, round trip %.1f ms",
			 n, rc->live, rc->nitems, rc->claims, (unsigned long long)out,
			 (unsigned long long)back, rc->shared, rc->claimed, ag->learned.ninbox,
			 (double)(t1 - t0) / 1e6, (double)ag->st.lag_ns / 1e6);
	}
	if (rc->nchg) {
		t2 = now_ns(CLOCK_MONOTONIC);
		ret = rl_sync_charge(k, rc->chg, rc->nchg, &charged);
		if (ret) {
			snprintf(err, errlen, "couldn't charge the sources: %s", strerror(-ret));
			goto out;
		}
		/* Sources gone from the table since the drain (LRU, set) are skipped. */
		pr_debug("sync: charged %zu of %zu sources in %.1f ms", charged, rc->nchg,
			 (double)(now_ns(CLOCK_MONOTONIC) - t2) / 1e6);
	}
	ret = rl_sync_status_write(k, &ag->st);
	if (ret)
		snprintf(err, errlen, "couldn't publish the status: %s", strerror(-ret));
out:
	free(src);
	return ret;
}

struct stop_ctx {
	bool signals;
	volatile sig_atomic_t *stop;
};

/*
 * The stop check of every wait for Redis: SIGINT and SIGTERM are blocked
 * (they are taken by sigtimedwait() between rounds), so a pending one is
 * looked at here; it stays pending and ends the loop.
 */
static bool should_stop(void *ctx)
{
	const struct stop_ctx *sc = ctx;
	sigset_t pend;

	if (sc->stop && *sc->stop)
		return true;
	return sc->signals && !sigpending(&pend) &&
	       (sigismember(&pend, SIGINT) == 1 || sigismember(&pend, SIGTERM) == 1);
}

int rl_sync_run(const char *ifname, const struct rl_sync_cfg *cfg_in, bool signals,
		volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	struct stop_ctx sc = { .signals = signals, .stop = stop };
	struct rl_sync_cfg cfg_copy = *cfg_in, *cfg = &cfg_copy;
	const struct timespec zero = {};
	char policy[RL_SYNC_POLICY_MAX], now_policy[RL_SYNC_POLICY_MAX], down_msg[512];
	struct rl_sync_kern *k = NULL;
	struct rl_sync_agent ag = {};
	struct rl_sync_recent rc = {};
	struct rl_sync_src *first = NULL;
	size_t nfirst = 0;
	sigset_t set, old;
	__u64 deadline;
	int lock, ret;
	bool down;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	/* Blocked from the start: a signal during a round trip waits for the next wait. */
	if (signals)
		sigprocmask(SIG_BLOCK, &set, &old);
	lock = rl_sync_lock(ifname, err, errlen);
	if (lock < 0) {
		ret = lock;
		goto out_sig;
	}
	cfg->stop.fn = should_stop;
	cfg->stop.ctx = &sc;
	/*
	 * Redis first: a wrong password, a server that refuses us, is refused
	 * before the kernel is touched. A server that cannot be reached (not up
	 * yet at boot, restarting) is an outage like those of a running agent:
	 * start in fallback and connect when it answers.
	 */
	ret = rl_sync_agent_connect(&ag, cfg, err, errlen);
	if (ret == -EINTR)
		ret = 0;
	/* -EAGAIN: the master Sentinel names is not one yet (a failover under way). */
	down = ret == -ECONNREFUSED || ret == -ETIMEDOUT || ret == -ECONNRESET || ret == -EPIPE ||
	       ret == -EAGAIN;
	if (down) {
		snprintf(down_msg, sizeof(down_msg), "%s", err);
		ret = 0;
	}
	if (ret)
		goto out_lock;
	if (should_stop(&sc))
		goto out_redis;
	ret = rl_sync_kern_open(ifname, &k, err, errlen);
	if (ret)
		goto out_redis;
	ret = rl_sync_kern_policy(k, policy, sizeof(policy));
	if (ret) {
		snprintf(err, errlen, "%s: couldn't read the policy: %s", ifname, strerror(-ret));
		goto out_kern;
	}
	ret = down ? rl_sync_agent_down(&ag, policy) :
		     rl_sync_agent_start(&ag, policy, err, errlen);
	if (ret == -EINTR) {
		ret = 0;
		goto out_kern;
	}
	if (ret < 0)
		goto out_kern;
	fprintf(stderr,
		"sync: %s in group '%s' as node '%s' through %s, every %llu ms, fallback %s; "
		"%llu node(s) live\n",
		ifname, cfg->group, cfg->node, ag.url_str,
		(unsigned long long)(cfg->interval_ns / 1000000ULL),
		cfg->fallback == RL_SYNC_FB_SHARE ? "share" : "local",
		(unsigned long long)ag.st.nodes);
	if (down)
		pr_warn("sync: %s; falling back to %s until Redis answers", down_msg,
			cfg->fallback == RL_SYNC_FB_SHARE ?
				"share (the limit divided by the nodes last seen: none yet, so "
				"the full limit)" :
				"local (the full limit on this host)");
	else if (ret == 1)
		pr_warn("sync: %s", err);
	ret = 0;
	/*
	 * The first drain is dropped: after an agent was killed, counting stayed on
	 * and these counts may span minutes, which charged at once to the other
	 * nodes would be a debt no interval ever made.
	 */
	ret = rl_sync_drain(k, &first, &nfirst);
	free(first);
	if (ret) {
		snprintf(err, errlen, "couldn't read what passed: %s", strerror(-ret));
		goto out_agent;
	}
	rl_sync_status_write(k, &ag.st);
	{
		struct rl_sync_recent_cfg rcfg;

		rl_sync_agent_recent_cfg(&ag, &rcfg);
		rl_sync_recent_init(&rc, &rcfg);
	}
	deadline = now_ns(CLOCK_MONOTONIC);
	for (;;) {
		deadline += cfg->interval_ns;
		if (!wait_until(deadline, signals, &set, stop))
			break;
		/* A `set` in between changes what the others must match. */
		if (!rl_sync_kern_policy(k, now_policy, sizeof(now_policy)) &&
		    strcmp(now_policy, policy)) {
			strcpy(policy, now_policy);
			rl_sync_recent_clear(&rc);
			pr_warn("sync: the policy of %s changed: the other nodes must change too",
				ifname);
		}
		ret = one_round(k, &ag, &rc, err, errlen);
		/* A SIGINT or SIGTERM while Redis was awaited: stop as between rounds. */
		if (ret == -EINTR)
			break;
		if (ret)
			goto out_agent;
		/* Behind by more than an interval (a slow round trip): skip, don't catch up. */
		if (now_ns(CLOCK_MONOTONIC) > deadline + cfg->interval_ns)
			deadline = now_ns(CLOCK_MONOTONIC);
	}
	ret = 0;
	fprintf(stderr, "sync: %s stopped after %llu round trips, %llu intervals in fallback\n",
		ifname, (unsigned long long)ag.st.syncs_total,
		(unsigned long long)ag.st.fallback_intervals_total);
out_agent:
	ag.st.state = RL_SYNC_OFF;
	rl_sync_status_write(k, &ag.st);
out_kern:
	rl_sync_kern_close(k, true);
	rl_sync_recent_free(&rc);
out_redis:
	rl_sync_agent_fini(&ag);
out_lock:
	rl_sync_unlock(ifname, lock);
out_sig:
	if (signals) {
		/* A signal seen by the stop check is still pending: take it, not its default action. */
		while (sigtimedwait(&set, NULL, &zero) > 0)
			;
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	return ret;
}

int rl_sync_kern_round(struct rl_sync_kern *k, struct rl_sync_agent *ag, struct rl_sync_recent *rc,
		       char *err, size_t errlen)
{
	return one_round(k, ag, rc, err, errlen);
}
