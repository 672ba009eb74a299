#!/usr/bin/env bash
# The test command (README, .ci/run): builds everything that `scripts/setup.sh` left out (the test executables;
# setup builds only the `trex` binary so that the main job starts sooner), then runs the whole CTest suite.
# Extra arguments go to ctest, e.g. `scripts/test.sh -R dist` or `scripts/test.sh -j2`.
#
# `scripts/test.sh --sanitize [CTEST ARGS]` runs the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer
# (GCC, -O1 -g, every UB report fatal, leak checking on) in build-asan/, configured there on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=0
args=()
for arg in "$@"; do
  if [ "$arg" = --sanitize ]; then sanitize=1; else args+=("$arg"); fi
done

build=build
if [ "$sanitize" -eq 1 ]; then
  build=build-asan
  if [ ! -f build-asan/CMakeCache.txt ]; then
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTREX_SANITIZE=ON
  fi
  # Also set while building: gtest_discover_tests runs each test executable to list its tests.
  # abort_on_error: a report must not look like the exit status 1 that tests of failing CLI commands expect.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
  # Open MPI's own allocations kept until exit are suppressed (tests/sanitizer/lsan.supp says which). Its plugins are
  # unloaded by then, so the ranks mpirun starts unwind their allocations fully (mpirun sets mca_base_env_list's
  # variables in them): a plugin's leak then shows the Open MPI library that called it, and a leak of trex's own
  # code is still reported.
  export LSAN_OPTIONS=suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0
  export OMPI_MCA_mca_base_env_list="ASAN_OPTIONS=$ASAN_OPTIONS:fast_unwind_on_malloc=0"
elif [ ! -f build/CMakeCache.txt ]; then
  echo "test.sh: no build/ here; run scripts/setup.sh first" >&2
  exit 2
fi
# re-configure every time (a few seconds): CMake decides at configure time which PyTorch parity tests exist, so torch
# installed into .venv after the first configure (scripts/setup.sh --with-torch) must register them
cmake -S . -B "$build" > /dev/null
cmake --build "$build" -j "$(nproc)"
exec ctest --test-dir "$build" --output-on-failure "${args[@]}"
