#!/usr/bin/env bash
# Chakra traces end to end (docs/workloads.md, "Chakra"):
# - ASTRA-sim's 8-NPU all-reduce of 1 MB (tests/data/chakra) checked as ring
#   steps and as one direct coflow;
# - run by `shoal run` (configs/examples/chakra-allreduce.toml): every byte of
#   the DAG is delivered, 14 steps x 8 flows x 131,072 B = 14,680,064 B, in
#   /flows and on the links into the GPUs; /meta keeps the 8 rank files, and
#   `shoal rerun` runs it again from them alone;
# - a training job written with `shoal dag --format chakra` (the overwrite rule
#   of -o, --force), then run from the trace: every coflow starts and ends
#   exactly when the job's own do;
# - a smaller trace over it with --force leaves no stale rank file; a missing
#   rank file is one error line.
# Usage: chakra.sh SHOAL WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 dir=$2 src=$3
py=/usr/bin/python3  # Debian's Python, where python3-h5py lives
rm -rf "$dir"        # outputs are never overwritten without --force
mkdir -p "$dir/qwen"
failures=0
expect() {  # expect TEXT OUTPUT
  if grep -qF -- "$1" <<<"$2"; then echo "ok   $1"; else echo "FAIL missing: $1"; failures=$((failures + 1)); fi
}

trace=$src/tests/data/chakra/all_reduce/8npus_1MB/all_reduce
out=$("$shoal" workload check "$trace" --format chakra --gpus 8 2>/dev/null)
expect "workload $trace: valid for 8 GPUs" "$out"
expect "8 NPUs, 8 nodes: 0 compute tasks, 0 messages, 1 collective (1 all-reduce), as 14 coflows; 0 zero-time nodes; not modelled: nothing" "$out"
expect "coflows:       14 (112 flows, 14 MiB)" "$out"
out=$("$shoal" workload check "$trace" --format chakra --collective direct 2>/dev/null)
expect "coflows:       1 (56 flows, 14 MiB)" "$out"

"$shoal" run "$src/configs/examples/chakra-allreduce.toml" --quiet -o "$dir/allreduce.h5" >/dev/null
"$shoal" rerun "$dir/allreduce.h5" --quiet -o "$dir/again.h5" >/dev/null
"$py" - "$dir" <<'PY' || failures=$((failures + 1))
import sys, h5py
d = sys.argv[1]
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad += not ok
with h5py.File(d + "/allreduce.h5", "r") as f:
    flows, coflows, links, nodes = f["flows"][:], f["coflows"][:], f["links"][:], f["nodes"][:]
    dag_bytes = 14 * 8 * 131072
    check(len(coflows) == 14 and all(coflows["end_ps"] >= 0), "14 coflows, all finished")
    check(len(flows) == 112 and all(flows["end_ps"] >= 0), "112 flows, all finished")
    check(int(flows["bytes"].sum()) == dag_bytes, "flows carry %d B, the DAG's %d B" % (flows["bytes"].sum(), dag_bytes))
    gpus = set(int(n["id"]) for n in nodes if n["kind"] == 0)
    delivered = sum(int(l["bytes"]) for l in links if int(l["dst"]) in gpus)
    check(delivered == dag_bytes, "links into the GPUs delivered %d B, the DAG's %d B" % (delivered, dag_bytes))
    names = sorted(f["meta/inputs"][k].attrs["name"] for k in f["meta/inputs"])
    names = [n.decode() if isinstance(n, bytes) else n for n in names]
    check([n.rsplit("/", 1)[-1] for n in names] == ["all_reduce.%d.et" % i for i in range(8)],
          "/meta/inputs holds the 8 rank files")
    with h5py.File(d + "/again.h5", "r") as g:
        check((g["coflows"][:] == coflows).all(), "shoal rerun: the same coflows from /meta alone")
sys.exit(bad)
PY

# A training job out as a trace, and run from it. The trace's config is the
# job's with [workload] naming the trace and no [job] table.
job=(--set job.micro_batches=2 --set job.micro_batch_tokens=256)
out=$("$shoal" dag "$src/configs/examples/qwen-64.toml" --format chakra -o "$dir/qwen/qwen" "${job[@]}")
expect "64 GPUs: 103936 nodes" "$out"
if err=$("$shoal" dag "$src/configs/examples/qwen-64.toml" --format chakra -o "$dir/qwen/qwen" 2>&1); then
  echo "FAIL an existing trace was overwritten without --force"; failures=$((failures + 1))
else
  expect "qwen.0.et exists (a trace DIR/NAME is all of NAME.*.et; --force overwrites them)" "$err"
fi
sed -e 's|^job = .*|file = "qwen"\nformat = "chakra"|' -e '/^\[job\]/,/^$/d' \
  "$src/configs/examples/qwen-64.toml" >"$dir/qwen/trace.toml"
"$shoal" run "$src/configs/examples/qwen-64.toml" --quiet "${job[@]}" -o "$dir/job.csv" >/dev/null
"$shoal" run "$dir/qwen/trace.toml" --quiet -o "$dir/trace.csv" >/dev/null
if cmp -s "$dir/job.csv" "$dir/trace.csv"; then
  echo "ok   the trace's run: every coflow as in the job's ($(($(wc -l <"$dir/job.csv") - 1)) coflows)"
else
  echo "FAIL the trace's run differs from the job's"; failures=$((failures + 1))
fi

# A smaller trace over it: 8 files, the job's 9th to 64th removed.
"$shoal" dag "$src/configs/examples/chakra-allreduce.toml" --format chakra -o "$dir/qwen/qwen" --force >/dev/null 2>&1
if [ -e "$dir/qwen/qwen.8.et" ]; then
  echo "FAIL qwen.8.et left over"; failures=$((failures + 1))
else
  echo "ok   --force removed the bigger trace's rank files"
fi
out=$("$shoal" workload check "$dir/qwen/qwen" --format chakra 2>/dev/null)
expect "8 NPUs, 224 nodes: 0 compute tasks, 112 messages, 0 collectives, as 14 coflows" "$out"
rm "$dir/qwen/qwen.3.et"
if err=$("$shoal" workload check "$dir/qwen/qwen" --format chakra 2>&1); then
  echo "FAIL a trace with a missing rank file was read"; failures=$((failures + 1))
else
  expect "shoal: error: chakra trace $dir/qwen/qwen: $dir/qwen/qwen.4.et exists but $dir/qwen/qwen.3.et does not" "$err"
  [ "$(wc -l <<<"$err")" -eq 1 ] && echo "ok   one error line" || { echo "FAIL $err"; failures=$((failures + 1)); }
fi
[ "$failures" -eq 0 ]
