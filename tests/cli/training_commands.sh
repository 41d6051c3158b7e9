#!/usr/bin/env bash
# `shoal traffic` and `shoal dag` on the 64-GPU Qwen1.5-MoE example:
# - one EP dispatch per GPU is tokens x top_k x hidden x bytes x (EP-1)/EP =
#   1024 x 4 x 2048 x 2 x 15/16 = 15,728,640 B, 1,048,576 B to each of 15 peers;
#   one PP send is 1024 x 2048 x 2 = 4,194,304 B;
# - FP8 dispatch (job.dispatch_dtype_bytes = 1 by --set): 2048 + 16 fp32
#   scales = 2,112 B a token, 1024 x 4 x 2112 / 16 = 540,672 B to each peer;
#   ep_dedup = per-node is named;
# - one GPU's DAG, written as JSON, is a valid workload of its own.
# Usage: training_commands.sh SHOAL WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 dir=$2 src=$3
mkdir -p "$dir"
failures=0
expect() {  # expect TEXT OUTPUT
  if grep -qF -- "$1" <<<"$2"; then echo "ok   $1"; else echo "FAIL missing: $1"; failures=$((failures + 1)); fi
}
out=$("$shoal" traffic "$src/configs/examples/qwen-64.toml")
expect "one EP dispatch (or combine) per GPU, uniform routing: 15728640 B (1048576 B to each of 15 peers)" "$out"
expect "one PP send: 4194304 B" "$out"
expect "TP 1 PP 2 EP 16 DP 32 (expert DP 2)" "$out"
out=$("$shoal" traffic "$src/configs/examples/qwen-64.toml" --set job.dispatch_dtype_bytes=1)
expect "one EP dispatch (or combine) per GPU, uniform routing: 8110080 B (540672 B to each of 15 peers)" "$out"
expect "EP bytes per token: dispatch 2112 B, combine 4096 B; backward: to the experts 4096 B, back 4096 B" "$out"
out=$("$shoal" traffic "$src/configs/examples/qwen-64.toml" --set job.ep_dedup=per-node)
expect "one EP dispatch per GPU, uniform routing, ep_dedup per-node: " "$out"
out=$("$shoal" dag "$src/configs/examples/qwen-64.toml" --gpu 5 -o "$dir/gpu5.json" --force)
# GPU 5 (stage 0): per micro-batch and layer its compute, EP and PP coflows; its
# dense gradients in a bucket per layer (each over Megatron's 40 M parameters),
# its experts' (34.6 M a layer) two layers a bucket; the gradient-norm all-reduce.
expect "GPU 5: 193 tasks, 237 coflows written to $dir/gpu5.json" "$out"
out=$("$shoal" workload check "$dir/gpu5.json" --gpus 64)
expect "workload $dir/gpu5.json: valid for 64 GPUs" "$out"
[ "$failures" -eq 0 ]
