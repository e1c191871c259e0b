"""Inference on numpy arrays: results equal `pockc infer`'s, arrays of the right layout are read
in place, the engine's own input and output memory is reachable as zero-copy views, and outputs
can be copied into arrays the caller owns."""
import subprocess
import unittest

from common import BATCH, MODEL, BlobTest, batches, np, pockc_or_skip, pockengine


class InferTest(BlobTest):
    RECIPE = None  # inference only, the ONNX file's batch dimension set by input_shapes
    INPUT_SHAPES = {"x": (BATCH, 16, 16, 3)}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.x, _ = batches(2, seed=1)

    def test_infer_equals_pockc(self):
        pockc = pockc_or_skip()
        engine = self.blob.open(threads=1)
        self.assertFalse(engine.can_train)
        got = np.concatenate([engine.infer(x=self.x[:BATCH])["fc"], engine.infer({"x": self.x[BATCH:]})["fc"]])
        data, out = self.path("x.npz"), self.path("y.npz")
        np.savez(data, x=self.x)
        subprocess.run([pockc, "infer", self.blob_path, "--data", data, "--out", out, "--threads", "1"], check=True,
                       capture_output=True)
        np.testing.assert_array_equal(got, np.load(out)["fc"])

    def test_zero_copy_views(self):
        engine = self.blob.open(threads=1)
        want = engine.infer(x=self.x[:BATCH])["fc"]

        # Filling the input's view sets the input, with no copy at all.
        x_view = engine.input_view("x")
        self.assertEqual((x_view.shape, x_view.dtype), ((BATCH, 16, 16, 3), np.float32))
        self.assertTrue(x_view.flags.writeable)
        self.assertFalse(x_view.flags.owndata)
        x_view[...] = self.x[BATCH:]
        self.assertTrue(np.shares_memory(x_view, engine.input_view("x")))

        # copy=False: the outputs are views of the engine's memory, read-only, the same memory each call.
        views = engine.infer(copy=False)
        fc = views["fc"]
        self.assertFalse(fc.flags.owndata)
        self.assertFalse(fc.flags.writeable)
        self.assertTrue(np.shares_memory(fc, engine.output_view("fc")))
        second = fc.copy()
        self.assertFalse(np.array_equal(second, want))
        # The next run overwrites what the view shows.
        x_view[...] = self.x[:BATCH]
        engine.infer(copy=False)
        np.testing.assert_array_equal(fc, want)
        # A copy is not a view.
        self.assertFalse(np.shares_memory(engine.output("fc"), fc))
        with self.assertRaises(ValueError):
            fc[0, 0] = 1.0
        # A view keeps its engine alive.
        del engine, views
        np.testing.assert_array_equal(fc, want)

    def test_arrays_in_place_and_converted(self):
        engine = self.blob.open(threads=1)
        want = engine.infer(x=self.x[:BATCH])["fc"]
        # Outputs into the caller's array: no allocation, the same array back.
        out = np.empty((BATCH, 10), np.float32)
        got = engine.infer(x=self.x[:BATCH], out={"fc": out})["fc"]
        self.assertIs(got, out)
        np.testing.assert_array_equal(out, want)
        # Layouts that do not fit are converted: Fortran order, float64, a strided slice.
        np.testing.assert_array_equal(engine.infer(x=np.asfortranarray(self.x[:BATCH]))["fc"], want)
        np.testing.assert_array_equal(engine.infer(x=self.x[:BATCH].astype(np.float64))["fc"], want)
        doubled = np.repeat(self.x[:BATCH], 2, axis=0)[::2]
        self.assertFalse(doubled.flags.c_contiguous)
        np.testing.assert_array_equal(engine.infer(x=doubled)["fc"], want)
        with self.assertRaises(pockengine.ShapeMismatchError):
            engine.infer(x=self.x[:BATCH], out={"fc": np.empty((BATCH, 10), np.float64)})

    def test_blob_in_memory(self):
        blob = pockengine.compile(MODEL, input_shapes={"x": (BATCH, 16, 16, 3)})
        self.assertIsNone(blob.path)
        self.assertEqual(blob.data, self.blob.data)  # compiling is deterministic
        want = self.blob.open(threads=1).infer(x=self.x[:BATCH])["fc"]
        engine = pockengine.Engine(blob.data, threads=1)
        np.testing.assert_array_equal(engine.infer(x=self.x[:BATCH])["fc"], want)


if __name__ == "__main__":
    unittest.main(verbosity=2)
