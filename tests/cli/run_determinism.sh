#!/usr/bin/env bash
# `shoal run` at N ranks writes the same coflow table (CSV) as at one rank:
# a 64-GPU fat tree with compute tasks, an EP all-to-all, a DP permutation and
# an incast, with ECMP, with per-cell spraying, and on a dual-plane
# rail-optimized fabric instead.
# Usage: run_determinism.sh SHOAL MPIRUN RANKS WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 ranks=$3 dir=$4 src=$5
mkdir -p "$dir"
cp "$src/configs/examples/fat-tree-64-workload.toml" "$dir/"
sed 's/^load_balancing = .*/load_balancing = "ecmp"/' "$src/configs/examples/fat-tree-64.toml" >"$dir/ecmp.toml"
sed 's/^load_balancing = .*/load_balancing = "spray"/' "$src/configs/examples/fat-tree-64.toml" >"$dir/spray.toml"
sed -e '/^\[topology\]/,/^\[network\]/{/^\[network\]/!d}' "$dir/ecmp.toml" >"$dir/rest.toml"
{ printf '[topology]\nkind = "rail-optimized"\ngpus = 64\ngpus_per_server = 8\nradix = 16\n'
  printf 'dual_plane = true\nlink_rate = "100Gbps"\nlink_latency = "1us"\n\n'
  cat "$dir/rest.toml"; } >"$dir/rail.toml"
failures=0
for variant in ecmp spray rail; do
  "$shoal" run "$dir/$variant.toml" --quiet -o "$dir/$variant-1.csv" >"$dir/$variant-1.out"
  timeout 300 "$mpirun" -np "$ranks" "$shoal" run "$dir/$variant.toml" --quiet \
    -o "$dir/$variant-$ranks.csv" >"$dir/$variant-$ranks.out"
  grep -q "ranks $ranks" "$dir/$variant-$ranks.out"
  # The coflow table and the per-GPU figures.
  if cmp -s "$dir/$variant-1.csv" "$dir/$variant-$ranks.csv" &&
    [ "$(grep 'GPUs computing' "$dir/$variant-1.out")" = "$(grep 'GPUs computing' "$dir/$variant-$ranks.out")" ]; then
    echo "ok   $variant at $ranks ranks: $(wc -l <"$dir/$variant-1.csv") lines identical"
  else
    echo "FAIL $variant at $ranks ranks differs from 1 rank:"
    diff "$dir/$variant-1.csv" "$dir/$variant-$ranks.csv" || true
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ]
