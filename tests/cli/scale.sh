#!/usr/bin/env bash
# `shoal scale` (docs/scaling.md) against real runs:
# - at N = 1 it reports the one-rank run's events exactly;
# - for each N its per-part events sum to the total, and what the parts send
#   to each other sums to what they receive and to the events across parts;
# - at 2, 3, 4 and 8 ranks (oversubscribed; counts only) its windows, balance and
#   events across ranks are those the real run reports, for a fabric job
#   under the topology and weighted partitions and for a training job, to
#   within 0.5%: a credit crossing ranks is added at the window's end, not
#   when sent, which changes whether a few later cells go as events
#   (docs/scaling.md);
# - `shoal mpi-costs` at 2 ranks writes a cost file that scale reads back;
# - under mpirun -np 2 every rank times the run at once, and the counts stay;
# - bad --ranks lists (on one rank and on two), bad cost files and
#   mpi-costs on one rank: one error line, exit 1.
# Usage: scale.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
rm -rf "$dir"
mkdir -p "$dir"
cp "$src/configs/examples/fat-tree-64.toml" "$src/configs/examples/fat-tree-64-workload.toml" "$dir/"
cd "$dir"
failures=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; failures=$((failures + 1)); }

# The real runs' counts: "windows W, balance B%, events across ranks R (...)".
real_counts() {
  grep -oE 'windows [0-9]+, balance [0-9.]+%, events across ranks [0-9]+' "$1" |
    awk '{gsub(/[,%]/, ""); print $2, $4, $8}'
}
# scale's: ranks windows balance(%, one decimal) remote_events, from its CSV.
scale_counts() {
  awk -F, -v n="$2" 'NR > 1 && $1 == n {printf "%s %.1f %s\n", $4, 100 * $8, $6}' "$1"
}

check_config() {  # NAME CONFIG [shoal options...]
  local name=$1 config=$2
  shift 2
  "$shoal" scale "$config" --ranks 1,2,3,4,8 --network "$src/configs/scale/shm.toml" \
    -o "$name-scale.csv" --parts "$name-parts.csv" "$@" >"$name-scale.log"
  "$shoal" run "$config" --quiet "$@" >"$name-one.log"
  local events
  events=$(grep -oE 'events [0-9]+' "$name-one.log" | head -1 | awk '{print $2}')
  if [ "$(awk -F, 'NR > 1 && $1 == 1 {print $5}' "$name-scale.csv")" = "$events" ]; then
    ok "$name: N = 1 has the one-rank run's $events events"
  else
    bad "$name: N = 1 events differ from the run's $events: $(grep '^ *1 ' "$name-scale.log")"
  fi
  if awk -F, -v want="$events" '
      NR == FNR { if (FNR > 1) remote[$1] = $6; next }
      FNR > 1 { e[$1] += $3; s[$1] += $4; r[$1] += $5 }
      END { for (n in e) if (e[n] != want || s[n] != r[n] || s[n] != remote[n]) exit 1 }
    ' "$name-scale.csv" "$name-parts.csv"; then
    ok "$name: per-part events sum to $events; sent = received = events across parts"
  else
    bad "$name: per-part counts do not add up"
  fi
  # The fewest windows a perfect lookahead could give: counted (the run is in
  # time order), at least one, and no more than the lookahead's.
  if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      $1 > 1 { f = $col["fewest_windows"]; if (f < 1 || f > $col["windows"]) exit 1; n++ }
      END { exit n == 0 }' "$name-scale.csv"; then
    ok "$name: the fewest windows are counted and within the lookahead's"
  else
    bad "$name: fewest_windows missing or out of range: $(cat "$name-scale.csv")"
  fi
  # Without windows the busiest rank waits no longer than window by window,
  # and waiting only for what reaches it, no longer than for what could or
  # than in the fewest windows.
  if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      $1 > 1 { c = $col["causal_work_s"]; p = $col["critical_path_s"]; f = $col["fewest_work_s"]
               if (p <= 0 || p > c + 1e-6 || c > $col["work_s"] + 1e-6 || p > f + 1e-6) exit 1
               n++ }
      END { exit n == 0 }' "$name-scale.csv"; then
    ok "$name: the bounds without windows are counted and ordered"
  else
    bad "$name: fewest_work_s, causal_work_s or critical_path_s missing or out of range: $(cat "$name-scale.csv")"
  fi
  for n in 2 3 4 8; do
    "$mpirun" -np $n "$shoal" run "$config" --quiet "$@" >"$name-$n.log" 2>&1
    local real predicted
    real=$(real_counts "$name-$n.log")
    predicted=$(scale_counts "$name-scale.csv" $n)
    if [ -n "$real" ] && awk -v r="$real" -v p="$predicted" 'BEGIN {
        split(r, a, " "); split(p, b, " ")
        close_enough = a[3] > 0 && b[3] > 0 && a[2] < 100 &&
          (a[1] - b[1]) ^ 2 <= (0.005 * a[1]) ^ 2 && (a[2] - b[2]) ^ 2 <= 0.25 &&
          (a[3] - b[3]) ^ 2 <= (0.005 * a[3]) ^ 2
        exit !close_enough }'; then
      ok "$name at $n ranks: windows, balance %, events across ranks $predicted; the run $real"
    else
      bad "$name at $n ranks: scale predicted '$predicted', the run had '$real'"
    fi
  done
}

check_config fabric fat-tree-64.toml
check_config weighted fat-tree-64.toml --set 'run.partition="weighted"'
check_config training "$src/configs/examples/qwen-64.toml" --set run.end=20ms

# Under mpirun every rank times the run at once; the counts are the same.
"$mpirun" -np 2 "$shoal" scale fat-tree-64.toml --ranks 1,2,3,4,8 --network "$src/configs/scale/shm.toml" \
  -o loaded-scale.csv >loaded.log 2>&1
if grep -q 'the mean of 2 timed at once' loaded.log &&
  [ "$(cut -d, -f1-8 loaded-scale.csv)" = "$(cut -d, -f1-8 fabric-scale.csv)" ]; then
  ok "under mpirun -np 2: timed on both ranks at once, the same counts"
else
  bad "under mpirun -np 2: $(tail -3 loaded.log)"
fi

# A cost file measured here, read back.
"$mpirun" -np 2 "$shoal" mpi-costs --rounds 1 -o measured.toml >/dev/null
if "$shoal" scale fat-tree-64.toml --ranks 2 --network measured.toml >measured.log &&
  grep -q 'MPI costs 2 ranks, measured' measured.log; then
  ok "mpi-costs wrote a cost file that scale reads"
else
  bad "scale did not read mpi-costs' file: $(tail -2 measured.log)"
fi

expect_error() {  # PATTERN COMMAND...: exit 1 and one error line matching PATTERN
  local pattern=$1
  shift
  set +e
  "$@" >out.log 2>err.log
  local rc=$?
  set -e
  if [ $rc -eq 1 ] && [ "$(grep -c 'error' err.log)" = 1 ] && grep -q -- "$pattern" err.log; then
    ok "error: $(cat err.log)"
  else
    bad "expected exit 1 and one line matching '$pattern'; got $rc: $(cat err.log out.log | head -3)"
  fi
}
expect_error '"x" is not a rank count' "$shoal" scale fat-tree-64.toml --ranks 2,x
expect_error '"0" is not a rank count' "$shoal" scale fat-tree-64.toml --ranks 0,2
expect_error '2 is given twice' "$shoal" scale fat-tree-64.toml --ranks 2,4,2
expect_error 'give a list' "$shoal" scale fat-tree-64.toml --ranks 2,
expect_error 'neither a file nor a built-in' "$shoal" scale fat-tree-64.toml --network ib
printf '[mpi]\nlatency = "1us"\nbandwidth = "100Gbps"\nmessage_overhead = "0.1us"\n' >no-allreduce.toml
expect_error 'no-allreduce.toml: no \[\[allreduce\]\]' "$shoal" scale fat-tree-64.toml --network no-allreduce.toml
cp no-allreduce.toml unordered.toml
printf '[[allreduce]]\nranks = 8\nlatency = "3us"\n[[allreduce]]\nranks = 4\nlatency = "2us"\n' >>unordered.toml
expect_error 'allreduce\[1\].ranks must grow' "$shoal" scale fat-tree-64.toml --network unordered.toml
sed 's/^latency = "1us"/latency = "fast"/' unordered.toml >badtime.toml
expect_error 'badtime.toml.*latency' "$shoal" scale fat-tree-64.toml --network badtime.toml
printf '[mpi]\nlatency = "1us"\nbandwidth = "100Gbps"\nmessage_overhead = "0.1us"\nlatnecy = 1\n[[allreduce]]\nranks = 2\nlatency = "1us"\n' >typo.toml
expect_error 'latnecy' "$shoal" scale fat-tree-64.toml --network typo.toml
expect_error '"x" is not a rank count' "$mpirun" -np 2 "$shoal" scale fat-tree-64.toml --ranks 2,x
expect_error 'needs at least two ranks' "$shoal" mpi-costs

if [ $failures -gt 0 ]; then
  echo "$failures failed"
  exit 1
fi
echo "all passed"
