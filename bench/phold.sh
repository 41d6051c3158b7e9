#!/usr/bin/env bash
# PHOLD engine benchmark: 1 rank vs 2 ranks, interleaved repetitions, medians.
# Usage: bench/phold.sh [REPS] [extra shoal bench phold options...]
# Prints a Markdown table for docs/performance.md. Build first (./run.sh builds build/shoal).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
shift || true
shoal=build/shoal
args=(--entities 100000 --blocks 4 --init 1 --remote 0.1 --lookahead 1us --mean-delay 1us
      --end 200us --seed 1 --quiet "$@")

rate() { grep 'event rate:' | awk '{print $3}'; }
sync() { grep 'sync share:' | awk '{print $3}'; }
# shellcheck source=bench/lib.sh
source bench/lib.sh

one=() two=() share=()
for ((i = 0; i < reps; i++)); do
  one+=("$("$shoal" bench phold "${args[@]}" | rate)")
  out=$(tools/mpirun -np 2 "$shoal" bench phold "${args[@]}")
  two+=("$(rate <<<"$out")")
  share+=("$(sync <<<"$out" | tr -d '%')")
done
m1=$(printf '%s\n' "${one[@]}" | median)
m2=$(printf '%s\n' "${two[@]}" | median)
ms=$(printf '%s\n' "${share[@]}" | median)
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F)"
echo "command: $shoal bench phold ${args[*]}   (2 ranks via tools/mpirun -np 2)"
echo
echo "| ranks | runs (M events/s) | median M events/s | ratio to 1 rank | sync share (median) |"
echo "|---|---|---|---|---|"
echo "| 1 | ${one[*]} | $m1 | 1.00 | - |"
echo "| 2 | ${two[*]} | $m2 | $(awk -v a="$m2" -v b="$m1" 'BEGIN {printf "%.2f", a / b}') | ${ms}% |"
