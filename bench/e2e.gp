# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# End to end over veth: receive CPU per packet (median) per limiter, per traffic.
# gnuplot -e "dat='e2e.dat'; out='e2e.png'" bench/e2e.gp
# Data: one row per traffic: label, then ns/packet for ours, nft, iptables, xdp-drop.
set terminal pngcairo size 1000,500 font "sans,10"
set output out
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel "receive CPU ns per packet (median, log scale)"
set logscale y
set title "End to end over veth: receive-side CPU per packet"
set key top left
set grid ytics
set yrange [100:*]
set xtics rotate by -20
plot dat using 2:xtic(1) title "xdp-ratelimit", \
     dat using 3 title "nftables meter", \
     dat using 4 title "iptables hashlimit", \
     dat using 5 title "bare XDP drop"
