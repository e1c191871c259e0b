"""Small models, one per group of ONNX ops that issue 17 added (activations, instance
normalization, reflect/edge padding, tiling, 1-D pooling, transposed convolution, Resize,
DepthToSpace / SpaceToDepth, GatherElements, the trigonometric functions and Erf, CumSum, Einsum,
GridSample (bilinear, bicubic), ScatterND and Det, TopK), for tests/parity/run_op_parity.py. Each
puts its ops between convolutions, so that their gradients flow into trained weights on both
sides."""
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


class Trigonometric(nn.Module):
    """torch.sin, cos, tan, asin, acos, atan and erf (ONNX's ops of those names; PyTorch's exporter
    has none for the hyperbolic ones), asin and acos of a tanh-bounded value so that they stay
    inside their domain, with a 1x1 convolution between the two groups."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 6, 1)

    def forward(self, x):
        x = self.conv(torch.sin(x) + torch.cos(x) * torch.atan(x) + torch.erf(x))
        b = 0.9 * torch.tanh(x)
        return torch.asin(b) + 0.5 * torch.acos(b) + torch.tan(b)


class Cumulative(nn.Module):
    """torch.cumsum along the width and along the channels (ONNX CumSum with a constant axis)."""

    def forward(self, x):
        return torch.cumsum(x, dim=3) / 8 + torch.cumsum(x, dim=1) / 6


class Einsummed(nn.Module):
    """torch.einsum as attention-like code writes it: a channel mix by a trained [C, C] weight, then
    a product of the activation with itself over the width (ONNX Einsum on run-time operands)."""

    def __init__(self):
        super().__init__()
        self.mix = nn.Parameter(torch.randn(6, 6) * 0.4)

    def forward(self, x):
        y = torch.einsum("bchw,cd->bdhw", x, self.mix)
        return torch.einsum("bchw,bcvw->bchv", y, y) * 0.125


class Warped(nn.Module):
    """F.grid_sample (ONNX GridSample) at points computed from the input itself, so that the
    gradient reaches both the sampled map and, through the grid, the convolution that makes it."""

    def __init__(self):
        super().__init__()
        self.offsets = nn.Conv2d(6, 2, 3, padding=1)

    def forward(self, x):
        grid = torch.tanh(self.offsets(x)).permute(0, 2, 3, 1)
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


class WarpedBicubic(Warped):
    """Warped with bicubic sampling (ONNX GridSample mode bicubic) and reflection padding."""

    def forward(self, x):
        grid = torch.tanh(self.offsets(x)).permute(0, 2, 3, 1)
        return F.grid_sample(x, grid, mode="bicubic", padding_mode="reflection", align_corners=True)


class IndexPutDet(nn.Module):
    """Assignment to advanced indices (PyTorch's index_put: ONNX ScatterND) of values read from
    the input itself, then each channel scaled by the determinant of its top-left 3 x 3 block (ONNX
    Det): gradients reach the input through the scatter's data and updates and through Det."""

    def forward(self, x):
        rows, cols = torch.tensor([0, 2, 5, 7, 2]), torch.tensor([1, 4, 4, 6, 3])
        y = x.clone()
        y[:, :, rows, cols] = torch.tanh(x[:, :, cols, rows])
        scale = 1 + 0.1 * torch.tanh(torch.det(x[:, :, :3, :3]))
        return y * scale[:, :, None, None]


class TopChannels(nn.Module):
    """torch.topk over the channels (ONNX TopK with a constant K): each position's 4 largest."""

    def forward(self, x):
        return torch.topk(x, 4, dim=1).values


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


def family_1d(name, model_class, seed, trained):
    """A model on [B, 3, 16] whose parameters under the `trained` prefixes train in the sparse scheme."""
    torch.manual_seed(seed)
    model = model_class()

    def make_batch(step):
        g = torch.Generator().manual_seed(seed + step)
        return {"input": torch.randn(models.BATCH, 3, 16, generator=g)}, torch.randint(0, CLASSES, (models.BATCH,), generator=g)
    inputs, _ = make_batch(-1)
    return models.Family(name, model, inputs, make_batch, [17], [{"match": p + "*"} for p in trained],
                         {n for n, _ in model.named_parameters() if n.startswith(tuple(trained))})


def pool1d_family(seed):
    return family_1d("pool1d", Pool1dNet, seed, ["conv2.", "fc."])


class ConvTranspose1dNet(nn.Module):
    """A 1-D transposed convolution (pock runs it as 2-D with H = 1) between 1-D convolutions on
    [B, 3, 16]; it trains, so its weight gradient passes the reshapes around the 2-D op."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 6, 3)
        self.up = nn.ConvTranspose1d(6, 4, 3, stride=2, padding=1, output_padding=1)
        self.fc = nn.Linear(4, CLASSES)

    def forward(self, x):
        return self.fc(torch.tanh(self.up(torch.tanh(self.conv(x)))).mean(dim=2))


def conv_transpose_1d_family(seed):
    return family_1d("conv_transpose_1d", ConvTranspose1dNet, seed, ["up.", "fc."])


class Pool3dNet(nn.Module):
    """3-D max and average pooling (pock runs each as a 2-D pool over H, W, then one over D) on
    [B, 4, 6, 8, 8] that a 1x1 convolution writes from the [B, 3, 8, 8] image, so that their
    gradients reach a trained weight."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 24, 1)
        self.max3d = nn.MaxPool3d(2, stride=(1, 2, 2), padding=(1, 0, 1))
        self.avg3d = nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        self.fc = nn.Linear(4, CLASSES)

    def forward(self, x):
        v = self.stem(x).view(x.shape[0], 4, 6, 8, 8)
        return self.fc(torch.tanh(self.avg3d(torch.tanh(self.max3d(v)))).mean(dim=(2, 3, 4)))


def pool3d_family(seed):
    torch.manual_seed(seed)
    model = Pool3dNet()
    return models.image_family("pool3d", model, hw=8, seed=seed, sparse_rules=[{"match": "stem.*"}],
                               sparse_params={n for n, _ in model.named_parameters() if n.startswith("stem.")})


class ConvTranspose3dNet(nn.Module):
    """A 3-D transposed convolution (pock: one 2-D per depth tap, spread, shifted and summed) with
    a depth stride, dilation, pads and output_padding, on [B, 4, 6, 8, 8] written by a 1x1
    convolution of the image; it trains, so the gradient reaches its weight through the slices."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 24, 1)
        self.up = nn.ConvTranspose3d(4, 2, (3, 2, 2), stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 1),
                                     dilation=(2, 1, 1))
        self.fc = nn.Linear(2, CLASSES)

    def forward(self, x):
        v = torch.tanh(self.stem(x)).view(x.shape[0], 4, 6, 8, 8)
        return self.fc(torch.tanh(self.up(v)).mean(dim=(2, 3, 4)))


def conv_transpose_3d_family(seed):
    torch.manual_seed(seed)
    model = ConvTranspose3dNet()
    return models.image_family("conv_transpose_3d", model, hw=8, seed=seed,
                               sparse_rules=[{"match": "up.*"}, {"match": "fc.*"}],
                               sparse_params={n for n, _ in model.named_parameters() if n.startswith(("up.", "fc."))})


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
        # One slope per channel, exported as [C] unsqueezed to [C, 1, 1], and one shared slope (a
        # one-element initializer, which must train like any weight): all three slopes train.
        probe_family("prelu", nn.Sequential(nn.PReLU(6, init=0.1), nn.Conv2d(6, 6, 1), nn.PReLU(6, init=-0.3),
                                            nn.Conv2d(6, 6, 1), nn.PReLU(init=0.2)), 2200),
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
        conv_transpose_1d_family(3000),
        pool3d_family(3100),
        # Dilated max pooling (a maximum of strided slices in pock), padded as dilated convolutions are.
        probe_family("max_pool_dilated", nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1, dilation=2), nn.Tanh(),
                                                       nn.MaxPool2d(2, stride=2, dilation=3)), 3200),
        conv_transpose_3d_family(3300),
        probe_family("trigonometric", Trigonometric(), 3000),
        probe_family("cumsum", nn.Sequential(nn.Conv2d(6, 6, 1), Cumulative(), nn.Tanh()), 3000),
        probe_family("einsum", nn.Sequential(nn.Conv2d(6, 6, 1), Einsummed(), nn.Tanh()), 3100),
        probe_family("grid_sample", nn.Sequential(nn.Conv2d(6, 6, 1), Warped(), nn.Tanh()), 3000),
        probe_family("grid_sample_bicubic", nn.Sequential(nn.Conv2d(6, 6, 1), WarpedBicubic(), nn.Tanh()), 3000),
        probe_family("scatter_nd_det", nn.Sequential(nn.Conv2d(6, 6, 1), IndexPutDet(), nn.Tanh()), 3100),
        probe_family("top_k", nn.Sequential(nn.Conv2d(6, 6, 1), TopChannels(), nn.Conv2d(4, 6, 1), nn.Tanh()), 3200),
        # Unrolled at import into Linear / Add / activations per time step (docs/onnx.md, "Recurrent layers").
        recurrent_family("lstm_bidirectional", nn.LSTM(5, 8, batch_first=True, bidirectional=True), 8, 3000),
        recurrent_family("gru", nn.GRU(5, 8, batch_first=True), 8, 3100),
        recurrent_family("rnn_relu_two_layers", nn.RNN(5, 8, num_layers=2, nonlinearity="relu", batch_first=True), 8, 3200),
    ]
