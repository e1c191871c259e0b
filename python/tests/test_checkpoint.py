"""Checkpoints: save after some steps, load into a fresh engine, and the training goes on exactly
as without the interruption (weights, optimizer state and step restored); a checkpoint written by
Python resumes `pockc train --resume`, and a corrupt one is refused."""
import subprocess
import unittest

from common import BATCH, BlobTest, batches, np, pockc_or_skip, pockengine


class CheckpointTest(BlobTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.x, cls.label = batches(4, seed=2)

    def step(self, engine, k):
        b = slice((k % 4) * BATCH, (k % 4 + 1) * BATCH)
        return engine.train_step(x=self.x[b], label=self.label[b])

    def test_round_trip(self):
        ckpt = self.path("round_trip.ckpt")
        straight = self.blob.open(threads=1)
        for k in range(3):
            self.step(straight, k)
        straight.save_checkpoint(ckpt)
        at_save = straight.parameters(trainable_only=True)
        later = [self.step(straight, k) for k in range(3, 7)]

        resumed = self.blob.open(threads=1)
        self.assertEqual(resumed.step, 0)
        resumed.load_checkpoint(ckpt)
        self.assertEqual(resumed.step, 3)
        for name, value in resumed.parameters(trainable_only=True).items():
            np.testing.assert_array_equal(value, at_save[name], err_msg=name)
        # AdamW's moments came back too: the same losses, bit for bit.
        self.assertEqual([self.step(resumed, k) for k in range(3, 7)], later)
        for name, value in resumed.parameters().items():
            np.testing.assert_array_equal(value, straight.parameter(name), err_msg=name)

    def test_set_parameter_then_checkpoint(self):
        engine = self.blob.open(threads=1)
        name = "model/fc/BiasAdd/ReadVariableOp:0"
        engine.set_parameter(name, np.arange(10, dtype=np.float32))
        ckpt = self.path("set.ckpt")
        engine.save_checkpoint(ckpt)
        other = self.blob.open(threads=1)
        other.load_checkpoint(ckpt)
        np.testing.assert_array_equal(other.parameter(name), np.arange(10, dtype=np.float32))
        frozen = [n for n in engine.parameter_names if n not in engine.trainable_parameter_names]
        self.assertEqual(frozen, ["model/head_bn/ReadVariableOp:0"])  # the rest folded into convolutions
        with self.assertRaises(pockengine.InvalidArgumentError):  # frozen: read from the blob
            engine.set_parameter(frozen[0], np.zeros(32, np.float32))

    def test_pockc_resumes_a_python_checkpoint(self):
        pockc = pockc_or_skip()
        ckpt, data, weights = (self.path(f) for f in ("py.ckpt", "data.npz", "weights.npz"))
        engine = self.blob.open(threads=1)
        for k in range(2):
            self.step(engine, k)
        engine.save_checkpoint(ckpt)
        for k in range(2, 5):
            self.step(engine, k)
        np.savez(data, x=self.x, label=self.label)
        subprocess.run([pockc, "train", self.blob.path, "--data", data, "--steps", "3", "--resume", ckpt,
                        "--threads", "1", "--save-weights", weights], check=True, capture_output=True)
        saved = np.load(weights)
        for name in engine.trainable_parameter_names:
            np.testing.assert_array_equal(engine.parameter(name), saved[name], err_msg=name)

    def test_corrupt_checkpoint_is_refused(self):
        engine = self.blob.open(threads=1)
        self.step(engine, 0)
        ckpt = self.path("corrupt.ckpt")
        engine.save_checkpoint(ckpt)
        before = engine.parameters()
        with open(ckpt, "r+b") as f:
            f.seek(40)
            byte = f.read(1)
            f.seek(40)
            f.write(bytes([byte[0] ^ 0xFF]))
        with self.assertRaises(pockengine.InvalidBlobError) as caught:
            engine.load_checkpoint(ckpt)
        self.assertEqual(caught.exception.status, "POCK_ERR_INVALID_BLOB")
        for name, value in engine.parameters().items():  # nothing was loaded
            np.testing.assert_array_equal(value, before[name], err_msg=name)
        with self.assertRaises(pockengine.IoError):
            engine.load_checkpoint(self.path("missing.ckpt"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
