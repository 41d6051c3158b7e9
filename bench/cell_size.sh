#!/usr/bin/env bash
# How results move with the cell size: runs each config at 4 KiB,
# 64 KiB, 256 KiB and 1 MiB cells (build/shoal run --set network.cell_size=...)
# and prints, per config, a Markdown table of every coflow's CCT and its
# relative difference to the 4 KiB run, with wall time (median of REPS
# interleaved runs) and events. Build first (./run.sh).
#
# buffer_per_class (default 512 KiB) must hold one cell, so 1 MiB cells run with
# 2 MiB per class: two cells, the same ratio as 256 KiB cells in the default
# 512 KiB. Two control rows show the buffer's own effect: 4 KiB cells with
# 2 MiB, and 1 MiB cells with 1 MiB (one cell).
#
# Usage: bench/cell_size.sh [CONFIG...]   (default: configs/examples/fat-tree-64.toml
#        bench/configs/a2a-1024.toml); REPS=3 bench/cell_size.sh ... for medians;
#        VARIANTS="4KiB 64KiB 1MiB:2MiB" to choose cell[:buffer] variants.
set -euo pipefail
cd "$(dirname "$0")/.."
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(configs/examples/fat-tree-64.toml bench/configs/a2a-1024.toml)
reps=${REPS:-1}
read -r -a variants <<<"${VARIANTS:-4KiB 64KiB 256KiB 1MiB:2MiB 4KiB:2MiB 1MiB:1MiB}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=bench/lib.sh
source bench/lib.sh

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F); $reps run(s) per row"
for config in "${configs[@]}"; do
  # Interleave the repetitions: every variant once, then again.
  for ((r = 0; r < reps; r++)); do
    for i in "${!variants[@]}"; do
      v=${variants[$i]}
      cell=${v%%:*}
      args=(--set "network.cell_size=$cell")
      [[ $v == *:* ]] && args+=(--set "network.buffer_per_class=${v#*:}")
      build/shoal run "$config" --quiet "${args[@]}" >"$tmp/$i.$r" 2>&1 || {
        echo "failed: build/shoal run $config ${args[*]}" >&2; cat "$tmp/$i.$r" >&2; exit 1; }
    done
  done
  echo
  echo "$config"
  echo
  for i in "${!variants[@]}"; do
    v=${variants[$i]}
    cell=${v%%:*}
    buffer=512KiB
    [[ $v == *:* ]] && buffer=${v#*:}
    wall=$(for ((r = 0; r < reps; r++)); do grep -oE 'wall [0-9.]+ s' "$tmp/$i.$r" | awk '{print $2}'; done | median)
    events=$(grep -oE 'events [0-9]+' "$tmp/$i.0" | head -1 | awk '{print $2}')
    for ((r = 1; r < reps; r++)); do   # results must not depend on the repetition
      cmp -s <(grep -E '^ +[0-9]+ ' "$tmp/$i.0") <(grep -E '^ +[0-9]+ ' "$tmp/$i.$r") ||
        echo "warning: $config $v: coflow rows differ between repetitions" >&2
    done
    # Coflow rows: id name type flows bytes(2) start(2) end(2) CCT(2).
    grep -E '^ +[0-9]+ ' "$tmp/$i.0" | awk -v cell="$cell" -v buffer="$buffer" -v wall="$wall" -v events="$events" '
      function us(v, u) { return v * (u == "ps" ? 1e-6 : u == "ns" ? 1e-3 : u == "us" ? 1 : u == "ms" ? 1e3 : 1e6) }
      { print cell, buffer, $2, us($(NF-1), $NF), wall, events }'
  done >"$tmp/rows"
  awk '
    # Header: one CCT column per coflow, in the order of the first variant.
    !($3 in col) { col[$3] = ++n; name[n] = $3 }
    !seen[$1 " " $2]++ { order[++m] = $1 " " $2; wall[m] = $5; events[m] = $6 }
    { cct[$1 " " $2, $3] = $4 }
    END {
      base = order[1]
      printf "| cell | buffer per class |"
      for (j = 1; j <= n; j++) printf " %s CCT | vs %s |", name[j], substr(base, 1, index(base, " ") - 1)
      printf " wall s | events |\n|---|---|"
      for (j = 1; j <= n; j++) printf "---|---|"
      printf "---|---|\n"
      for (k = 1; k <= m; k++) {
        split(order[k], cb, " ")
        printf "| %s | %s |", cb[1], cb[2]
        for (j = 1; j <= n; j++) {
          c = cct[order[k], name[j]]; b = cct[base, name[j]]
          printf " %.3f us | %+.1f%% |", c, 100 * (c - b) / b
        }
        printf " %s | %s |\n", wall[k], events[k]
      }
    }' "$tmp/rows"
done
