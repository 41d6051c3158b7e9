#!/usr/bin/env bash
# Overlap and per-step expert swaps end to end (docs/training.md, "Overlap"):
# `shoal run` of the 64-GPU Qwen example (two iterations, two micro-batches
# of 256 tokens) for each overlap mode, and with expert swaps from a routing
# file, writes the same coflow table and report at 1 and 2 ranks; `shoal
# traffic` counts a chunked dispatch's bytes whole; a bad value is one error
# naming the key.
# Usage: training_overlap.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
rm -rf "$dir"
mkdir -p "$dir"
sed -e "s|^job = .*|job = \"$src/jobs/qwen1.5-moe-a2.7b.toml\"|" -e 's/^micro_batch_tokens = .*/micro_batch_tokens = 256/' \
  -e 's/^micro_batches = .*/micro_batches = 2/' -e '/^\[job\]/a iterations = 2' \
  "$src/configs/examples/qwen-64.toml" >"$dir/base.toml"
sed '/^\[job\]/a overlap = "none"' "$dir/base.toml" >"$dir/none.toml"
sed '/^\[job\]/a overlap = "dual-micro-batch"\ncomm_sms = 20' "$dir/base.toml" >"$dir/dual.toml"
sed '/^\[job\]/a overlap = "chunked"\noverlap_chunks = 3' "$dir/base.toml" >"$dir/chunked.toml"
python3 "$src/tools/shoal-routing" "$src/jobs/qwen1.5-moe-a2.7b.toml" -o "$dir/routing.csv" \
  --iterations 2 --set micro_batches=2 --set micro_batch_tokens=256 >/dev/null
sed '/^\[job\]/a expert_swap = "per-step"\nrouting_file = "routing.csv"' "$dir/base.toml" >"$dir/swap.toml"
failures=0
report() { grep -v -e 'wall' -e 'written to' -e 'synchronizing' -e 'peak resident memory' "$1"; }
for variant in none dual chunked swap; do
  "$shoal" run "$dir/$variant.toml" --quiet -o "$dir/$variant-1.csv" >"$dir/$variant-1.out"
  timeout 300 "$mpirun" -np 2 "$shoal" run "$dir/$variant.toml" --quiet \
    --set run.event_order=atom -o "$dir/$variant-2.csv" >"$dir/$variant-2.out"
  if cmp -s "$dir/$variant-1.csv" "$dir/$variant-2.csv" &&
    [ "$(report "$dir/$variant-1.out")" = "$(report "$dir/$variant-2.out")" ]; then
    echo "ok   $variant: $(wc -l <"$dir/$variant-1.csv") CSV lines and the report identical at 1 and 2 ranks"
  else
    echo "FAIL $variant differs between 1 and 2 ranks"
    failures=$((failures + 1))
  fi
done
# Two-batch overlap: the same coflows as without; chunked: 3 times the EP coflows.
rows() { grep -c "$2" "$dir/$1-1.csv" || true; }
[ "$(wc -l <"$dir/none-1.csv")" = "$(wc -l <"$dir/dual-1.csv")" ] || { echo "FAIL dual changes the coflows"; failures=$((failures + 1)); }
ep_none=$(rows none '\.ep[0-9.]*\.to,'); ep_chunked=$(rows chunked '\.ep[0-9.]*\.c[0-9]\.to,')
if [ "$ep_chunked" -ne $((3 * ep_none)) ] || [ "$ep_none" -eq 0 ]; then
  echo "FAIL chunked: $ep_chunked dispatch coflows, expected 3 x $ep_none"
  failures=$((failures + 1))
fi
grep -q '\.swap\.' "$dir/swap-1.csv" || { echo "FAIL no swap coflow"; failures=$((failures + 1)); }
# `shoal traffic` counts the three chunks of a dispatch as one.
a=$("$shoal" traffic "$dir/base.toml" | grep "one EP dispatch")
b=$("$shoal" traffic "$dir/chunked.toml" | grep "one EP dispatch")
[ "$a" = "$b" ] || { echo "FAIL traffic: '$a' vs '$b'"; failures=$((failures + 1)); }
# One error line naming the key.
out=$("$shoal" run "$dir/base.toml" --set job.overlap=triple 2>&1 || true)
[[ "$out" == *'job.overlap "triple" is unknown (none, dual-micro-batch or chunked)'* ]] ||
  { echo "FAIL error: $out"; failures=$((failures + 1)); }
out=$("$shoal" run "$dir/base.toml" --set job.overlap=dual-micro-batch --set job.micro_batches=3 2>&1 || true)
[[ "$out" == *'schedule.overlap = "dual-micro-batch" pairs micro-batches: it needs an even micro_batches, not 3'* ]] ||
  { echo "FAIL error: $out"; failures=$((failures + 1)); }
[ "$failures" -eq 0 ]
