// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench: what the phases share (bench.h): test frames, the limiter loaded
 * for a configuration, the reference driver, statistics, result files and
 * option parsing. The phases (micro.c, accuracy.c, gen.c, setassoc.c,
 * sync_cost.c) call these; nothing here calls a phase (main.c does).
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "opts.h"
#include "bench.h"
#include "maps.h"
#include "sa.h"
#include "config.h"
#include "probe.h"
#include "prog.h"
#include "rl_skel.h"
#include "bench_ref.skel.h"

static void fill_eth(struct bench_frame *f, __u16 proto)
{
	struct ethhdr *eth = (struct ethhdr *)f->data;
	static const unsigned char dst[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const unsigned char src[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x01 };

	memcpy(eth->h_dest, dst, ETH_ALEN);
	memcpy(eth->h_source, src, ETH_ALEN);
	eth->h_proto = htons(proto);
}

void bench_frame_ipv6(struct bench_frame *f, __u32 len)
{
	struct ipv6hdr *ip6 = (struct ipv6hdr *)(f->data + ETH_HLEN);
	struct udphdr *udp = (struct udphdr *)(ip6 + 1);

	memset(f, 0, sizeof(*f));
	if (len < ETH_HLEN + sizeof(*ip6) + sizeof(*udp))
		len = ETH_HLEN + sizeof(*ip6) + sizeof(*udp);
	if (len > sizeof(f->data))
		len = sizeof(f->data);
	fill_eth(f, ETH_P_IPV6);
	ip6->version = 6;
	ip6->payload_len = htons((__u16)(len - ETH_HLEN - sizeof(*ip6)));
	ip6->nexthdr = IPPROTO_UDP;
	ip6->hop_limit = 64;
	/* 2001:2::/48, the IPv6 benchmarking prefix. */
	ip6->saddr.s6_addr32[0] = htonl(0x20010002);
	ip6->saddr.s6_addr32[3] = htonl(0x10000);
	ip6->daddr.s6_addr32[0] = htonl(0x20010002);
	ip6->daddr.s6_addr32[3] = htonl(2);
	udp->source = htons(9);
	udp->dest = htons(9);
	udp->len = ip6->payload_len;
	f->len = len;
	f->src_off = ETH_HLEN + offsetof(struct ipv6hdr, saddr) + 12;
	f->src_base = 0x10000;
}

void bench_frame_ipv4(struct bench_frame *f, __u32 len)
{
	struct iphdr *ip = (struct iphdr *)(f->data + ETH_HLEN);
	struct udphdr *udp = (struct udphdr *)(ip + 1);

	memset(f, 0, sizeof(*f));
	if (len < ETH_HLEN + sizeof(*ip) + sizeof(*udp))
		len = ETH_HLEN + sizeof(*ip) + sizeof(*udp);
	if (len > sizeof(f->data))
		len = sizeof(f->data);
	fill_eth(f, ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons((__u16)(len - ETH_HLEN));
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	/* 198.18.0.0/15, the IPv4 benchmarking range. */
	ip->saddr = htonl(0xc6120001);
	ip->daddr = htonl(0xc6120002);
	udp->source = htons(9);
	udp->dest = htons(9);
	udp->len = htons((__u16)(len - ETH_HLEN - sizeof(*ip)));
	f->len = len;
	f->src_off = ETH_HLEN + offsetof(struct iphdr, saddr);
	f->src_base = 0xc6120001;
}

void bench_frame_ipv4_tcp(struct bench_frame *f, __u32 len)
{
	struct iphdr *ip = (struct iphdr *)(f->data + ETH_HLEN);
	struct tcphdr *tcp = (struct tcphdr *)(ip + 1);

	if (len < ETH_HLEN + sizeof(*ip) + sizeof(*tcp))
		len = ETH_HLEN + sizeof(*ip) + sizeof(*tcp);
	bench_frame_ipv4(f, len);
	memset(tcp, 0, sizeof(*tcp));
	ip->protocol = IPPROTO_TCP;
	tcp->source = htons(40000);
	tcp->dest = htons(9);
	tcp->doff = sizeof(*tcp) / 4;
	tcp->ack = 1;
}

int bench_config(struct rl_config *cfg, const char *const *args)
{
	return bench_config_next(cfg, args, NULL);
}

int bench_config_next(struct rl_config *cfg, const char *const *args, const struct rl_config *prev)
{
	char err[RL_ERRLEN];
	struct rl_policy pol;
	struct rl_opts o;
	int ret;

	ret = rl_policy_parse(&pol, &o, args, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rl-bench: policy: %s\n", err);
		return ret;
	}
	ret = rl_config_build(cfg, &pol, &o, prev, err, sizeof(err));
	if (ret)
		fprintf(stderr, "rl-bench: %s\n", err);
	return ret;
}

void bench_opts_begin(void)
{
	optind = 0; /* glibc: start afresh, as for a new argv */
	opterr = 0;
}

int bench_next_opt(const char *cmd, int argc, char **argv, const struct option *opts)
{
	/* '+': stop at the first word, which is then an error; ':': a missing value is ':'. */
	int c = getopt_long(argc, argv, "+:", opts, NULL);

	if (c == -1 && optind < argc) {
		fprintf(stderr, "rl-bench %s: unexpected argument '%s'\n", cmd, argv[optind]);
		return '?';
	}
	if (c == ':') {
		fprintf(stderr, "rl-bench %s: %s needs a value\n", cmd, argv[optind - 1]);
		return '?';
	}
	if (c == '?')
		fprintf(stderr, "rl-bench %s: unknown option '%s'\n", cmd, argv[optind - 1]);
	return c;
}

int bench_parse_args(const char *cmd, int argc, char **argv, const char **out, int *rounds,
		     __u32 *reps, bool *quick, const char **only)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "reps", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },
		{ "only", required_argument, NULL, 'O' },
		{},
	};
	int c;

	bench_opts_begin();
	while ((c = bench_next_opt(cmd, argc, argv, opts)) != -1) {
		switch (c) {
		case 'o':
			*out = optarg;
			break;
		case 'r':
			*rounds = atoi(optarg);
			break;
		case 'n':
			*reps = (__u32)strtoul(optarg, NULL, 0);
			break;
		case 'q':
			*quick = true;
			break;
		case 'O':
			*only = optarg;
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

struct xdp_ratelimit *bench_limiter(const struct rl_config *cfg, __u32 max4, __u32 max6)
{
	return bench_limiter_rules(cfg, max4, max6, NULL);
}

struct xdp_ratelimit *bench_limiter_rules(const struct rl_config *cfg, __u32 max4, __u32 max6,
					  const struct rl_rules_cfg *rules)
{
	struct rl_prog_opts po = { .max_sources4 = max4, .max_sources6 = max6, .rules = rules };
	struct rl_ctl ctl = { .active = 0, .max_sources4 = max4 };
	struct rl_config c = *cfg;
	struct xdp_ratelimit *skel;
	char err[RL_ERRLEN];
	__u32 zero = 0;
	int ret;

	/* The IPv4 table as attach chooses it (RL_BENCH_TABLE4=lru: the LRU one regardless). */
	rl_table4_choose(&c, rl_sa_bits_for(max4 ?: RL_DEFAULT_MAX_SOURCES));
	if (getenv("RL_BENCH_TABLE4") && !strcmp(getenv("RL_BENCH_TABLE4"), "lru"))
		c.table4 = RL_TABLE4_LRU;
	c.prev_table4 = c.table4;
	/* A secret for the table's hash, as attach draws one (user/lib/sa.h). */
	ret = rl_sa_key_new(&c.sa_key);
	if (ret) {
		fprintf(stderr, "rl-bench: couldn't draw the table's secret: %s\n", strerror(-ret));
		return NULL;
	}
	cfg = &c;
	skel = rl_prog_open(cfg, &po, err, sizeof(err));
	if (!skel) {
		fprintf(stderr, "rl-bench: %s (%u + %u sources)\n", err, max4, max6);
		return NULL;
	}
	/* As user/lib/xdp_attach.c write_first_config(): the copy in slot 0. */
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.rl_config), &zero, cfg, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.rl_ctl), &zero, &ctl, BPF_ANY)) {
		fprintf(stderr, "rl-bench: couldn't write the configuration: %s\n",
			strerror(errno));
		rl_prog_destroy(skel);
		return NULL;
	}
	return skel;
}

int bench_counters(struct xdp_ratelimit *skel, struct rl_counters *sum)
{
	return rl_counters_sum(bpf_map__fd(skel->maps.rl_counters), sum);
}

__u64 bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int bench_rt(bool on)
{
	struct sched_param sp = { .sched_priority = on ? 10 : 0 };

	return sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &sp) ? -errno : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_min(const double *v, int n)
{
	double m = n > 0 ? v[0] : 0;

	for (int i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

double bench_max(const double *v, int n)
{
	double m = n > 0 ? v[0] : 0;

	for (int i = 1; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

FILE *bench_out(const char *dir, const char *name, const char *mode)
{
	char path[512];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, mode);
	if (!f) {
		err = errno;
		fprintf(stderr, "rl-bench: %s: %s\n", path, strerror(err));
		errno = err;
	}
	return f;
}

__u64 bench_fdinfo(int fd, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoull(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

int bench_ifindex;

struct bpf_link *bench_attach(struct bpf_program *prog, int *err)
{
	struct bpf_link *link;

	*err = 0;
	if (!bench_ifindex)
		return NULL;
	link = bpf_program__attach_xdp(prog, bench_ifindex);
	if (!link) {
		*err = -errno;
		fprintf(stderr, "rl-bench: couldn't attach %s to ifindex %d: %s\n",
			bpf_program__name(prog), bench_ifindex, strerror(errno));
	}
	return link;
}

int bench_frags(struct bpf_object *obj)
{
	struct bpf_program *p;
	int err;

	if (!rl_probe_xdp_frags())
		return 0;
	bpf_object__for_each_program(p, obj)
	{
		if (bpf_program__type(p) != BPF_PROG_TYPE_XDP)
			continue;
		err = bpf_program__set_flags(p, bpf_program__flags(p) | BPF_F_XDP_HAS_FRAGS);
		if (err)
			return err;
	}
	return 0;
}

/* Point the driver at @prog_fd, cycling @sources sources. */
int bench_set_target(struct bench_ref *drv, int prog_fd, __u32 sources)
{
	__u32 zero = 0;

	drv->bss->bench_mask = sources - 1;
	if (bpf_map_update_elem(bpf_map__fd(drv->maps.bench_jmp), &zero, &prog_fd, BPF_ANY))
		return -errno;
	return 0;
}

/* @reps repetitions of @f through the driver; the time per repetition in *wall. */
int bench_run_driver(struct bench_ref *drv, const struct bench_frame *f, __u32 reps, double *wall,
		     double *kern)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = f->len,
		    .repeat = reps);
	__u64 fail = drv->bss->bench_tail_fail;
	int err;

	drv->bss->bench_t0 = 0;
	err = bpf_prog_test_run_opts(bpf_program__fd(drv->progs.bench_driver), &opts);
	if (err)
		return -errno;
	if (drv->bss->bench_tail_fail != fail) {
		fprintf(stderr, "rl-bench: the driver's tail call failed\n");
		return -EINVAL;
	}
	if (wall) {
		if (drv->bss->bench_n1 <= drv->bss->bench_n0) {
			fprintf(stderr, "rl-bench: too few repetitions to time (%u)\n", reps);
			return -EINVAL;
		}
		*wall = (double)(drv->bss->bench_t1 - drv->bss->bench_t0) /
			(double)(drv->bss->bench_n1 - drv->bss->bench_n0);
	}
	if (kern)
		*kern = opts.duration;
	return 0;
}
