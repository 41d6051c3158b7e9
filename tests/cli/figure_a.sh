#!/usr/bin/env bash
# The Hermod digest's Figure A through `shoal run` at 1 and 2 ranks: one
# 400 Gb/s path, EP 32 MB and DP 128 MB (decimal) starting together, fair
# sharing. Closed form: EP ends at 32/25 = 1.28 ms, DP at 160/50 = 3.2 ms.
# A scheduler that serves EP first (lina, hermod, ep-pp-first): EP ends at
# 0.64 ms, DP still at 3.2 ms (the link never idles).
# Latency (2 links of 1 us) and 4 KiB cells are the only differences: within 0.5%.
# Usage: figure_a.sh SHOAL MPIRUN WORKDIR SOURCE_DIR
set -euo pipefail
shoal=$1 mpirun=$2 dir=$3 src=$4
rm -rf "$dir"  # outputs are never overwritten without --force
mkdir -p "$dir"
failures=0
check() {  # check CSV NAME EXPECTED_PS
  local got
  got=$(awk -F, -v n="$2" '$2 == n {print $12}' "$1")
  if awk -v g="$got" -v e="$3" 'BEGIN {d = (g - e) / e; exit !(g != "" && d >= 0 && d <= 0.005)}'; then
    echo "ok   $2 ends at $got ps (closed form $3 ps)"
  else
    echo "FAIL $2 ends at '$got' ps, expected $3 ps within +0.5%"
    failures=$((failures + 1))
  fi
}
"$shoal" run "$src/configs/examples/figure-a.toml" --quiet -o "$dir/fair-1.csv" >/dev/null
check "$dir/fair-1.csv" ep 1280000000
check "$dir/fair-1.csv" dp 3200000000
timeout 300 "$mpirun" -np 2 "$shoal" run "$src/configs/examples/figure-a.toml" --quiet \
  -o "$dir/fair-2.csv" >/dev/null
cmp "$dir/fair-1.csv" "$dir/fair-2.csv" && echo "ok   identical at 2 ranks"
# The same at 800 Gb/s through --set: every time halves.
"$shoal" run "$src/configs/examples/figure-a.toml" --quiet --set topology.link_rate=800Gbps \
  -o "$dir/fair-800.csv" >/dev/null
check "$dir/fair-800.csv" ep 640000000
check "$dir/fair-800.csv" dp 1600000000
# The largest cell, 16 MiB (its size once wrapped to 0 in the cell's 24 bits and
# no flow finished): EP (2 cells) joined the NIC first and its first cell went
# before DP joined the turn, so both its cells go first: 32 MB / 50 GB/s plus
# two links' latency, 642 us; DP ends with the link's last byte, 3.202 ms.
exact() {  # exact CSV NAME EXPECTED_PS
  local got
  got=$(awk -F, -v n="$2" '$2 == n {print $12}' "$1")
  if [ "$got" = "$3" ]; then
    echo "ok   $2 ends at $got ps"
  else
    echo "FAIL $2 ends at '$got' ps, expected exactly $3 ps"
    failures=$((failures + 1))
  fi
}
"$shoal" run "$src/configs/examples/figure-a.toml" --quiet --set network.cell_size=16MiB \
  --set network.buffer_per_class=64MiB -o "$dir/fair-16mib.csv" >/dev/null
exact "$dir/fair-16mib.csv" ep 642000000
exact "$dir/fair-16mib.csv" dp 3202000000
for policy in lina ep-pp-first hermod; do
  for ranks in 1 2; do
    timeout 300 "$mpirun" -np "$ranks" "$shoal" run "$src/configs/examples/figure-a.toml" --quiet \
      --set policy.name="$policy" -o "$dir/$policy-$ranks.csv" >/dev/null
    check "$dir/$policy-$ranks.csv" ep 640000000
    check "$dir/$policy-$ranks.csv" dp 3200000000
  done
done
[ "$failures" -eq 0 ]
