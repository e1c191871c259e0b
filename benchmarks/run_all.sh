#!/usr/bin/env bash
# Issue #6's benchmarks in one command: PockEngine against PyTorch eager (and ONNX Runtime
# training where it installs) on MobileNetV2, ResNet-18, a MiniLM-shaped BERT and a
# SmolLM2-shaped LLaMA, full BP and a sparse scheme each (benchmarks/RESULTS.md).
#
#   benchmarks/run_all.sh                      # everything, about 20 minutes on 2 cores
#   benchmarks/run_all.sh --only bert resnet18 --steps-scale 0.5
#   benchmarks/run_all.sh --tf --only mobilenetv2 resnet18   # TensorFlow too (issue 18)
#   benchmarks/run_all.sh --bf16                 # only recipe precision bf16 on BERT and LLaMA
#   benchmarks/run_all.sh --tune --only mobilenetv2 resnet18   # convolution algorithms by pockc tune
#
# Steps: a Release build of pockc and gemm_peak in BUILD_DIR (default build-bench), the
# PyTorch side (benchmarks/prepare_python.sh: a venv in BUILD_DIR), then run_bench.py, which
# writes BUILD_DIR/bench/results.json and prints the table; render_results.py turns the JSON
# into BUILD_DIR/bench/results.md (the tables of RESULTS.md).
# Environment: BUILD_DIR, THREADS (per side, default 1), JOBS (build jobs, default 2).
# --tf (opt-in: a TensorFlow install of about 1 GB) adds TensorFlow's graph-mode training on the
# CNNs (benchmarks/prepare_tf.sh: a second venv in BUILD_DIR; tf_side.py).
# --bf16 runs bf16_bench.py instead (issue 18): PockEngine fp32 and bf16 beside PyTorch fp32 and
# PyTorch's bf16 autocast on the transformers, then the fp32/bf16 loss curves; JSON in BUILD_DIR/bf16.
# Other arguments go to run_bench.py (--help lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-bench}
THREADS=${THREADS:-1}
JOBS=${JOBS:-2}
export CCACHE_BASEDIR=$PWD
WITH_TF=0
WITH_BF16=0
ARGS=()
for a in "$@"; do
  case "$a" in
    --tf) WITH_TF=1 ;;
    --bf16) WITH_BF16=1 ;;
    *) ARGS+=("$a") ;;
  esac
done

if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOCK_USE_CCACHE=ON -DPOCK_WITH_CUDA=OFF \
        -DPOCK_BUILD_TESTS=OFF -DPOCK_BUILD_EXAMPLES=OFF
fi
ninja -C "$BUILD_DIR" -j "$JOBS" pockc gemm_peak

PY=$(bash benchmarks/prepare_python.sh "$BUILD_DIR")
echo "PyTorch side: $PY"
if [ "$WITH_BF16" = 1 ]; then
  mkdir -p "$BUILD_DIR/bf16"
  "$PY" benchmarks/bf16_bench.py speed --build-dir "$BUILD_DIR" --python "$PY" --threads "$THREADS" "${ARGS[@]}" \
    > "$BUILD_DIR/bf16/speed.json"
  "$PY" benchmarks/bf16_bench.py curves --build-dir "$BUILD_DIR" --python "$PY" --threads "$THREADS" \
    > "$BUILD_DIR/bf16/curves.json"
  echo "results: $BUILD_DIR/bf16/speed.json $BUILD_DIR/bf16/curves.json"
  exit 0
fi
TF_ARGS=()
if [ "$WITH_TF" = 1 ]; then
  TF_ARGS=(--tf-python "$(bash benchmarks/prepare_tf.sh "$BUILD_DIR")")
  echo "TensorFlow side: ${TF_ARGS[1]}"
fi
"$PY" benchmarks/run_bench.py --build-dir "$BUILD_DIR" --python "$PY" --threads "$THREADS" "${TF_ARGS[@]}" \
  "${ARGS[@]}"
"$PY" benchmarks/render_results.py "$BUILD_DIR/bench/results.json" > "$BUILD_DIR/bench/results.md"
echo "tables: $BUILD_DIR/bench/results.md"
