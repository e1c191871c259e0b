#!/usr/bin/env bash
# Fuzzes every parser with libFuzzer under AddressSanitizer + UBSan (docs/fuzzing.md):
#   scripts/fuzz.sh                 each target for FUZZ_SECONDS (default 60)
#   FUZZ_SECONDS=20 scripts/fuzz.sh what CI runs
#   scripts/fuzz.sh blob_open npz   only these targets
# Builds in FUZZ_BUILD_DIR (default build-fuzz) with clang-14. Corpora grow across runs in
# $FUZZ_BUILD_DIR/fuzz-corpus/<target>; an input that crashes, leaks, trips a sanitizer, times out
# or runs out of memory lands in $FUZZ_BUILD_DIR/fuzz-findings/ and fails the run (copy it to
# tests/fuzz/regressions/<target>/ with its fix, so that ctest replays it from then on).
# Executions per target go to $FUZZ_BUILD_DIR/fuzz-summary.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
all_targets=(blob_open blob_step checkpoint recipe npz onnx gguf safetensors)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all_targets[@]}")
export CCACHE_BASEDIR="$PWD"

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  # -O1 with line tables: fast enough to fuzz, and sanitizer reports point at lines.
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS_DEBUG="-g1 -O1" -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DPOCK_FUZZ=ON -DPOCK_USE_CCACHE=ON \
    -DPOCK_WITH_CUDA=OFF -DPOCK_BUILD_TOOLS=OFF -DPOCK_BUILD_EXAMPLES=OFF -DPOCK_WITH_HEXAGON_DSP=OFF
fi
cmake --build "$build" -j "$jobs" --target make_fuzz_seeds "${targets[@]/#/fuzz_}"

fuzz_dir="$build/tests/fuzz"
seeds="$build/fuzz-seeds"
findings="$build/fuzz-findings"
mkdir -p "$findings"
"$fuzz_dir/make_fuzz_seeds" "$seeds"

summary="$build/fuzz-summary.md"
{
  echo "| target | seconds | executions | exec/s | corpus | result |"
  echo "|---|---|---|---|---|---|"
} > "$summary"
failed=0
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus" "$seeds/$t"
  # Committed seeds and regressions join the generated ones; ONNX also starts from a real export.
  # (A target with no finding yet has no regressions folder: git keeps no empty folders.)
  extra=()
  [[ -d tests/fuzz/regressions/$t ]] && extra+=(tests/fuzz/regressions/"$t")
  [[ -d tests/fuzz/seeds/$t ]] && extra+=(tests/fuzz/seeds/"$t")
  [[ $t == onnx ]] && extra+=(tests/frontend/tf2onnx)
  [[ $t == gguf ]] && extra+=(tests/frontend/gguf)
  [[ $t == safetensors ]] && extra+=(tests/frontend/safetensors)
  log="$build/fuzz-$t.log"
  echo "== fuzz $t for ${seconds} s"
  # allocator_may_return_null: a refused huge allocation is the engine's to report, not a finding;
  # -rss_limit_mb still catches a reader that really uses gigabytes.
  set +e
  ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$fuzz_dir/fuzz_$t" "$corpus" "$seeds/$t" ${extra[@]+"${extra[@]}"} -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/$t-" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  size=$(find "$corpus" -type f | wc -l)
  if [[ $rc -eq 0 ]]; then
    result="no finding"
  else
    result="FINDING (exit $rc; see $log)"
    failed=1
    grep -E "ERROR:|runtime error|SUMMARY|Test unit written" "$log" | head -5 || true
  fi
  echo "| $t | $seconds | ${execs:-?} | ${rate:-?} | $size | $result |" >> "$summary"
done
cat "$summary"
if [[ $failed -ne 0 ]]; then
  echo "fuzz: findings in $findings"
  exit 1
fi
