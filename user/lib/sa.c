// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The set-associative IPv4 table from userspace: see sa.h and include/rl_sa.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "maplist.h"
#include "sa.h"

__u32 rl_sa_bits_for(__u32 max_sources)
{
	__u64 sets = ((__u64)max_sources * RL_SA_SLOTS_PER_SOURCE + RL_SA_WAYS - 1) / RL_SA_WAYS;
	__u32 bits = RL_SA_BITS_MIN;

	while (bits < RL_SA_BITS_MAX && (1ULL << bits) < sets)
		bits++;
	return bits;
}

int rl_sa_bits_of(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), bits = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.value_size != sizeof(struct rl_sa_set) || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	while ((1U << bits) < info.max_entries)
		bits++;
	if (bits < RL_SA_BITS_MIN || bits > RL_SA_BITS_MAX)
		return -EINVAL;
	return (int)bits;
}

int rl_sa_check(const struct rl_params *p, __u32 bits, char *err, size_t errlen)
{
	__u32 m = RL_SA_STATE_BASE + bits;
	__u64 cb = rl_sa_count_bits(p);

	if (p->algo == RL_ALGO_TOKEN_BUCKET || p->algo == RL_ALGO_GCRA) {
		/* ahead_max less the skew: tau + the largest packet's cost (0: no policy yet). */
		__u64 h = p->ahead_max > RL_SKEW_VT ? p->ahead_max - RL_SKEW_VT : 0;

		if (h >= 1ULL << (m - 2)) {
			snprintf(
				err, errlen,
				"--burst is too large for a source table of %u slots: the bucket spans %llu vt, the table keeps %u bits of state (at most %llu); raise --max-sources",
				RL_SA_WAYS << bits, (unsigned long long)h, m,
				(unsigned long long)(1ULL << (m - 2)) - 1);
			return -EINVAL;
		}
		return 0;
	}
	if (cb + RL_SA_WIN_ID_BITS_MIN > m) {
		snprintf(
			err, errlen,
			"--rate x --window is too large for a source table of %u slots: its counts take %llu of the %u bits of state, which must leave %u for the window; raise --max-sources",
			RL_SA_WAYS << bits, (unsigned long long)cb, m, RL_SA_WIN_ID_BITS_MIN);
		return -EINVAL;
	}
	return 0;
}

void rl_table4_choose(struct rl_config *cfg, __u32 bits)
{
	cfg->table4 = rl_sa_check(&cfg->params, bits, NULL, 0) ? RL_TABLE4_WIDE : RL_TABLE4_SA;
}

int rl_sa_bits_live(const struct rl_pins *pins, __u32 *bits)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	struct rl_ctl ctl = {};
	int ret = rl_sa_bits_of(pins->sets4);

	if (ret < 0)
		ret = rl_sa_bits_of(pins->wide4);
	if (ret >= 0) {
		*bits = (__u32)ret;
		return 0;
	}
	/* rl_sets4 is the stand-in: the size it will have is --max-sources's. */
	if (bpf_map_lookup_elem(pins->ctl, &zero, &ctl))
		return -errno;
	if (!ctl.max_sources4) {
		if (bpf_obj_get_info_by_fd(pins->state4, &info, &len))
			return -errno;
		ctl.max_sources4 = info.max_entries;
	}
	*bits = rl_sa_bits_for(ctl.max_sources4);
	return 0;
}

int rl_table4_create(enum rl_table4 t, __u32 max_sources, __u32 bits, bool stand_in)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	int fd;

	if (t == RL_TABLE4_LRU) {
		fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "rl_state4",
				    sizeof(struct rl_state_key4), sizeof(__u64),
				    stand_in ? 1 : max_sources, NULL);
	} else {
		o.map_flags = BPF_F_MMAPABLE;
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY,
				    t == RL_TABLE4_WIDE ? "rl_wide4" : "rl_sets4", sizeof(__u32),
				    sizeof(struct rl_sa_set), stand_in ? 1 : 1U << bits, &o);
	}
	return fd < 0 ? -errno : fd;
}

int rl_sa_key_new(__u64 *key)
{
	ssize_t n;

	/* Blocks only until the pool is first seeded, at boot. */
	do
		n = getrandom(key, sizeof(*key), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == sizeof(*key) ? 0 : -EIO;
}

int rl_sa_map(int fd, __u64 key, struct rl_sa_map *m)
{
	int bits = rl_sa_bits_of(fd);
	void *p;

	memset(m, 0, sizeof(*m));
	m->key = key;
	if (bits < 0)
		return bits;
	m->bits = (__u32)bits;
	m->len = sizeof(struct rl_sa_set) << bits;
	p = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	m->sets = p;
	return 0;
}

void rl_sa_unmap(struct rl_sa_map *m)
{
	if (m->sets)
		munmap(m->sets, m->len);
	m->sets = NULL;
}

static __u32 inv_mul(__u32 a)
{
	/* Newton's iteration for the inverse of an odd number mod 2^32. */
	__u32 x = a;

	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

/* rl_sa_mix32() backwards. */
static __u32 unmix32(__u32 x)
{
	x ^= x >> 16;
	x *= inv_mul(0xc2b2ae35U);
	x ^= (x >> 13) ^ (x >> 26);
	x *= inv_mul(0x85ebca6bU);
	x ^= x >> 16;
	return x;
}

__be32 rl_sa_addr(const struct rl_sa_map *m, __u32 idx, __u64 w)
{
	__u32 gen = (__u32)(w >> RL_SA_GEN_SHIFT) & 3;
	__u32 tag =
		(__u32)((w & ~(RL_SA_USED | RL_SA_PEND | RL_SA_SEEN | (3ULL << RL_SA_GEN_SHIFT))) >>
			(RL_SA_STATE_BASE + m->bits));
	__u32 h = (tag << m->bits) | idx;

	/* rl_sa_hash() backwards: each mix, then each half of the key. */
	return htonl(unmix32(unmix32(h) ^ (__u32)(m->key >> 32)) ^ (__u32)m->key ^
		     (gen * 0x9e3779b9U));
}

static __u64 load(__u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static bool cas(__u64 *p, __u64 old, __u64 new)
{
	return __atomic_compare_exchange_n(p, &old, new, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

int rl_sa_find(const struct rl_sa_map *m, __be32 addr, __u32 gen, __u32 *idx, int *way, __u64 *w)
{
	__u32 h = rl_sa_hash(ntohl(addr), gen, m->key);
	__u64 id = rl_sa_id(h, gen, m->bits), idm = rl_sa_id_mask(m->bits);
	struct rl_sa_set *set;

	*idx = h & ((1U << m->bits) - 1);
	set = &m->sets[*idx];
	for (int i = 0; i < RL_SA_WAYS; i++) {
		__u64 v = load(&set->w[i]);

		if ((v & idm) == id && !(v & RL_SA_PEND)) {
			*way = i;
			*w = v;
			return 0;
		}
	}
	return -ENOENT;
}

/* Attempts before giving up on a set that other writers keep changing. */
#define SA_TRIES 1000

/*
 * The victim of an insertion into @set (@wide: rl_wide4's ways) under @gen:
 * an empty slot, else one of neither this generation nor the one before
 * (left over from an older set), else the one least ahead of @ref, those
 * not seen again first. Its word in *vw; -1 if every slot is pending.
 */
static int pick_victim(struct rl_sa_set *set, bool wide, __u32 gen, __u64 ref, __u32 bits,
		       __u64 *vw)
{
	int ways = wide ? RL_SA_WIDE_WAYS : RL_SA_WAYS, victim = -1, rank = 3;
	__u64 gm = 3ULL << RL_SA_GEN_SHIFT;
	__s64 best = 0x7fffffffffffffffLL;

	for (int i = 0; i < ways; i++) {
		__u64 w = load(&set->w[i]), st;
		__u32 g;
		__s64 ahead;

		if (!(w & RL_SA_USED)) { /* rl_sets4: 0; rl_wide4: a version alone */
			*vw = w;
			return i;
		}
		if (w & RL_SA_PEND)
			continue;
		g = (__u32)((w & gm) >> RL_SA_GEN_SHIFT);
		if (g != (gen & 3) && g != ((gen - 1) & 3)) {
			if (rank > 1) {
				rank = 1;
				victim = i;
				*vw = w;
			}
			continue;
		}
		st = wide ? load(&set->w[RL_SA_WIDE_WAYS + i]) : rl_sa_get(w, ref, bits);
		ahead = (__s64)(st - ref);
		/* As the program's victim: sources seen again go last. */
		if (w & RL_SA_SEEN)
			ahead += RL_SA_SEEN_RANK;
		if (rank == 3 || (rank == 2 && ahead < best)) {
			rank = 2;
			best = ahead;
			victim = i;
			*vw = w;
		}
	}
	return victim;
}

/*
 * The slot of @id among the first @ways words of @set (rl_wide4: its
 * identity words), and its word in *w (pending or not), or -1.
 */
static int find_way(struct rl_sa_set *set, int ways, __u64 id, __u64 idm, __u64 *w)
{
	for (int i = 0; i < ways; i++) {
		*w = load(&set->w[i]);
		if ((*w & idm) == id)
			return i;
	}
	return -1;
}

int rl_sa_insert(const struct rl_sa_map *m, __be32 addr, __u32 gen, __u64 state, __u64 flags,
		 __u64 ref)
{
	__u32 h = rl_sa_hash(ntohl(addr), gen, m->key), bits = m->bits;
	__u64 id = rl_sa_id(h, gen, bits), idm = rl_sa_id_mask(bits), sm = rl_sa_state_mask(bits);
	struct rl_sa_set *set = &m->sets[h & ((1U << bits) - 1)];

	for (int t = 0; t < SA_TRIES; t++) {
		__u64 w, vw = 0;
		int hit = find_way(set, RL_SA_WAYS, id, idm, &w), victim, i;

		if (hit >= 0) {
			if (w & RL_SA_PEND)
				continue;
			if (flags == BPF_NOEXIST)
				return -EEXIST;
			if (cas(&set->w[hit], w, id | (w & RL_SA_SEEN) | (state & sm)))
				return 0;
			continue;
		}
		victim = pick_victim(set, false, gen, ref, bits, &vw);
		if (victim < 0 || !cas(&set->w[victim], vw, id | RL_SA_PEND))
			continue;
		for (i = 0; i < RL_SA_WAYS; i++) {
			if (i == victim)
				continue;
			if ((load(&set->w[i]) & idm) == id)
				break;
		}
		if (i < RL_SA_WAYS) {
			cas(&set->w[victim], id | RL_SA_PEND, 0);
			continue;
		}
		cas(&set->w[victim], id | RL_SA_PEND, id | (state & sm));
		return 0;
	}
	return -EBUSY;
}

int rl_sa_delete(const struct rl_sa_map *m, __be32 addr, __u32 gen)
{
	for (int t = 0; t < SA_TRIES; t++) {
		__u32 idx;
		int way;
		__u64 w;

		if (rl_sa_find(m, addr, gen, &idx, &way, &w))
			return -ENOENT;
		if (cas(&m->sets[idx].w[way], w, 0))
			return 0;
	}
	return -EBUSY;
}

int rl_sa_wide_read(const struct rl_sa_map *m, __u32 idx, int way, __u64 w, __u64 *state)
{
	struct rl_sa_set *set = &m->sets[idx];

	*state = load(&set->w[RL_SA_WIDE_WAYS + way]);
	return load(&set->w[way]) == w ? 0 : -EAGAIN;
}

int rl_sa_wide_find(const struct rl_sa_map *m, __be32 addr, __u32 gen, __u32 *idx, int *way,
		    __u64 *state)
{
	__u32 h = rl_sa_hash(ntohl(addr), gen, m->key);
	__u64 id = rl_sa_id(h, gen, m->bits), idm = rl_sa_id_mask(m->bits), w;

	*idx = h & ((1U << m->bits) - 1);
	for (int t = 0; t < SA_TRIES; t++) {
		*way = find_way(&m->sets[*idx], RL_SA_WIDE_WAYS, id, idm, &w);
		if (*way < 0)
			return -ENOENT;
		if (w & RL_SA_PEND)
			continue; /* being written: its state is there once released */
		if (!rl_sa_wide_read(m, *idx, *way, w, state))
			return 0;
	}
	return -EBUSY;
}

/* Store @state in way @i of @set, locked from @w by the caller, and release it. */
static void wide_store(struct rl_sa_set *set, int i, __u64 lock, __u64 state, __u32 bits)
{
	__atomic_store_n(&set->w[RL_SA_WIDE_WAYS + i], state, __ATOMIC_SEQ_CST);
	cas(&set->w[i], lock, rl_sa_wide_next(lock, bits));
}

int rl_sa_wide_insert(const struct rl_sa_map *m, __be32 addr, __u32 gen, __u64 state, __u64 flags,
		      __u64 ref)
{
	__u32 h = rl_sa_hash(ntohl(addr), gen, m->key), bits = m->bits;
	__u64 id = rl_sa_id(h, gen, bits), idm = rl_sa_id_mask(bits), sm = rl_sa_state_mask(bits);
	struct rl_sa_set *set = &m->sets[h & ((1U << bits) - 1)];

	for (int t = 0; t < SA_TRIES; t++) {
		int hit, victim, i;
		__u64 w, vw = 0, lock;

		hit = find_way(set, RL_SA_WIDE_WAYS, id, idm, &w);
		if (hit >= 0) {
			if (w & RL_SA_PEND)
				continue;
			if (flags == BPF_NOEXIST)
				return -EEXIST;
			if (!cas(&set->w[hit], w, w | RL_SA_PEND))
				continue;
			wide_store(set, hit, w | RL_SA_PEND, state, bits);
			return 0;
		}
		victim = pick_victim(set, true, gen, ref, bits, &vw);
		lock = id | RL_SA_PEND | (vw & sm);
		if (victim < 0 || !cas(&set->w[victim], vw, lock))
			continue;
		for (i = 0; i < RL_SA_WIDE_WAYS; i++) {
			if (i == victim)
				continue;
			if ((load(&set->w[i]) & idm) == id)
				break;
		}
		if (i < RL_SA_WIDE_WAYS) {
			cas(&set->w[victim], lock, vw); /* the way as it was: its state unwritten */
			continue;
		}
		wide_store(set, victim, lock, state, bits);
		return 0;
	}
	return -EBUSY;
}

int rl_sa_wide_delete(const struct rl_sa_map *m, __be32 addr, __u32 gen)
{
	__u32 h = rl_sa_hash(ntohl(addr), gen, m->key);
	__u64 id = rl_sa_id(h, gen, m->bits), idm = rl_sa_id_mask(m->bits);
	__u64 sm = rl_sa_state_mask(m->bits), w;
	struct rl_sa_set *set = &m->sets[h & ((1U << m->bits) - 1)];

	for (int t = 0; t < SA_TRIES; t++) {
		int i = find_way(set, RL_SA_WIDE_WAYS, id, idm, &w);

		if (i < 0)
			return -ENOENT;
		if (w & RL_SA_PEND)
			continue;
		if (cas(&set->w[i], w, w & sm))
			return 0;
	}
	return -EBUSY;
}

/*
 * The state a stale word is rewritten to: one the program reads exactly as
 * it would have read the old one had it not wrapped. Returns false when the
 * state is not stale.
 */
static bool fresh_state(const struct rl_params *p, __u64 s, __u64 ref, __u32 bits, __u64 *out)
{
	__u64 cb = rl_sa_count_bits(p);

	if (!cb) {
		/*
		 * A TAT behind the clock is a full bucket, whatever its
		 * distance: written back RL_SA_SWEEP_SLACK behind, so that a
		 * CPU whose clock read is a little older still finds it
		 * behind. Read back right until the clock is 2^(m-1) past it.
		 */
		(void)bits;
		*out = ref - RL_SA_SWEEP_SLACK;
		return (__s64)(s - *out) < 0;
	} else {
		/* A window id neither k - 1, k nor k + 1 means empty counts: as a new source's. */
		__u64 k = ref >> cb, id = s >> cb;

		if (((id - k + 1) & p->id_mask) <= 2)
			return false;
		*out = ((k - 2) & p->id_mask) << cb;
		return true;
	}
}

int rl_sa_sweep(const struct rl_sa_map *m, const struct rl_config *cfg, __u64 now, __u64 *swept)
{
	__u64 ref = rl_sa_ref(&cfg->params, now);
	__u64 sm = rl_sa_state_mask(m->bits), gen = (__u64)(cfg->gen & 3) << RL_SA_GEN_SHIFT;

	*swept = 0;
	for (__u32 idx = 0; idx < (1U << m->bits); idx++) {
		for (int i = 0; i < RL_SA_WAYS; i++) {
			__u64 *p = &m->sets[idx].w[i], w = load(p), s;

			if (!(w & RL_SA_USED) || (w & RL_SA_PEND) ||
			    (w & (3ULL << RL_SA_GEN_SHIFT)) != gen)
				continue;
			if (!fresh_state(&cfg->params, rl_sa_get(w, ref, m->bits), ref, m->bits,
					 &s))
				continue;
			/* A failed CAS: a packet updated the source, which is then current. */
			if (cas(p, w, (w & ~sm) | (s & sm)))
				(*swept)++;
		}
	}
	return 0;
}
