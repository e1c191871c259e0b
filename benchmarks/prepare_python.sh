#!/usr/bin/env bash
# Prepares the PyTorch side of the benchmarks and prints the Python to run it with (stdout; the
# log goes to stderr). Usage: benchmarks/prepare_python.sh BUILD_DIR
#
# The strongest CPU PyTorch that installs here, tried in this order:
#   1. the newest pip wheel (pinned below) in a venv under BUILD_DIR, without its dependencies
#      (the Linux wheel lists several GB of CUDA libraries): torch + torchvision + their
#      pure-Python dependencies, used where the machine's own CUDA 13 satisfies the rest;
#   2. the same plus the four CUDA libraries a CUDA 13.0 install lacks or has too old (cuFile,
#      cuSPARSELt, NVSHMEM, NCCL), at the versions torch pins;
#   3. the same plus every dependency torch declares (plain `pip install torch`);
#   4. Debian's python3-torch (1.13) under /usr/bin/python3.
# Each stage must import torch, torchvision and onnx and run a matmul. onnxruntime-training
# (on-device training, last release 1.19.2) goes into the same venv when it installs; its
# training package imports torch, so it cannot live apart from it.
set -uo pipefail

BUILD_DIR=${1:?usage: prepare_python.sh BUILD_DIR}
VENV="$BUILD_DIR/venv"
TORCH_VERSION=2.15.0
TORCHVISION_VERSION=0.29.2
ORT_TRAINING_VERSION=1.19.2
PY_DEPS=(sympy networkx jinja2 filelock fsspec typing-extensions numpy onnx pillow)

log() { echo "prepare_python: $*" >&2; }

works() {  # PYTHON: imports everything the benchmark needs and trains one matmul
  "$1" - >&2 2>/dev/null <<'EOF'
import torch, torchvision, onnx
x = torch.randn(64, 64, requires_grad=True)
(x @ x).sum().backward()
assert torch.isfinite(x.grad).all()
EOF
}

pip_q() { "$VENV/bin/pip" install --disable-pip-version-check --no-warn-conflicts -q "$@" >&2; }

# The version torch's metadata pins for a requirement, e.g. 'nvidia-nccl-cu13==2.30.7'.
pinned() {
  local meta
  meta=$(ls -d "$VENV"/lib/python3*/site-packages/torch-*.dist-info 2>/dev/null | head -1)/METADATA
  grep -o "^Requires-Dist: $1[^;]*" "$meta" 2>/dev/null | sed 's/^Requires-Dist: //; s/ //g' | head -1
}

try_pip_torch() {
  local host_py=${PYTHON_FOR_VENV:-python3}
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating $VENV with $($host_py --version 2>&1)"
    "$host_py" -m venv "$VENV" >&2 || return 1
  fi
  if works "$VENV/bin/python"; then return 0; fi
  log "stage 1: torch==$TORCH_VERSION torchvision==$TORCHVISION_VERSION without dependencies"
  pip_q --no-deps "torch==$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION" || return 1
  pip_q "${PY_DEPS[@]}" || return 1
  if works "$VENV/bin/python"; then return 0; fi
  log "stage 2: the CUDA libraries a CUDA 13.0 install lacks, as torch pins them"
  local toolkit libs=()
  # 'cuda-toolkit[cublas,...]==13.x.y' -> 'cuda-toolkit[cufile]==13.x.y': that extra alone
  toolkit=$(pinned 'cuda-toolkit' | sed 's/\[.*\]/[cufile]/')
  for req in nvidia-cusparselt nvidia-nvshmem nvidia-nccl; do
    libs+=("$(pinned "$req")")
  done
  [ -n "$toolkit" ] && pip_q "$toolkit"
  pip_q --no-deps "${libs[@]}"
  if works "$VENV/bin/python"; then return 0; fi
  log "stage 3: torch with every declared dependency"
  pip_q "torch==$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION" || return 1
  works "$VENV/bin/python"
}

if try_pip_torch; then
  PY="$VENV/bin/python"
  if ! "$PY" -c "import onnxruntime.training.api" >/dev/null 2>&1; then
    log "onnxruntime-training==$ORT_TRAINING_VERSION"
    pip_q "onnxruntime-training==$ORT_TRAINING_VERSION" || log "onnxruntime-training did not install"
  fi
  echo "$PY"
  exit 0
fi
log "pip torch does not import here; falling back to Debian's python3-torch"
if works /usr/bin/python3; then
  echo /usr/bin/python3
  exit 0
fi
log "no usable PyTorch: install python3-torch python3-torchvision python3-onnx"
exit 1
