// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl-bench spread: why a larger rl_sets4 costs more per packet with the same
 * sources (issue #30), on this machine's caches and MMU, without BPF.
 *
 * The IPv4 table's access pattern in userspace: N sources (1M; 256k with
 * --quick), each hashed with the table's own hash (rl_sa_hash()) to one
 * 64-byte line, as to a set of rl_sets4; for each packet, in the driver's
 * scrambled order (bench_ref.bpf.c), a compare-and-swap on that line (the
 * packet path's one atomic operation, which also keeps one packet's miss
 * from overlapping the next's, as in the program). Cases, interleaved in
 * rounds:
 *
 *	natural, 2^19 to 2^23 sets (a table for --max-sources 1M to 9M): the
 *	  sources land on more distinct lines as the table grows (1M sources
 *	  in 2^19 sets share about 453k lines, in 2^23 nearly 1M), and on
 *	  more pages (8,192 to 131,072 of 4 KiB);
 *	the 2^19 sets' lines, 16 lines apart: the same distinct lines as 2^19
 *	  in the same order, spread over 512 MiB, as many pages as 2^23
 *	  touches: what the pages alone cost (TLB misses, page walks);
 *	each natural case again with 2 MiB pages (MADV_HUGEPAGE, checked in
 *	  smaps): what huge pages would change, were the kernel to map BPF
 *	  arrays with them (it does not: vmalloc, 4 KiB; in a VM the host's
 *	  pages count too).
 *
 * Regions use 4 KiB pages (MADV_NOHUGEPAGE) but those of the last case.
 * ns per packet is the median over rounds; each case's ratio to the 2^19
 * sets with the same pages is taken within each round, then its median.
 *
 *	rl-bench spread --out DIR [--rounds N] [--reps N] [--quick]
 *
 * DIR/spread.md is the table, DIR/spread.dat its figures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/types.h>
#include "bench.h"
#include "rl_sa.h"

#define HUGE_2M	      (2UL << 20)
#define SP_BITS0      19
#define SP_NBITS      5
#define SP_MAX_ROUNDS 64
/* The cases: SP_NBITS natural, the 2^19 sets' lines spread, SP_NBITS with 2 MiB pages. */
#define SP_SPREAD (SP_NBITS)
#define SP_CASES  (2 * SP_NBITS + 1)

struct region {
	__u64 *mem; /* 64-byte lines */
	void *map;
	size_t len, maplen;
	__u32 bits; /* log2 of the sets the hash picks from */
	__u32 shift; /* a set's line is (set << shift): 0, or 4 for 16 lines apart */
	bool huge;
	double huge_share; /* of the region, in 2 MiB pages (smaps' AnonHugePages) */
	double ns[SP_MAX_ROUNDS];
};

/* AnonHugePages of the mapping that holds @addr, in bytes (/proc/self/smaps). */
static unsigned long long anon_huge(const void *addr)
{
	unsigned long long lo, hi, kb = 0;
	char line[512];
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2) {
			in = (unsigned long long)(unsigned long)addr >= lo &&
			     (unsigned long long)(unsigned long)addr < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb * 1024;
}

static int region_make(struct region *r, __u32 bits, __u32 shift, bool huge)
{
	char *p;

	memset(r, 0, sizeof(*r));
	r->bits = bits;
	r->shift = shift;
	r->huge = huge;
	r->len = (size_t)64 << (bits + shift);
	r->maplen = r->len + HUGE_2M;
	r->map = mmap(NULL, r->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->map == MAP_FAILED)
		return -errno;
	/* 2 MiB aligned, so that every part of it can be a huge page. */
	p = (char *)(((unsigned long)r->map + HUGE_2M - 1) & ~(HUGE_2M - 1));
	r->mem = (__u64 *)p;
	if (madvise(p, r->len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		return -errno;
	memset(p, 0, r->len); /* every page present before measuring */
	r->huge_share = (double)anon_huge(p) / (double)r->len;
	return 0;
}

static void region_free(struct region *r)
{
	if (r->map && r->map != MAP_FAILED)
		munmap(r->map, r->maplen);
	r->map = NULL;
}

/*
 * @reps packets over @n sources (a power of two) on @r, from packet @start
 * on: ns per packet.
 */
static double run(const struct region *r, __u32 n, __u32 reps, __u64 start)
{
	__u32 mask = (1U << r->bits) - 1;
	__u64 t0 = bench_now(), t1;

	for (__u64 i = start; i < start + reps; i++) {
		/*
		 * The driver's order (bench_ref.bpf.c), the table's hash and set,
		 * under a fixed key (attach draws one at random: any spreads alike).
		 */
		__u32 src = (__u32)(i * 0x9e3779b1U) & (n - 1);
		__u32 h = rl_sa_hash(BENCH_WIDE4 + src, 1, 0x243f6a8885a308d3ULL);
		__u64 *w = &r->mem[((size_t)(h & mask) << r->shift) * 8];
		__u64 old = __atomic_load_n(w, __ATOMIC_RELAXED);

		__atomic_compare_exchange_n(w, &old, old + 1, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	}
	t1 = bench_now();
	return (double)(t1 - t0) / reps;
}

/* Case @c's region: natural 2^(SP_BITS0 + c), the spread one, or natural with 2 MiB pages. */
static int case_make(struct region *r, int c)
{
	if (c < SP_NBITS)
		return region_make(r, SP_BITS0 + (__u32)c, 0, false);
	if (c == SP_SPREAD)
		return region_make(r, SP_BITS0, SP_NBITS - 1, false);
	return region_make(r, SP_BITS0 + (__u32)(c - SP_NBITS - 1), 0, true);
}

/* The case of the same pages with 2^19 sets: what @c's ratio is to. */
static int case_base(int c)
{
	return c > SP_SPREAD ? SP_SPREAD + 1 : 0;
}

int bench_spread(int argc, char **argv)
{
	static struct region reg[SP_CASES];
	const char *out = NULL, *only = NULL;
	int rounds = 9, err = 0;
	__u32 reps = 2000000, n;
	bool quick = false;
	FILE *md = NULL, *dat = NULL;

	if (bench_parse_args("spread", argc, argv, &out, &rounds, &reps, &quick, &only))
		return 2;
	if (!out || rounds < 1 || rounds > SP_MAX_ROUNDS || !reps) {
		fprintf(stderr, "rl-bench spread: needs --out DIR, 1-%d rounds, reps > 0\n",
			SP_MAX_ROUNDS);
		return 2;
	}
	mkdir(out, 0755);
	n = quick ? 1U << 18 : 1U << 20;
	bench_pin_cpu(1);
	for (int c = 0; c < SP_CASES && !err; c++)
		err = case_make(&reg[c], c);
	if (err) {
		fprintf(stderr, "rl-bench spread: couldn't map the regions: %s\n", strerror(-err));
		goto out;
	}
	/* Warm: every line of every region the pattern reaches, touched once. */
	for (int c = 0; c < SP_CASES; c++)
		run(&reg[c], n, n, 0);
	for (int r = 0; r < rounds; r++)
		for (int j = 0; j < SP_CASES; j++) {
			struct region *x = &reg[(j + r * 3) % SP_CASES];

			x->ns[r] = run(x, n, reps, (__u64)r * reps);
		}
	md = bench_out(out, "spread.md", "w");
	dat = md ? bench_out(out, "spread.dat", "w") : NULL;
	if (!md || !dat) {
		err = -errno;
		goto out;
	}
	fprintf(md,
		"| case | region | pages | ns / packet | x 2^%d sets, same pages |\n"
		"|---|---|---|---|---|\n",
		SP_BITS0);
	fprintf(dat, "# case\tbits\tmib\thuge\tns\tx\n");
	for (int c = 0; c < SP_CASES; c++) {
		double v[SP_MAX_ROUNDS], q[SP_MAX_ROUNDS], ns, x;
		const struct region *b = &reg[case_base(c)];
		char what[96];

		for (int r = 0; r < rounds; r++) {
			v[r] = reg[c].ns[r];
			q[r] = reg[c].ns[r] / b->ns[r];
		}
		ns = bench_median(v, rounds);
		x = bench_median(q, rounds);
		if (c == SP_SPREAD)
			snprintf(what, sizeof(what), "the 2^%u sets' lines, 16 apart", reg[c].bits);
		else
			snprintf(what, sizeof(what), "2^%u sets", reg[c].bits);
		fprintf(md, "| %s | %zu MiB | %s | %.1f | %.2f |\n", what, reg[c].len >> 20,
			reg[c].huge ? "2 MiB" : "4 KiB", ns, x);
		fprintf(dat, "%d\t%u\t%zu\t%d\t%.2f\t%.4f\n", c, reg[c].bits, reg[c].len >> 20,
			reg[c].huge, ns, x);
		if (reg[c].huge && reg[c].huge_share < 0.9)
			fprintf(md, "\n(only %.0f%% of that region in 2 MiB pages)\n",
				100 * reg[c].huge_share);
	}
	fprintf(md, "\n%u sources, %d rounds of %u packets, pinned to CPU 1.\n", n, rounds, reps);
out:
	if (md)
		fclose(md);
	if (dat)
		fclose(dat);
	for (int c = 0; c < SP_CASES; c++)
		region_free(&reg[c]);
	return err ? 1 : 0;
}
