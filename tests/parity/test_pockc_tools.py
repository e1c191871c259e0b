#!/usr/bin/python3
"""pockc inspect, tune and bench on a small CNN: inspect's FLOPs against formulas computed here,
its memory against the compiler's --report, trainable parameters and channels against the recipe;
a profile from tune that is edited to prefer ref for Conv2d must change the blob's preferred and
bound backends; bench's per-op times must add up to (at most) the step time.

Usage: test_pockc_tools.py --pockc PATH. Exit 0 passed, 1 failed, 77 skipped (no torch/onnx).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

FAILURES = []
N, SIDE, CLASSES = 4, 16, 5


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def pockc(*args):
    p = subprocess.run([POCKC, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def pockc_json(*args):
    rc, out = pockc(*args, "--json")
    if rc != 0:
        print(out)
        return None
    return json.loads(out)


class Net(nn.Module):
    """conv1 3->8 (3x3, pad 1) -> relu -> conv2 8->16 (3x3, stride 2) -> relu -> fc 784->5."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2)
        self.fc = nn.Linear(16 * 7 * 7, CLASSES)

    def forward(self, x):
        return self.fc(torch.flatten(torch.relu(self.conv2(torch.relu(self.conv1(x)))), 1))


# FLOPs by the textbook formulas (a multiply-add is 2), from the layer sizes above.
CONV1_OUT = N * 8 * SIDE * SIDE
CONV2_OUT = N * 16 * 7 * 7
CONV1_FLOPS = 2 * CONV1_OUT * 3 * 3 * 3
CONV2_FLOPS = 2 * CONV2_OUT * 8 * 3 * 3
FC_FLOPS = 2 * N * CLASSES * 784
CONV2_CHANNELS = 4  # the recipe trains the first 4 of conv2's 16 output channels
CONV2_GRAD_WEIGHT_FLOPS = 2 * (CONV2_CHANNELS * 8 * 3 * 3) * (N * 7 * 7)
CONV2_GRAD_INPUT_FLOPS = 2 * CONV2_OUT * 8 * 3 * 3


def train_ops(report):
    return [o for o in report["ops"] if o["function"] == "train"]


def check_inspect(report, compiler_report):
    memory = compiler_report["memory"]
    check(all(report["memory"].get(k) == v for k, v in memory.items()),
          "inspect's memory numbers equal the compiler's --report")

    params = {p["name"]: p for p in report["parameters"]["list"]}
    trained = {name: (p["channels"], p["rows"]) for name, p in params.items() if p["trainable"]}
    check(trained == {"conv1.bias": (8, 8), "conv2.weight": (4, 16), "conv2.bias": (16, 16), "fc.weight": (5, 5),
                      "fc.bias": (5, 5)} and not params["conv1.weight"]["trainable"],
          "trainable parameters and conv2's partial channels are reported")
    check(report["parameters"]["trainable_elements"] == 8 + 4 * 8 * 9 + 16 + 5 * 784 + 5,
          "trainable elements count only the trained channels")
    check(report["memory"]["trainable_bytes"] == 4 * report["parameters"]["trainable_elements"],
          "trainable bytes (f32) count the same trained channels as the trainable elements")

    ops = train_ops(report)
    by_kind = {}
    for o in ops:
        by_kind.setdefault(o["op"], []).append(o)
    conv_flops = sorted(o["flops"] for o in by_kind.get("Conv2d", []))
    check(conv_flops == sorted([CONV1_FLOPS, CONV2_FLOPS]), f"Conv2d FLOPs {conv_flops} match 2*N*O*OH*OW*C*kh*kw")
    check([o["flops"] for o in by_kind.get("Linear", [])] == [FC_FLOPS], "Linear FLOPs match 2*N*out*in")
    check([o["flops"] for o in by_kind.get("Conv2dGradWeight", [])] == [CONV2_GRAD_WEIGHT_FLOPS],
          "Conv2dGradWeight of conv2 counts only the trained channels (sparse BP: none for frozen conv1)")
    check([o["flops"] for o in by_kind.get("Conv2dGradInput", [])] == [CONV2_GRAD_INPUT_FLOPS],
          "one Conv2dGradInput (conv2's; conv1's input gradient is pruned), FLOPs by formula")

    relu = (CONV1_OUT + CONV2_OUT) if "Relu" in by_kind else 0  # counted only if not fused into the convs
    flops = report["flops"]
    check(flops["forward"] == CONV1_FLOPS + CONV2_FLOPS + FC_FLOPS + relu,
          f"forward FLOPs {flops['forward']} = convs + fc (+ unfused relus)")
    for phase in ("forward", "loss", "backward", "optimizer"):
        total = sum(o["flops"] for o in ops if o["phase"] == phase)
        check(flops[phase] == total and total > 0, f"{phase} FLOPs are the sum of the phase's ops ({total})")
    check(flops["total"] == sum(flops[p] for p in ("forward", "loss", "backward", "optimizer")), "total FLOPs")
    check(all(o["phase"] == "optimizer" for o in by_kind.get("AdamUpdate", [])) and len(by_kind["AdamUpdate"]) == 5,
          "one optimizer update per trainable parameter, in the optimizer phase")

    backends = report["backends"]
    check(backends["bind_error"] is None and all(o["bound"] in backends["available"] for o in report["ops"]),
          "every op binds on this machine")
    check(all(o["preferred"] == o["bound"] for o in report["ops"]),
          "without a profile each op prefers the backend it binds (the heuristic)")


def check_tune_and_profile(d, onnx_path, recipe, blob, report):
    profile_path = os.path.join(d, "profile.json")
    rc, out = pockc("tune", blob, "-o", profile_path, "--repeats", "2")
    check(rc == 0 and os.path.exists(profile_path), "tune writes a profile")
    if rc != 0:
        print(out)
        return
    profile = json.load(open(profile_path))
    entries = profile["ops"]
    check(sum(e["count"] for e in entries) == len(report["ops"]), "the profile covers every op of the blob")
    check(all(e["median_us"] for e in entries), "every op was timed on at least one backend")
    convs = [e for e in entries if e["op"] == "Conv2d"]
    check(convs and all({"cpu", "ref"} <= set(e["median_us"]) for e in convs), "Conv2d was timed on cpu and on ref")
    with_algorithms = [e for e in entries if e["op"] in ("Conv2d", "Conv2dGradInput")]
    check(with_algorithms and all("im2col" in e.get("cpu_algorithm_us", {}) for e in with_algorithms),
          "tune times the cpu algorithms of every convolution (im2col runs them all)")
    winograd = [e["signature"] for e in convs if "winograd" in e["cpu_algorithm_us"]]
    check(winograd and all("strides=[1,1]" in s for s in winograd) and len(winograd) < len(convs),
          "Winograd is timed on conv1 (3x3, stride 1), not on conv2 (stride 2)")
    check(all("cpu_algorithm_us" not in e for e in entries if e not in with_algorithms),
          "only convolutions get cpu algorithm timings")
    fastest_algorithm = {}
    for e in with_algorithms:
        fastest_algorithm.setdefault(e["op"], set()).add(min(e["cpu_algorithm_us"], key=e["cpu_algorithm_us"].get))
    check(all("cpu_algorithm" not in o for o in report["ops"]), "without a profile no op names a cpu algorithm")

    for e in convs:  # force: ref is "measured" fastest for every Conv2d
        e["median_us"] = {"cpu": 1000.0, "ref": 1.0}
    json.dump(profile, open(profile_path, "w"))
    tuned_blob = os.path.join(d, "tuned.pock")
    rc, out = pockc("compile", onnx_path, "--recipe", recipe, "-o", tuned_blob, "--profile", profile_path)
    check(rc == 0, "compile --profile")
    tuned = pockc_json("inspect", tuned_blob)
    if tuned is None:
        FAILURES.append("inspect of the tuned blob")
        return
    convs = [o for o in tuned["ops"] if o["op"] == "Conv2d"]
    check(len(convs) == 6 and all(o["preferred"] == "ref" and o["bound"] == "ref" for o in convs),
          "a profile preferring ref for Conv2d makes every Conv2d prefer and bind ref")
    tuned_convs = [o for o in tuned["ops"] if o["op"] in fastest_algorithm]
    check(tuned_convs and all(o.get("cpu_algorithm") in fastest_algorithm[o["op"]] for o in tuned_convs),
          "compile --profile records each convolution's fastest cpu algorithm (inspect shows it)")
    fastest = {e["op"]: set() for e in entries}
    for e in entries:
        fastest[e["op"]].add(min(e["median_us"], key=e["median_us"].get))
    check(all(o["preferred"] in fastest[o["op"]] for o in tuned["ops"]), "every other op prefers its measured fastest")
    check(tuned["backends"]["choice"]["profiled_ops"] == len(tuned["ops"]), "the metadata says the profile decided")
    rc, out = pockc("inspect", tuned_blob, "--backend", "cpu", "--json")
    forced = json.loads(out) if rc == 0 else {"ops": []}
    check(all(o["bound"] == "cpu" for o in forced["ops"] if o["op"] == "Conv2d") and forced["ops"],
          "a caller's --backend still outranks the blob's preference")


def check_bench(blob, infer_blob):
    r = pockc_json("bench", blob, "--steps", "5", "--warmup", "1", "--per-op", "--threads", "1")
    if r is None:
        FAILURES.append("bench --per-op --json")
        return
    s = r["step_ms"]
    check(r["function"] == "train" and r["steps"] == 5 and len(r["samples_ms"]) == 5, "bench times 5 train steps")
    check(0 < s["min"] <= s["median"] <= s["p90"] <= s["max"], "min <= median <= p90 <= max")
    per_op = r["per_op"]
    ratio = per_op["ops_ms"] / s["mean"]
    check(0.5 <= ratio <= 1.0 + 1e-9, f"per-op times sum to about the step time ({ratio:.3f} of it)")
    phases = {p["phase"]: p for p in per_op["phases"]}
    check(set(phases) == {"forward", "loss", "backward", "optimizer"}, "per-op times are grouped by phase")
    check(abs(sum(p["ms"] for p in phases.values()) - per_op["ops_ms"]) < 1e-6, "phase times add up to the ops' time")
    check(all(abs(sum(k["ms"] for k in p["kinds"]) - p["ms"]) < 1e-6 for p in phases.values()),
          "op-kind times add up to their phase's time")
    top = per_op["top"]
    check(len(top) == 10 and all(a["ms"] >= b["ms"] for a, b in zip(top, top[1:])), "the top ops are the slowest first")
    check(phases["optimizer"]["kinds"][0]["op"] == "AdamUpdate", "the optimizer phase holds the Adam updates")

    rc, out = pockc("bench", blob, "--steps", "3", "--warmup", "0", "--per-op")
    check(rc == 0 and "median" in out and "p90" in out and "backward" in out, "bench prints a readable summary")
    r = pockc_json("bench", infer_blob, "--steps", "2")
    check(r is not None and r["function"] == "infer" and "per_op" not in r, "an inference blob benches infer()")


def main():
    global POCKC
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    POCKC = ap.parse_args().pockc
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as d:
        onnx_path = os.path.join(d, "net.onnx")
        torch.onnx.export(Net(), (torch.zeros(N, 3, SIDE, SIDE),), onnx_path, input_names=["x"],
                          output_names=["logits"], opset_version=17, do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING)
        recipe = os.path.join(d, "recipe.json")
        json.dump({"batch_size": N, "loss": {"type": "cross_entropy", "logits": "logits", "labels": "label"},
                   "optimizer": {"type": "adam", "lr": 1e-3},
                   "trainable": [{"match": "conv2.weight", "channels": CONV2_CHANNELS}, {"match": "*.bias"},
                                 {"match": "fc.*"}]}, open(recipe, "w"))
        blob, infer_blob, report_path = (os.path.join(d, n) for n in ("net.pock", "infer.pock", "report.json"))
        rc, out = pockc("compile", onnx_path, "--recipe", recipe, "-o", blob, "--report", report_path)
        if rc != 0 and "not built yet" in out:
            print("SKIP: " + out.strip().splitlines()[0])
            return 77
        check(rc == 0, "compile with a recipe and --report")
        rc, _ = pockc("compile", onnx_path, "-o", infer_blob)
        check(rc == 0, "compile an inference blob")

        for cmd in ("inspect", "tune", "bench"):
            rc, out = pockc(cmd, "--help")
            check(rc == 0 and f"usage: pockc {cmd}" in out, f"pockc {cmd} --help")
        rc, out = pockc("tune", blob)
        check(rc == 2 and "--output" in out, "tune without -o asks for it")
        rc, out = pockc("bench", blob, "--steps", "0")
        check(rc != 0 and "--steps" in out, "bench --steps 0 is refused")
        rc, out = pockc("inspect", os.path.join(d, "missing.pock"))
        check(rc == 1 and "missing.pock" in out, "inspect names a missing blob")

        report = pockc_json("inspect", blob)
        if report is None:
            FAILURES.append("inspect --json")
        else:
            check_inspect(report, json.load(open(report_path)))
            rc, out = pockc("inspect", blob)
            check(rc == 0 and "FLOPs per train step" in out and "channels 0..3 of 16" in out, "inspect's text summary")
            check_tune_and_profile(d, onnx_path, recipe, blob, report)
        check_bench(blob, infer_blob)
    print(f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
