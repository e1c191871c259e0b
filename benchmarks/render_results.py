"""Renders run_bench.py's results JSON as the Markdown tables of benchmarks/RESULTS.md.

  python3 benchmarks/render_results.py build-bench/bench/results.json > tables.md

Standard library only; numbers are printed as measured, nothing is recomputed but ratios.
"""
import json
import sys

SIDES = {"pockengine": "PockEngine", "pytorch": "PyTorch eager", "onnxruntime": "ONNX Runtime",
         "tensorflow": "TensorFlow (tf.function)"}


def fmt(x, spec, none="-"):
    return none if x is None else format(x, spec)


def header(r):
    m = r["machine"]
    gp = r["gemm_peak"]
    lines = [
        f"Run of {r['date']}: {m.get('cpu', '?')}, {m.get('cpus')} cores, {fmt(m.get('mem_gb'), '.0f')} GiB; "
        f"commit {m.get('commit', '?')}"
        + (f" with {m['dirty_files']} modified tracked files; " if "dirty_files" in m else " (no git metadata); ") +
        f"{r['threads']} thread(s) per side; {r['rounds']} interleaved rounds; {r.get('wall_s', 0) / 60:.1f} min"
        + ("; PockEngine's convolution algorithms per layer by `pockc tune` (run_bench.py --tune)." if r.get("tuned")
           else "."),
        f"Load average (1 min) at start {r['load_start'][0]:.1f}, at end {fmt((r.get('load_end') or [None])[0], '.1f')}.",
        f"PyTorch {r['workloads'][0]['export']['torch'] if r['workloads'] else '?'} "
        f"({'pip wheel in BUILD_DIR/venv' if '/venv/' in r['python'] else 'system Python'}); "
        + (f"onnxruntime-training {r['onnxruntime']}." if r.get("onnxruntime")
           else f"ONNX Runtime training not run: {r.get('onnxruntime_unavailable')}."),
        f"sgemm peak (gemm_peak, OpenBLAS, one core, best square shape {gp['peak_shape']}, median of 3): "
        f"{gp['peak_gflops']:.1f} GFLOP/s per wall second ({gp['peak_gflops_cpu']:.1f} per CPU second).",
        f"Medians over all timed steps; {SIDES['pockengine']}'s CPU time per step from the process's "
        f"schedstat at each line of its step log, the Python sides' from process_time(). Speed ratios, "
        f"throughput, GFLOP/s and the fraction of the sgemm peak use the "
        f"{'CPU' if r['threads'] == 1 else 'wall'} time per step"
        + (f"; timed processes ran at nice {r['nice']}." if r.get("nice") else "."),
    ]
    return lines


def workload_table(w):
    unit = w["unit"]
    out = [f"### {w['title']}", ""]
    fl = {s: w["schemes"][s]["flops"]["total"] / 1e9 for s in w["schemes"]}
    out.append("FLOPs per step (pockc inspect): " + ", ".join(f"{n} {f:.2f} GFLOP" for n, f in fl.items()) + "; "
               f"{w['steps']} timed steps per side and scheme after {w['warmup']} warm-up steps per process; "
               f"load average {w['load_before'][0]:.1f} before, {w['load_after'][0]:.1f} after."
               + ("" if w.get("same_weights", True) else " **Weights differ between the sides (checksum).**"))
    out.append("")
    # The TensorFlow columns only where that side ran (run_bench.py --tf-python)
    with_tf = any("speedup_vs_tf_full" in e for s in w["schemes"].values() for e in s["sides"].values())
    out.append(f"| scheme | engine | step, CPU (ms) | step, wall (ms) | {unit}/s | peak RSS (MB) | GFLOP/s "
               f"| of sgemm peak | vs PyTorch full | vs PyTorch same scheme | "
               + ("vs TensorFlow full | vs TensorFlow same scheme | " if with_tf else "") + "CPU share |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if with_tf else "") + "---:|")
    for sname, s in w["schemes"].items():
        for side, e in s["sides"].items():
            if not e.get("basis_ms"):
                out.append(f"| {sname} | {SIDES.get(side, side)} | failed |" + " |" * (10 if with_tf else 8))
                continue
            cpu = e.get("cpu_share")
            out.append(f"| {sname} | {SIDES.get(side, side)} | {fmt(e.get('cpu_median_ms'), '.1f')} | "
                       f"{e['median_ms']:.1f} | {e['per_s']:.1f} | "
                       f"{e['peak_rss_mb']:.0f} | {e['gflops']:.1f} | {100 * e['peak_fraction']:.0f} % | "
                       f"{fmt(e.get('speedup_vs_torch_full'), '.2f')}x | {fmt(e.get('speedup_vs_torch_same'), '.2f')}x | "
                       + (f"{fmt(e.get('speedup_vs_tf_full'), '.2f')}x | {fmt(e.get('speedup_vs_tf_same'), '.2f')}x | "
                          if with_tf else "") + f"{fmt(cpu, '.2f')} |")
    for sname in w["schemes"]:
        for side, e in w["schemes"][sname]["sides"].items():
            if e.get("error"):
                out.append(f"\n{SIDES.get(side, side)} {sname} failed: `{e['error'].strip().splitlines()[-1]}`")
    if w.get("ort_errors"):
        for sname, err in w["ort_errors"].items():
            out.append(f"\nONNX Runtime artifacts ({sname}) failed: `{err.strip().splitlines()[-1]}`")
    pt = w["schemes"]["full"]["sides"].get("pytorch", {})
    if pt.get("rss_after_import_mb"):
        out.append("")
        out.append(f"PyTorch processes hold {pt['rss_after_import_mb']:.0f} MB after `import torch` alone "
                   f"({pt['rss_after_model_mb']:.0f} MB with the model built); PockEngine's peak RSS is pockc's whole "
                   f"process. First-step losses (same weights, same batch): "
                   + ", ".join(f"{SIDES.get(side, side)} {sname} {e['first_loss']:.6f}"
                               for sname in w["schemes"] for side, e in w["schemes"][sname]["sides"].items()
                               if e.get("first_loss") is not None) + ".")
    tf = w["schemes"]["full"]["sides"].get("tensorflow", {})
    if tf.get("rss_after_import_mb"):
        checks = w.get("torch_check_loss", {})
        out.append("")
        out.append(f"TensorFlow {tf.get('tensorflow', '?')} (tf-keras, one tf.function per step, NHWC) holds "
                   f"{tf['rss_after_import_mb']:.0f} MB after `import tensorflow`; its dropout-free first loss "
                   f"against PyTorch's: " + ", ".join(
                       f"{sname} {e['check_loss']:.6f} / {checks[sname]:.6f}"
                       for sname in w["schemes"] for side, e in w["schemes"][sname]["sides"].items()
                       if side == "tensorflow" and e.get("check_loss") is not None and sname in checks) + ".")
    mem = {s: w["schemes"][s]["memory"] for s in w["schemes"]}
    out.append("")
    out.append("Compiler's plan (MB): " + "; ".join(
        f"{s}: arena {m['arena_peak_bytes'] / 1e6:.1f}, optimizer state {m['optimizer_state_bytes'] / 1e6:.1f}, "
        f"weights {m['weights_bytes'] / 1e6:.1f}" for s, m in mem.items()) + ".")
    return out


def targets(w):
    out = []
    for t in w["targets"]:
        got = t["got"]
        if got is None:
            out.append(f"- {t['what']}: not measured (want >= {t['want']})")
            continue
        verdict = "met" if t["met"] else f"**missed** by {t['want'] / got:.2f}x"
        # The same FLOPs at the machine's sgemm peak the whole step: a ceiling for kernel work.
        if t.get("bound"):
            verdict += f"; ceiling at the sgemm peak {t['bound']:.2f}" + \
                ("" if t["bound"] >= t["want"] else " (below the target: only fewer FLOPs could meet it)")
        out.append(f"- {t['what']}: {got:.2f} (want >= {t['want']}) — {verdict}")
    return out


def per_op(w, sname="sparse"):
    s = w["schemes"][sname]
    po = s.get("per_op")
    if not po:
        return []
    out = [f"Per-op profile, PockEngine {sname} (`pockc bench --per-op --top 10`, step {po['step_ms']:.1f} ms "
           f"at CPU share {fmt(po.get('cpu_share'), '.2f')}, "
           f"outside ops {po['outside_ops_ms']:.1f} ms; GEMM kinds {po['gemm_ms']:.1f} ms at "
           f"{fmt(po['gemm_gflops'], '.1f')} GFLOP/s):", "",
           "| phase | op kind | count | ms/step | share | GFLOP/s |", "|---|---|---:|---:|---:|---:|"]
    for k in po["kinds"][:10]:
        out.append(f"| {k['phase']} | {k['op']} | {k['count']} | {k['ms']:.1f} | {100 * k['share']:.0f} % | "
                   f"{fmt(k['gflops'], '.1f')} |")
    out += ["", "| # | op | name | phase | backend | ms/step | share |", "|---:|---|---|---|---|---:|---:|"]
    for t in po["top"]:
        out.append(f"| {t['index']} | {t['op']} | `{t['name']}` | {t['phase']} | {t['backend']} | {t['ms']:.1f} | "
                   f"{100 * t['share']:.0f} % |")
    return out


def main():
    with open(sys.argv[1]) as f:
        r = json.load(f)
    lines = header(r) + [""]
    for w in r["workloads"]:
        lines += workload_table(w) + [""] + targets(w) + [""]
        # a profile of every scheme that missed a target, so the note can say where the time goes
        for sname in w["schemes"]:
            if any(not t["met"] and t.get("scheme", "sparse") == sname for t in w["targets"]):
                lines += per_op(w, sname) + [""]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
