# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: make bench's chart (scripts/bench.sh, in the output directory):
# bench.dat's ratios (scripts/bench-report.py), one bar a figure, how many
# times better rdmasim0 is than the best peer on a log scale; green where
# it is better (> 1), red where it is not, the dashed line at 1.
set terminal svg size 1500,800 dynamic font "sans,11" background "white"
set output "bench.svg"
set title "rdmasim0 against the best peer measured in the same boot (> 1: rdmasim0 is better)" noenhanced
set ylabel "times better than the best peer (log scale)"
set logscale y 10
set yrange [0.1:1000]
set grid ytics
set style fill solid 0.85 border -1
set boxwidth 0.7
set xtics rotate by -40 left noenhanced font ",10"
set bmargin 14
set rmargin 30
set lmargin 12
set offsets 0.8, 0.8, 0, 0
unset key
plot "bench.dat" using 0:2:($2 >= 1 ? 0x2e8b57 : 0xcd5c5c):xtic(1) \
	with boxes lc rgb variable, \
     "" using 0:2:(sprintf("%.2fx\n%s", $2, strcol(3))) \
	with labels offset 0,1.3 font ",9" noenhanced, \
     1 with lines lc rgb "black" dt 2
