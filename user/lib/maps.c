// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Configuration slots, counters and source counts of a limiter's maps: see maps.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "maps.h"
#include "pins.h"
#include "rl_skel.h"
#include "sa.h"
#include "sa6.h"

/* The id of map @fd, 0 if it cannot be read. */
static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* Of the maps @ids of a program, the fd of the one named .rodata.cfg (libbpf's name). */
static int rodata_cfg_fd(const __u32 *ids, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue; /* freed meanwhile: not the program's any more */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, ".rodata.cfg") &&
		    info.value_size == sizeof(struct xdp_ratelimit__rodata_cfg))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int rl_live_compiled(const struct rl_pins *pins, struct rl_config *cfg, struct rl_rules_cfg *rules)
{
	struct xdp_ratelimit__rodata_cfg *v = NULL;
	struct rl_member m[RL_MAX_MEMBERS];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[64], id = 0, zero = 0;
	int prog = -1, fd = -1, ret = -ENOENT, n;

	/* The interfaces of this namespace that run a program on these maps. */
	n = rl_members_of(map_id(pins->counters), m, RL_MAX_MEMBERS);
	if (n <= 0)
		return n ? n : -ENOENT;
	for (int i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		__u32 mid;

		if (bpf_xdp_query(m[i].ifindex, 0, &q))
			continue; /* removed meanwhile: not a member any more */
		mid = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		/*
		 * Members on different programs: a change killed between their
		 * swaps, which wrote no copy yet. The copies are the old state,
		 * the one rl_members_converge() puts back on every member.
		 */
		if (id && mid != id)
			return -ENOENT;
		id = mid;
	}
	if (!id)
		return -ENOENT;
	prog = bpf_prog_get_fd_by_id(id);
	if (prog < 0)
		return errno == ENOENT ? -ENOENT : -errno; /* detached meanwhile */
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog, &info, &len)) {
		ret = -errno;
		goto out;
	}
	if (info.nr_map_ids > sizeof(ids) / sizeof(ids[0]))
		goto out; /* not ours: ours uses fewer maps */
	fd = rodata_cfg_fd(ids, info.nr_map_ids);
	if (fd < 0)
		goto out;
	v = malloc(sizeof(*v));
	if (!v) {
		ret = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		ret = -errno;
		goto out;
	}
	if (cfg)
		*cfg = v->rl_cfg;
	if (rules)
		*rules = v->rl_rules;
	ret = 0;
out:
	free(v);
	if (fd >= 0)
		close(fd);
	close(prog);
	return ret;
}
int rl_config_read(const struct rl_pins *pins, struct rl_config *cfg, __u32 *active)
{
	struct rl_ctl ctl;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(pins->ctl, &zero, &ctl))
		return -errno;
	if (ctl.active > 1)
		return -EINVAL;
	if (bpf_map_lookup_elem(pins->config, &ctl.active, cfg))
		return -errno;
	*active = ctl.active;
	/* The program's own, past a copy a killed command left stale (rl_live_compiled()). */
	rl_live_compiled(pins, cfg, NULL);
	return 0;
}

__u32 rl_max_sources6(const struct rl_pins *pins)
{
	struct rl_ctl ctl = {};
	__u32 zero = 0;
	int bits;

	if (!bpf_map_lookup_elem(pins->ctl, &zero, &ctl) && ctl.max_sources6)
		return ctl.max_sources6;
	bits = rl_sa6_bits_of(pins->sets6);
	return bits < 0 ? 0 : (RL_SA6_WAYS << bits) / RL_SA6_WAYS_PER_SOURCE;
}

int rl_config_swap(const struct rl_pins *pins, const struct rl_config *cfg, __u32 active)
{
	__u32 zero = 0, slot = !active;
	struct rl_ctl ctl;

	if (bpf_map_lookup_elem(pins->ctl, &zero, &ctl))
		return -errno;
	ctl.active = slot;
	if (bpf_map_update_elem(pins->config, &slot, cfg, BPF_ANY))
		return -errno;
	/* The flip: one aligned 32-bit store in the array value. */
	if (bpf_map_update_elem(pins->ctl, &zero, &ctl, BPF_ANY))
		return -errno;
	return 0;
}

/* The counters as userspace shows them: the kernel's, summed, and what they imply. */
static void derive(const struct rl_kcounters *k, struct rl_counters *c)
{
	__u64 malformed = 0;

	memset(c, 0, sizeof(*c));
	c->passed = k->passed;
	c->passed_bytes = k->passed_bytes;
	c->dropped = k->dropped;
	c->dropped_bytes = k->dropped_bytes;
	/* SYNs answered with a cookie went back out (XDP_TX): seen, neither passed nor dropped. */
	c->rx_packets = k->passed + k->dropped + k->syn_sent;
	c->rx_bytes = k->passed_bytes + k->dropped_bytes + k->syn_sent_bytes;
	c->syncookies_sent = k->syn_sent;
	c->syncookies_sent_bytes = k->syn_sent_bytes;
	c->syncookies_valid = k->syn_valid;
	c->syncookies_invalid = k->syn_invalid;
	c->limited = k->limited;
	c->would_drop = k->would_drop;
	c->would_drop_bytes = k->would_drop_bytes;
	c->ipv6 = k->ipv6;
	c->not_ip = k->not_ip;
	for (int i = 0; i < RL_BAD__COUNT; i++) {
		c->malformed[i] = k->malformed[i];
		malformed += k->malformed[i];
	}
	c->new_sources = k->new_sources;
	c->carried = k->carried;
	c->insert_failed = k->insert_failed;
	c->cas_retries = k->cas_retries;
	c->cas_exhausted = k->cas_exhausted;
	c->nd = k->nd;
	c->sync_lost = k->sync_lost;
	c->agg_limited = k->lvl_limited[RL_LVL_PREFIX - 1];
	c->iface_limited = k->lvl_limited[RL_LVL_IFACE - 1];
	c->new_limited = k->lvl_limited[RL_LVL_NEW - 1];
	c->unadmitted = k->unadmitted;
	c->admitted_seen = k->admitted_seen;
	c->agg_new = k->agg_new;
	c->agg_overdraft = k->agg_overdraft;
	c->agg_failed = k->agg_failed;
	c->evicted = k->evicted;
	c->evicted_seen = k->evicted_seen;
	/*
	 * Every frame is IPv4, IPv6, ND, not IP, malformed or a SYN answered
	 * with a cookie: IPv4 is what is left.
	 */
	c->ipv4 = c->rx_packets - k->ipv6 - k->nd - k->not_ip - malformed - k->syn_sent;
}

int rl_counters_sum(int map_fd, struct rl_counters *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rl_kcounters *per, total = {};
	__u32 zero = 0;
	int ret = 0;

	if (ncpu < 1)
		return -EINVAL;
	per = calloc((size_t)ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &zero, per)) {
		ret = -errno;
		goto out;
	}
	for (int c = 0; c < ncpu; c++) {
		__u64 *d = (__u64 *)&total, *s = (__u64 *)&per[c];

		for (size_t i = 0; i < sizeof(total) / sizeof(__u64); i++)
			d[i] += s[i];
	}
	derive(&total, sum);
out:
	free(per);
	return ret;
}

int rl_counters_read(const struct rl_pins *pins, struct rl_counters *sum)
{
	return rl_counters_sum(pins->counters, sum);
}

#define WALK_BATCH 1024

/*
 * The kernel's clock, as the XDP program reads it (bpf_ktime_get_ns() is
 * CLOCK_MONOTONIC): the reference IPv4 states of rl_sets4 are read back near.
 */
int rl_state_clock_fd = -1;

/* CLOCK_MONOTONIC itself: what a hash table walk reports as the time of its batch. */
static __u64 real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static __u64 mono_ns(void)
{
	struct timespec ts;
	__u32 zero = 0;
	__u64 t;

	if (rl_state_clock_fd >= 0 && !bpf_map_lookup_elem(rl_state_clock_fd, &zero, &t))
		return t;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* Walk the hash table rl_state4, handing every entry to @fn as a 20-byte key. */
static int walk_table(int fd, bool v4, rl_state_fn fn, void *ctx)
{
	struct rl_state_key keys[WALK_BATCH];
	struct rl_state_key4 keys4[WALK_BATCH];
	__u64 vals[WALK_BATCH];
	struct rl_state_key k;
	void *in = NULL, *out;
	__u32 cnt;
	int r, ret;

	for (;;) {
		__u64 read_ns;

		cnt = WALK_BATCH;
		r = bpf_map_lookup_batch(fd, in, &out, v4 ? (void *)keys4 : (void *)keys, vals,
					 &cnt, NULL);
		if (r && errno != ENOENT)
			return -errno;
		/*
		 * After the batch: a packet may write an entry while the batch is
		 * read, and its state must not be newer than the clock it is
		 * shown against (it would look over its limit). A source at its
		 * limit shows as refilled by the time the batch took, which it is.
		 */
		read_ns = real_ns();
		for (__u32 i = 0; i < cnt; i++) {
			if (v4) {
				memset(&k, 0, sizeof(k));
				k.src.addr[2] = htonl(0xffff);
				k.src.addr[3] = keys4[i].addr;
				k.gen = keys4[i].gen;
			} else {
				k = keys[i];
			}
			ret = fn(&k, vals[i], read_ns, ctx);
			if (ret)
				return ret;
		}
		if (r)
			return 0;
		in = &out;
	}
}

/* The generation and the parameters a slot of generation @g4 (mod 4) was written under. */
static const struct rl_params *slot_params(const struct rl_config *cfg, __u32 g4, __u32 *gen)
{
	*gen = cfg->gen - ((cfg->gen - g4) & 3);
	return *gen == cfg->gen - 1 ? &cfg->prev : &cfg->params;
}

/*
 * What a walk in progress holds, for the lookups, updates and deletes its
 * callback makes (migration: two per source): the set table it walks
 * (rl_sets4 or rl_wide4) mapped (mapping it maps all of its pages at once:
 * 32 MiB by default, far too slow to repeat per source) and the live
 * configuration (which IPv4 table is in use).
 */
static struct {
	int fd;
	const struct rl_sa_map *m;
	const struct rl_config *cfg;
} walking = { .fd = -1 };

static bool walking_pins(const struct rl_pins *pins)
{
	return walking.m && (walking.fd == pins->sets4 || walking.fd == pins->wide4);
}

/* The set table @fd, keyed with @key (the live configuration's sa_key). */
static int map_v4(int fd, __u64 key, struct rl_sa_map *m)
{
	if (walking.m && walking.fd == fd) {
		*m = *walking.m;
		return 0;
	}
	return rl_sa_map(fd, key, m);
}

static void unmap_v4(struct rl_sa_map *m)
{
	if (walking.m && m->sets == walking.m->sets)
		return; /* the walk's */
	rl_sa_unmap(m);
}

static int live_cfg(const struct rl_pins *pins, struct rl_config *cfg)
{
	__u32 active;

	if (walking_pins(pins) && walking.cfg) {
		*cfg = *walking.cfg;
		return 0;
	}
	return rl_config_read(pins, cfg, &active);
}

/* Is the set table @fd a table (rather than the one-entry stand-in of a policy that does not use it)? */
static bool sets_in_place(int fd)
{
	if (walking.m && walking.fd == fd)
		return true;
	return rl_sa_bits_of(fd) >= 0;
}

/*
 * For a walk of the set table @fd: the live configuration in *@cfg and the
 * table mapped under its secret in *@m. 1 when @fd is a stand-in (nothing
 * to walk), else 0 or -errno.
 */
static int walk_map_v4(const struct rl_pins *pins, int fd, struct rl_config *cfg,
		       struct rl_sa_map *m)
{
	__u32 active;
	int ret;

	if (!sets_in_place(fd))
		return 1;
	ret = rl_config_read(pins, cfg, &active);
	return ret ? ret : rl_sa_map(fd, cfg->sa_key, m);
}

/*
 * Way @i of set @idx of rl_wide4: 0 with its identity word and state, read
 * when it was not locked; -ENOENT when it is empty; -EBUSY when it stayed
 * locked (a writer that does not finish).
 */
static int wide_slot(const struct rl_sa_map *m, __u32 idx, int i, __u64 *w, __u64 *state)
{
	for (int t = 0; t < 1000; t++) {
		*w = __atomic_load_n(&m->sets[idx].w[i], __ATOMIC_SEQ_CST);
		if (!(*w & RL_SA_USED))
			return -ENOENT;
		if (!(*w & RL_SA_PEND) && !rl_sa_wide_read(m, idx, i, *w, state))
			return 0;
	}
	return -EBUSY;
}

/* Walk the set table @fd (@wide: rl_wide4), keys as IPv4-mapped IPv6, states whole. */
static int walk_sets(const struct rl_pins *pins, int fd, bool wide, rl_state_fn fn, void *ctx)
{
	int ways = wide ? RL_SA_WIDE_WAYS : RL_SA_WAYS, ret;
	struct rl_config cfg;
	struct rl_sa_map m;
	struct rl_state_key k;
	__u64 now;

	ret = walk_map_v4(pins, fd, &cfg, &m);
	if (ret)
		return ret < 0 ? ret : 0;
	walking.fd = fd;
	walking.m = &m;
	walking.cfg = &cfg;
	for (__u32 idx = 0; idx < (1U << m.bits) && !ret; idx++) {
		for (int i = 0; i < ways && !ret; i++) {
			__u64 w = __atomic_load_n(&m.sets[idx].w[i], __ATOMIC_SEQ_CST), st;
			const struct rl_params *p;

			if (wide) {
				ret = wide_slot(&m, idx, i, &w, &st);
				if (ret == -ENOENT) {
					ret = 0;
					continue;
				}
				if (ret)
					break;
			} else if (!(w & RL_SA_USED) || (w & RL_SA_PEND)) {
				continue;
			}
			/*
			 * The clock after the slot's load, never one read before
			 * the walk: a walk of a large table takes seconds on a
			 * busy machine, and the sweep or a packet rewrites a slot
			 * with the kernel's clock of that moment. Read against an
			 * older clock that state would look ahead by the time
			 * since, far over any limit. Read after, it is at most as
			 * new as the clock (see rl_state_fn).
			 */
			now = mono_ns();
			memset(&k, 0, sizeof(k));
			k.src.addr[2] = htonl(0xffff);
			k.src.addr[3] = rl_sa_addr(&m, idx, w);
			p = slot_params(&cfg, (__u32)(w >> RL_SA_GEN_SHIFT) & 3, &k.gen);
			if (!wide)
				st = rl_sa_get(w, rl_sa_ref(p, now), m.bits);
			ret = fn(&k, st, now, ctx);
		}
	}
	walking.m = NULL;
	walking.cfg = NULL;
	walking.fd = -1;
	rl_sa_unmap(&m);
	return ret;
}

/*
 * What a walk of rl_sets6 holds for its callback's lookups, updates and
 * deletes (migration: two per source), as walking does for the IPv4 set
 * tables: the table mapped, and the live configuration.
 */
static struct {
	const struct rl_sa6_map *m;
	const struct rl_config *cfg;
} walking6;

static int map_v6(int fd, __u64 key, struct rl_sa6_map *m)
{
	if (walking6.m) {
		*m = *walking6.m;
		return 0;
	}
	return rl_sa6_map(fd, key, m);
}

/* map_v6() of the limiter's rl_sets6, under the live configuration's key. */
static int map_live_v6(const struct rl_pins *pins, struct rl_sa6_map *m)
{
	struct rl_config cfg;
	__u32 active;
	int ret;

	if (walking6.m)
		return map_v6(pins->sets6, 0, m);
	ret = rl_config_read(pins, &cfg, &active);
	return ret ? ret : map_v6(pins->sets6, cfg.sa_key, m);
}

/* For a walk of rl_sets6: the live configuration in *@cfg, the table mapped under its secret. */
static int walk_map_v6(const struct rl_pins *pins, struct rl_config *cfg, struct rl_sa6_map *m)
{
	__u32 active;
	int ret = rl_config_read(pins, cfg, &active);

	return ret ? ret : rl_sa6_map(pins->sets6, cfg->sa_key, m);
}

static void unmap_v6(struct rl_sa6_map *m)
{
	if (walking6.m && m->sets == walking6.m->sets)
		return; /* the walk's */
	rl_sa6_unmap(m);
}

/* Walk rl_sets6: keys as stored (masked), states whole, the clock read after each way's. */
static int walk_sets6(const struct rl_pins *pins, rl_state_fn fn, void *ctx)
{
	struct rl_config cfg;
	struct rl_sa6_map m;
	struct rl_state_key k;
	__u64 now, w, st;
	int ret;

	ret = walk_map_v6(pins, &cfg, &m);
	if (ret)
		return ret;
	walking6.m = &m;
	walking6.cfg = &cfg;
	for (__u32 idx = 0; idx < (1U << m.bits) && !ret; idx++) {
		for (int i = 0; i < RL_SA6_WAYS && !ret; i++) {
			ret = rl_sa6_read(&m, idx, i, &w, &k.src, &st);
			if (ret == -ENOENT) {
				ret = 0;
				continue;
			}
			if (ret)
				break;
			/* After the way's read: see walk_sets(). */
			now = mono_ns();
			slot_params(&cfg, (__u32)(w >> RL_SA6_GEN_SHIFT) & 3, &k.gen);
			ret = fn(&k, st, now, ctx);
		}
	}
	walking6.m = NULL;
	walking6.cfg = NULL;
	rl_sa6_unmap(&m);
	return ret;
}

int rl_state_walk(const struct rl_pins *pins, rl_state_fn fn, void *ctx)
{
	/*
	 * The hash first: its batches are read just before @fn sees them,
	 * while the scan of a set table maps the whole table (32 MiB by
	 * default). Every IPv4 table: after a set that changed the table, the
	 * previous one holds the states not moved yet.
	 */
	int ret = walk_table(pins->state4, true, fn, ctx);

	if (!ret)
		ret = walk_sets6(pins, fn, ctx);
	if (!ret)
		ret = walk_sets(pins, pins->sets4, false, fn, ctx);
	return ret ? ret : walk_sets(pins, pins->wide4, true, fn, ctx);
}

/*
 * Sets read in one batch of a bounded walk: copied, then the clock read
 * once, after all of their loads (no state of the batch is newer than it),
 * then decoded. 64 sets are 4 KiB, one page of the mapping.
 */
#define SOME_BATCH 64

/* One used slot of a batch: where it is, its word, its whole state (rl_wide4). */
struct some_slot {
	__u32 idx;
	__u64 w, st;
};

/* The used slots of sets @idx..@idx + @n - 1 of @m into @out, loaded once each. */
static int some_batch(const struct rl_sa_map *m, bool wide, __u32 idx, __u32 n,
		      struct some_slot *out, size_t *nout, struct rl_walk_budget *b)
{
	int ways = wide ? RL_SA_WIDE_WAYS : RL_SA_WAYS, ret;

	*nout = 0;
	for (__u32 s = idx; s < idx + n; s++) {
		for (int i = 0; i < ways; i++) {
			struct some_slot *o = &out[*nout];

			b->slots_read++;
			if (wide) {
				ret = wide_slot(m, s, i, &o->w, &o->st);
				if (ret == -ENOENT)
					continue;
				if (ret)
					return ret;
			} else {
				o->w = __atomic_load_n(&m->sets[s].w[i], __ATOMIC_SEQ_CST);
				if (!(o->w & RL_SA_USED) || (o->w & RL_SA_PEND))
					continue;
			}
			o->idx = s;
			(*nout)++;
		}
	}
	b->sets_read += n;
	return 0;
}

/* The set table @fd (@wide: rl_wide4) from set b->start on, in batches, within the budget. */
static int some_sets(const struct rl_pins *pins, int fd, bool wide, struct rl_walk_budget *b,
		     rl_state_fn fn, void *ctx)
{
	struct some_slot slots[SOME_BATCH * RL_SA_WAYS];
	struct rl_config cfg;
	struct rl_state_key k;
	struct rl_sa_map m;
	__u32 nsets, done = 0;
	size_t n;
	int ret;

	ret = walk_map_v4(pins, fd, &cfg, &m);
	if (ret)
		return ret < 0 ? ret : 0;
	nsets = 1U << m.bits;
	b->sets_total += nsets;
	while (done < nsets && !ret) {
		__u32 idx = (b->start + done) & (nsets - 1);
		__u32 len = nsets - idx < SOME_BATCH ? nsets - idx : SOME_BATCH;
		__u64 now;

		if (b->max_states && b->states >= b->max_states)
			break;
		if (len > nsets - done)
			len = nsets - done;
		ret = some_batch(&m, wide, idx, len, slots, &n, b);
		done += len;
		/* After every load of the batch: no state is newer than this clock. */
		now = mono_ns();
		for (size_t j = 0; j < n && !ret; j++) {
			const struct rl_params *p;

			memset(&k, 0, sizeof(k));
			k.src.addr[2] = htonl(0xffff);
			k.src.addr[3] = rl_sa_addr(&m, slots[j].idx, slots[j].w);
			p = slot_params(&cfg, (__u32)(slots[j].w >> RL_SA_GEN_SHIFT) & 3, &k.gen);
			if (!wide)
				slots[j].st = rl_sa_get(slots[j].w, rl_sa_ref(p, now), m.bits);
			b->states++;
			ret = fn(&k, slots[j].st, now, ctx);
		}
	}
	if (done < nsets)
		b->whole = false;
	rl_sa_unmap(&m);
	return ret;
}

/* One source of rl_sets6 read by some_sets6(): its key as stored, its whole state. */
struct some6 {
	struct rl_state_key k;
	__u64 st;
};

/*
 * rl_sets6 from set b->start on, in batches, within the budget, as
 * some_sets(): each way read whole (a way being written, -EBUSY, is
 * passed over), the clock read once after each batch.
 */
static int some_sets6(const struct rl_pins *pins, struct rl_walk_budget *b, rl_state_fn fn,
		      void *ctx)
{
	struct some6 got[SOME_BATCH * RL_SA6_WAYS];
	struct rl_config cfg;
	struct rl_sa6_map m;
	__u32 nsets, done = 0;
	int ret;

	ret = walk_map_v6(pins, &cfg, &m);
	if (ret)
		return ret;
	nsets = 1U << m.bits;
	b->sets_total += nsets;
	while (done < nsets && !ret) {
		__u32 idx = (b->start + done) & (nsets - 1);
		__u32 len = nsets - idx < SOME_BATCH ? nsets - idx : SOME_BATCH;
		size_t n = 0;
		__u64 w, now;

		if (b->max_states && b->states >= b->max_states)
			break;
		if (len > nsets - done)
			len = nsets - done;
		for (__u32 s = idx; s < idx + len && !ret; s++) {
			for (int i = 0; i < RL_SA6_WAYS; i++) {
				b->slots_read++;
				ret = rl_sa6_read(&m, s, i, &w, &got[n].k.src, &got[n].st);
				if (ret == -ENOENT || ret == -EBUSY) {
					ret = 0;
					continue;
				}
				if (ret)
					break;
				slot_params(&cfg, (__u32)(w >> RL_SA6_GEN_SHIFT) & 3,
					    &got[n].k.gen);
				n++;
			}
		}
		b->sets_read += len;
		done += len;
		/* After every load of the batch: no state is newer than this clock. */
		now = mono_ns();
		for (size_t j = 0; j < n && !ret; j++) {
			b->states++;
			ret = fn(&got[j].k, got[j].st, now, ctx);
		}
	}
	if (done < nsets)
		b->whole = false;
	rl_sa6_unmap(&m);
	return ret;
}

/* A hash table (rl_state4) in batches, within the budget. */
static int some_table(int fd, bool v4, struct rl_walk_budget *b, rl_state_fn fn, void *ctx)
{
	struct rl_state_key keys[WALK_BATCH];
	struct rl_state_key4 keys4[WALK_BATCH];
	__u64 vals[WALK_BATCH];
	struct rl_state_key k;
	void *in = NULL, *out;
	__u32 cnt;
	int r, ret;

	for (;;) {
		__u64 read_ns;

		if (b->max_states && b->states >= b->max_states) {
			b->whole = false;
			return 0;
		}
		cnt = WALK_BATCH;
		r = bpf_map_lookup_batch(fd, in, &out, v4 ? (void *)keys4 : (void *)keys, vals,
					 &cnt, NULL);
		if (r && errno != ENOENT)
			return -errno;
		read_ns = real_ns(); /* after the batch, as walk_table() */
		b->slots_read += cnt;
		for (__u32 i = 0; i < cnt; i++) {
			if (v4) {
				memset(&k, 0, sizeof(k));
				k.src.addr[2] = htonl(0xffff);
				k.src.addr[3] = keys4[i].addr;
				k.gen = keys4[i].gen;
			} else {
				k = keys[i];
			}
			b->states++;
			ret = fn(&k, vals[i], read_ns, ctx);
			if (ret)
				return ret;
		}
		if (r)
			return 0;
		in = &out;
	}
}

int rl_state_walk_some(const struct rl_pins *pins, struct rl_walk_budget *b, rl_state_fn fn,
		       void *ctx)
{
	int ret;

	b->whole = true;
	b->states = b->slots_read = b->sets_read = b->sets_total = 0;
	ret = some_sets6(pins, b, fn, ctx);
	if (!ret)
		ret = some_table(pins->state4, true, b, fn, ctx);
	if (!ret)
		ret = some_sets(pins, pins->sets4, false, b, fn, ctx);
	if (!ret)
		ret = some_sets(pins, pins->wide4, true, b, fn, ctx);
	return ret;
}

int rl_hot_read(const struct rl_pins *pins, struct rl_hot *h)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(pins->hot, &zero, h) ? -errno : 0;
}

static bool key_is_v4(const struct rl_key *k)
{
	return !k->addr[0] && !k->addr[1] && k->addr[2] == htonl(0xffff);
}

/* IPv6: rl_sets6, by the XDP program's protocol (a victim's reference: the live policy's). */
static int update_v6(const struct rl_pins *pins, const struct rl_state_key *k, __u64 val,
		     __u64 flags)
{
	struct rl_config cfg;
	struct rl_sa6_map m;
	__u32 active;
	int ret;

	if (walking6.cfg)
		cfg = *walking6.cfg;
	else if ((ret = rl_config_read(pins, &cfg, &active)))
		return ret;
	ret = map_v6(pins->sets6, cfg.sa_key, &m);
	if (ret)
		return ret;
	ret = rl_sa6_insert(&m, &k->src, k->gen, val, flags, rl_sa_ref(&cfg.params, mono_ns()));
	unmap_v6(&m);
	return ret;
}

static int lookup_v6(const struct rl_pins *pins, const struct rl_state_key *k, __u64 *val)
{
	struct rl_sa6_map m;
	int ret = map_live_v6(pins, &m);

	if (ret)
		return ret;
	ret = rl_sa6_find(&m, &k->src, k->gen, val);
	unmap_v6(&m);
	return ret;
}

static int delete_v6(const struct rl_pins *pins, const struct rl_state_key *k)
{
	struct rl_sa6_map m;
	int ret = map_live_v6(pins, &m);

	if (ret)
		return ret;
	ret = rl_sa6_delete(&m, &k->src, k->gen);
	unmap_v6(&m);
	return ret;
}

/* One source of rl_state_lookup_many(): its state, or the slot word to read back. */
struct many_val {
	__u64 v;
	bool found, slot; /* slot: v is an rl_sets4 word, read back at the clock */
};

int rl_state_lookup_many(const struct rl_pins *pins, const struct rl_state_key *keys, size_t n,
			 __u64 *looked, rl_state_fn fn, void *ctx)
{
	struct rl_sa_map m = { 0 };
	struct rl_sa6_map m6 = { 0 };
	struct many_val *vals;
	struct rl_config cfg;
	__u32 active, idx;
	int ret, way;
	__u64 now;

	*looked = 0;
	if (!n)
		return 0;
	ret = rl_config_read(pins, &cfg, &active);
	if (ret)
		return ret;
	vals = calloc(n, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (cfg.table4 != RL_TABLE4_LRU) {
		ret = rl_sa_map(cfg.table4 == RL_TABLE4_WIDE ? pins->wide4 : pins->sets4,
				cfg.sa_key, &m);
		if (ret)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct rl_state_key *k = &keys[i];
		struct rl_state_key4 k4 = { .addr = k->src.addr[3], .gen = k->gen };
		struct many_val *v = &vals[i];

		(*looked)++;
		if (!key_is_v4(&k->src)) {
			/* rl_sets6, mapped once; its states are whole. */
			if (!m6.sets && (ret = map_v6(pins->sets6, cfg.sa_key, &m6)))
				goto out;
			v->found = !rl_sa6_find(&m6, &k->src, k->gen, &v->v);
		} else if (cfg.table4 == RL_TABLE4_LRU) {
			v->found = !bpf_map_lookup_elem(pins->state4, &k4, &v->v);
		} else if (cfg.table4 == RL_TABLE4_WIDE) {
			v->found = !rl_sa_wide_find(&m, k4.addr, k4.gen, &idx, &way, &v->v);
		} else {
			v->found = v->slot = !rl_sa_find(&m, k4.addr, k4.gen, &idx, &way, &v->v);
		}
		/* After a set that changed tables, a state not moved yet is in the other one. */
		if (!v->found && key_is_v4(&k->src) && cfg.has_prev)
			v->found = !rl_state_lookup(pins, k, &v->v);
	}
	/* After every load: no state is newer than this clock. */
	now = mono_ns();
	for (size_t i = 0; i < n && !ret; i++) {
		__u64 st = vals[i].v;
		__u32 gen;

		if (!vals[i].found)
			continue;
		if (vals[i].slot)
			st = rl_sa_get(st, rl_sa_ref(slot_params(&cfg, keys[i].gen & 3, &gen), now),
				       m.bits);
		ret = fn(&keys[i], st, now, ctx);
	}
out:
	rl_sa_unmap(&m);
	unmap_v6(&m6);
	free(vals);
	return ret;
}

/* IPv4 updates go to the table of the live policy. */
int rl_state_update(const struct rl_pins *pins, const struct rl_state_key *k, __u64 val,
		    __u64 flags)
{
	struct rl_state_key4 k4 = { .addr = k->src.addr[3], .gen = k->gen };
	struct rl_config cfg;
	struct rl_sa_map m;
	bool wide;
	int ret;

	if (!key_is_v4(&k->src))
		return update_v6(pins, k, val, flags);
	ret = live_cfg(pins, &cfg);
	if (ret)
		return ret;
	if (cfg.table4 == RL_TABLE4_LRU)
		return bpf_map_update_elem(pins->state4, &k4, &val, flags) ? -errno : 0;
	wide = cfg.table4 == RL_TABLE4_WIDE;
	ret = map_v4(wide ? pins->wide4 : pins->sets4, cfg.sa_key, &m);
	if (ret)
		return ret;
	if (wide)
		ret = rl_sa_wide_insert(&m, k->src.addr[3], k->gen, val, flags,
					rl_sa_ref(&cfg.params, mono_ns()));
	else
		ret = rl_sa_insert(&m, k->src.addr[3], k->gen, val, flags,
				   rl_sa_ref(&cfg.params, mono_ns()));
	unmap_v4(&m);
	return ret;
}

static int lookup_sets4(const struct rl_pins *pins, const struct rl_state_key *k,
			const struct rl_config *cfg, __u64 *val)
{
	__u32 h = rl_sa_hash(ntohl(k->src.addr[3]), k->gen, cfg->sa_key), idx, gen;
	const struct rl_params *p;
	struct rl_sa_set set;
	__u64 id, idm;
	int bits;

	/* One set read by the syscall: mapping the whole table is for walks. */
	bits = rl_sa_bits_of(pins->sets4);
	if (bits < 0)
		return -ENOENT; /* the stand-in of a policy that uses another table */
	idx = h & ((1U << bits) - 1);
	if (bpf_map_lookup_elem(pins->sets4, &idx, &set))
		return -errno;
	id = rl_sa_id(h, k->gen, (__u32)bits);
	idm = rl_sa_id_mask((__u32)bits);
	for (int i = 0; i < RL_SA_WAYS; i++) {
		if ((set.w[i] & idm) != id || (set.w[i] & RL_SA_PEND))
			continue;
		p = slot_params(cfg, k->gen & 3, &gen);
		*val = rl_sa_get(set.w[i], rl_sa_ref(p, mono_ns()), (__u32)bits);
		return 0;
	}
	return -ENOENT;
}

/*
 * rl_wide4 through its mapping: a syscall's copy of a set does not say in
 * which order it read an identity word and its state.
 */
static int lookup_wide4(const struct rl_pins *pins, const struct rl_state_key *k,
			const struct rl_config *cfg, __u64 *val)
{
	struct rl_sa_map m;
	__u32 idx;
	int ret, way;

	if (!sets_in_place(pins->wide4))
		return -ENOENT;
	ret = map_v4(pins->wide4, cfg->sa_key, &m);
	if (ret)
		return ret;
	ret = rl_sa_wide_find(&m, k->src.addr[3], k->gen, &idx, &way, val);
	unmap_v4(&m);
	return ret;
}

static int lookup_v4(const struct rl_pins *pins, const struct rl_state_key *k,
		     const struct rl_config *cfg, enum rl_table4 t, __u64 *val)
{
	struct rl_state_key4 k4 = { .addr = k->src.addr[3], .gen = k->gen };

	if (t == RL_TABLE4_SA)
		return lookup_sets4(pins, k, cfg, val);
	if (t == RL_TABLE4_WIDE)
		return lookup_wide4(pins, k, cfg, val);
	return bpf_map_lookup_elem(pins->state4, &k4, val) ? -errno : 0;
}

/* IPv4: the table of the live policy, then the others (states a set has not moved yet). */
int rl_state_lookup(const struct rl_pins *pins, const struct rl_state_key *k, __u64 *val)
{
	static const enum rl_table4 all[] = { RL_TABLE4_SA, RL_TABLE4_LRU, RL_TABLE4_WIDE };
	struct rl_config cfg;
	int ret;

	if (!key_is_v4(&k->src))
		return lookup_v6(pins, k, val);
	ret = live_cfg(pins, &cfg);
	if (ret)
		return ret;
	ret = lookup_v4(pins, k, &cfg, (enum rl_table4)cfg.table4, val);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]) && ret == -ENOENT; i++)
		if (all[i] != cfg.table4)
			ret = lookup_v4(pins, k, &cfg, all[i], val);
	return ret;
}

int rl_state_delete(const struct rl_pins *pins, const struct rl_state_key *k)
{
	struct rl_state_key4 k4 = { .addr = k->src.addr[3], .gen = k->gen };
	struct rl_config cfg;
	struct rl_sa_map m;
	int ret = -ENOENT;

	if (!key_is_v4(&k->src))
		return delete_v6(pins, k);
	if (!bpf_map_delete_elem(pins->state4, &k4))
		return 0;
	if (errno != ENOENT)
		return -errno;
	ret = live_cfg(pins, &cfg);
	if (ret)
		return ret;
	ret = -ENOENT;
	if (sets_in_place(pins->sets4)) {
		ret = map_v4(pins->sets4, cfg.sa_key, &m);
		if (ret)
			return ret;
		ret = rl_sa_delete(&m, k->src.addr[3], k->gen);
		unmap_v4(&m);
	}
	if (ret == -ENOENT && sets_in_place(pins->wide4)) {
		ret = map_v4(pins->wide4, cfg.sa_key, &m);
		if (ret)
			return ret;
		ret = rl_sa_wide_delete(&m, k->src.addr[3], k->gen);
		unmap_v4(&m);
	}
	return ret;
}

int rl_state_sweep(const struct rl_pins *pins, __u64 *swept)
{
	struct rl_config cfg;
	struct rl_sa_map m;
	__u32 active;
	int ret = rl_config_read(pins, &cfg, &active);

	*swept = 0;
	/* rl_wide4 keeps whole states: nothing to sweep. */
	if (ret || cfg.table4 != RL_TABLE4_SA)
		return ret;
	ret = rl_sa_map(pins->sets4, cfg.sa_key, &m);
	if (ret)
		return ret;
	ret = rl_sa_sweep(&m, &cfg, mono_ns(), swept);
	rl_sa_unmap(&m);
	return ret;
}

struct count_ctx {
	__u32 gen;
	__u64 n;
};

static int count_one(const struct rl_state_key *k, __u64 state, __u64 read_ns, void *ctx)
{
	struct count_ctx *c = ctx;

	(void)state;
	(void)read_ns;
	c->n += k->gen == c->gen;
	return 0;
}

int rl_count_sources(const struct rl_pins *pins, __u32 gen, __u64 *n)
{
	struct count_ctx c = { .gen = gen };
	/* Every source, in batches with one clock read each: a count needs no more. */
	struct rl_walk_budget b = { 0 };
	int ret = rl_state_walk_some(pins, &b, count_one, &c);

	*n = c.n;
	return ret;
}
