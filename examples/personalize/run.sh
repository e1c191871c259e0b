#!/usr/bin/env bash
# `make demo`: on-device personalization, sparse vs full backpropagation.
#
# An ImageNet-pretrained EfficientNet-Lite0 gets a new 10-class head and is fine-tuned on this
# machine on a few thousand Fashion-MNIST images ("the user's own data"), three times: with the
# paper's sparse update (recipes/sparse.json), with the same update limited to the biases of the
# later layers (recipes/sparse-late.json), and with full backpropagation (recipes/full.json).
# pockc compiles each recipe into a blob; the app in app/ (linking only pock_runtime) trains it,
# measuring held-out accuracy, time per step and memory; report.py puts them side by side and
# draws the charts. The set-up (model download + ONNX export, data conversion) runs once and is
# cached in $BUILD_DIR/demo-cache; results go to $BUILD_DIR/demo.
#
# Environment: BUILD_DIR (default build), CMAKE_ARGS (first configure), and to change the run:
# DEMO_SIZE (input resolution, 64), DEMO_TRAIN / DEMO_TEST (images, 2000 / 1000), DEMO_STEPS
# (training steps per run, 200), DEMO_EVAL_EVERY (steps between held-out evaluations, 50),
# DEMO_THREADS (0: one per core), PYTHON (the interpreter with torch and onnx: /usr/bin/python3).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${BUILD_DIR:-build}"
[[ "$build" = /* ]] || build="$root/$build"
python="${PYTHON:-/usr/bin/python3}"  # Debian's python3-torch and python3-onnx live here
size="${DEMO_SIZE:-64}"
train_images="${DEMO_TRAIN:-2000}"
test_images="${DEMO_TEST:-1000}"
steps="${DEMO_STEPS:-200}"
eval_every="${DEMO_EVAL_EVERY:-50}"
threads="${DEMO_THREADS:-0}"
cache="$build/demo-cache"
out="$build/demo"
runs=(sparse sparse-late full)  # the last one is the baseline of the comparison
started=$SECONDS

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  # shellcheck disable=SC2086  # CMAKE_ARGS is a list of words on purpose
  cmake -S "$root" -B "$build" -G Ninja ${CMAKE_ARGS:-}
fi
cmake --build "$build" --target pockc pock_example_personalize
pockc="$build/pockc"
app="$build/examples/personalize/personalize"
mkdir -p "$cache" "$out"

echo "== set-up (first run only; cached in $cache)"
model="$cache/efficientnet_lite0_${size}.onnx"
if [[ ! -f "$model" ]]; then
  "$python" "$here/prepare_model.py" "$cache" --size "$size" --out "$model.part"
  mv "$model.part" "$model"
fi
data="$cache/fashion_mnist_${size}px_${train_images}_${test_images}"
if [[ ! -f "$data/test.label.i64" ]]; then
  rm -rf "$data.part"
  "$python" "$here/prepare_data.py" --train "$train_images" --test "$test_images" --size "$size" --out "$data.part"
  mv "$data.part" "$data"
fi
echo "model: $model"
echo "data:  $data ($train_images training images, $test_images held out)"

echo "== compile: pockc turns the model + each recipe into a training blob"
for run in "${runs[@]}"; do
  echo "-- $run (recipes/$run.json)"
  "$pockc" compile "$model" --recipe "$here/recipes/$run.json" -o "$out/$run.pock" --report "$out/$run.report.json"
done

echo "== train on this machine: $steps steps each, held-out accuracy every $eval_every steps"
for run in "${runs[@]}"; do
  echo "-- $run"
  "$app" "$out/$run.pock" --train "$data/train" --test "$data/test" --steps "$steps" --eval-every "$eval_every" \
    --threads "$threads" --log "$out/$run.log.jsonl" --summary "$out/$run.summary.json" --checkpoint "$out/$run.ckpt"
done

echo "== side by side"
"$python" "$here/report.py" "$out" "${runs[@]}"
echo "demo finished in $((SECONDS - started)) s (set-up included when it ran)"
