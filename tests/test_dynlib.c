// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The optional libraries (user/lib/dynlib*.c): libmicrohttpd, libpcap and
 * libnftables are loaded by the commands that need them and by no other; a
 * missing one is an error naming the command, the SONAME and the Debian
 * package, and the command that needed it changes nothing. A library is made
 * missing for one command by bind-mounting /dev/null over it in a mount
 * namespace of that command's own (unshare -m): the host's file system is
 * not touched. That the exporter still serves a scrape is exporter_scrape's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dynlib.h"
#include "dynlib_mhd.h"
#include "dynlib_nft.h"
#include "dynlib_pcap.h"
#include "netns.h"
#include "test.h"

static const struct {
	const char *soname, *dev; /* the SONAME the program opens, the -dev package's link */
} libs[] = {
	{ RL_MHD_SONAME, "libmicrohttpd.so" },
	{ RL_PCAP_SONAME, "libpcap.so" },
	{ RL_NFT_SONAME, "libnftables.so" },
};

/* The names the dynamic loader prints for the three (LD_DEBUG=files). */
static const char *const names[] = { "libmicrohttpd", "libpcap", "libnftables" };

/* The file the loader opens for @soname, into @path. */
static bool lib_path(const char *soname, char *path, size_t len)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	struct link_map *lm = NULL;
	bool ok;

	if (!ASSERT_TRUE(h != NULL, soname))
		return false;
	ok = !dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name && *lm->l_name;
	if (ok)
		snprintf(path, len, "%s", lm->l_name);
	dlclose(h);
	return ASSERT_TRUE(ok, "dlinfo");
}

/*
 * The tables fill; the SONAMEs are those of the libraries the build
 * compiled against (the -dev packages' links), so that the headers the
 * tables are typed from are those of the libraries opened.
 */
TEST(dynlib_load)
{
	char err[256];

	ASSERT_OK(rl_mhd_load("the test", err, sizeof(err)), err);
	ASSERT_TRUE(rl_mhd.MHD_start_daemon && rl_mhd.MHD_destroy_response,
		    "libmicrohttpd's table");
	ASSERT_OK(rl_pcap_load("the test", err, sizeof(err)), err);
	ASSERT_TRUE(rl_pcap.pcap_next_ex && rl_pcap.pcap_close, "libpcap's table");
	ASSERT_OK(rl_nft_load("the test", err, sizeof(err)), err);
	ASSERT_TRUE(rl_nft.nft_ctx_new && rl_nft.nft_run_cmd_from_buffer, "libnftables' table");
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		char *out = NULL, want[128];

		rl_sh(&out,
		      "objdump -p \"$(${CC:-cc} -print-file-name=%s)\" | awk '/SONAME/ {print $2}'",
		      libs[i].dev);
		snprintf(want, sizeof(want), "%s\n", libs[i].soname);
		ASSERT_STREQ(out, want, libs[i].dev);
		free(out);
	}
}

/* A library that is not there, and one without a function: the message, and nothing kept. */
TEST(dynlib_missing_message)
{
	static const struct rl_dynsym syms[] = { { "rl_no_such_function", 0 } };
	struct {
		void *fn;
	} table = { (void *)1 };
	struct rl_dynlib absent = { .soname = "libxdp-ratelimit-absent.so.9",
				    .package = "libxdp-ratelimit-absent9",
				    .syms = syms,
				    .nsyms = 1,
				    .table = &table,
				    .size = sizeof(table) };
	struct rl_dynlib old = absent;
	char err[512];

	ASSERT_EQ(rl_dynlib_load(&absent, "the test", err, sizeof(err)), -ELIBACC, "absent");
	ASSERT_CONTAINS(err,
			"the test needs libxdp-ratelimit-absent.so.9: install "
			"libxdp-ratelimit-absent9 (",
			"names the SONAME and the package");
	ASSERT_TRUE(absent.handle == NULL, "no handle kept");
	/* A package Debian 13 renamed (64-bit time_t): both names. */
	absent.package13 = "libxdp-ratelimit-absent9t64";
	ASSERT_EQ(rl_dynlib_load(&absent, "the test", err, sizeof(err)), -ELIBACC,
		  "absent, renamed");
	ASSERT_CONTAINS(
		err,
		"install libxdp-ratelimit-absent9 (libxdp-ratelimit-absent9t64 on Debian 13) (",
		"names both packages");
	old.soname = "libc.so.6";
	old.package = "libc6";
	ASSERT_EQ(rl_dynlib_load(&old, "the test", err, sizeof(err)), -ELIBACC, "no such function");
	ASSERT_CONTAINS(
		err, "the test needs libc.so.6 with rl_no_such_function(): install a newer libc6",
		"names the function");
	ASSERT_TRUE(old.handle == NULL && table.fn == NULL, "nothing kept of a failed load");
}

/* Were any of the three loaded by this LD_DEBUG=files output? Its name, or NULL. */
static const char *loaded(const char *ld_debug)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (ld_debug && strstr(ld_debug, names[i]))
			return names[i];
	return NULL;
}

/* Run @args of xdp-ratelimit in @netns (NULL: here) under LD_DEBUG=files; its exit status. */
static int run_debug(const char *netns, const char *args, char **ld_debug)
{
	char *cmd = NULL;
	int ret;

	if (netns)
		ret = asprintf(&cmd,
			       "nsenter --net=/run/netns/%s env LD_DEBUG=files %s/xdp-ratelimit %s",
			       netns, rl_build_dir, args);
	else
		ret = asprintf(&cmd, "env LD_DEBUG=files %s/xdp-ratelimit %s", rl_build_dir, args);
	if (ret < 0)
		return -ENOMEM;
	*ld_debug = NULL;
	ret = rl_run(cmd, NULL, ld_debug);
	free(cmd);
	return ret;
}

/*
 * Commands that need none of the three load none of them (attach, set,
 * status, stats, --version, help); simulate --pcap loads libpcap, which
 * shows the check sees a library loaded with dlopen().
 */
TEST_FLAGS(dynlib_not_loaded, RL_TEST_ROOT)
{
	static const char *const cmds[] = {
		"attach %s --rate 100 --burst 10 --mode skb",
		"set %s --rate 200",
		"status %s",
		"stats %s",
		"--version",
		"help",
	};
	struct rl_ns ns = {};
	char *dbg = NULL, args[128];

	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		return;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(args, sizeof(args), cmds[i], ns.rx_if);
		if (!ASSERT_EQ(run_debug(ns.rx, args, &dbg), 0, args))
			fprintf(stderr, "    %.400s\n", dbg ? dbg : "");
		else if (!ASSERT_TRUE(!loaded(dbg), args))
			fprintf(stderr, "    %s: loaded %s\n", args, loaded(dbg));
		free(dbg);
		dbg = NULL;
	}
	/* The control: not a capture, but libpcap was loaded to find that out. */
	ASSERT_EQ(run_debug(NULL, "simulate --pcap /dev/null --rate 10", &dbg), 1,
		  "simulate --pcap /dev/null fails");
	ASSERT_CONTAINS(dbg, "file=" RL_PCAP_SONAME, "simulate --pcap loaded libpcap");
	free(dbg);
	rl_ns_destroy(&ns);
}

/*
 * Run @args of xdp-ratelimit (in @netns if not NULL) with the library of
 * @soname replaced by /dev/null for it alone; its exit status, stderr in *@err.
 */
static int run_without(const char *soname, const char *netns, const char *args, char **err)
{
	char path[512], *cmd = NULL, ns[128] = "";
	int ret;

	*err = NULL;
	if (!lib_path(soname, path, sizeof(path)))
		return -1;
	if (netns)
		snprintf(ns, sizeof(ns), "nsenter --net=/run/netns/%s ", netns);
	/* Bounded: the exporter would serve until stopped if the library were found. */
	if (asprintf(
		    &cmd,
		    "unshare -m sh -c 'mount --bind /dev/null %s && exec timeout 20 %s%s/xdp-ratelimit %s'",
		    path, ns, rl_build_dir, args) < 0)
		return -ENOMEM;
	ret = rl_run(cmd, NULL, err);
	free(cmd);
	return ret;
}

/* What --syn-proxy nft sets, one a line ("-": not there, as nf_conntrack's before its first use). */
#define SYSCTLS                                                                           \
	"for f in tcp_syncookies tcp_timestamps ../netfilter/nf_conntrack_tcp_loose; do " \
	"cat /proc/sys/net/ipv4/$f 2>/dev/null || echo -; done"

/*
 * Without the library a command needs: exit 1, the message names the
 * SONAME and the package, and nothing changed (--syn-cookies: no program
 * attached, the sysctls as they were).
 */
TEST_FLAGS(dynlib_missing, RL_TEST_ROOT)
{
	struct rl_ns ns = {};
	char *err = NULL, *before = NULL, *after = NULL, args[160];

	ASSERT_EQ(run_without(RL_MHD_SONAME, NULL, "exporter --listen 127.0.0.1:0", &err), 1,
		  "exporter without libmicrohttpd");
	ASSERT_CONTAINS(err, "the exporter needs " RL_MHD_SONAME ": install " RL_MHD_PACKAGE,
			"exporter's message");
	free(err);
	ASSERT_EQ(run_without(RL_PCAP_SONAME, NULL, "simulate --pcap /dev/null --rate 10", &err), 1,
		  "simulate --pcap without libpcap");
	ASSERT_CONTAINS(err, "simulate --pcap needs " RL_PCAP_SONAME ": install " RL_PCAP_PACKAGE,
			"simulate's message");
	free(err);
	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		return;
	rl_ns_rx_sh(&ns, &before, SYSCTLS);
	snprintf(args, sizeof(args), "attach %s --rate 100 --mode skb --syn-cookies 22", ns.rx_if);
	ASSERT_EQ(run_without(RL_NFT_SONAME, ns.rx, args, &err), 1,
		  "attach --syn-cookies without libnftables");
	ASSERT_CONTAINS(err, "--syn-proxy nft needs " RL_NFT_SONAME ": install " RL_NFT_PACKAGE,
			"attach's message");
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "status %s", ns.rx_if), 1, "nothing attached");
	rl_ns_rx_sh(&ns, &after, SYSCTLS);
	ASSERT_TRUE(before && *before, "the sysctls read");
	ASSERT_STREQ(after, before, "the sysctls unchanged");
	ASSERT_TRUE(rl_ns_rx_sh(&ns, NULL, "nft list table inet xdp_ratelimit >/dev/null 2>&1") !=
			    0,
		    "no nftables table made");
	free(err);
	free(before);
	free(after);
	rl_ns_destroy(&ns);
}
