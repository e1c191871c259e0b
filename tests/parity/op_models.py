"""Small models, one per group of ONNX ops that issue 17 added (activations, instance
normalization, reflect/edge padding, tiling, 1-D pooling, transposed convolution, Resize,
DepthToSpace / SpaceToDepth, GatherElements), for tests/parity/run_op_parity.py. Each puts its
ops between convolutions, so that their gradients flow into trained weights on both sides."""
import torch
import torch.nn as nn
import torch.nn.functional as F

import models

CLASSES = 10


class Probe(nn.Module):
    """conv -> body (the ops under test, on [B, 6, 8, 8]) -> conv -> global average -> fc."""

    def __init__(self, body):
        super().__init__()
        self.stem = nn.Conv2d(3, 6, 3, padding=1)
        self.body = body
        self.head = nn.Conv2d(6, 8, 3, padding=1)
        self.fc = nn.Linear(8, CLASSES)

    def forward(self, x):
        x = self.head(self.body(self.stem(x)))
        return self.fc(x.mean(dim=(2, 3)))


class Padded(nn.Module):
    """F.pad in a border mode (PyTorch's reflect and replicate export as ONNX reflect and edge)."""

    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def forward(self, x):
        return F.pad(x, (1, 2, 2, 1), mode=self.mode)


class Tiled(nn.Module):
    """x.repeat on a run-time tensor: exported as ONNX Tile with constant repeats."""

    def forward(self, x):
        return x.repeat(1, 1, 2, 3)


class Resampled(nn.Module):
    """F.interpolate as U-Nets and FPNs use it: 2x nearest up, bilinear down to a size, bicubic
    (align_corners) back to 8x8; exported as ONNX Resize with constant scales or sizes."""

    def forward(self, x):
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        x = F.interpolate(x, size=(12, 10), mode="bilinear", align_corners=False)
        return F.interpolate(x, size=(8, 8), mode="bicubic", align_corners=True)


class Shuffled(nn.Module):
    """PixelShuffle / PixelUnshuffle (ONNX DepthToSpace / SpaceToDepth or their Reshape-Transpose
    form) and torch.gather along the width (ONNX GatherElements) with a fixed permutation that
    repeats columns, so that gradients accumulate."""

    def __init__(self):
        super().__init__()
        self.register_buffer("columns", torch.tensor([7, 0, 0, 3, 5, 5, 2, 1]).view(1, 1, 1, 8))

    def forward(self, x):
        x = F.pixel_unshuffle(F.pixel_shuffle(torch.cat([x, x], 1)[:, :8], 2), 2)[:, :6]
        return torch.gather(x, 3, self.columns.expand(x.shape[0], 6, 8, 8))


def probe_family(name, body, seed):
    torch.manual_seed(seed)
    model = Probe(body)
    # Sparse scheme: the head and classifier train, the stem and the body stay frozen, so that the
    # body's ops are differentiated for their input only.
    fam = models.image_family(name, model, hw=8, seed=seed,
                              sparse_rules=[{"match": "head.*"}, {"match": "fc.*"}],
                              sparse_params={n for n, _ in model.named_parameters() if n.startswith(("head.", "fc."))})
    return fam


class Pool1dNet(nn.Module):
    """1-D convolutions and pooling on [B, 3, 16] (pock runs both as 2-D with H = 1)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 6, 3)
        self.pool1 = nn.MaxPool1d(2)
        self.conv2 = nn.Conv1d(6, 8, 3, padding=1)
        self.pool2 = nn.AvgPool1d(3, stride=2, padding=1)
        self.fc = nn.Linear(8, CLASSES)

    def forward(self, x):
        x = self.pool2(self.conv2(torch.tanh(self.pool1(self.conv1(x)))))
        return self.fc(x.mean(dim=2))


def pool1d_family(seed):
    torch.manual_seed(seed)
    model = Pool1dNet()

    def make_batch(step):
        g = torch.Generator().manual_seed(seed + step)
        return {"input": torch.randn(models.BATCH, 3, 16, generator=g)}, torch.randint(0, CLASSES, (models.BATCH,), generator=g)
    inputs, _ = make_batch(-1)
    return models.Family("pool1d", model, inputs, make_batch, [17], [{"match": "conv2.*"}, {"match": "fc.*"}],
                         {n for n, _ in model.named_parameters() if n.startswith(("conv2.", "fc."))})


class Recurrent(nn.Module):
    """A recurrent layer on [B, S, F] (batch first, exported with Transpose around ONNX's RNN, GRU
    or LSTM) whose every output is read: the mean of Y over time, and the final states, into fc."""

    def __init__(self, rnn, hidden):
        super().__init__()
        self.rnn = rnn
        directions = 2 if rnn.bidirectional else 1
        states = 2 if isinstance(rnn, nn.LSTM) else 1
        self.fc = nn.Linear(directions * hidden * (1 + states * rnn.num_layers), CLASSES)

    def forward(self, x):
        y, state = self.rnn(x)
        finals = list(state) if isinstance(state, tuple) else [state]
        flat = [f.permute(1, 0, 2).reshape(x.shape[0], -1) for f in finals]
        return self.fc(torch.cat([y.mean(dim=1)] + flat, dim=1))


def recurrent_family(name, rnn, hidden, seed):
    torch.manual_seed(seed)
    model = Recurrent(rnn, hidden)

    def make_batch(step):
        g = torch.Generator().manual_seed(seed + step)
        return {"input": torch.randn(models.BATCH, 6, 5, generator=g)}, torch.randint(0, CLASSES, (models.BATCH,), generator=g)
    inputs, _ = make_batch(-1)
    # Sparse scheme: the recurrent weights R and the classifier train, the input weights W stay frozen.
    trainable = {n for n, _ in model.named_parameters() if n.startswith(("fc.", "rnn.weight_hh"))}
    return models.Family(name, model, inputs, make_batch, [17], [{"match": "fc.*"}, {"match": "rnn.weight_hh*"}],
                         trainable)


def families():
    return [
        probe_family("elu_selu_celu", nn.Sequential(nn.ELU(0.7), nn.Conv2d(6, 6, 1), nn.SELU(),
                                                    nn.Conv2d(6, 6, 1), nn.CELU(1.5)), 2000),
        # PyTorch writes Mish as Softplus -> Tanh -> Mul.
        probe_family("softplus_mish", nn.Sequential(nn.Softplus(), nn.Conv2d(6, 6, 1), nn.Mish()), 2100),
        # One slope per channel, exported as [C] unsqueezed to [C, 1, 1]; both slopes train. (A
        # single shared slope is a one-element initializer, which the importer keeps constant.)
        probe_family("prelu", nn.Sequential(nn.PReLU(6, init=0.1), nn.Conv2d(6, 6, 1), nn.PReLU(6, init=-0.3)), 2200),
        # The Tanh keeps the head's input from summing to zero over each plane (an instance-normalized
        # plane does): the head's centre taps would get a gradient of pure rounding noise, which AdamW
        # turns into full-size steps.
        probe_family("instance_norm", nn.Sequential(nn.InstanceNorm2d(6, affine=True), nn.ReLU(), nn.Conv2d(6, 6, 1),
                                                    nn.InstanceNorm2d(6, affine=True, eps=1e-3), nn.Tanh()), 2300),
        probe_family("pad_reflect_edge", nn.Sequential(Padded("reflect"), nn.Conv2d(6, 6, 3), nn.Tanh(),
                                                       Padded("replicate")), 2400),
        probe_family("tile", nn.Sequential(nn.Conv2d(6, 6, 1), Tiled(), nn.Conv2d(6, 6, 3, padding=1)), 2500),
        pool1d_family(2600),
        # 2x upsampling as decoders write it, then a grouped one with the padding wider than the stride.
        probe_family("conv_transpose", nn.Sequential(nn.ConvTranspose2d(6, 6, 3, stride=2, padding=1, output_padding=1),
                                                     nn.Tanh(), nn.ConvTranspose2d(6, 6, 2, stride=1, padding=1, groups=2)),
                     2700),
        probe_family("resize", nn.Sequential(nn.Conv2d(6, 6, 1), Resampled(), nn.Tanh()), 2800),
        probe_family("depth_space_gather", nn.Sequential(nn.Conv2d(6, 6, 1), Shuffled(), nn.Tanh()), 2900),
        # Unrolled at import into Linear / Add / activations per time step (docs/onnx.md, "Recurrent layers").
        recurrent_family("lstm_bidirectional", nn.LSTM(5, 8, batch_first=True, bidirectional=True), 8, 3000),
        recurrent_family("gru", nn.GRU(5, 8, batch_first=True), 8, 3100),
        recurrent_family("rnn_relu_two_layers", nn.RNN(5, 8, num_layers=2, nonlinearity="relu", batch_first=True), 8, 3200),
    ]
