#!/usr/bin/python3
"""A Keras model exported by tf2onnx, imported and trained by pockc, checked against what
TensorFlow computed (docs/onnx.md, "TensorFlow"). The fixture (mobilenetv2_mini.onnx,
reference.npz) is written by make_fixture.py, by hand, with TensorFlow; this check needs only
pockc and numpy, so it runs everywhere the test suite does.

  inference  pockc compile --input-shape x=4,16,16,3 + pockc infer on 8 images (two batches)
             against Keras's model(x, training=False);
  training   per scheme of schemes.py (plain SGD, SGD with momentum, the head only with
             freeze_batchnorm_stats), pockc compile --recipe + pockc train for the same steps on
             the same batches: each step's loss, every trained tensor after the last step, the
             BatchNorm running statistics (read from a checkpoint), frozen tensors unchanged.

usage: check_tf2onnx.py --pockc PATH [--work DIR]     exit 0 pass, 1 mismatch, 77 skipped
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

SKIP = 77
try:
    import numpy as np
except ImportError as e:  # ctest on a machine without Debian's python3-numpy
    print(f"SKIP: {e} (install python3-numpy; run with /usr/bin/python3)")
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from schemes import BATCH, IMAGE, SCHEMES, STEPS  # noqa: E402

MODEL = os.path.join(HERE, "mobilenetv2_mini.onnx")
REFERENCE = os.path.join(HERE, "reference.npz")

# Tolerances, as in the PyTorch parity suite (docs/parity.md). TensorFlow and pock sum in
# different orders (TF's Conv2D in NHWC, its fused batch norm), so each op differs by a few float32
# ulps; through ~30 ops that stays orders of magnitude below these bounds.
INFER_REL = 1e-4    # max |pock - tf| / max |tf| over the logits
LOSS_REL = 1e-4     # |loss_pock - loss_tf| / |loss_tf| at every step
WEIGHT_REL = 1e-3   # per tensor: max |w_pock - w_tf| / max |w_tf|
# Running statistics move by a hundredth of the batch statistics per step (momentum 0.99): their
# change is compared, not the value, or a wrong momentum would hide under the unchanged part.
STATE_REL = 1e-3    # per tensor: max |d_pock - d_tf| / max |d_tf|, d = final - initial


class Mismatch(Exception):
    pass


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise Mismatch(f"{' '.join(cmd)} failed ({p.returncode}):\n{(p.stderr or p.stdout).strip()}")
    return p.stdout


def rel_err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        raise Mismatch(f"shape {got.shape} != expected {want.shape}")
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-12))


def read_checkpoint(path):
    """name -> raw bytes of a pock checkpoint (layout in src/runtime/checkpoint.cpp: "POCKCKPT",
    u32 version, u32 fingerprint, i64 step, u32 count, per tensor u32 name length, name,
    u64 nbytes, bytes; then a CRC-32)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"POCKCKPT":
        raise Mismatch(f"{path}: not a pock checkpoint")
    pos = 8 + 4 + 4 + 8
    (count,) = struct.unpack_from("<I", data, pos)
    pos += 4
    tensors = {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        name = data[pos + 4:pos + 4 + n].decode()
        pos += 4 + n
        (nbytes,) = struct.unpack_from("<Q", data, pos)
        tensors[name] = data[pos + 8:pos + 8 + nbytes]
        pos += 8 + nbytes
    return tensors


def check_infer(ref, pockc, work):
    blob, data, out = (os.path.join(work, f) for f in ("infer.pock", "infer_data.npz", "infer_out.npz"))
    run([pockc, "compile", MODEL, "--input-shape", f"x={BATCH},{IMAGE},{IMAGE},3", "-o", blob])
    np.savez(data, x=ref["infer_x"])
    run([pockc, "infer", blob, "--data", data, "--out", out])
    err = rel_err(np.load(out)["fc"], ref["infer_logits"])
    if err > INFER_REL:
        raise Mismatch(f"logits differ from TensorFlow's: max rel error {err:.3g} > {INFER_REL}")
    return f"logits max rel error {err:.1e}"


def check_scheme(ref, pockc, work, scheme, optimizer, rules):
    recipe = {"batch_size": BATCH, "optimizer": optimizer,
              "loss": {"type": "cross_entropy", "logits": "fc", "labels": "label"}}
    if rules is not None:
        recipe["trainable"] = rules
        recipe["freeze_batchnorm_stats"] = True   # Keras: a frozen BatchNormalization runs in inference mode
    recipe_path, blob, data, log, weights, ckpt = (os.path.join(work, f"{scheme}.{ext}") for ext in
                                                   ("json", "pock", "npz", "jsonl", "weights.npz", "ckpt"))
    with open(recipe_path, "w") as f:
        json.dump(recipe, f)
    np.savez(data, x=ref["train_x"], label=ref["train_label"])
    for path in (log, ckpt):
        if os.path.exists(path):
            os.remove(path)
    run([pockc, "compile", MODEL, "--recipe", recipe_path, "-o", blob])
    run([pockc, "train", blob, "--data", data, "--steps", str(STEPS), "--log", log, "--save-weights", weights,
         "--checkpoint", ckpt])

    with open(log) as f:
        losses = [json.loads(line)["loss"] for line in f]
    want_losses = ref[f"{scheme}|loss"]
    if len(losses) != STEPS:
        raise Mismatch(f"pockc logged {len(losses)} losses, expected {STEPS}")
    loss_err = 0.0
    for step, (g, w) in enumerate(zip(losses, want_losses)):
        err = abs(g - w) / abs(w)
        loss_err = max(loss_err, err)
        if err > LOSS_REL:
            raise Mismatch(f"step {step + 1} loss {g:.7g} vs TensorFlow {w:.7g} (rel {err:.3g} > {LOSS_REL})")

    got = dict(np.load(weights))
    prefix = f"{scheme}|weight|"
    trained = {k[len(prefix):]: v for k, v in ref.items() if k.startswith(prefix)}
    weight_err, worst = 0.0, ""
    for name, want in trained.items():
        if name not in got:
            raise Mismatch(f"pockc did not save parameter '{name}' (saved: {sorted(got)[:5]}...)")
        err = rel_err(got[name], want)
        if err > weight_err:
            weight_err, worst = err, name
    if weight_err > WEIGHT_REL:
        raise Mismatch(f"'{worst}' after {STEPS} steps differs from TensorFlow's by rel {weight_err:.3g} > {WEIGHT_REL}")
    for name, value in got.items():   # every other parameter is frozen: untouched, bit for bit
        if name not in trained and not np.array_equal(value, ref[f"initial|{name}"]):
            raise Mismatch(f"frozen parameter '{name}' changed")

    saved = read_checkpoint(ckpt)
    prefix = f"{scheme}|state|"
    state_err, moved = 0.0, 0
    for key in (k for k in ref if k.startswith(prefix)):
        name = key[len(prefix):]
        initial, want = ref[f"initial|{name}"], ref[key]
        if np.array_equal(initial, want):   # a frozen BatchNorm: pock must not have moved it either
            if name in saved and not np.array_equal(np.frombuffer(saved[name], np.float32), initial):
                raise Mismatch(f"running statistic '{name}' of a frozen BatchNorm changed")
            continue
        if name not in saved:
            raise Mismatch(f"running statistic '{name}' is not in the checkpoint (has: {sorted(saved)[:5]}...)")
        value = np.frombuffer(saved[name], np.float32).reshape(want.shape)
        err = rel_err(value - initial, want - initial)
        state_err, moved = max(state_err, err), moved + 1
        if err > STATE_REL:
            raise Mismatch(f"running statistic '{name}' moved differently from TensorFlow's: rel {err:.3g} > {STATE_REL}")
    return (f"{scheme}: loss {loss_err:.1e}, {len(trained)} trained tensors {weight_err:.1e}, "
            f"{moved} running statistics {state_err:.1e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--work", default="", help="keep the blobs, data and logs here")
    args = ap.parse_args()
    ref = dict(np.load(REFERENCE))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        checks = [("infer", lambda: check_infer(ref, args.pockc, work))]
        for scheme, optimizer, _, rules in SCHEMES:
            checks.append((f"train {scheme}", lambda s=scheme, o=optimizer, r=rules: check_scheme(ref, args.pockc, work, s, o, r)))
        for label, check in checks:
            try:
                print(f"PASS {label}: {check()}", flush=True)
            except Mismatch as e:
                failures += 1
                print(f"FAIL {label}: {e}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
