#!/usr/bin/env bash
# Paired A/B timing of two shoal binaries on one config: in each pair both run
# at the same time, each pinned to its own core (the cores swap every pair), so
# whatever else loads the machine in that minute loads both alike. Prints each
# pair's walls and ratio B/A, and the median ratio.
#
# Why: on a shared machine wall times drift 25-35% between minutes, so a 5%
# change disappears between runs taken one after the other, even interleaved.
# Run A against a copy of itself first: the spread of its ratios is the
# smallest change this sitting can show.
#
# With -s (serial), each pair runs A and B one after the other, each alone on
# core 0 with the other core idle (A first in odd pairs, B first in even ones),
# and the minimum of each side is printed too. Use it where two runs side by
# side disturb each other (they share the L3 and memory with each other and
# with the host's other guests): a binary against a copy of itself then pairs
# far from 1.
#
# Usage: bench/ab.sh [-n PAIRS] [-s] BINARY_A BINARY_B CONFIG [shoal run options...]
#   e.g. cp build/shoal /tmp/shoal_a; (change, rebuild)
#        bench/ab.sh -n 8 /tmp/shoal_a build/shoal bench/configs/a2a-1024.toml
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
pairs=6
serial=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n)
      pairs=$(count_option bench/ab.sh pairs "${2:-}") || exit 2
      shift 2
      ;;
    -s)
      serial=1
      shift
      ;;
    *) break ;;
  esac
done
if [ $# -lt 3 ]; then
  echo "usage: bench/ab.sh [-n PAIRS] [-s] BINARY_A BINARY_B CONFIG [shoal run options...]" >&2
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
echo "mode: $([ "$serial" = 1 ] && echo "serial, each alone on core 0" || echo "side by side")"
ratios=() walls_a=() walls_b=()
for ((i = 0; i < pairs; ++i)); do
  status=0
  if [ "$serial" = 1 ]; then
    core_a=0 core_b=0
    order=(a b)
    [ $((i % 2)) = 1 ] && order=(b a)
    for side in "${order[@]}"; do
      binary=$a
      [ "$side" = b ] && binary=$b
      taskset -c 0 "$binary" run "$config" --quiet "$@" > "$out/$side" 2>&1 || status=$?
    done
  else
    core_a=$((i % 2)) core_b=$(((i + 1) % 2))
    taskset -c "$core_a" "$a" run "$config" --quiet "$@" > "$out/a" 2>&1 &
    pid_a=$!
    taskset -c "$core_b" "$b" run "$config" --quiet "$@" > "$out/b" 2>&1 &
    pid_b=$!
    wait "$pid_a" || status=$?
    wait "$pid_b" || status=$?
  fi
  wall_a=$(wall "$out/a") wall_b=$(wall "$out/b")
  if [ "$status" -ne 0 ] || [ -z "$wall_a" ] || [ -z "$wall_b" ]; then
    echo "bench/ab.sh: a run failed in pair $((i + 1)):" >&2
    tail -n 3 "$out/a" "$out/b" >&2
    exit 1
  fi
  ratio=$(awk -v x="$wall_a" -v y="$wall_b" 'BEGIN {printf "%.3f", y / x}')
  ratios+=("$ratio") walls_a+=("$wall_a") walls_b+=("$wall_b")
  echo "pair $((i + 1)): A $wall_a s (core $core_a), B $wall_b s (core $core_b), B/A $ratio"
done
if [ "$serial" = 1 ]; then
  min_a=$(printf '%s\n' "${walls_a[@]}" | sort -g | head -1)
  min_b=$(printf '%s\n' "${walls_b[@]}" | sort -g | head -1)
  echo "fastest: A $min_a s, B $min_b s, B/A $(awk -v x="$min_a" -v y="$min_b" 'BEGIN {printf "%.3f", y / x}')"
fi
echo "median B/A over $pairs pairs: $(printf '%s\n' "${ratios[@]}" | median)"
