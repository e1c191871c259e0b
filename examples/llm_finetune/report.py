#!/usr/bin/env python3
"""Prints examples/llm_finetune's runs side by side: usage: report.py OUT_DIR SCHEME..."""
import json
import os
import sys


def load(path):
    """A run's JSON, or None when it did not run or did not finish."""
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def main():
    out, schemes = sys.argv[1], sys.argv[2:]
    print(f"{'scheme':8} {'':10} {'ppl before':>10} {'ppl after':>10} {'tokens/s':>9} {'peak RSS MB':>12}")
    for s in schemes:
        ours, theirs = load(f"{out}/{s}.summary.json"), load(f"{out}/{s}.torch.json")
        for who, r in (("pock", ours), ("pytorch", theirs)):
            if r:
                print(f"{s:8} {who:10} {r['ppl_before']:10.2f} {r['ppl_after']:10.2f} {r['tokens_per_s']:9.1f} "
                      f"{r['peak_rss_mb']:12.0f}")
        if ours and theirs:
            print(f"{s:8} {'ratio':10} {'':10} {'':10} {ours['tokens_per_s'] / theirs['tokens_per_s']:8.2f}x "
                  f"{theirs['peak_rss_mb'] / ours['peak_rss_mb']:11.2f}x less")
    for s in schemes:
        ours = load(f"{out}/{s}.summary.json")
        if not ours:
            continue
        print(f"\n{s}: greedy samples before -> after fine-tuning")
        for p, b, a in zip(ours["prompts"], ours["samples_before"], ours["samples_after"]):
            print(f"  [{p}] {b!r}\n  {' ' * (len(p) + 2)} -> {a!r}")


if __name__ == "__main__":
    main()
