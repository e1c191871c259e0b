"""Errors arrive as pockengine.Error subclasses named after the C status (code, status name,
the C++ layers' message), one per pock_status value of include/pock/pock.h."""
import os
import re
import tempfile
import threading
import unittest

from common import BATCH, MODEL, ROOT, SPARSE_RECIPE, batches, np, pockengine


def header_statuses():
    with open(os.path.join(ROOT, "include", "pock", "pock.h")) as f:
        return {int(v): n for n, v in re.findall(r"(POCK_ERR_[A-Z_]+) = (\d+)", f.read())}


class ErrorsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.blob = pockengine.compile(MODEL, SPARSE_RECIPE)
        cls.x, cls.label = batches(1)

    def test_one_class_per_status_of_pock_h(self):
        self.assertEqual({code: status for code, (status, _) in pockengine.STATUSES.items()}, header_statuses())
        for code, (status, name) in pockengine.STATUSES.items():
            cls = getattr(pockengine, name)
            self.assertTrue(issubclass(cls, pockengine.Error))
            self.assertEqual((cls.code, cls.status), (code, status))
            self.assertNotEqual(pockengine.status_string(code), "unknown status")
        self.assertEqual(pockengine.status_string(5), "shape mismatch")

    def test_runtime_errors(self):
        engine = self.blob.open()
        with self.assertRaises(pockengine.NotFoundError) as caught:
            engine.set_input("pixels", self.x)
        e = caught.exception
        self.assertEqual((e.code, e.status), (9, "POCK_ERR_NOT_FOUND"))
        self.assertIn("'pixels'", e.message)
        self.assertTrue(str(e).startswith("POCK_ERR_NOT_FOUND: "))
        self.assertIsInstance(e, pockengine.Error)
        # The native layer's own error (a name the Python layer does not check).
        with self.assertRaises(pockengine.NotFoundError) as caught:
            engine.output_view("nope")
        self.assertIn("'nope'", caught.exception.message)
        with self.assertRaises(pockengine.ShapeMismatchError) as caught:
            engine.train_step(x=self.x[:2], label=self.label[:2])
        self.assertIn("(4, 16, 16, 3)", caught.exception.message)
        with self.assertRaises(pockengine.ShapeMismatchError):  # float labels do not pass for int64 ones
            engine.train_step(x=self.x, label=self.label.astype(np.float32))
        with self.assertRaises(pockengine.InvalidArgumentError):  # a label is not an output
            engine.output_view("label")
        with self.assertRaises(pockengine.NotFoundError):
            engine.run("decode")
        infer_only = pockengine.compile(MODEL, input_shapes={"x": (BATCH, 16, 16, 3)}).open()
        with self.assertRaises(pockengine.NotFoundError) as caught:
            infer_only.train_step(x=self.x)
        self.assertIn("recipe", caught.exception.message)

    def test_compile_errors(self):
        with self.assertRaises(pockengine.InvalidArgumentError) as caught:
            pockengine.compile(MODEL, {**SPARSE_RECIPE, "optimizer": {"type": "rmsprop"}})
        self.assertIn("rmsprop", caught.exception.message)
        with self.assertRaises(pockengine.InvalidArgumentError) as caught:
            pockengine.compile(MODEL, {**SPARSE_RECIPE, "batch_sise": 4})
        self.assertIn("batch_sise", caught.exception.message)
        with self.assertRaises(pockengine.InvalidArgumentError):
            pockengine.compile(MODEL, input_shapes={"nope": (1, 2)})
        with self.assertRaises(pockengine.InvalidArgumentError) as caught:
            pockengine.compile(b"not an onnx model")
        self.assertIn("ONNX", caught.exception.message)
        with self.assertRaises(pockengine.UnsupportedOpError):
            pockengine.compile("model.tflite")

    def test_open_errors(self):
        data = bytearray(self.blob.data)
        data[len(data) // 2] ^= 0xFF
        with self.assertRaises(pockengine.InvalidBlobError):
            pockengine.Engine(bytes(data))
        with self.assertRaises(pockengine.InvalidBlobError):
            pockengine.Engine(b"POCK")
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(pockengine.IoError) as caught:
                pockengine.Engine(os.path.join(tmp, "missing.pock"))
            self.assertIn("missing.pock", caught.exception.message)
        with self.assertRaises(pockengine.OutOfMemoryError):
            self.blob.open(memory_budget=1024)

    def test_threads_get_busy_not_a_crash(self):
        # Steps release the GIL; a call on an engine another thread is inside of raises BusyError.
        engine = self.blob.open(threads=1)
        engine.set_inputs(x=self.x, label=self.label)
        outcomes = [[], []]  # per thread: "ran" or "busy" per call

        def train(mine):
            for _ in range(200):
                try:
                    engine.train_step()
                    mine.append("ran")
                except pockengine.BusyError:
                    mine.append("busy")

        threads = [threading.Thread(target=train, args=(mine,)) for mine in outcomes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        calls = outcomes[0] + outcomes[1]
        self.assertEqual(len(calls), 400)
        self.assertEqual(engine.step, calls.count("ran"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
