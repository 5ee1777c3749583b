// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel side of fleet sync: see sync_kern.h and include/rl_sync.h.
 *
 * Counting on and off: the live configuration with sync_count changed,
 * loaded on the live maps and swapped in with XDP_FLAGS_REPLACE, as set
 * does, but under the same generation: every state stays where it is.
 * Draining, while packets go on counting: the set tables' counters through
 * the mapping of rl_sync_slots (those rl_sync_dirty marks: take a word of
 * marks with an atomic exchange, then zero each counter's units by
 * compare-and-swap, its identity kept), the keyed tables by the syscall
 * program rl_drain_prog (an exchange with 0 of each counter): every unit
 * is taken exactly once, nothing is swapped and nothing waits. Charging:
 * the object's SEC("syscall") program, built for the live configuration
 * and rules, run with BPF_PROG_TEST_RUN on batches written into its array
 * map.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lock.h"
#include "pins.h"
#include "policy.h"
#include "prog.h"
#include "rl_skel.h"
#include "rl_sync.h"
#include "rulemaps.h"
#include "rules.h"
#include "sa.h"
#include "sync_kern.h"
#include "xdp_attach.h"

_Static_assert(sizeof(struct rl_sync_status) <= RL_SYNC_STATUS_SIZE,
	       "struct rl_sync_status fits the value of rl_sync_status");
_Static_assert(sizeof(struct rl_sync_src) == sizeof(struct rl_sync_chg) &&
		       __builtin_offsetof(struct rl_sync_src, units) ==
			       __builtin_offsetof(struct rl_sync_chg, units),
	       "a source to charge is written to the charge batch as it is");

/* Counters the drain fetches ahead of the one it reads (drain_slots()). */
#define DRAIN_AHEAD 16

struct rl_sync_kern {
	struct rl_iface ifc;
	bool attached; /* opened by interface (counting switched by us), not from pins */
	struct rl_pins pins;
	int clock_fd; /* tests: the rl_clock map, or -1 */
	/* The charge and drain programs, built for charger_cfg and *charger_rules. */
	struct xdp_ratelimit *charger;
	struct rl_config charger_cfg;
	struct rl_rules_cfg *charger_rules;
	int charge_fd, batch_fd, drain_fd;
	/* The live configuration and rules as of the last refresh(). */
	bool have_live;
	struct rl_config live;
	struct rl_rules_cfg *rules;
	/*
	 * rl_sync_slots and rl_sync_dirty mapped (slots NULL: not), the
	 * former's map id, and the set tables' size they were made for.
	 */
	__u64 *slots, *dirty;
	size_t slots_len, dirty_len;
	__u32 slots_id, bits;
	/* The rules' lines of the policy text, for the rules *policy_of (NULL: none made). */
	char *policy_rules;
	struct rl_rules_cfg *policy_of;
};

static void init(struct rl_sync_kern *k)
{
	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < RL_N_MAPS; i++)
		k->pins.fd[i] = -1;
	k->clock_fd = -1;
	k->charge_fd = k->batch_fd = k->drain_fd = -1;
}

/* The rules buffers of a new rl_sync_kern: -ENOMEM. */
static int alloc_rules(struct rl_sync_kern *k)
{
	k->rules = calloc(1, sizeof(*k->rules));
	k->charger_rules = calloc(1, sizeof(*k->charger_rules));
	k->policy_of = calloc(1, sizeof(*k->policy_of));
	return k->rules && k->charger_rules && k->policy_of ? 0 : -ENOMEM;
}

static void unmap_counters(struct rl_sync_kern *k)
{
	if (k->slots)
		munmap(k->slots, k->slots_len);
	if (k->dirty)
		munmap(k->dirty, k->dirty_len);
	k->slots = k->dirty = NULL;
	k->slots_id = 0;
}

static void free_kern(struct rl_sync_kern *k)
{
	unmap_counters(k);
	free(k->rules);
	free(k->charger_rules);
	free(k->policy_of);
	free(k->policy_rules);
	free(k);
}

int rl_sync_counting(struct rl_sync_kern *k, bool on, char *err, size_t errlen)
{
	struct rl_config cfg;
	int lock, ret;
	__u32 active;

	if (!k->attached) {
		snprintf(err, errlen, "counting is switched by the program loaded on these maps");
		return -EOPNOTSUPP;
	}
	/* As set: no other command changes the limiter meanwhile. */
	lock = rl_lock(err, errlen);
	if (lock < 0)
		return lock;
	ret = rl_config_read(&k->pins, &cfg, &active);
	if (ret) {
		snprintf(err, errlen, "couldn't read the configuration of '%s': %s", k->ifc.name,
			 strerror(-ret));
		goto out;
	}
	if (!!cfg.sync_count == on)
		goto out;
	cfg.sync_count = on;
	/* With its counter tables at full size (on) or one entry again (off). */
	ret = rl_swap_live(&k->ifc, &k->pins, &cfg, err, errlen);
	if (ret < 0)
		goto out;
	if (ret > 0)
		fprintf(stderr, "xdp-ratelimit: warning: %s\n", err);
	ret = rl_config_swap(&k->pins, &cfg, active);
	if (ret)
		snprintf(
			err, errlen,
			"sync counting is %s on '%s', but its copy for status couldn't be written: %s",
			on ? "on" : "off", k->ifc.name, strerror(-ret));
out:
	rl_unlock(lock);
	return ret;
}

int rl_sync_kern_open(const char *ifname, struct rl_sync_kern **out, char *err, size_t errlen)
{
	struct rl_sync_kern *k;
	int ret;

	*out = NULL;
	k = malloc(sizeof(*k));
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	init(k);
	ret = alloc_rules(k);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	ret = rl_iface_get(ifname, &k->ifc, err, errlen);
	if (ret)
		goto fail;
	ret = rl_pins_open(&k->ifc, &k->pins, err, errlen);
	if (ret)
		goto fail;
	k->attached = true;
	ret = rl_sync_counting(k, true, err, errlen);
	if (ret)
		goto fail_pins;
	*out = k;
	return 0;
fail_pins:
	rl_pins_close(&k->pins);
fail:
	free_kern(k);
	return ret;
}

int rl_sync_kern_from_pins(const struct rl_pins *pins, int clock_fd, struct rl_sync_kern **out,
			   char *err, size_t errlen)
{
	struct rl_sync_kern *k;

	*out = NULL;
	k = malloc(sizeof(*k));
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	init(k);
	if (alloc_rules(k)) {
		free_kern(k);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	k->pins = *pins;
	k->clock_fd = clock_fd;
	*out = k;
	return 0;
}

void rl_sync_kern_close(struct rl_sync_kern *k, bool counting_off)
{
	char err[RL_ERRLEN];

	if (!k)
		return;
	if (counting_off && k->attached && rl_sync_counting(k, false, err, sizeof(err)))
		fprintf(stderr, "xdp-ratelimit: warning: %s\n", err);
	if (k->charger)
		rl_prog_destroy(k->charger);
	/* Pins we opened are ours to close; a test's are the test's. */
	if (k->attached)
		rl_pins_close(&k->pins);
	free_kern(k);
}

static int live_config(struct rl_sync_kern *k, struct rl_config *cfg)
{
	__u32 active;

	return rl_config_read(&k->pins, cfg, &active);
}

static int map_id(int fd, __u32 *id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	return 0;
}

/* @fd's max_entries, or 0. */
static __u32 entries_of(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

/* @len bytes of the mmapable array @fd, shared: NULL and errno on failure. */
static __u64 *map_array(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * rl_sync_slots and rl_sync_dirty mapped, if counting made them whole (with
 * rl_state4's policies, or counting off, they are one-entry stand-ins: not
 * mapped), again when they were replaced. The counters must be laid out for
 * the set tables in use (a word per slot), or units would be drained under
 * other sources' names.
 */
static int map_counters(struct rl_sync_kern *k)
{
	__u32 id = 0, bits = 0, n;
	int ret;

	ret = map_id(k->pins.sync_slots, &id);
	if (ret)
		return ret;
	if (k->slots && id == k->slots_id)
		return 0;
	unmap_counters(k);
	n = entries_of(k->pins.sync_slots);
	if (n <= 1)
		return 0;
	ret = rl_sa_bits_live(&k->pins, &bits);
	if (ret)
		return ret;
	if (n != (__u32)RL_SA_WAYS << bits || entries_of(k->pins.sync_dirty) != n / 64)
		return -EPROTO;
	k->slots_len = (size_t)n * sizeof(__u64);
	k->dirty_len = (size_t)n / 64 * sizeof(__u64);
	k->slots = map_array(k->pins.sync_slots, k->slots_len);
	if (k->slots)
		k->dirty = map_array(k->pins.sync_dirty, k->dirty_len);
	if (!k->dirty) {
		ret = -errno;
		unmap_counters(k);
		return ret;
	}
	k->bits = bits;
	k->slots_id = id;
	return 0;
}

/*
 * The live configuration and rules read again. After a set or a rule
 * change the pins are opened again (a set may have replaced the IPv4 table,
 * a rule change the rules' tables), and the counters mapped again if they
 * were replaced.
 */
static int refresh(struct rl_sync_kern *k)
{
	struct rl_rules_cfg *r = malloc(sizeof(*r));
	char err[RL_ERRLEN];
	struct rl_config c;
	struct rl_pins np;
	int ret;

	if (!r)
		return -ENOMEM;
	ret = live_config(k, &c);
	if (!ret)
		ret = rl_rules_read(&k->pins, r);
	if (ret)
		goto out;
	if (k->attached && k->have_live &&
	    (c.gen != k->live.gen || c.table4 != k->live.table4 ||
	     memcmp(r, k->rules, sizeof(*r)))) {
		ret = rl_pins_open(&k->ifc, &np, err, sizeof(err));
		if (ret)
			goto out;
		rl_pins_close(&k->pins);
		k->pins = np;
	}
	k->live = c;
	memcpy(k->rules, r, sizeof(*r));
	k->have_live = true;
	ret = map_counters(k);
out:
	free(r);
	return ret;
}

/* refresh() once at least: format and parse work on the state of the last drain. */
static int known(struct rl_sync_kern *k)
{
	return k->have_live ? 0 : refresh(k);
}

/* FNV-1a, 64 bits, over @n bytes of @p from @h. */
static __u64 fnv1a(const void *p, size_t n, __u64 h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ULL;
	return h;
}

/*
 * The rules' lines of the policy text: one per rule before "default", in
 * order, "rule.NAME=" its action, for a limit rule the parameters the
 * agent bounds charges with (rl_sync_charge_max()), then a hash of the whole
 * rule as `rule add` words (its match, prefixes included, and policy; not
 * --action, which is each node's own, as for the default rule). Into
 * k->policy_rules, made again only when the rules changed.
 */
static int rules_policy(struct rl_sync_kern *k)
{
	struct rl_ruleset set = {};
	size_t off = 0, cap = 256;
	char err[RL_ERRLEN], *text, *words = NULL;
	int ret = 0;

	if (k->policy_rules && !memcmp(k->rules, k->policy_of, sizeof(*k->rules)))
		return 0;
	text = malloc(cap);
	if (!text)
		return -ENOMEM;
	text[0] = '\0';
	if (k->rules->n) {
		ret = rl_rules_load(&k->pins, k->rules, &k->live, &set, err, sizeof(err));
		if (ret)
			goto out;
	}
	for (size_t i = 0; i + 1 < set.n && i < k->rules->n; i++) {
		const struct rl_krule *kr = &k->rules->r[i];
		struct rl_rule *r = &set.rules[i];
		size_t need;
		char line[512];
		int n;

		r->o.action_set = false;
		need = rl_rule_format(r, NULL, 0) + 1;
		free(words);
		words = malloc(need);
		if (!words) {
			ret = -ENOMEM;
			goto out;
		}
		rl_rule_format(r, words, need);
		if (kr->action == RL_RULE_LIMIT)
			n = snprintf(line, sizeof(line),
				     "rule.%s=limit algo=%s bytes=%u rate=%llu/%llu burst=%llu "
				     "window_ns=%llu %016llx\n",
				     kr->name, rl_algo_name(kr->cfg.params.algo),
				     kr->cfg.params.bytes, (unsigned long long)kr->cfg.rate_num,
				     (unsigned long long)kr->cfg.rate_den,
				     (unsigned long long)kr->cfg.burst,
				     (unsigned long long)kr->cfg.window_ns,
				     (unsigned long long)fnv1a(words, need - 1,
							       14695981039346656037ULL));
		else
			n = snprintf(line, sizeof(line), "rule.%s=%s %016llx\n", kr->name,
				     kr->action == RL_RULE_ALLOW ? "allow" : "deny",
				     (unsigned long long)fnv1a(words, need - 1,
							       14695981039346656037ULL));
		if (n < 0 || (size_t)n >= sizeof(line)) {
			ret = -ENOSPC;
			goto out;
		}
		if (off + (size_t)n + 1 > cap) {
			char *t;

			while (off + (size_t)n + 1 > cap)
				cap *= 2;
			t = realloc(text, cap);
			if (!t) {
				ret = -ENOMEM;
				goto out;
			}
			text = t;
		}
		memcpy(text + off, line, (size_t)n + 1);
		off += (size_t)n;
	}
out:
	free(words);
	if (k->rules->n)
		rl_ruleset_free(&set);
	if (ret) {
		free(text);
		return ret;
	}
	free(k->policy_rules);
	k->policy_rules = text;
	memcpy(k->policy_of, k->rules, sizeof(*k->rules));
	return 0;
}

int rl_sync_kern_policy(struct rl_sync_kern *k, char *buf, size_t len)
{
	struct rl_config c;
	int ret, n;

	ret = refresh(k);
	if (!ret)
		ret = rules_policy(k);
	if (ret)
		return ret;
	c = k->live;
	n = snprintf(buf, len,
		     "algo=%s\nbytes=%u\nrate=%llu/%llu\nburst=%llu\nwindow_ns=%llu\n"
		     "initial=%s%llu\nprefix4=%u\nprefix6=%u\nclock=%s\n%s",
		     rl_algo_name(c.params.algo), c.params.bytes, (unsigned long long)c.rate_num,
		     (unsigned long long)c.rate_den, (unsigned long long)c.burst,
		     (unsigned long long)c.window_ns,
		     c.initial_set ? "" : "default:", (unsigned long long)c.initial, c.prefix4,
		     c.prefix6, c.clock == RL_CLOCK_COARSE ? "coarse" : "precise", k->policy_rules);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
}

static int push(struct rl_sync_src **v, size_t *n, size_t *cap, const struct rl_state_key *key,
		__u64 units)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		struct rl_sync_src *nv = realloc(*v, c * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].k = *key;
	(*v)[*n].units = units;
	(*n)++;
	return 0;
}

/*
 * The set tables' counters, through their mapping: each word of
 * rl_sync_dirty taken with an atomic exchange, then every counter it marks
 * zeroed by compare-and-swap (its identity kept), what it held drained under
 * that identity. A packet that makes a counter nonzero marks it after its
 * compare-and-swap (bpf/sync.h, sync_dirty()), so a counter read here before
 * that packet's units landed is marked again for the next drain: every unit
 * is drained once. The source is the set and the identity (set and tag are
 * the whole hash); the generation the one whose residue mod 4 the word
 * keeps, at most 3 behind the live one.
 */
static int drain_slots(struct rl_sync_kern *k, struct rl_sync_src **v, size_t *n, size_t *cap)
{
	struct rl_sa_map m = { .bits = k->bits, .key = k->live.sa_key };
	__u32 words = (__u32)(k->dirty_len / sizeof(__u64)), gen = k->live.gen, *ci = NULL;
	__u64 sm = rl_sa_state_mask(k->bits);
	size_t nci = 0, capci = 0;
	int ret = 0;

	/* The marks first: every counter's after its mark is taken. */
	for (__u32 w = 0; w < words; w++) {
		__u64 marks;

		if (!__atomic_load_n(&k->dirty[w], __ATOMIC_RELAXED))
			continue;
		marks = __atomic_exchange_n(&k->dirty[w], 0, __ATOMIC_SEQ_CST);
		for (; marks; marks &= marks - 1) {
			if (nci == capci) {
				__u32 *p = realloc(ci, (capci ? 2 * capci : 1024) * sizeof(*ci));

				if (!p) {
					ret = -ENOMEM;
					goto out;
				}
				ci = p;
				capci = capci ? 2 * capci : 1024;
			}
			ci[nci++] = w * 64 + (__u32)__builtin_ctzll(marks);
		}
	}
	if (nci && *cap < *n + nci) {
		struct rl_sync_src *nv = realloc(*v, (*n + nci) * sizeof(**v));

		if (!nv) {
			ret = -ENOMEM;
			goto out;
		}
		*v = nv;
		*cap = *n + nci;
	}
	/*
	 * Then the counters, each a cache line of its own somewhere in the
	 * array: fetched DRAIN_AHEAD counters ahead, so that their misses
	 * overlap (a drain of 100,000 counters is mostly those misses).
	 */
	for (size_t i = 0; i < nci; i++) {
		__u64 *p = &k->slots[ci[i]], c;
		struct rl_state_key key = {};

		if (i + DRAIN_AHEAD < nci)
			__builtin_prefetch(&k->slots[ci[i + DRAIN_AHEAD]], 1);
		c = __atomic_load_n(p, __ATOMIC_SEQ_CST);
		while ((c & sm) && !__atomic_compare_exchange_n(p, &c, c & ~sm, false,
								__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			;
		if (!(c & sm))
			continue;
		key.src.addr[2] = htonl(0xffff);
		key.src.addr[3] = rl_sa_addr(&m, rl_sync_slot_set(ci[i]), c);
		key.gen = gen - ((gen - (__u32)(c >> RL_SA_GEN_SHIFT)) & 3);
		ret = push(v, n, cap, &key, c & sm);
		if (ret)
			break;
	}
out:
	free(ci);
	return ret;
}

/* The charge and drain programs built for the live configuration and rules (loaded again after a change). */
static int charger(struct rl_sync_kern *k)
{
	struct rl_prog_opts po = { .reuse = &k->pins,
				   .charge = true,
				   .test_clock = k->clock_fd >= 0,
				   .reuse_clock = k->clock_fd,
				   .rules = k->rules };
	struct xdp_ratelimit *skel;
	char err[RL_ERRLEN];

	if (k->charger && !memcmp(&k->live, &k->charger_cfg, sizeof(k->live)) &&
	    !memcmp(k->rules, k->charger_rules, sizeof(*k->rules)))
		return 0;
	skel = rl_prog_open(&k->live, &po, err, sizeof(err));
	if (!skel)
		return -errno;
	if (k->charger)
		rl_prog_destroy(k->charger);
	k->charger = skel;
	k->charger_cfg = k->live;
	memcpy(k->charger_rules, k->rules, sizeof(*k->rules));
	k->charge_fd = rl_charge_fd(skel, &k->batch_fd, &k->drain_fd);
	return 0;
}

/* Is the rule source @key's rule (slot and generation) a live limit rule? */
static bool rule_live(const struct rl_sync_kern *k, const struct rl_state_key *key)
{
	for (__u32 i = 0; i < k->rules->n && i < RL_RULE_SLOTS; i++) {
		const struct rl_krule *r = &k->rules->r[i];

		if (r->slot == RL_SYNC_GEN_SLOT(key->gen))
			return r->action == RL_RULE_LIMIT && r->gen == (key->gen & 0xffff);
	}
	return false;
}

/*
 * A keyed counter table (enum rl_sync_table) drained by rl_drain_prog,
 * RL_SYNC_BATCH sources a run. Sources of a rule that is gone are dropped:
 * no node names them any more.
 */
static int drain_keyed(struct rl_sync_kern *k, __u32 table, struct rl_sync_src **v, size_t *n,
		       size_t *cap)
{
	static struct rl_sync_chg out[RL_SYNC_BATCH];
	static __u32 keys[RL_SYNC_BATCH];
	struct rl_sync_drain_args a;
	int fd = table == RL_SYNC_T4 ? k->pins.sync4 :
		 table == RL_SYNC_T6 ? k->pins.sync6 :
				       k->pins.syncr;
	union {
		struct rl_state_key k;
		struct rl_rstate_key r;
	} key;
	int ret;

	/* A table no source ever counted in: nothing to walk (nor a program to load). */
	if (bpf_map_get_next_key(fd, NULL, &key) && errno == ENOENT)
		return 0;
	ret = charger(k);
	if (ret)
		return ret;
	do {
		LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &a, .ctx_size_in = sizeof(a));
		__u32 count, next = 0;

		memset(&a, 0, sizeof(a));
		a.table = table;
		ret = bpf_prog_test_run_opts(k->drain_fd, &o);
		if (ret)
			return ret;
		if (o.retval)
			return (int)o.retval;
		if (!a.n)
			break;
		count = a.n;
		if (bpf_map_lookup_batch(k->batch_fd, NULL, &next, keys, out, &count, NULL) &&
		    errno != ENOENT)
			return -errno;
		if (count < a.n)
			return -EIO;
		for (__u32 i = 0; i < a.n; i++) {
			if ((out[i].k.gen & RL_SYNC_GEN_RULE) && table == RL_SYNC_TR &&
			    !rule_live(k, &out[i].k))
				continue;
			ret = push(v, n, cap, &out[i].k, out[i].units);
			if (ret)
				return ret;
		}
	} while (a.more);
	return 0;
}

/* Does a rule of the live rules limit (rl_syncr is whole then)? */
static bool rules_limit(const struct rl_sync_kern *k)
{
	for (__u32 i = 0; i < k->rules->n && i < RL_RULE_SLOTS; i++)
		if (k->rules->r[i].action == RL_RULE_LIMIT)
			return true;
	return false;
}

int rl_sync_drain(struct rl_sync_kern *k, struct rl_sync_src **out, size_t *n)
{
	struct rl_sync_src *v = NULL;
	size_t cnt = 0, cap = 0;
	int ret;

	*out = NULL;
	*n = 0;
	ret = refresh(k);
	if (!ret && k->slots)
		ret = drain_slots(k, &v, &cnt, &cap);
	if (!ret)
		ret = drain_keyed(k, RL_SYNC_T6, &v, &cnt, &cap);
	if (!ret && k->live.table4 == RL_TABLE4_LRU)
		ret = drain_keyed(k, RL_SYNC_T4, &v, &cnt, &cap);
	if (!ret && rules_limit(k))
		ret = drain_keyed(k, RL_SYNC_TR, &v, &cnt, &cap);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int rl_sync_charge(struct rl_sync_kern *k, const struct rl_sync_src *in, size_t n, size_t *charged)
{
	static __u32 idx[RL_SYNC_BATCH];
	size_t done = 0;
	int ret;

	if (charged)
		*charged = 0;
	if (!n)
		return 0;
	ret = refresh(k);
	if (!ret)
		ret = charger(k);
	if (ret)
		return ret;
	for (__u32 i = 0; i < RL_SYNC_BATCH; i++)
		idx[i] = i;
	while (done < n) {
		struct rl_sync_args args = {};
		/* A syscall program's ctx is written back to ctx_in (ctx_out is refused). */
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &args, .ctx_size_in = sizeof(args));
		__u32 m = n - done > RL_SYNC_BATCH ? RL_SYNC_BATCH : (__u32)(n - done);

		if (bpf_map_update_batch(k->batch_fd, idx, in + done, &m, NULL))
			return -errno;
		args.n = m;
		ret = bpf_prog_test_run_opts(k->charge_fd, &opts);
		if (ret)
			return ret;
		if (opts.retval)
			return (int)opts.retval;
		if (charged)
			*charged += args.charged;
		done += m;
	}
	return 0;
}

/* The live limit rule of a rule source's slot and generation, or NULL. */
static const struct rl_krule *rule_of(const struct rl_sync_kern *k, __u32 gen)
{
	for (__u32 i = 0; i < k->rules->n && i < RL_RULE_SLOTS; i++) {
		const struct rl_krule *r = &k->rules->r[i];

		if (r->slot == RL_SYNC_GEN_SLOT(gen) && r->gen == (gen & 0xffff) &&
		    r->action == RL_RULE_LIMIT)
			return r;
	}
	return NULL;
}

/* The live limit rule named @name (@len bytes), or NULL. */
static const struct rl_krule *rule_named(const struct rl_sync_kern *k, const char *name, size_t len)
{
	for (__u32 i = 0; i < k->rules->n && i < RL_RULE_SLOTS; i++) {
		const struct rl_krule *r = &k->rules->r[i];

		if (strlen(r->name) == len && !memcmp(r->name, name, len) &&
		    r->action == RL_RULE_LIMIT)
			return r;
	}
	return NULL;
}

/*
 * "a.b.c.d/len" or "x::/len", @len the prefix the live policy keys the
 * source by; a limit rule's source "RULE|a.b.c.d/len", with that rule's.
 */
int rl_sync_src_format(struct rl_sync_kern *k, const struct rl_state_key *key, char *buf,
		       size_t len)
{
	char a[INET6_ADDRSTRLEN];
	const struct rl_config *c = &k->live;
	const struct rl_krule *r = NULL;
	unsigned int plen;
	int ret, n;

	ret = known(k);
	if (ret)
		return ret;
	if (key->gen & RL_SYNC_GEN_RULE) {
		r = rule_of(k, key->gen);
		if (!r)
			return -ENOENT;
		c = &r->cfg;
	}
	if (!key->src.addr[0] && !key->src.addr[1] && key->src.addr[2] == htonl(0xffff)) {
		if (!inet_ntop(AF_INET, &key->src.addr[3], a, sizeof(a)))
			return -errno;
		plen = c->prefix4;
	} else {
		if (!inet_ntop(AF_INET6, key->src.addr, a, sizeof(a)))
			return -errno;
		/* Link-local sources are keyed whole (rl_key.h). */
		plen = (ntohl(key->src.addr[0]) & RL_LL_MASK) == RL_LL_PREFIX ? 128 : c->prefix6;
	}
	n = snprintf(buf, len, "%s%s%s/%u", r ? r->name : "", r ? "|" : "", a, plen);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

static void mask_words(__u32 *w, int nw, unsigned int plen)
{
	for (int i = 0; i < nw; i++) {
		unsigned int bits = plen > 32u * i ? plen - 32u * i : 0;

		if (bits < 32)
			w[i] &= bits ? htonl(~0U << (32 - bits)) : 0;
	}
}

int rl_sync_src_parse(struct rl_sync_kern *k, const char *s, struct rl_state_key *key)
{
	char a[INET6_ADDRSTRLEN + 1], *end;
	const char *bar = strchr(s, '|'), *slash;
	const struct rl_config *c = &k->live;
	const struct rl_krule *r = NULL;
	unsigned long plen;
	int ret;

	ret = known(k);
	if (ret)
		return ret;
	if (bar) {
		r = rule_named(k, s, (size_t)(bar - s));
		if (!r)
			return -ENOENT;
		c = &r->cfg;
		s = bar + 1;
	}
	slash = strchr(s, '/');
	if (!slash || (size_t)(slash - s) >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, slash - s);
	a[slash - s] = '\0';
	errno = 0;
	plen = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end)
		return -EINVAL;
	memset(key, 0, sizeof(*key));
	key->gen = r ? RL_SYNC_RULE_GEN(r->slot, r->gen) : c->gen;
	if (inet_pton(AF_INET, a, &key->src.addr[3]) == 1) {
		if (plen != c->prefix4)
			return -EINVAL;
		key->src.addr[2] = htonl(0xffff);
		mask_words(&key->src.addr[3], 1, c->prefix4);
		return 0;
	}
	if (inet_pton(AF_INET6, a, key->src.addr) != 1)
		return -EINVAL;
	/* IPv4-mapped sources are IPv4 ones: written as such by rl_sync_src_format(). */
	if (!key->src.addr[0] && !key->src.addr[1] && key->src.addr[2] == htonl(0xffff))
		return -EINVAL;
	if ((ntohl(key->src.addr[0]) & RL_LL_MASK) == RL_LL_PREFIX)
		return plen == 128 ? 0 : -EINVAL;
	if (plen != c->prefix6)
		return -EINVAL;
	mask_words(key->src.addr, 4, c->prefix6);
	return 0;
}

int rl_sync_status_write(struct rl_sync_kern *k, const struct rl_sync_status *st)
{
	char buf[RL_SYNC_STATUS_SIZE] = {};
	__u32 zero = 0;

	memcpy(buf, st, sizeof(*st));
	if (bpf_map_update_elem(k->pins.sync_status, &zero, buf, BPF_ANY))
		return -errno;
	return 0;
}

int rl_sync_status_read(const struct rl_pins *pins, struct rl_sync_status *st)
{
	char buf[RL_SYNC_STATUS_SIZE] = {};
	__u32 zero = 0;

	if (pins->sync_status < 0)
		return -ENOENT;
	if (bpf_map_lookup_elem(pins->sync_status, &zero, buf))
		return -errno;
	memcpy(st, buf, sizeof(*st));
	/* An agent always writes its pid: a zero one was never written. */
	if (!st->pid)
		return -ENOENT;
	return 0;
}

bool rl_sync_agent_alive(const struct rl_sync_status *st)
{
	return st->pid && (kill((pid_t)st->pid, 0) == 0 || errno == EPERM);
}

const char *rl_sync_state_name(const struct rl_sync_status *st)
{
	static const char *const names[] = { "off", "connected", "fallback-local", "fallback-share",
					     "policy-mismatch" };

	if (st->state != RL_SYNC_OFF && !rl_sync_agent_alive(st))
		return "not-running";
	return st->state < sizeof(names) / sizeof(names[0]) ? names[st->state] : "unknown";
}
