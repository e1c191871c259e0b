"""Recipe precision "bf16" against fp32 (issue 18): loss curves and transformer step times.

  bf16_bench.py speed  --build-dir B [--only bert llama] [--threads T] [--rounds R]
      PockEngine fp32, PockEngine bf16, PyTorch fp32 and PyTorch under its own bf16 autocast
      (torch.autocast("cpu", dtype=torch.bfloat16)), each a fresh process, interleaved rounds, on
      run_bench.py's transformer workloads (full backpropagation, same model, same batch, SGD with
      momentum). Ratios use CPU time per step, as run_bench.py's do. Each side's peak RSS too.
      --before-build-dir B0 adds "pockengine bf16 before": another build's pockc (an earlier
      commit), its own blob, interleaved in the same rounds.
  bf16_bench.py curves --build-dir B [--steps 200] [--demo-cache DIR]
      The same training run in fp32 and in bf16, step by step: the LLaMA-shaped workload at seq 32,
      batch 2 (workloads.py's llama-curve; pockc train on its batch) and, with
      --demo-cache (examples/personalize/run.sh's set-up), the demo's full recipe on its app.
      Reports max |loss_bf16 - loss_fp32| against the fp32 curve's step-to-step noise (the
      standard deviation of its successive differences).

Prints one JSON document (benchmarks/RESULTS.md quotes it). Run with a Python that has torch
(benchmarks/prepare_python.sh's, or /usr/bin/python3).
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_bench  # noqa: E402  (run_child, recipe, median)
import workloads  # noqa: E402

PRECISIONS = ("fp32", "bf16")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def prepare(w, args, work, build_dir=None, precisions=PRECISIONS, tag=""):
    """The workload's ONNX model and batch (torch_side.py export) and one blob per precision,
    compiled by build_dir's pockc (default --build-dir); tag names the blobs apart."""
    build_dir = build_dir or args.build_dir
    os.makedirs(work, exist_ok=True)
    if not os.path.exists(os.path.join(work, "batch.npz")):
        log(f"[{w.name}] export")
        run_bench.run_child([args.python, os.path.join(HERE, "torch_side.py"), "export", w.name, work],
                            os.path.join(work, "export"))
    blobs = {}
    for precision in precisions:
        r = run_bench.recipe(w, w.scheme("full"))
        r["precision"] = precision
        rpath = os.path.join(work, f"recipe_{precision}.json")
        with open(rpath, "w") as f:
            json.dump(r, f, indent=1)
        blobs[precision] = os.path.join(work, f"full_{precision}{tag}.pock")
        log(f"[{w.name}] compile {precision}{tag}")
        run_bench.run_child([os.path.join(build_dir, "pockc"), "compile", os.path.join(work, "model.onnx"),
                             "--recipe", rpath, "-o", blobs[precision]], os.path.join(work, f"compile_{precision}{tag}"))
    return blobs


def pockc_steps(args, blob, data, steps, steplog, logfile, cpu=None, watch=True, build_dir=None, rss=None):
    """pockc train (build_dir's, default --build-dir); returns its per-step records and, with
    watch, CPU ms per step; appends its peak RSS (MB) to the list rss."""
    if os.path.exists(steplog):
        os.remove(steplog)
    watched = [steplog] if watch else None
    _, peak_mb, _ = run_bench.run_child(
        [os.path.join(build_dir or args.build_dir, "pockc"), "train", blob, "--data", data, "--steps", str(steps),
         "--threads", str(args.threads), "--log", steplog], logfile, cpu=cpu, nice=args.nice, watch=watched)
    if rss is not None:
        rss.append(peak_mb)
    with open(steplog) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    cpu_ms = []
    if watched and len(watched) - 1 == len(recs):
        ends = watched[1:]
        cpu_ms = [(ends[k] - ends[k - 1]) / 1e6 for k in range(1, len(ends))]
    return recs, cpu_ms


def speed(args):
    out = {"threads": args.threads, "rounds": args.rounds, "workloads": {}}
    for name in args.only:
        w = workloads.by_name(name)
        work = os.path.join(args.work, name)
        blobs = prepare(w, args, work)
        # Our sides: (name, blob, build dir, file tag).
        our_sides = [(f"pockengine {p}", blobs[p], args.build_dir, p) for p in PRECISIONS]
        if args.before_build_dir:
            before = prepare(w, args, work, args.before_build_dir, ("bf16",), "_before")
            our_sides.append(("pockengine bf16 before", before["bf16"], args.before_build_dir, "bf16_before"))
        batch = os.path.join(work, "batch.npz")
        steps = max(1, round(w.steps * args.steps_scale))
        sides = {side: {"cpu_ms": [], "wall_ms": [], "rss_mb": [], "first_loss": None} for side in
                 [o[0] for o in our_sides] + ["pytorch fp32", "pytorch bf16 autocast"]}
        for r in range(args.rounds):
            for side, blob, build_dir, tag in our_sides:
                log(f"[{name}] round {r + 1} {side}")
                recs, cpu_ms = pockc_steps(args, blob, batch, w.warmup + steps,
                                           os.path.join(work, f"steps_{tag}_{r}.jsonl"),
                                           os.path.join(work, f"run_{tag}_{r}"), build_dir=build_dir,
                                           rss=sides[side]["rss_mb"])
                sides[side]["wall_ms"] += [x["ms"] for x in recs[w.warmup:]]
                sides[side]["cpu_ms"] += cpu_ms[max(0, w.warmup - 1):]
                sides[side]["first_loss"] = recs[0]["loss"]
            for side, extra in (("pytorch fp32", []), ("pytorch bf16 autocast", ["--autocast-bf16"])):
                log(f"[{name}] round {r + 1} {side}")
                stdout, peak_mb, _ = run_bench.run_child(
                    [args.python, os.path.join(HERE, "torch_side.py"), "train", name, "full", "--threads",
                     str(args.threads), "--steps", str(steps), "--warmup", str(w.warmup)] + extra,
                    os.path.join(work, f"run_torch_{len(extra)}_{r}"), nice=args.nice)
                j = run_bench.last_json(stdout)
                sides[side]["wall_ms"] += j["samples_ms"]
                sides[side]["cpu_ms"] += j["cpu_samples_ms"]
                sides[side]["rss_mb"].append(peak_mb)
                sides[side]["first_loss"] = j["losses"][0]
        med = {s: {"cpu_ms": run_bench.median(v["cpu_ms"]), "wall_ms": run_bench.median(v["wall_ms"]),
                   "peak_rss_mb": max(v["rss_mb"]), "first_loss": v["first_loss"], "samples": len(v["cpu_ms"])}
               for s, v in sides.items()}
        ours = med["pockengine bf16"]["cpu_ms"]
        out["workloads"][name] = {
            "title": w.title, "sides": med,
            "pockengine_bf16_vs_pytorch_fp32": med["pytorch fp32"]["cpu_ms"] / ours,
            "pockengine_bf16_vs_pytorch_bf16_autocast": med["pytorch bf16 autocast"]["cpu_ms"] / ours,
            "pockengine_bf16_vs_pockengine_fp32": med["pockengine fp32"]["cpu_ms"] / ours}
        if args.before_build_dir:
            out["workloads"][name]["pockengine_bf16_vs_before"] = med["pockengine bf16 before"]["cpu_ms"] / ours
    return out


def compare(fp32, bf16):
    diffs = [abs(a - b) for a, b in zip(fp32, bf16)]
    steps = [b - a for a, b in zip(fp32, fp32[1:])]
    return {"steps": len(diffs), "first_loss": [fp32[0], bf16[0]], "last_loss": [fp32[-1], bf16[-1]],
            "max_abs_diff": max(diffs), "mean_abs_diff": statistics.fmean(diffs),
            "fp32_step_noise": statistics.pstdev(steps),
            "max_diff_over_noise": max(diffs) / statistics.pstdev(steps)}


def curves(args):
    out = {"steps": args.steps, "threads": args.threads}
    w = workloads.by_name("llama-curve")
    work = os.path.join(args.work, "llama_curves")
    blobs = prepare(w, args, work)
    data = os.path.join(work, "batch.npz")
    losses = {}
    for precision in PRECISIONS:
        log(f"[llama] {args.steps} steps {precision}")
        recs, _ = pockc_steps(args, blobs[precision], data, args.steps, os.path.join(work, f"curve_{precision}.jsonl"),
                              os.path.join(work, f"curve_{precision}"), watch=False)
        losses[precision] = [x["loss"] for x in recs]
    out["llama"] = compare(losses["fp32"], losses["bf16"])
    out["llama"]["what"] = f"{w.title}, the same batch every step, full BP, SGD momentum 0.9, lr {run_bench.LR}"
    if args.demo_cache:
        out["demo"] = demo_curves(args)
    return out


def demo_curves(args):
    """examples/personalize's full recipe (EfficientNet-Lite0 + a new head, AdamW) in both precisions."""
    root = os.path.dirname(HERE)
    work = os.path.join(args.work, "demo_curves")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(args.demo_cache, "efficientnet_lite0_64.onnx")
    data = os.path.join(args.demo_cache, "fashion_mnist_64px_2000_1000")
    with open(os.path.join(root, "examples", "personalize", "recipes", "full.json")) as f:
        base = json.load(f)
    losses = {}
    for precision in PRECISIONS:
        r = dict(base, precision=precision)
        rpath, blob = os.path.join(work, f"full_{precision}.json"), os.path.join(work, f"full_{precision}.pock")
        with open(rpath, "w") as f:
            json.dump(r, f)
        run_bench.run_child([os.path.join(args.build_dir, "pockc"), "compile", model, "--recipe", rpath, "-o", blob],
                            os.path.join(work, f"compile_{precision}"))
        steplog = os.path.join(work, f"curve_{precision}.jsonl")
        if os.path.exists(steplog):
            os.remove(steplog)
        log(f"[demo] {args.steps} steps {precision}")
        run_bench.run_child([os.path.join(args.build_dir, "examples", "personalize", "personalize"), blob, "--train",
                             os.path.join(data, "train"), "--test", os.path.join(data, "test"), "--steps",
                             str(args.steps), "--eval-every", str(args.steps), "--threads", str(args.threads), "--log",
                             steplog, "--summary", os.path.join(work, f"summary_{precision}.json")],
                            os.path.join(work, f"run_{precision}"))
        with open(steplog) as f:
            losses[precision] = [json.loads(line)["loss"] for line in f if '"step"' in line and '"loss"' in line]
    res = compare(losses["fp32"], losses["bf16"])
    res["what"] = "examples/personalize full recipe (EfficientNet-Lite0 64px + 10-class head, AdamW 3e-4, batch 16)"
    for precision in PRECISIONS:
        with open(os.path.join(work, f"summary_{precision}.json")) as f:
            res[f"summary_{precision}"] = json.load(f)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["speed", "curves"])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--before-build-dir", help="speed: another build whose pockc runs bf16 beside (an earlier commit)")
    ap.add_argument("--python", default=sys.executable, help="Python with torch")
    ap.add_argument("--work", help="scratch folder (default BUILD/bf16)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--nice", type=int, default=-10)
    ap.add_argument("--only", nargs="*", default=["bert", "llama"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps-scale", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=200, help="curves: training steps per precision")
    ap.add_argument("--demo-cache", help="curves: examples/personalize/run.sh's demo-cache folder")
    args = ap.parse_args()
    args.work = args.work or os.path.join(args.build_dir, "bf16")
    print(json.dumps(speed(args) if args.what == "speed" else curves(args), indent=1))


if __name__ == "__main__":
    main()
