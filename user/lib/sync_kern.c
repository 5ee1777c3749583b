// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel side of fleet sync: see sync_kern.h and include/rl_sync.h.
 *
 * Counting on and off: the live configuration with sync_count changed,
 * loaded on the live maps and swapped in with XDP_FLAGS_REPLACE, as set
 * does, but under the same generation: every state stays where it is.
 * Draining: the outer map is pointed at the other counter table (the kernel
 * waits for running programs before the update returns), then the retired
 * table is read and emptied: exact, nothing counted twice or lost. Charging:
 * the object's SEC("syscall") program, built for the live configuration,
 * run with BPF_PROG_TEST_RUN on batches written into its array map.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lock.h"
#include "pins.h"
#include "policy.h"
#include "prog.h"
#include "rl_skel.h"
#include "rl_sync.h"
#include "sync_kern.h"
#include "xdp_attach.h"

_Static_assert(sizeof(struct rl_sync_status) <= RL_SYNC_STATUS_SIZE,
	       "struct rl_sync_status fits the value of rl_sync_status");
_Static_assert(sizeof(struct rl_sync_src) == sizeof(struct rl_sync_chg) &&
		       __builtin_offsetof(struct rl_sync_src, units) ==
			       __builtin_offsetof(struct rl_sync_chg, units),
	       "a source to charge is written to the charge batch as it is");

/* Entries read per batch call when draining. */
#define DRAIN_CHUNK 4096

struct rl_sync_kern {
	struct rl_iface ifc;
	bool attached; /* opened by interface (counting switched by us), not from pins */
	struct rl_pins pins;
	int clock_fd; /* tests: the rl_clock map, or -1 */
	struct xdp_ratelimit *charger; /* the charge program, for charger_cfg */
	struct rl_config charger_cfg;
	int charge_fd, batch_fd;
};

static void init(struct rl_sync_kern *k)
{
	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < RL_N_MAPS; i++)
		k->pins.fd[i] = -1;
	k->clock_fd = -1;
	k->charge_fd = k->batch_fd = -1;
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
	free(k);
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
	free(k);
}

static int live_config(struct rl_sync_kern *k, struct rl_config *cfg)
{
	__u32 active;

	return rl_config_read(&k->pins, cfg, &active);
}

int rl_sync_kern_policy(struct rl_sync_kern *k, char *buf, size_t len)
{
	struct rl_config c;
	int ret, n;

	ret = live_config(k, &c);
	if (ret)
		return ret;
	n = snprintf(buf, len,
		     "algo=%s\nbytes=%u\nrate=%llu/%llu\nburst=%llu\nwindow_ns=%llu\n"
		     "initial=%s%llu\nprefix4=%u\nprefix6=%u\nclock=%s\n",
		     rl_algo_name(c.params.algo), c.params.bytes, (unsigned long long)c.rate_num,
		     (unsigned long long)c.rate_den, (unsigned long long)c.burst,
		     (unsigned long long)c.window_ns,
		     c.initial_set ? "" : "default:", (unsigned long long)c.initial, c.prefix4,
		     c.prefix6, c.clock == RL_CLOCK_COARSE ? "coarse" : "precise");
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
}

/* The ids of the two tables of a family, and which one the outer map points to. */
static int map_id(int fd, __u32 *id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	return 0;
}

/*
 * Point @outer at the table of @a and @b it does not point to, and return
 * the retired one's fd in *retired. The update returns once no program
 * can still be adding to the retired table.
 */
static int flip(int outer, int a, int b, int *retired)
{
	__u32 zero = 0, cur = 0, ida = 0;
	struct rl_state_key key;
	int ret, next;

	ret = map_id(a, &ida);
	if (ret)
		return ret;
	if (bpf_map_lookup_elem(outer, &zero, &cur) && errno != ENOENT)
		return -errno;
	next = cur == ida ? b : a;
	/*
	 * Nothing counted since the last drain (the other table was emptied
	 * then): no flip, and no wait for a grace period, which is most of a
	 * drain's time (tens of ms). What is counted from now is drained next
	 * time.
	 */
	if (bpf_map_get_next_key(cur == ida ? a : b, NULL, &key) && errno == ENOENT) {
		*retired = -1;
		return 0;
	}
	*retired = cur == ida ? a : b;
	if (bpf_map_update_elem(outer, &zero, &next, BPF_ANY))
		return -errno;
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

/* Read and empty the retired table @fd of one family (@v4: keys of struct rl_state_key4). */
static int drain_table(int fd, bool v4, struct rl_sync_src **v, size_t *n, size_t *cap)
{
	size_t ksz = v4 ? sizeof(struct rl_state_key4) : sizeof(struct rl_state_key);
	__u32 chunk = DRAIN_CHUNK, count, in = 0, outb = 0;
	void *keys = NULL, *vals = NULL;
	bool first = true, done = false;
	int ret = 0;

	while (!done) {
		free(keys);
		free(vals);
		keys = malloc(chunk * ksz);
		vals = malloc(chunk * sizeof(__u64));
		if (!keys || !vals) {
			ret = -ENOMEM;
			goto out;
		}
		count = chunk;
		ret = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &outb, keys, vals,
						      &count, NULL);
		if (ret && errno == ENOSPC && !count) {
			/* One hash bucket holds more than a chunk: a larger one. */
			chunk *= 2;
			continue;
		}
		if (ret && errno != ENOENT) {
			ret = -errno;
			goto out;
		}
		done = ret != 0;
		ret = 0;
		for (__u32 i = 0; i < count; i++) {
			struct rl_state_key key = {};
			__u64 units = ((__u64 *)vals)[i];

			if (v4) {
				const struct rl_state_key4 *k4 =
					(const void *)((char *)keys + i * ksz);

				key.src.addr[2] = htonl(0xffff);
				key.src.addr[3] = k4->addr;
				key.gen = k4->gen;
			} else {
				memcpy(&key, (char *)keys + i * ksz, ksz);
			}
			if (!units)
				continue;
			ret = push(v, n, cap, &key, units);
			if (ret)
				goto out;
		}
		in = outb;
		first = false;
	}
out:
	free(keys);
	free(vals);
	return ret;
}

int rl_sync_drain(struct rl_sync_kern *k, struct rl_sync_src **out, size_t *n)
{
	struct rl_sync_src *v = NULL;
	size_t cnt = 0, cap = 0;
	int ret, r4, r6;

	*out = NULL;
	*n = 0;
	ret = flip(k->pins.sync4, k->pins.sc4a, k->pins.sc4b, &r4);
	if (!ret)
		ret = flip(k->pins.sync6, k->pins.sc6a, k->pins.sc6b, &r6);
	if (!ret && r4 >= 0)
		ret = drain_table(r4, true, &v, &cnt, &cap);
	if (!ret && r6 >= 0)
		ret = drain_table(r6, false, &v, &cnt, &cap);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* The charge program built for the live configuration (loaded again after a set). */
static int charger(struct rl_sync_kern *k)
{
	struct rl_prog_opts po = { .reuse = &k->pins,
				   .charge = true,
				   .test_clock = k->clock_fd >= 0,
				   .reuse_clock = k->clock_fd };
	struct xdp_ratelimit *skel;
	char err[RL_ERRLEN];
	struct rl_config cfg;
	int ret;

	ret = live_config(k, &cfg);
	if (ret)
		return ret;
	if (k->charger && cfg.gen == k->charger_cfg.gen &&
	    !memcmp(&cfg.params, &k->charger_cfg.params, sizeof(cfg.params)) &&
	    cfg.clock == k->charger_cfg.clock)
		return 0;
	skel = rl_prog_open(&cfg, &po, err, sizeof(err));
	if (!skel)
		return -errno;
	if (k->charger)
		rl_prog_destroy(k->charger);
	k->charger = skel;
	k->charger_cfg = cfg;
	k->charge_fd = rl_charge_fd(skel, &k->batch_fd);
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

/* "a.b.c.d/len" or "x::/len", @len the prefix the live policy keys the source by. */
int rl_sync_src_format(struct rl_sync_kern *k, const struct rl_state_key *key, char *buf,
		       size_t len)
{
	char a[INET6_ADDRSTRLEN];
	struct rl_config c;
	unsigned int plen;
	int ret, n;

	ret = live_config(k, &c);
	if (ret)
		return ret;
	if (!key->src.addr[0] && !key->src.addr[1] && key->src.addr[2] == htonl(0xffff)) {
		if (!inet_ntop(AF_INET, &key->src.addr[3], a, sizeof(a)))
			return -errno;
		plen = c.prefix4;
	} else {
		if (!inet_ntop(AF_INET6, key->src.addr, a, sizeof(a)))
			return -errno;
		/* Link-local sources are keyed whole (rl_key.h). */
		plen = (ntohl(key->src.addr[0]) & RL_LL_MASK) == RL_LL_PREFIX ? 128 : c.prefix6;
	}
	n = snprintf(buf, len, "%s/%u", a, plen);
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
	const char *slash = strchr(s, '/');
	unsigned long plen;
	struct rl_config c;
	int ret;

	if (!slash || (size_t)(slash - s) >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, slash - s);
	a[slash - s] = '\0';
	errno = 0;
	plen = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end)
		return -EINVAL;
	ret = live_config(k, &c);
	if (ret)
		return ret;
	memset(key, 0, sizeof(*key));
	key->gen = c.gen;
	if (inet_pton(AF_INET, a, &key->src.addr[3]) == 1) {
		if (plen != c.prefix4)
			return -EINVAL;
		key->src.addr[2] = htonl(0xffff);
		mask_words(&key->src.addr[3], 1, c.prefix4);
		return 0;
	}
	if (inet_pton(AF_INET6, a, key->src.addr) != 1)
		return -EINVAL;
	/* IPv4-mapped sources are IPv4 ones: written as such by rl_sync_src_format(). */
	if (!key->src.addr[0] && !key->src.addr[1] && key->src.addr[2] == htonl(0xffff))
		return -EINVAL;
	if ((ntohl(key->src.addr[0]) & RL_LL_MASK) == RL_LL_PREFIX)
		return plen == 128 ? 0 : -EINVAL;
	if (plen != c.prefix6)
		return -EINVAL;
	mask_words(key->src.addr, 4, c.prefix6);
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
