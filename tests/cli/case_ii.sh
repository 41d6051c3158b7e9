#!/usr/bin/env bash
# Hermod's Case II at a NIC (docs/training.md, "Data parallelism"): the 64-GPU
# Qwen job of configs/examples/qwen-64.toml, with 2 micro-batches of 512
# tokens. Reducing gradients only in the last micro-batch's backward (Megatron's
# distributed optimizer), no DP flow leaving a GPU's server overlaps EP or PP
# flows of two different micro-batches there; reducing them in every
# micro-batch's backward (DeepSpeed ZeRO-2 with accumulation), some do.
# Usage: case_ii.sh SHOAL WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 dir=$2 src=$3
py=/usr/bin/python3  # Debian's Python, where python3-h5py lives
rm -rf "$dir"
mkdir -p "$dir"
count() {  # count MODE: "case-ii N of M DP flows" for the run with job.dp_reduce=MODE
  "$shoal" run "$src/configs/examples/qwen-64.toml" --quiet -o "$dir/$1.h5" \
    --set job.dp_reduce="$1" --set job.micro_batches=2 --set job.micro_batch_tokens=512 >/dev/null
  "$py" "$src/tests/cli/case_ii.py" "$dir/$1.h5" 8
}
last=$(count last-micro-batch)
every=$(count every-micro-batch)
echo "last-micro-batch: $last"
echo "every-micro-batch: $every"
[[ $last =~ ^case-ii\ 0\ of\ [1-9][0-9]*\  ]] || { echo "FAIL: Case II with last-micro-batch"; exit 1; }
[[ $every =~ ^case-ii\ [1-9][0-9]*\ of ]] || { echo "FAIL: no Case II with every-micro-batch"; exit 1; }
echo "ok     Case II forms only when every micro-batch reduces its gradients"
