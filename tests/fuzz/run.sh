#!/usr/bin/env bash
# Runs every fuzz target of a SHOAL_FUZZ build (tests/fuzz/CMakeLists.txt) from
# seeds gathered from the repository's shipped files; builds nothing.
#
#   tests/fuzz/run.sh BUILD_DIR [TARGET...]
#
# Each target runs until it has executed SHOAL_FUZZ_RUNS inputs (default 10000)
# or for SHOAL_FUZZ_TIME seconds (default 120), whichever comes first, and fails
# on any finding (crash, sanitizer report, leak, an exception other than
# shoal::Error, an input taking over 10 s or 2 GiB) or when it stops short of
# its count. SHOAL_FUZZ_RUNS=-1: no count, run for the time alone (longer runs).
# Work files (corpora, logs, the input of any finding) go to BUILD_DIR/fuzz-run/
# (or SHOAL_FUZZ_WORK), emptied first.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [TARGET...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
runs=${SHOAL_FUZZ_RUNS:-10000}
seconds=${SHOAL_FUZZ_TIME:-120}

# Every target, and the longest input it gets (bytes). To add one: its name here,
# a seeds_NAME function below (seeds from shipped files), optionally seeds in
# tests/fuzz/corpus/NAME/ and a dictionary tests/fuzz/dict/NAME.dict (or a line
# in dict_of).
all_targets=(units config_file run_config dag_toml dag_json htsim partition job_file sweep_file
             chakra routing_file sequence_lengths)
declare -A max_len=([units]=64 [config_file]=16384 [run_config]=16384 [dag_toml]=16384
                    [dag_json]=16384 [htsim]=4096 [partition]=2048 [job_file]=4096
                    [sweep_file]=4096 [chakra]=4096 [routing_file]=4096
                    [sequence_lengths]=2048)
dict_of() {
  case $1 in
    config_file | run_config | job_file | sweep_file) echo config ;;
    dag_toml | dag_json) echo dag ;;
    *) echo "$1" ;;
  esac
}

# Seeds: each function copies its target's files into the folder $1.
toml_files() { find "$repo/configs" "$repo/jobs" "$repo/tests/configs" -name '*.toml' | sort; }
workload_files() { toml_files | xargs -r grep -l -E '^\[\[(task|coflow|pattern)\]\]'; }
seeds_units() {
  # Every quoted value with a unit in the shipped configs: "400Gbps", "1us", "64KiB", ...
  local i=0 value
  while IFS= read -r value; do
    printf '%s' "$value" >"$1/unit-$((i++))"
  done < <(toml_files | xargs -r grep -ohE '"[0-9][0-9.e+-]*[ ]?[A-Za-z/]+"' | tr -d '"' | sort -u)
}
seeds_config_file() { toml_files | xargs -r cp -t "$1"; }
seeds_run_config() {
  find "$repo/configs" "$repo/tests/configs" -name '*.toml' | xargs -r grep -l '^\[topology\]' |
    xargs -r cp -t "$1"
}
seeds_dag_toml() { workload_files | xargs -r cp -t "$1"; }
seeds_dag_json() {
  find "$repo/configs" -name '*.json' | xargs -r cp -t "$1"
  # The TOML workloads as JSON, when Python has tomllib (3.11+).
  local f
  for f in $(workload_files); do
    python3 -c 'import json, sys, tomllib; json.dump(tomllib.load(open(sys.argv[1], "rb")), sys.stdout)' \
      "$f" >"$1/$(basename "$f" .toml).json" 2>/dev/null || rm -f "$1/$(basename "$f" .toml).json"
  done
}
seeds_htsim() { find "$repo/configs" -name '*.cm' | xargs -r cp -t "$1"; }
seeds_partition() { cp "$repo"/partitions/*.part "$1"; }
seeds_sweep_file() { find "$repo/configs" -name '*.toml' | xargs -r grep -l '^\[sweep\]' | xargs -r cp -t "$1"; }
seeds_job_file() { cp "$repo"/jobs/*.toml "$repo"/configs/examples/two-jobs/*.toml "$1"; }
seeds_routing_file() {  # a whole file for the fuzz job, and a short broken one
  { echo "iteration,layer,micro_batch,expert,tokens"
    for l in 2 3 4; do for m in 0 1; do for e in $(seq 0 15); do echo "0,$l,$m,$e,$((e * 7 % 11))"; done; done; done; } >"$1/whole.csv"
  printf 'iteration,layer,micro_batch,expert,tokens\n0,2,0,3,5\n' >"$1/short.csv"
}
seeds_sequence_lengths() {  # lengths with comments, and a broken one
  printf '# lengths\n4096\n512  # short\n\n100000\n1\n' >"$1/lengths.txt"
  printf '12\nx\n' >"$1/bad.txt"
}
seeds_chakra() {
  # Each of ASTRA-sim's 4-NPU traces, its rank files joined as chakra.cpp splits them.
  local trace i
  for trace in "$repo"/tests/data/chakra/*/4npus_1MB/*.0.et; do
    trace=${trace%.0.et}
    {
      for i in 0 1 2 3; do
        if [ "$i" -gt 0 ]; then printf '\n--rank--\n'; fi
        cat "$trace.$i.et"
      done
    } >"$1/$(basename "$trace")"
  done
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
work=${SHOAL_FUZZ_WORK:-$build/fuzz-run}
rm -rf "$work"
mkdir -p "$work"
# Leaks are findings too (no target initializes MPI); every UB report is fatal.
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"

failed=()
printf '%-12s %10s %8s %s\n' target inputs seconds result
for t in "${targets[@]}"; do
  exe="$build/tests/fuzz/fuzz_$t"
  if [ ! -x "$exe" ] || ! declare -F "seeds_$t" >/dev/null; then
    echo "$0: no target $t (built: $build/tests/fuzz/fuzz_*; known: ${all_targets[*]})" >&2
    exit 2
  fi
  mkdir -p "$work/seeds/$t" "$work/corpus/$t" "$work/artifacts/$t"
  "seeds_$t" "$work/seeds/$t"
  # Seeds checked in for what the shipped files lack.
  if [ -d "$repo/tests/fuzz/corpus/$t" ]; then cp "$repo/tests/fuzz/corpus/$t"/* "$work/seeds/$t"; fi
  options=(-runs="$runs" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
           -max_len="${max_len[$t]:-4096}" -seed=1 -print_final_stats=1
           -artifact_prefix="$work/artifacts/$t/")
  dict="$repo/tests/fuzz/dict/$(dict_of "$t").dict"
  [ -f "$dict" ] && options+=(-dict="$dict")
  start=$SECONDS
  status=0
  (cd "$work" && "$exe" "${options[@]}" "$work/corpus/$t" "$work/seeds/$t") \
    >"$work/$t.log" 2>&1 || status=$?
  done_runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/$t.log" | tail -1)
  result=ok
  if [ "$status" -ne 0 ]; then
    result="FAILED (exit $status; input in $work/artifacts/$t/)"
  elif [ -z "$done_runs" ]; then
    result="FAILED (no run count in $work/$t.log)"
  elif [ "$runs" -ge 0 ] && [ "$done_runs" -lt "$runs" ]; then
    result="FAILED (fewer than $runs inputs in ${seconds}s)"
  fi
  printf '%-12s %10s %8s %s\n' "$t" "${done_runs:-?}" $((SECONDS - start)) "$result"
  if [ "$result" != ok ]; then
    failed+=("$t")
    tail -n 40 "$work/$t.log" | sed "s/^/  $t: /"
    echo "  reproduce: $exe $work/artifacts/$t/<file>"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (logs in $work)" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets passed"
