#!/usr/bin/env bash
# `shoal scale`'s prediction against the measured run, per config: the
# predicted 2-rank loop (from shoal scale --ranks 2 under mpirun -np 2, which
# times the one-rank run on both cores at once), then ROUNDS rounds of one run on one rank and one on two, one
# after the other; prints each config's medians, the measured and predicted
# speedups, and the prediction's error against the measured 2-rank loop.
#
# The counts shoal scale predicts (windows, balance, events across ranks) are
# exact and checked by tests/cli/scale.sh; here the times are compared. Walls
# drift 10-30% from minute to minute on a 2-core machine: compare ratios.
#
# Usage: bench/scale.sh [-n ROUNDS] [--network NAME|FILE] CONFIG...
#   e.g. bench/scale.sh -n 3 bench/configs/a2a-1024.toml bench/configs/ep-8192.toml \
#          configs/flagship/base.toml
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
rounds=3
network=shm
while [ $# -gt 0 ]; do
  case "$1" in
    -n) rounds=$(count_option bench/scale.sh rounds "${2:-}") || exit 2; shift 2 ;;
    --network) network=${2:?--network needs a name or file}; shift 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ]; then
  echo "usage: bench/scale.sh [-n ROUNDS] [--network NAME|FILE] CONFIG..." >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
shoal=$root/build/shoal mpirun=$root/tools/mpirun work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "$(nproc) cores, $rounds rounds, MPI costs $network; loops in seconds"
for config in "$@"; do
  # Both cores busy while it times the run, as they are in a 2-rank run.
  "$mpirun" -np 2 "$shoal" scale "$config" --ranks 2 --network "$network" -o "$work/scale.csv" \
    --force >"$work/scale.log" 2>&1
  predicted=$(awk -F, 'NR > 1 && $1 == 2 {print $12}' "$work/scale.csv")
  timed=$(grep -oE 'events in [0-9.]+ s' "$work/scale.log" | awk '{print $3}')
  ones="" twos=""
  for ((i = 1; i <= rounds; ++i)); do
    "$shoal" run "$config" --quiet >"$work/one.log"
    "$mpirun" -np 2 "$shoal" run "$config" --quiet >"$work/two.log" 2>&1
    ones="$ones $(run_wall "$work/one.log")"
    twos="$twos $(run_wall "$work/two.log")"
  done
  one=$(echo "$ones" | median)
  two=$(echo "$twos" | median)
  awk -v c="$config" -v one="$one" -v two="$two" -v p="$predicted" -v t="$timed" 'BEGIN {
    printf "%s\n  measured: 1 rank %.3f, 2 ranks %.3f (speedup %.2fx)\n", c, one, two, one / two
    printf "  predicted: 2 ranks %.3f (speedup %.2fx over its own 1-rank %.3f); error %+.1f%%\n",
      p, t / p, t, 100 * (p - two) / two }'
done
