#!/usr/bin/env bash
# Shows that two builds of Shoal give the same runs: for every config in
# configs/examples/, bench/configs/ and the flagship's 1,024-GPU fair point,
# the coflow CSV (byte for byte), every HDF5 table (sorted by its key columns)
# and the event count must be identical. Use it around a change that must not
# change results (a refactoring, an optimisation):
#   git worktree add /tmp/base main && (cd /tmp/base && ./run.sh version)
#   bench/same_results.sh /tmp/base/build/shoal build/shoal
# Usage: bench/same_results.sh [-q] SHOAL_A SHOAL_B [WORKDIR]
#   -q   the quick set: every config but the 8,192- and 16,384-GPU benchmarks
#        and the flagship point (seconds instead of minutes)
# RANKS=N runs every config on N ranks (tools/mpirun; default 1); a config
# whose fabric cannot be cut into N parts is skipped, and says why.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "-q" ]; then
  quick=1
  shift
fi
if [ $# -lt 2 ]; then
  echo "usage: bench/same_results.sh [-q] SHOAL_A SHOAL_B [WORKDIR]" >&2
  exit 2
fi
a=$(realpath "$1") b=$(realpath "$2")
dir=${3:-$(mktemp -d /tmp/same_results.XXXXXX)}
ranks=${RANKS:-1}
py=/usr/bin/python3  # Debian's Python, where python3-h5py lives
mkdir -p "$dir"

# Run configs only (a workload file beside them has no [topology]).
mapfile -t configs < <(grep -l '^\[topology\]' configs/examples/*.toml)
configs+=(bench/configs/a2a-1024.toml)
if [ "$quick" = 0 ]; then
  configs+=(bench/configs/permutation-8192.toml bench/configs/ep-8192.toml
    bench/configs/ep-16384.toml bench/configs/ep-16384-full.toml)
fi

# run SHOAL NAME ARGS...: the coflow CSV and the HDF5 file of one config, and
# its event count (the summary's "events N", one per policy).
run() {
  local shoal=$1 name=$2
  shift 2
  local launch=("$shoal")
  [ "$ranks" -gt 1 ] && launch=(tools/mpirun -np "$ranks" "$shoal")
  "${launch[@]}" run "$@" --quiet -o "$dir/$name.csv" --force >"$dir/$name.csv.log"
  "${launch[@]}" run "$@" --quiet -o "$dir/$name.h5" --force >"$dir/$name.h5.log"
  grep -oE 'events [0-9]+' "$dir/$name.csv.log" >"$dir/$name.events"
}

bad=0
compare() {  # compare LABEL NAME_A NAME_B
  local label=$1 x=$2 y=$3 what=()
  cmp -s "$dir/$x.events" "$dir/$y.events" || what+=("event counts")
  for csv in "$dir/$x"*.csv; do
    cmp -s "$csv" "${csv/$x/$y}" || what+=("$(basename "$csv")")
  done
  for h5 in "$dir/$x"*.h5; do
    PYTHONPATH=tests/cli "$py" - "$h5" "${h5/$x/$y}" <<'PY' || what+=("$(basename "$h5")")
import sys
from shoal_tables import sorted_tables, differing
diff = differing(sorted_tables(sys.argv[1])[0], sorted_tables(sys.argv[2])[0])
if diff:
    print("  tables differ:", ", ".join(diff))
sys.exit(1 if diff else 0)
PY
  done
  if [ ${#what[@]} -eq 0 ]; then
    echo "ok     $label ($(tr '\n' ' ' <"$dir/$x.events"| sed 's/ $//'))"
  else
    echo "FAIL   $label: ${what[*]} differ"
    bad=1
  fi
}

echo "A: $a"
echo "B: $b"
echo "ranks: $ranks, work in $dir"
for config in "${configs[@]}"; do
  name=$(basename "$config" .toml)
  if ! run "$a" "a-$name" "$config" 2>"$dir/a-$name.err"; then
    # A fabric too small to cut into $ranks parts is skipped, with shoal's reason.
    if grep -q "cannot fill" "$dir/a-$name.err"; then
      echo "skip   $config: $(grep -o 'partition strategy.*' "$dir/a-$name.err" | head -1)"
      continue
    fi
    cat "$dir/a-$name.err" >&2
    exit 1
  fi
  run "$b" "b-$name" "$config"
  compare "$config" "a-$name" "b-$name"
done
if [ "$quick" = 0 ]; then
  # The flagship's 1,024-GPU point under fair sharing, as the sweep runs it.
  point=(configs/flagship/base.toml --set topology.gpus=1024 --set topology.link_rate=100Gbps
    --set policy.name=fair)
  run "$a" a-flagship-1024 "${point[@]}"
  run "$b" b-flagship-1024 "${point[@]}"
  compare "flagship gpus-1024_link-rate-100Gbps_policy-fair" a-flagship-1024 b-flagship-1024
fi
[ "$bad" = 0 ] && echo "same_results: every table and event count identical"
exit "$bad"
