// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Configuration slots, counters and source counts of a limiter's maps: see maps.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "maps.h"
#include "sa.h"

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
	return 0;
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
	c->rx_packets = k->passed + k->dropped;
	c->rx_bytes = k->passed_bytes + k->dropped_bytes;
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
	/* Every frame is IPv4, IPv6, ND, not IP or malformed: IPv4 is what is left. */
	c->ipv4 = c->rx_packets - k->ipv6 - k->nd - k->not_ip - malformed;
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

/* Walk the IPv6 table, handing every entry to @fn. */
static int walk_table6(int fd, rl_state_fn fn, void *ctx)
{
	struct rl_state_key keys[WALK_BATCH];
	__u64 vals[WALK_BATCH];
	void *in = NULL, *out;
	__u32 cnt;
	int r, ret;

	for (;;) {
		struct timespec ts;
		__u64 read_ns;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		read_ns = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
		cnt = WALK_BATCH;
		r = bpf_map_lookup_batch(fd, in, &out, keys, vals, &cnt, NULL);
		if (r && errno != ENOENT)
			return -errno;
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

/*
 * The kernel's clock, as the XDP program reads it (bpf_ktime_get_ns() is
 * CLOCK_MONOTONIC): the reference IPv4 states are read back near.
 */
static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* The generation and the parameters a slot of generation @g4 (mod 4) was written under. */
static const struct rl_params *slot_params(const struct rl_config *cfg, __u32 g4, __u32 *gen)
{
	*gen = cfg->gen - ((cfg->gen - g4) & 3);
	return *gen == cfg->gen - 1 ? &cfg->prev : &cfg->params;
}

/*
 * The table mapped by a walk in progress, for the updates and deletes its
 * callback makes (migration: two per source). Mapping the table maps all of
 * its pages at once: 32 MiB by default, far too slow to repeat per source.
 */
static struct {
	int fd;
	const struct rl_sa_map *m;
} walking = { .fd = -1 };

static int map_v4(const struct rl_pins *pins, struct rl_sa_map *m)
{
	if (walking.m && walking.fd == pins->state4) {
		*m = *walking.m;
		return 0;
	}
	return rl_sa_map(pins->state4, m);
}

static void unmap_v4(struct rl_sa_map *m)
{
	if (walking.m && m->sets == walking.m->sets)
		return; /* the walk's */
	rl_sa_unmap(m);
}

/* What every IPv4 operation needs: the live configuration and the table mapped. */
static int open_v4(const struct rl_pins *pins, struct rl_config *cfg, struct rl_sa_map *m)
{
	__u32 active;
	int ret = rl_config_read(pins, cfg, &active);

	return ret ? ret : map_v4(pins, m);
}

/* Walk the IPv4 table, keys as IPv4-mapped IPv6, states read back near the clock. */
static int walk_table4(const struct rl_pins *pins, rl_state_fn fn, void *ctx)
{
	struct rl_config cfg;
	struct rl_sa_map m;
	struct rl_state_key k;
	__u64 now = mono_ns();
	int ret = open_v4(pins, &cfg, &m);

	if (ret)
		return ret;
	walking.fd = pins->state4;
	walking.m = &m;
	for (__u32 idx = 0; idx < (1U << m.bits) && !ret; idx++) {
		for (int i = 0; i < RL_SA_WAYS && !ret; i++) {
			__u64 w = __atomic_load_n(&m.sets[idx].w[i], __ATOMIC_SEQ_CST);
			const struct rl_params *p;

			if (!(w & RL_SA_USED) || (w & RL_SA_PEND))
				continue;
			memset(&k, 0, sizeof(k));
			k.src.addr[2] = htonl(0xffff);
			k.src.addr[3] = rl_sa_addr(&m, idx, w);
			p = slot_params(&cfg, (__u32)(w >> RL_SA_GEN_SHIFT) & 3, &k.gen);
			ret = fn(&k, rl_sa_get(w, rl_sa_ref(p, now), m.bits), ctx);
		}
	}
	walking.m = NULL;
	walking.fd = -1;
	rl_sa_unmap(&m);
	return ret;
}

int rl_state_walk(const struct rl_pins *pins, rl_state_fn fn, void *ctx)
{
	/*
	 * IPv6 first: its batches are read just before @fn sees them, while
	 * the IPv4 scan reads the whole table (32 MiB by default), which would
	 * age every IPv6 state read after it by as long as the scan takes.
	 */
	int ret = walk_table6(pins->state6, fn, ctx);

	return ret ? ret : walk_table4(pins, fn, ctx);
}

static bool key_is_v4(const struct rl_key *k)
{
	return !k->addr[0] && !k->addr[1] && k->addr[2] == htonl(0xffff);
}

int rl_state_update(const struct rl_pins *pins, const struct rl_state_key *k, __u64 val,
		    __u64 flags)
{
	struct rl_config cfg;
	struct rl_sa_map m;
	int ret;

	if (!key_is_v4(&k->src))
		return bpf_map_update_elem(pins->state6, k, &val, flags) ? -errno : 0;
	ret = open_v4(pins, &cfg, &m);
	if (ret)
		return ret;
	ret = rl_sa_insert(&m, k->src.addr[3], k->gen, val, flags,
			   rl_sa_ref(&cfg.params, mono_ns()));
	unmap_v4(&m);
	return ret;
}

int rl_state_lookup(const struct rl_pins *pins, const struct rl_state_key *k, __u64 *val)
{
	__u32 h = rl_sa_hash(ntohl(k->src.addr[3]), k->gen), idx, gen;
	const struct rl_params *p;
	struct rl_config cfg;
	struct rl_sa_set set;
	__u64 id, idm;
	int bits, ret;

	if (!key_is_v4(&k->src))
		return bpf_map_lookup_elem(pins->state6, k, val) ? -errno : 0;
	/* One set read by the syscall: mapping the whole table is for walks. */
	bits = rl_sa_bits_of(pins->state4);
	if (bits < 0)
		return bits;
	ret = rl_config_read(pins, &cfg, &idx);
	if (ret)
		return ret;
	idx = h & ((1U << bits) - 1);
	if (bpf_map_lookup_elem(pins->state4, &idx, &set))
		return -errno;
	id = rl_sa_id(h, k->gen, (__u32)bits);
	idm = rl_sa_id_mask((__u32)bits);
	for (int i = 0; i < RL_SA_WAYS; i++) {
		if ((set.w[i] & idm) != id || (set.w[i] & RL_SA_PEND))
			continue;
		p = slot_params(&cfg, k->gen & 3, &gen);
		*val = rl_sa_get(set.w[i], rl_sa_ref(p, mono_ns()), (__u32)bits);
		return 0;
	}
	return -ENOENT;
}

int rl_state_delete(const struct rl_pins *pins, const struct rl_state_key *k)
{
	struct rl_sa_map m;
	int ret;

	if (!key_is_v4(&k->src))
		return bpf_map_delete_elem(pins->state6, k) ? -errno : 0;
	ret = map_v4(pins, &m);
	if (ret)
		return ret;
	ret = rl_sa_delete(&m, k->src.addr[3], k->gen);
	unmap_v4(&m);
	return ret;
}

int rl_state_sweep(const struct rl_pins *pins, __u64 *swept)
{
	struct rl_config cfg;
	struct rl_sa_map m;
	int ret = open_v4(pins, &cfg, &m);

	*swept = 0;
	if (ret)
		return ret;
	ret = rl_sa_sweep(&m, &cfg, mono_ns(), swept);
	unmap_v4(&m);
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
	int ret = rl_state_walk(pins, count_one, &c);

	*n = c.n;
	return ret;
}
