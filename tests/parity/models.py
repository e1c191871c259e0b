"""The five model families of the parity suite, at sizes that train in seconds on two cores.

Each builder returns a Family: the PyTorch module, example inputs (named like the ONNX inputs),
labels for the loss, and a sparse-update scheme expressed both as a PockEngine recipe rule list
and as the set of PyTorch parameter names that train. Architectures follow the originals
(MobileNetV2, ResNet-18, EfficientNet-Lite0, MiniLM/BERT encoder, LLaMA decoder) with widths
and depths cut down; what matters for parity is that every layer type and export pattern occurs.
"""
import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Family:
    name: str
    model: nn.Module
    inputs: dict            # ONNX input name -> tensor [B, ...]
    make_batch: callable    # step -> (inputs dict, labels tensor)
    opsets: list = field(default_factory=lambda: [17])
    sparse_rules: list = field(default_factory=list)   # recipe "trainable" rules
    sparse_params: set = field(default_factory=set)    # PyTorch parameter names they select
    lr_sgd: float = 0.05
    lr_adamw: float = 1e-3


# --- CNNs ----------------------------------------------------------------------------------

def conv_bn(cin, cout, k, stride, groups=1, act=nn.ReLU6):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    """MobileNetV2 / EfficientNet-Lite MBConv without squeeze-excitation (Lite drops SE)."""

    def __init__(self, cin, cout, stride, expand, k=3):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = []
        if expand != 1:
            layers.append(conv_bn(cin, hidden, 1, 1))
        layers += [conv_bn(hidden, hidden, k, stride, groups=hidden), conv_bn(hidden, cout, 1, 1, act=None)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        y = self.conv(x)
        return x + y if self.use_res else y


class MobileNetV2Mini(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, 8, 3, 2),
            InvertedResidual(8, 8, 1, 1),
            InvertedResidual(8, 12, 2, 4),
            InvertedResidual(12, 12, 1, 4),
            conv_bn(12, 32, 1, 1),
        )
        self.classifier = nn.Linear(32, classes)

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(x)


class EfficientNetLite0Mini(nn.Module):
    """Lite0: ReLU6, no SE, 5x5 depthwise kernels in later stages, dropout before the head."""

    def __init__(self, classes=10, dropout=0.0):
        super().__init__()
        self.stem = conv_bn(3, 8, 3, 2)
        self.blocks = nn.Sequential(
            InvertedResidual(8, 8, 1, 1),
            InvertedResidual(8, 12, 2, 6),
            InvertedResidual(12, 16, 1, 6, k=5),
        )
        self.head = conv_bn(16, 32, 1, 1)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(self.dropout(x))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + identity)


class ResNet18Mini(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(8, 8, 1))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, 2))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


# --- transformers --------------------------------------------------------------------------

class BertLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.attn_norm = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = nn.Linear(d, ffn)
        self.output = nn.Linear(ffn, d)
        self.out_norm = nn.LayerNorm(d, eps=1e-12)

    def split(self, x):
        b, s, d = x.shape
        return x.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask_bias
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(x.shape)
        x = self.attn_norm(x + self.attn_out(ctx))
        return self.out_norm(x + self.output(F.gelu(self.intermediate(x))))


class BertMini(nn.Module):
    """MiniLM-L6 layout (BERT encoder, post-norm, erf GELU) at d=32, 2 layers, 2 heads."""

    def __init__(self, vocab=64, seq=8, d=32, heads=2, ffn=64, layers=2, classes=3):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d)
        self.position_embeddings = nn.Embedding(seq, d)
        self.token_type_embeddings = nn.Embedding(2, d)
        self.emb_norm = nn.LayerNorm(d, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(seq).unsqueeze(0))
        self.layers = nn.ModuleList([BertLayer(d, heads, ffn) for _ in range(layers)])
        self.classifier = nn.Linear(d, classes)

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = self.position_ids[:, :s]
        types = torch.zeros_like(pos)
        x = self.word_embeddings(input_ids) + self.position_embeddings(pos) + self.token_type_embeddings(types)
        x = self.emb_norm(x)
        mask_bias = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return self.classifier(x[:, 0])


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaLayer(nn.Module):
    """`kv_heads` < `heads` is grouped-query attention: each K/V head serves heads/kv_heads query
    heads, repeated with unsqueeze/expand/reshape as transformers' repeat_kv exports it."""

    def __init__(self, d, heads, ffn, kv_heads=None):
        super().__init__()
        self.heads = heads
        self.kv_heads = kv_heads or heads
        kv_d = d // heads * self.kv_heads
        self.input_layernorm = RMSNorm(d)
        self.q_proj, self.k_proj = nn.Linear(d, d, bias=False), nn.Linear(d, kv_d, bias=False)
        self.v_proj, self.o_proj = nn.Linear(d, kv_d, bias=False), nn.Linear(d, d, bias=False)
        self.post_attention_layernorm = RMSNorm(d)
        self.gate_proj, self.up_proj = nn.Linear(d, ffn, bias=False), nn.Linear(d, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, d, bias=False)

    def forward(self, x, cos, sin, causal):
        b, s, d = x.shape
        hd = d // self.heads
        h = self.input_layernorm(x)
        split = lambda t, n: t.view(b, s, n, hd).transpose(1, 2)
        q = split(self.q_proj(h), self.heads)
        k, v = split(self.k_proj(h), self.kv_heads), split(self.v_proj(h), self.kv_heads)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if self.kv_heads != self.heads:
            rep = self.heads // self.kv_heads
            k = k[:, :, None].expand(b, self.kv_heads, rep, s, hd).reshape(b, self.heads, s, hd)
            v = v[:, :, None].expand(b, self.kv_heads, rep, s, hd).reshape(b, self.heads, s, hd)
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd) + causal
        attn = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.o_proj(attn)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class LlamaMini(nn.Module):
    """LLaMA decoder (RMSNorm, rotary, SwiGLU, causal attention) at d=32, 2 layers, 2 heads by
    default; benchmarks/ builds SmolLM2-135M's shape from it (grouped-query attention through
    `kv_heads`, `tie` for an LM head that multiplies by the embedding table)."""

    def __init__(self, vocab=64, d=32, heads=2, ffn=64, layers=2, kv_heads=None, tie=False, rope_theta=10000):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([LlamaLayer(d, heads, ffn, kv_heads) for _ in range(layers)])
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        if tie:
            self.lm_head.weight = self.embed_tokens.weight
        head_dim = d // heads
        self.register_buffer("inv_freq", 1.0 / (rope_theta ** (torch.arange(0, head_dim, 2).float() / head_dim)),
                             persistent=False)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        dev = input_ids.device  # the GPU peer (benchmarks/cuda) runs this on cuda
        t = torch.arange(s, dtype=torch.float32, device=dev)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        causal = torch.full((s, s), float("-inf"), device=dev).triu(1)
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x, cos, sin, causal)
        return self.lm_head(self.norm(x))


# --- the families --------------------------------------------------------------------------

BATCH = 4


def image_family(name, model, classes=10, hw=16, opsets=(17,), sparse_rules=(), sparse_params=(), seed=1000):
    def make_batch(step):
        g = torch.Generator().manual_seed(seed + step)
        x = torch.randn(BATCH, 3, hw, hw, generator=g)
        y = torch.randint(0, classes, (BATCH,), generator=g)
        return {"input": x}, y
    inputs, _ = make_batch(-1)
    return Family(name, model, inputs, make_batch, list(opsets), list(sparse_rules), set(sparse_params))


def families():
    torch.manual_seed(0)
    out = []
    # The CNN schemes mix the paper's two kinds of rule: whole layers, and BatchNorm shifts alone
    # under frozen scales (every bias of MobileNetV2, ResNet's layer1), which the compiler folds
    # into the convolution before autodiff (lowering/fold_frozen_scale.hpp).
    mb = MobileNetV2Mini()
    out.append(image_family("mobilenetv2", mb, opsets=(9, 11, 13, 17),
                            sparse_rules=[{"bias_only": True}, {"match": "classifier.*"}, {"match": "features.3.*"}],
                            sparse_params={n for n, _ in mb.named_parameters()
                                           if n.startswith(("classifier.", "features.3.")) or n.endswith(".bias")}))
    rn = ResNet18Mini()
    out.append(image_family("resnet18", rn, opsets=(7, 17),
                            sparse_rules=[{"match": "fc.*"}, {"match": "layer2.*"}, {"match": "layer1.*.bias"}],
                            sparse_params={n for n, _ in rn.named_parameters()
                                           if n.startswith(("fc.", "layer2.")) or
                                           (n.startswith("layer1.") and n.endswith(".bias"))}))
    ef = EfficientNetLite0Mini()
    # Batches with seed 1000 put one ReLU6 input within 1e-6 of its kink at step 10 (see
    # run_parity.py's kink report); that branch is float noise, so this family uses other batches.
    out.append(image_family("efficientnet_lite0", ef, seed=1100, opsets=(10, 17),
                            sparse_rules=[{"match": "fc.*"}, {"match": "head.*"}],
                            sparse_params={n for n, _ in ef.named_parameters()
                                           if n.startswith("fc.") or n.startswith("head.")}))

    bert = BertMini()
    def bert_batch(step, vocab=64, seq=8, classes=3):
        g = torch.Generator().manual_seed(2000 + step)
        ids = torch.randint(0, vocab, (BATCH, seq), generator=g)
        mask = torch.ones(BATCH, seq, dtype=torch.int64)
        mask[1, 6:] = 0
        mask[3, 5:] = 0
        return {"input_ids": ids, "attention_mask": mask}, torch.randint(0, classes, (BATCH,), generator=g)
    # Sparse BP for BERT (paper): the QKV projections and the first FFN linear, plus the head.
    bert_sparse = [{"match": "layers.*.query.*"}, {"match": "layers.*.key.*"}, {"match": "layers.*.value.*"},
                   {"match": "layers.*.intermediate.*"}, {"match": "classifier.*"}]
    out.append(Family("bert", bert, bert_batch(-1)[0], bert_batch, [11, 13, 17], bert_sparse,
                      {n for n, _ in bert.named_parameters()
                       if any(k in n for k in (".query.", ".key.", ".value.", ".intermediate.")) or n.startswith("classifier.")},
                      lr_sgd=0.05))

    llama = LlamaMini()
    def llama_batch(step, vocab=64, seq=8):
        g = torch.Generator().manual_seed(3000 + step)
        ids = torch.randint(0, vocab, (BATCH, seq + 1), generator=g)
        return {"input_ids": ids[:, :-1].contiguous()}, ids[:, 1:].contiguous()
    llama_sparse = [{"match": "layers.1.*"}, {"match": "lm_head.*"}]
    out.append(Family("llama", llama, llama_batch(-1)[0], llama_batch, [17], llama_sparse,
                      {n for n, _ in llama.named_parameters() if n.startswith("layers.1.") or n.startswith("lm_head.")}))
    return out
