#!/usr/bin/env bash
# The network benchmarks: wall time, events and peak memory of each
# bench/configs/*.toml run on 1 rank and on 2 ranks. Build first (./run.sh).
# Usage: bench/network.sh [-n RUNS] [CONFIG...]
#   (default: 1 run each of a2a-1024, permutation-8192 and ep-8192)
# With -n, the 1-rank and 2-rank runs of a config alternate RUNS times and the
# table gives the medians (wall time, rate, peak) and the ratio of the median
# walls: on a shared machine the load drifts, and alternating spreads it
# evenly over both. A PHOLD line first shows the engine's rate in the same
# sitting (docs/performance.md); it does not tell whether memory is contended.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
runs=1
if [ "${1:-}" = "-n" ]; then
  runs=$(count_option bench/network.sh runs "${2:-}") || exit 2
  shift 2
fi
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(bench/configs/a2a-1024.toml bench/configs/permutation-8192.toml bench/configs/ep-8192.toml)

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F), $runs run(s) each"
phold=$(build/shoal bench phold --entities 100000 --blocks 4 --init 1 --remote 0.1 --lookahead 1us \
  --mean-delay 1us --end 200us --seed 1 --quiet 2>&1 | grep -oE '[0-9.]+ M events/s' || true)
echo "PHOLD, 1 rank: ${phold:-failed}"
echo
echo "| config | ranks | wall s | events | M events/s | peak MB | M cell-hops/s per rank | result |"
echo "|---|---|---|---|---|---|---|---|"
for config in "${configs[@]}"; do
  declare -A walls=() rates=() peaks=() hopss=() event_count=() result=()
  for ((run = 0; run < runs; ++run)); do
    for ranks in 1 2; do
      launch=(build/shoal)
      [ "$ranks" -gt 1 ] && launch=(tools/mpirun -np "$ranks" build/shoal)
      out=$( { /usr/bin/time -f "peak %M" "${launch[@]}" run "$config" --quiet; } 2>&1)
      walls[$ranks]+=" $(grep -oE 'wall [0-9.]+ s' <<<"$out" | awk '{print $2}')"
      rates[$ranks]+=" $(grep -oE '[0-9.]+ M events/s' <<<"$out" | awk '{print $1}')"
      hopss[$ranks]+=" $(grep -oE '[0-9.]+ M cell-hops/s per rank' <<<"$out" | awk '{print $1}')"
      peaks[$ranks]+=" $(grep -oE 'peak [0-9]+' <<<"$out" | awk '{printf "%.0f", $2 / 1024}')"
      event_count[$ranks]=$(grep -oE 'events [0-9]+' <<<"$out" | head -1 | awk '{print $2}')
      result[$ranks]=$(grep -E '^ +0 ' <<<"$out" | awk '{print $(NF-1), $NF}')
    done
  done
  wall1=$(median <<<"${walls[1]}")
  for ranks in 1 2; do
    wall=$(median <<<"${walls[$ranks]}")
    shown=$wall
    [ "$runs" -gt 1 ] && shown="$wall (${walls[$ranks]# })"
    [ "$ranks" -gt 1 ] && shown="$shown, speedup $(awk -v a="$wall1" -v b="$wall" 'BEGIN {printf "%.2f", a / b}')×"
    echo "| $(basename "$config") | $ranks | $shown | ${event_count[$ranks]} | $(median <<<"${rates[$ranks]}") | $(median <<<"${peaks[$ranks]}") | $(median <<<"${hopss[$ranks]}") | CCT ${result[$ranks]} |"
  done
  unset walls rates peaks hopss event_count result
done
