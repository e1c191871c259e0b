"""Puts the demo's runs side by side: a table on stdout and three SVG charts.

For each run NAME given, the folder RUNS holds what run.sh left there:
  NAME.report.json   the compiler's memory report (pockc compile --report)
  NAME.log.jsonl     the app's per-step log: {"step","loss","ms","cpu_ms"} and {"step","test_accuracy"}
  NAME.summary.json  the app's summary: accuracy before/after, time per step, peak RSS

    python3 report.py RUNS sparse full

The last run named is the baseline the others are compared with.
"""
import json
import sys
from pathlib import Path

import svg_chart

MB = 1e6
MEMORY_ROWS = [  # (label, key in the report's "memory" object)
    ("weights (all, read-only)", "weights_bytes"),
    ("trainable weights", "trainable_bytes"),
    ("optimizer state", "optimizer_state_bytes"),
    ("saved activations", "saved_activation_bytes"),
    ("arena (planned peak)", "arena_peak_bytes"),
]


def load_run(runs: Path, name: str) -> dict:
    log = [json.loads(line) for line in (runs / f"{name}.log.jsonl").read_text().splitlines() if line.strip()]
    return {
        "name": name,
        "memory": json.loads((runs / f"{name}.report.json").read_text())["memory"],
        "summary": json.loads((runs / f"{name}.summary.json").read_text()),
        "losses": [(e["step"], e["loss"]) for e in log if "loss" in e],
        "accuracy": [(e["step"], 100 * e["test_accuracy"]) for e in log if "test_accuracy" in e],
    }


def moving_average(points, window):
    out, total = [], 0.0
    for i, (x, y) in enumerate(points):
        total += y
        if i >= window:
            total -= points[i - window][1]
        out.append((x, total / min(i + 1, window)))
    return out


def mean_loss(points, last):
    tail = [y for _, y in points[-last:]]
    return sum(tail) / max(len(tail), 1)


def training_bytes(memory: dict) -> int:
    """What training adds on top of the read-only weights: optimizer state plus the arena."""
    return memory["optimizer_state_bytes"] + memory["arena_peak_bytes"]


def print_table(runs: list) -> None:
    names = [r["name"] for r in runs]
    rows = [
        ("held-out accuracy before", [f"{100 * r['summary']['accuracy_before']:.1f} %" for r in runs]),
        ("held-out accuracy after", [f"{100 * r['summary']['accuracy_after']:.1f} %" for r in runs]),
        ("training loss, last 20 steps", [f"{mean_loss(r['losses'], 20):.3f}" for r in runs]),
        ("steps x batch", [f"{r['summary']['steps']} x {r['summary']['batch_size']}" for r in runs]),
        ("time per step (wall)", [f"{r['summary']['ms_per_step']:.0f} ms" for r in runs]),
        ("CPU time per step", [f"{r['summary']['cpu_ms_per_step']:.0f} ms" for r in runs]),
    ]
    rows += [(label, [f"{r['memory'][key] / MB:.2f} MB" for r in runs]) for label, key in MEMORY_ROWS]
    rows.append(("training memory (opt. + arena)", [f"{training_bytes(r['memory']) / MB:.2f} MB" for r in runs]))
    rows.append(("peak RSS of the app", [f"{r['summary']['peak_rss_bytes'] / MB:.1f} MB" for r in runs]))
    width = max(len(label) for label, _ in rows) + 2
    print("".ljust(width) + "".join(n.rjust(14) for n in names))
    for label, values in rows:
        print(label.ljust(width) + "".join(v.rjust(14) for v in values))
    *sparse, full = runs
    for a in sparse:
        gain = 100 * (a['summary']['accuracy_after'] - full['summary']['accuracy_after'])
        print(f"{a['name']} vs {full['name']}: "
              f"{training_bytes(full['memory']) / training_bytes(a['memory']):.1f}x less planned training memory, "
              f"{full['summary']['cpu_ms_per_step'] / a['summary']['cpu_ms_per_step']:.1f}x less CPU time per step, "
              f"held-out accuracy {gain:+.1f} points")


def write_charts(runs: list, out: Path) -> list:
    loss, accuracy, memory = out / "loss.svg", out / "accuracy.svg", out / "memory.svg"
    window = 10
    svg_chart.line_chart(loss, f"Training loss ({window}-step moving average)", "step", "cross-entropy loss",
                         [(r["name"], moving_average(r["losses"], window), False) for r in runs], y_min=0)
    svg_chart.line_chart(accuracy, "Held-out accuracy", "step", "accuracy (%)",
                         [(r["name"], r["accuracy"], False) for r in runs], y_min=0, y_max=100)
    categories = [label for label, _ in MEMORY_ROWS] + ["peak RSS of the app"]
    groups = [(r["name"], [r["memory"][key] / MB for _, key in MEMORY_ROWS] + [r["summary"]["peak_rss_bytes"] / MB])
              for r in runs]
    svg_chart.bar_chart(memory, "Memory: the compiler's plan and the app's measured peak", "MB", categories, groups)
    return [loss, accuracy, memory]


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs_dir = Path(sys.argv[1])
    runs = [load_run(runs_dir, name) for name in sys.argv[2:]]
    print_table(runs)
    for path in write_charts(runs, runs_dir):
        print(f"chart: {path}")


if __name__ == "__main__":
    main()
