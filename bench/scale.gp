# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Per-packet cost (net of the test driver) against the number of sources.
# gnuplot -e "dat='scale.dat'; out='scale.png'" bench/scale.gp
set terminal pngcairo size 800,500 font "sans,10"
set output out
set logscale x 2
set xtics ("1" 1, "1k" 1024, "64k" 65536, "1M" 1048576, "8M" 8388608)
set xlabel "distinct sources (all in the map: warm)"
set ylabel "ns per packet, median, driver subtracted (bars: instances)"
set title "BPF\\_PROG\\_TEST\\_RUN cost against the number of IPv4 sources"
set key top left
set grid
set yrange [0:*]
plot dat using 1:2:7:8 with yerrorlines lw 2 pt 7 title "xdp-ratelimit token-bucket", \
     dat using 1:4:9:10 with yerrorlines lw 2 pt 5 title "(c') parse + LRU lookup + clock + GCRA CAS", \
     dat using 1:3 with linespoints lw 2 pt 9 title "(b) lookup/insert + atomic add"
