#!/usr/bin/env bash
# Link failures against closed forms, at 1 and 2 ranks. Two hosts of leaf 0 each
# send 1 MB (decimal) to a host of leaf 1 on a 2-tier radix-4 fat tree (2 spines),
# 100 Gb/s, 1 us per link, adaptive spraying:
# - leaf 0 <-> spine 0 down from t = 0: both flows share leaf 0's one uplink left,
#   2 MB at 100 Gb/s = 160 us, plus 4 links of 1 us: 164 us.
# - the same link down from t = 40 us: from 1 us to 40 us both uplinks carried the
#   hosts' 200 Gb/s (975 kB); the cells queued at the failed port are re-routed, and
#   the other 1,025 kB cross one uplink in 82 us; the last tail reaches its host 3 links
#   later: 40 + 82 + 3 = 125 us.
# - both uplinks of leaf 0 down from 40 us: one line naming the flow, exit 1.
# - a bad failure entry (fail with a rate): one line, exit 1.
# - a 3-tier k = 8 permutation (8 MB per host, adaptive spraying) with a core ->
#   spine link down from 100 us and a spine -> leaf link from 200 us (cells then
#   stranded at cores detour down and up again): every byte delivered, and the
#   same coflow table at 1 and 2 ranks.
# Usage: link_failure.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
rm -rf "$dir"  # outputs are never overwritten without --force
mkdir -p "$dir"
cat >"$dir/base.toml" <<'TOML'
[topology]
kind = "fat-tree"
gpus = 8
gpus_per_server = 1
tiers = 2
radix = 4
link_rate = "100Gbps"
link_latency = "1us"
[network]
load_balancing = "adaptive"
[workload]
file = "workload.toml"
TOML
cat >"$dir/workload.toml" <<'TOML'
[[coflow]]
name = "cross"
flows = [{ src = 0, dst = 2, bytes = "1MB" }, { src = 1, dst = 3, bytes = "1MB" }]
TOML
fail() {  # fail NAME LINK AT [EXTRA]
  { cat "$dir/base.toml"; printf '\n[[perturbation]]\nlink = "%s"\nfail = true\nat = "%s"\n%s\n' "$2" "$3" "${4:-}"; } >"$dir/$1.toml"
}
fail from-0 "leaf 0 -> spine 0" 0us
fail from-40us "leaf 0 -> spine 0" 40us
fail dead "leaf 0 -> spine 0" 40us
printf '\n[[perturbation]]\nlink = "leaf 0 -> spine 1"\nfail = true\nat = "40us"\n' >>"$dir/dead.toml"
fail bad "leaf 0 -> spine 0" 0us 'rate = "10Gbps"'
failures=0
check() {  # check CSV EXPECTED_PS
  local got
  got=$(awk -F, 'NR == 2 {print $13}' "$1")
  if awk -v g="$got" -v e="$2" 'BEGIN {d = (g - e) / e; exit !(g != "" && d >= 0 && d <= 0.005)}'; then
    echo "ok   $(basename "$1"): CCT $got ps (closed form $2 ps)"
  else
    echo "FAIL $(basename "$1"): CCT '$got' ps, expected $2 ps within +0.5%"
    failures=$((failures + 1))
  fi
}
expect_error() {  # expect_error NAME RANKS PATTERN
  local out rc=0
  out=$(timeout 120 "$mpirun" -np "$2" "$shoal" run "$dir/$1.toml" --quiet 2>&1 >/dev/null) || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "$3" <<<"$out"; then
    echo "ok   $1 at $2 ranks: exit $rc, $(grep -m1 "$3" <<<"$out")"
  else
    echo "FAIL $1 at $2 ranks: exit $rc, expected an error matching '$3', got: $out"
    failures=$((failures + 1))
  fi
}
for ranks in 1 2; do
  for name in from-0 from-40us; do
    timeout 120 "$mpirun" -np "$ranks" "$shoal" run "$dir/$name.toml" --quiet -o "$dir/$name-$ranks.csv" >/dev/null
  done
  check "$dir/from-0-$ranks.csv" 164000000
  check "$dir/from-40us-$ranks.csv" 125000000
  expect_error dead "$ranks" "no path left for flow [01] (GPU [01] -> GPU [23]) at leaf 0 at 40 us; failed links: leaf 0 -> spine 0, spine 0 -> leaf 0, leaf 0 -> spine 1"
  expect_error bad "$ranks" "perturbation\[0\]: a failed link (fail = true) takes no rate or extra_latency"
done
cp "$src/tests/configs/permutation-128-workload.toml" "$dir/"
{ sed 's/^load_balancing = .*/load_balancing = "adaptive"/' "$src/tests/configs/permutation-128.toml"
  printf '\n[[perturbation]]\nlink = "core 0 -> spine 0"\nfail = true\nat = "100us"\n'
  printf '\n[[perturbation]]\nlink = "spine 1 -> leaf 1"\nfail = true\nat = "200us"\n'; } >"$dir/tier3.toml"
for ranks in 1 2; do
  timeout 300 "$mpirun" -np "$ranks" "$shoal" run "$dir/tier3.toml" --quiet -o "$dir/tier3-$ranks.csv" >"$dir/tier3-$ranks.out"
done
if grep -q "bytes delivered 1024000000 of 1024000000" "$dir/tier3-1.out" && cmp -s "$dir/tier3-1.csv" "$dir/tier3-2.csv"; then
  echo "ok   3-tier permutation around two failed links: all bytes delivered, 1 and 2 ranks identical"
else
  echo "FAIL 3-tier permutation around failed links: $(grep delivered "$dir/tier3-1.out"); CSVs:"
  diff "$dir/tier3-1.csv" "$dir/tier3-2.csv" || true
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
