"""compile(bind=...): an ONNX graph input that feeds a shape operand is bound to a value at compile
time (pockc compile --bind), from a list (the declared dtype) or a NumPy array (its own dtype);
the result infers as NumPy's reshape, and a binding that disagrees with the model is refused."""
import unittest

from common import np, pockengine

try:
    from onnx import TensorProto, helper
except ImportError:
    helper = None


def reshape_model():
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "target"], ["y"])], "bind",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("target", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@unittest.skipIf(helper is None, "needs onnx (python3-onnx) to write the model")
class BindTest(unittest.TestCase):
    def test_bound_shape_infers_as_numpy(self):
        x = np.arange(12, dtype=np.float32).reshape(2, 6)
        for value in ([3, 4], np.array([3, 4], dtype=np.int64)):
            blob = pockengine.compile(reshape_model(), bind={"target": value})
            engine = blob.open()
            self.assertEqual(list(engine.inputs()), ["x"])
            np.testing.assert_array_equal(engine.infer(x=x)["y"], x.reshape(3, 4))

    def test_refusals_name_the_input(self):
        with self.assertRaises(pockengine.InvalidArgumentError) as caught:
            pockengine.compile(reshape_model())
        self.assertIn("--bind target=", caught.exception.message)
        with self.assertRaises(pockengine.InvalidArgumentError) as caught:
            pockengine.compile(reshape_model(), bind={"target": np.array([3, 4], dtype=np.int32)})
        self.assertIn("the value is i32, but the model declares the input i64", caught.exception.message)
        with self.assertRaises(pockengine.NotFoundError) as caught:
            pockengine.compile(reshape_model(), bind={"shape": [3, 4]})
        self.assertIn("'shape'", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
