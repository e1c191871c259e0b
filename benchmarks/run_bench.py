"""PockEngine against PyTorch eager (and ONNX Runtime training) on issue #6's four workloads.

run_all.sh builds pockc and gemm_peak and prepares the Python side, then runs this with that
Python. Per workload: export the seeded PyTorch model to ONNX, compile a full-BP blob and one per
sparse scheme (workloads.py; the CNNs have two), then run every (side, scheme) as its own process -- PockEngine (`pockc bench --json`),
PyTorch eager (torch_side.py train), ONNX Runtime (ort_side.py train) -- in interleaved rounds,
with the same thread count; with --tf-python also TensorFlow (tf_side.py train) on the CNNs.
Each process's peak RSS comes from wait4(). Writes the results JSON
(render_results.py turns it into RESULTS.md's tables) and prints a summary table.
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# Ops whose FLOPs are GEMMs in the cpu backend (OpenBLAS), for the per-kind efficiency figures.
GEMM_OPS = {"Linear", "MatMul", "LinearInputGrad", "LinearWeightGrad", "BatchMatMul"}
LR = 1e-3


def log(msg):
    print(msg, flush=True)


def task_cpu_ns(pid):
    """CPU time of every thread of a live process, in ns (/proc/PID/task/*/schedstat)."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError):
        pass
    return total


def run_child(cmd, logfile, env=None, cpu=None, nice=0, watch=None):
    """Runs cmd with stdout captured to a file; returns (stdout, peak RSS MB, wall s). wait4()
    gives this child's own rusage, so ru_maxrss is its peak resident memory alone; `cpu`, a
    list, receives the child's CPU seconds over its wall seconds (below 1 x threads when the
    machine's other work took the core from it). `nice` < 0 raises the child's priority where
    permitted. `watch`, a list holding a path, gets the child's CPU ns read each time a line is
    appended to that file (pockc train's per-step log), for CPU time per step."""
    def lift():
        try:
            os.nice(nice)
        except OSError:
            pass
    t0 = time.perf_counter()
    with open(logfile + ".out", "w") as out, open(logfile + ".err", "w") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, preexec_fn=lift if nice else None)
        if watch is not None:
            path, seen = watch[0], 0
            while True:
                pid, status, usage = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                try:
                    with open(path) as f:
                        lines = f.read().count("\n")
                except OSError:
                    lines = 0
                if lines > seen:
                    watch += [task_cpu_ns(p.pid)] * (lines - seen)
                    seen = lines
                time.sleep(0.002)
        else:
            _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if cpu is not None:
        cpu.append((usage.ru_utime + usage.ru_stime) / wall)
    with open(logfile + ".out") as f:
        stdout = f.read()
    if p.returncode != 0:
        with open(logfile + ".err") as f:
            tail = f.read()[-3000:]
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{tail}")
    return stdout, usage.ru_maxrss / 1024.0, wall


def last_json(stdout):
    """The child's report: its whole stdout (pockc's indented JSON) or its last JSON line."""
    try:
        return json.loads(stdout)
    except ValueError:
        pass
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError(f"no JSON report in: {stdout[-300:]}")


def gemm_peak(binary, work, nice=0):
    """Single-core sgemm peak: the best OpenBLAS square GEMM (median of 3) of gemm_peak, as
    GFLOP/s per wall second (the step times are wall times) and per CPU second."""
    cmd = [binary, "--benchmark_filter=BM_openblas", "--benchmark_min_time=0.3", "--benchmark_repetitions=3",
           "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    out, _, _ = run_child(cmd, os.path.join(work, "gemm_peak"), nice=nice)
    rows = []
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        dims = dict(part.split(":") for part in b["run_name"].split("/")[1:])
        m, n, k = int(dims["M"]), int(dims["N"]), int(dims["K"])
        flops = 2.0 * m * n * k
        unit = scale[b.get("time_unit", "ns")]
        rows.append({"m": m, "n": n, "k": k, "gflops_wall": flops / (b["real_time"] * unit) / 1e9,
                     "gflops_cpu": flops / (b["cpu_time"] * unit) / 1e9})
    square = [r for r in rows if r["m"] == r["n"] == r["k"]]
    best = max(square, key=lambda r: r["gflops_wall"])
    return {"shapes": rows, "peak_gflops": best["gflops_wall"], "peak_gflops_cpu": best["gflops_cpu"],
            "peak_shape": f"{best['m']}x{best['n']}x{best['k']}"}


def recipe(w, scheme):
    r = {"batch_size": next(iter(w.input_shapes.values()))[0][0],
         "loss": {"type": "cross_entropy", "logits": "logits", "labels": "label"},
         "optimizer": {"type": "sgd", "lr": LR, "momentum": 0.9}}
    if scheme.rules:
        r["trainable"] = scheme.rules
    if scheme.freeze_bn_stats:
        r["freeze_batchnorm_stats"] = True
    return r


def kind_flops(inspect, function="train"):
    """FLOPs per (phase, op kind) of the step function, from pockc inspect --json."""
    out = {}
    for op in inspect["ops"]:
        if op["function"] == function:
            key = (op["phase"], op["op"])
            out[key] = out.get(key, 0) + op["flops"]
    return out


def per_op_summary(per_op, flops_by_kind):
    """Per-op profile with GFLOP/s per op kind (the kind's FLOPs over its measured time)."""
    kinds = []
    for ph in per_op["phases"]:
        for k in ph["kinds"]:
            f = flops_by_kind.get((ph["phase"], k["op"]), 0)
            kinds.append({"phase": ph["phase"], "op": k["op"], "count": k["count"], "ms": k["ms"],
                          "share": k["share"], "gflops": (f / (k["ms"] * 1e-3) / 1e9) if k["ms"] > 0 and f else None})
    kinds.sort(key=lambda k: -k["ms"])
    gemm_ms = sum(k["ms"] for k in kinds if k["op"] in GEMM_OPS)
    gemm_f = sum(flops_by_kind.get((k["phase"], k["op"]), 0) for k in kinds if k["op"] in GEMM_OPS)
    return {"ops_ms": per_op["ops_ms"], "outside_ops_ms": per_op["outside_ops_ms"], "kinds": kinds,
            "top": per_op["top"], "gemm_ms": gemm_ms,
            "gemm_gflops": gemm_f / (gemm_ms * 1e-3) / 1e9 if gemm_ms > 0 else None}


def median(xs):
    return statistics.median(xs) if xs else None


def bench_workload(w, args, env, peak, ort_ok):
    import workloads
    work = os.path.join(args.work, w.name)
    os.makedirs(work, exist_ok=True)
    py, pockc, T = args.python, args.pockc, args.threads
    res = {"name": w.name, "title": w.title, "unit": w.unit, "units_per_step": w.units_per_step,
           "load_before": os.getloadavg()}
    steps = max(1, round(w.steps * args.steps_scale))
    warmup = w.warmup
    rounds = min(args.rounds, steps)
    res.update(steps=steps, warmup=warmup, rounds=rounds)

    # 1. the model, seeded, as ONNX (ORT's models of schemes with frozen BatchNorms have those in
    # eval form: model_ort_<scheme>.onnx)
    schemes = w.schemes()
    onnx_path = os.path.join(work, "model.onnx")
    ort_paths = {n: os.path.join(work, f"model_ort_{n}.onnx") for n, s in schemes.items()
                 if ort_ok and w.ort and s.freeze_bn_stats}
    need_ort_sparse = bool(ort_paths)
    if args.reuse and os.path.exists(onnx_path) and os.path.exists(onnx_path + ".json") and \
            all(os.path.exists(p) for p in ort_paths.values()):
        with open(onnx_path + ".json") as f:
            exp = json.load(f)
    else:
        log(f"[{w.name}] export ONNX")
        cmd = [py, os.path.join(HERE, "torch_side.py"), "export", w.name, work]
        if need_ort_sparse:
            cmd.append("--ort-sparse")
        out, _, _ = run_child(cmd, os.path.join(work, "export"), env)
        exp = last_json(out)
        with open(onnx_path + ".json", "w") as f:
            json.dump(exp, f)
    res["export"] = {"checksum": exp["checksum"], "torch": exp["torch"]}

    # 2. blobs, their FLOPs and the compiler's memory report
    res["schemes"] = {}
    for sname, scheme in schemes.items():
        rpath = os.path.join(work, f"{sname}.json")
        with open(rpath, "w") as f:
            json.dump(recipe(w, scheme), f, indent=1)
        blob = os.path.join(work, f"{sname}.pock")
        profile_args, tune_s = [], None
        if args.tune:
            # `pockc tune` on this machine (docs/pockc.md, *Convolution algorithms*): a blob compiled
            # NCHW throughout has every convolution timed with every cpu algorithm; the scheme's blob
            # compiled with that profile runs the fastest per layer, and lays out channels-last only
            # the frozen chains where XNNPACK won.
            nchw_blob, profile = os.path.join(work, f"{sname}_nchw.pock"), os.path.join(work, f"{sname}_profile.json")
            log(f"[{w.name}] pockc tune {sname}")
            run_child([pockc, "compile", onnx_path, "--recipe", rpath, "--no-layout", "-o", nchw_blob],
                      os.path.join(work, f"compile_nchw_{sname}"), env)
            _, _, tune_s = run_child([pockc, "tune", nchw_blob, "-o", profile, "--threads", str(T)],
                                     os.path.join(work, f"tune_{sname}"), env, nice=args.nice)
            profile_args = ["--profile", profile]
        log(f"[{w.name}] pockc compile {sname}")
        _, rss, wall = run_child([pockc, "compile", onnx_path, "--recipe", rpath, "-o", blob] + profile_args,
                                 os.path.join(work, f"compile_{sname}"), env)
        out, _, _ = run_child([pockc, "inspect", blob, "--json"], os.path.join(work, f"inspect_{sname}"), env)
        ins = json.loads(out)
        res["schemes"][sname] = {"recipe": recipe(w, scheme), "compile_s": wall, "compile_peak_rss_mb": rss,
                                 "flops": ins["flops"], "memory": ins["memory"], "sides": {}, "tune_s": tune_s}
        res["schemes"][sname]["_kind_flops"] = kind_flops(ins)

    # 3. ONNX Runtime training artifacts (not timed)
    ort_dirs = {}
    if ort_ok and w.ort:
        for sname in schemes:
            d = os.path.join(work, f"ort_{sname}")
            model = ort_paths.get(sname, onnx_path)
            log(f"[{w.name}] onnxruntime artifacts {sname}")
            try:
                run_child([py, os.path.join(HERE, "ort_side.py"), "artifacts", w.name, sname, model, d],
                          os.path.join(work, f"ort_artifacts_{sname}"), env)
                ort_dirs[sname] = d
            except RuntimeError as e:
                res.setdefault("ort_errors", {})[sname] = str(e)[-600:]
                log(f"[{w.name}] onnxruntime artifacts {sname} failed: {str(e)[-300:]}")

    # 3b. TensorFlow (opt-in): PyTorch's dropout-free first loss per scheme, which the TF side
    # must reproduce from the same ONNX weights before it times anything.
    tf_sides = []
    if args.tf_python and w.tf:
        out, _, _ = run_child([py, os.path.join(HERE, "torch_side.py"), "check-loss", w.name],
                              os.path.join(work, "check_loss"), env)
        res["torch_check_loss"] = last_json(out)
        tf_sides = [("tensorflow", [])]

    # 4. interleaved rounds: every side and scheme once per round, each a fresh process. PockEngine
    # runs `pockc train` on the batch PyTorch trains on (its per-step log has the step time and
    # the loss, which must match PyTorch's first loss), not bench's synthetic all-zero token ids.
    per_round = max(1, math.ceil(steps / rounds))
    batch = os.path.join(work, "batch.npz")
    for r in range(rounds):
        for sname in schemes:
            steplog = os.path.join(work, f"train_{sname}_{r}.jsonl")
            if os.path.exists(steplog):
                os.remove(steplog)
            sides = [("pockengine", [pockc, "train", os.path.join(work, f"{sname}.pock"), "--data", batch, "--steps",
                                     str(warmup + per_round), "--threads", str(T), "--log", steplog]),
                     ("pytorch", [py, os.path.join(HERE, "torch_side.py"), "train", w.name, sname, "--threads", str(T),
                                  "--steps", str(per_round), "--warmup", str(warmup)])]
            if sname in ort_dirs:
                sides.append(("onnxruntime", [py, os.path.join(HERE, "ort_side.py"), "train", w.name, ort_dirs[sname],
                                              "--threads", str(T), "--steps", str(per_round), "--warmup", str(warmup)]))
            for side, extra in tf_sides:
                sides.append((side, [args.tf_python, os.path.join(HERE, "tf_side.py"), "train", w.name, sname,
                                     onnx_path, batch, "--threads", str(T), "--steps", str(per_round), "--warmup",
                                     str(warmup), "--lr", str(LR), "--expect-loss",
                                     str(res["torch_check_loss"][sname])] + extra))
            for side, cmd in sides:
                log(f"[{w.name}] round {r + 1}/{rounds} {sname} {side}")
                t_load = os.getloadavg()[0]
                cpu, watch = [], ([steplog] if side == "pockengine" else None)
                try:
                    out, rss, wall = run_child(cmd, os.path.join(work, f"run_{sname}_{side}_{r}"), env, cpu,
                                               args.nice, watch)
                    if side == "pockengine":
                        with open(steplog) as f:
                            recs = [json.loads(line) for line in f if line.strip()]
                        # CPU ns at the end of each step; the first step's start is not seen, so
                        # step k's CPU time is the difference to step k-1's end (k >= warmup >= 1).
                        ends = watch[1:]
                        cpu_ms = [(ends[k] - ends[k - 1]) / 1e6 for k in range(max(1, warmup), len(ends))]
                        out = json.dumps({"samples_ms": [x["ms"] for x in recs[warmup:]],
                                          "cpu_samples_ms": cpu_ms if len(ends) == len(recs) else [],
                                          "losses": [x["loss"] for x in recs]})
                except RuntimeError as e:
                    entry = res["schemes"][sname]["sides"].setdefault(side, {"samples_ms": [], "peak_rss_mb": 0})
                    entry["error"] = str(e)[-600:]
                    log(f"[{w.name}] {side} {sname} failed: {str(e)[-300:]}")
                    continue
                j = last_json(out)
                entry = res["schemes"][sname]["sides"].setdefault(side, {"samples_ms": [], "peak_rss_mb": 0,
                                                                         "load": []})
                entry["samples_ms"] += j["samples_ms"]
                entry.setdefault("cpu_samples_ms", []).extend(j.get("cpu_samples_ms", []))
                entry["peak_rss_mb"] = max(entry["peak_rss_mb"], rss)
                entry.setdefault("load", []).append(t_load)
                entry.setdefault("cpu_shares", []).append(cpu[0])
                entry.setdefault("first_loss", j["losses"][0])
                for key in ("rss_after_import_mb", "rss_after_model_mb", "checksum", "trainable_params",
                            "masked_weights", "torch", "onnxruntime", "tensorflow", "check_loss", "xla"):
                    if key in j:
                        entry[key] = j[key]

    # 5. per-op profiles of the PockEngine steps (separate runs: op timing adds clock reads)
    for sname in schemes:
        log(f"[{w.name}] pockc bench --per-op {sname}")
        cpu = []
        out, _, _ = run_child([pockc, "bench", os.path.join(work, f"{sname}.pock"), "--steps",
                               str(max(2, min(5, steps // 2))), "--warmup", "1", "--threads", str(T), "--per-op",
                               "--top", "10", "--json"], os.path.join(work, f"perop_{sname}"), env, cpu, args.nice)
        po = json.loads(out)
        s = res["schemes"][sname]
        s["per_op"] = per_op_summary(po["per_op"], s.pop("_kind_flops"))
        s["per_op"]["step_ms"] = po["step_ms"]["median"]
        s["per_op"]["cpu_share"] = cpu[0] / T

    # 6. figures. With one thread the comparisons use CPU time per step, which the machine's
    # other work does not stretch (wall time is reported beside it); with more, wall time.
    basis = "cpu_samples_ms" if T == 1 else "samples_ms"
    res["basis"] = "cpu" if T == 1 else "wall"
    full_torch = median(res["schemes"]["full"]["sides"].get("pytorch", {}).get(basis, []))
    full_tf = median(res["schemes"]["full"]["sides"].get("tensorflow", {}).get(basis, []))
    for sname, s in res["schemes"].items():
        same_torch = median(s["sides"].get("pytorch", {}).get(basis, []))
        same_tf = median(s["sides"].get("tensorflow", {}).get(basis, []))
        for side, e in s["sides"].items():
            e["median_ms"] = median(e["samples_ms"])
            e["cpu_median_ms"] = median(e.get("cpu_samples_ms", []))
            m = median(e.get(basis, []))
            e["basis_ms"] = m
            if not m:
                continue
            e["cpu_share"] = min(e["cpu_shares"]) / T
            e["per_s"] = w.units_per_step / (m * 1e-3)
            e["gflops"] = s["flops"]["total"] / (m * 1e-3) / 1e9
            e["peak_fraction"] = e["gflops"] / ((peak["peak_gflops_cpu"] if T == 1 else peak["peak_gflops"]) * T)
            e["speedup_vs_torch_full"] = full_torch / m if full_torch else None
            e["speedup_vs_torch_same"] = same_torch / m if same_torch else None
            if full_tf:  # the paper's headline is over TensorFlow (graph mode, no XLA)
                e["speedup_vs_tf_full"] = full_tf / m
                e["speedup_vs_tf_same"] = same_tf / m if same_tf else None
            if full_torch:
                e["rss_vs_torch_full"] = e["peak_rss_mb"] / res["schemes"]["full"]["sides"]["pytorch"]["peak_rss_mb"]
    if "pytorch" in res["schemes"]["full"]["sides"]:
        ck = res["schemes"]["full"]["sides"]["pytorch"].get("checksum")
        res["same_weights"] = ck is not None and abs(ck - exp["checksum"]) <= 1e-6 * abs(exp["checksum"])
    # Same weights and batch: the first step's loss (before any update) agrees across sides, up to
    # float32 summation order -- and to Dropout's random mask where the model has one.
    for sname, s in res["schemes"].items():
        ref = s["sides"].get("pytorch", {}).get("first_loss")
        for side, e in s["sides"].items():
            if ref is not None and e.get("first_loss") is not None:
                e["first_loss_rel_diff"] = abs(e["first_loss"] - ref) / max(abs(ref), 1e-12)
    res["load_after"] = os.getloadavg()
    res["targets"] = targets(w, res, peak, T)
    return res


def targets(w, res, peak, T):
    """Issue #6's targets for this workload, for each sparse scheme: [{scheme, what, want, got, met}]."""
    out = []
    fu = res["schemes"]["full"]["sides"].get("pockengine", {})
    tf = res["schemes"]["full"]["sides"].get("pytorch", {})
    cnn = w.unit == "images"
    peak_gflops = (peak["peak_gflops_cpu"] if T == 1 else peak["peak_gflops"]) * T

    def bound(torch_side, flops):
        """The speed-up a step of `flops` would have over that PyTorch step if it ran at the
        sgemm peak the whole time: what no kernel work can beat without doing fewer FLOPs."""
        m = torch_side.get("basis_ms")
        return m / (flops / peak_gflops / 1e9 * 1e3) if m else None

    for sname in (n for n in res["schemes"] if n != "full"):
        sp = res["schemes"][sname]["sides"].get("pockengine", {})
        if not sp.get("basis_ms"):
            continue
        flops = res["schemes"][sname]["flops"]["total"]
        same = res["schemes"][sname]["sides"].get("pytorch", {})
        if cnn:
            out.append({"scheme": sname, "what": f"PockEngine {sname} vs PyTorch full BP (speed)", "want": 8.0,
                        "got": sp.get("speedup_vs_torch_full"), "bound": bound(tf, flops)})
        out.append({"scheme": sname, "what": f"PockEngine {sname} vs PyTorch same scheme (speed)",
                    "want": 2.0 if cnn else 1.5, "got": sp.get("speedup_vs_torch_same"), "bound": bound(same, flops)})
        if tf.get("peak_rss_mb"):
            out.append({"scheme": sname, "what": f"PyTorch full BP peak RSS / PockEngine {sname} peak RSS",
                        "want": 4.0, "got": tf["peak_rss_mb"] / sp["peak_rss_mb"]})
        # GEMM-bound steps: the transformers' (their FLOPs are almost all Linear/MatMul).
        if not cnn:
            out.append({"scheme": sname, "what": f"PockEngine {sname} step, fraction of the sgemm peak x threads",
                        "want": 0.70, "got": sp["peak_fraction"]})
    if not cnn and fu.get("basis_ms"):
        out.append({"scheme": "full", "what": "PockEngine full step, fraction of the sgemm peak x threads",
                    "want": 0.70, "got": fu["peak_fraction"]})
    for t in out:
        t["met"] = t["got"] is not None and t["got"] >= t["want"]
    return out


def machine_info():
    info = {"platform": platform.platform(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            info["mem_gb"] = int(f.readline().split()[1]) / 1024 / 1024
    except OSError:
        pass
    try:
        rev = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        if rev.returncode == 0:
            info["commit"] = rev.stdout.strip()
            dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True).stdout.strip()
            info["dirty_files"] = len(dirty.splitlines()) if dirty else 0
    except OSError:
        pass
    if not info.get("commit"):  # a source tree without .git (git archive): say which commit it is
        info["commit"] = os.environ.get("BENCH_COMMIT", "unknown")
    return info


def print_table(results):
    with_tf = any("speedup_vs_tf_full" in e for r in results["workloads"] for s in r["schemes"].values()
                  for e in s["sides"].values())
    hdr = f"{'workload':<12} {'scheme':<11} {'side':<14} {'wall ms':>10} {'CPU ms':>8} {'per s':>9} {'peak RSS MB':>11} " \
          f"{'GFLOP/s':>8} {'% peak':>7} {'vs PT full':>10} {'vs PT same':>10}" + \
          (f" {'vs TF full':>10} {'vs TF same':>10}" if with_tf else "")
    log("\n" + hdr)
    log("-" * len(hdr))
    for r in results["workloads"]:
        for sname, s in r["schemes"].items():
            for side, e in s["sides"].items():
                if not e.get("basis_ms"):
                    log(f"{r['name']:<12} {sname:<11} {side:<14} failed")
                    continue
                tf_cols = f" {e.get('speedup_vs_tf_full') or 0:>9.2f}x {e.get('speedup_vs_tf_same') or 0:>9.2f}x" \
                    if with_tf else ""
                log(f"{r['name']:<12} {sname:<11} {side:<14} {e['median_ms']:>10.1f} {e['cpu_median_ms'] or 0:>8.1f} "
                    f"{e['per_s']:>9.1f} "
                    f"{e['peak_rss_mb']:>11.0f} {e['gflops']:>8.1f} {100 * e['peak_fraction']:>6.0f}% "
                    f"{e['speedup_vs_torch_full'] or 0:>9.2f}x {e['speedup_vs_torch_same'] or 0:>9.2f}x" + tf_cols)
        for t in r["targets"]:
            got = "n/a" if t["got"] is None else f"{t['got']:.2f}"
            at_peak = f"; at the sgemm peak at most {t['bound']:.2f}" if t.get("bound") else ""
            log(f"  target {'met ' if t['met'] else 'MISS'}: {t['what']}: {got} (want >= {t['want']}{at_peak})")
    log(f"sgemm peak (one core, OpenBLAS {results['gemm_peak']['peak_shape']}): "
        f"{results['gemm_peak']['peak_gflops']:.1f} GFLOP/s per wall second, "
        f"{results['gemm_peak']['peak_gflops_cpu']:.1f} per CPU second; ratios, per s and GFLOP/s use "
        f"{'CPU' if results['threads'] == 1 else 'wall'} time per step")
    log("PockEngine's convolution algorithms: " + ("per layer by `pockc tune` on this machine" if results.get("tuned")
                                                    else "the built-in rule (--tune: per layer by `pockc tune`)"))


def main():
    import workloads
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--python", default=sys.executable, help="Python with torch for the PyTorch side")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds per workload")
    ap.add_argument("--steps-scale", type=float, default=1.0, help="scale every workload's timed steps")
    ap.add_argument("--only", nargs="*", help="workload names (default: the four of workloads(); mobilenetv2-224 runs only when named)")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--tf-python", help="Python with TensorFlow (prepare_tf.sh): adds the TensorFlow side on the CNNs")
    ap.add_argument("--nice", type=int, default=-10,
                    help="niceness of the timed processes (negative: ahead of other work, where permitted)")
    ap.add_argument("--reuse", action="store_true", help="reuse ONNX exports from an earlier run")
    ap.add_argument("--tune", action="store_true",
                    help="per-layer cpu convolution algorithms from `pockc tune` on this machine (compile --profile)")
    ap.add_argument("--out", help="results JSON (default BUILD/bench/results.json)")
    args = ap.parse_args()
    args.pockc = os.path.join(args.build_dir, "pockc")
    args.work = os.path.join(args.build_dir, "bench")
    os.makedirs(args.work, exist_ok=True)
    out_path = args.out or os.path.join(args.work, "results.json")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads), PYTHONWARNINGS="ignore", ORT_LOGGING_LEVEL="3",
               TF_CPP_MIN_LOG_LEVEL="2")

    ort_ok, ort_why = False, "--no-ort"
    if not args.no_ort:
        p = subprocess.run([args.python, "-c", "import torch, onnxruntime; from onnxruntime.training.api import Module;"
                            " print(onnxruntime.__version__)"], capture_output=True, text=True, env=env)
        ort_ok = p.returncode == 0
        ort_why = p.stdout.strip() if ort_ok else (p.stderr.strip().splitlines() or ["import failed"])[-1]
    log(f"onnxruntime-training: {ort_why if ort_ok else 'not available: ' + ort_why}")

    t0 = time.time()
    results = {"date": datetime.date.today().isoformat(), "threads": args.threads, "rounds": args.rounds,
               "tuned": args.tune,
               "nice": args.nice,
               "machine": machine_info(), "load_start": os.getloadavg(), "python": args.python,
               "onnxruntime": ort_why if ort_ok else None, "onnxruntime_unavailable": None if ort_ok else ort_why}
    log("gemm_peak")
    results["gemm_peak"] = gemm_peak(os.path.join(args.build_dir, "gemm_peak"), args.work, args.nice)
    log(f"sgemm peak: {results['gemm_peak']['peak_gflops']:.1f} GFLOP/s")
    results["workloads"] = []
    named_only = [w for w in workloads.resolution_workloads() if args.only and w.name in args.only]
    for w in workloads.workloads() + named_only:
        if args.only and w.name not in args.only:
            continue
        results["workloads"].append(bench_workload(w, args, env, results["gemm_peak"], ort_ok))
        with open(out_path, "w") as f:
            json.dump(results, f, indent=1)
    results["load_end"] = os.getloadavg()
    results["wall_s"] = time.time() - t0
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)
    print_table(results)
    log(f"results: {out_path} ({results['wall_s']:.0f} s)")
    # A TensorFlow side that did not reproduce PyTorch's first loss trained another model: the
    # run fails (its error is in the JSON) rather than print a ratio against it.
    bad = [f"{r['name']} {sname} {side}" for r in results["workloads"] for sname, s in r["schemes"].items()
           for side, e in s["sides"].items() if side.startswith("tensorflow") and "first loss" in e.get("error", "")]
    if bad:
        sys.exit(f"TensorFlow's first loss is not PyTorch's: {', '.join(bad)}")


if __name__ == "__main__":
    main()
