#!/usr/bin/env bash
# The test command (README, .ci/run): builds everything that `scripts/setup.sh` left out (the test executables;
# setup builds only the `trex` binary so that the main job starts sooner), then runs the whole CTest suite.
# Extra arguments go to ctest, e.g. `scripts/test.sh -R dist` or `scripts/test.sh -j2`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/CMakeCache.txt ]; then
  echo "test.sh: no build/ here; run scripts/setup.sh first" >&2
  exit 2
fi
cmake --build build -j "$(nproc)"
exec ctest --test-dir build --output-on-failure "$@"
