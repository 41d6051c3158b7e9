#!/usr/bin/env bash
# The determinism matrix (docs/reliability.md): five configs (the digest's
# Figure A micro case, a 128-GPU fat-tree training job with EP (FP8, per-node
# copies, drifting skew), PP and DP under hermod, the same job on a 3-tier fat
# tree, a multi-plane all-to-all with spraying, and the same starved of
# credit: one 4 KiB cell of buffer per class, so ports stall and wait for
# credits, many of them crossing ranks) at 1, 2, 3, 4 and 8 ranks (Figure A's
# five nodes: up to 4), each with the full invariants on (--check), 2, 4 and
# 8 ranks in atom order (run.event_order); every HDF5 dataset, sorted by its
# key columns, must be identical to the one-rank file's. (The training jobs run at
# 400 Gb/s with 10 us links and 1 MiB cells: a longer lookahead, fewer windows, a test in seconds.)
# Usage: determinism_matrix.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
py=/usr/bin/python3  # Debian's Python, where python3-h5py lives
rm -rf "$dir"
mkdir -p "$dir"
cp "$src/configs/examples/figure-a.toml" "$src/configs/examples/figure-a-workload.toml" "$dir/"
sed -e "s|^job = .*|job = \"$src/jobs/qwen1.5-moe-a2.7b.toml\"|" -e 's/^gpus = 64/gpus = 128/' \
  -e 's/^micro_batch_tokens = .*/micro_batch_tokens = 256/' -e 's/^micro_batches = .*/micro_batches = 2/' \
  -e 's/^cell_size = .*/cell_size = "1MiB"/' -e 's/^buffer_per_class = .*/buffer_per_class = "2MiB"/' -e 's/^name = "fair"/name = "hermod"/' \
  -e 's/^link_rate = .*/link_rate = "400Gbps"/' -e 's/^link_latency = .*/link_latency = "10us"/' \
  "$src/configs/examples/qwen-64.toml" >"$dir/training.toml"
# Its EP as DeepSeek-V3 sends it (FP8 dispatch, one network copy per server),
# with a hot member re-drawn per layer and micro-batch (docs/training.md).
sed -i '/^\[job\]/a ep_dedup = "per-node"\ndispatch_dtype_bytes = 1\nhot_ratio = 3\nskew_mode = "drift"\nskew_seed = 5' "$dir/training.toml"
# The job on a 3-tier fat tree, as the flagship's 16,384-GPU point (k = 8: 4
# pods of 4 leaves, 4 GPUs a leaf): its cells cross aggregation and core switches.
sed -e 's/^tiers = 2/tiers = 3/' -e 's/^radix = 16/radix = 8/' -e 's/^gpus_per_server = 8/gpus_per_server = 4/' \
  "$dir/training.toml" >"$dir/tree3.toml"
grep -q '^tiers = 3' "$dir/tree3.toml"
cp "$src/tests/configs/multi-plane-128.toml" "$src/tests/configs/mp-a2a-workload.toml" "$dir/"
cp "$dir/multi-plane-128.toml" "$dir/starved.toml"
configs="figure-a training tree3 multi-plane-128 starved"
ranks_of() { if [ "$1" = figure-a ]; then echo 1 2 3 4; else echo 1 2 3 4 8; fi; }
for config in $configs; do
  for n in $(ranks_of "$config"); do
    extra=()
    # Figure A's switch gets two idle hosts (5 nodes fill 4 ranks), dealt round-robin
    # so that its one busy link crosses ranks.
    [ "$config" = figure-a ] && extra=(--set topology.gpus=4 --set run.partition=round-robin)
    [ "$config" = starved ] && extra+=(--set network.buffer_per_class=4KiB)
    # 2, 4 and 8 ranks take each window's events atom by atom; 1 and 3 by time
    # (what "auto" picks for fabrics this small): both orders, every dataset.
    if [ $((n % 2)) -eq 0 ]; then extra+=(--set run.event_order=atom); fi
    timeout 300 "$mpirun" -np "$n" "$shoal" run "$dir/$config.toml" --quiet --check \
      -o "$dir/$config-$n.h5" "${extra[@]}" >"$dir/$config-$n.log"
  done
done
# The 3-tier tree's upper switches routed cells of flows their rank does not
# hold (their destinations came in notes): the comparison below engaged them.
for n in 2 3 4 8; do
  if ! grep -qE "routes noted [1-9][0-9]*," "$dir/tree3-$n.log"; then
    echo "FAIL tree3 at $n ranks: no route noted (no rank routed another's flow)"
    exit 1
  fi
done
PYTHONPATH="$src/tests/cli" "$py" - "$dir" $configs <<'PY'
import sys
from shoal_tables import sorted_tables, differing
d, configs = sys.argv[1], sys.argv[2:]
def load(path):
    tables, meta = sorted_tables(path)
    assert meta["completed"] == 1, path
    return tables
bad = 0
for c in configs:
    ref = load("%s/%s-1.h5" % (d, c))
    for n in (2, 3, 4) if c == "figure-a" else (2, 3, 4, 8):
        got = load("%s/%s-%d.h5" % (d, c, n))
        diff = differing(ref, got)
        rows = ", ".join("%s %d" % (k, len(v)) for k, v in ref.items())
        print("%s   %s at %d ranks: %s (%s)" % ("FAIL" if diff else "ok", c, n,
              "differs in " + ", ".join(diff) if diff else "every dataset identical to 1 rank", rows))
        bad += bool(diff)
sys.exit(1 if bad else 0)
PY
