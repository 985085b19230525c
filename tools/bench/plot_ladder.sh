#!/bin/sh
# plot_ladder.sh CSV OUTDIR: one PNG per seed from `foldkit-bench ladder --csv CSV`:
# GB/s of every rung (and foldkit, CUB) at the seed's size and at the DRAM size as grouped
# bars, each table's ceiling as a dashed horizontal line, rung names on the x axis.
# Writes OUTDIR/ladder_seedNNN.png. Needs gnuplot (Debian/Ubuntu: apt-get install -y gnuplot-nox).
set -eu

if [ $# -ne 2 ]; then
  echo "usage: $0 CSV OUTDIR" >&2
  exit 2
fi
csv=$1
outdir=$2
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plot_ladder.sh: gnuplot is not installed; install it with: apt-get install -y gnuplot-nox" >&2
  exit 1
fi
[ -r "$csv" ] || { echo "plot_ladder.sh: cannot read $csv" >&2; exit 1; }
mkdir -p "$outdir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CSV -> per seed: seedNNN.dat (label <TAB> GB/s at the seed size <TAB> GB/s at the DRAM size,
# "-" where not measured) and seedNNN.gp (titles and ceilings as gnuplot variables). Columns are
# found by their header names; quoted fields (the GPU name, notes) are parsed properly. Sweep
# rows are left out: one bar per rung, at its seed shape.
awk -v dir="$tmp" '
function split_csv(line,   i, c, f, inq, n) {
  n = 0; f = ""; inq = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (inq) {
      if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ } else inq = 0 }
      else f = f c
    } else if (c == "\"") inq = 1
    else if (c == ",") { F[++n] = f; f = "" }
    else f = f c
  }
  F[++n] = f
  return n
}
function gbps(v) { return v == "" ? "-" : v }
function pow2(v,   k, p) { v = v + 0; p = 1; for (k = 0; k < 62 && p < v; k++) p *= 2; return p == v ? "2^" k : v }
NR == 1 { split_csv($0); for (k in F) col[F[k]] = k; next }
{
  split_csv($0)
  seed = F[col["seed"]]; table = F[col["table"]]; el = F[col["element"]]
  if (table != "seed_size" && table != "dram_size") next
  if (!(seed in seen_seed)) { seen_seed[seed] = 1; seeds[++nseeds] = seed; gpu[seed] = F[col["gpu"]]; date[seed] = F[col["date"]] }
  if (!((seed, el) in seen_el)) { seen_el[seed, el] = 1; nel[seed]++ }
  n[seed, table] = F[col["n"]]
  l2[seed, table] = F[col["l2_resident"]]
  if (F[col["variant"]] == "ceiling") {
    if (!((seed, table) in ceil)) ceil[seed, table] = F[col["gbps"]]
    next
  }
  key = F[col["variant"]] SUBSEP el
  if (!((seed, key) in seen_key)) {
    seen_key[seed, key] = 1; order[seed, ++nkeys[seed]] = key
    rung[seed, key] = F[col["rung"]]; elem[seed, key] = el; name[seed, key] = F[col["variant"]]
  }
  val[seed, key, table] = gbps(F[col["gbps"]])
  if (F[col["check"]] ~ /^(WRONG|ERROR)/) bad[seed, key] = 1
}
END {
  for (s = 1; s <= nseeds; s++) {
    seed = seeds[s]; dat = dir "/seed" seed ".dat"; gp = dir "/seed" seed ".gp"
    for (k = 1; k <= nkeys[seed]; k++) {
      key = order[seed, k]
      label = (rung[seed, key] != "" ? rung[seed, key] " " : "") name[seed, key]
      if (nel[seed] > 1) label = label " " elem[seed, key]
      if ((seed, key) in bad) label = label " (WRONG)"
      vs = ((seed, key, "seed_size") in val) ? val[seed, key, "seed_size"] : "-"
      vd = ((seed, key, "dram_size") in val) ? val[seed, key, "dram_size"] : "-"
      printf "%s\t%s\t%s\n", label, vs, vd > dat
    }
    close(dat)
    printf "gpu = \"%s\"; date = \"%s\"\n", gpu[seed], date[seed] > gp
    for (t = 1; t <= 2; t++) {
      table = t == 1 ? "seed_size" : "dram_size"; v = t == 1 ? "s" : "d"
      has = (seed, table) in n
      # The bench reuses one input at the seed size unless that size is also the DRAM table (004).
      reused = t == 1 && ((seed, "dram_size") in n)
      desc = !has ? "" : (t == 1 ? "seed size" : "DRAM size") " n=" pow2(n[seed, table]) \
             (reused ? (l2[seed, table] == "1" ? ", one input, L2-resident" : ", one input reused") : ", rotated inputs")
      c = ((seed, table) in ceil && ceil[seed, table] != "") ? ceil[seed, table] : "NaN"
      printf "has_%s = %d; title_%s = \"%s\"; ceil_%s = %s\n", v, has, v, desc, v, c > gp
    }
    close(gp)
  }
}' "$csv"

count=0
for dat in "$tmp"/seed*.dat; do
  [ -e "$dat" ] || { echo "plot_ladder.sh: no seed_size/dram_size rows in $csv" >&2; exit 1; }
  seed=$(basename "$dat" .dat)
  png="$outdir/ladder_$seed.png"
  # A series only where that table was measured (seed 004 has one table: its size is DRAM-sized).
  series=""
  for c in 2 3; do
    awk -F'\t' -v c="$c" '$c != "-" { found = 1 } END { exit !found }' "$dat" || continue
    if [ "$c" = 2 ]; then
      series="$series \"$dat\" using 2:xtic(1) title title_s lc rgb \"#4477aa\","
      series="$series ceil_s with lines dt 2 lw 2 lc rgb \"#224466\" title sprintf(\"ceiling, seed size (%.0f GB/s)\", ceil_s),"
    else
      series="$series \"$dat\" using 3:xtic(1) title title_d lc rgb \"#cc6677\","
      series="$series ceil_d with lines dt 2 lw 2 lc rgb \"#882244\" title sprintf(\"ceiling, DRAM size (%.0f GB/s)\", ceil_d),"
    fi
  done
  if [ -z "$series" ]; then
    echo "plot_ladder.sh: $seed: nothing measured, no chart" >&2
    continue
  fi
  gnuplot <<EOF
load "$tmp/$seed.gp"
set terminal pngcairo size 1400,800 font ",11"
set output "$png"
set title sprintf("%s ladder: GB/s per rung (%s, %s)", "$seed", gpu, date) noenhanced
set datafile separator "\t"
set datafile missing "-"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -40 left noenhanced
set key outside top center horizontal noenhanced
set ylabel "GB/s (bytes read; scans: read + written)"
set yrange [0:*]
set grid ytics
# Bars per table; each table's ceiling as a dashed line across the plot (a constant function).
plot ${series%,}
EOF
  echo "wrote $png"
  count=$((count + 1))
done
[ "$count" -gt 0 ]
