# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fleet sync through Sentinel: accuracy against the interval (bench/sync_sentinel.sh): dat, out.
# Each run a point, the mean of the rounds a line.
set terminal pngcairo size 800,500
set output out
set title "Fleet sync through Sentinel: total passed / (r t + b), 3 nodes, one source at 3-4x"
set xlabel "sync interval (ms)"
set ylabel "accuracy"
set logscale x
set grid
set key bottom right
name(i) = word(i == 1 ? "steady" : i == 2 ? "share" : "local", 1)
label(i) = i == 1 ? "steady" : i == 2 ? "master killed, --fallback share" : \
	   "master killed, --fallback local"
plot for [i = 1:3] '< grep -w '.name(i).' '.dat using 2:6 smooth unique with lines \
	linecolor i linewidth 2 title label(i), \
     for [i = 1:3] '< grep -w '.name(i).' '.dat using 2:6 with points linecolor i \
	pointtype 7 notitle
