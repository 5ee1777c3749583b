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

/*
 * The largest debt fleet sync may charge into a bucket, in seconds of its rate:
 * what is in flight is at most two intervals of the other nodes' passes, 8 s
 * of the rate with 5 nodes at the longest interval (1 s).
 */
#define RL_SYNC_DEBT_S 10

typedef unsigned __int128 u128;

#define NSEC_PER_SEC 1000000000ULL
/* Rates are kept as num/den with at most 9 decimals. */
#define RATE_MAX_DECIMALS 9

const char *const rl_algo_names[RL_ALGO__COUNT + 1] = {
	[RL_ALGO_TOKEN_BUCKET] = "token-bucket",
	[RL_ALGO_GCRA] = "gcra",
	[RL_ALGO_FIXED_WINDOW] = "fixed-window",
	[RL_ALGO_SLIDING_WINDOW] = "sliding-window",
	[RL_ALGO__COUNT] = NULL,
};

const char *rl_algo_name(enum rl_algo algo)
{
	return (unsigned int)algo < RL_ALGO__COUNT ? rl_algo_names[algo] : "unknown";
}

void rl_policy_defaults(struct rl_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->algo = RL_ALGO_TOKEN_BUCKET;
	pol->rate_den = 1;
	pol->window_ns = NSEC_PER_SEC;
	pol->prefix4 = 32;
	pol->prefix6 = 64;
	pol->agg_prefix4 = pol->agg_prefix6 = -1;
	pol->agg.rate_den = pol->iface.rate_den = pol->admit.rate_den = 1;
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
	size_t off;

	for (int i = 0; i < RL_ALGO__COUNT; i++) {
		if (!strcmp(s, rl_algo_names[i])) {
			*algo = i;
			return 0;
		}
	}
	/* The names listed from the table, as completion and --help take them. */
	off = (size_t)snprintf(err, errlen, "unknown algorithm '%s' (", s);
	for (int i = 0; i < RL_ALGO__COUNT && off < errlen; i++)
		off += (size_t)snprintf(err + off, errlen - off, "%s%s", i ? ", " : "",
					rl_algo_names[i]);
	if (off < errlen)
		snprintf(err + off, errlen - off, ")");
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
	__u64 mult; /* cost units per second, times den_mult */
	__u64 den_mult; /* 8 for bit rates: the cost unit is a byte */
	bool bytes;
};

static const struct unit rate_units[] = {
	{ "", 1, 1, false },
	{ "pps", 1, 1, false },
	{ "kpps", 1000, 1, false },
	{ "mpps", 1000000, 1, false },
	{ "gpps", 1000000000, 1, false },
	/* nginx's "30r/m": requests, i.e. packets. */
	{ "r", 1, 1, false },
	{ "bit", 1, 8, true },
	{ "kbit", 1000, 8, true },
	{ "mbit", 1000000, 8, true },
	{ "gbit", 1000000000, 8, true },
	{ "tbit", 1000000000000ULL, 8, true },
	{ "byte", 1, 1, true },
	{ "kbyte", 1000, 1, true },
	{ "mbyte", 1000000, 1, true },
	{ "gbyte", 1000000000, 1, true },
};

/*
 * The period after a '/': iptables writes /second /minute /hour /day, nginx
 * r/s and r/m. Only a plain count takes a period other than a second: every
 * named unit (kpps, mbit, kbyte ...) is already per second, and "100mbit/m"
 * is more likely a typo than 1.67 Mbit/s.
 */
static const struct {
	const char *name;
	__u64 sec;
} rate_periods[] = {
	{ "s", 1 },	  { "sec", 1 },	    { "second", 1 },  { "m", 60 },
	{ "min", 60 },	  { "minute", 60 }, { "h", 3600 },    { "hr", 3600 },
	{ "hour", 3600 }, { "d", 86400 },   { "day", 86400 },
};

int rl_parse_rate(const char *s, __u64 *num, __u64 *den, bool *bytes, char *err, size_t errlen)
{
	char unit[16], *slash;
	const char *end;
	unsigned int dec;
	__u64 mant, g, period = 1;
	u128 n, d;
	size_t i;
	int ret;

	ret = parse_decimal(s, &mant, &dec, &end);
	if (ret == -ERANGE) {
		snprintf(err, errlen, "'%s' is too long (at most 9 decimals, 19 digits)", s);
		return -EINVAL;
	}
	if (ret) {
		snprintf(err, errlen,
			 "'%s' is not a rate (examples: 10, 2.5, 30/m, 10kpps, 100mbit)", s);
		return -EINVAL;
	}
	if (strlen(end) >= sizeof(unit))
		goto bad_unit;
	strcpy(unit, end);
	slash = strchr(unit, '/');
	if (slash) {
		*slash++ = '\0';
		for (i = 0; i < sizeof(rate_periods) / sizeof(rate_periods[0]); i++)
			if (!strcasecmp(slash, rate_periods[i].name))
				break;
		if (i == sizeof(rate_periods) / sizeof(rate_periods[0])) {
			snprintf(
				err, errlen,
				"unknown period '/%s' in '%s' (/s, /m, /min, /h, /hr, /d: /second, /minute, /hour, /day)",
				slash, s);
			return -EINVAL;
		}
		period = rate_periods[i].sec;
	}
	for (i = 0; i < sizeof(rate_units) / sizeof(rate_units[0]); i++)
		if (!strcasecmp(unit, rate_units[i].name))
			break;
	if (i == sizeof(rate_units) / sizeof(rate_units[0]))
		goto bad_unit;
	if (period != 1 && rate_units[i].bytes) {
		snprintf(
			err, errlen,
			"'%s': byte rates are per second; give packets per minute or hour (30/m), or a byte rate per second",
			s);
		return -EINVAL;
	}
	if (period != 1 && unit[0] && strcasecmp(unit, "r")) {
		snprintf(
			err, errlen,
			"'%s': %s is already per second; only a plain count takes /m, /h or /d (30/m)",
			s, unit);
		return -EINVAL;
	}
	if (!mant) {
		snprintf(err, errlen, "rate '%s' is zero; to drop everything use a firewall", s);
		return -EINVAL;
	}
	n = (u128)mant * rate_units[i].mult;
	d = (u128)pow10u(dec) * rate_units[i].den_mult * period;
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
bad_unit:
	snprintf(
		err, errlen,
		"unknown rate unit '%s' in '%s' (pps, kpps, mpps, gpps, /m, /h, bit, kbit, mbit, gbit, tbit, byte, kbyte, mbyte, gbyte)",
		end, s);
	return -EINVAL;
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
	__u64 floor = pol->bytes ? RL_FULL_FRAME : 1;

	return b < floor ? floor : b;
}

static int bucket_params(struct rl_params *p, const struct rl_policy *pol, const char **about,
			 char *err, size_t errlen)
{
	/* Rate per ns in cost units: rate_num / D. */
	u128 d = (u128)pol->rate_den * NSEC_PER_SEC;
	__u64 burst = pol->burst_set ? pol->burst : default_burst(pol);
	__u64 maxcost = pol->bytes ? RL_MAX_FRAME : 1;
	__u64 g, u0;
	u128 c, tau, h;

	if (pol->window_set) {
		*about = "window";
		snprintf(
			err, errlen,
			" has no meaning for %s (it sets the window of fixed-window and sliding-window)",
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
		*about = "burst";
		snprintf(err, errlen,
			 " %llu is too large for this rate: the bucket must empty within %llu s",
			 (unsigned long long)burst,
			 (unsigned long long)((u128)RL_AHEAD_LIMIT * pol->rate_den / pol->rate_num /
					      c));
		return -EINVAL;
	}
	if (pol->initial_set && pol->initial > burst) {
		*about = "initial";
		snprintf(err, errlen, " %llu is more than the burst (%llu)",
			 (unsigned long long)pol->initial, (unsigned long long)burst);
		return -EINVAL;
	}
	p->unit_cost = (__u64)c;
	p->tau = (__u64)tau;
	/*
	 * Fleet sync charges what other nodes passed (rl_charge()): beyond an
	 * empty bucket it is a debt the clock pays off, or a node whose own
	 * traffic stays under the rate would never be held back by the others'
	 * (measured: three nodes at the rate each passed 2.3x it between them).
	 * Up to RL_SYNC_DEBT_S seconds of the rate; packets never take a state
	 * past h, so without sync nothing changes.
	 */
	{
		u128 debt = (u128)c * pol->rate_num * RL_SYNC_DEBT_S / pol->rate_den;

		if (debt > RL_AHEAD_LIMIT - h)
			debt = RL_AHEAD_LIMIT - h;
		p->ahead_max = (__u64)(h + debt) + RL_SKEW_VT;
	}
	if (pol->algo == RL_ALGO_TOKEN_BUCKET)
		p->initial_ahead = (__u64)c * (burst - (pol->initial_set ? pol->initial : burst));
	else
		p->initial_ahead = (__u64)c * (pol->initial_set ? pol->initial : 0);
	return 0;
too_high:
	*about = "rate";
	snprintf(err, errlen, " is too high: at most 128000000000 packets or bytes per second");
	return -EINVAL;
}

static int window_params(struct rl_params *p, const struct rl_policy *pol, const char **about,
			 char *err, size_t errlen)
{
	unsigned int counts = pol->algo == RL_ALGO_FIXED_WINDOW ? 1 : 2, shift, bits;
	__u64 maxcost = pol->bytes ? RL_MAX_FRAME : 1;
	u128 l = (u128)pol->rate_num * pol->window_ns;
	u128 d = (u128)pol->rate_den * NSEC_PER_SEC;

	if (pol->burst_set || pol->initial_set) {
		*about = pol->burst_set ? "burst" : "initial";
		snprintf(err, errlen,
			 " has no meaning for %s (the limit per window is --rate x --window)",
			 rl_algo_name(pol->algo));
		return -EINVAL;
	}
	if (l % d) {
		*about = "rate";
		snprintf(
			err, errlen,
			" x --window is not a whole number of %s; %s needs a whole limit per window",
			pol->bytes ? "bytes" : "packets", rl_algo_name(pol->algo));
		return -EINVAL;
	}
	l /= d;
	if (!l) {
		*about = "rate";
		snprintf(err, errlen, " x --window is 0 %s: nothing would pass",
			 pol->bytes ? "bytes" : "packets");
		return -EINVAL;
	}
	/* A count reaches at most limit - 1 + the largest cost. */
	bits = l + maxcost - 1 > ~0ULL ?
		       65 :
		       64 - (unsigned int)__builtin_clzll((__u64)(l + maxcost - 1));
	if (counts * bits > 64 - RL_WIN_ID_BITS_MIN) {
		*about = "rate";
		snprintf(err, errlen,
			 " x --window is %llu, more than %s can count (at most %llu per window)",
			 (unsigned long long)l, rl_algo_name(pol->algo),
			 (unsigned long long)((1ULL << (64 - RL_WIN_ID_BITS_MIN) / counts) -
					      maxcost));
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

void rl_about_cli(char *err, size_t errlen, const char *about)
{
	size_t n = strlen(about) + 2, len = strnlen(err, errlen);

	if (!errlen)
		return;
	/* "--NAME" and what fits of the text after it: the whole message, cut where it would be. */
	if (n >= errlen) {
		snprintf(err, errlen, "--%s", about);
		return;
	}
	if (len > errlen - 1 - n)
		len = errlen - 1 - n;
	memmove(err + n, err, len);
	err[n + len] = '\0';
	memcpy(err, "--", 2);
	memcpy(err + 2, about, n - 2);
}

int rl_params_init_about(struct rl_params *p, const struct rl_policy *pol, const char **about,
			 char *err, size_t errlen)
{
	*about = NULL;
	memset(p, 0, sizeof(*p));
	if (!pol->rate_set) {
		*about = "rate";
		snprintf(err, errlen, " is required");
		return -EINVAL;
	}
	/* One ceiling for every algorithm: what the bucket algorithms can represent. */
	if ((u128)pol->rate_num > (u128)RL_VT_PER_NS_MAX * pol->rate_den * NSEC_PER_SEC) {
		*about = "rate";
		snprintf(err, errlen,
			 " is too high: at most 128000000000 packets or bytes per second");
		return -EINVAL;
	}
	p->algo = pol->algo;
	p->bytes = pol->bytes;
	if (pol->algo == RL_ALGO_TOKEN_BUCKET || pol->algo == RL_ALGO_GCRA)
		return bucket_params(p, pol, about, err, errlen);
	return window_params(p, pol, about, err, errlen);
}

int rl_params_init(struct rl_params *p, const struct rl_policy *pol, char *err, size_t errlen)
{
	const char *about;
	int ret = rl_params_init_about(p, pol, &about, err, errlen);

	if (ret && about)
		rl_about_cli(err, errlen, about);
	return ret;
}

/* num / den as a decimal with at most 9 decimals, if it is one exactly. */
static bool exact_decimal(u128 num, u128 den, char *buf, size_t len)
{
	u128 frac = num % den * NSEC_PER_SEC;
	char f[16] = "";

	if (frac % den)
		return false;
	frac /= den;
	if (frac) {
		int n = snprintf(f, sizeof(f), ".%09llu", (unsigned long long)frac);

		while (n > 1 && f[n - 1] == '0')
			f[--n] = '\0';
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)(num / den), f);
	return true;
}

char *rl_rate_str(const struct rl_policy *pol, char *buf, size_t len)
{
	static const struct {
		const char *unit;
		__u64 sec;
	} per[] = { { "/s", 1 }, { "/min", 60 }, { "/hour", 3600 }, { "/day", 86400 } };
	static const struct {
		const char *unit;
		__u64 bits;
	} bit_units[] = { { "tbit", 1000000000000ULL },
			  { "gbit", 1000000000 },
			  { "mbit", 1000000 },
			  { "kbit", 1000 } };
	u128 bits = (u128)pol->rate_num * 8;
	char n[48];
	size_t i;

	/*
	 * Always in a form rl_parse_rate() reads back to the same fraction:
	 * whatever it parsed is a 9-decimal number of packets per second,
	 * minute, hour or day, or of bits or bytes per second. Bit units
	 * first, as a byte rate is most often written.
	 */
	if (pol->bytes) {
		for (i = 0; i < sizeof(bit_units) / sizeof(bit_units[0]); i++)
			if (bits >= (u128)bit_units[i].bits * pol->rate_den &&
			    exact_decimal(bits, (u128)bit_units[i].bits * pol->rate_den, n,
					  sizeof(n)))
				break;
		if (i < sizeof(bit_units) / sizeof(bit_units[0])) {
			snprintf(buf, len, "%s%s", n, bit_units[i].unit);
			return buf;
		}
		if (exact_decimal(pol->rate_num, pol->rate_den, n, sizeof(n))) {
			snprintf(buf, len, "%sbyte", n);
			return buf;
		}
		if (exact_decimal(bits, pol->rate_den, n, sizeof(n))) {
			snprintf(buf, len, "%sbit", n);
			return buf;
		}
	}
	for (i = 0; !pol->bytes && i < sizeof(per) / sizeof(per[0]); i++) {
		if (exact_decimal((u128)pol->rate_num * per[i].sec, pol->rate_den, n, sizeof(n))) {
			snprintf(buf, len, "%s%s", n, per[i].unit);
			return buf;
		}
	}
	/* Not from the parser (a hand-made policy): 9 decimals, cut. */
	snprintf(buf, len, "%llu.%09llu%s", (unsigned long long)(pol->rate_num / pol->rate_den),
		 (unsigned long long)((u128)(pol->rate_num % pol->rate_den) * NSEC_PER_SEC /
				      pol->rate_den),
		 pol->bytes ? "byte" : "/s");
	return buf;
}

/* The burst a bucket policy ends up with: given, or the default. */
static __u64 bucket_burst(const struct rl_policy *pol)
{
	return pol->burst_set ? pol->burst : default_burst(pol);
}

static bool is_bucket_algo(enum rl_algo algo)
{
	return algo == RL_ALGO_TOKEN_BUCKET || algo == RL_ALGO_GCRA;
}

int rl_policy_check_about(const struct rl_policy *pol, const char **about, char *err, size_t errlen)
{
	u128 l;

	*about = NULL;
	if (!pol->bytes)
		return 0;
	/*
	 * A token bucket passes a frame only if it holds the frame's length
	 * in tokens: below one full frame, every full-size frame is dropped
	 * while the source never uses its rate. gcra is not refused: it
	 * passes a packet while the queue level is under the burst, whatever
	 * the packet's size, so a shallow queue still passes full frames at
	 * the rate (a strict pacer).
	 */
	if (pol->algo == RL_ALGO_TOKEN_BUCKET) {
		__u64 burst = bucket_burst(pol);

		if (burst >= RL_FULL_FRAME)
			return 0;
		*about = "burst";
		snprintf(
			err, errlen,
			" %llu bytes cannot pass a full-size frame: give at least %u (a 1500-byte MTU frame with its Ethernet header and two VLAN tags)",
			(unsigned long long)burst, RL_FULL_FRAME);
		return -EINVAL;
	}
	if (is_bucket_algo(pol->algo))
		return 0;
	/*
	 * A window passes a packet while its count is under the limit,
	 * whatever the packet's size: with a limit below one full frame, each
	 * window passes a whole frame and the limit means nothing.
	 */
	l = (u128)pol->rate_num * pol->window_ns / ((u128)pol->rate_den * NSEC_PER_SEC);
	if (l >= RL_FULL_FRAME)
		return 0;
	*about = "rate";
	snprintf(
		err, errlen,
		" x --window is %llu bytes, less than one full-size frame (%u bytes): each window would pass a whole frame whatever the limit; give a longer --window or a higher --rate",
		(unsigned long long)l, RL_FULL_FRAME);
	return -EINVAL;
}

int rl_policy_check(const struct rl_policy *pol, char *err, size_t errlen)
{
	const char *about;
	int ret = rl_policy_check_about(pol, &about, err, errlen);

	if (ret && about)
		rl_about_cli(err, errlen, about);
	return ret;
}

/* "100 Mbit/s" when the rate is a whole number of kbit, Mbit or Gbit per second. */
static void bit_rate_str(const struct rl_policy *pol, char *buf, size_t len)
{
	static const char *const units[] = { "Gbit/s", "Mbit/s", "kbit/s" };
	u128 bits = (u128)pol->rate_num * 8;
	__u64 div = 1000000000;

	if (!(bits % pol->rate_den)) {
		bits /= pol->rate_den;
		for (int i = 0; i < 3; i++, div /= 1000) {
			if (bits >= div && !(bits % div)) {
				snprintf(buf, len, "%llu %s", (unsigned long long)(bits / div),
					 units[i]);
				return;
			}
		}
	}
	rl_rate_str(pol, buf, len);
}

bool rl_policy_tcp_warning(const struct rl_policy *pol, char *msg, size_t len)
{
	u128 d = (u128)pol->rate_den * (1000 / RL_TCP_BURST_MS);
	__u64 burst, need;
	char rate[64];

	if (!pol->bytes || !is_bucket_algo(pol->algo))
		return false;
	/* rate x RL_TCP_BURST_MS, rounded up. */
	need = (__u64)(((u128)pol->rate_num + d - 1) / d);
	burst = bucket_burst(pol);
	if (burst >= need)
		return false;
	bit_rate_str(pol, rate, sizeof(rate));
	snprintf(
		msg, len,
		"--burst %llu bytes is under %d ms at %s (%llu bytes): TCP flows will get well under the rate; see README 'Sizing a burst for TCP'",
		(unsigned long long)burst, RL_TCP_BURST_MS, rate, (unsigned long long)need);
	return true;
}
