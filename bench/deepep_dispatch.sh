#!/usr/bin/env bash
# Shoal's simulated DeepEP dispatch beside DeepEP's measured one
# (docs/training.md, "Validation against DeepEP"): DeepSeek-V3's MoE layer in
# DeepEP's test setting (bench/configs/deepep-dispatch*.toml) at EP 16, 32
# and 64, one micro-batch. For each, the forward dispatch's completion time
# (CCT), what one GPU sent over its NIC, and two bandwidths per GPU:
#   - network: NIC bytes / CCT, what a NIC counter would show;
#   - per node: tokens x bytes per token sent to each node a token's experts
#     are on, its own node included, / CCT. DeepEP's test scripts count RDMA
#     bytes this way (a token per destination RDMA rank), which is why its
#     figures can pass the 50 GB/s line rate.
# Usage: bench/deepep_dispatch.sh [SHOAL] (default build/shoal)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
shoal=${1:-$src/build/shoal}
py=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shoal-deepep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "# EP  CCT_us  NIC_MB_per_GPU  network_GBps  per_node_GBps  DeepEP_GBps"
for ep in 16 32 64; do
  "$shoal" run "$src/bench/configs/deepep-dispatch.toml" -q -o "$tmp/ep$ep.h5" \
    --set "topology.gpus=$ep" --set "job.ep=$ep" >"$tmp/ep$ep.log"
  "$py" - "$tmp/ep$ep.h5" "$ep" <<'PY'
import sys
import h5py
import numpy as np
from math import comb

path, ep = sys.argv[1], int(sys.argv[2])
deepep = {16: 43, 32: 58, 64: 51}  # GB/s, DeepEP V1 normal kernels (docs/references.md#deepep)
with h5py.File(path, "r") as f:
    cof = f["coflows"][:]
    flows = f["flows"][:]
    # The forward dispatch is the job's first EP coflow (type 0).
    first = cof[cof["type"] == 0]
    c = first[np.argmin(first["id"])]
    cct_ps = int(c["end_ps"] - c["start_ps"])
    mine = flows[flows["coflow"] == c["id"]]
    remote = mine[(mine["src_gpu"] // 8) != (mine["dst_gpu"] // 8)]
    nic_bytes = remote["bytes"].sum() / ep  # per GPU, over the NIC
# DeepEP's count (tests/test_internode.py: num_rdma_token_sent x hidden x 2 x
# (1 + 4/128) / 2 in FP8): a token's 7,392 bytes once per node that holds one
# of its experts, its own node included. With N <= 4 nodes the 4-group limit
# does not bind: top-8 of 256 experts, N nodes of 256/N each. With N > 4 a
# token goes to the 4 nodes of its best experts, each then holding one of its
# top-8 (as Shoal's per-node routing with node_limit assumes).
nodes = ep // 8
per_node = 256 // nodes
if nodes > 4:
    nodes_hit = 4.0
else:
    nodes_hit = nodes * (1 - comb(256 - per_node, 8) / comb(256, 8))
per_node_bytes = 4096 * 7392 * nodes_hit
secs = cct_ps / 1e12
print(f"{ep:4d}  {cct_ps / 1e6:7.1f}  {nic_bytes / 1e6:14.1f}  {nic_bytes / secs / 1e9:12.1f}  "
      f"{per_node_bytes / secs / 1e9:13.1f}  {deepep[ep]:11d}")
PY
done
