// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench syncookie: the per-packet cost of the SYN-cookie path
 * (bpf/syncookie.h) against the per-source path, as ratios within each
 * round (bench/micro.c's method: BPF_PROG_TEST_RUN through a driver that
 * samples the clock, the driver alone measured and subtracted, rounds in a
 * rotating order, the median of the per-round ratios).
 *
 * The driver is bench_restore (bench/bpf/bench_ref.bpf.c): a SYN is answered
 * in place, so each repetition first writes the frame back. The frames are
 * IPv4 from one source (198.18.0.1:40000 to 198.18.0.2:22):
 *	per-source	an ACK to port 22, SYN cookies off: the reference;
 *	SYN answered	the SYN (MSS, SACK, timestamps, window scale: 74 bytes), XDP_TX;
 *	ACK checked	the ACK that brings its cookie back: socket lookup, cookie
 *			check, then the per-source step;
 *	bad ACK		an ACK with a wrong cookie: lookup, check, dropped;
 *	other TCP	an ACK to port 80 with SYN cookies on port 22;
 *	UDP		a UDP frame with SYN cookies on: what the step costs the rest.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "bench_ref.skel.h"
#include "config.h"
#include "maps.h"
#include "prog.h"
#include "rl_skel.h"

#define MAX_ROUNDS 64

struct sc_target {
	const char *name;
	int prog_fd; /* -1: bench_nop (the driver alone) */
	unsigned char frame[128];
	__u32 len;
	double wall[MAX_ROUNDS];
	int expect; /* the verdict every repetition must give */
};

static void put16(unsigned char *p, unsigned int v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static void put32(unsigned char *p, __u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/* An IPv4/TCP frame 198.18.0.1:40000 -> 198.18.0.2:@dport (checksums left 0: not checked). */
static __u32 tcp_frame(unsigned char *f, unsigned int dport, __u8 flags, __u32 seq, __u32 ack,
		       bool opts)
{
	static const unsigned char o[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0,
					     0, 1, 0,	 0,    0, 0, 1, 3,  3, 7 };
	unsigned int tlen = opts ? 40 : 20;

	memset(f, 0, 128);
	memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00", 14);
	f[14] = 0x45;
	put16(f + 16, 20 + tlen);
	f[22] = 64;
	f[23] = 6;
	memcpy(f + 26, "\xc6\x12\x00\x01\xc6\x12\x00\x02", 8);
	put16(f + 34, 40000);
	put16(f + 36, dport);
	put32(f + 38, seq);
	put32(f + 42, ack);
	f[46] = (unsigned char)((tlen / 4) << 4);
	f[47] = flags;
	put16(f + 48, 64240);
	if (opts)
		memcpy(f + 54, o, sizeof(o));
	return 14 + 20 + tlen;
}

static int run(struct bench_ref *drv, const struct sc_target *t, __u32 reps, double *wall,
	       int *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = t->frame, .data_size_in = t->len,
		    .repeat = reps);
	__u64 fail = drv->bss->bench_tail_fail;

	memset(drv->bss->bench_tmpl, 0, sizeof(drv->bss->bench_tmpl));
	memcpy(drv->bss->bench_tmpl, t->frame, t->len);
	drv->bss->bench_tmpl_len = t->len;
	drv->bss->bench_t0 = 0;
	if (bpf_prog_test_run_opts(bpf_program__fd(drv->progs.bench_restore), &o))
		return -errno;
	if (drv->bss->bench_tail_fail != fail || drv->bss->bench_n1 <= drv->bss->bench_n0) {
		fprintf(stderr,
			"rl-bench syncookie: the driver's tail call failed, or too few reps\n");
		return -EINVAL;
	}
	*wall = (double)(drv->bss->bench_t1 - drv->bss->bench_t0) /
		(double)(drv->bss->bench_n1 - drv->bss->bench_n0);
	if (retval)
		*retval = (int)o.retval;
	return 0;
}

static int point(struct bench_ref *drv, const struct sc_target *t)
{
	int fd = t->prog_fd >= 0 ? t->prog_fd : bpf_program__fd(drv->progs.bench_nop);

	return bench_set_target(drv, fd, 1);
}

/* The cookie @syn's SYN-ACK carries, from one run of the program itself. */
static int cookie_of(int prog_fd, const struct sc_target *syn, __u32 *cookie)
{
	unsigned char out[256];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = syn->frame, .data_size_in = syn->len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -errno;
	if (o.retval != XDP_TX || o.data_size_out < 54)
		return -EINVAL;
	*cookie = (__u32)out[38] << 24 | (__u32)out[39] << 16 | (__u32)out[40] << 8 | out[41];
	return 0;
}

int bench_syncookie(int argc, char **argv)
{
	static const char *const off_args[] = { "--rate", "1gpps", "--burst", "1000000000", NULL };
	static const char *const on_args[] = { "--rate",	"1gpps", "--burst", "1000000000",
					       "--syn-cookies", "22",	 NULL };
	struct xdp_ratelimit *off = NULL, *on = NULL;
	struct sc_target t[7] = {};
	struct bench_ref *drv = NULL;
	struct rl_config c_off, c_on;
	const char *out = NULL, *only = NULL;
	int rounds = 9, err = 0, nt = 7, v;
	__u32 reps = 1000000, cookie = 0;
	bool quick = false;
	FILE *md = NULL, *raw = NULL;

	if (bench_parse_args("syncookie", argc, argv, &out, &rounds, &reps, &quick, &only))
		return 2;
	if (quick) {
		rounds = rounds > 3 ? 3 : rounds;
		reps = reps > 200000 ? 200000 : reps;
	}
	if (!out || rounds < 1 || rounds > MAX_ROUNDS || reps < 8192) {
		fprintf(stderr, "rl-bench syncookie: needs --out DIR, 1-%d rounds, reps >= 8192\n",
			MAX_ROUNDS);
		return 2;
	}
	mkdir(out, 0755);
	if (bench_config(&c_off, off_args) || bench_config(&c_on, on_args))
		return 1;
	off = bench_limiter(&c_off, 1024, 1024);
	on = bench_limiter(&c_on, 1024, 1024);
	drv = bench_ref__open();
	if (!off || !on || !drv || bench_frags(drv->obj) || bench_ref__load(drv)) {
		fprintf(stderr, "rl-bench syncookie: couldn't load the programs\n");
		err = -EINVAL;
		goto done;
	}
	t[0] = (struct sc_target){ .name = "driver alone", .prog_fd = -1, .expect = XDP_DROP };
	t[0].len = tcp_frame(t[0].frame, 22, 0x10, 1001, 1, false);
	t[1] = (struct sc_target){ .name = "per-source (ACK, SYN cookies off)",
				   .prog_fd = rl_prog_fd(off),
				   .expect = XDP_PASS };
	t[1].len = tcp_frame(t[1].frame, 22, 0x10, 1001, 1, false);
	t[2] = (struct sc_target){ .name = "SYN answered",
				   .prog_fd = rl_prog_fd(on),
				   .expect = XDP_TX };
	t[2].len = tcp_frame(t[2].frame, 22, 0x02, 1000, 0, true);
	err = cookie_of(rl_prog_fd(on), &t[2], &cookie);
	if (err) {
		fprintf(stderr, "rl-bench syncookie: the SYN was not answered: %s\n",
			strerror(-err));
		goto done;
	}
	t[3] = (struct sc_target){ .name = "ACK checked (valid cookie)",
				   .prog_fd = rl_prog_fd(on),
				   .expect = XDP_PASS };
	t[3].len = tcp_frame(t[3].frame, 22, 0x10, 1001, cookie + 1, false);
	t[4] = (struct sc_target){ .name = "ACK with a bad cookie",
				   .prog_fd = rl_prog_fd(on),
				   .expect = XDP_DROP };
	t[4].len = tcp_frame(t[4].frame, 22, 0x10, 1001, cookie + 2, false);
	t[5] = (struct sc_target){ .name = "ACK to another port (cookies on 22)",
				   .prog_fd = rl_prog_fd(on),
				   .expect = XDP_PASS };
	t[5].len = tcp_frame(t[5].frame, 80, 0x10, 1001, 1, false);
	t[6] = (struct sc_target){ .name = "UDP (cookies on)",
				   .prog_fd = rl_prog_fd(on),
				   .expect = XDP_PASS };
	t[6].len = tcp_frame(t[6].frame, 53, 0, 0, 0, false);
	t[6].frame[23] = 17; /* UDP: the TCP bytes are its header and payload */
	raw = bench_out(out, "syncookie-raw.tsv", "w");
	md = bench_out(out, "syncookie.md", "w");
	if (!raw || !md) {
		err = -EIO;
		goto done;
	}
	fprintf(raw, "# round\tprogram\twall_ns_per_run\n");
	bench_pin_cpu(1);
	bench_rt(true);
	/* Every path gives its verdict first (one repetition each, through the driver). */
	for (int i = 0; i < nt && !err; i++) {
		double w;

		err = point(drv, &t[i]) ?: run(drv, &t[i], 8192, &w, &v);
		if (!err && v != t[i].expect) {
			fprintf(stderr, "rl-bench syncookie: %s: verdict %d, expected %d\n",
				t[i].name, v, t[i].expect);
			err = -EINVAL;
		}
	}
	for (int r = 0; r < rounds && !err; r++)
		for (int j = 0; j < nt && !err; j++) {
			struct sc_target *x = &t[(j + r * 3) % nt];

			err = point(drv, x) ?: run(drv, x, reps, &x->wall[r], NULL);
			fprintf(raw, "%d\t%s\t%.3f\n", r, x->name, x->wall[r]);
		}
	bench_rt(false);
	if (err)
		goto done;
	fprintf(md,
		"# SYN cookies: per-packet cost against the per-source path\n\n"
		"%d rounds of %u repetitions, one source, IPv4, the programs in a rotating order;\n"
		"net = ns per run less the driver's in the same round; ratio = net / the per-source\n"
		"path's net in the same round, median (min-max) over the rounds.\n\n"
		"| path | net ns (median) | x per-source |\n|---|---|---|\n",
		rounds, reps);
	for (int i = 1; i < nt; i++) {
		double net[MAX_ROUNDS], ratio[MAX_ROUNDS];

		for (int r = 0; r < rounds; r++) {
			net[r] = t[i].wall[r] - t[0].wall[r];
			ratio[r] = net[r] / (t[1].wall[r] - t[0].wall[r]);
		}
		fprintf(md, "| %s | %.1f | %.2f (%.2f-%.2f) |\n", t[i].name,
			bench_median(net, rounds), bench_median(ratio, rounds),
			bench_min(ratio, rounds), bench_max(ratio, rounds));
	}
	{
		double d[MAX_ROUNDS];

		for (int r = 0; r < rounds; r++)
			d[r] = t[0].wall[r];
		fprintf(md, "\nThe driver alone (restore the frame, tail call, drop): %.1f ns.\n",
			bench_median(d, rounds));
	}
done:
	if (raw)
		fclose(raw);
	if (md)
		fclose(md);
	bench_ref__destroy(drv);
	if (on)
		rl_prog_destroy(on);
	if (off)
		rl_prog_destroy(off);
	return err ? 1 : 0;
}
