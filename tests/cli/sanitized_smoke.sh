#!/usr/bin/env bash
# The shoal executable of the ASan + UBSan build on one rank, over every kind of
# input it reads and every report it writes: any sanitizer report or non-zero
# exit fails. (Found before: an empty optional dereferenced for jobs = [...].)
# With MPIRUN, the same executable also at 2 and 3 ranks (window exchange,
# collective HDF5, sweeps, the invariants of --check).
# Usage: sanitized_smoke.sh SHOAL WORKDIR SOURCE_DIR [MPIRUN]
set -euo pipefail
# Leak checking stays with the unit tests: LeakSanitizer's tracer crashes at the
# exit of this MPI executable here ("Tracer caught signal 11"); memory errors
# and undefined behaviour are still caught.
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
shoal=$1 dir=$2 src=$(cd "$3" && pwd) mpirun=${4:-}
rm -rf "$dir"  # outputs are never overwritten without --force
mkdir -p "$dir"
ex=$src/configs/examples
run() {  # run NAME ARGS...
  if "$shoal" "${@:2}" >"$dir/$1.out" 2>&1; then
    echo "ok   $1"
  else
    echo "FAIL $1:"; tail -30 "$dir/$1.out"; exit 1
  fi
}
run version version
run phold bench phold --entities 2000 --blocks 4 --end 20us --quiet
run figure-a run "$ex/figure-a.toml" --quiet -o "$dir/figure-a.csv"
run panel run "$ex/case-ii-panel.toml" --quiet -o "$dir/panel.csv"
run folding run "$ex/folding.toml" --quiet --set policy.classes=2
run fat-tree-64 run "$ex/fat-tree-64.toml" --quiet --set 'network.load_balancing="adaptive"' \
  --set policy.name=hermod --set policy.starvation_after=200us
printf '[topology]\nkind = "single-switch"\ngpus = 16\ngpus_per_server = 1\n[workload]\nfile = "%s"\n' \
  "$ex/htsim_chain.cm" >"$dir/htsim.toml"
run htsim run "$dir/htsim.toml" --quiet
run json workload check "$ex/tiny_workload.json" --gpus 16
run topo topo "$src/configs/fabrics/fat-tree-1024.toml" --ranks 4
run two-jobs run "$ex/two-jobs.toml" --quiet --set network.cell_size=1MiB --set network.buffer_per_class=4MiB
run training run "$ex/qwen-64.toml" --quiet --set job.micro_batch_tokens=128 --set job.micro_batches=2 \
  --set job.iterations=2 --set job.dp_algorithm=hierarchical --set network.cell_size=256KiB
run traffic traffic "$ex/qwen-64.toml"
run dag dag "$ex/qwen-64.toml" --gpu 3 -o "$dir/gpu3.json"
# Link failures with detours, on a 3-tier fat tree.
cp "$src/tests/configs/permutation-128-workload.toml" "$dir/"
{ sed 's/^load_balancing = .*/load_balancing = "ecmp"/' "$src/tests/configs/permutation-128.toml"
  printf '\n[[perturbation]]\nlink = "core 0 -> spine 0"\nfail = true\nat = "100us"\n'
  printf '\n[[perturbation]]\nlink = "spine 1 -> leaf 1"\nfail = true\nat = "200us"\n'; } >"$dir/failures.toml"
run failures run "$dir/failures.toml" --quiet --set network.cell_size=64KiB
# A run counted as 2 and 4 ranks would run it (the window probe), weighted.
run scale scale "$ex/fat-tree-64.toml" --quiet --ranks 1,2,4 --network "$src/configs/scale/shm.toml" \
  --set 'run.partition="weighted"' -o "$dir/scale.csv"
if [ -n "$mpirun" ]; then
  mpi() {  # mpi NAME RANKS ARGS...
    if timeout 600 "$mpirun" -np "$2" "$shoal" "${@:3}" >"$dir/$1.out" 2>&1; then
      echo "ok   $1 ($2 ranks)"
    else
      echo "FAIL $1 ($2 ranks):"; tail -30 "$dir/$1.out"; exit 1
    fi
  }
  rm -rf "$dir"/*.h5 "$dir/sweep"
  mpi figure-a-mpi 3 run "$ex/figure-a.toml" --quiet --check --set topology.gpus=4 \
    --set run.partition=round-robin -o "$dir/figure-a.h5"
  mpi panel-mpi 2 run "$ex/case-ii-panel.toml" --quiet --check -o "$dir/panel.h5"
  mpi fat-tree-64-mpi 2 run "$ex/fat-tree-64.toml" --quiet --check --set policy.name=hermod \
    --set 'network.load_balancing="adaptive"'
  mpi sweep-mpi 2 sweep "$src/configs/sweeps/tiny.toml" --quiet --point 3 --results "$dir/sweep"
  mpi mpi-costs 2 mpi-costs --rounds 1 -o "$dir/costs.toml"
fi
echo "sanitized smoke: all ran clean"
