#!/usr/bin/env bash
# Network benchmarks of issue 3: wall time, events and peak memory of each
# bench/configs/*.toml run on 1 rank and on 2 ranks. Build first (./run.sh).
# Usage: bench/network.sh [CONFIG...]   (default: the three issue-3 benchmarks below)
set -euo pipefail
cd "$(dirname "$0")/.."
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(bench/configs/a2a-1024.toml bench/configs/permutation-8192.toml bench/configs/ep-8192.toml)
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F)"
echo
echo "| config | ranks | wall s | events | M events/s | peak MB | M cell-hops/s per rank | result |"
echo "|---|---|---|---|---|---|---|---|"
for config in "${configs[@]}"; do
  for ranks in 1 2; do
    launch=(build/shoal)
    [ "$ranks" -gt 1 ] && launch=(tools/mpirun -np "$ranks" build/shoal)
    out=$( { /usr/bin/time -f "peak %M" "${launch[@]}" run "$config" --quiet; } 2>&1)
    wall=$(grep -oE 'wall [0-9.]+ s' <<<"$out" | awk '{print $2}')
    events=$(grep -oE 'events [0-9]+' <<<"$out" | head -1 | awk '{print $2}')
    rate=$(grep -oE '[0-9.]+ M events/s' <<<"$out" | awk '{print $1}')
    hops=$(grep -oE '[0-9.]+ M cell-hops/s per rank' <<<"$out" | awk '{print $1}')
    peak=$(grep -oE 'peak [0-9]+' <<<"$out" | awk '{printf "%.0f", $2 / 1024}')
    cct=$(grep -E '^ +0 ' <<<"$out" | awk '{print $(NF-1), $NF}')
    echo "| $(basename "$config") | $ranks | $wall | $events | $rate | $peak | $hops | CCT $cct |"
  done
done
