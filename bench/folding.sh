#!/usr/bin/env bash
# What folding Hermod's keys into switch classes loses: configs/examples/folding.toml
# under hermod for every enforcement point and classes = 1, 2, 4, 8, and under
# fair; prints a markdown table of the milestones. Build first (./run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
config=configs/examples/folding.toml
row() {  # row LABEL ARGS...
  local out
  out=$(build/shoal run "$config" --quiet "${@:2}")
  printf '| %s |' "$1"
  for m in "micro-batch 0 can compute" "micro-batch 3 can compute" "DP of layer 1 done" "phase ends"; do
    printf ' %s |' "$(grep "^  $m " <<<"$out" | sed "s/^  $m *//")"
  done
  printf '\n'
}
echo "| policy, enforcement, classes | micro-batch 0 can compute | micro-batch 3 can compute | DP of layer 1 done | phase ends |"
echo "|---|---|---|---|---|"
row "fair" --set policy.name=fair
for enforce in nic switch both; do
  for classes in 1 2 4 8; do
    row "hermod, $enforce, $classes" --set policy.enforce="$enforce" --set policy.classes="$classes"
  done
done
