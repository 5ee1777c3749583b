// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Rules in the kernel's maps: see rulemaps.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h"
#include "rl_block.h"
#include "level.h"
#include "rulemaps.h"

typedef unsigned __int128 u128;

/*
 * Can the per-source states of @o, a rule that stays under the same name,
 * go on as @k's? Not if the rate state word is read with other parameters
 * (another algorithm, rate or burst) or the sources are keyed by other
 * prefixes: the rule then takes a new generation and its sources start
 * afresh. Its counters stay (rl_rules_fill() keeps them by name).
 */
static bool states_carry(const struct rl_krule *o, const struct rl_krule *k)
{
	if (o->action != k->action)
		return false;
	if (k->action != RL_RULE_LIMIT)
		return true;
	/* Its levels' states (rl_agg, keyed by slot and generation) too. */
	return !memcmp(&o->cfg.params, &k->cfg.params, sizeof(k->cfg.params)) &&
	       o->cfg.mask4 == k->cfg.mask4 &&
	       !memcmp(o->cfg.mask6, k->cfg.mask6, sizeof(k->cfg.mask6)) &&
	       rl_levels_same(&o->cfg, &k->cfg);
}

int rl_rules_compile(const struct rl_ruleset *set, const struct rl_rules_cfg *old,
		     struct rl_rules_cfg *out, char *err, size_t errlen)
{
	__u64 used = 0;
	size_t n = set->n ? set->n - 1 : 0;
	int was[RL_RULE_SLOTS]; /* the index in @old of a rule that stays, or -1 */
	int ret;

	if (n > RL_RULE_SLOTS) {
		snprintf(err, errlen, "too many rules: %zu, at most %d with default", n + 1,
			 RL_MAX_RULES);
		return -ENOSPC;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out->slot_gen, old->slot_gen, sizeof(out->slot_gen));
	out->n = n;
	out->pair = !old->pair;
	/* Rules that stay keep their slot: mark those first. */
	for (size_t i = 0; i < n; i++) {
		struct rl_krule *k = &out->r[i];

		k->slot = 0xff;
		was[i] = -1;
		for (__u32 j = 0; j < old->n; j++) {
			if (!strcmp(old->r[j].name, set->rules[i].name)) {
				k->slot = old->r[j].slot;
				k->gen = old->r[j].gen;
				used |= 1ULL << k->slot;
				was[i] = j;
				break;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct rl_rule *r = &set->rules[i];
		struct rl_krule *k = &out->r[i];

		if (k->slot == 0xff) {
			__u32 s = 0;

			while (used & (1ULL << s))
				s++;
			used |= 1ULL << s;
			k->slot = s;
			/* A new rule in an old slot: new keys, whatever the slot held. */
			k->gen = ++out->slot_gen[s];
		}
		snprintf(k->name, sizeof(k->name), "%s", r->name);
		k->action = r->action;
		k->l4 = r->l4;
		/* An empty source list has its bit in no prefix: it matches nothing. */
		k->has_src = r->src_given;
		if (k->has_src) {
			out->has_src = 1;
			out->src_mask |= 1ULL << k->slot;
			out->has_src4 |= r->n4 > 0;
			out->has_src6 |= r->n6 > 0;
		} else {
			out->any_mask |= 1ULL << k->slot;
		}
		if (r->l4.fields & (RL_MATCH_DPORT | RL_MATCH_FLAGS))
			out->need_l4 = 1;
		if (r->l4.fields & RL_MATCH_DPORT) {
			out->need_ports = 1;
			out->port_mask |= 1ULL << k->slot;
		}
		for (unsigned int p = 0; p < 256; p++)
			if (!(r->l4.fields & RL_MATCH_PROTO) || r->l4.proto == p)
				out->proto_mask[p] |= 1ULL << k->slot;
		k->given = (r->pol.algo_set ? RL_GIVEN_ALGO : 0) |
			   (r->pol.burst_set ? RL_GIVEN_BURST : 0) |
			   (r->pol.window_set ? RL_GIVEN_WINDOW : 0) |
			   (r->pol.initial_set ? RL_GIVEN_INITIAL : 0) |
			   (r->pol.prefix4_set ? RL_GIVEN_PREFIX4 : 0) |
			   (r->pol.prefix6_set ? RL_GIVEN_PREFIX6 : 0) |
			   (r->o.action_set ? RL_GIVEN_ACTION : 0) |
			   (r->o.fail_set ? RL_GIVEN_FAIL : 0);
		if (r->action == RL_RULE_LIMIT) {
			ret = rl_config_build(&k->cfg, &r->pol, &r->o, NULL, err, errlen);
			if (ret)
				return ret;
			k->block_ns = r->block_ns;
		} else {
			k->cfg.action = r->o.action;
		}
		if (was[i] >= 0 && !states_carry(&old->r[was[i]], k))
			k->gen = ++out->slot_gen[k->slot];
	}
	return 0;
}

/* Delete every entry of map @fd (keys of @key_size bytes). */
static int map_clear(int fd, size_t key_size)
{
	char key[32], next[32];
	int ret;

	if (key_size > sizeof(key))
		return -EINVAL;
	/* Deleting the first key each time: no walk to lose its place. */
	while (!(ret = bpf_map_get_next_key(fd, NULL, next))) {
		memcpy(key, next, key_size);
		if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
			return -errno;
	}
	return errno == ENOENT ? 0 : -errno;
}

struct pfx {
	u128 addr; /* host order; IPv4 in the low 32 bits */
	__u32 len;
	__u64 own, match;
};

static int pfx_cmp(const void *a, const void *b)
{
	const struct pfx *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static u128 u128_of(const __u32 a[4])
{
	u128 v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 32 | ntohl(a[i]);
	return v;
}

/* Does @q (shorter or equal) cover @p? @bits: 32 or 128. */
static int covers(const struct pfx *q, const struct pfx *p, unsigned int bits)
{
	u128 m;

	if (q->len > p->len)
		return 0;
	if (!q->len)
		return 1;
	m = ~(u128)0 << (bits - q->len);
	if (bits == 32)
		m &= 0xffffffffU;
	return (p->addr & m) == q->addr;
}

/*
 * Sort, merge equal prefixes, and close each prefix's match mask over the
 * prefixes covering it: sorted by (address, length), the prefixes covering
 * one are on a stack of its predecessors. Returns the new count.
 */
static size_t close_prefixes(struct pfx *p, size_t n, unsigned int bits, size_t *stack)
{
	size_t m = 0, top = 0;

	qsort(p, n, sizeof(*p), pfx_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && p[m - 1].addr == p[i].addr && p[m - 1].len == p[i].len)
			p[m - 1].own |= p[i].own;
		else
			p[m++] = p[i];
	}
	for (size_t i = 0; i < m; i++) {
		while (top && !covers(&p[stack[top - 1]], &p[i], bits))
			top--;
		p[i].match = p[i].own | (top ? p[stack[top - 1]].match : 0);
		stack[top++] = i;
	}
	return m;
}

/*
 * Set in @bits (RL_PFX_WORDS words) the networks of rl_pfx that prefix @p
 * (of @nbits: 32 or 128) covers or lies in.
 */
static void pfx_mark(__u64 *bits, const struct pfx *p, unsigned int nbits)
{
	__u32 hi = (__u32)(p->addr >> (nbits - 32)), first, last;

	if (p->len >= RL_PFX_BITS) {
		first = last = hi >> (32 - RL_PFX_BITS);
	} else {
		first = (p->len ? hi & (~0U << (32 - p->len)) : 0) >> (32 - RL_PFX_BITS);
		last = first + (1U << (RL_PFX_BITS - p->len)) - 1;
	}
	for (__u64 n = first; n <= last; n++)
		bits[n >> 6] |= 1ULL << (n & 63);
}

/* The half of rl_pfx of @cfg->pair for family @v6, from @bits, in one batch. */
static int fill_pfx(int fd, const struct rl_rules_cfg *cfg, int v6, const __u64 *bits, char *err,
		    size_t errlen)
{
	__u32 n = RL_PFX_WORDS, *keys = malloc(n * sizeof(*keys));
	int ret = 0;

	if (!keys) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (__u32 i = 0; i < n; i++)
		keys[i] = rl_pfx_word(cfg->pair, (__u32)v6, 0) + i;
	if (bpf_map_update_batch(fd, keys, bits, &n, NULL)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't write the networks of the source prefixes: %s",
			 strerror(errno));
	}
	free(keys);
	return ret;
}

static int fill_family(int fd, const struct rl_ruleset *set, const struct rl_rules_cfg *cfg, int v6,
		       __u64 *bits, char *err, size_t errlen)
{
	size_t n = 0, total = 0, *stack = NULL;
	struct pfx *p = NULL;
	int ret = 0;

	for (size_t i = 0; i < cfg->n; i++)
		total += v6 ? set->rules[i].n6 : set->rules[i].n4;
	if (!total)
		return 0;
	p = malloc(total * sizeof(*p));
	stack = malloc(total * sizeof(*stack));
	if (!p || !stack) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cfg->n; i++) {
		const struct rl_rule *r = &set->rules[i];
		__u64 bit = 1ULL << cfg->r[i].slot;

		if (v6) {
			for (size_t j = 0; j < r->n6; j++)
				p[n++] = (struct pfx){ u128_of(r->src6[j].addr), r->src6[j].len,
						       bit, 0 };
		} else {
			for (size_t j = 0; j < r->n4; j++)
				p[n++] = (struct pfx){ ntohl(r->src4[j].addr), r->src4[j].len, bit,
						       0 };
		}
	}
	n = close_prefixes(p, n, v6 ? 128 : 32, stack);
	for (size_t i = 0; i < n; i++)
		pfx_mark(bits, &p[i], v6 ? 128 : 32);
	for (size_t i = 0; i < n; i++) {
		struct rl_lpm_val val = { .match = p[i].match, .own = p[i].own };
		struct rl_lpm6 k6 = { .prefixlen = p[i].len };
		struct rl_lpm4 k4 = { .prefixlen = p[i].len, .addr = htonl((__u32)p[i].addr) };

		for (int w = 0; w < 4; w++)
			k6.addr[w] = htonl((__u32)(p[i].addr >> (32 * (3 - w))));
		if (bpf_map_update_elem(fd, v6 ? (void *)&k6 : (void *)&k4, &val, BPF_ANY)) {
			ret = -errno;
			snprintf(err, errlen, "couldn't write the %s source prefixes: %s",
				 v6 ? "IPv6" : "IPv4", strerror(errno));
			goto out;
		}
	}
out:
	free(p);
	free(stack);
	return ret;
}

/* The half of rl_ports of @cfg->pair (see RL_PORT_TABLE), in one batch. */
static int fill_ports(int fd, const struct rl_rules_cfg *cfg, char *err, size_t errlen)
{
	__u32 n = 2 * 65536, *keys = malloc(n * sizeof(*keys));
	__u64 *vals = calloc(n, sizeof(*vals));
	int ret = 0;

	if (!keys || !vals) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (__u32 i = 0; i < n; i++)
		keys[i] = (cfg->pair ? n : 0) + i;
	for (__u32 i = 0; i < cfg->n; i++) {
		const struct rl_rule_l4 *l4 = &cfg->r[i].l4;
		__u64 bit = 1ULL << cfg->r[i].slot;

		for (__u32 p = 0; p < 65536; p++) {
			if ((l4->fields & RL_MATCH_DPORT) && (p < l4->dport_lo || p > l4->dport_hi))
				continue;
			vals[p] |= bit;
			vals[65536 + p] |= bit;
		}
	}
	if (bpf_map_update_batch(fd, keys, vals, &n, NULL)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't write the port table: %s", strerror(errno));
	}
out:
	free(keys);
	free(vals);
	return ret;
}

void rl_dport_bits_of(const struct rl_rules_cfg *cfg, __u64 bits[2][RL_DPORT_WORDS])
{
	memset(bits, 0, 2 * RL_DPORT_WORDS * sizeof(bits[0][0]));
	for (__u32 i = 0; i < cfg->n && i < RL_RULE_SLOTS; i++) {
		const struct rl_rule_l4 *l4 = &cfg->r[i].l4;
		/* A --dport rule is of tcp or udp (rules.c); both halves for any other, to be safe. */
		bool tcp = !(l4->fields & RL_MATCH_PROTO) || l4->proto != RL_PROTO_UDP;
		bool udp = !(l4->fields & RL_MATCH_PROTO) || l4->proto != RL_PROTO_TCP;

		if (!(l4->fields & RL_MATCH_DPORT))
			continue;
		for (__u32 p = l4->dport_lo; p <= l4->dport_hi; p++) {
			__u16 raw = htons((__u16)p); /* indexed as the packet holds the port */

			if (tcp)
				bits[0][raw >> 6] |= 1ULL << (raw & 63);
			if (udp)
				bits[1][raw >> 6] |= 1ULL << (raw & 63);
		}
	}
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int rl_rules_fill(const struct rl_pins *pins, const struct rl_ruleset *set,
		  const struct rl_rules_cfg *cfg, const struct rl_rules_cfg *old, __u64 *elapsed_ns,
		  char *err, size_t errlen)
{
	int fd4 = cfg->pair ? pins->src4b : pins->src4a,
	    fd6 = cfg->pair ? pins->src6b : pins->src6a;
	int ncpu = libbpf_num_possible_cpus(), ret;
	struct rl_rule_counters *zero;
	__u64 t0 = now_ns(), *bits = NULL;

	/* Empty already, unless a change was interrupted. */
	ret = map_clear(fd4, sizeof(struct rl_lpm4));
	if (!ret)
		ret = map_clear(fd6, sizeof(struct rl_lpm6));
	if (ret) {
		snprintf(err, errlen, "couldn't empty the source prefix maps: %s", strerror(-ret));
		return ret;
	}
	bits = malloc(RL_PFX_WORDS * sizeof(*bits));
	if (!bits) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int v6 = 0; v6 < 2 && !ret; v6++) {
		memset(bits, 0, RL_PFX_WORDS * sizeof(*bits));
		ret = fill_family(v6 ? fd6 : fd4, set, cfg, v6, bits, err, errlen);
		/*
		 * The networks of the family's prefixes, the whole half: no bit
		 * of an earlier set stays. Without prefixes rl_pfx has one
		 * entry, and the program does not read it.
		 */
		if (!ret && (cfg->has_src4 || cfg->has_src6))
			ret = fill_pfx(pins->pfx, cfg, v6, bits, err, errlen);
	}
	free(bits);
	if (!ret && cfg->need_ports)
		ret = fill_ports(pins->ports, cfg, err, errlen);
	if (ret)
		return ret;
	if (elapsed_ns)
		*elapsed_ns = now_ns() - t0;
	if (ncpu < 0) {
		snprintf(err, errlen, "couldn't count the CPUs: %s", strerror(-ncpu));
		return ncpu;
	}
	zero = calloc(ncpu, sizeof(*zero));
	if (!zero) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (__u32 i = 0; i < cfg->n; i++) {
		__u32 slot = cfg->r[i].slot, kept = 0;

		/* By name: a rule that stays keeps its counters, even with new states. */
		for (__u32 j = 0; j < old->n; j++)
			kept |= old->r[j].slot == slot && !strcmp(old->r[j].name, cfg->r[i].name);
		if (!kept && bpf_map_update_elem(pins->rcnt, &slot, zero, BPF_ANY)) {
			ret = -errno;
			snprintf(err, errlen, "couldn't reset the counters of rule %s: %s",
				 cfg->r[i].name, strerror(errno));
			break;
		}
	}
	free(zero);
	return ret;
}

static int live_slot(const struct rl_rules_cfg *cfg, __u32 slot, __u32 gen)
{
	for (__u32 i = 0; i < cfg->n; i++)
		if (cfg->r[i].slot == slot && cfg->r[i].gen == gen)
			return 1;
	return 0;
}

/* The states of the levels (rl_agg) of rules that are gone, as their sources' states. */
static int levels_gone(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, char *err,
		       size_t errlen)
{
	struct rl_agg_key k, next, *dead = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;

	for (void *prev = NULL; !bpf_map_get_next_key(pins->agg, prev, &next); prev = &k) {
		k = next;
		if (k.slot == RL_AGG_DEFAULT || live_slot(cfg, k.slot, (__u16)k.gen))
			continue;
		if (n == cap) {
			struct rl_agg_key *d =
				realloc(dead, (cap = cap ? 2 * cap : 256) * sizeof(*d));

			if (!d) {
				snprintf(err, errlen, "out of memory");
				ret = -ENOMEM;
				goto out;
			}
			dead = d;
		}
		dead[n++] = k;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(pins->agg, &dead[i]); /* ENOENT: the LRU was first */
out:
	free(dead);
	return ret;
}

int rl_rules_commit(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, char *err,
		    size_t errlen)
{
	int fd4 = cfg->pair ? pins->src4a : pins->src4b,
	    fd6 = cfg->pair ? pins->src6a : pins->src6b;
	struct rl_rstate_key k, next, *dead = NULL;
	size_t n = 0, cap = 0;
	__u32 zero = 0;
	int ret = 0;

	if (bpf_map_update_elem(pins->rcfg, &zero, cfg, BPF_ANY)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't record the rules: %s", strerror(errno));
		return ret;
	}
	ret = map_clear(fd4, sizeof(struct rl_lpm4));
	if (!ret)
		ret = map_clear(fd6, sizeof(struct rl_lpm6));
	if (ret) {
		snprintf(err, errlen, "couldn't empty the previous source prefix maps: %s",
			 strerror(-ret));
		return ret;
	}
	/* The states of rules that are gone: collected, then deleted (a walk must not delete). */
	for (void *prev = NULL; !bpf_map_get_next_key(pins->rstate, prev, &next); prev = &k) {
		k = next;
		if (live_slot(cfg, k.slot, k.gen))
			continue;
		if (n == cap) {
			struct rl_rstate_key *d =
				realloc(dead, (cap = cap ? 2 * cap : 256) * sizeof(*d));

			if (!d) {
				snprintf(err, errlen, "out of memory");
				ret = -ENOMEM;
				goto out;
			}
			dead = d;
		}
		dead[n++] = k;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(pins->rstate, &dead[i]); /* ENOENT: the LRU was first */
	ret = levels_gone(pins, cfg, err, errlen);
out:
	free(dead);
	return ret;
}

int rl_rules_read(const struct rl_pins *pins, struct rl_rules_cfg *cfg)
{
	__u32 zero = 0;

	/* The program's own, past a copy a killed command left stale (rl_live_compiled()). */
	if (!rl_live_compiled(pins, NULL, cfg))
		return 0;
	if (bpf_map_lookup_elem(pins->rcfg, &zero, cfg))
		return -errno;
	return 0;
}

/* Append the prefixes of one trie to the rules whose own bit they carry. */
static int read_family(int fd, int v6, const struct rl_rules_cfg *cfg, struct rl_ruleset *set)
{
	struct rl_lpm6 k6, n6;
	struct rl_lpm4 k4, n4;
	struct rl_lpm_val val;
	void *prev = NULL;

	for (;;) {
		if (bpf_map_get_next_key(fd, prev, v6 ? (void *)&n6 : (void *)&n4))
			return errno == ENOENT ? 0 : -errno;
		if (v6)
			k6 = n6;
		else
			k4 = n4;
		prev = v6 ? (void *)&k6 : (void *)&k4;
		if (bpf_map_lookup_elem(fd, prev, &val))
			continue; /* deleted since: we hold the lock, so it cannot be */
		for (__u32 i = 0; i < cfg->n; i++) {
			struct rl_rule *r = &set->rules[i];
			size_t *cnt = v6 ? &r->n6 : &r->n4, *cap = v6 ? &r->cap6 : &r->cap4;
			void **arr = v6 ? (void **)&r->src6 : (void **)&r->src4;
			size_t sz = v6 ? sizeof(*r->src6) : sizeof(*r->src4);

			if (!(val.own & (1ULL << cfg->r[i].slot)))
				continue;
			if (*cnt == *cap) {
				void *a = realloc(*arr, (*cap ? 2 * *cap : 16) * sz);

				if (!a)
					return -ENOMEM;
				*arr = a;
				*cap = *cap ? 2 * *cap : 16;
			}
			if (v6) {
				memcpy(r->src6[r->n6].addr, k6.addr, sizeof(k6.addr));
				r->src6[r->n6++].len = k6.prefixlen;
			} else {
				r->src4[r->n4++] = (struct rl_prefix4){ k4.addr, k4.prefixlen };
			}
		}
	}
}

int rl_rules_load(const struct rl_pins *pins, const struct rl_rules_cfg *cfg,
		  const struct rl_config *def, struct rl_ruleset *set, char *err, size_t errlen)
{
	struct rl_policy pol;
	struct rl_opts o;
	int ret;

	rl_config_policy(def, &pol, &o);
	ret = rl_ruleset_init(set, &pol, &o, err, errlen);
	if (ret)
		return ret;
	/* rules[] must hold them all at once: read_family() fills them in place. */
	for (__u32 i = 0; i < cfg->n; i++) {
		const struct rl_krule *k = &cfg->r[i];
		struct rl_rule r;

		rl_rule_init(&r);
		snprintf(r.name, sizeof(r.name), "%s", k->name);
		r.action = k->action;
		r.l4 = k->l4;
		/* Its prefixes come from the tries below; none there is an empty list. */
		r.src_given = k->has_src;
		if (k->action == RL_RULE_LIMIT) {
			rl_config_policy(&k->cfg, &r.pol, &r.o);
			r.block_ns = k->block_ns;
			r.pol.algo_set = k->given & RL_GIVEN_ALGO;
			r.pol.burst_set = k->given & RL_GIVEN_BURST;
			r.pol.window_set = k->given & RL_GIVEN_WINDOW;
			r.pol.initial_set = k->given & RL_GIVEN_INITIAL;
			r.pol.prefix4_set = k->given & RL_GIVEN_PREFIX4;
			r.pol.prefix6_set = k->given & RL_GIVEN_PREFIX6;
		}
		r.o.action = k->cfg.action;
		r.o.action_set = k->given & RL_GIVEN_ACTION;
		/* rl_config_policy() restored the value; whether it was given decides printing. */
		r.o.fail_set = k->given & RL_GIVEN_FAIL;
		ret = rl_rule_prepare(&r, err, errlen);
		if (!ret)
			ret = rl_ruleset_add(set, &r, NULL, err, errlen);
		if (ret) {
			rl_rule_free(&r);
			goto fail;
		}
	}
	ret = read_family(cfg->pair ? pins->src4b : pins->src4a, 0, cfg, set);
	if (!ret)
		ret = read_family(cfg->pair ? pins->src6b : pins->src6a, 1, cfg, set);
	if (ret) {
		snprintf(err, errlen, "couldn't read the source prefixes: %s", strerror(-ret));
		goto fail;
	}
	for (__u32 i = 0; i < cfg->n; i++) {
		ret = rl_rule_prepare(&set->rules[i], err, errlen);
		if (ret)
			goto fail;
		set->nprefixes += set->rules[i].n4 + set->rules[i].n6;
	}
	return 0;
fail:
	rl_ruleset_free(set);
	return ret;
}

int rl_rules_counters(const struct rl_pins *pins, __u32 slot, struct rl_rule_counters *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rl_rule_counters *v;

	memset(sum, 0, sizeof(*sum));
	if (ncpu < 0)
		return ncpu;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(pins->rcnt, &slot, v)) {
		int ret = -errno;

		free(v);
		return ret;
	}
	for (int c = 0; c < ncpu; c++) {
		__u64 *d = (__u64 *)sum, *s = (__u64 *)&v[c];

		for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
			d[i] += s[i];
	}
	free(v);
	return 0;
}

int rl_rules_sources(const struct rl_pins *pins, __u32 slot, __u32 gen, __u64 *n)
{
	struct rl_rstate_key k, next;
	void *prev = NULL;

	*n = 0;
	while (!bpf_map_get_next_key(pins->rstate, prev, &next)) {
		k = next;
		prev = &k;
		*n += k.slot == slot && k.gen == gen;
	}
	return errno == ENOENT ? 0 : -errno;
}

int rl_rules_tally(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, __u64 now,
		   __u64 *sources, __u64 *blocked)
{
	struct rl_rstate_key k, next;
	struct rl_block_state st;
	void *prev = NULL;

	memset(sources, 0, RL_RULE_SLOTS * sizeof(*sources));
	memset(blocked, 0, RL_RULE_SLOTS * sizeof(*blocked));
	while (!bpf_map_get_next_key(pins->rstate, prev, &next)) {
		k = next;
		prev = &k;
		for (__u32 i = 0; i < cfg->n && i < RL_RULE_SLOTS; i++) {
			if (cfg->r[i].slot != k.slot || cfg->r[i].gen != k.gen)
				continue;
			sources[i]++;
			/* Gone since the key was read (the LRU): not blocked any more either. */
			if (!bpf_map_lookup_elem(pins->rstate, &k, &st) && st.until > now)
				blocked[i]++;
			break;
		}
	}
	return errno == ENOENT ? 0 : -errno;
}
