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
	c->sync_lost = k->sync_lost;
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

/* Walk one table, handing every entry to @fn as a 20-byte key. */
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
		struct timespec ts;
		__u64 read_ns;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		read_ns = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
		cnt = WALK_BATCH;
		r = bpf_map_lookup_batch(fd, in, &out, v4 ? (void *)keys4 : (void *)keys, vals,
					 &cnt, NULL);
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

int rl_state_walk(const struct rl_pins *pins, rl_state_fn fn, void *ctx)
{
	int ret = walk_table(pins->state4, true, fn, ctx);

	return ret ? ret : walk_table(pins->state6, false, fn, ctx);
}

static bool key_is_v4(const struct rl_key *k)
{
	return !k->addr[0] && !k->addr[1] && k->addr[2] == htonl(0xffff);
}

int rl_state_update(const struct rl_pins *pins, const struct rl_state_key *k, __u64 val,
		    __u64 flags)
{
	struct rl_state_key4 k4 = { .addr = k->src.addr[3], .gen = k->gen };
	int ret;

	if (key_is_v4(&k->src))
		ret = bpf_map_update_elem(pins->state4, &k4, &val, flags);
	else
		ret = bpf_map_update_elem(pins->state6, k, &val, flags);
	return ret ? -errno : 0;
}

int rl_state_lookup(const struct rl_pins *pins, const struct rl_state_key *k, __u64 *val)
{
	struct rl_state_key4 k4 = { .addr = k->src.addr[3], .gen = k->gen };
	int ret;

	if (key_is_v4(&k->src))
		ret = bpf_map_lookup_elem(pins->state4, &k4, val);
	else
		ret = bpf_map_lookup_elem(pins->state6, k, val);
	return ret ? -errno : 0;
}

int rl_state_delete(const struct rl_pins *pins, const struct rl_state_key *k)
{
	struct rl_state_key4 k4 = { .addr = k->src.addr[3], .gen = k->gen };
	int ret;

	if (key_is_v4(&k->src))
		ret = bpf_map_delete_elem(pins->state4, &k4);
	else
		ret = bpf_map_delete_elem(pins->state6, k);
	return ret ? -errno : 0;
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
