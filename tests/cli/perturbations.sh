#!/usr/bin/env bash
# Perturbations against closed forms, at 1 and 2 ranks.
# - Figure A (EP 32 MB + DP 128 MB fair-shared from one host) with its first link
#   at 200 Gb/s instead of 400: EP ends at 2.56 ms, DP at 6.4 ms.
# - The same link slowed from t = 1 ms: by then each flow has 25 MB through; EP's
#   last 7 MB at 12.5 MB/ms ends at 1.56 ms, DP's last 96 MB at 25 MB/ms at 5.40 ms.
# - A straggler: a 100 us task on GPU 0 slowed 2x delays the coflow after it to 200 us;
#   GPU 1, whose task needs that coflow, waits on it until 200 + 20 (1 MB at
#   400 Gb/s) + 2 (two 1 us links) = 222 us (cut-through at equal rates adds no
#   cell time); the GPUs compute 200 and 10 us.
# Usage: perturbations.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
rm -rf "$dir"  # outputs are never overwritten without --force
mkdir -p "$dir"
cp "$src/configs/examples/figure-a.toml" "$src/configs/examples/figure-a-workload.toml" "$dir/"
failures=0
check() {  # check CSV NAME COLUMN EXPECTED_PS
  local got
  got=$(awk -F, -v n="$2" -v c="$3" '$2 == n {print $c}' "$1")
  if awk -v g="$got" -v e="$4" 'BEGIN {d = (g - e) / e; exit !(g != "" && d >= 0 && d <= 0.005)}'; then
    echo "ok   $(basename "$1") $2: $got ps (closed form $4 ps)"
  else
    echo "FAIL $(basename "$1") $2: '$got' ps, expected $4 ps within +0.5%"
    failures=$((failures + 1))
  fi
}
slow() {  # slow NAME AT
  { cat "$dir/figure-a.toml"; printf '\n[[perturbation]]\nlink = "gpu 0 -> leaf 0"\nrate = "200Gbps"\nat = "%s"\n' "$2"; } >"$dir/$1.toml"
}
slow slow-from-0 0us
slow slow-from-1ms 1ms
for ranks in 1 2; do
  for name in slow-from-0 slow-from-1ms; do
    timeout 300 "$mpirun" -np "$ranks" "$shoal" run "$dir/$name.toml" --quiet -o "$dir/$name-$ranks.csv" >/dev/null
  done
  check "$dir/slow-from-0-$ranks.csv" ep 12 2560000000
  check "$dir/slow-from-0-$ranks.csv" dp 12 6400000000
  check "$dir/slow-from-1ms-$ranks.csv" ep 12 1560000000
  check "$dir/slow-from-1ms-$ranks.csv" dp 12 5400000000
done

cat >"$dir/straggler-workload.toml" <<'TOML'
[[task]]
name = "compute"
gpu = 0
duration = "100us"
[[coflow]]
name = "after-compute"
after = "compute"
flows = [{ src = 0, dst = 1, bytes = "1MB" }]
[[task]]
name = "consume"
gpu = 1
duration = "10us"
after = "after-compute"
TOML
sed 's/figure-a-workload.toml/straggler-workload.toml/' "$dir/figure-a.toml" >"$dir/straggler.toml"
printf '\n[[perturbation]]\ngpu = 0\nslowdown = 2.0\n' >>"$dir/straggler.toml"
"$shoal" run "$dir/straggler.toml" --quiet -o "$dir/straggler.csv" >"$dir/straggler.out"
check "$dir/straggler.csv" after-compute 11 200000000
line=$(grep 'GPUs computing' "$dir/straggler.out")
if [[ "$line" == *"compute busy mean 105 us max 200 us; waiting on coflows mean 111 us max 222 us"* ]]; then
  echo "ok   GPU figures: $line"
else
  echo "FAIL GPU figures: '$line', expected busy mean 105 us max 200 us, waiting mean 111 us max 222 us"
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
