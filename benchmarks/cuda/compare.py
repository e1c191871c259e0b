"""The table and results JSON of benchmarks/cuda/check.sh: per (workload, scheme), PockEngine's
cuda steps/s (from `pockc train --log`) against PyTorch's on the same GPU (torch_peer.py).

  compare.py WORK_DIR OUT.json

WORK_DIR/<workload>/<scheme>.recipe.json names each case; <scheme>.{pock.jsonl,torch.json} are
the two sides' outputs, a missing one shown as "-". First run on an H200 on 2026-12-04 (benchmarks/RESULTS.md).
"""
import json
import os
import statistics
import sys


def pock_side(path, warmup):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    ms = [r["ms"] for r in recs[warmup:]]
    return {"samples_ms": ms, "losses": [r["loss"] for r in recs]} if ms else None


def torch_side(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = [line for line in f.read().splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def placement(path):
    """`pockc inspect`'s line on where the blob's ops run ("the blob prefers cpu x3, cuda x31, ...")."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            if "the blob prefers" in line:
                return line.strip().split("the blob prefers", 1)[1].split(",  chosen")[0].strip(" ,")
    return None


def planned_device_bytes(path):
    """The blob's device memory (`pockc inspect --json`, run on the GPU box): the cuda memory
    space's persistent region and arena peak, plus the kernels' workspace once bound there
    (cuBLAS, cuDNN). Torch's figure is its allocator's peak; neither counts the CUDA context or
    loaded kernel images. Host-side bytes of the blob (its mapped file) are not device memory."""
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            report = json.load(f)
        spaces = [s for s in report["backends"].get("memory_spaces", []) if s.get("backend") == "cuda"]
        if not spaces:
            return None
        total = sum(s["persistent_bytes"] + s["arena_bytes"] for s in spaces)
        return total + max(0, report["memory"].get("workspace_bytes", 0))
    except (ValueError, KeyError):
        return None


def max_loss_gap(a, b):
    """Largest |a_i - b_i| over the steps both sides ran: step-by-step parity on the GPU."""
    n = min(len(a), len(b))
    return max(abs(x - y) for x, y in zip(a[:n], b[:n])) if n else None


def add_full_bp_ratios(rows):
    """Issue 14's targets compare each sparse scheme with PyTorch's full BP of the same workload."""
    full = {r["workload"]: r for r in rows if r["scheme"] == "full"}
    for r in rows:
        f = full.get(r["workload"])
        if not f or r["scheme"] == "full":
            continue
        best = min(r.get("pock_ms", float("inf")), r.get("pock_graphs_ms", float("inf")))
        if "torch_ms" in f and best != float("inf"):
            r["speedup_vs_torch_full"] = f["torch_ms"] / best
        if "torch_peak_bytes" in f and r.get("pock_device_bytes"):
            r["memory_vs_torch_full"] = r["pock_device_bytes"] / f["torch_peak_bytes"]


def main():
    work, out_path = sys.argv[1], sys.argv[2]
    warmup = int(os.environ.get("WARMUP", "2"))
    rows = []
    for workload in sorted(os.listdir(work)):
        d = os.path.join(work, workload)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".recipe.json"):  # one per scheme asked for, whatever then failed
                continue
            scheme = name[: -len(".recipe.json")]
            pock = pock_side(os.path.join(d, scheme + ".pock.jsonl"), warmup)
            graphs = pock_side(os.path.join(d, scheme + ".graphs.jsonl"), warmup)
            peer = torch_side(os.path.join(d, scheme + ".torch.json"))
            row = {"workload": workload, "scheme": scheme,
                   "placement": placement(os.path.join(d, scheme + ".inspect.txt"))}
            device_bytes = planned_device_bytes(os.path.join(d, scheme + ".inspect.json"))
            if device_bytes:
                row["pock_device_bytes"] = device_bytes
            if pock:
                row["pock_ms"] = statistics.median(pock["samples_ms"])
                row["pock_first_loss"] = pock["losses"][0]
            if graphs:
                row["pock_graphs_ms"] = statistics.median(graphs["samples_ms"])
                row["pock_graphs_first_loss"] = graphs["losses"][0]
            if peer:
                row["torch_ms"] = statistics.median(peer["samples_ms"])
                row["torch_first_loss"] = peer["losses"][0]
                row["device"] = peer.get("device")
                if peer.get("peak_device_bytes"):
                    row["torch_peak_bytes"] = peer["peak_device_bytes"]
            if pock and peer:
                row["speedup_vs_torch"] = row["torch_ms"] / row["pock_ms"]
                row["max_loss_gap"] = max_loss_gap(pock["losses"], peer["losses"])
            if pock and graphs:
                row["graphs_max_loss_gap_vs_plain"] = max_loss_gap(pock["losses"], graphs["losses"])
            if graphs and peer:
                row["graphs_speedup_vs_torch"] = row["torch_ms"] / row["pock_graphs_ms"]
            rows.append(row)
    add_full_bp_ratios(rows)
    with open(out_path, "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    def cell(r, key, width, scale=None):
        if key not in r:
            return f"{'-':>{width}}"
        return f"{(1e3 / r[key] if scale else r[key]):{width}.2f}"

    print(f"{'workload':12} {'scheme':8} {'pock steps/s':>13} {'+graphs':>9} {'torch steps/s':>14} {'ratio':>6} "
          f"{'graphs':>7}  first loss (pock / torch), largest loss gap over the steps")
    for r in rows:
        losses = f"{r.get('pock_first_loss', float('nan')):.4f} / {r.get('torch_first_loss', float('nan')):.4f}"
        if r.get("max_loss_gap") is not None:
            losses += f", {r['max_loss_gap']:.1e}"
        print(f"{r['workload']:12} {r['scheme']:8} {cell(r, 'pock_ms', 13, 1)} {cell(r, 'pock_graphs_ms', 9, 1)} "
              f"{cell(r, 'torch_ms', 14, 1)} {cell(r, 'speedup_vs_torch', 6)} {cell(r, 'graphs_speedup_vs_torch', 7)}  "
              f"{losses}")
    print("device memory (MB: PockEngine's cuda space, persistent + arena + kernel workspace; PyTorch allocator peak) and the targets' "
          "ratios against PyTorch full BP (speed: the faster PockEngine run):")
    for r in rows:
        mb = lambda key: f"{r[key] / 2**20:.0f}" if key in r else "-"
        ratio = lambda key: f"{r[key]:.2f}" if key in r else "-"
        print(f"  {r['workload']:12} {r['scheme']:8} pock {mb('pock_device_bytes'):>7} MB  torch {mb('torch_peak_bytes'):>7} MB"
              f"  speed vs torch full {ratio('speedup_vs_torch_full'):>6}  memory / torch full "
              f"{ratio('memory_vs_torch_full'):>5}")
    for r in rows:
        print(f"{r['workload']} {r['scheme']}: ops by backend (Copy counted with its device): {r['placement']}")
    print(f"results: {out_path}")


if __name__ == "__main__":
    main()
