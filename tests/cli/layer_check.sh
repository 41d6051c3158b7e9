#!/usr/bin/env bash
# tools/check-layers: the repository passes, and an include from a layer above
# (net including exec), from a layer it may not use (bench including net) or
# from a folder that is no layer makes it fail, naming the file and line.
# Usage: layer_check.sh SOURCE_DIR WORKDIR
set -euo pipefail
src=$1 dir=$2
check=$src/tools/check-layers
"$check" "$src"
echo "ok     the repository's layers"
fail_with() {  # fail_with NAME MESSAGE: the copy in $dir/NAME must fail with MESSAGE
  local out
  if out=$("$check" "$dir/$1" 2>&1); then
    echo "FAIL   $1: tools/check-layers passed"
    exit 1
  fi
  if ! grep -qF -- "$2" <<<"$out"; then
    echo "FAIL   $1: expected \"$2\", got: $out"
    exit 1
  fi
  echo "ok     $1: $(head -1 <<<"$out")"
}
rm -rf "$dir"
mkdir -p "$dir"
copy() {  # copy NAME: the repository's include/ and src/ in $dir/NAME
  mkdir -p "$dir/$1"
  cp -r "$src/include" "$src/src" "$dir/$1/"
}
copy upward
sed -i '0,/#include "shoal\/net\/ports.hpp"/s//#include "shoal\/exec\/model.hpp"\n&/' \
  "$dir/upward/include/shoal/net/nic.hpp"
fail_with upward "include/shoal/net/nic.hpp:"
fail_with upward "layer net includes shoal/exec/, a layer above it"
copy sideways
printf '#include "shoal/net/network.hpp"\n' >>"$dir/sideways/src/bench/phold.cpp"
fail_with sideways "layer bench includes shoal/net/, a layer it may not use"
copy stray
mkdir -p "$dir/stray/src/misc"
printf '#include "shoal/core/units.hpp"\n' >"$dir/stray/src/misc/x.cpp"
fail_with stray "folder misc is not a layer"
