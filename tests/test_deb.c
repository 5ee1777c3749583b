// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The Debian package's sources, checked without building it (make deb-check
 * builds, installs and purges it: too long for make test): the version is
 * the program's, make install with debian/rules' variables puts everything
 * where Debian 12 wants it, the conffiles exist and change nothing as
 * shipped, and make deps installs every build dependency. Run from the
 * source tree (tests/run.sh does).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dynlib_mhd.h"
#include "dynlib_nft.h"
#include "dynlib_pcap.h"
#include "netns.h"
#include "test.h"

static bool mk_tmp(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/rl-deb-XXXXXX");
	return ASSERT_TRUE(mkdtemp(dir) != NULL, "temporary directory");
}

static void rm_tmp(const char *dir)
{
	if (*dir && !strncmp(dir, "/tmp/rl-deb-", 12))
		rl_sh(NULL, "rm -rf '%s'", dir);
}

/* A shell command's output, trailing newline removed (NULL on failure). */
static char *sh(const char *fmt, const char *arg)
{
	char *out = NULL;
	size_t n;

	if (rl_sh(&out, fmt, arg)) {
		free(out);
		return NULL;
	}
	n = strlen(out);
	if (n && out[n - 1] == '\n')
		out[n - 1] = '\0';
	return out;
}

TEST(deb_version)
{
	char *deb = sh("dpkg-parsechangelog -l debian/changelog -S Version%s", "");
	char *prog = sh("%s/xdp-ratelimit --version", rl_build_dir);
	char want[64];

	if (ASSERT_TRUE(deb && prog, "the two versions")) {
		/* A native package: the version is the program's, or it with -N for a Debian revision. */
		snprintf(want, sizeof(want), "xdp-ratelimit %.*s", (int)strcspn(deb, "-"), deb);
		ASSERT_STREQ(prog, want, "debian/changelog's version is the program's");
	}
	free(deb);
	free(prog);
}

TEST(deb_install_layout)
{
	char tmp[64] = "", *vars = NULL, *bad = NULL, *units = NULL;

	if (!mk_tmp(tmp, sizeof(tmp)))
		return;
	/* The variables debian/rules hands make install, less its own BUILD. */
	vars = sh("sed -n 's/^MAKEVARS *:= *//p' debian/rules%s", "");
	if (!ASSERT_TRUE(vars && strstr(vars, "PREFIX=/usr"), "debian/rules' MAKEVARS"))
		goto out;
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd),
			 "env -u MAKEFLAGS -u MFLAGS make -s %s BUILD=%s DESTDIR=%s/root install "
			 ">/dev/null",
			 vars, rl_build_dir, tmp);
		if (!ASSERT_OK(rl_sh(NULL, "%s", cmd), "make install as the package does"))
			goto out;
	}
	/* Debian 12: units in /lib/systemd/system (dh_installsystemd, lintian), the rest in /usr. */
	bad = sh("cd %s/root && find . -type f | grep -v -e '^./usr/' -e '^./lib/systemd/system/' "
		 "|| true",
		 tmp);
	ASSERT_STREQ(bad, "", "no file outside /usr and /lib/systemd/system");
	free(bad);
	bad = sh("cd %s/root && find . -path './usr/lib/systemd*' -o -path './etc*'", tmp);
	ASSERT_STREQ(
		bad, "",
		"no unit under /usr/lib/systemd, nothing in /etc (conffiles are dh_install's)");
	units = sh("cd %s/root/lib/systemd/system && ls | sort | tr '\\n' ' '", tmp);
	ASSERT_STREQ(units,
		     "xdp-ratelimit-exporter.service xdp-ratelimit-sync@.service "
		     "xdp-ratelimit.service xdp-ratelimit@.service ",
		     "every unit of dist/");
	ASSERT_OK(
		rl_sh(NULL, "test -s %s/root/usr/share/xdp-ratelimit/grafana-dashboard.json", tmp),
		"the dashboard");
out:
	free(vars);
	free(bad);
	free(units);
	rm_tmp(tmp);
}

TEST(deb_conffiles)
{
	char *out = NULL, *list = NULL;

	/* Every source debian/xdp-ratelimit.install names exists. */
	list = sh("awk '{print $1}' debian/xdp-ratelimit.install | while read -r f; do "
		  "test -f \"$f\" || echo \"missing: $f\"; done%s",
		  "");
	ASSERT_STREQ(list, "", "debian/xdp-ratelimit.install's files");
	/* The enabled xdp-ratelimit.service applies this file at boot: it must change nothing. */
	{
		char cmd[512];

		snprintf(cmd, sizeof(cmd),
			 "%s/xdp-ratelimit apply --check dist/etc/xdp-ratelimit.yaml",
			 rl_build_dir);
		ASSERT_EQ(rl_run(cmd, &out, NULL), 0, "apply --check on the shipped configuration");
		ASSERT_CONTAINS(out, "valid: 0 interfaces", "it names no interface");
	}
	free(out);
	out = sh("env -i sh -c 'set -a; . ./dist/etc/exporter.env; env' | grep XDP_RATELIMIT "
		 "|| true%s",
		 "");
	ASSERT_STREQ(out, "", "the exporter's environment file sets nothing as shipped");
	free(out);
	free(list);
}

TEST(deb_build_depends)
{
	char *missing = NULL;

	/* make deps installs every build dependency, so make deb-deps adds only the tools. */
	missing = sh("deps=$(make -s -pn -f Makefile 2>/dev/null | sed -n 's/^DEB_PKGS := //p'); "
		     "sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control | sed '$d' | "
		     "sed 's/^Build-Depends://' | tr ',' '\\n' | sed 's/(.*)//; s/ //g' | "
		     "grep -v -e '^$' -e '^debhelper-compat$' | while read -r p; do "
		     "echo \" $deps \" | grep -q \" $p \" || echo \"$p\"; done%s",
		     "");
	ASSERT_STREQ(missing, "", "Build-Depends not in DEB_PKGS");
	free(missing);
}

/*
 * The libraries the program opens with dlopen() (user/lib/dynlib_*.h) are
 * not seen by dpkg-shlibdeps: the package's Depends must name each.
 */
TEST(deb_depends_opened_libraries)
{
	/* Debian 13's name, where the 64-bit time_t transition renamed one, the alternative. */
	static const char *const pkgs[] = { RL_MHD_PACKAGE "|" RL_MHD_PACKAGE13, RL_NFT_PACKAGE,
					    RL_PCAP_PACKAGE "|" RL_PCAP_PACKAGE13 };
	/* One package a line, versions dropped, between newlines. */
	char *deps = sh(
		"echo; sed -n '/^Package:/,$p' debian/control | sed -n '/^Depends:/,/^[A-Z]/p' | "
		"sed '$d' | sed 's/^Depends://' | tr ',' '\\n' | sed 's/(.*)//; s/ //g'; echo%s",
		"");

	for (size_t i = 0; i < sizeof(pkgs) / sizeof(pkgs[0]); i++) {
		char line[64];

		snprintf(line, sizeof(line), "\n%s\n", pkgs[i]);
		ASSERT_TRUE(deps && strstr(deps, line), pkgs[i]);
	}
	free(deps);
}
