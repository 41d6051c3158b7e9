#!/usr/bin/env bash
# Builds Shoal (Release, build/shoal) and runs it.
#   ./run.sh          the main study: the flagship's 1,024-GPU, 100 Gb/s slice
#                     (Qwen1.5-MoE-A2.7B under fair, lina, ep-pp-first and hermod)
#                     on 2 ranks, HDF5 files and a report with plots in results/flagship/
#   ./run.sh ARGS...  runs `shoal ARGS...` (one rank; use tools/mpirun -np N build/shoal for more)
# Finished points are kept and skipped on the next ./run.sh; delete results/flagship
# (or set SHOAL_FRESH=1) to simulate them again.
set -euo pipefail
cd "$(dirname "$0")"
tools/install-deps
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target shoal >/dev/null
if [ $# -gt 0 ]; then
  exec build/shoal "$@"
fi
slice=configs/flagship/slice-1024-100g.toml
results=results/flagship
if [ "${SHOAL_FRESH:-0}" = 1 ]; then
  rm -f "$results"/gpus-1024_link-rate-100Gbps_dp-reduce-every-micro-batch_policy-*.h5
fi
echo "== Flagship slice (docs/flagship.md): Qwen1.5-MoE-A2.7B on 1,024 GPUs at 100 Gb/s, =="
echo "== fair, lina, ep-pp-first and hermod, each on 2 ranks                              =="
tools/mpirun -np 2 build/shoal sweep "$slice" --all --results "$results" --progress-interval 30
echo
echo "== Report: results/flagship/report-1024-100g (summary.csv and PNG plots) =="
# Debian's Python: it has h5py, pandas and matplotlib (tools/install-deps).
/usr/bin/python3 tools/shoal-report \
  "$results"/gpus-1024_link-rate-100Gbps_dp-reduce-every-micro-batch_policy-*.h5 \
  -o "$results"/report-1024-100g
