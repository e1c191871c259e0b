#!/usr/bin/env bash
# `make demo`: fine-tune a model on this machine and run the result.
# Until the personalization demo itself lands here, this builds and runs examples/train_mlp
# (compile with a recipe, train, save the blob) and then runs the saved blob from C
# (examples/c_api). Environment: BUILD_DIR (default: build), CMAKE_ARGS for a first configure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-build}"
[[ "$build" = /* ]] || build="$root/$build"

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  # shellcheck disable=SC2086  # CMAKE_ARGS is a list of words on purpose
  cmake -S "$root" -B "$build" -G Ninja ${CMAKE_ARGS:-}
fi
cmake --build "$build" --target pock_example_train_mlp pock_example_c_api

blob="$build/examples/mlp.pock"
echo "== examples/train_mlp: build an MLP, compile it with a recipe, train it on this machine"
status=0
"$build/examples/train_mlp/train_mlp" --save "$blob" || status=$?
if [[ $status -eq 77 ]]; then
  echo "demo: this build cannot run the demo model yet (see above)" >&2
  exit 1
elif [[ $status -ne 0 ]]; then
  exit "$status"
fi
echo "== examples/c_api: run the saved blob from plain C"
"$build/examples/c_api/c_api" "$blob" x logits
