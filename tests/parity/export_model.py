"""The model and training run that the export checks share (test_pockc_export.py under Debian's
python3 with torch; check_export_ort.py under any python with onnxruntime): a small CNN with two
Conv -> BatchNorm -> ReLU blocks and a Linear head, exported by PyTorch in training form, and a
sparse recipe that exercises what the compiler does to source weights:
  bn1.bias           trains while conv1 and bn1's scale stay frozen: the BatchNorm is folded into
                     the convolution (fold_frozen_scale), its statistics stay frozen;
  conv2.weight       trains its first half of output channels (partial-channel update), so bn2
                     runs in training form and updates its running statistics;
  fc.weight, fc.bias train in full (PyTorch writes Gemm).
Everything here needs numpy and onnx only; torch is imported by the caller that builds the file."""
import json
import os
import subprocess

import numpy as np

BATCH = 4
STEPS = 4
IMAGE = 6
RECIPE = {"batch_size": BATCH,
          "loss": {"type": "cross_entropy", "logits": "logits", "labels": "label"},
          "optimizer": {"type": "sgd", "lr": 0.2, "momentum": 0.9},
          "trainable": [{"match": "bn1.bias"}, {"match": "conv2.weight", "channels": 0.5}, {"match": "fc.*"}],
          "freeze_batchnorm_stats": True}
TRAINED = {"bn1.bias", "conv2.weight", "fc.weight", "fc.bias", "bn2.running_mean", "bn2.running_var"}


def build_torch_model():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 6, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(6)
            self.fc = nn.Linear(6, 4)

        def forward(self, x):
            x = F.relu(self.bn1(self.conv1(x)))
            x = F.relu(self.bn2(self.conv2(x)))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():  # statistics and scales far from 0 / 1, so that a lost fold shows
        for bn in (model.bn1, model.bn2):
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 2.0)
    return model


def export_torch_model(model, path):
    """Training-form export (docs/exporting.md); the pretrained statistics are written back, as
    tracing in training mode moves them."""
    import copy
    import inspect

    import onnx
    import torch
    from onnx import numpy_helper
    before = copy.deepcopy(model.state_dict())
    model.train()
    # PyTorch 2.9 and later default to the dynamo exporter, which has no training form.
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, (torch.zeros(BATCH, 3, IMAGE, IMAGE),), path, input_names=["x"], output_names=["logits"],
                      opset_version=17, do_constant_folding=False, training=torch.onnx.TrainingMode.TRAINING, **legacy)
    model.load_state_dict(before)
    m = onnx.load(path)
    for init in m.graph.initializer:
        if init.name in before:
            init.CopyFrom(numpy_helper.from_array(before[init.name].numpy(), init.name))
    onnx.save(m, path)


def data_arrays(seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((STEPS * BATCH, 3, IMAGE, IMAGE)).astype(np.float32)
    label = (np.arange(STEPS * BATCH) % 4).astype(np.int64)
    return x, label


def run(*cmd):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def train_and_export(pockc, onnx_path, work):
    """Compiles the recipe, trains STEPS steps (checkpoint and --save-weights), exports the
    checkpoint into ONNX, and runs the trained engine's inference. Returns the paths by role and
    pockc's outputs; raises RuntimeError naming the failed command."""
    f = {k: os.path.join(work, v) for k, v in
         {"recipe": "recipe.json", "blob": "train.pock", "data": "data.npz", "ckpt": "trained.ckpt",
          "weights": "weights.npz", "export": "trained.onnx", "x": "x.npz", "pock_out": "pock_out.npz"}.items()}
    with open(f["recipe"], "w") as fh:
        json.dump(RECIPE, fh)
    x, label = data_arrays()
    np.savez(f["data"], x=x, label=label)
    np.savez(f["x"], x=x)
    outputs = {}
    for name, cmd in [("compile", ["compile", onnx_path, "--recipe", f["recipe"], "-o", f["blob"]]),
                      ("train", ["train", f["blob"], "--data", f["data"], "--steps", STEPS, "--checkpoint", f["ckpt"],
                                 "--save-weights", f["weights"]]),
                      ("export", ["export", f["ckpt"], "--onnx", onnx_path, "-o", f["export"], "--verbose"]),
                      ("infer", ["infer", f["blob"], "--resume", f["ckpt"], "--data", f["x"], "--out", f["pock_out"]])]:
        rc, out = run(pockc, *cmd)
        if rc != 0:
            raise RuntimeError(f"pockc {name} failed:\n{out}")
        outputs[name] = out
    return f, outputs
