// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Policy options: one parser for every command, and the translation of a
 * policy into the fixed-point parameters the packet path uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "policy.h"

typedef unsigned __int128 u128;

#define NSEC_PER_SEC 1000000000ULL
/* Rates are kept as num/den with at most 9 decimals. */
#define RATE_MAX_DECIMALS 9

static const char *const algo_names[RL_ALGO__COUNT] = {
	[RL_ALGO_TOKEN_BUCKET] = "token-bucket",
	[RL_ALGO_GCRA] = "gcra",
	[RL_ALGO_FIXED_WINDOW] = "fixed-window",
	[RL_ALGO_SLIDING_WINDOW] = "sliding-window",
};

const char *rl_algo_name(enum rl_algo algo)
{
	return (unsigned int)algo < RL_ALGO__COUNT ? algo_names[algo] : "unknown";
}

void rl_policy_defaults(struct rl_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->algo = RL_ALGO_TOKEN_BUCKET;
	pol->rate_den = 1;
	pol->window_ns = NSEC_PER_SEC;
	pol->prefix4 = 32;
	pol->prefix6 = 64;
}

static __u64 gcd64(__u64 a, __u64 b)
{
	while (b) {
		__u64 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

int rl_parse_algo(const char *s, enum rl_algo *algo, char *err, size_t errlen)
{
	for (int i = 0; i < RL_ALGO__COUNT; i++) {
		if (!strcmp(s, algo_names[i])) {
			*algo = i;
			return 0;
		}
	}
	snprintf(err, errlen,
		 "unknown algorithm '%s' (token-bucket, gcra, fixed-window, sliding-window)", s);
	return -EINVAL;
}

/*
 * "123", "1.5", "0.000000001": a decimal number as mantissa / 10^decimals,
 * without passing through a double. *end points past the number.
 */
static int parse_decimal(const char *s, __u64 *mant, unsigned int *decimals, const char **end)
{
	__u64 m = 0;
	unsigned int d = 0, digits = 0;
	bool frac = false;

	for (; *s; s++) {
		if (*s == '.' && !frac) {
			frac = true;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		if (frac && ++d > RATE_MAX_DECIMALS)
			return -ERANGE;
		if (m > (~0ULL - 9) / 10)
			return -ERANGE;
		m = m * 10 + (__u64)(*s - '0');
		digits++;
	}
	if (!digits)
		return -EINVAL;
	*mant = m;
	*decimals = d;
	*end = s;
	return 0;
}

static __u64 pow10u(unsigned int n)
{
	__u64 v = 1;

	while (n--)
		v *= 10;
	return v;
}

struct unit {
	const char *name;
	__u64 mult;	/* cost units per second, times den_mult */
	__u64 den_mult; /* 8 for bit rates: the cost unit is a byte */
	bool bytes;
};

static const struct unit rate_units[] = {
	{ "", 1, 1, false },		{ "pps", 1, 1, false },
	{ "kpps", 1000, 1, false },	{ "mpps", 1000000, 1, false },
	{ "bit", 1, 8, true },		{ "kbit", 1000, 8, true },
	{ "mbit", 1000000, 8, true },	{ "gbit", 1000000000, 8, true },
	{ "tbit", 1000000000000ULL, 8, true },
	{ "byte", 1, 1, true },		{ "kbyte", 1000, 1, true },
	{ "mbyte", 1000000, 1, true },	{ "gbyte", 1000000000, 1, true },
};

int rl_parse_rate(const char *s, __u64 *num, __u64 *den, bool *bytes, char *err, size_t errlen)
{
	const char *end;
	unsigned int dec;
	__u64 mant, g;
	u128 n, d;
	size_t i;
	int ret;

	ret = parse_decimal(s, &mant, &dec, &end);
	if (ret == -ERANGE) {
		snprintf(err, errlen, "'%s' is too long (at most 9 decimals, 19 digits)", s);
		return -EINVAL;
	}
	if (ret) {
		snprintf(err, errlen, "'%s' is not a rate (examples: 10, 2.5, 10kpps, 100mbit)", s);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(rate_units) / sizeof(rate_units[0]); i++)
		if (!strcasecmp(end, rate_units[i].name))
			break;
	if (i == sizeof(rate_units) / sizeof(rate_units[0])) {
		snprintf(err, errlen,
			 "unknown rate unit '%s' in '%s' (pps, kpps, mpps, bit, kbit, mbit, gbit, tbit, byte, kbyte, mbyte, gbyte)",
			 end, s);
		return -EINVAL;
	}
	if (!mant) {
		snprintf(err, errlen, "rate '%s' is zero; to drop everything use a firewall", s);
		return -EINVAL;
	}
	n = (u128)mant * rate_units[i].mult;
	d = (u128)pow10u(dec) * rate_units[i].den_mult;
	g = gcd64((__u64)(n % d), (__u64)d);
	g = g ? g : (__u64)d;
	n /= g;
	d /= g;
	if (n > ~0ULL) {
		snprintf(err, errlen, "rate '%s' is too large", s);
		return -EINVAL;
	}
	*num = (__u64)n;
	*den = (__u64)d;
	*bytes = rate_units[i].bytes;
	return 0;
}

static const struct {
	const char *name;
	__u64 ns;
} time_units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "ms", 1000000 },
	{ "s", NSEC_PER_SEC },
	{ "m", 60 * NSEC_PER_SEC },
	{ "h", 3600 * NSEC_PER_SEC },
};

int rl_parse_duration(const char *s, __u64 *ns, char *err, size_t errlen)
{
	const char *end;
	unsigned int dec;
	__u64 mant;
	size_t i;
	u128 v;

	if (parse_decimal(s, &mant, &dec, &end)) {
		snprintf(err, errlen, "'%s' is not a duration (examples: 1s, 100ms, 250us)", s);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++)
		if (!strcmp(end, time_units[i].name))
			break;
	if (i == sizeof(time_units) / sizeof(time_units[0])) {
		snprintf(err, errlen, "'%s' needs a unit: ns, us, ms, s, m or h", s);
		return -EINVAL;
	}
	v = (u128)mant * time_units[i].ns;
	if (v % pow10u(dec)) {
		snprintf(err, errlen, "'%s' is not a whole number of nanoseconds", s);
		return -EINVAL;
	}
	v /= pow10u(dec);
	if (v > ~0ULL) {
		snprintf(err, errlen, "'%s' is too long", s);
		return -EINVAL;
	}
	*ns = (__u64)v;
	return 0;
}

int rl_parse_u64(const char *s, __u64 min, __u64 max, __u64 *val, char *err, size_t errlen)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9') {
		snprintf(err, errlen, "'%s' is not a whole number", s);
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end) {
		snprintf(err, errlen, "'%s' is not a whole number", s);
		return -EINVAL;
	}
	if (errno == ERANGE || v < min || v > max) {
		snprintf(err, errlen, "%s is out of range (%llu to %llu)", s,
			 (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*val = v;
	return 0;
}

/* ceil(rate x 1 s), the default burst, at least one packet or one full frame. */
static __u64 default_burst(const struct rl_policy *pol)
{
	__u64 b = (pol->rate_num + pol->rate_den - 1) / pol->rate_den;
	__u64 floor = pol->bytes ? 1522 : 1;

	return b < floor ? floor : b;
}

static int bucket_params(struct rl_params *p, const struct rl_policy *pol, char *err,
			 size_t errlen)
{
	/* Rate per ns in cost units: rate_num / D. */
	u128 d = (u128)pol->rate_den * NSEC_PER_SEC;
	__u64 burst = pol->burst_set ? pol->burst : default_burst(pol);
	__u64 maxcost = pol->bytes ? RL_MAX_FRAME : 1;
	__u64 g, u0;
	u128 c, tau, h;

	if (pol->window_set) {
		snprintf(err, errlen,
			 "--window has no meaning for %s (it sets the window of fixed-window and sliding-window)",
			 rl_algo_name(pol->algo));
		return -EINVAL;
	}
	g = gcd64(pol->rate_num, (__u64)(d % pol->rate_num));
	g = g ? g : pol->rate_num;
	u0 = pol->rate_num / g;
	c = d / g;
	if (u0 == 1 || c == 1) {
		/*
		 * Exact: a cost unit lasts a whole number of ns (u0 = 1, vt is
		 * the ns), or above 10^9 cost units per second a whole number of
		 * vt per ns (c = 1: 400 Gbit/s is 50 bytes per ns).
		 */
		p->vt_mult = u0 << RL_VT_SHIFT;
		p->vt_int = u0;
		if (u0 > RL_VT_PER_NS_MAX)
			goto too_high;
	} else {
		/*
		 * The largest whole unit_cost with at most one vt per ns, so
		 * that vt wraps no sooner than the ns clock does; above 10^9
		 * cost units per second, unit_cost 1 and up to 128 vt per ns.
		 * vt_mult is rounded up: a source sending at its rate is never
		 * dropped, and any interval passes at most one tick more than
		 * the exact algorithm would.
		 */
		c = d / pol->rate_num;
		if (!c)
			c = 1;
		if ((u128)pol->rate_num * c > (u128)RL_VT_PER_NS_MAX * d)
			goto too_high;
		p->vt_mult = (__u64)((((u128)pol->rate_num * c << RL_VT_SHIFT) + d - 1) / d);
	}
	tau = c * burst;
	h = tau + c * maxcost;
	if (c > RL_AHEAD_LIMIT || h > RL_AHEAD_LIMIT) {
		snprintf(err, errlen,
			 "--burst %llu is too large for this rate: the bucket must empty within %llu s",
			 (unsigned long long)burst,
			 (unsigned long long)((u128)RL_AHEAD_LIMIT * pol->rate_den / pol->rate_num /
					      c));
		return -EINVAL;
	}
	if (pol->initial_set && pol->initial > burst) {
		snprintf(err, errlen, "--initial %llu is more than the burst (%llu)",
			 (unsigned long long)pol->initial, (unsigned long long)burst);
		return -EINVAL;
	}
	p->unit_cost = (__u64)c;
	p->tau = (__u64)tau;
	p->ahead_max = (__u64)h + RL_SKEW_VT;
	if (pol->algo == RL_ALGO_TOKEN_BUCKET)
		p->initial_ahead = (__u64)c * (burst - (pol->initial_set ? pol->initial : burst));
	else
		p->initial_ahead = (__u64)c * (pol->initial_set ? pol->initial : 0);
	return 0;
too_high:
	snprintf(err, errlen, "--rate is too high: at most 128000000000 packets or bytes per second");
	return -EINVAL;
}

static int window_params(struct rl_params *p, const struct rl_policy *pol, char *err,
			 size_t errlen)
{
	unsigned int counts = pol->algo == RL_ALGO_FIXED_WINDOW ? 1 : 2, shift, bits;
	__u64 maxcost = pol->bytes ? RL_MAX_FRAME : 1;
	u128 l = (u128)pol->rate_num * pol->window_ns;
	u128 d = (u128)pol->rate_den * NSEC_PER_SEC;

	if (pol->burst_set || pol->initial_set) {
		snprintf(err, errlen,
			 "%s has no meaning for %s (the limit per window is --rate x --window)",
			 pol->burst_set ? "--burst" : "--initial", rl_algo_name(pol->algo));
		return -EINVAL;
	}
	if (l % d) {
		snprintf(err, errlen,
			 "--rate x --window is not a whole number of %s; %s needs a whole limit per window",
			 pol->bytes ? "bytes" : "packets", rl_algo_name(pol->algo));
		return -EINVAL;
	}
	l /= d;
	if (!l) {
		snprintf(err, errlen, "--rate x --window is 0 %s: nothing would pass",
			 pol->bytes ? "bytes" : "packets");
		return -EINVAL;
	}
	/* A count reaches at most limit - 1 + the largest cost. */
	bits = l + maxcost - 1 > ~0ULL ? 65 : 64 - (unsigned int)__builtin_clzll((__u64)(l + maxcost - 1));
	if (counts * bits > 64 - RL_WIN_ID_BITS_MIN) {
		snprintf(err, errlen,
			 "--rate x --window is %llu, more than %s can count (at most %llu per window)",
			 (unsigned long long)l, rl_algo_name(pol->algo),
			 (unsigned long long)((1ULL << (64 - RL_WIN_ID_BITS_MIN) / counts) - maxcost));
		return -EINVAL;
	}
	shift = 63 - (unsigned int)__builtin_clzll(pol->window_ns);
	p->window_ns = pol->window_ns;
	p->win_shift = shift;
	p->win_magic = (__u64)((((u128)1 << (64 + shift)) - 1) / pol->window_ns);
	p->limit = (__u64)l;
	p->cnt_bits = bits;
	p->id_mask = ~0ULL >> (counts * bits);
	return 0;
}

int rl_params_init(struct rl_params *p, const struct rl_policy *pol, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (!pol->rate_set) {
		snprintf(err, errlen, "--rate is required");
		return -EINVAL;
	}
	/* One ceiling for every algorithm: what the bucket algorithms can represent. */
	if ((u128)pol->rate_num > (u128)RL_VT_PER_NS_MAX * pol->rate_den * NSEC_PER_SEC) {
		snprintf(err, errlen,
			 "--rate is too high: at most 128000000000 packets or bytes per second");
		return -EINVAL;
	}
	p->algo = pol->algo;
	p->bytes = pol->bytes;
	if (pol->algo == RL_ALGO_TOKEN_BUCKET || pol->algo == RL_ALGO_GCRA)
		return bucket_params(p, pol, err, errlen);
	return window_params(p, pol, err, errlen);
}

char *rl_rate_str(const struct rl_policy *pol, char *buf, size_t len)
{
	/* rate_num / rate_den with up to 9 decimals, trailing zeros cut. */
	__u64 whole = pol->rate_num / pol->rate_den;
	u128 frac = (u128)(pol->rate_num % pol->rate_den) * NSEC_PER_SEC / pol->rate_den;
	char f[16] = "";

	if (frac) {
		int n = snprintf(f, sizeof(f), ".%09llu", (unsigned long long)frac);

		while (n > 1 && f[n - 1] == '0')
			f[--n] = '\0';
	}
	snprintf(buf, len, "%llu%s %s", (unsigned long long)whole, f,
		 pol->bytes ? "bytes/s" : "pps");
	return buf;
}
