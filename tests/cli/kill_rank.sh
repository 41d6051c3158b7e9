#!/usr/bin/env bash
# A fatal signal on one rank of a 4-rank run brings every rank down within
# seconds, with a message naming it, and the output flushed so far stays
# readable (docs/reliability.md): SIGSEGV on rank 2 (shoal's handler names the
# rank and the signal), then SIGKILL on rank 1 (the launcher names it).
# Usage: kill_rank.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
py=/usr/bin/python3
rm -rf "$dir"
mkdir -p "$dir"
# A run of a minute or more: the 64-GPU Qwen job with 4 KiB cells.
sed -e "s|^job = .*|job = \"$src/jobs/qwen1.5-moe-a2.7b.toml\"|" -e 's/^cell_size = .*/cell_size = "4KiB"/' \
  "$src/configs/examples/qwen-64.toml" >"$dir/long.toml"
failures=0
# kill_one SIGNAL RANK EXPECTED_MESSAGE
kill_one() {
  local signal=$1 rank=$2 expected=$3 tag=$1
  local out=$dir/$tag.h5
  "$mpirun" -np 4 "$shoal" run "$dir/long.toml" -o "$out" --progress-interval 1 \
    >"$dir/$tag.out" 2>"$dir/$tag.err" &
  local launcher=$!
  # Wait until the ranks simulate (a progress line), then find rank $rank's process.
  for _ in $(seq 1 600); do
    grep -q "progress: simulated" "$dir/$tag.err" && break
    sleep 0.1
  done
  local pids victim=""
  pids=$(pgrep -f "$shoal run $dir/long.toml -o $out" | sort -n || true)
  for pid in $pids; do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$rank"; then
      victim=$pid
    fi
  done
  if [ -z "$victim" ]; then
    echo "FAIL $signal: rank $rank's process not found among: $pids"
    kill -KILL $pids 2>/dev/null || true
    failures=$((failures + 1))
    return
  fi
  local start=$SECONDS
  kill "-$signal" "$victim"
  local status=0
  # mpirun must be gone within 30 s (a hang would wait forever in a collective).
  for _ in $(seq 1 300); do
    kill -0 "$launcher" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$launcher" 2>/dev/null; then
    echo "FAIL $signal: the other ranks still run 30 s after rank $rank died"
    kill -KILL $pids 2>/dev/null || true
    failures=$((failures + 1))
    wait "$launcher" || true
    return
  fi
  wait "$launcher" || status=$?
  # The launcher may return while the last ranks are still being torn down.
  local left
  for _ in $(seq 1 100); do
    left=$(for pid in $pids; do kill -0 "$pid" 2>/dev/null && echo "$pid"; done || true)
    [ -z "$left" ] && break
    sleep 0.1
  done
  local took=$((SECONDS - start))
  if [ "$status" = 0 ] || [ -n "$left" ] || ! grep -q -- "$expected" "$dir/$tag.err"; then
    echo "FAIL $signal on rank $rank: exit $status, processes left: ${left:-none}"
    kill -KILL $left 2>/dev/null || true
    tail -5 "$dir/$tag.err"
    failures=$((failures + 1))
    return
  fi
  echo "ok   $signal on rank $rank: all 4 ranks down in ${took} s, exit $status: $(grep -m1 -- "$expected" "$dir/$tag.err" | sed 's/^ *//')"
  # What was flushed before the failure stays readable (HDF5 flushes every 256 windows).
  if "$py" - "$out.partial" <<'PY'; then
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    print("ok   %s opens: flows %d rows, compute %d rows so far" % (sys.argv[1].rsplit("/", 1)[1], len(f["flows"]), len(f["compute"])))
PY
    :
  else
    echo "FAIL the partial output file does not open"
    failures=$((failures + 1))
  fi
}
kill_one SEGV 2 "shoal: rank 2: fatal signal SIGSEGV"
kill_one KILL 1 "exited on signal 9"
if [ "$failures" -gt 0 ]; then
  echo "kill_rank: $failures failure(s)"
  exit 1
fi
echo "kill_rank: all checks passed"
