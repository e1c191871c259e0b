"""What every parity family shares (docs/parity.md): the tolerances, running pockc, training a
compiled model with `pockc train` and comparing a run step by step. Needs only numpy, so that a
family whose framework lives in a venv (JAX) imports it as well as Debian's python3 (PyTorch)."""
import json
import os
import subprocess

import numpy as np

# Tolerances (docs/parity.md). Inference: float32 kernels that sum in a different order differ by
# a few ulps per op; over ~20 layers that stays well below 1e-4 of the output's scale.
INFER_REL = 1e-4
LOSS_REL = 1e-4
WEIGHT_REL = 1e-3
# A parameter whose reference gradient never exceeds this fraction of the model's largest
# gradient has a gradient that is zero in exact arithmetic (a bias shift that the next BatchNorm
# subtracts again, the key bias under softmax): both sides update it with rounding noise, which
# AdamW even normalizes to full-size steps, so its weights are not compared (docs/parity.md).
NOISE_GRAD = 1e-6


class Mismatch(Exception):
    pass


class NotBuilt(Exception):
    pass


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip()
        if "not built yet" in msg:
            raise NotBuilt(msg)
        raise Mismatch(f"{what} failed ({p.returncode}): {' '.join(cmd)}\n{msg}")
    return p.stdout


def rel_err(got, want):
    """max |got - want| over max |want|: error relative to the tensor's own scale."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        raise Mismatch(f"shape {got.shape} != expected {want.shape}")
    scale = max(np.abs(want).max(), 1e-12)
    return float(np.abs(got - want).max() / scale)


def pockc_train(pockc, onnx_path, work, recipe, arrays, steps):
    """Compiles `onnx_path` with `recipe`, trains `steps` steps on `arrays` (the batches one after
    the other along axis 0) and returns the logged losses and the saved weights by name."""
    data = os.path.join(work, "train_data.npz")
    np.savez(data, **arrays)
    recipe_path = os.path.join(work, "recipe.json")
    with open(recipe_path, "w") as f:
        json.dump(recipe, f)
    blob = os.path.join(work, "train.pock")
    log = os.path.join(work, "train_log.jsonl")
    weights = os.path.join(work, "weights.npz")
    if os.path.exists(log):
        os.remove(log)
    run([pockc, "compile", onnx_path, "--recipe", recipe_path, "-o", blob], "pockc compile --recipe")
    run([pockc, "train", blob, "--data", data, "--steps", str(steps), "--log", log, "--save-weights", weights],
        "pockc train")
    with open(log) as f:
        losses = [json.loads(line)["loss"] for line in f]
    return losses, dict(np.load(weights))


def compare_run(name, got_losses, want_losses, got_weights, want_weights, noise_only, report, reference="PyTorch"):
    """Losses step by step (rel LOSS_REL), then every compared weight (rel WEIGHT_REL)."""
    if len(got_losses) != len(want_losses):
        raise Mismatch(f"{name}: pockc logged {len(got_losses)} losses, expected {len(want_losses)}")
    worst_loss = 0.0
    for step, (g, w) in enumerate(zip(got_losses, want_losses)):
        err = abs(g - w) / max(abs(w), 1e-12)
        worst_loss = max(worst_loss, err)
        if err > LOSS_REL:
            raise Mismatch(f"{name}: step {step + 1} loss {g:.7g} vs {reference} {w:.7g} (rel {err:.3g} > {LOSS_REL})")
    worst_weight, worst_name = 0.0, ""
    for pname, want in want_weights.items():
        if pname not in got_weights:
            raise Mismatch(f"{name}: pockc did not save parameter '{pname}'")
        err = rel_err(got_weights[pname], want)
        if err > worst_weight:
            worst_weight, worst_name = err, pname
    if worst_weight > WEIGHT_REL:
        raise Mismatch(f"{name}: weight '{worst_name}' differs by rel {worst_weight:.3g} > {WEIGHT_REL}")
    skipped = f" ({len(noise_only)} zero-gradient params not compared)" if noise_only else ""
    report.append(f"{name} loss {worst_loss:.1e} weights {worst_weight:.1e}{skipped}")
