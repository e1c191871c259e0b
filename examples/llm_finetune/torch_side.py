#!/usr/bin/env python3
"""The PyTorch side of examples/llm_finetune: the same SmolLM2-135M weights (transformers
dequantizes the same GGUF file), the same token batches (the .npy files the C++ app wrote with --data-out), the same
scheme and optimizer, on this machine's cores; prints one JSON line with held-out perplexity
before and after, tokens/s of the training steps, peak RSS, and greedy samples before and after.
One scheme per process, so that peak RSS is that scheme's.
    python torch_side.py --gguf MODEL.gguf --data DATA_DIR --scheme lora --steps 20 --lr 1e-3 --threads 2"""
import argparse
import json
import math
import resource
import time

import numpy as np
import torch
from transformers import AutoModelForCausalLM


def held_out_perplexity(model, held_out, batch):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(held_out) - batch + 1, batch):
            ids = torch.from_numpy(held_out[i:i + batch])
            logits = model(ids).logits
            loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1),
                                                     reduction="sum")
            total += loss.item()
            count += ids[:, 1:].numel()
    model.train()
    return math.exp(total / count)


def greedy(model, prompts, new_tokens):
    model.eval()
    out = []
    with torch.no_grad():
        for p in prompts:
            ids = model.generate(torch.tensor([p]), max_new_tokens=new_tokens, do_sample=False)[0].tolist()
            out.append(ids[len(p):])
    model.train()
    return out


def select(model, scheme, layers):
    if scheme == "full":
        return model
    if scheme == "lora":
        from peft import LoraConfig, get_peft_model
        config = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                            target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
        return get_peft_model(model, config)
    # sparse: the paper's LLM scheme, q/k/v projections and the first FFN layer (gate, up) of
    # the last `layers` blocks.
    last = model.config.num_hidden_layers
    wanted = {f"model.layers.{b}.{m}.weight" for b in range(last - layers, last)
              for m in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "mlp.gate_proj", "mlp.up_proj")}
    for name, p in model.named_parameters():
        p.requires_grad_(name in wanted)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--data", required=True, help="the folder of train.npy, held_out.npy, prompts.npy")
    ap.add_argument("--scheme", choices=["full", "sparse", "lora"], required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--sparse-blocks", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--new-tokens", type=int, default=24)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    train = np.load(f"{a.data}/train.npy")
    held_out = np.load(f"{a.data}/held_out.npy")
    prompts = [list(map(int, p)) for p in np.load(f"{a.data}/prompts.npy")]
    folder, name = a.gguf.rsplit("/", 1)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model = select(model, a.scheme, a.sparse_blocks)
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=a.lr, weight_decay=0.0)
    result = {"scheme": a.scheme, "trainable_params": sum(p.numel() for p in trainable)}
    result["ppl_before"] = held_out_perplexity(model, held_out, a.batch)
    result["samples_before"] = greedy(model, prompts, a.new_tokens)
    batches = len(train) // a.batch
    losses, times = [], []
    for step in range(a.steps):
        ids = torch.from_numpy(train[(step % batches) * a.batch:(step % batches + 1) * a.batch])
        start = time.perf_counter()
        logits = model(ids).logits
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    steady = times[1:] if len(times) > 1 else times
    result["losses"] = losses
    result["tokens_per_s"] = a.batch * train.shape[1] / (sum(steady) / len(steady))
    result["ppl_after"] = held_out_perplexity(model, held_out, a.batch)
    result["samples_after"] = greedy(model, prompts, a.new_tokens)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


if __name__ == "__main__":
    main()
