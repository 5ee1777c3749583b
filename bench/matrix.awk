# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The matrix over independent runs (bench/run.sh): every run's DIR/matrix.tsv
# (program, sources, net ns, x (c), x (c'), x (c'4)) in, markdown out:
#	awk -v part=spread|mul|summary -f matrix.awk RUN1/matrix.tsv RUN2/matrix.tsv ...
# spread: each program's x (c') and x (c'4), min-max over the runs;
# mul: the 128-bit-multiply rates against (c') and against the same policy at an
# exact rate (taken within each run); summary: the goal, per group of policies.
BEGIN { FS = "\t" }
/^#/ { next }
{
	if (FNR == 1 || FILENAME != last) { runs++; last = FILENAME }
	k = $1 SUBSEP $2
	if (!(k in seen)) { seen[k] = 1; if ($2 == 1) order[++n] = $1 }
	cl[k, runs] = $5; cl4[k, runs] = $6
}
function range(arr, k,   r, lo, hi, v) {
	lo = ""; hi = ""
	for (r = 1; r <= runs; r++) {
		if (!((k, r) in arr)) continue
		v = arr[k, r]
		if (lo == "" || v < lo) lo = v
		if (hi == "" || v > hi) hi = v
	}
	rlo = lo; rhi = hi
	return lo == "" ? "-" : sprintf("%.2f-%.2f", lo, hi)
}
function group(p) {
	if (p !~ /^xdp-ratelimit/) return ""
	if (p ~ /128-bit/) return "mul"
	if (p ~ /coarse/) return "coarse"
	return "precise"
}
END {
	if (part == "spread") {
		printf "| program | 1 source: x (c') | x (c'4) | 1M sources: x (c') | x (c'4) | goal x (c') <= 1.1, 1 / 1M |\n"
		print "|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) {
			p = order[i]
			a = range(cl, p SUBSEP 1); ahi = rhi
			b = range(cl4, p SUBSEP 1)
			c = range(cl, p SUBSEP 1048576); chi = rhi
			d = range(cl4, p SUBSEP 1048576)
			g = ""
			if (p ~ /^xdp-ratelimit/)
				g = (ahi <= 1.1 ? "ok" : "**over**") " / " (chi <= 1.1 ? "ok" : "**over**")
			printf "| %s | %s | %s | %s | %s | %s |\n", p, a, b, c, d, g
		}
	} else if (part == "mul") {
		print "| policy at a rate that needs the 128-bit multiply | 1 source: x (c') | x the same policy at an exact rate | 1M sources: x (c') | x exact rate |"
		print "|---|---|---|---|---|"
		for (i = 1; i <= n; i++) {
			p = order[i]
			if (p !~ /128-bit/) continue
			e = p; sub(/, 128-bit multiply rate/, "", e)
			for (s = 1; s <= 2; s++) {
				src = s == 1 ? 1 : 1048576
				for (r = 1; r <= runs; r++)
					if ((p SUBSEP src, r) in cl && (e SUBSEP src, r) in cl)
						q[p SUBSEP src, r] = cl[p SUBSEP src, r] / cl[e SUBSEP src, r]
			}
			printf "| %s | %s | %s | %s | %s |\n", p, range(cl, p SUBSEP 1), range(q, p SUBSEP 1),
				range(cl, p SUBSEP 1048576), range(q, p SUBSEP 1048576)
		}
	} else {
		print "| our policies (over " runs " runs) | 1 source: x (c') | 1M sources: x (c') | 1 source: x (c'4) | 1M sources: x (c'4) |"
		print "|---|---|---|---|---|"
		split("precise coarse mul", G, " ")
		name["precise"] = "4 algorithms x packets/bytes, precise clock, exact rates"
		name["coarse"] = "the same with the coarse clock"
		name["mul"] = "token-bucket and gcra, packets/bytes, 128-bit-multiply rates"
		for (gi = 1; gi <= 3; gi++) {
			line = "| " name[G[gi]] " |"
			split("cl1 clM cl41 cl4M", C, " ")
			for (ci = 1; ci <= 4; ci++) {
				lo = ""; hi = ""
				src = C[ci] ~ /1$/ ? 1 : 1048576
				for (i = 1; i <= n; i++) {
					p = order[i]
					if (group(p) != G[gi]) continue
					for (r = 1; r <= runs; r++) {
						if (!((p SUBSEP src, r) in cl)) continue
						v = C[ci] ~ /^cl4/ ? cl4[p SUBSEP src, r] : cl[p SUBSEP src, r]
						if (lo == "" || v < lo) lo = v
						if (hi == "" || v > hi) hi = v
					}
				}
				line = line sprintf(" %.2f-%.2f |", lo, hi)
			}
			print line
		}
	}
}
