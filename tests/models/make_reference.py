#!/usr/bin/python3
"""PyTorch references for the model-zoo parity test (tests/models/test_model_zoo_parity.cpp).

usage: make_reference.py SPEC.json OUT_DIR

SPEC maps a model name (mobilenet_v2, resnet18, bert, llama) to the configuration the C++ test
builds. For each, this script builds the same architecture in PyTorch -- torchvision's own
MobileNetV2 and ResNet, and for BERT / LLaMA modules written here after transformers' BertModel /
LlamaForCausalLM (not installed with Debian's torch) with the same state_dict names -- perturbs
the weights that start at 0 or 1 (biases, norms, BatchNorm statistics) so that every one matters,
and writes:
  OUT_DIR/<model>.weights.bin  the state_dict (float tensors; num_batches_tracked dropped)
  OUT_DIR/<model>.io.bin       the inputs, by the zoo model's input names, and "logits": the
                               eval-mode output computed in float64

File format (little-endian): b"PKZOO1\\n\\0", u32 count, then per tensor: u32 name length, name
(UTF-8), u32 dtype (0 f32, 1 i64, 2 f64), u32 rank, i64 dims[rank], row-major data.

Exit status 77: torch or torchvision is missing (the C++ test then reports a skip).
"""
import json
import math
import os
import struct
import sys

SKIP = 77
try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torchvision.models.mobilenetv2 import MobileNetV2
    from torchvision.models.resnet import BasicBlock, ResNet
except ImportError as e:
    print(f"SKIP: {e} (needs Debian's python3-torch and python3-torchvision under /usr/bin/python3)")
    sys.exit(SKIP)

DTYPES = {np.dtype(np.float32): 0, np.dtype(np.int64): 1, np.dtype(np.float64): 2}


def write_tensors(path, tensors):
    with open(path, "wb") as f:
        f.write(b"PKZOO1\n\0")
        f.write(struct.pack("<I", len(tensors)))
        for name, value in tensors.items():
            a = np.ascontiguousarray(value.detach().cpu().numpy() if torch.is_tensor(value) else value)
            encoded = name.encode()
            f.write(struct.pack("<I", len(encoded)) + encoded)
            f.write(struct.pack("<II", DTYPES[a.dtype], a.ndim))
            f.write(struct.pack(f"<{a.ndim}q", *a.shape))
            f.write(a.astype(a.dtype.newbyteorder("<")).tobytes())


def perturb(model, gen):
    """Weights that start constant (biases, norm scales, BatchNorm statistics) get random values:
    a zoo model that swapped or ignored one would otherwise still match."""
    with torch.no_grad():
        for name, t in model.state_dict().items():
            if not t.is_floating_point():
                continue
            if bool((t == 1).all()):
                t.copy_(torch.rand(t.shape, generator=gen) + 0.5)
            elif bool((t == 0).all()):
                t.copy_(torch.randn(t.shape, generator=gen) * 0.1)


# --- BERT, after transformers.models.bert.modeling_bert ------------------------------------------

class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"], padding_idx=0)
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], c["hidden_size"])
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.shape[1])[None, :]
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(positions)
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.heads, self.head_size = c["num_heads"], h // c["num_heads"]
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.dropout = nn.Dropout(0.1)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_size).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_size)
        if mask_bias is not None:
            scores = scores + mask_bias
        probs = self.dropout(F.softmax(scores, dim=-1))
        context = (probs @ v).permute(0, 2, 1, 3).contiguous()
        return context.view(context.shape[0], context.shape[1], -1)


class BertDenseNorm(nn.Module):
    """BertSelfOutput and BertOutput: LayerNorm(dropout(dense(x)) + residual)."""

    def __init__(self, c, fan_in):
        super().__init__()
        self.dense = nn.Linear(fan_in, c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, residual):
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertDenseNorm(c, c["hidden_size"])

    def forward(self, x, mask_bias):
        return self.output(self.self(x, mask_bias), x)


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])

    def forward(self, x):
        return F.gelu(self.dense(x))  # exact (erf) GELU, BERT's "gelu"


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertDenseNorm(c, c["intermediate_size"])

    def forward(self, x, mask_bias):
        a = self.attention(x, mask_bias)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c["num_layers"])])

    def forward(self, x, mask_bias):
        for layer in self.layer:
            x = layer(x, mask_bias)
        return x


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])

    def forward(self, x):
        return torch.tanh(self.dense(x[:, 0]))


class BertClassifier(nn.Module):
    """BertForSequenceClassification with the BertModel names (no "bert." prefix)."""

    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c)
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        mask_bias = None
        if attention_mask is not None:  # get_extended_attention_mask
            dtype = self.classifier.weight.dtype
            mask_bias = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
        x = self.encoder(self.embeddings(input_ids, token_type_ids), mask_bias)
        return self.classifier(self.dropout(self.pooler(x)))


# --- LLaMA, after transformers.models.llama.modeling_llama --------------------------------------

class LlamaRMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary(x, theta):
    seq, dim = x.shape[-2], x.shape[-1]
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    freqs = torch.outer(torch.arange(seq, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1).to(x.dtype)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def repeat_kv(x, groups):
    b, kv, s, d = x.shape
    return x[:, :, None, :, :].expand(b, kv, groups, s, d).reshape(b, kv * groups, s, d)


class LlamaAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.heads, self.kv_heads, self.head_dim = c["num_heads"], c["num_kv_heads"], h // c["num_heads"]
        self.theta = c["rope_theta"]
        self.q_proj = nn.Linear(h, self.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(h, self.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(h, self.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, h, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rotary(q, self.theta), rotary(k, self.theta)
        groups = self.heads // self.kv_heads
        k, v = repeat_kv(k, groups), repeat_kv(v, groups)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.head_dim)
        causal = torch.full((s, s), torch.finfo(scores.dtype).min, dtype=scores.dtype).triu(1)
        probs = F.softmax(scores + causal, dim=-1)
        return self.o_proj((probs @ v).transpose(1, 2).reshape(b, s, -1))


class LlamaMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, i = c["hidden_size"], c["intermediate_size"]
        self.gate_proj, self.up_proj = nn.Linear(h, i, bias=False), nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = LlamaAttention(c)
        self.mlp = LlamaMLP(c)
        self.input_layernorm = LlamaRMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.post_attention_layernorm = LlamaRMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([LlamaDecoderLayer(c) for _ in range(c["num_layers"])])
        self.norm = LlamaRMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.model = LlamaModel(c)
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        if c["tie_word_embeddings"]:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


# --- the four references -------------------------------------------------------------------------

def mobilenet_v2(c, gen):
    stages = [list(s) for s in c["stages"]] or None
    model = MobileNetV2(num_classes=c["num_classes"], width_mult=c["width_mult"], inverted_residual_setting=stages,
                        round_nearest=c["round_nearest"], dropout=c["dropout"])
    image = torch.randn(c["batch"], 3, c["resolution"], c["resolution"], generator=gen)
    return model, {"image": image}


def resnet18(c, gen):
    if c["width"] != 64:
        raise ValueError("torchvision's ResNet has width 64")
    model = ResNet(BasicBlock, list(c["blocks"]), num_classes=c["num_classes"])
    image = torch.randn(c["batch"], 3, c["resolution"], c["resolution"], generator=gen)
    return model, {"image": image}


def bert(c, gen):
    model = BertClassifier(c)
    b, s = c["batch"], c["seq_len"]
    inputs = {"input_ids": torch.randint(0, c["vocab_size"], (b, s), generator=gen)}
    if c["attention_mask"]:
        mask = torch.ones(b, s, dtype=torch.int64)
        mask[1:, s // 2:] = 0  # later sequences padded to half length
        inputs["attention_mask"] = mask
    if c["token_type_ids"]:
        inputs["token_type_ids"] = torch.randint(0, c["type_vocab_size"], (b, s), generator=gen)
    return model, inputs


def llama(c, gen):
    model = LlamaForCausalLM(c)
    return model, {"input_ids": torch.randint(0, c["vocab_size"], (c["batch"], c["seq_len"]), generator=gen)}


BUILDERS = {"mobilenet_v2": mobilenet_v2, "resnet18": resnet18, "bert": bert, "llama": llama}


def main():
    spec_path, out_dir = sys.argv[1], sys.argv[2]
    with open(spec_path) as f:
        spec = json.load(f)
    for name, config in spec.items():
        gen = torch.Generator().manual_seed(1234)
        torch.manual_seed(1234)  # module constructors draw their default init from the global RNG
        model, inputs = BUILDERS[name](config, gen)
        perturb(model, gen)
        model.eval()
        weights = {k: v.float() for k, v in model.state_dict().items()
                   if v.is_floating_point()}  # drops BatchNorm's integer num_batches_tracked
        if name == "llama" and config["tie_word_embeddings"]:
            weights.pop("lm_head.weight")  # the same tensor as model.embed_tokens.weight
        with torch.no_grad():  # the reference in float64: only the zoo model's own rounding remains
            args = {k: v.double() if v.is_floating_point() else v for k, v in inputs.items()}
            model = model.double()
            logits = model(args["image"]) if "image" in args else model(**args)  # torchvision: positional
        write_tensors(os.path.join(out_dir, f"{name}.weights.bin"), weights)
        write_tensors(os.path.join(out_dir, f"{name}.io.bin"), {**inputs, "logits": logits})
        print(f"{name}: {len(weights)} tensors, logits {tuple(logits.shape)}")


if __name__ == "__main__":
    main()
