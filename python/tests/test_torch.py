"""Compiling straight from a torch.nn.Module (exported to ONNX inside pockengine.compile): the
blob trains step by step as PyTorch does (same losses, same weights, SGD with momentum, full
and sparse), its inference equals the module's, and the module is left as it was. Needs torch
(Debian's python3-torch, under /usr/bin/python3): skipped without it."""
import sys
import unittest

from common import np, pockengine

try:
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"SKIP: {e} (torch: Debian's python3-torch, under /usr/bin/python3)")
    sys.exit(77)

BATCH, STEPS = 4, 6
LOSS_REL, WEIGHT_REL = 1e-4, 1e-3  # as the parity suite (docs/parity.md)


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, image):
        return self.fc(torch.flatten(self.pool(torch.relu(self.bn(self.conv(image)))), 1))


def data(step):
    g = torch.Generator().manual_seed(100 + step)
    return torch.randn(BATCH, 3, 8, 8, generator=g), torch.randint(0, 5, (BATCH,), generator=g)


def rel(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-12))


class TorchModuleTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.model = SmallCnn()

    def check_training(self, trainable_rules, trainable_params):
        recipe = {"batch_size": BATCH, "loss": {"type": "cross_entropy", "labels": "label"},
                  "optimizer": {"type": "sgd", "lr": 0.1, "momentum": 0.9}}
        if trainable_rules:
            recipe["trainable"] = trainable_rules
        initial = {k: v.clone() for k, v in self.model.state_dict().items()}
        blob = pockengine.compile(self.model, recipe, example_inputs=data(0)[0])
        for k, v in self.model.state_dict().items():  # the export's trace did not move BatchNorm statistics
            self.assertTrue(torch.equal(v, initial[k]), k)
        self.assertTrue(self.model.training)
        engine = blob.open(threads=1)
        self.assertEqual(list(engine.inputs()), ["image", "label"])  # the forward's argument name
        # Before any step, inference (BatchNorm on its running statistics) is the module's in eval
        # mode: the export's trace moved the statistics, and compile put them back.
        x = data(9)[0]
        self.model.eval()
        with torch.no_grad():
            want = self.model(x).numpy()
        self.model.train()
        self.assertLess(rel(engine.infer(image=x.numpy())["output"], want), 1e-5)
        self.assertEqual(sorted(engine.trainable_parameter_names), sorted(trainable_params))

        params = [p for n, p in self.model.named_parameters() if n in trainable_params]
        for n, p in self.model.named_parameters():
            p.requires_grad_(n in trainable_params)
        opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
        pock_losses, torch_losses = [], []
        for step in range(STEPS):
            x, y = data(step)
            pock_losses.append(engine.train_step(image=x.numpy(), label=y.numpy()))
            opt.zero_grad()
            loss = nn.functional.cross_entropy(self.model(x), y)
            loss.backward()
            opt.step()
            torch_losses.append(loss.item())
        for step, (p, t) in enumerate(zip(pock_losses, torch_losses)):
            self.assertLess(abs(p - t) / abs(t), LOSS_REL, f"step {step + 1}: {p} vs PyTorch {t}")
        self.assertLess(pock_losses[-1], pock_losses[0])
        for name, value in self.model.state_dict().items():
            if name in trainable_params:
                self.assertLess(rel(engine.parameter(name), value.numpy()), WEIGHT_REL, name)

    def test_full_training_matches_pytorch(self):
        self.check_training(None, [n for n, _ in self.model.named_parameters()])

    def test_sparse_training_matches_pytorch(self):
        self.check_training([{"match": "fc.*"}, {"match": "bn.bias"}], ["fc.weight", "fc.bias", "bn.bias"])

    def test_inference_matches_pytorch(self):
        self.model.eval()
        x = data(7)[0]
        blob = pockengine.compile(self.model, example_inputs={"image": x}, output_names=["logits"])
        self.assertFalse(self.model.training)
        engine = blob.open(threads=1)
        got = engine.infer(image=x.numpy())["logits"]
        with torch.no_grad():
            want = self.model(x).numpy()
        self.assertLess(rel(got, want), 1e-5)

    def test_needs_example_inputs(self):
        with self.assertRaises(pockengine.InvalidArgumentError):
            pockengine.compile(self.model)


if __name__ == "__main__":
    unittest.main(verbosity=2)
