# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fleet sync through Sentinel: accuracy against the interval (bench/sync_sentinel.sh): dat, out.
set terminal pngcairo size 800,500
set output out
set title "Fleet sync through Sentinel: total passed / (r t + b), 3 nodes, one source at 3x"
set xlabel "sync interval (ms)"
set ylabel "accuracy"
set logscale x
set grid
set key top left
plot dat using 2:(strcol(3) eq "steady" ? $6 : 1/0) smooth unique with linespoints \
	title "steady", \
     dat using 2:(strcol(3) eq "share" ? $6 : 1/0) smooth unique with linespoints \
	title "master killed, --fallback share", \
     dat using 2:(strcol(3) eq "local" ? $6 : 1/0) smooth unique with linespoints \
	title "master killed, --fallback local"
