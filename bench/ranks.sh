#!/usr/bin/env bash
# Two ranks against one on a config, under each partition named: in each
# round, one run on one rank, then one on two ranks per partition, one after
# the other (so that all runs of a round see the same machine). Prints each
# round's walls (the simulation loop's, from the report), then the medians,
# each partition's speedup (the one-rank median over its median), and its
# balance and synchronization share (the report's line). Each run's whole
# wall (the command's, with reading the config and, for weighted, its pilot
# and second read) is timed too: the "whole" speedup is what a user waits.
#
# Why: the two ranks use both cores, so A/B pairs side by side (bench/ab.sh)
# cannot time them; walls drift 10-30% from minute to minute here, so compare
# medians of several rounds, and read the balance, which is counted, not
# timed: it bounds the speedup at ranks x balance.
#
# Usage: bench/ranks.sh [-n ROUNDS] CONFIG [PARTITION...] [-- shoal run options...]
#   e.g. bench/ranks.sh -n 5 configs/flagship/base.toml topology weighted round-robin
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
rounds=3
if [ "${1:-}" = -n ]; then
  rounds=$(count_option bench/ranks.sh rounds "${2:-}") || exit 2
  shift 2
fi
if [ $# -lt 1 ]; then
  echo "usage: bench/ranks.sh [-n ROUNDS] CONFIG [PARTITION...] [-- shoal run options...]" >&2
  exit 2
fi
config=$1
shift
partitions=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  partitions+=("$1")
  shift
done
[ "${1:-}" = -- ] && shift
[ ${#partitions[@]} -gt 0 ] || partitions=(topology weighted)
if ! [ -r "$config" ]; then
  echo "bench/ranks.sh: cannot read config $config" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
shoal=$root/build/shoal mpirun=$root/tools/mpirun work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

field() { grep -oE "$2 [0-9.]+%" "$1" | head -1 | awk '{print $NF}' | tr -d '%'; }

# Runs a command, appending its wall in seconds to the file named first.
timed() {
  local out=$1 start end
  shift
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  echo "$end $start" | awk '{printf "%.3f\n", $1 - $2}' >>"$out"
}

declare -A walls syncs balances
ones=""
echo "config $config, $(nproc) cores, $rounds rounds; walls in seconds"
for ((i = 1; i <= rounds; ++i)); do
  timed "$work/whole.one" "$shoal" run "$config" --quiet -o "$work/one.csv" --force "$@" \
    >"$work/one.log"
  line="round $i: 1 rank $(run_wall "$work/one.log") (whole $(tail -1 "$work/whole.one"))"
  ones="$ones $(run_wall "$work/one.log")"
  for p in "${partitions[@]}"; do
    timed "$work/whole.$p" "$mpirun" -np 2 "$shoal" run "$config" --quiet -o "$work/two.csv" \
      --force --set "run.partition=\"$p\"" "$@" >"$work/two.log" 2>&1
    if ! cmp -s "$work/one.csv" "$work/two.csv"; then
      echo "bench/ranks.sh: $p on 2 ranks wrote another coflow table than 1 rank" >&2
      exit 1
    fi
    walls[$p]="${walls[$p]:-} $(run_wall "$work/two.log")"
    syncs[$p]="${syncs[$p]:-} $(field "$work/two.log" 'synchronizing')"
    balances[$p]=$(field "$work/two.log" 'balance')
    line="$line, $p $(run_wall "$work/two.log") (whole $(tail -1 "$work/whole.$p"))"
  done
  echo "$line"
done
one=$(echo "$ones" | median)
one_whole=$(median <"$work/whole.one")
echo "median: 1 rank $one s (whole $one_whole s)"
for p in "${partitions[@]}"; do
  two=$(echo "${walls[$p]}" | median)
  awk -v p="$p" -v one="$one" -v two="$two" -v sync="$(echo "${syncs[$p]}" | median)" \
    -v bal="${balances[$p]}" -v one_whole="$one_whole" -v two_whole="$(median <"$work/whole.$p")" \
    'BEGIN {
      printf "  2 ranks, %s: %.3f s, speedup %.2fx, synchronizing %.1f%%, balance %.1f%%;", \
        p, two, one / two, sync, bal
      printf " whole %.3f s, speedup %.2fx\n", two_whole, one_whole / two_whole }'
done
