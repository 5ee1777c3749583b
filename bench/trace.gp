# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# One trace through the four algorithms of xdp-ratelimit simulate: cumulative
# passes and drops over time, one panel per algorithm.
# gnuplot -e "dir='...'; name='steady'; heading='...'; out='x.png'" bench/trace.gp
# Data: dir/name.ALGO.dat with columns: time_s passed_so_far dropped_so_far
set terminal pngcairo size 900,1000 font "sans,10"
set output out
set multiplot layout 4,1 title heading
set key top left
set grid
set ylabel "packets"
algos = "token-bucket gcra fixed-window sliding-window"
do for [i=1:4] {
	a = word(algos, i)
	set title a
	if (i == 4) { set xlabel "time (s)" }
	plot dir."/".name.".".a.".dat" using 1:2 with steps lw 2 lc rgb "#1a9850" title "passed", \
	     ""                      using 1:3 with steps lw 2 lc rgb "#d73027" title "dropped"
}
unset multiplot
