"""The four workloads of the PyTorch comparison (issue #6) and their sparse schemes.

Each workload is a PyTorch module, its inputs and labels for one batch, and two training
schemes: full backpropagation and a sparse one, the latter written both as PockEngine recipe
rules and as the set of PyTorch parameters that train (plus, for partial-channel rules, how many
leading rows of each weight get a gradient, so PyTorch can mask the rest). The transformer
definitions are the parity suite's (tests/parity/models.py) at full size; the CNNs are
torchvision's, the source of the names the model zoo and the docs' recipes use.

Runs under any PyTorch from 1.13 on (Debian's python3-torch or a pip wheel). Importing this
module does not import torch: run_bench.py reads the workload list without it, so that the
processes it forks do not start from a large resident set (a child's peak RSS, as wait4 reports
it, is at least its parent's resident set at fork).
"""
import math
import os
import re
import sys
from dataclasses import dataclass, field

PARITY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "parity")


def parity_models():
    if PARITY_DIR not in sys.path:
        sys.path.insert(0, PARITY_DIR)
    import models
    return models


@dataclass
class Scheme:
    name: str
    rules: list                     # recipe "trainable" rules; [] = every parameter
    freeze_bn_stats: bool = False   # recipe freeze_batchnorm_stats / PyTorch: frozen BNs in eval()


@dataclass
class Workload:
    name: str
    title: str
    build: callable                 # () -> nn.Module, weights drawn from the seed set before
    input_shapes: dict              # ONNX input name -> (shape, "float32" | "int64", high for random ints)
    label_shape: tuple
    classes: int
    unit: str                       # what throughput counts: "images" or "tokens"
    units_per_step: int
    sparse: Scheme
    steps: int
    warmup: int
    ort: bool = True                # also run ONNX Runtime training (issue #6: workloads 1-3)
    tf: bool = False                # a TensorFlow model exists (tf_models.py; issue 18: the CNNs)
    full: Scheme = field(default_factory=lambda: Scheme("full", []))
    more: list = field(default_factory=list)   # further sparse schemes, measured like `sparse`

    def schemes(self):
        """{name: Scheme}, full BP first, then the sparse schemes in the order they are reported."""
        return {s.name: s for s in [self.full, self.sparse] + self.more}

    def scheme(self, name):
        return self.schemes()[name]


def hf_init(model, std=0.02):
    """Hugging Face's initialization for BERT and LLaMA (initializer_range 0.02: every Linear and
    Embedding weight normal(0, std), biases 0, norms 1), as in the model zoo. PyTorch's default
    normal(0, 1) embedding, tied to the LM head, would give logits of |e|^2 ~ 576 for the input
    token: a saturated softmax whose gradient is denormal floats, not a model anyone trains."""
    import torch
    import torch.nn as nn
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                m.weight.normal_(0.0, std)
                if getattr(m, "bias", None) is not None:
                    m.bias.zero_()
            elif isinstance(m, nn.LayerNorm):
                m.weight.fill_(1.0)
                m.bias.zero_()
    return model


def _torchvision(name):
    import torchvision
    return getattr(torchvision.models, name)(num_classes=1000)


# CNNs, the paper's pattern (docs/recipe.md): every bias (here the BatchNorm shifts and the
# classifier's), the weights of the last blocks at half their output channels, the classifier in
# full; BatchNorms of frozen layers keep their running statistics.
MOBILENET_SPARSE = Scheme("sparse", [
    {"bias_only": True},
    {"match": "features.{15-18}.*.weight", "channel_ratio": 0.5},
    {"match": "classifier.*"},
], freeze_bn_stats=True)

RESNET_SPARSE = Scheme("sparse", [
    {"bias_only": True},
    {"match": "layer4.*.weight", "channel_ratio": 0.5},
    {"match": "fc.*"},
], freeze_bn_stats=True)

# The paper's later-stage variant (docs/memory.md's "paper-like" scheme; the demo's sparse-late):
# the same late weights and classifier, but biases only where the activations are small (MobileNetV2
# from features.8 on, 8x8 and 4x4 maps at 128px; ResNet-18's layer3 and layer4). The backward then
# stops halfway down, and the frozen layers below run as inference (BatchNorms folded, NHWC).
MOBILENET_LATE = Scheme("sparse-late", [
    {"match": "features.{8-18}.*.bias"},
    {"match": "features.{15-18}.*.weight", "channel_ratio": 0.5},
    {"match": "classifier.*"},
], freeze_bn_stats=True)

RESNET_LATE = Scheme("sparse-late", [
    {"match": "layer{3-4}.*.bias"},
    {"match": "layer4.*.weight", "channel_ratio": 0.5},
    {"match": "fc.*"},
], freeze_bn_stats=True)

# Transformers (docs/recipe.md, after the paper's contribution analysis): the Q/K/V projections
# and the first FFN linear of the last blocks (BERT: 2 of 6, LLaMA: 4 of 30), with their biases,
# and a classifier head where there is one.
BERT_SPARSE = Scheme("sparse", [
    {"match": "layers.{4-5}.{query,key,value,intermediate}.*"},
    {"match": "classifier.*"},
])

LLAMA_SPARSE = Scheme("sparse", [
    {"match": "layers.{26-29}.{q,k,v,gate}_proj.weight"},
])

BATCH_CNN, BATCH_BERT, BATCH_LLAMA, SEQ = 8, 8, 4, 128


def workloads():
    return [
        Workload("mobilenetv2", "MobileNetV2 1.0, 128x128, batch 8", lambda: _torchvision("mobilenet_v2"),
                 {"input": ((BATCH_CNN, 3, 128, 128), "float32", None)}, (BATCH_CNN,), 1000,
                 "images", BATCH_CNN, MOBILENET_SPARSE, steps=20, warmup=3, more=[MOBILENET_LATE], tf=True),
        Workload("resnet18", "ResNet-18, 128x128, batch 8", lambda: _torchvision("resnet18"),
                 {"input": ((BATCH_CNN, 3, 128, 128), "float32", None)}, (BATCH_CNN,), 1000,
                 "images", BATCH_CNN, RESNET_SPARSE, steps=20, warmup=3, more=[RESNET_LATE], tf=True),
        # MiniLM-L6-H384: 6 layers x 384, 12 heads, FFN 1536, BERT vocabulary, 512 positions.
        Workload("bert", "BERT encoder, MiniLM-L6 shape, seq 128, batch 8",
                 lambda: hf_init(parity_models().BertMini(vocab=30522, seq=512, d=384, heads=12, ffn=1536, layers=6,
                                                        classes=2)),
                 {"input_ids": ((BATCH_BERT, SEQ), "int64", 30522),
                  "attention_mask": ((BATCH_BERT, SEQ), "int64", 2)}, (BATCH_BERT,), 2,
                 "tokens", BATCH_BERT * SEQ, BERT_SPARSE, steps=10, warmup=2),
        # SmolLM2-135M: 30 layers x 576, 9 heads / 3 KV heads, FFN 1536, vocabulary 49152, tied head.
        Workload("llama", "LLaMA decoder, SmolLM2-135M shape, seq 128, batch 4",
                 lambda: hf_init(parity_models().LlamaMini(vocab=49152, d=576, heads=9, ffn=1536, layers=30,
                                                         kv_heads=3, tie=True, rope_theta=100000.0)),
                 {"input_ids": ((BATCH_LLAMA, SEQ), "int64", 49152)}, (BATCH_LLAMA, SEQ), 49152,
                 "tokens", BATCH_LLAMA * SEQ, LLAMA_SPARSE, steps=4, warmup=1, ort=False),
    ]


# The GPU benchmark's decoder (benchmarks/cuda/check.sh; issue 14 asks for a LLaMA-1B shape at seq
# 512): TinyLlama-1.1B's shape, 22 layers x 2048, 32 heads / 4 KV heads, FFN 5632, vocabulary
# 32000, untied head. Not in workloads(): a 1.1B-parameter model is not a CPU benchmark here.
LLAMA1B_SPARSE = Scheme("sparse", [
    {"match": "layers.{18-21}.{q,k,v,gate}_proj.weight"},
])
BATCH_LLAMA1B, SEQ_LLAMA1B = 2, 512


def gpu_workloads():
    return [
        Workload("llama1b", "LLaMA decoder, TinyLlama-1.1B shape, seq 512, batch 2",
                 lambda: hf_init(parity_models().LlamaMini(vocab=32000, d=2048, heads=32, ffn=5632, layers=22,
                                                         kv_heads=4, tie=False, rope_theta=10000.0)),
                 {"input_ids": ((BATCH_LLAMA1B, SEQ_LLAMA1B), "int64", 32000)}, (BATCH_LLAMA1B, SEQ_LLAMA1B), 32000,
                 "tokens", BATCH_LLAMA1B * SEQ_LLAMA1B, LLAMA1B_SPARSE, steps=10, warmup=2, ort=False),
    ]


# bf16_bench.py's loss curves (issue 18): the SmolLM2-135M shape on 64 tokens a step, so that
# 2 x 200 steps fit in minutes on 2 shared cores. Not in workloads().
def curve_workloads():
    return [
        Workload("llama-curve", "LLaMA decoder, SmolLM2-135M shape, seq 32, batch 2",
                 lambda: hf_init(parity_models().LlamaMini(vocab=49152, d=576, heads=9, ffn=1536, layers=30,
                                                         kv_heads=3, tie=True, rope_theta=100000.0)),
                 {"input_ids": ((2, 32), "int64", 49152)}, (2, 32), 49152,
                 "tokens", 2 * 32, LLAMA_SPARSE, steps=4, warmup=1, ort=False),
    ]


# MobileNetV2 at the 224 pixels most apps train at: its depthwise layers then run on 112, 56, 28,
# 14 and 7 pixel planes, where the 128-pixel workload has 64 down to 4. Same schemes and batch.
# Not in workloads() (a step is 3x the 128-pixel one): run_bench.py --only mobilenetv2-224.
def resolution_workloads():
    return [
        Workload("mobilenetv2-224", "MobileNetV2 1.0, 224x224, batch 8", lambda: _torchvision("mobilenet_v2"),
                 {"input": ((BATCH_CNN, 3, 224, 224), "float32", None)}, (BATCH_CNN,), 1000,
                 "images", BATCH_CNN, MOBILENET_SPARSE, steps=10, warmup=2, more=[MOBILENET_LATE], ort=False),
    ]


def by_name(name):
    for w in workloads() + gpu_workloads() + curve_workloads() + resolution_workloads():
        if w.name == name:
            return w
    raise KeyError(name)


def make_batch(w, seed):
    """Random inputs and labels of the workload's shapes (the values do not change the work)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    inputs = {}
    for name, (shape, dtype, high) in w.input_shapes.items():
        if dtype == "float32":
            inputs[name] = torch.rand(shape, generator=g) * 2 - 1
        elif name == "attention_mask":
            inputs[name] = torch.ones(shape, dtype=torch.int64)
        else:
            inputs[name] = torch.randint(0, high, shape, generator=g, dtype=torch.int64)
    labels = torch.randint(0, w.classes, w.label_shape, generator=g)
    return inputs, labels


# --- the recipe's trainable rules, resolved against PyTorch names ---------------------------

def _glob_regex(pattern):
    """docs/recipe.md globs: `*`, `?`, `{a-b}` numeric ranges, `{x,y}` alternatives."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if c == "{":
            j = pattern.index("}", i)
            body = pattern[i + 1:j]
            m = re.fullmatch(r"(\d+)-(\d+)", body)
            alts = [str(n) for n in range(int(m.group(1)), int(m.group(2)) + 1)] if m else body.split(",")
            out += "(?:" + "|".join(re.escape(a) for a in alts) + ")"
            i = j + 1
            continue
        out += ".*" if c == "*" else "." if c == "?" else re.escape(c)
        i += 1
    return re.compile(out + r"\Z")


def trainable(model, scheme):
    """{parameter name: rows that get a gradient (None = all)} for the scheme. Mirrors the
    recipe's rules for what these schemes use: `match`, `bias_only` (parameters named bias),
    `channel_ratio` on 2+-dim weights, and a trained weight's layer also training its bias
    (here: the bias beside it in the same module)."""
    params = dict(model.named_parameters())
    if not scheme.rules:
        return {n: None for n in params}
    chosen = {}

    def take(name, rows):
        old = chosen.get(name, 0)
        chosen[name] = None if rows is None or old is None else max(old, rows)

    for rule in scheme.rules:
        names = list(params)
        if "match" in rule:
            rx = _glob_regex(rule["match"])
            names = [n for n in names if rx.match(n)]
        if rule.get("bias_only"):
            names = [n for n in names if n == "bias" or n.endswith(".bias")]
        for n in names:
            p = params[n]
            rows = None
            if "channel_ratio" in rule and p.dim() >= 2:
                rows = math.ceil(rule["channel_ratio"] * p.shape[0])
            take(n, rows)
            bias = n[:-len("weight")] + "bias" if n.endswith("weight") else None
            if bias in params and p.dim() >= 2:
                take(bias, None)
    return chosen


def frozen_bn_modules(model, chosen):
    """BatchNorms that stay in inference form under freeze_batchnorm_stats: those whose scale
    does not train (in these schemes a BN's scale trains exactly when the conv feeding it does)."""
    import torch.nn as nn
    out = []
    for mname, m in model.named_modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            if f"{mname}.weight" not in chosen:
                out.append(m)
    return out


