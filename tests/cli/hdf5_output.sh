#!/usr/bin/env bash
# The HDF5 output (docs/output.md) at 1 and N ranks: every dataset, sorted by its
# key columns, is identical; /meta says completed = 1 and the rank count; an
# existing file is refused without --force; [output] flows = false leaves /flows
# out; several compared policies write one file each.
# Usage: hdf5_output.sh SHOAL MPIRUN RANKS WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 ranks=$3 dir=$4 src=$5
py=/usr/bin/python3  # Debian's Python, where python3-h5py lives
mkdir -p "$dir"
rm -f "$dir"/*.h5 "$dir"/*.partial
sed -e "s|^job = .*|job = \"$src/jobs/qwen1.5-moe-a2.7b.toml\"|" -e 's/^micro_batch_tokens = .*/micro_batch_tokens = 256/' \
  -e 's/^micro_batches = .*/micro_batches = 2/' -e 's/^name = "fair"/name = "hermod"/' \
  "$src/configs/examples/qwen-64.toml" >"$dir/training.toml"
cp "$src/configs/examples/case-ii-panel.toml" "$dir/panel.toml"
failures=0
for n in 1 "$ranks"; do
  timeout 300 "$mpirun" -np "$n" "$shoal" run "$dir/training.toml" --quiet -o "$dir/training-$n.h5" >/dev/null
  # The same run with room for a few /link_util bins only: they widen, alike on any partition.
  timeout 300 "$mpirun" -np "$n" "$shoal" run "$dir/training.toml" --quiet -o "$dir/widened-$n.h5" \
    --set output.link_util_memory=16KiB >"$dir/widened-$n.out"
  # The largest cells (16 MiB, 1.3 ms at 100 Gb/s): each spans many /link_util bins.
  timeout 300 "$mpirun" -np "$n" "$shoal" run "$dir/training.toml" --quiet -o "$dir/cells-$n.h5" \
    --set network.cell_size=16MiB --set network.buffer_per_class=32MiB >/dev/null
  timeout 300 "$mpirun" -np "$n" "$shoal" run "$dir/panel.toml" --quiet -o "$dir/panel-$n.h5" \
    --set run.partition=block --set topology.gpus=8 >/dev/null
  # More links than one block of the links' counts (4,096, RunResults::kLinkBlock):
  # the blocks are summed onto different ranks, each writes its own.
  timeout 300 "$mpirun" -np "$n" "$shoal" run "$src/configs/examples/qwen-1024.toml" --quiet \
    -o "$dir/large-$n.h5" --set topology.gpus=2048 --set run.end=1ms >/dev/null
done
PYTHONPATH="$src/tests/cli" "$py" - "$dir" "$ranks" <<'PY' || failures=$((failures + 1))
import sys, h5py
from shoal_tables import sorted_tables as load, differing
d, n = sys.argv[1], int(sys.argv[2])
bad = 0
for name in ["training", "widened", "cells"] + ["panel-%s" % p for p in ("fair", "lina", "ep-pp-first", "hermod")]:
    stem, _, policy = name.partition("-")
    one = "%s/%s-1%s.h5" % (d, stem, "-" + policy if policy else "")
    many = "%s/%s-%d%s.h5" % (d, stem, n, "-" + policy if policy else "")
    a, ma = load(one)
    b, mb = load(many)
    same = not differing(a, b)
    ok = same and ma["completed"] == 1 and mb["completed"] == 1 and mb["ranks"] == n
    rows = ", ".join("%s %d" % (k, len(v)) for k, v in a.items())
    print("%s   %s at 1 and %d ranks: %s (%s)" % ("ok" if ok else "FAIL", name, n, "identical" if same else "DIFFERENT", rows))
    bad += not ok
# Cut at 1 ms (completed = 0), with bytes on links of the blocks of rank 0 and rank 1.
a, _ = load("%s/large-1.h5" % d)
b, mb = load("%s/large-%d.h5" % (d, n))
links = a["links"]
blocks = {int(i) // 4096 for i in links["id"][links["bytes"] > 0]}
with h5py.File("%s/large-%d.h5" % (d, n), "r") as f:
    in_order = (f["links"]["id"][:] == range(len(links))).all()  # rows by id, not just the same set
ok = not differing(a, b) and mb["ranks"] == n and len(links) > 4096 and {0, 1} <= blocks and in_order
print("%s   2,048 GPUs to 1 ms at 1 and %d ranks: %s, %d links, bytes in link blocks %s" % (
    "ok" if ok else "FAIL", n, "identical" if not differing(a, b) else "DIFFERENT", len(links), sorted(blocks)))
bad += not ok
# Widened bins: each is the sum of the 100 us bins it covers.
with h5py.File("%s/training-1.h5" % d, "r") as f, h5py.File("%s/widened-1.h5" % d, "r") as g:
    narrow, wide = f["link_util"][:], g["link_util"][:]
    width = int(g["link_util"].attrs["bin_ps"])
    merged = {}
    for row in narrow:
        key = (int(row["link"]), int(row["start_ps"]) // width)
        merged[key] = merged.get(key, 0) + int(row["bytes"])
    got = {(int(r["link"]), int(r["bin"])): int(r["bytes"]) for r in wide}
    ok = width > int(f["link_util"].attrs["bin_ps"]) and set(got) <= set(merged) and all(
        merged[k] == got.get(k, 0) for k in merged)
    print("%s   widened /link_util: %d bins of %d ps, each the sum of the bins it covers" % ("ok" if ok else "FAIL", len(wide), width))
    bad += not ok
# A cell's bytes go to the bins its transmission spans: no bin above the line
# rate, every byte of the busiest links counted, and full bins where cells span them.
with h5py.File("%s/cells-1.h5" % d, "r") as f:
    u, links = f["link_util"][:], f["links"][:]
    top = set(int(l) for l in u["link"])
    counted = sum(int(links["bytes"][links["id"] == l][0]) for l in top)
    ok = u["utilization"].max() <= 1.0 and (u["utilization"] >= 0.999).any() and u["bytes"].sum() == counted
    print("%s   16 MiB cells: /link_util at most %.4f of the line rate, bytes %d of %d" % (
        "ok" if ok else "FAIL", u["utilization"].max(), u["bytes"].sum(), counted))
    bad += not ok
with h5py.File("%s/training-1.h5" % d, "r") as f:
    c = f["coflows"][:]
    assert f["meta"].attrs["policy"] == "hermod", f["meta"].attrs["policy"]
    assert len(f["iterations"]) == 1 and f["iterations"][0]["end_ps"] == max(c["end_ps"].max(), f["compute"]["end_ps"].max())
    flows = f["flows"][:]
    assert (flows["end_ps"] >= flows["start_ps"]).all() and flows["bytes"].sum() == c["bytes"].sum()
    print("ok   training: iteration end = last coflow or task end; flow bytes sum to coflow bytes")
    # /nodes: every link end is a node; names as perturbations spell them.
    nodes, links = f["nodes"][:], f["links"][:]
    names = {int(i): n.decode() for i, n in zip(nodes["id"], nodes["name"])}
    gpus = nodes[nodes["kind"] == 0]
    ok = (len(names) == len(nodes) == len(set(names.values())) and
          set(links["src"]) | set(links["dst"]) <= set(names) and
          len(gpus) == f["meta"].attrs["gpus"] and
          all(names[int(i)] == "gpu %d" % g for i, g in zip(gpus["id"], gpus["index"])) and
          {"leaf 0", "spine 1", "nvswitch 0"} <= set(names.values()))
    print("%s   /nodes: %d nodes, %d GPUs named gpu N, every /links end named (%s)" % (
        "ok" if ok else "FAIL", len(nodes), len(gpus),
        ", ".join("%s -> %s" % (names[int(a)], names[int(b)]) for a, b in zip(links["src"][:2], links["dst"][:2]))))
    bad += not ok
sys.exit(1 if bad else 0)
PY
# Refused without --force; flows off.
if "$shoal" run "$dir/training.toml" --quiet -o "$dir/training-1.h5" 2>"$dir/exists.err"; then
  echo "FAIL an existing file was overwritten without --force"; failures=$((failures + 1))
elif grep -q "training-1.h5: exists (use --force to overwrite it)" "$dir/exists.err"; then
  echo "ok   an existing file is refused without --force"
else
  echo "FAIL unexpected error: $(cat "$dir/exists.err")"; failures=$((failures + 1))
fi
printf '\n[output]\nfile = "no-flows.h5"\nflows = false\n' >>"$dir/training.toml"
"$shoal" run "$dir/training.toml" --quiet --force >/dev/null
if "$py" -c "import h5py, sys; f = h5py.File('$dir/no-flows.h5', 'r'); sys.exit('flows' in f)"; then
  echo "ok   [output] flows = false: no /flows"
else
  echo "FAIL /flows written although [output] flows = false"; failures=$((failures + 1))
fi
# A rank fails mid-run (every uplink of leaf 0 down at 100 ms: no path left):
# all ranks stop with the message, and the .partial file opens with what was
# flushed before (rows go to the file every 4 M events per rank, 8 M here;
# the run has passed that by 100 ms).
{ sed '/^\[output\]/,$d' "$dir/training.toml"
  for k in 0 1 2 3 4 5 6 7; do printf '\n[[perturbation]]\nlink = "leaf 0 -> spine %d"\nfail = true\nat = "100ms"\n' "$k"; done; } >"$dir/failing.toml"
rm -f "$dir"/failing.h5*
rc=0; timeout 300 "$mpirun" -np 2 "$shoal" run "$dir/failing.toml" --quiet -o "$dir/failing.h5" >/dev/null 2>"$dir/failing.err" || rc=$?
if [ "$rc" -ne 0 ] && grep -q "no path left" "$dir/failing.err" && [ ! -e "$dir/failing.h5" ] &&
  rows=$("$py" -c "import h5py; f = h5py.File('$dir/failing.h5.partial', 'r'); print(len(f['compute']))") &&
  [ "$rows" -gt 0 ]; then
  echo "ok   a failing rank: exit $rc with the message; failing.h5.partial readable, $rows compute rows"
else
  echo "FAIL a failing rank: exit $rc; $(head -c 300 "$dir/failing.err")"; failures=$((failures + 1))
fi
# SIGTERM mid-run (Slurm's time limit), to one process of a 1-rank and of a
# 2-rank run: exit 3, a readable file with completed = 0 and its unfinished
# iteration's end_ps = -1. The run is made long (8,192 tokens a micro-batch:
# tens of seconds) and signalled 2 s after its file appears, so neither a fast
# machine nor a slow start-up lets it finish first or be signalled before it
# runs (1,024 tokens and a fixed 3 s once let the 1-rank run end at 2.8 s).
# "1-force" reruns over a completed file with --force: the stop keeps that
# file and leaves its own results in FILE.partial.
sed 's/^micro_batch_tokens = .*/micro_batch_tokens = 8192/' "$dir/training.toml" | sed '/^\[output\]/,$d' >"$dir/long.toml"
for case in 1 2 1-force; do
  n=${case%-force} out="$dir/stopped-$case.h5" force=() stopped="$dir/stopped-$case.h5"
  rm -f "$out" "$out.partial"
  if [ "$case" = 1-force ]; then
    cp "$dir/training-1.h5" "$out"
    force=(--force) stopped="$out.partial"
  fi
  timeout 300 "$mpirun" -np "$n" "$shoal" run "$dir/long.toml" --quiet -o "$out" "${force[@]}" 2>"$dir/stopped-$case.err" &
  launcher=$!
  for _ in $(seq 600); do
    [ -e "$out.partial" ] && break
    sleep 0.1
  done
  sleep 2
  pkill -TERM -f "shoal run $dir/long.toml" -n || true  # the newest: one rank
  rc=0; wait "$launcher" || rc=$?
  if [ "$rc" -ne 0 ] && grep -q "stopped by" "$dir/stopped-$case.err" &&
    "$py" - "$stopped" "$out" "$case" <<'PY'; then
import h5py, sys
stopped, out, case = sys.argv[1:]
with h5py.File(stopped, "r") as f:
    it = f["iterations"][:]
    assert f["meta"].attrs["completed"] == 0 and len(f["coflows"]) > 0
    assert len(it) == 1 and it[0]["end_ps"] == -1 and it[0]["start_ps"] >= 0, it
if case.endswith("force"):
    with h5py.File(out, "r") as f:
        assert f["meta"].attrs["completed"] == 1, "the completed file was replaced"
PY
    echo "ok   SIGTERM at $case rank(s): exit $rc, $(grep -o 'stopped by [A-Za-z ]*at simulated time [^;]*' "$dir/stopped-$case.err"), $(basename "$stopped") readable, completed = 0, iteration end_ps = -1"
  else
    echo "FAIL SIGTERM at $case rank(s): exit $rc, $(cat "$dir/stopped-$case.err")"; failures=$((failures + 1))
  fi
done
if grep -q "stopped-1-force.h5 (a completed run) is kept, and .*stopped-1-force.h5.partial holds" "$dir/stopped-1-force.err"; then
  echo "ok   a stopped --force rerun keeps the completed file and says where its results are"
else
  echo "FAIL the stop message does not name both files: $(cat "$dir/stopped-1-force.err")"; failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
