#!/usr/bin/env bash
# Crash safety of checkpoints at scale: SIGKILLs a process that trains and saves, ROUNDS times
# (default 500), at random points, and loads the checkpoint after each kill
# (tests/runtime/test_checkpoint_safety.cpp, the case tagged [kill]; ctest runs it 40 times).
# Prints the kills, the checkpoints loaded and how many kills landed in the middle of a save.
#   benchmarks/checkpoint_kill.sh [ROUNDS]     (after a build in BUILD_DIR, default build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:-500}
test_binary="${BUILD_DIR:-build}/tests/test_checkpoint_safety"
[[ -x $test_binary ]] || { echo "build first: $test_binary is missing" >&2; exit 1; }
POCK_KILL_ROUNDS=$rounds "$test_binary" "[kill]" --success 2>&1 | grep -E "kills:|passed|failed"
