#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through ctest:
#   1. Release build (build/): unit, MPI (1-4 and 8 ranks), parallel HDF5 and CLI tests;
#   2. ASan + UBSan build (build-asan/) of the unit tests and of the executable,
#      which runs once over every kind of config (tests/cli/sanitized_smoke.sh);
#   3. libFuzzer build (build-fuzz/, clang): every input format fuzzed for
#      10,000 inputs (tests/fuzz/run.sh; SHOAL_SKIP_FUZZ=1 skips it).
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"
tools/install-deps
jobs=$(nproc)

echo "== Release build and full suite =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSHOAL_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

if [ "${SHOAL_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== ASan + UBSan build: unit tests and the executable's smoke run =="
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSHOAL_SANITIZE=ON -DSHOAL_UNIT_TESTS_ONLY=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  # Open MPI's own start-up allocations are not ours: leaks are suppressed when a
  # frame lies in its libraries (tests/lsan.supp). That needs whole stacks: keep
  # its plugins loaded to the end and unwind without frame pointers (slower).
  export OMPI_MCA_mca_base_component_disable_dlclose=1
  # use_tls=0: GCC 12's LeakSanitizer recorded a bogus dynamic-TLS range for
  # the unit test binary (depending on nothing but its layout: adding one test
  # that never ran was enough) and its tracer then crashed at exit. Without TLS
  # as roots, memory reachable only from thread-local storage would be reported
  # as a leak, never hidden; Shoal has no thread_local state.
  export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0:use_tls=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
fi
if [ "${SHOAL_SKIP_FUZZ:-0}" != 1 ]; then
  echo "== libFuzzer: every parser, 10,000 inputs each (tests/fuzz, docs/reliability.md) =="
  cc=$(command -v clang-14 || command -v clang || true)
  cxx=$(command -v clang++-14 || command -v clang++ || true)
  if [ -z "$cc" ] || [ -z "$cxx" ]; then
    echo "test.sh: the fuzz stage needs clang and libFuzzer (Debian: clang-14 libclang-rt-14-dev);" \
         "SHOAL_SKIP_FUZZ=1 skips it" >&2
    exit 1
  fi
  CC=$cc CXX=$cxx cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DSHOAL_FUZZ=ON \
    -DSHOAL_BUILD_TESTS=OFF >/dev/null
  cmake --build build-fuzz --target shoal_fuzz -j"$jobs"
  # Without the ASan stage's options: no target starts MPI, so no suppressions.
  env -u LSAN_OPTIONS -u UBSAN_OPTIONS tests/fuzz/run.sh build-fuzz
fi
echo "test.sh: all tests passed"
