#!/usr/bin/env bash
# Partition files for fabric runs (docs/partitions.md):
# - `shoal partition fabric` writes one; `shoal topo --strategy FILE` reads it back;
# - a run at 3 ranks with the written file, and with a hand-made one that
#   deals servers and switches unevenly (given in the config, relative to it),
#   writes the same coflow table as one rank;
# - the weighted strategy (a pilot run's load balanced slice by slice): as a
#   run's strategy at 3 ranks, the same table as one rank; written as a file
#   by `shoal partition fabric --strategy weighted`; refused by `shoal topo`,
#   which has no workload;
# - weighted on a training job cut at 50 ms, whose pilot stops there and whose
#   units dealt in turn (as its pilot ran) balance as well: the run keeps the
#   pilot's fragments, and writes the same
#   table as one rank; fat-tree-64's workload is placed by load instead;
# - a file for another rank count, for another fabric, a malformed file and a
#   name that is neither a strategy nor a file: one line naming it, exit 1.
# Usage: fabric_partition.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
rm -rf "$dir"
mkdir -p "$dir/parts"
cp "$src/configs/examples/fat-tree-64.toml" "$src/configs/examples/fat-tree-64-workload.toml" "$dir/"
cd "$dir"
failures=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; failures=$((failures + 1)); }

"$shoal" run fat-tree-64.toml --quiet -o one.csv >/dev/null
"$shoal" partition fabric fat-tree-64.toml --ranks 3 --strategy round-robin -o parts/rr3.part >/dev/null
grep -q '^ranks 3$' parts/rr3.part && ok "partition fabric wrote parts/rr3.part" || bad "no ranks line in parts/rr3.part"
(cd parts && "$shoal" topo ../fat-tree-64.toml --ranks 3 --strategy rr3.part) >topo.log  # from the working directory
if grep -q 'partition: file .*rr3.part over 3 ranks' topo.log; then ok "topo reads the file back"; else
  bad "topo did not report the file: $(grep partition topo.log)"; fi

# A hand-made partition of the 88 entities (8 servers of 8 GPUs and an NVSwitch,
# then 16 switches): the first server alone on rank 0, the other servers on
# rank 1, every switch on rank 2.
grep -v '^[0-9]' parts/rr3.part >parts/hand3.part
printf '0 8 0\n9 71 1\n72 87 2\n' >>parts/hand3.part
sed 's|^partition = .*|partition = "parts/hand3.part"|' fat-tree-64.toml >hand.toml

for spec in rr3 hand3; do
  if [ $spec = hand3 ]; then config=hand.toml args=(); else config=fat-tree-64.toml args=(--set run.partition=parts/rr3.part); fi
  "$mpirun" -np 3 "$shoal" run "$config" "${args[@]}" --quiet -o "three-$spec.csv" >"three-$spec.log"
  if ! grep -q "partition file .*$spec.part" "three-$spec.log"; then
    bad "$spec: the run did not use the file: $(grep ranks "three-$spec.log")"
  elif cmp -s one.csv "three-$spec.csv"; then
    ok "$spec at 3 ranks: coflow table identical to 1 rank"
  else
    bad "$spec at 3 ranks: coflow table differs from 1 rank"
  fi
done

"$mpirun" -np 3 "$shoal" run fat-tree-64.toml --set run.partition='"weighted"' -o three-weighted.csv >three-weighted.log 2>&1
if ! grep -q "ranks 3 (partition weighted)" three-weighted.log; then
  bad "weighted: the run did not use it: $(grep -E 'ranks|error' three-weighted.log | head -2)"
elif grep -q "keeps the pilot's fragments" three-weighted.log; then
  bad "weighted at 3 ranks: fat-tree-64's units dealt in turn were kept, not placed by load"
elif cmp -s one.csv three-weighted.csv; then
  ok "weighted at 3 ranks: coflow table identical to 1 rank"
else
  bad "weighted at 3 ranks: coflow table differs from 1 rank"
fi
sed 's|"../../jobs/|"'"$src"'/jobs/|' "$src/configs/examples/qwen-64.toml" >qwen-64.toml
"$shoal" run qwen-64.toml --set run.end=50ms --quiet -o qwen-one.csv >/dev/null
"$mpirun" -np 2 "$shoal" run qwen-64.toml --set run.end=50ms --set run.partition='"weighted"' \
  -o qwen-two.csv >qwen-two.log 2>&1
if ! grep -q "ranks 2 (partition weighted)" qwen-two.log; then
  bad "weighted on a training job: the run did not use it: $(grep -E 'ranks|error' qwen-two.log | head -2)"
elif ! grep -q "keeps the pilot's fragments" qwen-two.log; then
  bad "weighted on a training job: the pilot's fragments were not kept"
elif ! grep -q "pilot on the instant network with latency, [0-9]* events over 50 ms on 2 ranks" qwen-two.log; then
  bad "weighted on a training job: the pilot did not stop at the run's end (50 ms): $(grep pilot qwen-two.log | head -1)"
elif cmp -s qwen-one.csv qwen-two.csv; then
  ok "weighted on a training job at 2 ranks, its pilot to the run's end, the pilot's fragments kept: coflow table identical to 1 rank"
else
  bad "weighted on a training job at 2 ranks: coflow table differs from 1 rank"
fi
"$shoal" partition fabric fat-tree-64.toml --ranks 3 --strategy weighted -o parts/w3.part >w3.log 2>&1
if grep -q '^ranks 3$' parts/w3.part && grep -q 'weighted over 3 ranks' w3.log &&
  grep -q 'pilot on the instant network' w3.log; then
  ok "partition fabric --strategy weighted wrote parts/w3.part after a pilot"
else
  bad "partition fabric --strategy weighted: $(cat w3.log)"
fi
out=$("$shoal" topo fat-tree-64.toml --ranks 3 --strategy weighted 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 1 ] && [[ "$out" == "shoal: error: partition strategy weighted balances a workload"* ]]; then
  ok "topo --strategy weighted: one line, exit 1"
else
  bad "topo --strategy weighted: exit $rc, $out"
fi

expect_error() {  # expect_error NAME RANKS PATTERN ARGS...
  local name=$1 ranks=$2 pattern=$3 out rc=0
  shift 3
  out=$("$mpirun" -np "$ranks" "$shoal" run fat-tree-64.toml --quiet "$@" 2>&1 >/dev/null) || rc=$?
  local line
  line=$(grep -m1 'shoal: error' <<<"$out" || true)
  if [ "$rc" -ne 0 ] && grep -qE "$pattern" <<<"$line"; then
    ok "$name: exit $rc, $line"
  else
    bad "$name: exit $rc, expected /$pattern/, got: $out"
  fi
}
expect_error "wrong rank count" 2 'run.partition: partition file .*rr3.part, line 7: made for 3 ranks, this run has 2' \
  --set run.partition=parts/rr3.part
expect_error "another fabric" 1 "run.partition: partition file .*rr3.part, line 4: made for topology 'fat-tree .*gpus=64.*', but this run is '.*gpus=128" \
  --set run.partition=parts/rr3.part --set topology.gpus=128
sed 's/^9 71 1$/9 70 1/' parts/hand3.part >parts/gap.part
expect_error "a range that splits a server" 3 'run.partition: partition file .*gap.part, line 9: ' --set run.partition=parts/gap.part
expect_error "neither strategy nor file" 1 'run.partition: "parts/none.part" is neither a partition strategy \(topology, weighted, block, round-robin\) nor a partition file' \
  --set run.partition=parts/none.part

out=$("$shoal" partition fabric fat-tree-64.toml --ranks 2 -o no-such-dir/p.part 2>&1) && rc=0 || rc=$?
if [ "$rc" -ne 0 ] && [ "$out" = "shoal: error: -o no-such-dir/p.part: folder no-such-dir does not exist" ]; then
  ok "an unwritable output: exit $rc, $out"
else
  bad "an unwritable output: exit $rc, $out"
fi
# An existing partition file stays as it was without --force, and is replaced with it.
before=$(cksum <parts/rr3.part)
out=$("$shoal" partition fabric fat-tree-64.toml --ranks 2 -o parts/rr3.part 2>&1) && rc=0 || rc=$?
if [ "$rc" -ne 0 ] && [ "$out" = "shoal: error: -o parts/rr3.part: exists (use --force to overwrite it)" ] &&
  [ "$(cksum <parts/rr3.part)" = "$before" ]; then
  ok "an existing output is kept without --force: $out"
else
  bad "an existing output without --force: exit $rc, $out"
fi
"$shoal" partition fabric fat-tree-64.toml --ranks 2 -o parts/rr3.part --force >/dev/null
if grep -q '^ranks 2$' parts/rr3.part && [ ! -e parts/rr3.part.partial ]; then
  ok "--force replaces it (written whole, no .partial left)"
else
  bad "--force did not replace parts/rr3.part"
fi

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all partition-file checks passed"
