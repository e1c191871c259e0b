#!/usr/bin/env bash
# The cuda backend on a real GPU, in one prepared run (aimed at < 8 minutes on a 16-core H200 box;
# WORKLOADS, STEPS and GRAPHS trade coverage for time):
#   1. configure and build with CUDA for sm_90 (BUILD_DIR, default build-cuda): pockc and the
#      test binaries of tests/cuda and tests/cuda_logic only;
#   2. `ctest -L cuda`: the GPU parity tests (every cuda kernel against ref, an MLP trained on
#      cuda against cpu step by step) and the host logic tests;
#   3. training steps/s of benchmarks/workloads.py's models (WORKLOADS: the four CPU workloads and
#      llama1b, a TinyLlama-1.1B-shaped decoder at seq 512; trim the list to save time),
#      full BP and sparse, compiled with `pockc compile --backend cuda`, against PyTorch eager on
#      the same GPU (torch_peer.py); prints a table and writes BUILD_DIR/cuda-bench/results.json.
#      Needs a python3 (PYTHON) with torch (CUDA), onnx and numpy; without them step 3 is
#      skipped with the reason, and steps 1-2 still decide the exit status.
#
# First run on an H200 on 2026-12-04 (benchmarks/RESULTS.md, "The cuda backend on an NVIDIA H200"), with
# POCK_PREBUILT: the whole run of four workloads took 178 s.
#
# The build needs the Debian packages of scripts/install-deps.sh; where some are missing,
# CMAKE_ARGS="-DPOCK_WITH_XNNPACK=OFF -DPOCK_WITH_OPENBLAS=OFF" drops the optional CPU libraries
# (the ONNX importer is needed for step 3).
# POCK_PREBUILT=ARCHIVE (benchmarks/cuda/bundle.sh) skips the build: its binaries run with the
# box's own cuBLAS and cuDNN. DEADLINE (seconds) starts no workload after that time; CMD_TIMEOUT
# (default 300 s) bounds each export, compile, train and PyTorch run; TEST_TIMEOUT each test binary.
# PRECISIONS (default "fp32"; "fp32 bf16" runs both): a bf16 case (scheme "<scheme>.bf16") compiles
# with recipe precision "bf16" (bf16 GEMM operands, f32 weights and sums) and runs PyTorch under
# autocast to bf16. PROFILE=1 (default) writes each blob's per-op profile
# (<scheme>.perop.txt, pockc bench --per-op without graphs).
# Environment: BUILD_DIR, JOBS (default: all cores), CMAKE_ARGS (extra configure flags),
# WORKLOADS, STEPS (timed steps per side, default 10), WARMUP (default 2), PYTHON, POCK_CUDA_TF32
# (1: TF32 GEMMs on both sides), GRAPHS (default 1: PockEngine runs both without CUDA graphs, POCK_CUDA_GRAPHS=0, and with them, the default).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build-cuda}
JOBS=${JOBS:-$(nproc)}
WORKLOADS=${WORKLOADS:-"mobilenetv2 resnet18 bert llama llama1b"}
STEPS=${STEPS:-10}
WARMUP=${WARMUP:-2}
PYTHON=${PYTHON:-python3}
START=$(date +%s)
say() { echo "[check.sh $(($(date +%s) - START))s] $*"; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

# 1. build, or unpack a build made elsewhere (benchmarks/cuda/bundle.sh)
mkdir -p "$BUILD_DIR"
if [ -n "${POCK_PREBUILT:-}" ]; then
  say "unpack $POCK_PREBUILT"
  rm -rf "$BUILD_DIR/prebuilt" && mkdir -p "$BUILD_DIR/prebuilt"
  tar -C "$BUILD_DIR/prebuilt" -xJf "$POCK_PREBUILT"
  BIN="$BUILD_DIR/prebuilt/bin"
  TEST_BIN="$BIN"
  # The box's own CUDA libraries (cuBLAS, cuDNN): the toolkit's, or the Python wheels' beside torch.
  cuda_libs=$(find /usr/local/cuda*/ /usr/lib /opt -name 'libcublas.so.1[0-9]*' -o -name 'libcudnn.so.9*' 2>/dev/null \
              | xargs -r -n1 dirname | sort -u | tr '\n' ':')
  export LD_LIBRARY_PATH="$BUILD_DIR/prebuilt/lib:${cuda_libs}${LD_LIBRARY_PATH:-}"
  say "libraries: $LD_LIBRARY_PATH"
  ldd "$BIN/pockc" | grep "not found" && { say "FAILED: pockc misses libraries"; exit 1; }
else
  say "configure $BUILD_DIR (CUDA sm_90)"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOCK_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DPOCK_BUILD_EXAMPLES=OFF -DPOCK_BUILD_PYTHON=OFF ${CMAKE_ARGS:-} > "$BUILD_DIR/check-configure.log" 2>&1 \
    || { tail -30 "$BUILD_DIR/check-configure.log"; exit 1; }
  targets="pockc"
  for f in tests/cuda/test_*.cpp tests/cuda_logic/test_*.cpp; do targets="$targets $(basename "$f" .cpp)"; done
  say "build: $targets"
  ninja -C "$BUILD_DIR" -j "$JOBS" $targets
  BIN="$BUILD_DIR"
  TEST_BIN="$BUILD_DIR/tests"
fi

# 2. GPU parity tests (the tests' WARN lines say which kernels no case reached)
ctest_status=0
if [ -n "${POCK_PREBUILT:-}" ]; then
  # No build tree there to hold ctest's lists: the GPU test binaries themselves.
  for f in tests/cuda/test_*.cpp; do
    t=$(basename "$f" .cpp)
    say "$t"
    timeout "${TEST_TIMEOUT:-240}" "$TEST_BIN/$t" > "$BUILD_DIR/$t.log" 2>&1 || { ctest_status=$?; say "FAILED: $t ($ctest_status)"; }
    tail -4 "$BUILD_DIR/$t.log"
  done
  say "check_pockc_cuda.py"
  "$PYTHON" tests/cuda/check_pockc_cuda.py --pockc "$BIN/pockc" || ctest_status=$?
else
  say "ctest -L cuda"
  ctest --test-dir "$BUILD_DIR" -L cuda --output-on-failure -j 4 || ctest_status=$?
fi
# A GPU the CUDA runtime cannot use (a driver older than the toolkit) would pass as "skipped".
if "$TEST_BIN/test_device_info" 2>&1 | grep -q "skipped: no CUDA device"; then
  "$TEST_BIN/test_device_info" 2>&1 | grep -A2 "skipped" | head -3
  say "FAILED: the GPU tests skipped themselves: this machine's CUDA runtime sees no usable device"
  exit 1
fi
for t in test_cuda_kernels test_cuda_backend; do
  [ -x "$TEST_BIN/$t" ] && "$TEST_BIN/$t" 2>&1 | grep -A3 "warning:" | head -20 || true
done

# 3. steps/s against PyTorch on the same GPU
if ! "$PYTHON" -c "import torch, onnx, numpy; assert torch.cuda.is_available()" 2>/dev/null; then
  say "benchmark SKIPPED: $PYTHON lacks torch with CUDA, onnx or numpy"
  exit "$ctest_status"
fi
WORK="$BUILD_DIR/cuda-bench"
mkdir -p "$WORK"
PYTHONPATH=benchmarks "$PYTHON" - "$WORK" "${PRECISIONS:-fp32}" $WORKLOADS > "$WORK/recipes.txt" <<'PY'
import json, os, sys
import run_bench, workloads
work, precisions = sys.argv[1], sys.argv[2].split()
for name in sys.argv[3:]:
    w = workloads.by_name(name)
    os.makedirs(os.path.join(work, name), exist_ok=True)
    for precision in precisions:
        for sname in ("full", "sparse"):
            r = run_bench.recipe(w, w.scheme(sname))
            label = sname
            if precision != "fp32":
                r["precision"] = precision
                label = f"{sname}.{precision}"
            path = os.path.join(work, name, label + ".recipe.json")
            with open(path, "w") as f:
                json.dump(r, f, indent=1)
            print(name, label, path)
PY
while read -r -u 3 workload scheme recipe; do  # fd 3: the commands below never eat the list
  d="$WORK/$workload"
  if [ -n "${DEADLINE:-}" ] && [ $(($(date +%s) - START)) -ge "$DEADLINE" ]; then
    say "[$workload] $scheme: SKIPPED, past DEADLINE=${DEADLINE}s"; continue
  fi
  if [ ! -f "$d/model.onnx" ]; then
    say "[$workload] export (PyTorch, CPU)"
    timeout "${CMD_TIMEOUT:-300}" "$PYTHON" benchmarks/torch_side.py export "$workload" "$d" > "$d/export.json" \
      || { say "[$workload] export FAILED"; continue; }
  fi
  say "[$workload] $scheme: pockc compile --backend cuda"
  if ! timeout "${CMD_TIMEOUT:-300}" "$BIN/pockc" compile "$d/model.onnx" --recipe "$recipe" -o "$d/$scheme.pock" --backend cuda \
       > "$d/$scheme.compile.log" 2>&1; then
    tail -5 "$d/$scheme.compile.log"; continue
  fi
  "$BIN/pockc" inspect "$d/$scheme.pock" > "$d/$scheme.inspect.txt" 2>&1 || true
  "$BIN/pockc" inspect "$d/$scheme.pock" --json > "$d/$scheme.inspect.json" 2>/dev/null || true
  rm -f "$d/$scheme.pock.jsonl"
  say "[$workload] $scheme: pockc train ($((WARMUP + STEPS)) steps)"
  POCK_CUDA_GRAPHS=0 timeout "${CMD_TIMEOUT:-300}" "$BIN/pockc" train "$d/$scheme.pock" --data "$d/batch.npz" --steps $((WARMUP + STEPS)) \
      --log "$d/$scheme.pock.jsonl" > "$d/$scheme.train.log" 2>&1 || tail -5 "$d/$scheme.train.log"
  if [ "${GRAPHS:-1}" = 1 ]; then
    rm -f "$d/$scheme.graphs.jsonl"
    say "[$workload] $scheme: pockc train with CUDA graphs (the default)"
    POCK_CUDA_GRAPHS=1 timeout "${CMD_TIMEOUT:-300}" "$BIN/pockc" train "$d/$scheme.pock" --data "$d/batch.npz" --steps $((WARMUP + STEPS)) \
        --log "$d/$scheme.graphs.jsonl" > "$d/$scheme.graphs.log" 2>&1 || tail -5 "$d/$scheme.graphs.log"
  fi
  if [ "${PROFILE:-1}" = 1 ]; then  # where a step's time goes, kernel by kernel (no graphs: each op waited for)
    POCK_CUDA_GRAPHS=0 timeout "${CMD_TIMEOUT:-300}" "$BIN/pockc" bench "$d/$scheme.pock" --per-op --top 25 --steps 3 \
        --warmup 1 > "$d/$scheme.perop.txt" 2>&1 || tail -3 "$d/$scheme.perop.txt"
  fi
  say "[$workload] $scheme: PyTorch eager on the GPU"
  tf32=""
  [ "${POCK_CUDA_TF32:-0}" = 1 ] && tf32="--tf32"
  [ "${scheme#*.}" = bf16 ] && tf32="$tf32 --autocast-bf16"
  timeout "${CMD_TIMEOUT:-300}" "$PYTHON" benchmarks/cuda/torch_peer.py train "$workload" "${scheme%%.*}" --steps "$STEPS" --warmup "$WARMUP" $tf32 \
      > "$d/$scheme.torch.json" 2> "$d/$scheme.torch.err" || tail -5 "$d/$scheme.torch.err"
done 3< "$WORK/recipes.txt"
WARMUP=$WARMUP "$PYTHON" benchmarks/cuda/compare.py "$WORK" "$WORK/results.json"
say "done"
exit "$ctest_status"
