#!/usr/bin/env bash
# `shoal run` at N ranks writes the same coflow table (CSV) as at one rank:
# a 64-GPU fat tree with compute tasks, an EP all-to-all, a DP permutation and
# an incast, with ECMP, with per-cell spraying, with adaptive spraying and ECMP
# around links that fail mid-run, under hermod with 2 switch classes and the
# starvation guard, on a dual-plane rail-optimized fabric; the Panel 1
# comparison of four policies (every policy's table); a 64-GPU training job; and
# two jobs sharing a fabric under fair and crux+hermod. The N-rank runs take
# each window's events atom by atom (run.event_order), the one-rank ones by time.
# Usage: run_determinism.sh SHOAL MPIRUN RANKS WORKDIR SOURCE_DIR [VARIANT...]
# (every variant when none is named).
set -euo pipefail
shoal=$1 mpirun=$2 ranks=$3 dir=$4 src=$5
shift 5
all_variants=(ecmp spray adaptive-failures ecmp-failures hermod panel training zero2 interleaved
              dualpipe long-context two-jobs rail)
in_list() {
  local item=$1 x
  shift
  for x; do [ "$x" = "$item" ] && return 0; done
  return 1
}
variants=("${all_variants[@]}")
if [ $# -gt 0 ]; then
  variants=("$@")
  for v in "${variants[@]}"; do
    in_list "$v" "${all_variants[@]}" || { echo "run_determinism.sh: no variant '$v'" >&2; exit 2; }
  done
fi
runs() { in_list "$1" "${variants[@]}"; }
rm -rf "$dir"  # outputs are never overwritten without --force
mkdir -p "$dir"
cp "$src/configs/examples/fat-tree-64-workload.toml" "$dir/"
sed 's/^load_balancing = .*/load_balancing = "ecmp"/' "$src/configs/examples/fat-tree-64.toml" >"$dir/ecmp.toml"
sed 's/^load_balancing = .*/load_balancing = "spray"/' "$src/configs/examples/fat-tree-64.toml" >"$dir/spray.toml"
failed_links='\n[[perturbation]]\nlink = "leaf 0 -> spine 3"\nfail = true\nat = "100us"\n'
failed_links+='\n[[perturbation]]\nlink = "spine 5 -> leaf 2"\nfail = true\none_way = true\nat = "300us"\n'
{ sed 's/^load_balancing = .*/load_balancing = "adaptive"/' "$src/configs/examples/fat-tree-64.toml"
  printf "$failed_links"; } >"$dir/adaptive-failures.toml"
{ cat "$dir/ecmp.toml"; printf "$failed_links"; } >"$dir/ecmp-failures.toml"
{ cat "$dir/ecmp.toml"; printf '\n[policy]\nname = "hermod"\nclasses = 2\nstarvation_after = "150us"\n'; } >"$dir/hermod.toml"
# A training job: Qwen1.5-MoE on 64 GPUs (PP 2, EP 16), smaller micro-batches, hermod.
# At 400 Gb/s (1 us links as the others): its gradients take a quarter of the
# simulated time, and so a quarter of the windows, which oversubscribed ranks pay for.
sed -e "s|^job = .*|job = \"$src/jobs/qwen1.5-moe-a2.7b.toml\"|" -e 's/^micro_batch_tokens = .*/micro_batch_tokens = 256/' \
  -e 's/^micro_batches = .*/micro_batches = 2/' -e 's/^name = "fair"/name = "hermod"/' \
  -e 's/^link_rate = .*/link_rate = "400Gbps"/' \
  "$src/configs/examples/qwen-64.toml" >"$dir/training.toml"
# The same job with DeepSpeed's semantics: every micro-batch's gradients reduced
# in Megatron's buckets, in fp32, and the gradient-norm barrier.
sed '/^\[job\]/a dp_reduce = "every-micro-batch"\ndp_bucket = "megatron"\ngrad_reduce_dtype_bytes = 4\ngrad_norm_barrier = true' \
  "$dir/training.toml" >"$dir/zero2.toml"
# The same job interleaved: 2 chunks on each of the 2 pipeline ranks, uneven.
sed '/^\[job\]/a pp_schedule = "interleaved"\nvirtual_stages = 2\nstage_layers = [5, 7, 6, 6]' \
  "$dir/training.toml" >"$dir/interleaved.toml"
# And with DualPipe: 4 micro-batches fed from both ends of the 2 pipeline ranks.
sed -e '/^\[job\]/a pp_schedule = "dualpipe"' -e 's/^micro_batches = .*/micro_batches = 4/' \
  "$dir/training.toml" >"$dir/dualpipe.toml"
# Milestones on the last GPU's optimizer step (a task another rank holds) and
# on a coflow: found by name before the ranks drop the names they do not hold.
printf '\n[[milestone]]\nlabel = "GPU 63 steps"\nat = "j0.i0.g63.opt.end"\n' >>"$dir/training.toml"
printf '\n[[milestone]]\nlabel = "layer 13 gathered"\nat = "j0.i0.L13.dpd0.ag.end"\n' >>"$dir/training.toml"
# Context parallelism, Ulysses and a lengths file (LLaMA-7B on 16 GPUs), hermod.
cp "$src/configs/examples/long-context-lengths.txt" "$dir/"
sed -e "s|^job = .*|job = \"$src/jobs/llama-7b.toml\"|" -e 's/^name = "fair"/name = "hermod"/' \
  "$src/configs/examples/long-context.toml" >"$dir/long-context.toml"
# Two jobs on one fabric under fair and crux+hermod ([workload] jobs = [...]).
mkdir -p "$dir/two-jobs"
cp "$src"/configs/examples/two-jobs/*.toml "$dir/two-jobs/"
sed 's/^link_rate = .*/link_rate = "400Gbps"/' "$src/configs/examples/two-jobs.toml" >"$dir/two-jobs.toml"
# The panel on 8 GPUs (two used), servers dealt round-robin so its link crosses ranks.
{ sed 's/^gpus = 2$/gpus = 8/' "$src/configs/examples/case-ii-panel.toml"
  printf '\n[run]\npartition = "round-robin"\n'; } >"$dir/panel.toml"
sed -e '/^\[topology\]/,/^\[network\]/{/^\[network\]/!d}' "$dir/ecmp.toml" >"$dir/rest.toml"
{ printf '[topology]\nkind = "rail-optimized"\ngpus = 64\ngpus_per_server = 8\nradix = 16\n'
  printf 'dual_plane = true\nlink_rate = "100Gbps"\nlink_latency = "1us"\n\n'
  cat "$dir/rest.toml"; } >"$dir/rail.toml"
failures=0
for variant in "${variants[@]}"; do
  "$shoal" run "$dir/$variant.toml" --quiet -o "$dir/$variant-1.csv" >"$dir/$variant-1.out"
  # One rank by time (what "auto" picks for fabrics this small), N ranks by
  # atom: the engine's two orders must agree too.
  # Long-context's two servers cannot fill 8 ranks by topology: atoms dealt round-robin.
  extra=()
  if [ "$variant" = long-context ] && [ "$ranks" -gt 4 ]; then extra=(--set 'run.partition="round-robin"'); fi
  timeout 300 "$mpirun" -np "$ranks" "$shoal" run "$dir/$variant.toml" --quiet \
    --set run.event_order=atom -o "$dir/$variant-$ranks.csv" "${extra[@]}" >"$dir/$variant-$ranks.out"
  grep -q "order by time" "$dir/$variant-1.out"
  grep -q "ranks $ranks .*order by atom" "$dir/$variant-$ranks.out"
  # Several ranks also say how their time went (not compared: it is timing),
  # and the largest rank's peak memory (not compared: it is the machine's).
  if ! grep -qE "^  windows [0-9]+, balance [0-9.]+%, events across ranks [0-9]+ .*synchronizing" "$dir/$variant-$ranks.out"; then
    echo "FAIL $variant at $ranks ranks: no 'windows ..., synchronizing ...' line in the report"
    exit 1
  fi
  if ! grep -qE "^  peak resident memory [0-9.]+ [kKMG]i?B on the largest rank \([0-9.]+ [kKMG]i?B once built" "$dir/$variant-$ranks.out" ||
    ! grep -qE "^  peak resident memory [0-9.]+ [kKMG]i?B \(" "$dir/$variant-1.out"; then
    echo "FAIL $variant: no 'peak resident memory ...' line in the report at 1 or $ranks ranks"
    exit 1
  fi
  # Every coflow table (one per policy when several are compared) and the
  # printed report but for the run's wall time and the file names.
  same=1
  for csv in "$dir/$variant"-1*.csv; do
    cmp -s "$csv" "${csv/$variant-1/$variant-$ranks}" || same=0
  done
  report() { grep -v -e 'wall' -e 'written to' -e 'synchronizing' -e 'peak resident memory' "$1"; }
  if [ "$same" -eq 1 ] && [ "$(report "$dir/$variant-1.out")" = "$(report "$dir/$variant-$ranks.out")" ]; then
    echo "ok   $variant at $ranks ranks: $(cat "$dir/$variant"-1*.csv | wc -l) CSV lines and the report identical"
  else
    echo "FAIL $variant at $ranks ranks differs from 1 rank:"
    diff <(report "$dir/$variant-1.out") <(report "$dir/$variant-$ranks.out") || true
    failures=$((failures + 1))
  fi
done
# The fat tree's spines carried cells of flows their rank does not hold, so
# their destinations came in notes: the routing above compared them too.
for variant in ecmp spray adaptive-failures ecmp-failures; do
  runs "$variant" || continue
  if ! grep -qE "routes noted [1-9][0-9]*," "$dir/$variant-$ranks.out"; then
    echo "FAIL $variant at $ranks ranks: no route noted (no rank routed another's flow)"
    failures=$((failures + 1))
  fi
done
# The training job's milestones were reached, on a task another rank holds too.
for ms in "GPU 63 steps" "layer 13 gathered"; do
  runs training || continue
  if ! grep -qE "^  $ms +[0-9.]+ [mu]?s$" "$dir/training-$ranks.out"; then
    echo "FAIL training at $ranks ranks: no time for milestone \"$ms\""
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ]
