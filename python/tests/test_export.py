"""Engine.export_onnx: the trained engine written back into its source ONNX (the committed
tf2onnx MobileNetV2-mini, trained with the demo's sparse recipe: BatchNorm shifts folded into
frozen convolutions, half the head convolution's channels, the classifier). The export, compiled
again, infers what the trained engine infers; the trained parameters are in it bit for bit, read
back with the onnx package; everything else is the source's."""
import unittest

from common import MODEL, BlobTest, batches, np

try:
    import onnx
    from onnx import numpy_helper
except ImportError:
    onnx = None

import pockengine


@unittest.skipIf(onnx is None, "needs the onnx package (python3-onnx)")
class ExportOnnxTest(BlobTest):
    def test_export_infers_as_the_trained_engine(self):
        engine = self.blob.open(threads=1)
        x, label = batches(3)
        for k in range(3):
            engine.train_step(x=x[4 * k:4 * k + 4], label=label[4 * k:4 * k + 4])
        out = self.path("trained.onnx")
        report = engine.export_onnx(MODEL, out)
        trained = engine.parameters(trainable_only=True)
        # head_bn's statistics moved too: the layer before it trains, so it runs in training form.
        statistics = set(report["replaced"]) - set(trained)
        self.assertEqual(set(report["replaced"]) - statistics, set(trained))
        self.assertEqual(sorted(statistics), ["model/head_bn/FusedBatchNormV3/ReadVariableOp:0",
                                              "model/head_bn/FusedBatchNormV3/ReadVariableOp_1:0"])

        source = {t.name: numpy_helper.to_array(t) for t in onnx.load(MODEL).graph.initializer}
        exported = {t.name: numpy_helper.to_array(t) for t in onnx.load(out).graph.initializer}
        self.assertEqual(set(exported), set(source))
        for name in statistics:  # not readable through the engine: the inference below checks them
            self.assertFalse(np.array_equal(exported[name], source[name]), name)
        for name, value in exported.items():
            if name in statistics:
                continue
            want = trained.get(name, source[name])
            self.assertEqual(value.tobytes(), np.ascontiguousarray(want).tobytes(), name)

        reimported = pockengine.compile(out, None, input_shapes={"x": [4, 16, 16, 3]}).open(threads=1)
        original = pockengine.compile(MODEL, None, input_shapes={"x": [4, 16, 16, 3]}).open(threads=1)
        probe = x[:4]
        want = engine.infer(x=probe)["fc"]
        np.testing.assert_allclose(reimported.infer(x=probe)["fc"], want, atol=1e-5)
        self.assertGreater(np.abs(original.infer(x=probe)["fc"] - want).max(), 1e-3)  # training changed it

    def test_a_wrong_source_is_refused(self):
        engine = self.blob.open(threads=1)
        with self.assertRaises(pockengine.Error):
            engine.export_onnx(self.path("missing.onnx"), self.path("never.onnx"))


if __name__ == "__main__":
    unittest.main()
