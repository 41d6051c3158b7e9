#!/usr/bin/env bash
# Bad input and run-time faults: each must end with exactly one
# "shoal: error:" line that says what is wrong, a non-zero exit, and no hang,
# at one rank and under mpirun.
# Usage: bad_input.sh SHOAL MPIRUN FAULT_PROBE WORKDIR
set -uo pipefail
shoal=$1 mpirun=$2 probe=$3 dir=$4
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir"
passed=0 failed=0

# expect_error NAME SUBSTRING COMMAND...
expect_error() {
  local name=$1 want=$2; shift 2
  local err rc lines
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  lines=$(grep -c '^shoal: error:' <<<"$err")
  if [ "$rc" -eq 0 ]; then
    echo "FAIL $name: exit 0"; failed=$((failed + 1))
  elif [ "$rc" -eq 124 ]; then
    echo "FAIL $name: hung (killed after 120 s)"; failed=$((failed + 1))
  elif [ "$lines" -ne 1 ]; then
    echo "FAIL $name: $lines error lines, expected 1:"; echo "$err"; failed=$((failed + 1))
  elif ! grep '^shoal: error:' <<<"$err" | grep -qF -- "$want"; then
    echo "FAIL $name: error line lacks '$want':"; grep '^shoal: error:' <<<"$err"; failed=$((failed + 1))
  else
    echo "ok   $name (exit $rc): $(grep '^shoal: error:' <<<"$err")"; passed=$((passed + 1))
  fi
}

# Each launch is bounded: a hang shows as exit 124.
run1() { timeout 120 "$shoal" "$@"; }
run2() { timeout 120 "$mpirun" -np 2 "$shoal" "$@"; }
run3() { timeout 120 "$mpirun" -np 3 "$shoal" "$@"; }
run4() { timeout 120 "$mpirun" -np 4 "$shoal" "$@"; }
probe() { timeout 120 "$mpirun" -np "$1" "$probe"; }

expect_error unknown-option "--frobnicate" run1 bench phold --frobnicate
expect_error unknown-option-mpi "--frobnicate" run2 bench phold --frobnicate
expect_error no-command "subcommand" run1
expect_error bad-unit 'option --lookahead: invalid duration "1xs": unknown unit "xs"' run2 bench phold --lookahead 1xs
expect_error missing-unit 'option --end: invalid duration "100": missing unit' run1 bench phold --end 100
expect_error bad-fraction "--remote must be a fraction" run2 bench phold --remote 1.5
expect_error too-few-blocks "2 atoms cannot fill 4 ranks" run4 bench phold --blocks 2 --entities 100
expect_error zero-latency-cut "link block 0 -> block 2 crosses ranks 0 and 1 with latency 0 s" \
  run2 bench phold --entities 1000 --lookahead 0us --end 10us

echo "hello" >"$dir/garbled.part"
expect_error garbled-partition "partition file $dir/garbled.part, line 1: not a Shoal partition file" \
  run2 bench phold --entities 1000 --partition "$dir/garbled.part"
expect_error missing-partition "partition file $dir/none.part: no such file" \
  run2 bench phold --entities 1000 --partition "$dir/none.part"

"$shoal" partition phold --entities 1000 --blocks 4 --ranks 2 -o "$dir/two.part" --force
expect_error partition-rank-count "made for 2 ranks, this run has 3" \
  run3 bench phold --entities 1000 --partition "$dir/two.part"
expect_error partition-topology "made for topology 'phold entities=1000 blocks=4', but this run is 'phold entities=2000 blocks=4'" \
  run2 bench phold --entities 2000 --partition "$dir/two.part"
sed 's/^0 499 0$/0 300 0/; s/^500 999 1$/301 999 1/' "$dir/two.part" >"$dir/split.part"
expect_error partition-splits-atom "entity 300 splits block 1" \
  run2 bench phold --entities 1000 --partition "$dir/split.part"
sed 's/^500 999 1$/500 999 7/' "$dir/two.part" >"$dir/rank.part"
expect_error partition-bad-rank "rank 7 is outside 0..1" \
  run2 bench phold --entities 1000 --partition "$dir/rank.part"

printf '[phold]\nentities = 1000\nlookahed = "1us"\n' >"$dir/typo.toml"
expect_error config-unknown-key "config $dir/typo.toml, line 3: unknown key 'phold.lookahed'" \
  run2 bench phold --config "$dir/typo.toml"
printf '[phold]\nlookahead = "1 parsec"\n' >"$dir/unit.toml"
expect_error config-bad-unit "config $dir/unit.toml, line 2: phold.lookahead: invalid duration \"1 parsec\": unknown unit \"parsec\"" \
  run1 bench phold --config "$dir/unit.toml"
printf '[phold]\nentities = "many"\n' >"$dir/type.toml"
expect_error config-wrong-type "config $dir/type.toml, line 2: phold.entities must be an integer" \
  run2 bench phold --config "$dir/type.toml"
printf '[phold\nentities = 3\n' >"$dir/syntax.toml"
expect_error config-syntax "config $dir/syntax.toml, line 1, column 7" run1 bench phold --config "$dir/syntax.toml"
printf '[phodl]\nentities = 3\n' >"$dir/table.toml"
expect_error config-unknown-table "config $dir/table.toml, line 1: unknown table or key 'phodl'" \
  run1 bench phold --config "$dir/table.toml"
expect_error config-missing "File does not exist: $dir/none.toml" run2 bench phold --config "$dir/none.toml"

# Workload files: a cycle, a GPU outside the fabric, a flow to itself, a typo.
cat >"$dir/cycle.toml" <<'TOML'
[[task]]
name = "a"
gpu = 0
duration = "1us"
after = "c"
[[coflow]]
name = "b"
after = "a"
flows = [{ src = 0, dst = 1, bytes = "1MB" }]
[[task]]
name = "c"
gpu = 0
duration = "1us"
after = "b"
TOML
expect_error workload-cycle 'workload '"$dir"'/cycle.toml: the DAG has a cycle: task "a" -> task "c" -> coflow "b" -> task "a"' \
  run1 workload check "$dir/cycle.toml"
printf '[[pattern]]\nname = "p"\nkind = "incast"\nsources = "0..9"\ndestination = 3\nbytes = "1MB"\n' >"$dir/self.toml"
expect_error workload-flow-to-itself 'coflow "p": flow 3->3 is a flow to itself' run1 workload check "$dir/self.toml"
printf '[[pattern]]\nname = "p"\nkind = "incast"\nsources = [0, 1]\ndestination = 9\nbytes = "1MB"\n' >"$dir/range.toml"
expect_error workload-gpu-range 'coflow "p": flow 0->9: destination GPU 9 is outside the fabric (GPUs 0..7)' \
  run1 workload check "$dir/range.toml" --gpus 8
printf '[[task]]\nname = "t"\ngpu = 0\nduraton = "1us"\n' >"$dir/typo-task.toml"
expect_error workload-misspelt-key 'workload '"$dir"'/typo-task.toml, line 4: task "t": unknown key '"'duraton'" \
  run1 workload check "$dir/typo-task.toml"

# Run configs.
run_config() {  # run_config FILE EXTRA_LINES: a 2-GPU single switch with one flow, plus lines
  printf '[topology]\nkind = "single-switch"\ngpus = 2\ngpus_per_server = 1\n%b\n[workload]\nfile = "flow.toml"\n' "$2" >"$dir/$1"
}
printf '[[coflow]]\nname = "c"\nflows = [{ src = 0, dst = 1, bytes = "1MB" }]\n' >"$dir/flow.toml"
run_config typo-net.toml '[network]\ncell_sise = "4KiB"'
expect_error run-unknown-key "config $dir/typo-net.toml, line 6: unknown key 'network.cell_sise'" \
  run2 run "$dir/typo-net.toml"
run_config forwarding.toml '[network]\nforwarding = "wormhole"'
expect_error run-bad-forwarding 'network.forwarding must be "cut-through" or "store-and-forward"' \
  run1 run "$dir/forwarding.toml"
run_config order.toml '[run]\nevent_order = "sideways"'
expect_error run-bad-event-order "config $dir/order.toml: run.event_order must be \"auto\", \"atom\" or \"time\"" \
  run2 run "$dir/order.toml"
run_config model.toml '[network]\nmodel = "fluid"'
expect_error run-bad-network-model 'network.model must be "packet" or "instant"' run1 run "$dir/model.toml"
run_config instant.toml '[network]\nmodel = "instant"'
expect_error run-instant-ranks "config $dir/instant.toml: network.model = \"instant\" runs on one rank, not 2" \
  run2 run "$dir/instant.toml"
run_config instant-atom.toml '[network]\nmodel = "instant"\n[run]\nevent_order = "atom"'
expect_error run-instant-atom 'run.event_order = "atom" cannot run network.model = "instant"' \
  run1 run "$dir/instant-atom.toml"
run_config latency.toml 'link_latency = "0us"'
expect_error run-zero-latency "topology.link_latency must be positive" run2 run "$dir/latency.toml"
run_config buffer.toml '[network]\nbuffer_per_class = "1KiB"'
expect_error run-small-buffer "config $dir/buffer.toml: network.buffer_per_class (1 KiB) must hold at least one cell (4 KiB)" \
  run1 run "$dir/buffer.toml"
run_config big-buffer.toml '[network]\nbuffer_per_class = "2GiB"'
expect_error run-huge-buffer "config $dir/big-buffer.toml: network.buffer_per_class (2 GiB) must be at most 1 GiB" \
  run1 run "$dir/big-buffer.toml"
printf '[[coflow]]\nname = "c"\nflows = [{ src = 0, dst = 5, bytes = "1MB" }]\n' >"$dir/far.toml"
run_config far-run.toml ''
sed -i 's/flow.toml/far.toml/' "$dir/far-run.toml"
expect_error run-gpu-outside-fabric 'coflow "c": flow 0->5: destination GPU 5 is outside the fabric (GPUs 0..1)' \
  run2 run "$dir/far-run.toml"
run_config kind.toml ''
sed -i 's/single-switch/torus/' "$dir/kind.toml"
expect_error run-unknown-fabric 'topology.kind "torus" is unknown (use single-switch, fat-tree, rail-optimized or multi-plane)' \
  run1 run "$dir/kind.toml"

run_config policy-name.toml '[policy]\nname = "sjf"'
expect_error run-unknown-policy 'policy.name: unknown policy "sjf" (choose fair, lina, ep-pp-first, hermod, crux, or crux+ one of the others)' \
  run2 run "$dir/policy-name.toml"
run_config policy-compare.toml '[policy]\ncompare = ["fair", "hermood"]'
expect_error run-unknown-compared-policy 'policy.compare: unknown policy "hermood"' \
  run1 run "$dir/policy-compare.toml"
run_config policy-classes.toml '[policy]\nname = "hermod"\nclasses = 3'
expect_error run-bad-classes "config $dir/policy-classes.toml: policy.classes must be 1, 2, 4 or 8, not 3" \
  run2 run "$dir/policy-classes.toml"
run_config policy-enforce.toml '[policy]\nenforce = "everywhere"'
expect_error run-bad-enforce 'policy.enforce must be "nic", "switch" or "both", not "everywhere"' \
  run1 run "$dir/policy-enforce.toml"
run_config policy-both.toml '[policy]\nname = "fair"\ncompare = ["lina"]'
expect_error run-name-and-compare "policy: give name or compare, not both" run1 run "$dir/policy-both.toml"
run_config milestone.toml '[[milestone]]\nlabel = "x"\nat = "nothing.end"'
expect_error run-bad-milestone 'milestone[0].at: no task or coflow named "nothing" in the workload' \
  run1 run "$dir/milestone.toml"
# Was cut to 32 bits (4294967297 became 1); found writing tests/fuzz.
run_config util-top.toml '[output]\nlink_util_top = 4294967297'
expect_error run-util-top-range "output.link_util_top must be between 0 and 4294967295" \
  run1 run "$dir/util-top.toml"
run_config util-memory.toml '[output]\nlink_util_memory = "0MiB"'
expect_error run-util-memory "output.link_util_memory must be positive" run1 run "$dir/util-memory.toml"

# Training jobs.
src_jobs=$(cd "$(dirname "$0")/../../jobs" && pwd)
printf '[topology]\nkind = "single-switch"\ngpus = 64\ngpus_per_server = 8\n[workload]\njob = "%s/qwen1.5-moe-a2.7b.toml"\n[job]\npp = 4\ndp = 8\ngpus = 64\n' "$src_jobs" >"$dir/job-factor.toml"
expect_error run-job-factoring "tp x pp x dp = 1 x 4 x 8 = 32 GPUs, but the job has 64" run2 run "$dir/job-factor.toml"
printf '[model]\nlayers = 2\nhiden = 8\n' >"$dir/typo-job.toml"
printf '[topology]\nkind = "single-switch"\ngpus = 8\n[workload]\njob = "typo-job.toml"\n' >"$dir/job-typo.toml"
expect_error run-job-unknown-key "config $dir/typo-job.toml, line 3: unknown key 'model.hiden'" run1 run "$dir/job-typo.toml"

run_config set.toml ''
expect_error traffic-no-job "the workload has no training job" run1 traffic "$dir/set.toml"
expect_error set-unknown-key "config $dir/set.toml (--set): unknown key 'network.cell_sise'" \
  run2 run "$dir/set.toml" --set network.cell_sise=4KiB
expect_error set-malformed '--set "cell_size=4": expected TABLE.KEY=VALUE' \
  run1 run "$dir/set.toml" --set cell_size=4
expect_error run-unknown-partition "config $src/configs/examples/fat-tree-64.toml: run.partition: \"pods\" is neither a partition strategy (topology, weighted, block, round-robin) nor a partition file ($src/configs/examples/pods does not exist)" \
  run2 run "$src/configs/examples/fat-tree-64.toml" --set run.partition=pods
# The resource guard: a run that cannot fit is refused before it is built, on
# every rank; a workload whose DAG alone outgrows the limit, while it is built.
# (At 2 ranks it needs about 94 MB per rank and peaks near 86 MB.)
expect_error memory-guard "for the network and engine), over run.memory_limit = 80 MiB; raise the limit, use larger cells or a smaller workload" \
  run2 run "$src/configs/examples/qwen-1024.toml" --set run.memory_limit=80MiB
# The /link_util bins settle in scratch files beside the output: with no
# run.end they fill their cap, which must fit in the space free there, and
# the error names the cap.
expect_error link-util-scratch "PB of scratch space in $dir (beside the output file) and it has " \
  run2 run "$src/configs/examples/qwen-1024.toml" -o "$dir/link-util-guard.h5" \
  --set output.link_util_memory=1000TiB
expect_error memory-guard-dag "flows, and it is not done: " \
  run2 run "$src/configs/examples/qwen-1024.toml" --set run.memory_limit=50MiB
expect_error memory-guard-dag-limit ", over run.memory_limit = 50 MiB; raise the limit or use a smaller workload" \
  run2 run "$src/configs/examples/qwen-1024.toml" --set run.memory_limit=50MiB

run_config perturb-node.toml '\n[[perturbation]]\nlink = "gpu 0 -> spine 9"'
expect_error perturbation-unknown-node 'perturbation[0]: no node "spine 9" in this fabric' \
  run2 run "$dir/perturb-node.toml"
run_config perturb-typo.toml '\n[[perturbation]]\ngpu = 0\nslowdonw = 2.0'
expect_error perturbation-unknown-key "unknown key 'slowdonw' in [[perturbation]]" \
  run1 run "$dir/perturb-typo.toml"
run_config perturb-both.toml '\n[[perturbation]]\ngpu = 0\nlink = "gpu 0 -> leaf 0"'
expect_error perturbation-both 'give either link = "FROM -> TO" or gpu = N' run1 run "$dir/perturb-both.toml"

# Outputs (issue 34): every output is checked before the first event, in any
# letter case; nothing existing is overwritten without --force, and an input
# that is a folder is named as one.
ft64=("$src/configs/examples/fat-tree-64.toml")
for name in notes.txt k.csv Y.H5; do echo "keep me" >"$dir/$name"; done
expect_error output-unknown-extension '-o '"$dir"'/notes.txt: unknown extension ".txt" (.h5 or .hdf5 for the HDF5 results, .csv for the coflow table)' \
  run2 run "${ft64[@]}" -o "$dir/notes.txt"
expect_error output-csv-exists "-o $dir/k.csv: exists (use --force to overwrite it)" run1 run "${ft64[@]}" -o "$dir/k.csv"
expect_error output-upper-case-h5-exists "-o $dir/Y.H5: exists (use --force to overwrite it)" \
  run2 run "${ft64[@]}" -o "$dir/Y.H5"
for name in notes.txt k.csv Y.H5; do
  if [ "$(cat "$dir/$name")" = "keep me" ]; then echo "ok   $name kept"; passed=$((passed + 1)); else
    echo "FAIL $name was overwritten"; failed=$((failed + 1)); fi
done
expect_error output-folder-missing "-o /nonexistent/x.csv: folder /nonexistent does not exist" \
  run2 run "${ft64[@]}" -o /nonexistent/x.csv
rm -f "$dir"/cmp-*.h5; echo "keep me" >"$dir/cmp-hermod.h5"
expect_error compare-output-exists "-o $dir/cmp-hermod.h5: exists (use --force to overwrite it)" \
  run2 run "${ft64[@]}" -o "$dir/cmp.h5" --set 'policy.compare=["fair","hermod"]'
if [ ! -e "$dir/cmp-fair.h5" ] && [ ! -e "$dir/cmp-fair.h5.partial" ]; then
  echo "ok   compare: refused before the first policy ran"; passed=$((passed + 1)); else
  echo "FAIL compare: the first policy ran before its sibling's file was refused"; failed=$((failed + 1)); fi
expect_error compare-twice "policy.compare names fair twice" \
  run1 run "${ft64[@]}" -o "$dir/cmp2.h5" --set 'policy.compare=["fair","hermod","fair"]'
mkdir -p "$dir/a-folder"
expect_error workload-is-a-folder "workload $dir/a-folder: is a directory, not a file" \
  run2 run "${ft64[@]}" --set "workload.file=$dir/a-folder"
expect_error job-is-a-folder "job $dir/a-folder: is a directory, not a file" \
  run1 run "$src/configs/examples/qwen-64.toml" --set "workload.job=$dir/a-folder"
expect_error partition-is-a-folder "partition file $dir/a-folder: is a directory, not a file" \
  run2 bench phold --entities 1000 --partition "$dir/a-folder"
expect_error output-is-a-folder "-o $dir/a-folder: is a directory" run1 partition phold --entities 1000 --blocks 4 --ranks 2 -o "$dir/a-folder"

expect_error run-end-zero "config $src/configs/examples/figure-a.toml: run.end must be positive" \
  run1 run "$src/configs/examples/figure-a.toml" --set run.end=0s
expect_error routing-file-missing "routing file $src/configs/examples/none.csv: no such file" \
  run1 run "$src/configs/examples/qwen-64.toml" --set job.routing_file=none.csv
printf 'iteration,layer,micro_batch,expert,tokens\n0,1,0,0,5\n' >"$dir/routing.csv"
expect_error routing-file-incomplete "routing file $dir/routing.csv: no rows for iteration 0, layer 1, micro_batch 1" \
  run1 traffic "$src/configs/examples/qwen-64.toml" --set "job.routing_file=$dir/routing.csv"
expect_error routing-file-with-law "job.routing_file replaces hot_ratio, zipf and the drift" \
  run1 traffic "$src/configs/examples/qwen-64.toml" --set "job.routing_file=$dir/routing.csv" --set job.hot_ratio=2
expect_error unknown-subcommand 'unknown subcommand "frobnicate"' run1 frobnicate
expect_error progress-interval-zero "--progress-interval: must be a positive number of seconds, not 0" \
  run1 run "$src/configs/examples/figure-a.toml" --progress-interval 0
printf '[[task]]\nname = 3\n' >"$dir/bad-task.toml"
expect_error workload-check-2-ranks "workload $dir/bad-task.toml, line 2: task #1: 'name' must be a string" \
  run2 workload check "$dir/bad-task.toml"
if run2 workload check "$dir/bad-task.toml" 2>&1 | grep -q MPI_ABORT; then
  echo "FAIL workload check under mpirun: an MPI_ABORT banner"; failed=$((failed + 1))
else
  echo "ok   workload check under mpirun: one line, no MPI_ABORT banner"; passed=$((passed + 1))
fi

# Empty names, a CSV under another extension, a workload with nothing in it,
# and sizes past 64 bits.
fig_a="$src/configs/examples/figure-a.toml"
expect_error run-output-empty "--output: needs a file name, not an empty string" run1 run "$fig_a" -o ""
expect_error scale-output-not-csv "-o $dir/scale.h5: the table is CSV; name a .csv file" \
  run1 scale "$fig_a" --ranks 2 -o "$dir/scale.h5"
expect_error dag-chakra-without-name "-o $dir/: a trace needs a NAME after the folder (DIR/NAME)" \
  run1 dag "$fig_a" --format chakra -o "$dir/"
expect_error dag-negative-gpu "--gpu: Value -1 not in range" \
  run1 dag "$src/configs/examples/qwen-64.toml" --gpu -1 -o "$dir/gpu.json"
: >"$dir/empty-workload.toml"
expect_error workload-empty "workload $dir/empty-workload.toml: holds no [[task]], [[coflow]] or [[pattern]] entry" \
  run1 workload check "$dir/empty-workload.toml"
printf '{"coflow": [' >"$dir/cut.json"
expect_error workload-json-cut "workload $dir/cut.json, byte 13: not valid JSON (parse error at line 1, column 13" \
  run1 workload check "$dir/cut.json"
expect_error job-compute-past-64-bits "a layer's compute would take" \
  run1 traffic "$src/configs/examples/qwen-64.toml" --set job.micro_batch_tokens=99999999999
printf '[sweep]\nbase = "%s"\n[axes]\npolicy.compare = [["fair", "lina"]]\n' "$fig_a" >"$dir/compare-sweep.toml"
expect_error sweep-check-compare "sweep $dir/compare-sweep.toml, point 0 (compare-fair+lina): runs one policy; sweep policy.name instead" \
  run1 sweep "$dir/compare-sweep.toml" --check
expect_error job-zero-from-run-config "config $src/configs/examples/qwen-64.toml: job.pp must be positive" \
  run1 traffic "$src/configs/examples/qwen-64.toml" --set job.pp=0
expect_error traffic-memory-guard "over run.memory_limit = 200 MiB; raise the limit or use a smaller workload" \
  run1 traffic "$src/configs/examples/qwen-64.toml" --set job.micro_batches=10000 --set run.memory_limit=200MiB
expect_error job-transfer-past-64-bits "a transfer of this job passes what 64 bits hold" \
  run1 traffic "$src/configs/examples/qwen-64.toml" --set job.micro_batch_tokens=10000000000000

# A run that fails at its end (here: simulated time runs out at 1 bit/s)
# says why, and with --force its results go to FILE.partial, never over FILE.
for ext in h5 csv; do
  good="$dir/failed-run.$ext"
  rm -f "$good" "$good.partial"
  run1 run "$fig_a" -q -o "$good" >/dev/null 2>&1
  before=$(md5sum <"$good")
  expect_error "run-out-of-time-$ext" "times past 2^63 ps (about 106 days) cannot be represented" \
    run1 run "$fig_a" -q -o "$good" --force --set topology.link_rate=1bps --set output.link_util_top=0
  if [ -s "$good" ] && [ "$(md5sum <"$good")" = "$before" ] && [ -s "$good.partial" ]; then
    echo "ok   a failed --force run keeps $(basename "$good") and leaves its results in $(basename "$good").partial"
    passed=$((passed + 1))
  else
    echo "FAIL a failed --force run replaced $(basename "$good") or left no .partial"; failed=$((failed + 1))
  fi
done

expect_error lookahead-violation-stops-all "inside the lookahead window" probe 3
expect_error lookahead-violation-2-ranks "stopping all ranks" probe 2

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
