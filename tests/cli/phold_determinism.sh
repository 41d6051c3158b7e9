#!/usr/bin/env bash
# PHOLD through the shoal executable at N ranks must print the same checksum,
# event count and simulated time as the one-rank run, for several shapes:
# plain, every event on a window edge (mass ties), round-robin with a short
# lookahead, and a partition file.
# Usage: phold_determinism.sh SHOAL MPIRUN RANKS WORKDIR
set -euo pipefail
shoal=$1 mpirun=$2 ranks=$3 dir=$4
mkdir -p "$dir"

fields() { grep -E '^  (events|simulated time|checksum):' ; }
failures=0
# The N-rank run takes the reference's options, or `parallel` when set (a
# partition file is for N ranks only; a config file stands for options).
parallel=()
check() {
  local name=$1; shift
  local ref par
  ref=$("$shoal" bench phold --quiet "$@" | fields)
  [ ${#parallel[@]} -gt 0 ] || parallel=("$@")
  par=$(timeout 300 "$mpirun" -np "$ranks" "$shoal" bench phold --quiet "${parallel[@]}")
  parallel=()
  local remote
  remote=$(grep -E '^  remote events:' <<<"$par" | awk '{print $3}')
  par=$(fields <<<"$par")
  if [ "$ref" != "$par" ]; then
    echo "FAIL $name at $ranks ranks:"; echo "reference:"; echo "$ref"; echo "got:"; echo "$par"
    failures=$((failures + 1))
  elif [ "${remote:-0}" -eq 0 ]; then
    echo "FAIL $name at $ranks ranks: no event crossed ranks, the case proves nothing"
    failures=$((failures + 1))
  else
    echo "ok   $name at $ranks ranks: $(grep checksum <<<"$par" | awk '{print $2}'), $remote events crossed ranks"
  fi
}

check plain --entities 20000 --blocks 12 --end 100us
check window-edge-ties --entities 5000 --blocks 12 --init 3 --remote 0.5 --mean-delay 0us --end 40us
check round-robin-short-lookahead --entities 8000 --blocks 12 --remote 0.9 --lookahead 100ns \
  --mean-delay 1us --strategy round-robin --end 30us
"$shoal" partition phold --entities 20000 --blocks 12 --ranks "$ranks" --strategy round-robin \
  -o "$dir/phold.part" --force
parallel=(--entities 20000 --blocks 12 --end 50us --seed 7 --partition "$dir/phold.part")
check partition-file --entities 20000 --blocks 12 --end 50us --seed 7

# The same run from a config file (which names a partition file relative to
# itself) must give the one-rank run's results too.
cat >"$dir/phold.toml" <<TOML
[phold]
entities = 20000
blocks = 12
end = "50us"
seed = 7
partition = "phold.part"
TOML
parallel=(--config "$dir/phold.toml")
check config-file --entities 20000 --blocks 12 --end 50us --seed 7
# Options on the command line win over the file.
parallel=(--config "$dir/phold.toml" --end 20us --seed 9)
check config-overridden --entities 20000 --blocks 12 --end 20us --seed 9

[ "$failures" -eq 0 ]
