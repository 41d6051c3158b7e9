#!/usr/bin/env bash
# slurm/submit-sweep --dry-run on a sweep larger than Slurm's MaxArraySize,
# without Slurm: the points of one rank count must be split into arrays of at
# most MaxArraySize tasks, indexed 0..n-1 (indices must stay below
# MaxArraySize) and mapped to their points by SHOAL_POINTS, every point to run
# in exactly one array; the report must wait for every array. The limit comes
# from `scontrol show config` (a stand-in here: MaxArraySize 700, and
# max_array_tasks=600 lower), is 1001 when scontrol cannot answer (Slurm's
# default) and SHOAL_MAX_ARRAY_SIZE when set. Every array must ask for the
# stop signal SHOAL_SIGNAL_MARGIN (120) seconds before its time limit. Points
# that a squeue stand-in shows queued must not be submitted again. Then
# slurm/sweep.sbatch, run outside Slurm with a stand-in shoal, must run the
# point its task id maps to.
#
#   tests/slurm/submit_dry_run.sh SHOAL_BIN SOURCE_DIR
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 SHOAL_BIN SOURCE_DIR" >&2
  exit 2
fi
shoal=$(readlink -f "$1")
src=$(readlink -f "$2")
fail() {
  echo "submit_dry_run: FAIL: $*" >&2
  exit 1
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shoal-dry-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 2 x 1250 = 2,500 points: 16 GPUs (1 rank, points 0-1249) and 32 (2 ranks,
# points 1250-2499); the seed varies fastest.
{
  echo '[sweep]'
  echo "base = \"$src/configs/sweeps/tiny-base.toml\""
  echo 'gpus_per_rank = 16'
  echo '[axes]'
  echo 'topology.gpus = [16, 32]'
  echo "run.seed = [$(seq -s ', ' 1 1250)]"
} >"$tmp/big.toml"
export SHOAL_BIN=$shoal SHOAL_RESULTS=$tmp/results
# scontrol stand-ins, first on PATH: one that cannot reach Slurm, two that
# answer like a cluster with MaxArraySize = 700, one with max_array_tasks = 600.
mkdir -p "$tmp/no-slurm" "$tmp/slurm-700" "$tmp/slurm-600"
printf '#!/bin/sh\necho "scontrol: error: no configuration" >&2\nexit 1\n' >"$tmp/no-slurm/scontrol"
cat >"$tmp/slurm-700/scontrol" <<'EOF'
#!/bin/sh
[ "$*" = "show config" ] || exit 1
echo "Configuration data as of 2026-12-02T21:00:00"
echo "MaxArraySize            = 700"
echo "SchedulerParameters     = batch_sched_delay=0"
EOF
cat >"$tmp/slurm-600/scontrol" <<'EOF'
#!/bin/sh
[ "$*" = "show config" ] || exit 1
echo "Configuration data as of 2026-12-02T21:00:00"
echo "MaxArraySize            = 700"
echo "SchedulerParameters     = batch_sched_delay=0,max_array_tasks=600,bf_continue"
EOF
cp "$tmp/no-slurm/scontrol" "$tmp/no-slurm/squeue"
chmod 755 "$tmp/no-slurm/scontrol" "$tmp/no-slurm/squeue" "$tmp/slurm-700/scontrol" "$tmp/slurm-600/scontrol"
# No Slurm of this machine's answers: a dry run needs none.
export PATH=$tmp/no-slurm:$PATH

# submit-sweep's dry run -> "ARRAY SPEC|RANKS|POINTS" per array, and the report's dependency.
arrays_of() {
  awk '/^dry-run: .*sweep\.sbatch/ {
         spec = ""; ranks = ""; points = ""
         for (i = 1; i <= NF; i++) {
           if ($i ~ /^--array=/) spec = substr($i, 9)
           if ($i ~ /^--ntasks=/) ranks = substr($i, 10)
           if ($i ~ /^SHOAL_POINTS=/) points = substr($i, 14)
         }
         print spec "|" ranks "|" points
       }' "$1"
}
dependency_of() { grep -o -- '--dependency=[^ ]*' "$1" | head -n 1; }
# "0-2,5" -> one index per line.
expand() {
  local range
  for range in ${1//,/ }; do seq "${range%-*}" "${range#*-}"; done
}

# check LIMIT EXPECTED_ARRAYS OUTPUT_FILE
check() {
  local limit=$1 want=$2 out=$3 spec ranks points n last all=0
  [ "$(arrays_of "$out" | wc -l)" = "$want" ] ||
    fail "limit $limit: $(arrays_of "$out" | wc -l) arrays, expected $want: $(cat "$out")"
  : >"$tmp/covered"
  while IFS='|' read -r spec ranks points; do
    [[ $spec =~ ^0-([0-9]+)%8$ ]] || fail "limit $limit: array spec '$spec' is not 0-N%8"
    last=${BASH_REMATCH[1]}
    ((last < limit)) || fail "limit $limit: index $last is not below MaxArraySize"
    n=$(expand "$points" | wc -l)
    [ "$n" = $((last + 1)) ] || fail "limit $limit: $((last + 1)) tasks for $n points ($points)"
    # Every point of the array at the rank count --list suggests for it.
    while read -r p; do
      if ((p < 1250)); then [ "$ranks" = 1 ] || fail "point $p at $ranks ranks"; fi
      if ((p >= 1250)); then [ "$ranks" = 2 ] || fail "point $p at $ranks ranks"; fi
    done < <(expand "$points")
    expand "$points" >>"$tmp/covered"
    all=$((all + n))
  done < <(arrays_of "$out")
  [ "$all" = 2500 ] || fail "limit $limit: $all points in arrays, expected 2500"
  [ "$(sort -n "$tmp/covered" | uniq | wc -l)" = 2500 ] || fail "limit $limit: a point in two arrays"
  if [ "$(sort -n "$tmp/covered" | head -n 1)" != 0 ] || [ "$(sort -n "$tmp/covered" | tail -n 1)" != 2499 ]; then
    fail "limit $limit: points outside 0-2499"
  fi
  local dep
  dep=$(dependency_of "$out")
  [ "$(tr ':' '\n' <<<"${dep#*=}" | grep -c '^DRY')" = "$want" ] ||
    fail "limit $limit: the report waits for '$dep', not for every array"
  echo "ok   limit $limit: $want arrays, indices below $limit, 2500 points once each, report $dep"
}

# No Slurm to ask: Slurm's default, 1001.
"$src/slurm/submit-sweep" --dry-run "$tmp/big.toml" >"$tmp/default.out" 2>&1 ||
  fail "submit-sweep --dry-run failed: $(cat "$tmp/default.out")"
grep -q 'at most 1001 tasks' "$tmp/default.out" || fail "no note of the 1001 fallback: $(cat "$tmp/default.out")"
check 1001 4 "$tmp/default.out"
# The cluster's limits: MaxArraySize, and max_array_tasks where lower.
PATH=$tmp/slurm-700:$PATH "$src/slurm/submit-sweep" --dry-run "$tmp/big.toml" >"$tmp/700.out" 2>&1 ||
  fail "submit-sweep --dry-run failed: $(cat "$tmp/700.out")"
check 700 4 "$tmp/700.out"
PATH=$tmp/slurm-600:$PATH "$src/slurm/submit-sweep" --dry-run "$tmp/big.toml" >"$tmp/600.out" 2>&1 ||
  fail "submit-sweep --dry-run failed: $(cat "$tmp/600.out")"
check 600 6 "$tmp/600.out"
# The override wins over the cluster's.
PATH=$tmp/slurm-600:$PATH SHOAL_MAX_ARRAY_SIZE=1000 "$src/slurm/submit-sweep" --dry-run "$tmp/big.toml" \
  >"$tmp/1000.out" 2>&1 || fail "submit-sweep --dry-run failed: $(cat "$tmp/1000.out")"
check 1000 4 "$tmp/1000.out"
if SHOAL_MAX_ARRAY_SIZE=0 "$src/slurm/submit-sweep" --dry-run "$tmp/big.toml" >"$tmp/0.out" 2>&1; then
  fail "MaxArraySize 0 (arrays disabled) accepted"
fi
grep -q 'job arrays are disabled' "$tmp/0.out" || fail "MaxArraySize 0: $(cat "$tmp/0.out")"
echo "ok   limit 0: refused (job arrays disabled)"

# The stop signal: 120 s before the time limit to the batch shell, or
# SHOAL_SIGNAL_MARGIN seconds; the report needs none.
signals() { grep '^dry-run: .*sweep\.sbatch' "$1" | grep -o -- '--signal=[^ ]*' | sort | uniq -c | awk '{ print $1, $2 }'; }
[ "$(signals "$tmp/default.out")" = "4 --signal=B:TERM@120" ] ||
  fail "default margin: $(signals "$tmp/default.out") (expected --signal=B:TERM@120 on each of 4 arrays)"
SHOAL_SIGNAL_MARGIN=600 "$src/slurm/submit-sweep" --dry-run "$tmp/big.toml" \
  >"$tmp/margin.out" 2>&1 || fail "submit-sweep --dry-run failed: $(cat "$tmp/margin.out")"
[ "$(signals "$tmp/margin.out")" = "4 --signal=B:TERM@600" ] || fail "SHOAL_SIGNAL_MARGIN=600: $(signals "$tmp/margin.out")"
if grep '^dry-run: .*report\.sbatch' "$tmp/margin.out" | grep -q -- '--signal'; then
  fail "the report job got a --signal"
fi
for bad in 0 -5 2m 70000; do
  if SHOAL_SIGNAL_MARGIN=$bad "$src/slurm/submit-sweep" --dry-run "$tmp/big.toml" >"$tmp/bad.out" 2>&1; then
    fail "SHOAL_SIGNAL_MARGIN=$bad accepted"
  fi
  grep -q 'SHOAL_SIGNAL_MARGIN must be' "$tmp/bad.out" || fail "SHOAL_SIGNAL_MARGIN=$bad: $(cat "$tmp/bad.out")"
done
echo "ok   stop signal: --signal=B:TERM@120 on every array, @600 with SHOAL_SIGNAL_MARGIN=600, bad margins refused"

# Points in the queue (a squeue stand-in): not submitted twice. Tasks 0-9 of
# array 500 (points 0-1000) run or wait, with their report; other folders' jobs
# do not count.
mkdir -p "$tmp/queue"
cat >"$tmp/queue/squeue" <<EOF
#!/bin/sh
cat "$tmp/queue.txt"
EOF
chmod 755 "$tmp/queue/squeue"
{
  for task in $(seq 0 9); do
    printf '500\t%s\t%s\tshoal-sweep points=0-1000 results=%s\n' "$task" "$([ "$task" -lt 2 ] && echo RUNNING || echo PENDING)" "$tmp/results"
  done
  printf '501\tN/A\tPENDING\tshoal-report results=%s\n' "$tmp/results"
  printf '502\t0\tPENDING\tshoal-sweep points=10-20 results=%s/other\n' "$tmp"
  printf '503\tN/A\tRUNNING\t\n'
} >"$tmp/queue.txt"
PATH=$tmp/queue:$PATH "$src/slurm/submit-sweep" --dry-run "$tmp/big.toml" >"$tmp/queued.out" 2>&1 ||
  fail "submit-sweep --dry-run with a queue failed: $(cat "$tmp/queued.out")"
grep -q ' 2500 points, 0 done, 10 queued or running (in 500), 2490 to run;' "$tmp/queued.out" ||
  fail "queued points: $(grep '^submit-sweep: big' "$tmp/queued.out")"
: >"$tmp/covered"
while IFS='|' read -r _ _ points; do expand "$points" >>"$tmp/covered"; done < <(arrays_of "$tmp/queued.out")
if [ "$(sort -n "$tmp/covered" | uniq | wc -l)" != 2490 ] || [ "$(sort -n "$tmp/covered" | head -n 1)" != 10 ]; then
  fail "queued points: the arrays hold $(wc -l <"$tmp/covered") points from $(sort -n "$tmp/covered" | head -n 1)"
fi
dependency_of "$tmp/queued.out" | grep -q ':500$' || fail "the report does not wait for queued array 500: $(dependency_of "$tmp/queued.out")"
# Everything queued, and its report: nothing to submit at all.
{
  for task in $(seq 0 1000); do printf '600\t%s\tPENDING\tshoal-sweep points=0-1000 results=%s\n' "$task" "$tmp/results"; done
  for task in $(seq 0 1000); do printf '601\t%s\tPENDING\tshoal-sweep points=1001-2001 results=%s\n' "$task" "$tmp/results"; done
  for task in $(seq 0 497); do printf '602\t%s\tPENDING\tshoal-sweep points=2002-2499 results=%s\n' "$task" "$tmp/results"; done
  printf '603\tN/A\tPENDING\tshoal-report results=%s\n' "$tmp/results"
} >"$tmp/queue.txt"
PATH=$tmp/queue:$PATH "$src/slurm/submit-sweep" --dry-run "$tmp/big.toml" >"$tmp/all-queued.out" 2>&1 ||
  fail "submit-sweep --dry-run with everything queued failed: $(cat "$tmp/all-queued.out")"
if grep -q '^dry-run:' "$tmp/all-queued.out"; then fail "everything queued, yet: $(grep '^dry-run:' "$tmp/all-queued.out")"; fi
grep -q 'nothing new to submit: 2500 point(s) queued or running, their report 603 queued' "$tmp/all-queued.out" ||
  fail "everything queued: $(cat "$tmp/all-queued.out")"
echo "ok   queued points: tasks of queued arrays mapped to their points and left out, the report after them; all queued: nothing submitted"

# The job side: task I of an array runs the I-th point of its SHOAL_POINTS.
cat >"$tmp/stand-in" <<'EOF'
#!/bin/bash
echo "stand-in: $*"
EOF
chmod 755 "$tmp/stand-in"
while IFS='|' read -r _ _ points; do
  mapfile -t expected < <(expand "$points")
  for task in 0 1 $((${#expected[@]} - 1)); do
    got=$(env -u SLURM_JOB_ID SLURM_ARRAY_TASK_ID=$task "$src/slurm/sweep.sbatch" \
      SHOAL_BIN="$tmp/stand-in" SHOAL_LAUNCHER=none SHOAL_POINTS="$points" "$tmp/big.toml" |
      sed -n 's/^stand-in: sweep .* --point \([0-9]*\) .*/\1/p')
    [ "$got" = "${expected[task]}" ] || fail "task $task of SHOAL_POINTS=$points ran point '$got', not ${expected[task]}"
  done
done < <(arrays_of "$tmp/600.out")
if SLURM_ARRAY_TASK_ID=2 "$src/slurm/sweep.sbatch" SHOAL_BIN="$tmp/stand-in" SHOAL_LAUNCHER=none \
  SHOAL_POINTS=4-5 "$tmp/big.toml" >"$tmp/past.out" 2>&1; then
  fail "a task past the end of SHOAL_POINTS ran: $(cat "$tmp/past.out")"
fi
grep -q 'past the end of SHOAL_POINTS' "$tmp/past.out" || fail "task past the end: $(cat "$tmp/past.out")"
echo "ok   sweep.sbatch: task I runs the I-th point of SHOAL_POINTS (first, second and last of 6 arrays)"

# --ranks-from: shoal scale's table sizes every array (all 2,500 points at its
# recommended 4 ranks); a file that is not such a table is refused.
printf 'ranks,partition,lookahead_ps,windows,events,remote_events,batches,balance,work_s,reduce_s,exchange_s,loop_s,speedup,efficiency,sync_share,fewest_windows,recommended\n' >"$tmp/scale.csv"
printf '2,topology,1000000,10,100,5,4,0.9,1,0,0,1,1.8,0.9,0.1,8,0\n4,topology,1000000,10,100,9,8,0.8,1,0,0,0.6,3.2,0.8,0.2,9,1\n' >>"$tmp/scale.csv"
"$src/slurm/submit-sweep" --dry-run --ranks-from "$tmp/scale.csv" "$tmp/big.toml" >"$tmp/scaled.out" 2>&1 ||
  fail "submit-sweep --ranks-from failed: $(cat "$tmp/scaled.out")"
ntasks=$(arrays_of "$tmp/scaled.out" | cut -d'|' -f2 | sort -u)
points=$(arrays_of "$tmp/scaled.out" | while IFS='|' read -r _ _ p; do expand "$p"; done | sort -u | wc -l)
[ "$ntasks" = 4 ] && [ "$points" = 2500 ] ||
  fail "--ranks-from: arrays at ranks '$ntasks' for $points points, not 4 for 2500"
head -1 "$tmp/scale.csv" >"$tmp/none.csv"
if "$src/slurm/submit-sweep" --dry-run --ranks-from "$tmp/none.csv" "$tmp/big.toml" >"$tmp/none.out" 2>&1 ||
  ! grep -q 'one recommended row' "$tmp/none.out"; then
  fail "--ranks-from a table without a recommendation: $(cat "$tmp/none.out")"
fi
echo "ok   --ranks-from: every array at shoal scale's recommended 4 ranks; a table without one refused"
