// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Pin naming (user/lib/pins.c): the bpffs name of an interface, and back. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "harness.h"
#include "pins.h"
#include "test.h"

static const struct {
	const char *name, *enc;
} names[] = {
	{ "eth0", "eth0" },
	{ "eth0.100", "eth0%2e100" },
	{ "eth0_100", "eth0_100" }, /* no longer the same directory as eth0.100 */
	{ "eth0%2e100", "eth0%252e100" }, /* nor is an interface named like an encoding */
	{ "a.b.c", "a%2eb%2ec" },
	{ "%", "%25" },
	{ "..a", "%2e%2ea" },
	{ "...............",
	  "%2e%2e%2e%2e%2e%2e%2e%2e%2e%2e%2e%2e%2e%2e%2e" }, /* 15: the longest */
	{ "br-lan@x:y", "br-lan@x:y" },
};

TEST(pins_encode_decode)
{
	char enc[RL_PINNAME_MAX], back[IF_NAMESIZE];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!ASSERT_OK(rl_pin_encode(names[i].name, enc, sizeof(enc)), names[i].name))
			continue;
		ASSERT_STREQ(enc, names[i].enc, names[i].name);
		ASSERT_TRUE(!strchr(enc, '.'), "bpffs refuses '.' in names");
		if (ASSERT_OK(rl_pin_decode(enc, back, sizeof(back)), enc))
			ASSERT_STREQ(back, names[i].name, "decodes to the name");
	}
}

TEST(pins_encode_no_collisions)
{
	char a[RL_PINNAME_MAX], b[RL_PINNAME_MAX];

	/* Every pair of the table encodes differently. */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t j = i + 1; j < sizeof(names) / sizeof(names[0]); j++) {
			rl_pin_encode(names[i].name, a, sizeof(a));
			rl_pin_encode(names[j].name, b, sizeof(b));
			ASSERT_TRUE(strcmp(a, b) != 0, names[i].name);
		}
}

TEST(pins_invalid_names)
{
	const char *bad_names[] = { "", ".", "..", "a/b", "sixteen-chars-xx" };
	const char *bad_enc[] = { "",	    "a.b", "a%2",
				  "a%41",   "%2f", "%2e",
				  "%2e%2e", "a%",  "sixteen-chars-xx" };
	char out[RL_PINNAME_MAX];

	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++)
		ASSERT_EQ(rl_pin_encode(bad_names[i], out, sizeof(out)), -EINVAL, bad_names[i]);
	for (size_t i = 0; i < sizeof(bad_enc) / sizeof(bad_enc[0]); i++)
		ASSERT_EQ(rl_pin_decode(bad_enc[i], out, IF_NAMESIZE), -EINVAL, bad_enc[i]);
	ASSERT_EQ(rl_pin_encode("eth0.1", out, 6), -ENAMETOOLONG, "short buffer");
}

TEST(pins_dir_layout)
{
	char dir[PATH_MAX];

	if (ASSERT_OK(rl_pin_dir(RL_PIN_ROOT, 4026531840ULL, "eth0.100", dir, sizeof(dir)), "dir"))
		ASSERT_STREQ(dir, "/sys/fs/bpf/xdp-ratelimit/netns-4026531840/eth0%2e100",
			     "one directory per namespace, then per encoded name");
	if (ASSERT_OK(rl_pin_dir(RL_PIN_ROOT, 4026532000ULL, "eth0", dir, sizeof(dir)), "dir"))
		ASSERT_STREQ(dir, "/sys/fs/bpf/xdp-ratelimit/netns-4026532000/eth0",
			     "eth0 of another namespace: another directory");
}

/*
 * A limiter made by another version: a map whose values are laid out
 * otherwise is refused by name, not read into a buffer of the wrong size
 * (an exporter built before rl_counters grew died in malloc reading one).
 */
TEST_FLAGS(pins_other_version_refused, RL_TEST_ROOT)
{
	struct rl_prog p = {};
	struct rl_pins pins;
	char err[512] = "";
	int small, saved;

	if (!ASSERT_TRUE(rl_prog_load(&p, true, 64), "maps made"))
		return;
	pins = p.maps;
	ASSERT_EQ(rl_pins_check(&pins, "DIR", err, sizeof(err)), 0, err);
	/* rl_counters as a build whose counters were 8 bytes shorter made it. */
	small = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "rl_counters", 4,
			       sizeof(struct rl_kcounters) - 8, 1, NULL);
	if (!ASSERT_TRUE(small >= 0, "bpf_map_create"))
		goto out;
	saved = pins.counters;
	pins.counters = small;
	ASSERT_EQ(rl_pins_check(&pins, "DIR", err, sizeof(err)), -EPROTO, "a shorter rl_counters");
	ASSERT_TRUE(strstr(err, "DIR/rl_counters") && strstr(err, "another version") &&
			    strstr(err, "detach it and attach it again"),
		    err);
	pins.counters = saved;
	close(small);
out:
	rl_prog_close(&p);
}
