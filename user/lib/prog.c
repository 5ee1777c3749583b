// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Loading the XDP program built for one configuration: see prog.h. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probe.h"
#include "prog.h"
#include "rl_skel.h"
#include "level.h"
#include "rulemaps.h"
#include "sa.h"
#include "sa6.h"

static bool fault(const char *what)
{
	const char *f = getenv("XDP_RATELIMIT_FAULT");

	return f && !strcmp(f, what);
}

/*
 * Arm the sweep's timer of rl_sets4 (bpf/xdp_ratelimit.bpf.c), or take it over
 * from the program loaded before: the program just loaded may reference
 * another rl_sets4 (a set that changed tables). A load whose program then
 * fails to go live leaves the timer with it; the next load takes it back.
 */
static int sweep_arm(struct xdp_ratelimit *skel)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.rl_sweep_arm), &opts))
		return -errno;
	return (int)opts.retval;
}

/*
 * rl_sets4 made on a thread of its own while the object is opened and
 * prepared: the kernel zeroes and charges the whole table as it makes it
 * (32 MiB for the default 1M sources, about 6 ms), time the opening's
 * parsing (about 4 ms) can overlap on another CPU. The load then takes the
 * table as libbpf would have made it (rl_table4_create(): the same type,
 * sizes and flags). Where the thread cannot run or the table cannot be
 * made there, libbpf makes it in the load as before and says what failed.
 */
struct early4 {
	pthread_t thread;
	__u32 bits;
	int fd;
	bool started;
};

static void *early4_run(void *arg)
{
	struct early4 *e = arg;

	e->fd = rl_table4_create(RL_TABLE4_SA, 0, e->bits, false);
	return NULL;
}

static void early4_start(struct early4 *e, __u32 bits)
{
	e->bits = bits;
	e->fd = -1;
	e->started = !pthread_create(&e->thread, NULL, early4_run, e);
}

/* Wait for the thread: the table's descriptor, or negative (none made: libbpf makes it). */
static int early4_join(struct early4 *e)
{
	if (e->started) {
		pthread_join(e->thread, NULL);
		e->started = false;
	}
	return e->fd;
}

/* Done with the table (the load holds its own descriptor), or a load that failed. */
static void early4_drop(struct early4 *e)
{
	if (early4_join(e) >= 0)
		close(e->fd);
	e->fd = -1;
}

/*
 * File descriptors a load takes at once: one per map of the object (new or
 * reused), and beyond them the program, BTF and libbpf's feature probes.
 * With fewer, libbpf's probes fail and it reports the load itself as refused
 * (EINVAL): check first.
 */
#define RL_LOAD_FDS_EXTRA 8

static int free_fds(void)
{
	struct rlimit rl;
	struct dirent *e;
	int open = 0;
	DIR *d;

	/* Where we cannot tell, let the load try and say what failed. */
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return INT_MAX;
	d = opendir("/proc/self/fd");
	if (!d)
		return INT_MAX;
	while ((e = readdir(d)))
		open += e->d_name[0] != '.';
	closedir(d);
	/* Less the one opendir() used. */
	return (int)rl.rlim_cur - (open - 1);
}

/* Does a rule of @rules limit (and so keep per-source states)? */
static bool rules_limit(const struct rl_rules_cfg *rules)
{
	for (__u32 i = 0; i < rules->n && i < RL_RULE_SLOTS; i++)
		if (rules->r[i].action == RL_RULE_LIMIT)
			return true;
	return false;
}

/* Does a limit rule of @rules have a level above the source (--aggregate4, --iface-rate)? */
static bool rules_levels(const struct rl_rules_cfg *rules)
{
	for (__u32 i = 0; i < rules->n && i < RL_RULE_SLOTS; i++)
		if (rules->r[i].action == RL_RULE_LIMIT && rl_levels_any(&rules->r[i].cfg))
			return true;
	return false;
}

/* Is the feature that sizes map @i on in the program for @cfg and @rules? */
static bool feature_on(int i, const struct rl_config *cfg, const struct rl_rules_cfg *rules)
{
	switch (rl_map_sizes[i]) {
	case RL_SIZE_AGG:
		return rl_levels_any(cfg) || rules_levels(rules);
	case RL_SIZE_ADMIT:
		return RL_LVL(cfg, RL_LVL_ADMIT)->on;
	case RL_SIZE_RSTATE:
		return rules_limit(rules);
	case RL_SIZE_PORTS:
		return rules->need_ports;
	case RL_SIZE_PFX:
		return rules->has_src4 || rules->has_src6;
	case RL_SIZE_SYNC_SLOTS:
	case RL_SIZE_SYNC_DIRTY:
		/* The counters of the set tables: rl_state4's policies count in rl_sync4. */
		return cfg->sync_count && cfg->table4 != RL_TABLE4_LRU;
	case RL_SIZE_SYNC4:
		return cfg->sync_count && cfg->table4 == RL_TABLE4_LRU;
	case RL_SIZE_SYNC6:
		return cfg->sync_count;
	case RL_SIZE_SYNCR:
		return cfg->sync_count && rules_limit(rules);
	default:
		return false;
	}
}

/* The entries of map @i at full size, on tables of @max4 IPv4 and @max6 IPv6 sources. */
static __u32 feature_full(int i, __u32 max4, __u32 max6)
{
	switch (rl_map_sizes[i]) {
	case RL_SIZE_RSTATE:
	case RL_SIZE_SYNCR:
		/* The rules' sources: never more than the default rule's table. */
		return max4 < RL_RULE_MAX_SOURCES ? max4 : RL_RULE_MAX_SOURCES;
	case RL_SIZE_PORTS:
		return RL_PORT_TABLE;
	case RL_SIZE_PFX:
		return RL_PFX_TABLE;
	case RL_SIZE_SYNC_SLOTS:
		/* A counter word per slot of the set tables (2^rl_sa_bits sets). */
		return RL_SA_WAYS << rl_sa_bits_for(max4);
	case RL_SIZE_SYNC_DIRTY:
		/* A bit per counter word. */
		return (RL_SA_WAYS << rl_sa_bits_for(max4)) / 64;
	case RL_SIZE_SYNC4:
		/* Sync counters: at most one entry per tracked source. */
		return max4;
	case RL_SIZE_SYNC6:
		return max6;
	case RL_SIZE_AGG:
		/* Aggregates hold sources: fewer than the sources (include/rl_agg.h). */
		return max4 / RL_AGG_RATIO > RL_AGG_MIN ? max4 / RL_AGG_RATIO : RL_AGG_MIN;
	case RL_SIZE_ADMIT:
		return 1U << rl_admit_bits_for(max4);
	default:
		return 0;
	}
}

bool rl_map_is_feature(int i)
{
	return feature_full(i, 1, 1) != 0;
}

__u32 rl_map_entries(int i, const struct rl_config *cfg, const struct rl_rules_cfg *rules,
		     __u32 max4, __u32 max6)
{
	if (!rl_map_is_feature(i))
		return 0;
	return feature_on(i, cfg, rules) ? feature_full(i, max4, max6) : 1;
}

/* New maps: the features' at the size @cfg and @rules need (@full: all at full size). */
static int feature_sizes(struct xdp_ratelimit *skel, const struct rl_config *cfg,
			 const struct rl_rules_cfg *rules, __u32 max4, __u32 max6, bool full)
{
	struct bpf_map *maps[RL_N_MAPS];
	int ret = 0;

	rl_skel_maps(skel, maps);
	for (int i = 0; i < RL_N_MAPS && !ret; i++)
		if (rl_map_is_feature(i))
			ret = bpf_map__set_max_entries(
				maps[i], full ? feature_full(i, max4, max6) :
						rl_map_entries(i, cfg, rules, max4, max6));
	return ret;
}

/*
 * The live maps @p for a program that turns on what @cfg and @rules do: a
 * feature's map of one entry would make it wrong (a rule limiting one
 * source at a time, counts lost), so refuse it rather than load it. The
 * caller makes them at full size first (rl_feature_maps()).
 */
static int reuse_fits(const struct rl_pins *p, const struct rl_config *cfg,
		      const struct rl_rules_cfg *rules, char *err, size_t errlen)
{
	for (int i = 0; i < RL_N_MAPS; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		if (!rl_map_is_feature(i) || !feature_on(i, cfg, rules))
			continue;
		if (bpf_obj_get_info_by_fd(p->fd[i], &info, &len)) {
			snprintf(err, errlen, "couldn't inspect %s: %s", rl_map_names[i],
				 strerror(errno));
			return -errno;
		}
		if (info.max_entries <= 1) {
			snprintf(err, errlen,
				 "%s has one entry, and this program needs it whole: it is made "
				 "with the program that turns it on",
				 rl_map_names[i]);
			return -ENOSPC;
		}
	}
	return 0;
}

/*
 * log2 of rl_admit's words: the live map's when it is in place, else what
 * feature_full() will make it for --max-sources as attached (or @max4 for
 * new maps).
 */
static __u32 admit_bits(const struct rl_prog_opts *o, __u32 max4)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0, bits = 0;
	struct rl_ctl ctl = {};

	if (!o->reuse)
		return rl_admit_bits_for(max4);
	if (!bpf_obj_get_info_by_fd(o->reuse->admit, &info, &len) && info.max_entries > 1) {
		while ((1U << bits) < info.max_entries)
			bits++;
		return bits;
	}
	if (!bpf_map_lookup_elem(o->reuse->ctl, &zero, &ctl) && ctl.max_sources4)
		max4 = ctl.max_sources4;
	else
		max4 = RL_DEFAULT_MAX_SOURCES;
	return rl_admit_bits_for(max4);
}

/* Load the program on the live maps @p rather than new ones. */
static int reuse_maps(struct xdp_ratelimit *skel, const struct rl_pins *p)
{
	struct bpf_map *maps[RL_N_MAPS];
	int ret;

	rl_skel_maps(skel, maps);
	for (size_t i = 0; i < RL_N_MAPS; i++) {
		ret = bpf_map__reuse_fd(maps[i], p->fd[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The inner map of a map of maps is a template: libbpf creates it, hands it
 * to the outer map's creation and closes it. The kernel compares its type,
 * key and value sizes and flags with the maps put in the outer one, and an
 * array's entries, never a hash's (bpf_map_meta_equal()). Created as
 * declared, the sync counter tables' template was a hash of 1,048,576
 * buckets, about a quarter of attach's time, for nothing: each hash
 * template is made here with one entry instead. Up to @templ's
 * RL_MAX_TEMPLATES fds, closed after the load by close_templates().
 */
#define RL_MAX_TEMPLATES 4

static int small_templates(struct xdp_ratelimit *skel, int *templ, int *n)
{
	struct bpf_map *map;
	int fd, ret;

	*n = 0;
	bpf_object__for_each_map(map, skel->obj)
	{
		struct bpf_map *inner = bpf_map__inner_map(map);
		LIBBPF_OPTS(bpf_map_create_opts, opts);

		if (!inner || bpf_map__type(inner) != BPF_MAP_TYPE_HASH ||
		    !bpf_map__autocreate(map) || bpf_map__fd(map) >= 0 || *n == RL_MAX_TEMPLATES)
			continue;
		opts.map_flags = bpf_map__map_flags(inner);
		fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, bpf_map__key_size(inner),
				    bpf_map__value_size(inner), 1, &opts);
		if (fd < 0)
			return -errno;
		templ[(*n)++] = fd;
		ret = bpf_map__set_inner_map_fd(map, fd);
		if (ret)
			return ret;
	}
	return 0;
}

static void close_templates(const int *templ, int n)
{
	for (int i = 0; i < n; i++)
		close(templ[i]);
}

/*
 * Does the policy @cfg with @rules need the XDP program with rules, SYN
 * cookies, levels and the IPv4 tables other than rl_sets4 (xdp_ratelimit),
 * or does the one without (xdp_ratelimit_b, the default policy's) do?
 * bpf/xdp_ratelimit.bpf.c.
 */
static bool needs_full(const struct rl_config *cfg, const struct rl_rules_cfg *rules)
{
	if (rules->n || cfg->syn.n || cfg->table4 != RL_TABLE4_SA)
		return true;
	for (int id = 1; id <= RL_LVL_N; id++)
		if (RL_LVL(cfg, id)->on)
			return true;
	return false;
}

struct xdp_ratelimit *rl_prog_open(const struct rl_config *cfg, const struct rl_prog_opts *o,
				   char *err, size_t errlen)
{
	int templ[RL_MAX_TEMPLATES], ntempl = 0;
	struct xdp_ratelimit *skel;
	__u32 max4 = o->max_sources4 ?: RL_DEFAULT_MAX_SOURCES, bits;
	__u32 max6 = o->max_sources6 ?: RL_MAX_SOURCES6_FOR(max4);
	int ret, avail = free_fds(), need = RL_LOAD_FDS_EXTRA;
	struct early4 e4 = { .fd = -1 };
	struct bpf_map *map;
	bool full;

	/* A new rl_sets4 of the policy's size: made while the object opens. */
	if (!o->reuse && !o->charge && !o->both_tables4 && cfg->table4 == RL_TABLE4_SA)
		early4_start(&e4, rl_sa_bits_for(max4));
	skel = xdp_ratelimit__open();
	if (!skel) {
		ret = -errno;
		snprintf(err, errlen, "couldn't open the BPF object: %s", strerror(errno));
		goto fail_errno;
	}
	bpf_object__for_each_map(map, skel->obj) need++;
	if (avail < need) {
		ret = -EMFILE;
		snprintf(
			err, errlen,
			"couldn't load the XDP program: %s (%d file descriptors free, it needs %d: raise ulimit -n)",
			strerror(EMFILE), avail > 0 ? avail : 0, need);
		goto fail;
	}
	skel->rodata_cfg->rl_cfg = *cfg;
	skel->rodata->rl_test_clock = o->test_clock;
	bits = rl_sa_bits_for(max4);
	ret = o->reuse ? rl_sa_bits_live(o->reuse, &bits) : 0;
	if (ret) {
		snprintf(err, errlen, "couldn't read the size of the IPv4 source table: %s",
			 strerror(-ret));
		goto fail;
	}
	skel->rodata->rl_sa_bits = bits;
	/* rl_sets6: sized for --max-sources6, or as the live one is. */
	ret = o->reuse ? rl_sa6_bits_of(o->reuse->sets6) : (int)rl_sa6_bits_for(max6);
	if (ret < 0) {
		snprintf(err, errlen, "couldn't read the size of the IPv6 source table: %s",
			 strerror(-ret));
		goto fail;
	}
	skel->rodata->rl_sa6_bits = (__u32)ret;
	skel->rodata->rl_admit_bits = admit_bits(o, max4);
	/*
	 * xdp.frags where the kernel has it: native mode then attaches on an
	 * MTU over a page (jumbo frames), and a frame's length is the whole
	 * frame's. Every program of a limiter is loaded alike, so set swaps
	 * like for like.
	 */
	if (rl_probe_xdp_frags()) {
		ret = bpf_program__set_flags(skel->progs.xdp_ratelimit,
					     bpf_program__flags(skel->progs.xdp_ratelimit) |
						     BPF_F_XDP_HAS_FRAGS);
		if (!ret)
			ret = bpf_program__set_flags(
				skel->progs.xdp_ratelimit_b,
				bpf_program__flags(skel->progs.xdp_ratelimit_b) |
					BPF_F_XDP_HAS_FRAGS);
		if (ret) {
			snprintf(err, errlen, "couldn't prepare the BPF object: %s",
				 strerror(-ret));
			goto fail;
		}
		skel->rodata->rl_frags = 1;
	}
	/* rl_table4_choose() picked rl_sets4 for a policy it holds: check, rather than trust. */
	if (cfg->table4 == RL_TABLE4_SA) {
		ret = rl_sa_check(&cfg->params, bits, err, errlen);
		if (ret)
			goto fail;
	}
	/*
	 * The sync charge and drain programs and their batch only for the
	 * agent (sync_kern.c), and then alone: the XDP program and the sweep
	 * are the limiter's, and verifying the XDP program again would take
	 * most of the load's time.
	 */
	ret = bpf_program__set_autoload(skel->progs.rl_charge_prog, o->charge);
	if (!ret)
		ret = bpf_program__set_autoload(skel->progs.rl_drain_prog, o->charge);
	if (!ret)
		ret = bpf_program__set_autoload(skel->progs.rl_sweep_arm, !o->charge);
	if (!ret)
		ret = bpf_map__set_autocreate(skel->maps.rl_chg, o->charge);
	if (ret) {
		snprintf(err, errlen, "couldn't prepare the BPF object: %s", strerror(-ret));
		goto fail;
	}
	if (o->rules) {
		skel->rodata_cfg->rl_rules = *o->rules;
	} else if (o->reuse) {
		/* The rules live now: compiled into every program loaded on these maps. */
		ret = rl_rules_read(o->reuse, &skel->rodata_cfg->rl_rules);
		if (ret) {
			snprintf(err, errlen, "couldn't read the rules: %s", strerror(-ret));
			goto fail;
		}
	}
	rl_dport_bits_of(&skel->rodata_cfg->rl_rules, skel->rodata->rl_dport_bits);
	/* The XDP program: the one with rules, SYN cookies and levels only when the policy has one. */
	full = needs_full(cfg, &skel->rodata_cfg->rl_rules);
	ret = bpf_program__set_autoload(skel->progs.xdp_ratelimit, !o->charge && full);
	if (!ret)
		ret = bpf_program__set_autoload(skel->progs.xdp_ratelimit_b, !o->charge && !full);
	if (ret) {
		snprintf(err, errlen, "couldn't prepare the BPF object: %s", strerror(-ret));
		goto fail;
	}
	if (o->reuse) {
		ret = reuse_fits(o->reuse, cfg, &skel->rodata_cfg->rl_rules, err, errlen);
		if (ret)
			goto fail;
		ret = reuse_maps(skel, o->reuse);
		if (!ret && o->reuse_clock > 0)
			ret = bpf_map__reuse_fd(skel->maps.rl_clock, o->reuse_clock);
		if (ret) {
			snprintf(err, errlen, "couldn't reuse the limiter's maps: %s",
				 strerror(-ret));
			goto fail;
		}
	} else {
		bool lru = cfg->table4 == RL_TABLE4_LRU || o->both_tables4;
		bool sa = cfg->table4 == RL_TABLE4_SA || o->both_tables4;
		bool wide = cfg->table4 == RL_TABLE4_WIDE || o->both_tables4;

		/* The table the policy does not use: one entry (a set that needs it makes it). */
		ret = bpf_map__set_max_entries(skel->maps.rl_state4, lru ? max4 : 1);
		if (!ret)
			ret = bpf_map__set_max_entries(skel->maps.rl_sets4, sa ? 1U << bits : 1);
		if (!ret)
			ret = bpf_map__set_max_entries(skel->maps.rl_wide4, wide ? 1U << bits : 1);
		if (!ret)
			ret = bpf_map__set_max_entries(skel->maps.rl_sets6,
						       1U << skel->rodata->rl_sa6_bits);
		/* The features' maps: one entry unless the policy or the rules turn them on. */
		ret = ret   ?:
			      feature_sizes(skel, cfg, &skel->rodata_cfg->rl_rules, max4, max6,
					    o->both_tables4);
		if (ret) {
			snprintf(err, errlen, "couldn't size the source tables: %s",
				 strerror(-ret));
			goto fail;
		}
		/* rl_sets4 made early, if it could be (its size is bits', as above). */
		if (early4_join(&e4) >= 0 && bits == e4.bits) {
			ret = bpf_map__reuse_fd(skel->maps.rl_sets4, e4.fd);
			if (ret) {
				snprintf(err, errlen, "couldn't use the IPv4 source table: %s",
					 strerror(-ret));
				goto fail;
			}
		}
		early4_drop(&e4);
	}
	if (fault("prog-load")) {
		ret = -EPERM;
		snprintf(err, errlen, "couldn't load the XDP program: %s (XDP_RATELIMIT_FAULT)",
			 strerror(EPERM));
		goto fail;
	}
	ret = small_templates(skel, templ, &ntempl);
	if (!ret)
		ret = xdp_ratelimit__load(skel);
	close_templates(templ, ntempl);
	if (ret) {
		snprintf(err, errlen, "couldn't load the XDP program%s: %s",
			 o->reuse ? "" : " and its maps", strerror(-ret));
		goto fail;
	}
	ret = o->charge ? 0 : sweep_arm(skel);
	if (ret) {
		snprintf(err, errlen, "couldn't start the sweep of the IPv4 table: %s",
			 strerror(-ret));
		goto fail;
	}
	return skel;
fail:
	xdp_ratelimit__destroy(skel);
	early4_drop(&e4);
	errno = -ret;
	return NULL;
fail_errno:
	early4_drop(&e4);
	errno = -ret;
	return NULL;
}

void rl_prog_destroy(struct xdp_ratelimit *skel)
{
	xdp_ratelimit__destroy(skel);
}

struct bpf_program *rl_prog_xdp(const struct xdp_ratelimit *skel)
{
	return bpf_program__fd(skel->progs.xdp_ratelimit) >= 0 ? skel->progs.xdp_ratelimit :
								 skel->progs.xdp_ratelimit_b;
}

int rl_prog_fd(const struct xdp_ratelimit *skel)
{
	return bpf_program__fd(rl_prog_xdp(skel));
}

void rl_prog_maps(const struct xdp_ratelimit *skel, struct rl_pins *fds)
{
	struct bpf_map *maps[RL_N_MAPS];

	rl_skel_maps(skel, maps);
	for (size_t i = 0; i < RL_N_MAPS; i++)
		fds->fd[i] = bpf_map__fd(maps[i]);
}

int rl_charge_fd(const struct xdp_ratelimit *skel, int *batch_fd, int *drain_fd)
{
	*batch_fd = bpf_map__fd(skel->maps.rl_chg);
	*drain_fd = bpf_program__fd(skel->progs.rl_drain_prog);
	return bpf_program__fd(skel->progs.rl_charge_prog);
}
