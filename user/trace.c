// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "source.h"
#include "trace.h"

int rl_parse_timestamp(const char *s, __u64 *ns)
{
	unsigned __int128 sec = 0, v;
	__u64 frac = 0;
	int digits = 0, fdigits = 0;

	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		sec = sec * 10 + (__u64)(*s - '0');
		if (sec > ~0ULL)
			return -ERANGE;
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, fdigits++) {
			if (fdigits == 9)
				return -ERANGE;
			frac = frac * 10 + (__u64)(*s - '0');
		}
	}
	if (*s || (!digits && !fdigits))
		return -EINVAL;
	for (; fdigits < 9; fdigits++)
		frac *= 10;
	/* Up to 2^64 - 1 ns, 18446744073.709551615 s. */
	v = sec * 1000000000ULL + frac;
	if (v > ~0ULL)
		return -ERANGE;
	*ns = (__u64)v;
	return 0;
}

int rl_trace_getline(FILE *in, char *buf, size_t size, char *err, size_t errlen)
{
	size_t n = 0;
	int c;

	if (size <= RL_TRACE_LINE_MAX) {
		snprintf(err, errlen, "line buffer too small");
		return -EINVAL;
	}
	while ((c = getc_unlocked(in)) != EOF && c != '\n') {
		/* A NUL would end the line early for every parser after it. */
		if (!c) {
			snprintf(err, errlen, "holds a NUL byte (at byte %zu): not a text trace",
				 n + 1);
			return -EINVAL;
		}
		if (n == RL_TRACE_LINE_MAX) {
			snprintf(err, errlen, "is longer than %d bytes", RL_TRACE_LINE_MAX);
			return -EINVAL;
		}
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	if (c == EOF && ferror(in))
		return -EIO;
	return c != EOF || n ? 1 : 0;
}

int rl_trace_line(char *line, struct rl_trace_pkt *pkt, char *err, size_t errlen)
{
	char *fields[4], *save = NULL, *tok;
	int n = 0, ret;
	__u64 len = 64;

	line[strcspn(line, "#\r\n")] = '\0';
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == 3) {
			snprintf(err, errlen, "too many fields (TIMESTAMP [SOURCE [LENGTH]])");
			return -EINVAL;
		}
		fields[n++] = tok;
	}
	if (!n)
		return 0;
	ret = rl_parse_timestamp(fields[0], &pkt->ns);
	if (ret) {
		snprintf(err, errlen,
			 ret == -ERANGE ?
				 "timestamp '%s' has more than 9 decimals or is too large" :
				 "timestamp '%s' is not seconds (e.g. 12.5 or 0.000001)",
			 fields[0]);
		return -EINVAL;
	}
	pkt->time = fields[0];
	rl_key_anon(&pkt->key);
	pkt->has_source = n > 1;
	if (n > 1 && rl_key_parse(fields[1], &pkt->key)) {
		snprintf(err, errlen, "source '%s' is not an IPv4 or IPv6 address", fields[1]);
		return -EINVAL;
	}
	if (n > 2 && rl_parse_u64(fields[2], 1, RL_MAX_FRAME, &len, err, errlen)) {
		char msg[RL_ERRLEN];

		snprintf(msg, sizeof(msg), "length: %s", err);
		snprintf(err, errlen, "%s", msg);
		return -EINVAL;
	}
	pkt->len = (__u32)len;
	return 1;
}

int rl_sim_init(struct rl_sim *s, const struct rl_policy *pol, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->pol = *pol;
	rl_srctab_init(&s->tab);
	return rl_params_init(&s->params, pol, err, errlen);
}

void rl_sim_free(struct rl_sim *s)
{
	rl_srctab_free(&s->tab);
}

int rl_sim_packet(struct rl_sim *s, struct rl_key *key, __u64 now, __u32 len, struct rl_src **srcp)
{
	__u64 next, cost = s->params.bytes ? len : 1;
	struct rl_src *src;
	int created, pass;

	if (!rl_key_is_anon(key))
		rl_key_mask(key, s->pol.prefix4, s->pol.prefix6);
	src = rl_srctab_get(&s->tab, key, &created);
	if (!src)
		return -ENOMEM;
	if (created)
		src->state = rl_initial_state(&s->params, now);
	pass = rl_step(&s->params, src->state, now, cost, &next);
	if (pass) {
		src->state = next;
		src->passed++;
		s->passed++;
	} else {
		src->dropped++;
		s->dropped++;
	}
	if (srcp)
		*srcp = src;
	return pass;
}
