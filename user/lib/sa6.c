// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The IPv6 source table from userspace: see sa6.h and include/rl_sa6.h. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "sa6.h"

/* Attempts before giving up on a set that other writers keep changing. */
#define SA6_TRIES 1000

__u32 rl_sa6_bits_for(__u32 max_sources6)
{
	__u64 sets = ((__u64)max_sources6 * RL_SA6_WAYS_PER_SOURCE + RL_SA6_WAYS - 1) / RL_SA6_WAYS;
	__u32 bits = RL_SA6_BITS_MIN;

	while (bits < RL_SA6_BITS_MAX && (1ULL << bits) < sets)
		bits++;
	return bits;
}

int rl_sa6_bits_of(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), bits = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_ARRAY || info.value_size != sizeof(struct rl_sa6_set) ||
	    !info.max_entries || (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	while ((1U << bits) < info.max_entries)
		bits++;
	if (bits < RL_SA6_BITS_MIN || bits > RL_SA6_BITS_MAX)
		return -EINVAL;
	return (int)bits;
}

int rl_sa6_create(__u32 bits)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "rl_sets6", sizeof(__u32),
				sizeof(struct rl_sa6_set), 1U << bits, &o);

	return fd < 0 ? -errno : fd;
}

int rl_sa6_map(int fd, __u64 key, struct rl_sa6_map *m)
{
	int bits = rl_sa6_bits_of(fd);
	void *p;

	memset(m, 0, sizeof(*m));
	if (bits < 0)
		return bits;
	m->key = key;
	m->bits = (__u32)bits;
	m->len = sizeof(struct rl_sa6_set) << bits;
	p = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	m->sets = p;
	return 0;
}

void rl_sa6_unmap(struct rl_sa6_map *m)
{
	if (m->sets)
		munmap(m->sets, m->len);
	m->sets = NULL;
}

static __u64 load(__u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static bool cas(__u64 *p, __u64 old, __u64 new)
{
	return __atomic_compare_exchange_n(p, &old, new, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* The two words of a key, as the XDP program composes them (bpf/table6_sa.h, key6()). */
static void key_words(const struct rl_key *k, __u64 *k0, __u64 *k1)
{
	*k0 = (__u64)k->addr[1] << 32 | k->addr[0];
	*k1 = (__u64)k->addr[3] << 32 | k->addr[2];
}

static struct rl_sa6_set *set_of(const struct rl_sa6_map *m, __u64 k0, __u64 k1, __u32 gen,
				 __u64 *id)
{
	__u64 h = rl_sa6_hash(k0, k1, gen, m->key);

	*id = rl_sa6_id(h, gen);
	return &m->sets[h & ((1ULL << m->bits) - 1)];
}

int rl_sa6_read(const struct rl_sa6_map *m, __u32 idx, int way, __u64 *w, struct rl_key *key,
		__u64 *state)
{
	struct rl_sa6_set *set = &m->sets[idx];

	for (int t = 0; t < SA6_TRIES; t++) {
		__u64 k0, k1;

		*w = load(&set->id[way]);
		if (!(*w & RL_SA6_USED))
			return -ENOENT;
		if (*w & RL_SA6_LOCK)
			continue;
		k0 = load(&set->key[2 * way]);
		k1 = load(&set->key[2 * way + 1]);
		*state = load(&set->st[way]);
		if (load(&set->id[way]) != *w)
			continue;
		key->addr[0] = (__u32)k0;
		key->addr[1] = (__u32)(k0 >> 32);
		key->addr[2] = (__u32)k1;
		key->addr[3] = (__u32)(k1 >> 32);
		return 0;
	}
	return -EBUSY;
}

/*
 * The way of @set holding identity @id and key @k0, @k1, its word in *w
 * (unlocked), or -1; -EAGAIN when a way that may be it is locked.
 */
static int find_way(struct rl_sa6_set *set, __u64 id, __u64 k0, __u64 k1, __u64 *w)
{
	int ret = -1;

	for (int i = 0; i < RL_SA6_WAYS; i++) {
		__u64 v = load(&set->id[i]);

		if ((v & RL_SA6_ID_MASK) != id)
			continue;
		if (v & RL_SA6_LOCK) {
			ret = -EAGAIN;
			continue;
		}
		if (load(&set->key[2 * i]) == k0 && load(&set->key[2 * i + 1]) == k1) {
			*w = v;
			return i;
		}
	}
	return ret;
}

int rl_sa6_find(const struct rl_sa6_map *m, const struct rl_key *key, __u32 gen, __u64 *state)
{
	__u64 k0, k1, id, w;
	struct rl_sa6_set *set;

	key_words(key, &k0, &k1);
	set = set_of(m, k0, k1, gen, &id);
	for (int t = 0; t < SA6_TRIES; t++) {
		int i = find_way(set, id, k0, k1, &w);

		if (i == -EAGAIN)
			continue;
		if (i < 0)
			return -ENOENT;
		*state = load(&set->st[i]);
		if (load(&set->id[i]) == w)
			return 0;
	}
	return -EBUSY;
}

/*
 * The victim of an insertion into @set under @gen: an empty way, else one
 * of neither this generation nor the one before (left over from an older
 * set), else the one least ahead of @ref. Its word in *vw; -1 if every way
 * is locked.
 */
static int pick_victim(struct rl_sa6_set *set, __u32 gen, __u64 ref, __u64 *vw)
{
	__u64 gm = 3ULL << RL_SA6_GEN_SHIFT;
	__s64 best = 0x7fffffffffffffffLL;
	int victim = -1, rank = 3;

	for (int i = 0; i < RL_SA6_WAYS; i++) {
		__u64 w = load(&set->id[i]);
		__s64 ahead;
		__u32 g;

		if (!(w & RL_SA6_USED)) {
			*vw = w;
			return i;
		}
		if (w & RL_SA6_LOCK)
			continue;
		g = (__u32)((w & gm) >> RL_SA6_GEN_SHIFT);
		if (g != (gen & 3) && g != ((gen - 1) & 3)) {
			if (rank > 1) {
				rank = 1;
				victim = i;
				*vw = w;
			}
			continue;
		}
		ahead = (__s64)(load(&set->st[i]) - ref);
		if (w & RL_SA6_SEEN) /* as the kernel's sa6_miss(): seen again goes last */
			ahead += RL_SA6_SEEN_RANK;
		if (rank == 3 || (rank == 2 && ahead < best)) {
			rank = 2;
			best = ahead;
			victim = i;
			*vw = w;
		}
	}
	return victim;
}

/* Store @state (and @k0, @k1 when @key) in way @i of @set, locked as @lock, and release it. */
static void store(struct rl_sa6_set *set, int i, __u64 lock, bool key, __u64 k0, __u64 k1,
		  __u64 state)
{
	if (key) {
		__atomic_store_n(&set->key[2 * i], k0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&set->key[2 * i + 1], k1, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&set->st[i], state, __ATOMIC_SEQ_CST);
	cas(&set->id[i], lock, rl_sa6_next(lock));
}

int rl_sa6_insert(const struct rl_sa6_map *m, const struct rl_key *key, __u32 gen, __u64 state,
		  __u64 flags, __u64 ref)
{
	__u64 k0, k1, id;
	struct rl_sa6_set *set;

	key_words(key, &k0, &k1);
	set = set_of(m, k0, k1, gen, &id);
	for (int t = 0; t < SA6_TRIES; t++) {
		__u64 w = 0, vw = 0, lock;
		int hit = find_way(set, id, k0, k1, &w), victim, i;

		if (hit == -EAGAIN)
			continue;
		if (hit >= 0) {
			if (flags == BPF_NOEXIST)
				return -EEXIST;
			if (!cas(&set->id[hit], w, w | RL_SA6_LOCK))
				continue;
			store(set, hit, w | RL_SA6_LOCK, false, 0, 0, state);
			return 0;
		}
		victim = pick_victim(set, gen, ref, &vw);
		lock = id | RL_SA6_LOCK | (vw & RL_SA6_VER_MASK);
		if (victim < 0 || !cas(&set->id[victim], vw, lock))
			continue;
		for (i = 0; i < RL_SA6_WAYS; i++) {
			__u64 v;

			if (i == victim)
				continue;
			v = load(&set->id[i]);
			if ((v & RL_SA6_ID_MASK) == id &&
			    ((v & RL_SA6_LOCK) ||
			     (load(&set->key[2 * i]) == k0 && load(&set->key[2 * i + 1]) == k1)))
				break;
		}
		if (i < RL_SA6_WAYS) {
			cas(&set->id[victim], lock, vw); /* the way as it was: nothing written */
			continue;
		}
		store(set, victim, lock, true, k0, k1, state);
		return 0;
	}
	return -EBUSY;
}

int rl_sa6_delete(const struct rl_sa6_map *m, const struct rl_key *key, __u32 gen)
{
	__u64 k0, k1, id, w = 0;
	struct rl_sa6_set *set;

	key_words(key, &k0, &k1);
	set = set_of(m, k0, k1, gen, &id);
	for (int t = 0; t < SA6_TRIES; t++) {
		int i = find_way(set, id, k0, k1, &w);

		if (i == -EAGAIN)
			continue;
		if (i < 0)
			return -ENOENT;
		if (cas(&set->id[i], w, w & RL_SA6_VER_MASK))
			return 0;
	}
	return -EBUSY;
}
