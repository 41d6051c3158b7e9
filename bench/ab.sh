#!/usr/bin/env bash
# Paired A/B timing of two shoal binaries on one config: in each pair both run
# at the same time, each pinned to its own core (the cores swap every pair), so
# whatever else loads the machine in that minute loads both alike. Prints each
# pair's walls and ratio B/A, and the median ratio.
#
# Why: on a shared machine wall times drift 25-35% between minutes, so a 5%
# change disappears between runs taken one after the other, even interleaved
# (docs/performance.md, tenth measurement). Run A against a copy of itself
# first: the spread of its ratios is the smallest change this sitting can show.
#
# Usage: bench/ab.sh [-n PAIRS] BINARY_A BINARY_B CONFIG [shoal run options...]
#   e.g. cp build/shoal /tmp/shoal_a; (change, rebuild)
#        bench/ab.sh -n 8 /tmp/shoal_a build/shoal bench/configs/a2a-1024.toml
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
pairs=6
if [ "${1:-}" = "-n" ]; then
  pairs=$(count_option bench/ab.sh pairs "${2:-}") || exit 2
  shift 2
fi
if [ $# -lt 3 ]; then
  echo "usage: bench/ab.sh [-n PAIRS] BINARY_A BINARY_B CONFIG [shoal run options...]" >&2
  exit 2
fi
a=$1 b=$2 config=$3
shift 3
for binary in "$a" "$b"; do
  if ! [ -x "$binary" ]; then
    echo "bench/ab.sh: $binary is not an executable" >&2
    exit 2
  fi
done
if ! [ -r "$config" ]; then
  echo "bench/ab.sh: cannot read config $config" >&2
  exit 2
fi
if [ "$(nproc)" -lt 2 ] || ! command -v taskset > /dev/null; then
  echo "bench/ab.sh: needs two cores and taskset" >&2
  exit 2
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
wall() { grep -oE 'wall [0-9.]+ s' "$1" | awk '{print $2}' || true; }

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F)"
echo "A: $a"
echo "B: $b"
echo "config: $config $*"
ratios=()
for ((i = 0; i < pairs; ++i)); do
  core_a=$((i % 2)) core_b=$(((i + 1) % 2))
  taskset -c "$core_a" "$a" run "$config" --quiet "$@" > "$out/a" 2>&1 &
  pid_a=$!
  taskset -c "$core_b" "$b" run "$config" --quiet "$@" > "$out/b" 2>&1 &
  pid_b=$!
  status=0
  wait "$pid_a" || status=$?
  wait "$pid_b" || status=$?
  wall_a=$(wall "$out/a") wall_b=$(wall "$out/b")
  if [ "$status" -ne 0 ] || [ -z "$wall_a" ] || [ -z "$wall_b" ]; then
    echo "bench/ab.sh: a run failed in pair $((i + 1)):" >&2
    tail -n 3 "$out/a" "$out/b" >&2
    exit 1
  fi
  ratio=$(awk -v x="$wall_a" -v y="$wall_b" 'BEGIN {printf "%.3f", y / x}')
  ratios+=("$ratio")
  echo "pair $((i + 1)): A $wall_a s (core $core_a), B $wall_b s (core $core_b), B/A $ratio"
done
echo "median B/A over $pairs pairs: $(printf '%s\n' "${ratios[@]}" | median)"
