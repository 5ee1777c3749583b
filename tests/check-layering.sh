#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make check-layering: fail on an include that points up or across the
# architecture, and on any include circle between units.
#
# Each folder may include from itself and from the folders listed for it
# below, nothing else (system headers <...> aside). A quoted include resolves
# as the compiler resolves it: the including file's folder first, then the
# folder's -I path in the Makefile's order. A header found only in a folder
# the including one may not use is an upward (or sideways) include. A unit is
# foo.c with foo.h in one folder; unit A depends on unit B when A.c or A.h
# includes B.h. The dependencies of every unit, over all folders, must be
# free of circles: tsort(1) names the members of the first loop it meets.
#
# With -v it also prints each unit's floor (0: includes no project header;
# otherwise one more than the highest floor it includes) and the height of
# the tallest stack.
set -eu
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

# --self-test: the check must refuse a circle and an upward include, and pass
# the same tree without them (make check-layering runs it first).
if [ "${1:-}" = --self-test ]; then
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/include" "$t/user/lib" "$t/user/cli"
	echo '#include "b.h"' >"$t/user/lib/a.h"
	echo '#include "rl_x.h"' >"$t/user/lib/b.h"
	: >"$t/include/rl_x.h"
	echo '#include "a.h"' >"$t/user/cli/main.c"
	RL_LAYERING_ROOT=$t "$self" >/dev/null || {
		echo "self-test: a clean tree was refused" >&2
		exit 1
	}
	echo '#include "a.h"' >>"$t/user/lib/b.h"
	if RL_LAYERING_ROOT=$t "$self" 2>/dev/null; then
		echo "self-test: the circle a.h <-> b.h passed" >&2
		exit 1
	fi
	echo '#include "rl_x.h"' >"$t/user/lib/b.h"
	: >"$t/user/cli/cli.h"
	echo '#include "cli.h"' >"$t/user/lib/c.c"
	if RL_LAYERING_ROOT=$t "$self" 2>/dev/null; then
		echo "self-test: user/lib/c.c including user/cli/cli.h passed" >&2
		exit 1
	fi
	echo "layering self-test: a circle and an upward include are refused"
	exit 0
fi

cd "${RL_LAYERING_ROOT:-$(dirname "$0")/..}"
verbose=0
[ "${1:-}" = -v ] && verbose=1

# folder: the folders its includes may resolve to, in search order.
allowed() {
	case $1 in
	include) echo include ;;
	bpf) echo bpf include ;;
	bench/bpf) echo bench/bpf bpf include ;;
	user/lib) echo user/lib include ;;
	user/cli) echo user/cli user/lib include ;;
	tests) echo tests tests/lib user/lib include ;;
	tests/lib) echo tests/lib user/lib include ;;
	bench) echo bench user/lib include ;;
	*) return 1 ;;
	esac
}

folders="include bpf bench/bpf user/lib user/cli tests tests/lib bench"
# Headers generated into the build directory (bpftool skeletons): allowed
# from the folders that embed the object they describe.
generated() {
	case $1:$2 in
	user/lib:xdp_ratelimit.skel.h | tests:*.skel.h | bench:*.skel.h) return 0 ;;
	esac
	return 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/edges"
: >"$tmp/bad"

for dir in $folders; do
	search=$(allowed "$dir")
	for f in "$dir"/*.c "$dir"/*.h; do
		[ -f "$f" ] || continue
		base=${f##*/}
		unit="$dir/${base%%.*}"
		echo "$unit $unit" >>"$tmp/edges"
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
			sed 's/^\([0-9]*\):.*"\(.*\)".*/\1 \2/' |
			while read -r line hdr; do
				found=
				for s in $search; do
					if [ -f "$s/$hdr" ]; then
						found=$s
						break
					fi
				done
				if [ -n "$found" ]; then
					dep="$found/${hdr%.h}"
					[ "$dep" = "$unit" ] || echo "$unit $dep" >>"$tmp/edges"
					continue
				fi
				generated "$dir" "$hdr" && continue
				where=
				for s in $folders; do
					[ -f "$s/$hdr" ] && where="$where $s/$hdr"
				done
				if [ -n "$where" ]; then
					echo "$f:$line: includes$where, which $dir/ may not use (it may use: $search)" >>"$tmp/bad"
				else
					echo "$f:$line: includes \"$hdr\", found in none of: $search" >>"$tmp/bad"
				fi
			done
	done
done

status=0
if [ -s "$tmp/bad" ]; then
	cat "$tmp/bad" >&2
	status=1
fi
sort -u "$tmp/edges" >"$tmp/edges.u"
# tsort lists a unit after the units that depend on it: reverse for floors.
if ! tsort "$tmp/edges.u" >"$tmp/order" 2>"$tmp/loops"; then
	echo "include circle between units:" >&2
	# One line per loop tsort reports: its members.
	awk '/input contains a loop/ { if (l != "") print "  " l; l = ""; next }
	     { sub(/^tsort: /, ""); l = l == "" ? $0 : l " -> " $0 }
	     END { if (l != "") print "  " l }' "$tmp/loops" >&2
	status=1
fi
if [ "$verbose" = 1 ] && [ "$status" = 0 ]; then
	tac "$tmp/order" | awk -v edges="$tmp/edges.u" '
		BEGIN {
			while ((getline l < edges) > 0) {
				split(l, e, " ")
				if (e[1] != e[2])
					deps[e[1]] = deps[e[1]] " " e[2]
			}
		}
		{
			n = split(deps[$1], d, " ")
			f = 0
			for (i = 1; i <= n; i++)
				if (floor[d[i]] + 1 > f)
					f = floor[d[i]] + 1
			floor[$1] = f
			if (f > top)
				top = f
			printf "%2d %s\n", f, $1
		}
		END { printf "tallest stack: %d floors above the ground\n", top }'
fi
if [ "$status" = 0 ]; then
	echo "layering: $(wc -l <"$tmp/order") units, no upward include, no circle"
fi
exit $status
