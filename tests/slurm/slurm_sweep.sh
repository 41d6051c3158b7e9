#!/usr/bin/env bash
# Real-Slurm test of slurm/ (issues 7 and 34): starts a private one-node Slurm
# cluster on this machine (munged, slurmctld and slurmd on localhost,
# configured and kept in a temp folder, MaxArraySize=3), then
#   1. the stop signal: a 2-rank slurm/run.sbatch job under each launcher (srun,
#      mpirun) gets SIGTERM at its batch shell only (scancel --batch, as
#      --signal=B:TERM sends it); every rank must get it, shoal must stop with
#      completed = 0 and exit 3, and the job with it;
#   2. slurm/submit-sweep configs/sweeps/tiny.toml --hold: arrays of at most
#      MaxArraySize (the 4 points take two) and the report after them;
#      submit-sweep again while they wait must submit nothing, and once the
#      second array is cancelled, its point alone, then all run; every
#      point's HDF5 must hold /meta completed = 1, the report summary.csv and
#      PNG plots; beside it slurm/run.sbatch runs one simulation through the
#      other launcher; a sweep of two points of which one fails at run time (a
#      memory limit the resource guard refuses): its report must run all the
#      same (afterany), cover the other point and name the failure with its
#      log and exit status; and a sweep of one long point with --time=1 and
#      SHOAL_SIGNAL_MARGIN=25 must be stopped by the early signal (completed =
#      0, exit 3, listed partial; tests/slurm/submit_dry_run.sh checks the
#      margin submit-sweep asks for), and submit-sweep again while it is held,
#      then running, must submit nothing;
#   3. resume: submit-sweep again must find every point done and submit only the
#      report, and an array over points 1-3 must skip them (files untouched);
#      the failing sweep again must submit its failed point alone, and the long
#      one again must run its point to completion;
# every job under sbatch --export=NONE with a SHOAL_SLURM_SETUP hook, and shoal
# behind a wrapper that fails a rank whose environment lacks the hook's mark;
# and stops what it started (on success, failure or interruption), leaving the
# machine as it found it. It fails, never skips, when Slurm cannot run here.
#
#   tests/slurm/slurm_sweep.sh SHOAL_BIN SOURCE_DIR
#
# Needs root (slurmd runs jobs; SlurmUser=root) and the Debian packages
# slurm-wlm and munge (tools/install-deps installs them), /usr/bin/python3 with
# h5py. No systemd: the daemons run in the foreground as children of this
# script, with their own munge key and socket, free ports and state folders, so
# a Slurm or munge already on the machine is neither used nor disturbed.
#
# Environment: SHOAL_SLURM_LAUNCHER  srun (default) or mpirun, for the sweep
#              SHOAL_SLURM_TIMEOUT   seconds to wait for the jobs (default 300)
#              SHOAL_SLURM_KEEP=1    keep the temp folder (its path is printed)
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 SHOAL_BIN SOURCE_DIR" >&2
  exit 2
fi
shoal=$(readlink -f "$1")
src=$(readlink -f "$2")
launcher=${SHOAL_SLURM_LAUNCHER:-srun}
timeout_s=${SHOAL_SLURM_TIMEOUT:-300}
sweep=$src/configs/sweeps/tiny.toml
py=/usr/bin/python3
t0=$SECONDS

say() { echo "slurm_sweep: [$((SECONDS - t0))s] $*"; }
fail() {
  echo "slurm_sweep: FAIL: $*" >&2
  exit 1
}

# ---- what it needs: missing pieces are failures, not skips.
[ "$(id -u)" = 0 ] || fail "needs root (slurmd starts the jobs; SlurmUser=root)"
for c in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol scancel srun mpirun; do
  command -v "$c" >/dev/null || fail "$c not found (tools/install-deps installs slurm-wlm, munge, openmpi-bin)"
done
[ -x "$shoal" ] || fail "no shoal executable at $shoal"
[ -f "$sweep" ] || fail "no sweep file $sweep"
"$py" -c 'import h5py' 2>/dev/null || fail "$py has no h5py (python3-h5py)"
case $launcher in srun) other=mpirun ;; mpirun) other=srun ;; *) fail "SHOAL_SLURM_LAUNCHER: srun or mpirun" ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shoal-slurm.XXXXXX")
# munged wants every folder above its socket searchable by all.
chmod 755 "$tmp"
mkdir -p "$tmp"/{munge-key,state,spool,log,work,results,run}
chmod 755 "$tmp/log" "$tmp/work" "$tmp/results" "$tmp/run"
mkdir -m 755 "$tmp/munge"
chmod 700 "$tmp/munge-key"
pids=()        # the daemons, started here
ctld_up=0

# ---- clean-up: jobs first (their slurmstepd outlive slurmd), then the daemons,
# then anything still holding a file under $tmp (a stray job step), each by id.
dump_logs() {
  local f
  echo "---- daemon logs" >&2
  for f in "$tmp"/log/*; do
    [ -f "$f" ] || continue
    echo "== $f (last 60 lines)" >&2
    tail -n 60 "$f" >&2 || true
  done
  echo "---- job logs" >&2
  for f in "$tmp"/results/logs/* "$tmp"/run/*.log "$tmp"/long/logs/* "$tmp"/fail/logs/* "$tmp"/stop-*/*.log; do
    [ -f "$f" ] || continue
    echo "== $f" >&2
    tail -n 40 "$f" >&2 || true
  done
  if [ "$ctld_up" = 1 ]; then
    echo "---- jobs and node" >&2
    squeue >&2 || true
    scontrol -o show jobs >&2 || true
    scontrol show node >&2 || true
  fi
}
stop_pid() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  echo "slurm_sweep: killed $pid after 10 s" >&2
}
holders() {
  # Processes with their cwd or an open file under $tmp, except this script.
  local p link
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = $$ ] && continue
    for link in "$p"/cwd "$p"/fd/*; do
      case $(readlink "$link" 2>/dev/null) in
        "$tmp" | "$tmp"/*) echo "${p#/proc/}"; break ;;
      esac
    done
  done
}
cleanup() {
  local status=$? i pid
  trap - EXIT INT TERM HUP
  trap '' PIPE # a closed stdout must not stop the clean-up half way
  set +e
  if [ "$status" -ne 0 ]; then dump_logs; fi
  cd / # this script's own children must not count as holders of $tmp
  if [ "$ctld_up" = 1 ]; then
    scancel --quiet --user=root 2>/dev/null
    for i in $(seq 30); do
      [ -z "$(squeue -h 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_pid "${pids[i]}"; done
  for pid in $(holders); do
    echo "slurm_sweep: stopping leftover process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null))" >&2
    stop_pid "$pid"
  done
  if [ "${SHOAL_SLURM_KEEP:-0}" = 1 ]; then
    echo "slurm_sweep: kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
  if [ "$status" -eq 0 ]; then say "passed"; else echo "slurm_sweep: FAILED (status $status)" >&2; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE # e.g. piped into head: clean up all the same

# ---- the sweep's points decide how many CPUs the node must offer.
listing=$("$shoal" --quiet sweep "$sweep" --list --results "$tmp/results") ||
  fail "shoal sweep --list failed"
points=$(grep -vc '^#' <<<"$listing" || true)
max_ranks=$(grep -v '^#' <<<"$listing" | awk 'BEGIN { m = 1 } $4 > m { m = $4 } END { print m }')
[ "$points" -gt 0 ] || fail "no points in $sweep"

# ---- the node as slurmd sees it; CPUs raised to the widest point if need be
# (then slurmd must take the configured count over the real one).
node=$(hostname -s)
hw=$(slurmd -C) || fail "slurmd -C failed"
cpus=$(grep -o 'CPUs=[0-9]*' <<<"$hw" | head -1 | cut -d= -f2)
mem=$(grep -o 'RealMemory=[0-9]*' <<<"$hw" | head -1 | cut -d= -f2)
{ [ -n "$cpus" ] && [ -n "$mem" ]; } || fail "cannot read CPUs and RealMemory from: $hw"
overrides=
if [ "$max_ranks" -gt "$cpus" ]; then
  cpus=$max_ranks
  overrides="SlurmdParameters=config_overrides"
fi
read -r ctld_port slurmd_port < <("$py" -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')

# ---- munge: a fresh key and a private socket.
mungekey --create --keyfile="$tmp/munge-key/munge.key" --bits=1024 2>/dev/null ||
  dd if=/dev/urandom of="$tmp/munge-key/munge.key" bs=1 count=1024 status=none
chmod 400 "$tmp/munge-key/munge.key"
socket=$tmp/munge/munge.socket
munged --foreground --socket="$socket" --key-file="$tmp/munge-key/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge-key/munged.seed" \
  --log-file="$tmp/log/munged.log" >"$tmp/log/munged.out" 2>&1 &
pids+=("$!")
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || fail "munged did not start"
munge -S "$socket" -n | unmunge -S "$socket" >/dev/null || fail "munge round trip failed"

# ---- slurm.conf: one node, no cgroups (a container has none to give), root.
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
# Generated by tests/slurm/slurm_sweep.sh for one test run.
ClusterName=shoaltest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
# Finished jobs stay visible to scontrol for the checks.
MinJobAge=3600
# Start queued batch jobs at once rather than batched every 3 s: a quicker test.
SchedulerParameters=batch_sched_delay=0
# Array indices 0-2 only: submit-sweep must split tiny.toml's 4 points into two
# arrays, reading the limit from scontrol show config.
MaxArraySize=3
KillWait=5
$overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

say "starting slurmctld and slurmd ($node: CPUs=$cpus RealMemory=$mem, ports $ctld_port/$slurmd_port) in $tmp"
ctld_start=$SECONDS # slurmctld checks time limits 30 s after this, then every 30 s
slurmctld -D -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
pids+=("$!")
ctld_up=1
slurmd -D -f "$SLURM_CONF" -N "$node" >"$tmp/log/slurmd.out" 2>&1 &
pids+=("$!")
state=
for _ in $(seq 120); do
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a daemon exited (pid $pid)"; done
  sleep 0.5
done
[ "$state" = idle ] || fail "node $node not idle after 60 s (state: ${state:-none})"
say "node $node idle"

# ---- the jobs run under sbatch --export=NONE: nothing of this shell's
# environment reaches them. submit-sweep reads its settings from here and
# passes them on as NAME=VALUE words; the site hook sets up the rest, and a
# wrapper around shoal fails every rank whose environment lacks the hook's mark.
# The wrapper is what the launcher starts as a rank: it notes every SIGTERM it
# gets in signals/JOBID.log and passes it on to shoal, its child.
cat >"$tmp/setup.sh" <<'EOF'
# The site hook of the test (SHOAL_SLURM_SETUP): what `module load` would do.
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 # one node: shared memory only
export SHOAL_TEST_SETUP=1
echo "site setup: sourced (SHOAL_TEST_SETUP=1)"
EOF
mkdir -p "$tmp/bin" "$tmp/signals"
cat >"$tmp/bin/shoal" <<EOF
#!/bin/bash
# shoal, in a job only where the site hook's environment reached this process.
if [ -n "\${SLURM_JOB_ID:-}" ] && [ "\${SHOAL_TEST_SETUP:-}" != 1 ]; then
  echo "shoal wrapper: job \$SLURM_JOB_ID: SHOAL_TEST_SETUP unset, the hook's environment is missing" >&2
  exit 97
fi
rank=\${OMPI_COMM_WORLD_RANK:-\${PMIX_RANK:-\${SLURM_PROCID:-0}}}
child=
trap 'echo "rank \$rank: SIGTERM" >>"$tmp/signals/\${SLURM_JOB_ID:-none}.log"; kill -TERM \$child 2>/dev/null' TERM
"$shoal" "\$@" &
child=\$!
while kill -0 \$child 2>/dev/null; do wait \$child; done
wait \$child
EOF
chmod 755 "$tmp/bin/shoal"
export SHOAL_BIN=$tmp/bin/shoal SHOAL_HOME=$src SHOAL_RESULTS=$tmp/results SHOAL_LAUNCHER=$launcher
export SHOAL_SLURM_SETUP=$tmp/setup.sh SHOAL_ARRAY_THROTTLE=2
cd "$tmp/work"

wait_jobs() {
  local start=$SECONDS
  while [ -n "$(squeue -h)" ]; do
    ((SECONDS - start < timeout_s)) || fail "jobs still queued or running after $timeout_s s"
    sleep 1
  done
}
# Every job (every task of an array) must have COMPLETED with exit code 0.
check_jobs() {
  local id line
  for id in "$@"; do
    line=$(scontrol -o show job "$id") || fail "job $id unknown to slurmctld"
    while read -r line; do
      [[ $line == *" JobState=COMPLETED "* && $line == *" ExitCode=0:0 "* ]] ||
        fail "job $id did not complete: $(grep -o 'JobId=[^ ]*\|JobState=[^ ]*\|ExitCode=[^ ]*\|Reason=[^ ]*' <<<"$line" | tr '\n' ' ')"
    done <<<"$(scontrol -o show job "$id")"
  done
}
# file -> "completed" attribute of /meta, one per line ("missing" when no file).
completed() {
  "$py" - "$@" <<'EOF'
import os, sys, h5py
for p in sys.argv[1:]:
    if not os.path.exists(p):
        print(p, "missing")
        continue
    with h5py.File(p, "r") as f:
        print(p, int(f["meta"].attrs.get("completed", -1)) if "meta" in f else "no-meta")
EOF
}
sweep_files() { "$shoal" --quiet sweep "$sweep" --list --results "$tmp/results" | awk '!/^#/ { print $6 }'; }

wait_job() {
  local start=$SECONDS
  while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do
    ((SECONDS - start < timeout_s)) || fail "job $1 still queued or running after $timeout_s s"
    sleep 0.2
  done
}
# "JobState=X ExitCode=Y" of a job or an array task (ARRAY_TASK).
state() { scontrol -o show job "$1" | grep -o 'JobState=[^ ]* .*ExitCode=[^ ]*' | awk '{ print $1, $NF }'; }

# ---- the time limit, set up first: a sweep of one long point to be stopped
# by its time limit, the least Slurm allows (1 minute), with
# SHOAL_SIGNAL_MARGIN=25. slurmctld checks time limits every 30 s from 30 s
# after it starts, and sends the early signal at the first check from
# 60 - 25 - 30 = 5 s into the job on. The job is held, released 17 s after
# slurmctld started (first in the queue, it starts at once), and the check
# 30 s after slurmctld's start signals it 10-15 s in, while the point runs
# (12 iterations of about 2.8 s on one rank of the 2-core machine of
# 2026-12-02: it still runs on a machine twice as fast).
cat >"$tmp/long.toml" <<EOF
# One point of 12 iterations.
[sweep]
base = "$src/configs/sweeps/tiny-base.toml"
ranks = 1
[set]
job.micro_batches = 8
job.micro_batch_tokens = 4096
[axes]
job.iterations = [12]
EOF
long_list() { "$shoal" --quiet sweep "$tmp/long.toml" --list --results "$tmp/long"; }
long_h5=$(long_list | awk '!/^#/ { print $6 }')
out=$(SHOAL_RESULTS=$tmp/long SHOAL_SIGNAL_MARGIN=25 "$src/slurm/submit-sweep" "$tmp/long.toml" \
  --time=1 --export=NONE --hold) || fail "submit-sweep $tmp/long.toml failed: $out"
echo "$out"
long_array=$(awk '/^[0-9]+ sweep array/ { print $1 }' <<<"$out")
[ -n "$long_array" ] || fail "submit-sweep submitted no array for $tmp/long.toml"
long_ids=$(awk '$1 ~ /^[0-9]+$/ { print $1 }' <<<"$out")
long_report=$(awk '/^[0-9]+ report/ { print $1 }' <<<"$out")
# submit-sweep again while the point is queued (held) or running: nothing twice.
again_long() {
  local out
  out=$(SHOAL_RESULTS=$tmp/long SHOAL_SIGNAL_MARGIN=25 "$src/slurm/submit-sweep" "$tmp/long.toml" \
    --time=1 --export=NONE) || fail "submit-sweep $tmp/long.toml again failed: $out"
  echo "$out"
  if grep -q '^[0-9]' <<<"$out"; then fail "submit-sweep again while the point is $1 submitted: $out"; fi
  grep -q "nothing new to submit: 1 point(s) queued or running, their report $long_report queued" <<<"$out" ||
    fail "submit-sweep again while the point is $1: $out"
}
again_long queued

# ---- 1. the stop signal reaches every rank under each launcher. Slurm's early
# signal (--signal=B:TERM@SECONDS) goes to the batch shell alone, which must
# pass it on; scancel --batch --signal=TERM sends the same, at a known moment
# here: once shoal runs (its file exists, as NAME.h5.partial until it ends).
# Every rank (the wrapper) must get SIGTERM, shoal must say it stopped by it,
# keep its file with completed = 0 and exit 3, and the job with it. Both
# CPUs, before the long point is released.
four=(--set job.micro_batches=8 --set job.micro_batch_tokens=4096 --set job.iterations=4)
for l in srun mpirun; do
  dir=$tmp/stop-$l
  mkdir -p "$dir"
  id=$(sbatch --parsable --export=NONE --ntasks=2 --output="$dir/run-%j.log" "$src/slurm/run.sbatch" \
    SHOAL_LAUNCHER="$l" SHOAL_RESULTS="$dir" SHOAL_BIN="$SHOAL_BIN" SHOAL_SLURM_SETUP="$SHOAL_SLURM_SETUP" \
    "$src/configs/sweeps/tiny-base.toml" "${four[@]}") || fail "sbatch slurm/run.sbatch ($l) failed"
  h5=$dir/tiny-base.h5
  start=$SECONDS
  until [ -f "$h5.partial" ]; do
    ((SECONDS - start < timeout_s)) || fail "$l: no $h5.partial after $timeout_s s"
    [ -n "$(squeue -h -j "$id" 2>/dev/null)" ] || fail "$l: job $id ended before shoal wrote $h5.partial"
    sleep 0.2
  done
  sent=$(date +%s.%N)
  scancel --batch --signal=TERM "$id" || fail "scancel --batch --signal=TERM $id failed"
  wait_job "$id"
  took=$("$py" -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$sent")
  [ "$(state "$id")" = "JobState=FAILED ExitCode=3:0" ] || fail "$l: job $id: $(state "$id") (expected FAILED, 3:0)"
  log=$(cat "$dir"/run-"$id".log)
  grep -q '^shoal: stopped by SIGTERM' <<<"$log" || fail "$l: shoal did not stop by SIGTERM: $log"
  grep -q '^run.sbatch: exit status 3$' <<<"$log" || fail "$l: run.sbatch did not exit 3: $log"
  grep -q 'exit status 3$' "$dir/job.txt" || fail "$l: job.txt: $(cat "$dir/job.txt")"
  for r in 0 1; do
    grep -q "^rank $r: SIGTERM$" "$tmp/signals/$id.log" 2>/dev/null ||
      fail "$l: rank $r got no SIGTERM ($(cat "$tmp/signals/$id.log" 2>/dev/null))"
  done
  read -r _ c < <(completed "$h5")
  [ "$c" = 0 ] || fail "$l: $h5: completed = $c, expected 0"
  say "SIGTERM to the batch shell, $l: both ranks got it, shoal stopped, completed = 0, exit 3, ${took} s after the signal"
done

while ((SECONDS - ctld_start < 17)); do sleep 0.2; done
# shellcheck disable=SC2086  # the ids, one word each
scontrol release $long_ids || fail "scontrol release $long_ids failed"
until [ "$(squeue -h -j "$long_array" -o %T 2>/dev/null)" = RUNNING ]; do
  ((SECONDS - ctld_start < timeout_s)) || fail "the long point did not start"
  sleep 0.2
done
say "the long point runs, $((SECONDS - ctld_start)) s after slurmctld started"
again_long running
say "submit-sweep again while the long point was queued, then running: nothing submitted"

# ---- 2. beside it: the sweep, one run.sbatch job through the other launcher,
# and a sweep with a point that fails at run time (the resource guard refuses
# a 1 MiB memory limit, exit 1, although --check passes).
# The sweep goes in held, so that it waits in the queue: a second
# submit-sweep then submits nothing, and after one of its arrays is
# cancelled, that array's points alone.
say "submitting $sweep ($points points, up to $max_ranks ranks, launcher $launcher)"
out=$("$src/slurm/submit-sweep" "$sweep" --export=NONE --hold) || fail "submit-sweep failed: $out"
echo "$out"
mapfile -t first_arrays < <(awk '/^[0-9]+ sweep array/ { print $1 }' <<<"$out")
first_report=$(awk '/^[0-9]+ report/ { print $1 }' <<<"$out")
[ -n "$first_report" ] || fail "submit-sweep did not submit a report"
max_array=$(scontrol show config | awk '$1 == "MaxArraySize" { print $3 }')
[ "${#first_arrays[@]}" = $(((points + max_array - 1) / max_array)) ] ||
  fail "submit-sweep submitted ${#first_arrays[@]} arrays for $points points of $max_ranks rank(s) under MaxArraySize=$max_array"
out=$("$src/slurm/submit-sweep" "$sweep" --export=NONE --hold) || fail "second submit-sweep failed: $out"
echo "$out"
if grep -q '^[0-9]' <<<"$out"; then fail "second submit-sweep while the sweep is queued submitted: $out"; fi
grep -q "nothing new to submit: $points point(s) queued or running, their report $first_report queued" <<<"$out" ||
  fail "second submit-sweep while the sweep is queued: $out"
# Its last array (point 3) cancelled while it waits: submitted again alone,
# with a report after it and the first array.
scancel "${first_arrays[1]}" || fail "scancel ${first_arrays[1]} failed"
wait_job "${first_arrays[1]}"
out=$("$src/slurm/submit-sweep" "$sweep" --export=NONE) || fail "third submit-sweep failed: $out"
echo "$out"
if ! grep -q "^[0-9]* sweep array: 1 point(s) at 1 rank(s): $((points - 1))\$" <<<"$out" ||
  [ "$(grep -c '^[0-9]* sweep array' <<<"$out")" != 1 ]; then
  fail "after cancelling point $((points - 1)), submit-sweep did not submit it alone: $out"
fi
last_array=$(awk '/^[0-9]+ sweep array/ { print $1 }' <<<"$out")
grep -q "^[0-9]* report: after $last_array ${first_arrays[0]}\$" <<<"$out" ||
  fail "the new report does not wait for the new array and the queued one: $out"
# shellcheck disable=SC2086  # the ids, one word each
scontrol release ${first_arrays[0]} "$first_report" || fail "scontrol release failed"
ids="${first_arrays[0]} $first_report $(awk '$1 ~ /^[0-9]+$/ { print $1 }' <<<"$out" | paste -sd ' ')"
say "submit-sweep again: nothing while all $points points were queued; point $((points - 1)) alone once its array was cancelled"
# By hand under --export=NONE: the settings as words before the config.
run_id=$(sbatch --parsable --export=NONE --ntasks=2 --output="$tmp/run/run-%j.log" \
  "$src/slurm/run.sbatch" SHOAL_LAUNCHER="$other" SHOAL_RESULTS="$tmp/run" SHOAL_BIN="$SHOAL_BIN" \
  SHOAL_SLURM_SETUP="$SHOAL_SLURM_SETUP" "$src/configs/examples/figure-a.toml") ||
  fail "sbatch slurm/run.sbatch failed"
cat >"$tmp/fail.toml" <<EOF
[sweep]
base = "$src/configs/sweeps/tiny-base.toml"
ranks = 1
[axes]
run.memory_limit = ["8GiB", "1MiB"]
EOF
out=$(SHOAL_RESULTS=$tmp/fail "$src/slurm/submit-sweep" "$tmp/fail.toml" --export=NONE) ||
  fail "submit-sweep $tmp/fail.toml failed: $out"
echo "$out"
fail_array=$(awk '/^[0-9]+ sweep array/ { print $1 }' <<<"$out")
fail_report=$(awk '/^[0-9]+ report/ { print $1 }' <<<"$out")
wait_jobs
# shellcheck disable=SC2086  # the ids, one word each
check_jobs $ids "$run_id"
say "all jobs completed: $ids (sweep) $run_id (run.sbatch via $other)"

mapfile -t files < <(sweep_files)
[ "${#files[@]}" = "$points" ] || fail "--list names ${#files[@]} files, expected $points"
while read -r f c; do
  [ "$c" = 1 ] || fail "$f: completed = $c"
done < <(completed "${files[@]}" "$tmp/run/figure-a.h5")
grep -q "ranks: 2 ($other)" "$tmp/run/job.txt" || fail "run.sbatch's job.txt: $(cat "$tmp/run/job.txt")"
[ -s "$tmp/results/report/summary.csv" ] || fail "no report summary.csv"
[ "$(wc -l <"$tmp/results/report/summary.csv")" -ge 2 ] || fail "summary.csv has no rows"
pngs=$(find "$tmp/results/report" -name '*.png' | wc -l)
[ "$pngs" -ge 1 ] || fail "no PNG plot in the report"
logs=$(find "$tmp/results/logs" -name 'sweep-*.log' | wc -l)
[ "$logs" = "$points" ] || fail "$logs per-point logs, expected $points"
for f in "$tmp"/results/logs/*.log "$tmp"/run/run-*.log "$tmp"/long/logs/*.log "$tmp"/fail/logs/*.log \
  "$tmp"/stop-*/run-*.log; do
  grep -q '^site setup: sourced' "$f" || fail "$f: the job did not source SHOAL_SLURM_SETUP"
done
"$shoal" --quiet sweep "$sweep" --list --results "$tmp/results" | awk '!/^#/ && $5 != "done" { bad = 1 } END { exit bad }' ||
  fail "shoal sweep --list does not report every point done"
say "$points points completed = 1, report with summary.csv and $pngs PNG(s), $logs point logs"

# The failed point: its task failed, the report ran all the same and names it.
[ "$(state "${fail_array}_0")" = "JobState=COMPLETED ExitCode=0:0" ] || fail "failing sweep, point 0: $(state "${fail_array}_0")"
[ "$(state "${fail_array}_1")" = "JobState=FAILED ExitCode=1:0" ] || fail "failing sweep, point 1: $(state "${fail_array}_1")"
[ "$(state "$fail_report")" = "JobState=COMPLETED ExitCode=0:0" ] ||
  fail "failing sweep: the report did not run after the failure: $(state "$fail_report")"
fail_log=$tmp/fail/logs/report-$fail_report.log
grep -q "^report.sbatch:   point 1 memory-limit-1MiB: todo; log $tmp/fail/logs/sweep-${fail_array}_1.log, exit status 1$" \
  "$fail_log" || fail "the report does not name the failed point: $(cat "$fail_log")"
grep -q "^1	memory-limit-1MiB	todo	" "$tmp/fail/report/unfinished.txt" ||
  fail "no failed point in unfinished.txt: $(cat "$tmp/fail/report/unfinished.txt" 2>&1)"
[ "$(wc -l <"$tmp/fail/report/summary.csv")" = 2 ] || fail "the report does not cover the point that finished"
say "failing sweep: point 1 failed (exit 1), the report ran (afterany), covers point 0 and names point 1"

# The long point: stopped by the early signal, its file kept with completed = 0.
[ "$(state "$long_array")" = "JobState=FAILED ExitCode=3:0" ] ||
  fail "time limit: job $long_array: $(state "$long_array") (expected FAILED, 3:0)"
log=$(cat "$tmp"/long/logs/sweep-"$long_array"_0.log)
grep -q '^shoal: stopped by SIGTERM' <<<"$log" || fail "time limit: shoal did not stop by SIGTERM: $log"
grep -q '^sweep.sbatch: point 0 exit status 3,' <<<"$log" || fail "time limit: not exit status 3: $log"
grep -q '^rank 0: SIGTERM$' "$tmp/signals/$long_array.log" || fail "time limit: rank 0 got no SIGTERM"
read -r _ c < <(completed "$long_h5")
[ "$c" = 0 ] || fail "time limit: $long_h5: completed = $c, expected 0"
[ "$(long_list | awk '!/^#/ { print $5 }')" = partial ] || fail "time limit: the point is not partial: $(long_list)"
# Seconds into the job: from the script's first line to the signal.
started=$(sed -n 's/^sweep.sbatch: point 0 of .*, \([^ ]*\)$/\1/p' <<<"$log")
signalled=$(sed -n 's/^sweep.sbatch: SIGTERM at \([^ ]*\): .*/\1/p' <<<"$log")
say "time limit: the point stopped by SIGTERM $(($(date -d "$signalled" +%s) - $(date -d "$started" +%s))) s" \
  "into its job (--time=1, margin 25 s), completed = 0, exit 3, listed partial"

# ---- 3. resume: nothing left to run, and a point run again skips itself.
# Meanwhile the failed point alone is submitted again (it fails again), and
# the long point resumes: submitted again, it reruns and completes.
out=$(SHOAL_RESULTS=$tmp/fail "$src/slurm/submit-sweep" "$tmp/fail.toml" --export=NONE) ||
  fail "second submit-sweep $tmp/fail.toml failed: $out"
echo "$out"
grep -q ' 2 points, 1 done, 1 to run;' <<<"$out" || fail "second submit-sweep $tmp/fail.toml: not 1 point to run"
[ "$(grep -c '^[0-9]* sweep array: 1 point(s) at 1 rank(s): 1$' <<<"$out")" = 1 ] ||
  fail "second submit-sweep $tmp/fail.toml did not submit point 1 alone"
fail_again=$(awk '/^[0-9]+ sweep array/ { print $1 }' <<<"$out")
out=$(SHOAL_RESULTS=$tmp/long "$src/slurm/submit-sweep" "$tmp/long.toml" --export=NONE) ||
  fail "second submit-sweep $tmp/long.toml failed: $out"
echo "$out"
grep -q '1 points, 0 done, 1 to run' <<<"$out" || fail "the stopped point was not resubmitted"
long_again=$(awk '/^[0-9]+ sweep array/ { print $1 }' <<<"$out")
stamps() { stat -c '%n %i %Y %s' "${files[@]}"; }
before=$(stamps)
out=$("$src/slurm/submit-sweep" "$sweep") || fail "second submit-sweep failed: $out"
echo "$out"
grep -q "nothing to run" <<<"$out" || fail "second submit-sweep did not find every point done"
[ "$(grep -c '^[0-9]* sweep array' <<<"$out" || true)" = 0 ] || fail "second submit-sweep submitted arrays"
ids=$(awk '$1 ~ /^[0-9]+$/ { print $1 }' <<<"$out")
# Tasks 0-2 for points 1-3 (SHOAL_POINTS): the indices stay below MaxArraySize.
again=$(sbatch --parsable --array="0-$((points - 2))" --ntasks=1 --export=NONE \
  --output="$tmp/results/logs/again-%A_%a.log" "$src/slurm/sweep.sbatch" SHOAL_BIN="$SHOAL_BIN" \
  SHOAL_RESULTS="$SHOAL_RESULTS" SHOAL_SLURM_SETUP="$SHOAL_SLURM_SETUP" \
  SHOAL_POINTS="1-$((points - 1))" "$sweep") ||
  fail "sbatch slurm/sweep.sbatch over points 1-$((points - 1)) failed"
wait_jobs
# shellcheck disable=SC2086
check_jobs $ids "$again"
[ "$(stamps)" = "$before" ] || fail "a completed point's file changed on resubmission"
for ((p = 1; p < points; p++)); do
  grep -q "^sweep.sbatch: point $p of " "$tmp"/results/logs/again-*.log ||
    fail "no task of array $again ran point $p"
done
say "resume: no point resubmitted, $((points - 1)) re-run point(s) skipped, files untouched"
grep -q '^sweep.sbatch: point 1 exit status 1,' "$tmp/fail/logs/sweep-${fail_again}_0.log" ||
  fail "the resubmitted array did not run point 1: $(cat "$tmp/fail/logs/sweep-${fail_again}_0.log")"
say "failing sweep: submitted again, only point 1 ran (and failed again)"
check_jobs "$long_again"
read -r _ c < <(completed "$long_h5")
[ "$c" = 1 ] || fail "time limit: resubmitted, $long_h5 has completed = $c"
[ "$(long_list | awk '!/^#/ { print $5 }')" = "done" ] || fail "the resumed point is not done: $(long_list)"
say "time limit: the stopped point, resubmitted, ran again and completed"
