// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A limiter's kernel memory (user/lib/memory.h, docs/design.md "Memory"):
 * with the defaults at most 48 bytes per IPv4 source it can track, counting
 * every map; the maps of a feature (rule states, the port table, sync
 * counters) have one entry until the feature is turned on, are made whole
 * on the path that turns it on, and one entry again when it is off.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "harness.h"
#include "maps.h"
#include "memory.h"
#include "netns.h"
#include "pins.h"
#include "rl_sa.h"
#include "rl_sa6.h"
#include "sync_kern.h"
#include "test.h"
#include "xdp_attach.h"

#define PER_SOURCE_MAX 48

/* Into the network namespace @netns; the one we were in is returned (to go back with leave()). */
static int enter(const char *netns)
{
	char path[128];
	int self = open("/proc/self/ns/net", O_RDONLY), fd;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	fd = open(path, O_RDONLY);
	if (self < 0 || fd < 0 || setns(fd, CLONE_NEWNET)) {
		if (fd >= 0)
			close(fd);
		if (self >= 0)
			close(self);
		return -1;
	}
	close(fd);
	return self;
}

static void leave(int self)
{
	if (self >= 0) {
		ASSERT_OK(setns(self, CLONE_NEWNET), "back to our namespace");
		close(self);
	}
}

static __u32 entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

static __u32 id_of(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* The limiter on @ifname (of the namespace we are in): its maps, opened. */
static bool open_limiter(const char *ifname, struct rl_iface *ifc, struct rl_pins *pins)
{
	char err[RL_ERRLEN] = "";

	if (!ASSERT_OK(rl_iface_get(ifname, ifc, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_pins_open(ifc, pins, err, sizeof(err)), err))
		return false;
	return true;
}

/* Its memory, printed, and the bound per IPv4 source checked. */
static void per_source(const struct rl_pins *pins, const char *what, bool bounded)
{
	struct rl_memory m;

	if (!ASSERT_OK(rl_memory_read(pins, &m), "rl_memory_read") ||
	    !ASSERT_TRUE(m.max_sources4 > 0, "max sources"))
		return;
	printf("    %s: %llu bytes (%.2f MiB) for %u IPv4 and %u IPv6 sources: %.1f B per IPv4 source; "
	       "rl_sets4 %llu, rl_sets6 %llu, rl_rstate %llu, rl_ports %llu, rl_sync_slots %llu, "
	       "program %llu\n",
	       what, (unsigned long long)m.total, m.total / 1048576.0, m.max_sources4,
	       m.max_sources6, (double)m.total / m.max_sources4,
	       (unsigned long long)m.map[RL_MAP_sets4], (unsigned long long)m.map[RL_MAP_sets6],
	       (unsigned long long)m.map[RL_MAP_rstate], (unsigned long long)m.map[RL_MAP_ports],
	       (unsigned long long)m.map[RL_MAP_sync_slots], (unsigned long long)m.prog);
	ASSERT_TRUE(m.prog > 0, "the program's own maps are counted");
	if (bounded)
		ASSERT_LE(m.total, (__u64)PER_SOURCE_MAX * m.max_sources4,
			  "at most 48 bytes of kernel memory per IPv4 source");
}

/* Each feature's maps of @pins whole if it is on (@rules, @ports, @sync), else one entry. */
static void features(const struct rl_pins *pins, bool rules, bool ports, bool sync)
{
	ASSERT_EQ(entries(pins->rstate) > 1, rules, "rl_rstate whole only with a limit rule");
	ASSERT_EQ(entries(pins->ports) > 1, ports, "rl_ports whole only with a port rule");
	ASSERT_EQ(entries(pins->sync_slots) > 1, sync, "rl_sync_slots whole only while counting");
	ASSERT_EQ(entries(pins->sync_dirty) > 1, sync, "rl_sync_dirty whole only while counting");
	ASSERT_EQ(entries(pins->sync6) > 1, sync, "rl_sync6 whole only while counting");
	ASSERT_EQ(entries(pins->syncr) > 1, sync && rules,
		  "rl_syncr whole only while counting with a limit rule");
	ASSERT_EQ(entries(pins->sync4), 1, "rl_sync4: rl_sets4's policies count in rl_sync_slots");
}

/* The limiter on @ifc opened as @pins: its program reads no map of a feature that is off. */
static void dead_when_off(const struct rl_iface *ifc, const struct rl_pins *pins)
{
	int prog = -1;
	__u32 mode;

	if (!ASSERT_EQ(rl_prog_alone(ifc->ifindex, &prog, &mode), 1, "our program"))
		return;
	ASSERT_EQ(rl_prog_refers_to(prog, pins->ports), 0,
		  "no port rule: no load of rl_ports left");
	ASSERT_EQ(rl_prog_refers_to(prog, pins->pfx), 0, "no prefix: no load of rl_pfx left");
	ASSERT_EQ(rl_prog_refers_to(prog, pins->sync_slots), 0,
		  "no counting: no load of rl_sync_slots left");
	ASSERT_EQ(rl_prog_refers_to(prog, pins->sync_dirty), 0,
		  "no counting: no load of rl_sync_dirty left");
	ASSERT_EQ(rl_prog_refers_to(prog, pins->sync6), 0, "no counting: no load of rl_sync6 left");
	ASSERT_EQ(rl_prog_refers_to(prog, pins->syncr), 0, "no counting: no load of rl_syncr left");
	ASSERT_EQ(rl_prog_refers_to(prog, pins->state4), 0,
		  "rl_sets4's policy: no load of rl_state4");
	ASSERT_EQ(rl_prog_refers_to(prog, pins->wide4), 0,
		  "rl_sets4's policy: no load of rl_wide4");
	/*
	 * No rules: none of their code is left. With rules but none that
	 * limits, rl_rule_apply() (a global function, verified for any rule)
	 * keeps its lookup of rl_rstate, reached only for a limit rule: a
	 * hash, whose one entry a lookup misses, never out of bounds.
	 */
	ASSERT_EQ(rl_prog_refers_to(prog, pins->rstate), 0, "no rules: no load of rl_rstate left");
	close(prog);
}

/* attach with the library's defaults (no --max-sources, no --max-sources6). */
TEST_FLAGS(memory_defaults, RL_TEST_ROOT)
{
	static const char *const opts[] = { "--rate", "100", "--burst", "10", NULL };
	struct rl_config cfg;
	struct rl_iface ifc;
	struct rl_pins pins;
	char err[RL_ERRLEN] = "";
	struct rl_ns ns;
	int self = -1;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespace pair"))
		return;
	if (!rl_build_config(&cfg, opts, NULL))
		goto out;
	self = enter(ns.rx);
	if (!ASSERT_TRUE(self >= 0, "enter the namespace") ||
	    !ASSERT_OK(rl_iface_get(ns.rx_if, &ifc, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_attach(&ifc, RL_MODE_NATIVE, 0, 0, &cfg, err, sizeof(err)), err))
		goto out;
	if (open_limiter(ns.rx_if, &ifc, &pins)) {
		struct rl_memory m;

		ASSERT_EQ(RL_DEFAULT_MAX_SOURCES6, RL_DEFAULT_MAX_SOURCES / 16,
			  "the IPv6 default: a sixteenth of the IPv4 sources");
		ASSERT_EQ(rl_max_sources6(&pins), RL_DEFAULT_MAX_SOURCES6, "the IPv6 default");
		/* Two ways of 32 bytes per IPv6 source asked for: 64 bytes each. */
		ASSERT_EQ((__u64)entries(pins.sets6) * sizeof(struct rl_sa6_set),
			  (__u64)RL_DEFAULT_MAX_SOURCES6 * 64,
			  "rl_sets6: 64 bytes per IPv6 source");
		if (ASSERT_OK(rl_memory_read(&pins, &m), "rl_memory_read"))
			ASSERT_EQ(m.max_sources6, RL_DEFAULT_MAX_SOURCES6,
				  "memory: the IPv6 sources");
		features(&pins, false, false, false);
		ASSERT_EQ(entries(pins.pfx), 1, "rl_pfx: one entry without source prefixes");
		dead_when_off(&ifc, &pins);
		per_source(&pins, "defaults", true);
		rl_pins_close(&pins);
	}
	ASSERT_OK(rl_detach(&ifc, err, sizeof(err)), err);
out:
	leave(self);
	rl_ns_destroy(&ns);
}

/*
 * The CLI's defaults are the library's: attach with no size option, and
 * status reports the memory of every map, at most PER_SOURCE_MAX bytes per
 * IPv4 source, in both forms; the figure is the sum over the pins.
 */
TEST_FLAGS(memory_cli_status, RL_TEST_ROOT)
{
	char args[128], err[RL_ERRLEN] = "", *out = NULL, *p;
	unsigned long long bytes = 0;
	struct rl_memory mem = {};
	struct rl_iface ifc;
	struct rl_pins pins;
	struct rl_ns ns;
	int self = -1;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespace pair"))
		return;
	snprintf(args, sizeof(args), "attach %s --rate 100 --burst 10", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach with the defaults", args))
		goto out;
	if (ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "status %s --json", ns.rx_if), 0,
		      "status --json")) {
		p = strstr(out, "\"memory_bytes\":");
		if (ASSERT_TRUE(p != NULL, "status --json: memory_bytes"))
			bytes = strtoull(p + strlen("\"memory_bytes\":"), NULL, 10);
		ASSERT_CONTAINS(out, "\"max_sources6\":65536", "status --json: the IPv6 default");
	}
	free(out);
	out = NULL;
	printf("    status: %llu bytes, %.1f per IPv4 source\n", bytes,
	       (double)bytes / RL_DEFAULT_MAX_SOURCES);
	ASSERT_TRUE(bytes > 0 &&
			    bytes <= (unsigned long long)PER_SOURCE_MAX * RL_DEFAULT_MAX_SOURCES,
		    "status: at most 48 B per IPv4 source with the defaults");
	self = enter(ns.rx);
	if (ASSERT_TRUE(self >= 0, "enter") && open_limiter(ns.rx_if, &ifc, &pins)) {
		if (ASSERT_OK(rl_memory_read(&pins, &mem), err))
			ASSERT_EQ(mem.total, bytes, "status shows the sum over the pins");
		rl_pins_close(&pins);
	}
	leave(self);
	self = -1;
	if (ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "status %s", ns.rx_if), 0, "status"))
		ASSERT_CONTAINS(out, "kernel memory: ", "status: the memory line");
	free(out);
out:
	leave(self);
	rl_ns_destroy(&ns);
}

/* Passed and dropped by the limiter on ns's receiving side. */
static bool counted(struct rl_ns *ns, __u64 *passed, __u64 *dropped)
{
	struct rl_counters c;

	if (!ASSERT_OK(rl_ns_counters(ns, &c), "counters"))
		return false;
	*passed = c.passed;
	*dropped = c.dropped;
	return true;
}

/*
 * In ns's receiving namespace: the features' maps as features() expects them
 * and, with @what, the memory as per_source() reports it. False if the
 * limiter could not be opened.
 */
static bool rx_features(struct rl_ns *ns, bool rules, bool ports, bool sync, const char *what,
			bool bounded)
{
	struct rl_iface ifc;
	struct rl_pins pins;
	int self = enter(ns->rx);
	bool ok = ASSERT_TRUE(self >= 0, "enter") && open_limiter(ns->rx_if, &ifc, &pins);

	if (ok) {
		features(&pins, rules, ports, sync);
		if (what)
			per_source(&pins, what, bounded);
		rl_pins_close(&pins);
	}
	leave(self);
	return ok;
}

/* Send @fl and count what the limiter passed and dropped of it. */
static bool flow_counted(struct rl_ns *ns, struct rl_flow *fl, __u64 *passed, __u64 *dropped)
{
	__u64 p0 = 0, d0 = 0, p1 = 0, d1 = 0;

	if (!counted(ns, &p0, &d0) || !ASSERT_OK(rl_flow_start(ns, fl), "flow") ||
	    !ASSERT_OK(rl_flow_wait(fl), "flow") || !counted(ns, &p1, &d1))
		return false;
	*passed = p1 - p0;
	*dropped = d1 - d0;
	return true;
}

/*
 * rule add with a limit and a port turns rl_rstate and rl_ports on: pinned
 * whole, and 200 sources limited each on its own (with a one-entry
 * rl_rstate they would push each other out and pass all); a rule without a
 * limit needs neither; rule del shrinks them back. A rule add whose load
 * fails changes nothing.
 */
TEST_FLAGS(memory_rules_on_off, RL_TEST_ROOT)
{
	struct rl_flow fl = { .src = "198.18.0.0",
			      .rand_bytes = 1,
			      .seq = true,
			      .dport = 53,
			      .count = 800,
			      .gap = "50us" };
	char dir[PATH_MAX], args[256], *cmd = NULL, *err = NULL;
	__u64 passed = 0, dropped = 0;
	struct rl_iface ifc;
	struct rl_pins pins;
	__u32 rstate_id = 0;
	struct rl_ns ns;
	int self = -1, rc;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespace pair"))
		return;
	snprintf(args, sizeof(args), "attach %s --rate 100000 --burst 100000 --max-sources6 65536",
		 ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach", args) ||
	    !ASSERT_OK(rl_ns_pin_dir(ns.rx, ns.rx_if, dir, sizeof(dir)), "pin dir"))
		goto out;
	/* A failing load: nothing made, nothing pinned anew. */
	self = enter(ns.rx);
	if (!ASSERT_TRUE(self >= 0, "enter") || !open_limiter(ns.rx_if, &ifc, &pins))
		goto out;
	rstate_id = id_of(pins.rstate);
	rl_pins_close(&pins);
	leave(self);
	self = -1;
	if (asprintf(&cmd,
		     "XDP_RATELIMIT_FAULT=prog-load nsenter --net=/run/netns/%s %s/xdp-ratelimit"
		     " rule add %s dns --src 198.18.0.0/24 --proto udp --dport 53 --rate 1"
		     " --burst 1",
		     ns.rx, rl_build_dir, ns.rx_if) < 0) {
		cmd = NULL;
		goto out;
	}
	rc = rl_run(cmd, NULL, &err);
	ASSERT_TRUE(rc != 0 && rc < 128, "rule add with a failing load fails");
	self = enter(ns.rx);
	if (!ASSERT_TRUE(self >= 0, "enter") || !open_limiter(ns.rx_if, &ifc, &pins))
		goto out;
	ASSERT_EQ(id_of(pins.rstate), rstate_id, "the same rl_rstate pinned");
	features(&pins, false, false, false);
	rl_pins_close(&pins);
	leave(self);
	self = -1;

	/* On: one packet each for 256 sources (burst 1, 1/s), about 3 sent each. */
	snprintf(args, sizeof(args),
		 "rule add %s dns --src 198.18.0.0/24 --proto udp --dport 53 --rate 1 --burst 1",
		 ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "rule add", args))
		goto out;
	self = enter(ns.rx);
	if (!ASSERT_TRUE(self >= 0, "enter") || !open_limiter(ns.rx_if, &ifc, &pins))
		goto out;
	features(&pins, true, true, false);
	ASSERT_EQ(entries(pins.rstate), RL_RULE_MAX_SOURCES, "rl_rstate whole");
	ASSERT_EQ(entries(pins.ports), RL_PORT_TABLE, "rl_ports whole");
	ASSERT_EQ(entries(pins.pfx), RL_PFX_TABLE, "rl_pfx whole with a source prefix");
	per_source(&pins, "a limit rule on a port", false);
	rl_pins_close(&pins);
	leave(self);
	self = -1;
	if (!flow_counted(&ns, &fl, &passed, &dropped))
		goto out;
	printf("    a limit rule, 256 sources x ~3 packets: %llu passed, %llu dropped\n",
	       (unsigned long long)passed, (unsigned long long)dropped);
	/* seq counts the last byte through its 256 values: 800 packets, 256 sources. */
	ASSERT_LE(passed, 256 + 64, "each source passes about its burst of 1");
	ASSERT_TRUE(dropped >= 400, "the rest are dropped by the rule");

	/* A rule that only allows needs neither map; with it, the limit rule keeps them. */
	snprintf(args, sizeof(args), "rule add %s ok --src 198.19.0.0/24 --allow", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "rule add --allow", args))
		goto out;
	snprintf(args, sizeof(args), "rule del %s dns", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "rule del", args))
		goto out;
	if (!rx_features(&ns, false, false, false, "an allow rule left", true))
		goto out;
	/* The default policy decides them again: all pass. */
	if (!flow_counted(&ns, &fl, &passed, &dropped))
		goto out;
	ASSERT_EQ(dropped, 0, "after rule del nothing is dropped");
out:
	leave(self);
	free(cmd);
	free(err);
	rl_ns_destroy(&ns);
}

/*
 * Sync counting on (rl_sync_kern_open(), as the agent does): the counter
 * tables whole, pinned, the switch on the first, and passes counted; off:
 * one entry again. stats shows the memory.
 */
TEST_FLAGS(memory_sync_on_off, RL_TEST_ROOT)
{
	struct rl_flow fl = {
		.src = "198.18.0.0", .rand_bytes = 1, .seq = true, .count = 300, .gap = "50us"
	};
	char args[256], err[RL_ERRLEN] = "", *out = NULL;
	struct rl_sync_src *v = NULL;
	struct rl_sync_kern *k = NULL;
	struct rl_iface ifc;
	struct rl_pins pins;
	struct rl_ns ns;
	int self = -1;
	size_t n = 0;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespace pair"))
		return;
	snprintf(args, sizeof(args), "attach %s --rate 100000 --burst 100000 --max-sources6 65536",
		 ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach", args))
		goto out;
	self = enter(ns.rx);
	if (!ASSERT_TRUE(self >= 0, "enter") ||
	    !ASSERT_OK(rl_sync_kern_open(ns.rx_if, &k, err, sizeof(err)), err))
		goto out;
	if (open_limiter(ns.rx_if, &ifc, &pins)) {
		features(&pins, false, false, true);
		ASSERT_EQ(entries(pins.sync_slots), RL_SA_WAYS * entries(pins.sets4),
			  "rl_sync_slots: a word per slot of rl_sets4");
		ASSERT_EQ(entries(pins.sync_dirty), entries(pins.sync_slots) / 64,
			  "rl_sync_dirty: a bit per counter word");
		ASSERT_EQ(entries(pins.sync6), 65536, "rl_sync6: per IPv6 source");
		{
			int prog = -1;
			__u32 mode;

			if (ASSERT_EQ(rl_prog_alone(ifc.ifindex, &prog, &mode), 1, "our program")) {
				ASSERT_EQ(rl_prog_refers_to(prog, pins.sync_slots), 1,
					  "the live program counts in the pinned rl_sync_slots");
				close(prog);
			}
		}
		per_source(&pins, "sync counting on", false);
		rl_pins_close(&pins);
	}
	leave(self);
	self = -1;
	if (!ASSERT_OK(rl_flow_start(&ns, &fl), "flow") || !ASSERT_OK(rl_flow_wait(&fl), "flow"))
		goto out;
	if (ASSERT_OK(rl_sync_drain(k, &v, &n), "drain"))
		ASSERT_TRUE(n >= 200, "the sources that passed, counted");
	printf("    sync counting on: %zu sources drained\n", n);
	free(v);
	/* stats shows the memory, in both forms. */
	if (ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "stats %s --json", ns.rx_if), 0, "stats --json"))
		ASSERT_CONTAINS(out, "\"memory_bytes\":", "stats --json: memory");
	free(out);
	out = NULL;
	if (ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "stats %s", ns.rx_if), 0, "stats"))
		ASSERT_CONTAINS(out, "B per IPv4 source", "stats: memory per source");
	free(out);
	out = NULL;
	self = enter(ns.rx);
	if (!ASSERT_TRUE(self >= 0, "enter"))
		goto out;
	rl_sync_kern_close(k, true);
	k = NULL;
	if (open_limiter(ns.rx_if, &ifc, &pins)) {
		features(&pins, false, false, false);
		per_source(&pins, "sync counting off again", true);
		rl_pins_close(&pins);
	}
out:
	if (k)
		rl_sync_kern_close(k, true);
	leave(self);
	free(out);
	rl_ns_destroy(&ns);
}

/* A YAML file for apply: the receiving interface with @body. */
static bool apply_file(struct rl_ns *ns, char *path, size_t len, const char *body)
{
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/rl-memory-XXXXXX");
	fd = mkstemp(path);
	if (!ASSERT_TRUE(fd >= 0, "mkstemp"))
		return false;
	f = fdopen(fd, "w");
	if (!ASSERT_TRUE(f != NULL, "fdopen")) {
		close(fd);
		return false;
	}
	fprintf(f, "interfaces:\n  %s:\n    max-sources6: 65536\n%s", ns->rx_if, body);
	fclose(f);
	return true;
}

/* The limit rule of memory_rules_on_off, as apply's YAML. */
#define DNS_RULE_YAML                                                                       \
	"    rules:\n      - name: dns\n        src: [198.18.0.0/24]\n        proto: udp\n" \
	"        dport: 53\n        rate: 1\n        burst: 1\n"

/*
 * apply: an attach with a limit rule on a port makes the rules' maps whole
 * from the start (rl_attach_rules()); a set that drops the rules makes them
 * one entry again (rl_set_live_rules()), in the same swap as the policy.
 */
TEST_FLAGS(memory_apply_rules, RL_TEST_ROOT)
{
	struct rl_flow fl = { .src = "198.18.0.0",
			      .rand_bytes = 1,
			      .seq = true,
			      .dport = 53,
			      .count = 800,
			      .gap = "50us" };
	char path[64] = "", args[128], *out = NULL;
	__u64 passed = 0, dropped = 0;
	struct rl_ns ns;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespace pair"))
		return;
	if (!apply_file(&ns, path, sizeof(path),
			"    rate: 100000\n    burst: 100000\n" DNS_RULE_YAML))
		goto out;
	snprintf(args, sizeof(args), "apply %s", path);
	if (!rl_ns_cli_ok(&ns, "apply: attach with a rule", args))
		goto out;
	if (!rx_features(&ns, true, true, false, NULL, false))
		goto out;
	if (!flow_counted(&ns, &fl, &passed, &dropped))
		goto out;
	printf("    apply with a limit rule, 256 sources x ~3 packets: %llu passed, %llu dropped\n",
	       (unsigned long long)passed, (unsigned long long)dropped);
	ASSERT_LE(passed, 256 + 64, "each source passes about its burst of 1");
	unlink(path);
	if (!apply_file(&ns, path, sizeof(path), "    rate: 200000\n    burst: 200000\n"))
		goto out;
	if (!ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "apply %s", path), 0, "apply: set, no rules"))
		goto out;
	if (!rx_features(&ns, false, false, false, "after apply without rules", true))
		goto out;
	/* A set that brings the rule back grows them again, in its one swap. */
	unlink(path);
	if (!apply_file(&ns, path, sizeof(path),
			"    rate: 300000\n    burst: 300000\n" DNS_RULE_YAML))
		goto out;
	snprintf(args, sizeof(args), "apply %s", path);
	if (!rl_ns_cli_ok(&ns, "apply: set with a rule", args))
		goto out;
	if (!rx_features(&ns, true, true, false, NULL, false))
		goto out;
	if (!flow_counted(&ns, &fl, &passed, &dropped))
		goto out;
	printf("    apply set with the rule again: %llu passed, %llu dropped\n",
	       (unsigned long long)passed, (unsigned long long)dropped);
	ASSERT_LE(passed, 256 + 64, "each source limited by the rule again");
out:
	if (*path)
		unlink(path);
	free(out);
	rl_ns_destroy(&ns);
}
