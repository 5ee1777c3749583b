#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make deb-check: install the package built by make deb on this machine, check
# what it put where, run the installed program, purge it and check that
# nothing of it is left. As root; refuses if xdp-ratelimit is installed
# already (it would be replaced, then purged). Usage: tests/deb-check.sh DEB
set -euo pipefail

deb=$(realpath "${1:?usage: $0 path/to/xdp-ratelimit_VERSION_ARCH.deb}")
pkg=xdp-ratelimit
fails=0
checks=0
tmp=$(mktemp -d /tmp/rl-deb-check-XXXXXX)
installed=0

cleanup() {
	# Whatever failed, leave the machine without the package.
	if [ "$installed" = 1 ] && dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q installed; then
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$pkg" >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

check() { # check NAME COMMAND...: run it, count it
	local name=$1
	shift
	checks=$((checks + 1))
	if "$@" >"$tmp/out" 2>&1; then
		echo "  ok    $name"
	else
		echo "  FAIL  $name"
		sed 's/^/        /' "$tmp/out" | head -n 20
		fails=$((fails + 1))
	fi
}

[ "$(id -u)" = 0 ] || { echo "deb-check: needs root (it installs $deb)"; exit 1; }
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q installed; then
	echo "deb-check: $pkg is installed already; remove it first"
	exit 1
fi

# Everything on the root file system named after the package, before: what
# is left after the purge is compared with this (other copies of the program,
# build trees and temporary files are not the package's).
snapshot() {
	find / -xdev \( -path /proc -o -path /sys -o -path /run -o -path /tmp -o -path /work \
		-o -path /root -o -path /home -o -path /var/tmp \) -prune -o \
		\( -name '*xdp-ratelimit*' -o -name '*xdp_ratelimit*' \) -print 2>/dev/null | LC_ALL=C sort
}
snapshot >"$tmp/before"

echo "== apt-get install $deb"
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; exit 1; }

echo "== dpkg -L $pkg"
dpkg -L "$pkg" | LC_ALL=C sort | tee "$tmp/files"
version=$(dpkg-query -W -f='${Version}' "$pkg")

echo "== checks"
want="/etc/xdp-ratelimit/exporter.env
/etc/xdp-ratelimit/xdp-ratelimit.yaml
/lib/systemd/system/xdp-ratelimit-exporter.service
/lib/systemd/system/xdp-ratelimit-sync@.service
/lib/systemd/system/xdp-ratelimit.service
/lib/systemd/system/xdp-ratelimit@.service
/usr/sbin/xdp-ratelimit
/usr/share/bash-completion/completions/xdp-ratelimit
/usr/share/doc/xdp-ratelimit/README.md.gz
/usr/share/doc/xdp-ratelimit/benchmarks.md.gz
/usr/share/doc/xdp-ratelimit/changelog.gz
/usr/share/doc/xdp-ratelimit/copyright
/usr/share/doc/xdp-ratelimit/design.md.gz
/usr/share/doc/xdp-ratelimit/examples/xdp-ratelimit.yaml
/usr/share/man/man8/xdp-ratelimit.8.gz
/usr/share/xdp-ratelimit/grafana-dashboard.json"
for f in $want; do
	check "installed: $f" test -f "$f" -a -s "$f"
	check "dpkg -L lists $f" grep -qx "$f" "$tmp/files"
done
check "every file dpkg -L lists is one of those (or the lintian overrides)" \
	bash -c 'while read -r f; do [ -d "$f" ] && continue; case "$f" in
		/usr/share/lintian/overrides/xdp-ratelimit) ;;
		*) grep -qx "$f" <<<"$0" || { echo "unexpected: $f"; exit 1; } ;; esac
	done <"$1"' "$want" "$tmp/files"
check "conffiles: the two files of /etc/xdp-ratelimit" \
	bash -c "dpkg-query -W -f='\${Conffiles}\n' $pkg | awk 'NF {print \$1}' | LC_ALL=C sort |
		diff - <(printf '%s\n' /etc/xdp-ratelimit/exporter.env /etc/xdp-ratelimit/xdp-ratelimit.yaml)"
check "--version is the package's ($version)" \
	bash -c "/usr/sbin/xdp-ratelimit --version | grep -qx 'xdp-ratelimit ${version%%-*}'"
check "help lists the commands" bash -c '/usr/sbin/xdp-ratelimit help | grep -q "attach"'
check "the man page is found by man" bash -c 'man -w xdp-ratelimit | grep -q /usr/share/man/man8/xdp-ratelimit.8.gz'
check "the shipped configuration is valid and names no interface" \
	bash -c '/usr/sbin/xdp-ratelimit apply --check /etc/xdp-ratelimit/xdp-ratelimit.yaml | grep -q "valid: 0 interfaces"'
check "the exporter's environment file sets nothing" \
	bash -c 'env -i sh -c "set -a; . /etc/xdp-ratelimit/exporter.env; env" | grep -q XDP_RATELIMIT && exit 1 || exit 0'
check "the completion loads and completes the commands" \
	bash -c '. /usr/share/bash-completion/completions/xdp-ratelimit && complete -p xdp-ratelimit &&
		COMP_WORDS=(xdp-ratelimit att) COMP_CWORD=1 && _xdp_ratelimit && [ "${COMPREPLY[*]}" = attach ]'
for u in xdp-ratelimit.service xdp-ratelimit-exporter.service; do
	check "enabled: $u" test -L "/etc/systemd/system/multi-user.target.wants/$u"
done
check "templates are not enabled" \
	bash -c '! ls /etc/systemd/system/*/xdp-ratelimit@* /etc/systemd/system/*/xdp-ratelimit-sync@* 2>/dev/null | grep -q .'
check "not started: the postinst has no start" \
	bash -c "! grep -E 'deb-systemd-invoke (start|restart)' /var/lib/dpkg/info/$pkg.postinst"
check "the units the package installed pass systemd-analyze verify" \
	systemd-analyze verify /lib/systemd/system/xdp-ratelimit.service \
	/lib/systemd/system/xdp-ratelimit-exporter.service
check "the dashboard is JSON" python3 -m json.tool /usr/share/xdp-ratelimit/grafana-dashboard.json
# libmicrohttpd, libpcap and libnftables are opened when a command needs them,
# not linked: dpkg-shlibdeps cannot see them, debian/control names them.
# Debian 13 renamed two of them (64-bit time_t): either name does.
for alt in libmicrohttpd12:libmicrohttpd12t64 libnftables1 libpcap0.8:libpcap0.8t64; do
	lib=${alt%%:*} t64=${alt#*:}
	want=$lib
	[ "$t64" != "$alt" ] && want="$lib ([^)]*) | $t64"
	check "Depends names $want, installed with it" bash -c \
		"dpkg-query -W -f='\${Depends}' $pkg | grep -qE '$want' &&
		{ dpkg-query -W -f='\${Status}' $lib 2>/dev/null | grep -q 'ok installed' ||
		  dpkg-query -W -f='\${Status}' $t64 2>/dev/null | grep -q 'ok installed'; }"
done
check "simulate --pcap finds libpcap (libpcap's own error on /dev/null)" \
	bash -c '/usr/sbin/xdp-ratelimit simulate --pcap /dev/null --rate 10 2>&1 | grep -q "truncated dump file"'
check "the exporter finds libmicrohttpd (it serves until stopped)" \
	bash -c 'timeout 2 /usr/sbin/xdp-ratelimit exporter --listen 127.0.0.1:0; [ $? = 124 ]'
check "no optional library linked (ldd)" \
	bash -c '! ldd /usr/sbin/xdp-ratelimit | grep -E "libmicrohttpd|libpcap|libnftables"'

echo "== apt-get purge $pkg"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$pkg" >"$tmp/purge.log" 2>&1 ||
	{ cat "$tmp/purge.log"; exit 1; }
installed=0
check "purged: dpkg knows nothing of it" bash -c "! dpkg-query -W $pkg"
# Files and the package's own directories; shared ones (/usr/sbin, ...) stay.
check "purged: nothing dpkg -L listed is left but shared directories" \
	bash -c 'while read -r f; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		[ -d "$f" ] && ! [[ $f == *xdp-ratelimit* ]] && continue
		echo "left: $f"; exit 1
	done <"$1"' _ "$tmp/files"
# systemd-analyze verify runs man(1) on the units' Documentation=, and man-db
# caches the formatted page in /var/cache/man: the check's doing, not the
# package's (man-db expires its cache itself). Removed if it was not there.
grep -qx /var/cache/man/cat8/xdp-ratelimit.8.gz "$tmp/before" ||
	rm -f /var/cache/man/cat8/xdp-ratelimit.8.gz
snapshot >"$tmp/after"
echo "== find / -name '*xdp-ratelimit*' after the purge, less what was there before"
comm -13 "$tmp/before" "$tmp/after" | tee "$tmp/left"
check "purged: find shows nothing new named after the package" test ! -s "$tmp/left"
check "purged: no enablement symlink or deb-systemd-helper state" \
	bash -c '! find /etc/systemd /var/lib/systemd -name "*xdp-ratelimit*" | grep .'

echo "$((checks - fails)) passed, $fails failed"
[ "$fails" = 0 ]
