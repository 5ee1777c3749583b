// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "srctab.h"

void rl_srctab_init(struct rl_srctab *t)
{
	memset(t, 0, sizeof(*t));
}

void rl_srctab_free(struct rl_srctab *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static size_t hash_key(const struct rl_key *k)
{
	/* FNV-1a over the 16 bytes. */
	const unsigned char *b = (const unsigned char *)k;
	__u64 h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return (size_t)h;
}

static struct rl_src *probe(struct rl_src *slots, size_t cap, const struct rl_key *key)
{
	size_t i = hash_key(key) & (cap - 1);

	while (slots[i].used && memcmp(&slots[i].key, key, sizeof(*key)))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct rl_srctab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct rl_src *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].used)
			*probe(slots, cap, &t->slots[i].key) = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

struct rl_src *rl_srctab_get(struct rl_srctab *t, const struct rl_key *key, int *created)
{
	struct rl_src *s;

	*created = 0;
	if ((t->count + 1) * 2 > t->cap && grow(t))
		return NULL;
	s = probe(t->slots, t->cap, key);
	if (!s->used) {
		memset(s, 0, sizeof(*s));
		s->key = *key;
		s->used = 1;
		s->order = t->count++;
		*created = 1;
	}
	return s;
}

struct rl_src **rl_srctab_sorted(const struct rl_srctab *t)
{
	struct rl_src **v = calloc(t->count ? t->count : 1, sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].used)
			v[t->slots[i].order] = &t->slots[i];
	return v;
}
