"""Set-up of the demo, step 2: the user's own data, a few thousand Fashion-MNIST images.

Reads the idx files of Debian's dataset-fashion-mnist, takes a seeded random subset of the
training set (the images "the user took") and of the test set (held out, never trained on),
and turns each 28x28 grayscale image into what the ImageNet-pretrained model expects: resized
to SIZE x SIZE, replicated to 3 channels, normalized with the ImageNet mean and deviation.

Writes, for SPLIT in train and test:
  SPLIT.npz          arrays "x" [N, 3, SIZE, SIZE] float32 and "label" [N] int64, for pockc
  SPLIT.x.f32        the same images as raw little-endian float32, for the on-device app
  SPLIT.label.i64    the same labels as raw little-endian int64

    /usr/bin/python3 prepare_data.py --train 2000 --test 1000 --size 64 --out DIR
"""
import argparse
import gzip
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

DATASET = Path("/usr/share/datasets/fashion-mnist")  # Debian package dataset-fashion-mnist
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def read_idx(path: Path) -> np.ndarray:
    """The idx format: magic (0, 0, dtype code 0x08 = ubyte, rank), rank big-endian u32 dims, data."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte idx file")
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * rank).reshape(dims)


def preprocess(images: np.ndarray, size: int) -> np.ndarray:
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)       # [N, 1, 28, 28]
    x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    x = x.repeat(1, 3, 1, 1).numpy()                                              # gray -> RGB
    return (x - IMAGENET_MEAN[None, :, None, None]) / IMAGENET_STD[None, :, None, None]


def write_split(out: Path, split: str, x: np.ndarray, labels: np.ndarray) -> None:
    x = np.ascontiguousarray(x, dtype="<f4")
    labels = labels.astype("<i8")
    np.savez(out / f"{split}.npz", x=x, label=labels)
    x.tofile(out / f"{split}.x.f32")
    labels.tofile(out / f"{split}.label.i64")
    counts = np.bincount(labels, minlength=10)
    print(f"{split}: {len(labels)} images {list(x.shape[1:])}, per class {counts.min()}..{counts.max()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", type=int, default=2000, help="training images to take")
    ap.add_argument("--test", type=int, default=1000, help="held-out images to take")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    for split, prefix, count in (("train", "train", args.train), ("test", "t10k", args.test)):
        images = read_idx(DATASET / f"{prefix}-images-idx3-ubyte.gz")
        labels = read_idx(DATASET / f"{prefix}-labels-idx1-ubyte.gz")
        pick = rng.choice(len(labels), size=count, replace=False)
        write_split(args.out, split, preprocess(images[pick], args.size), labels[pick])


if __name__ == "__main__":
    main()
