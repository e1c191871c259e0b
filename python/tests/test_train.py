"""Compile the model's ONNX with the sparse recipe, train on numpy batches: the loss goes down,
and every step's loss and the trained weights equal `pockc train`'s on the same blob and batches."""
import json
import subprocess
import unittest

from common import BATCH, BlobTest, batches, np, pockc_or_skip, pockengine

STEPS = 12


class TrainTest(BlobTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.x, cls.label = batches(3)

    def train(self, engine, steps):
        losses = []
        for k in range(steps):
            b = slice((k % 3) * BATCH, (k % 3 + 1) * BATCH)  # pockc's order: batch k mod 3
            losses.append(engine.train_step(x=self.x[b], label=self.label[b]))
        return losses

    def test_blob_and_report(self):
        self.assertEqual(self.blob.path, self.blob_path)
        with open(self.blob_path, "rb") as f:
            self.assertEqual(f.read(), self.blob.data)
        memory = self.blob.report["memory"]
        self.assertGreater(memory["trainable_bytes"], 0)
        self.assertLess(memory["trainable_bytes"], memory["weights_bytes"])  # sparse: a part trains
        self.assertEqual(memory["optimizer_state_bytes"], 2 * memory["trainable_bytes"])  # AdamW: two moments

    def test_signature(self):
        engine = self.blob.open(threads=1)
        self.assertEqual(engine.functions, ["infer", "train", "eval"])
        self.assertEqual(engine.inputs(), {"x": ((BATCH, 16, 16, 3), np.dtype(np.float32)),
                                           "label": ((BATCH,), np.dtype(np.int64))})
        self.assertEqual(engine.outputs("infer"), {"fc": ((BATCH, 10), np.dtype(np.float32))})
        self.assertIn("model/fc/MatMul/ReadVariableOp:0", engine.trainable_parameter_names)
        self.assertNotIn("model/stem_conv/Conv2D/ReadVariableOp:0", engine.trainable_parameter_names)
        self.assertTrue(engine.can_train)
        self.assertEqual(engine.step, 0)

    def test_loss_goes_down(self):
        engine = self.blob.open(threads=1)
        losses = self.train(engine, STEPS)
        self.assertEqual(engine.step, STEPS)
        self.assertTrue(all(np.isfinite(losses)))
        self.assertLess(np.mean(losses[-3:]), 0.7 * np.mean(losses[:3]), losses)
        # eval_step: the loss without an update.
        before = engine.parameters(trainable_only=True)
        loss = engine.eval_step(x=self.x[:BATCH], label=self.label[:BATCH])
        self.assertTrue(np.isfinite(loss))
        for name, value in engine.parameters(trainable_only=True).items():
            np.testing.assert_array_equal(value, before[name])
        # Frozen parameters are as compiled: the first half of the head's output channels trains only.
        head = engine.parameter("model/head_conv/Conv2D/ReadVariableOp:0")
        initial = pockengine.Engine(self.blob_path).parameter("model/head_conv/Conv2D/ReadVariableOp:0")
        self.assertFalse(np.array_equal(head[:16], initial[:16]))
        np.testing.assert_array_equal(head[16:], initial[16:])

    def test_same_losses_as_pockc_train(self):
        pockc = pockc_or_skip()
        engine = pockengine.Engine(self.blob_path, threads=1)
        losses = self.train(engine, STEPS)
        data, log, weights = (self.path(f) for f in ("data.npz", "log.jsonl", "weights.npz"))
        np.savez(data, x=self.x, label=self.label)
        subprocess.run([pockc, "train", self.blob_path, "--data", data, "--steps", str(STEPS), "--threads", "1",
                        "--log", log, "--save-weights", weights], check=True, capture_output=True)
        with open(log) as f:
            pockc_losses = [json.loads(line)["loss"] for line in f]
        self.assertEqual(len(pockc_losses), STEPS)
        # pockc logs the float loss through JSON: the same float32 value, bit for bit.
        np.testing.assert_array_equal(np.float32(losses), np.float32(pockc_losses))
        saved = np.load(weights)
        for name in engine.parameter_names:
            np.testing.assert_array_equal(engine.parameter(name), saved[name], err_msg=name)


if __name__ == "__main__":
    unittest.main(verbosity=2)
