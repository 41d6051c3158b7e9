#!/usr/bin/env bash
# Fabric-level checks through `shoal run`, against simple closed forms:
# - a cross-leaf all-to-all on a 4:1 oversubscribed leaf takes 4x as long as on a
#   full-bisection one (throughput 1/4), within 5%;
# - the same all-to-all on a multi-plane fat tree and on a shared-spine
#   multi-rail fabric ends within 3% (DeepSeek-V3 reports 272.80 vs 272.52 B
#   tokens/day for the two);
# - an 8 MB permutation on a full-bisection 3-tier fat tree with adaptive
#   spraying runs every flow at >= 95% of line rate; random spraying and ECMP
#   (hash collisions) are reported.
# Usage: fabric_validation.sh SHOAL WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 dir=$2 src=$3
rm -rf "$dir"  # outputs are never overwritten without --force
mkdir -p "$dir"
cp "$src"/tests/configs/*.toml "$dir/"
cct() { "$shoal" run "$1" --quiet -o "$dir/out.csv" --force >/dev/null && awk -F, 'NR == 2 {print $13}' "$dir/out.csv"; }
failures=0

sed 's/^leaf_oversubscription = .*/leaf_oversubscription = "4:1"/' "$dir/cross-leaf-a2a.toml" >"$dir/cross-leaf-a2a-4.toml"
full=$(cct "$dir/cross-leaf-a2a.toml")
thin=$(cct "$dir/cross-leaf-a2a-4.toml")
ratio=$(awk -v a="$thin" -v b="$full" 'BEGIN {printf "%.3f", a / b}')
if awk -v r="$ratio" 'BEGIN {exit !(r >= 3.8 && r <= 4.2)}'; then
  echo "ok   4:1 leaf oversubscription: all-to-all takes ${ratio}x the full-bisection time (4 +-5%)"
else
  echo "FAIL 4:1 leaf oversubscription: ${ratio}x the full-bisection time, expected 4 +-5%"
  failures=$((failures + 1))
fi

sed -e 's/^kind = "multi-plane"/kind = "rail-optimized"/' -e '/^planes = /d' \
  "$dir/multi-plane-128.toml" >"$dir/multi-rail-128.toml"
planes=$(cct "$dir/multi-plane-128.toml")
rails=$(cct "$dir/multi-rail-128.toml")
gap=$(awk -v a="$planes" -v b="$rails" 'BEGIN {d = (a - b) / b; if (d < 0) d = -d; printf "%.4f", d}')
if awk -v g="$gap" 'BEGIN {exit !(g <= 0.03)}'; then
  echo "ok   multi-plane all-to-all ${planes} ps vs shared-spine multi-rail ${rails} ps: ${gap} apart (<= 3%)"
else
  echo "FAIL multi-plane ${planes} ps vs multi-rail ${rails} ps: ${gap} apart, expected <= 3%"
  failures=$((failures + 1))
fi

line_rate_ps=$((8000000 * 8 * 10))  # 8 MB at 100 Gb/s: 640 us in ps
adaptive=$(cct "$dir/permutation-128.toml")
share=$(awk -v t="$adaptive" -v l="$line_rate_ps" 'BEGIN {printf "%.3f", l / t}')
if awk -v s="$share" 'BEGIN {exit !(s >= 0.95)}'; then
  echo "ok   permutation with adaptive spraying: slowest flow at ${share} of line rate (>= 0.95)"
else
  echo "FAIL permutation with adaptive spraying: slowest flow at ${share} of line rate, expected >= 0.95"
  failures=$((failures + 1))
fi
for balancing in spray ecmp; do
  sed "s/^load_balancing = .*/load_balancing = \"$balancing\"/" "$dir/permutation-128.toml" >"$dir/permutation-$balancing.toml"
  t=$(cct "$dir/permutation-$balancing.toml")
  echo "info permutation with $balancing: slowest flow at $(awk -v t="$t" -v l="$line_rate_ps" 'BEGIN {printf "%.3f", l / t}') of line rate"
done
[ "$failures" -eq 0 ]
