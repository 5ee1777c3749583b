/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rl-bench: what the phases share (bench/common.c), and the phases that
 * bench/main.c runs. A phase calls common.c only, never another phase.
 */
#ifndef RL_BENCH_H
#define RL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "rl_common.h"

struct xdp_ratelimit;

/*
 * A test frame. Sources come from the benchmarking ranges: IPv4
 * 198.18.0.0/15 (RFC 2544) and IPv6 2001:2::/48 (RFC 5180). The one
 * exception: more IPv4 sources than 198.18.0.0/15 holds come from
 * 10.0.0.0/8 (BENCH_WIDE4), in BPF_PROG_TEST_RUN frames only, which are
 * never sent on any interface.
 */
#define BENCH_NET4	 0xc6120000U /* 198.18.0.0/15, host order */
#define BENCH_NET4_SIZE	 (1U << 17)
#define BENCH_WIDE4	 0x0a000000U /* 10.0.0.0/8: test_run frames only */
#define BENCH_WIDE4_SIZE (1U << 24)

struct bench_frame {
	unsigned char data[1514];
	__u32 len;
	__u32 src_off; /* offset of the last 32-bit word of the source address */
	__u32 src_base; /* that word for source 0, host order */
};

/* IPv6/UDP from 2001:2::1:0 to 2001:2::2, @len bytes (at least 62). */
void bench_frame_ipv6(struct bench_frame *f, __u32 len);
/* IPv4/UDP from 198.18.0.1 to 198.18.0.2, @len bytes (at least 42). */
void bench_frame_ipv4(struct bench_frame *f, __u32 len);
/* The same with a TCP header (ACK) from port 40000 to port 9, @len bytes (at least 54). */
void bench_frame_ipv4_tcp(struct bench_frame *f, __u32 len);

/*
 * A configuration from policy and attach options as the CLI takes them, a
 * NULL-terminated list ("--rate", "10", ..., NULL).
 */
int bench_config(struct rl_config *cfg, const char *const *args);
/* The same, as set builds it: the next generation after the live @prev. */
int bench_config_next(struct rl_config *cfg, const char *const *args, const struct rl_config *prev);
/*
 * xdp_ratelimit loaded (real clock) for @cfg, with rl_state4 sized @max4 and
 * rl_sets6 for @max6 (a table is allocated whole: size the unused one small).
 */
struct xdp_ratelimit *bench_limiter(const struct rl_config *cfg, __u32 max4, __u32 max6);
/*
 * The same built with the rules @rules compiled in (rl_rules_compile()),
 * their maps at the size they need; the caller fills the tries.
 */
struct rl_rules_cfg;
struct xdp_ratelimit *bench_limiter_rules(const struct rl_config *cfg, __u32 max4, __u32 max6,
					  const struct rl_rules_cfg *rules);
/* Its counters summed over CPUs. */
int bench_counters(struct xdp_ratelimit *skel, struct rl_counters *sum);

/* CLOCK_MONOTONIC in ns: the clock bpf_ktime_get_ns() reads. */
__u64 bench_now(void);
int bench_pin_cpu(int cpu);
/* SCHED_FIFO for the calling thread (so test_run is not preempted by other tasks); 0 or -errno. */
int bench_rt(bool on);
/* Median and minimum of @n values (sorts @v). */
double bench_median(double *v, int n);
double bench_min(const double *v, int n);
double bench_max(const double *v, int n);
/*
 * @dir/@name opened with @mode, for a result file. On failure it names the
 * file and the error on stderr and returns NULL, with errno kept.
 */
FILE *bench_out(const char *dir, const char *name, const char *mode);
/* The value after "@key:" in /proc/self/fdinfo/@fd, or 0. */
__u64 bench_fdinfo(int fd, const char *key);

/*
 * test_run of an XDP program that is attached nowhere adds it to the kernel's
 * XDP dispatcher and removes it again, each time: milliseconds per call here.
 * With --ifname, a program is attached (native mode) to that interface, one
 * without traffic in a namespace that run.sh makes, while it is measured.
 */
extern int bench_ifindex;
struct bpf_program;
struct bpf_link;
/* NULL with no --ifname, or on failure (with a message; *err set). */
struct bpf_link *bench_attach(struct bpf_program *prog, int *err);

/*
 * bench_ref's driver (bench/bpf/bench_ref.bpf.c), for micro and setassoc:
 * point it at @prog_fd with @sources sources (a power of two), and run it
 * @reps times on @f: ns per repetition from its clock samples in *@wall,
 * test_run's duration in *@kern (either may be NULL). 0 or -errno.
 */
struct bench_ref;
int bench_set_target(struct bench_ref *drv, int prog_fd, __u32 sources);
/*
 * Mark every XDP program of @obj xdp.frags when the product's are
 * (user/lib/prog.c): a tail call joins only programs alike. Before the load.
 */
struct bpf_object;
int bench_frags(struct bpf_object *obj);
int bench_run_driver(struct bench_ref *drv, const struct bench_frame *f, __u32 reps, double *wall,
		     double *kern);

/*
 * A phase's options, with getopt_long: bench_opts_begin(), then
 * bench_next_opt() until -1. It returns an option's val (optarg its value),
 * or '?' after a message naming @cmd and the bad word (unknown, a missing
 * value, a word that is not an option).
 */
struct option;
void bench_opts_begin(void);
int bench_next_opt(const char *cmd, int argc, char **argv, const struct option *opts);
/*
 * The options rl-bench micro and setassoc share: --out DIR, --rounds N,
 * --reps N, --quick, --only LIST. Leaves what is not given as it was.
 * 0, or -EINVAL with a message naming @cmd.
 */
int bench_parse_args(const char *cmd, int argc, char **argv, const char **out, int *rounds,
		     __u32 *reps, bool *quick, const char **only);

/* The phases (bench/main.c's table), each its own file: argv[0] is the phase's name. */
int bench_micro(int argc, char **argv);
int bench_accuracy(int argc, char **argv);
int bench_gen(int argc, char **argv);
int bench_setassoc(int argc, char **argv);
/* rl-bench syncookie: the SYN-cookie path against the per-source one (bench/syncookie.c). */
int bench_syncookie(int argc, char **argv);
/* rl-bench sync-cost: one node's round trip with N sources (bench/sync_cost.c). */
int bench_sync_cost(int argc, char **argv);
/* rl-bench fill: N sources into the limiter attached to an interface (bench/fill.c). */
int bench_fill(int argc, char **argv);
/* rl-bench sync-kernel: the drain and charge of N sources (bench/sync_kernel.c). */
int bench_sync_kernel(int argc, char **argv);
/* rl-bench spread: the IPv4 table's access pattern, lines against pages (bench/spread.c). */
int bench_spread(int argc, char **argv);

#endif /* RL_BENCH_H */
