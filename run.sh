#!/usr/bin/env bash
# Builds Shoal (Release, build/shoal) and runs it.
#   ./run.sh          the default study: for now the PHOLD engine benchmark on 2 ranks
#   ./run.sh ARGS...  runs `shoal ARGS...` (one rank; use tools/mpirun -np N build/shoal for more)
set -euo pipefail
cd "$(dirname "$0")"
tools/install-deps
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target shoal >/dev/null
if [ $# -gt 0 ]; then
  exec build/shoal "$@"
fi
echo "== PHOLD on 1 rank (reference) =="
build/shoal bench phold --quiet
echo
echo "== PHOLD on 2 ranks (same checksum expected) =="
exec tools/mpirun -np 2 build/shoal bench phold --quiet
