# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fleet sync accuracy against the interval (bench/sync.sh): dat (one Redis), cdat
# (a cluster of 3 masters), out.
set terminal pngcairo size 800,500
set output out
set title "Fleet sync: total passed / (r t + b), one source at 3x its limit"
set xlabel "sync interval (ms)"
set ylabel "accuracy"
set logscale x
set grid
set key top left
plot for [n in "2 3 5"] dat using ($1 == n + 0 ? $2 : 1/0):5 with linespoints title n." nodes", \
     cdat using 2:5 with linespoints dashtype 2 title "3 nodes, Redis Cluster"
