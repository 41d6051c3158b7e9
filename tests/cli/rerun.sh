#!/usr/bin/env bash
# `shoal rerun` (docs/output.md): a result file alone reproduces its run. Runs
# made in a scratch folder (relative job, workload and partition files, --set
# overrides, compared policies, a routing file) are rerun after the folder is gone, on another
# rank count, and every table matches. A file too large to embed is found by
# its path and SHA-256, and a changed or missing one is a one-line error.
# Usage: rerun.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
py=/usr/bin/python3  # Debian's Python, where python3-h5py lives
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
failures=0
ok() { echo "ok   $1"; }
fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}
same_tables() {  # same_tables A.h5 B.h5: every table equal, and at least one row
  PYTHONPATH="$src/tests/cli" "$py" - "$1" "$2" <<'PY'
import sys
from shoal_tables import sorted_tables, differing
a, _ = sorted_tables(sys.argv[1])
b, _ = sorted_tables(sys.argv[2])
bad = differing(a, b)
rows = sum(len(t) for t in a.values())
print("%d tables, %d rows%s" % (len(a), rows, (", differing: %s" % bad) if bad else ""))
sys.exit(1 if bad or rows == 0 or "coflows" not in a else 0)
PY
}
meta() {  # meta FILE KEY
  "$py" -c 'import sys, h5py; print(h5py.File(sys.argv[1])["meta"].attrs[sys.argv[2]])' "$1" "$2"
}

# A training job in a folder of its own: the config names its job file relatively.
mkdir -p made/jobs made/configs
cp "$src/jobs/qwen1.5-moe-a2.7b.toml" made/jobs/
sed -e 's|^job = .*|job = "../jobs/qwen1.5-moe-a2.7b.toml"|' -e '/^name = "fair"$/d' "$src/configs/sweeps/tiny-base.toml" \
  >made/configs/training.toml
# A DAG workload file and a partition file, both relative to the config.
cp "$src/configs/examples/fat-tree-64.toml" "$src/configs/examples/fat-tree-64-workload.toml" made/configs/
"$shoal" -q partition fabric made/configs/fat-tree-64.toml --ranks 2 -o made/configs/two.part
# A routing file (tools/shoal-routing), named relative to the config by --set.
"$src/tools/shoal-routing" made/jobs/qwen1.5-moe-a2.7b.toml -o made/configs/routing.csv \
  --set micro_batches=1 --set micro_batch_tokens=256 --law zipf:1.1 >/dev/null
(
  cd made
  timeout 300 "$mpirun" -np 2 "$shoal" -q run configs/training.toml -o ../training.h5 \
    --set job.micro_batches=1 --set 'policy.compare=["fair","hermod"]' >/dev/null
  timeout 300 "$mpirun" -np 2 "$shoal" -q run configs/fat-tree-64.toml -o ../dag.h5 \
    --set run.partition=two.part >/dev/null
  timeout 300 "$mpirun" -np 2 "$shoal" -q run configs/training.toml -o ../routed.h5 \
    --set job.micro_batches=1 --set job.routing_file=routing.csv >/dev/null
)
rm -rf made

rerun_case() {  # rerun_case NAME RANKS: rerun NAME.h5 and compare the tables
  local rc=0 compared=""
  timeout 300 "$mpirun" -np "$2" "$shoal" -q rerun "$1.h5" -o "re-$1.h5" >"re-$1.out" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ] && compared=$(same_tables "$1.h5" "re-$1.h5"); then
    ok "$1 rerun on $2 rank(s) from the file alone (made on 2): $compared"
  else
    fail "$1 rerun: exit $rc: $(cat "re-$1.out") $compared"
  fi
}
rerun_case training-hermod 1
rerun_case training-fair 1
rerun_case dag 2  # its partition file is made for 2 ranks
rerun_case routed 1
# Engaged: the overrides, the policy and the embedded inputs came from /meta.
resolved=$(meta training-hermod.h5 config_resolved)
if grep -q "^micro_batches = 1$" <<<"$resolved" && [ "$(meta re-training-hermod.h5 policy)" = hermod ] &&
  [ "$(meta training-hermod.h5 inputs)" = 1 ] && [ "$(meta dag.h5 inputs)" = 2 ] &&
  [ "$(meta re-dag.h5 rerun_of)" = dag.h5 ] &&
  "$py" -c 'import sys, h5py; f = h5py.File("routed.h5"); sys.exit(sorted(f["meta/inputs"][k].attrs["role"] for k in f["meta/inputs"]) != ["job", "routing"])'; then
  ok "the resolved config keeps --set; dag.h5 embeds its workload and partition files, routed.h5 its routing file"
else
  fail "meta: inputs $(meta training-hermod.h5 inputs)/$(meta dag.h5 inputs), policy $(meta re-training-hermod.h5 policy): $resolved"
fi

# Too large to embed (embed_limit 100 B): the path and SHA-256 are kept.
cp "$src/jobs/qwen1.5-moe-a2.7b.toml" big-job.toml
sed -e "s|^job = .*|job = \"$dir/big-job.toml\"|" "$src/configs/sweeps/tiny-base.toml" >big.toml
"$shoal" -q run big.toml -o big.h5 --set job.micro_batches=1 --set output.embed_limit=100B >/dev/null
if [ "$(meta big.h5 embed_limit)" = 100 ] && "$shoal" -q rerun big.h5 -o re-big.h5 >/dev/null &&
  same_tables big.h5 re-big.h5 >/dev/null; then
  ok "a file over embed_limit is read again from its path, unchanged"
else
  fail "a file over embed_limit: $(meta big.h5 embed_limit)"
fi

expect_error() {  # expect_error WHAT PATTERN COMMAND...
  local what=$1 pattern=$2
  shift 2
  local rc=0
  timeout 120 "$@" >err.out 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && [ "$(grep -c . err.out)" -eq 1 ] && grep -qE "$pattern" err.out; then
    ok "$what: $(cat err.out)"
  else
    fail "$what: exit $rc: $(cat err.out)"
  fi
}
echo "# changed" >>big-job.toml
expect_error "a changed input" "rerun big.h5: job $dir/big-job.toml \(/meta/inputs/0\): not embedded \([0-9]+ bytes, over embed_limit\), and $dir/big-job.toml has changed since the run" \
  "$shoal" -q rerun big.h5 -o changed.h5
rm big-job.toml
expect_error "a missing input" "and $dir/big-job.toml is missing; put the file there again" \
  "$shoal" -q rerun big.h5 -o missing.h5
expect_error "an existing output" "re-training-fair.h5: exists \(use --force to overwrite it\)" \
  "$shoal" -q rerun training-fair.h5 -o re-training-fair.h5
expect_error "a partition file made for 2 ranks, rerun on 1" "config dag.h5:/meta/config_resolved: run.partition: partition file .*two.part, line [0-9]+: made for 2 ranks, this run has 1" \
  "$shoal" -q rerun dag.h5 -o one.h5
"$py" -c 'import h5py; f = h5py.File("old.h5", "w"); f.create_group("meta").attrs["completed"] = 1'
expect_error "a file from before /meta kept the config" "rerun old.h5: /meta attribute config_path is missing \(a file from an older Shoal" \
  "$shoal" -q rerun old.h5 -o from-old.h5
expect_error "not an HDF5 file" "rerun big.toml: not an HDF5 file" "$shoal" -q rerun big.toml -o x.h5
[ ! -e changed.h5 ] && [ ! -e missing.h5 ] && [ ! -e one.h5 ] && [ ! -e from-old.h5 ] && ok "no output from a refused rerun" ||
  fail "a refused rerun wrote a file"
if ls /tmp/shoal-rerun-* >/dev/null 2>&1; then fail "scratch folders left: $(ls -d /tmp/shoal-rerun-*)"; fi

if [ "$failures" -ne 0 ]; then
  echo "rerun: $failures check(s) failed"
  exit 1
fi
echo "rerun: all checks passed"
