"""pockengine.Engine: an open blob. Inputs and outputs are numpy arrays; an array of the
tensor's dtype, shape and C order goes to the engine by pointer (one copy into the engine's
arena, none in Python), and views over the engine's own input and output memory skip even that."""
import json
import os
import tempfile

import numpy as np

from . import _pockengine
from ._errors import ERROR_CLASSES

_SHAPE_MISMATCH = ERROR_CLASSES[5]
_NOT_FOUND = ERROR_CLASSES[9]

# pock dtype names (pock/types.hpp) -> numpy. numpy has no bfloat16: its bits come as uint16.
DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "i32": np.int32, "i64": np.int64,
          "i8": np.int8, "u8": np.uint8, "bool": np.bool_, "f64": np.float64, "i16": np.int16, "u16": np.uint16,
          "u32": np.uint32, "u64": np.uint64}


class Engine:
    """An engine over a blob: a :class:`pockengine.Blob`, a path to a .pock file, or its bytes.

    threads        worker threads (0: one per core)
    backend        preferred kernel backend ("cpu", "ref", or a plugin's name); None: as compiled
    plugins        backend plugin libraries to load (paths or names found in POCK_BACKEND_PATH)
    memory_budget  refuse a blob whose plan needs more bytes (0: no budget)
    rollback       a failed train step restores the weights (the default)

    One call at a time: a second thread calling in meanwhile gets pockengine.BusyError.
    """

    def __init__(self, blob, *, threads=0, backend=None, plugins=(), memory_budget=0, rollback=True):
        from ._compile import Blob, _memory_budget
        if isinstance(blob, Blob):
            source = blob.path if blob.path is not None else blob.data
        elif isinstance(blob, (bytes, bytearray, memoryview)):
            source = bytes(blob)
        else:
            source = os.fspath(blob)
        self._native = _pockengine.Engine(source, int(threads), backend or "", [os.fspath(p) for p in plugins],
                                          _memory_budget(memory_budget), bool(rollback))
        self.signature = self._native.signature()
        self._tensors = self.signature["tensors"]

    def __repr__(self):
        fns = ", ".join(self.signature["functions"])
        return f"<pockengine.Engine {self._native.path or 'from memory'}: {fns}; step {self.step}>"

    # --- what the blob holds -----------------------------------------------------------------
    @property
    def functions(self):
        """Names of the blob's functions: "infer", and "train" / "eval" with a recipe."""
        return list(self.signature["functions"])

    def inputs(self, function=None):
        """{name: (shape, numpy dtype)} of a function's inputs (default: train if any, else infer)."""
        return {n: self._shape_dtype(n) for n in self._function(function)["inputs"]}

    def outputs(self, function=None):
        """{name: (shape, numpy dtype)} of a function's outputs (default: train if any, else infer)."""
        return {n: self._shape_dtype(n) for n in self._function(function)["outputs"]}

    @property
    def parameter_names(self):
        return list(self.signature["parameters"])

    @property
    def trainable_parameter_names(self):
        return [n for n in self.signature["parameters"] if self._tensors[n]["trainable"]]

    @property
    def step(self):
        """Training steps taken (restored by load_checkpoint)."""
        return self._native.step

    @property
    def can_train(self):
        return self._native.can_train

    def has_function(self, name):
        return self._native.has_function(name)

    # --- inputs and outputs --------------------------------------------------------------------
    def set_input(self, name, array):
        """Sets an input (or a label) from an array. Of the right dtype, shape and C order it is
        read in place; otherwise converted first (a float64 array to float32, say). A dtype of
        another kind (floats for int64 labels) or another shape raises ShapeMismatchError."""
        self._native.set_input(name, self._as_input(name, array))

    def set_inputs(self, inputs=None, **named):
        for name, array in {**(inputs or {}), **named}.items():
            self.set_input(name, array)

    def input_view(self, name):
        """A writable numpy array over the engine's memory for input `name`: filling it sets the
        input with no copy at all."""
        return self._native.view(name, True)

    def output_view(self, name):
        """A read-only numpy array over the engine's memory for output `name`: no copy; the next
        run overwrites it."""
        return self._native.view(name, False)

    def output(self, name, out=None):
        """A copy of output `name`, into `out` when given (a C-ordered array of its dtype and shape)."""
        out = self._output_buffer(name, out)
        self._native.get_output(name, out)
        return out

    def infer(self, inputs=None, *, out=None, copy=True, **named):
        """Runs the inference function on `inputs` (a dict, or keyword arguments; inputs already
        set stay as they are) and returns {output name: array}. With copy=False the arrays are
        read-only views of the engine's memory (overwritten by the next run); `out` gives arrays
        to copy some outputs into."""
        return self.run("infer", inputs, out=out, copy=copy, **named)

    def run(self, function, inputs=None, *, out=None, copy=True, **named):
        """Runs an inference-form function by name ("infer", "decode") like infer()."""
        self.set_inputs(inputs, **named)
        if function == "infer":
            self._native.infer()
        else:
            self._native.run(function)
        return self._collect(function, out or {}, copy)

    def train_step(self, inputs=None, **named):
        """One training step (forward, loss, backward, update) on `inputs` and labels; returns the loss."""
        self.set_inputs(inputs, **named)
        return self._native.train_step()

    def eval_step(self, inputs=None, **named):
        """Forward and loss without an update; returns the loss."""
        self.set_inputs(inputs, **named)
        return self._native.eval_step()

    # --- parameters and checkpoints ---------------------------------------------------------------
    def parameter(self, name):
        """A copy of a parameter, by its model name."""
        out = self._buffer(name)
        self._native.get_parameter(name, out)
        return out

    def parameters(self, trainable_only=False):
        """{name: array} of every parameter (or the trainable ones): copies."""
        names = self.trainable_parameter_names if trainable_only else self.parameter_names
        return {n: self.parameter(n) for n in names}

    def set_parameter(self, name, array):
        """Overwrites a trainable parameter."""
        self._native.set_parameter(name, self._as_input(name, array))

    def save_checkpoint(self, path):
        """Trainable weights, optimizer state and step, written atomically."""
        self._native.save_checkpoint(os.fspath(path))

    def load_checkpoint(self, path):
        self._native.load_checkpoint(os.fspath(path))

    def export_onnx(self, source, out, *, external_data=False, keep_training_form=False):
        """The trained model as ONNX: `source` (the .onnx this blob was compiled from) with every
        initializer that training changed replaced, as `pockc export CKPT --onnx SOURCE -o OUT`
        writes it (docs/exporting.md). Returns {"replaced": [...], "unchanged": [...], "kept": N,
        "external_data": path or "", "inference_form_nodes": N}."""
        if not hasattr(_pockengine, "export_onnx"):
            raise RuntimeError("this pockengine was built without the ONNX frontend (POCK_WITH_ONNX=OFF)")
        with tempfile.TemporaryDirectory() as tmp:
            ckpt = os.path.join(tmp, "export.ckpt")
            self.save_checkpoint(ckpt)
            return _pockengine.export_onnx(ckpt, os.fspath(source), os.fspath(out), external_data, keep_training_form)

    # --- reports ----------------------------------------------------------------------------
    def backends(self):
        """The engine's backends: [{name, library, usable, error, ops_bound}]."""
        return self._native.backends()

    def inspect(self):
        """`pockc inspect --json` of this blob as bound here, as a dict: functions, FLOPs per
        phase, parameters, memory, backends, ops."""
        return json.loads(self._native.inspect_json())

    # --- helpers ----------------------------------------------------------------------------------
    def _function(self, function):
        fns = self.signature["functions"]
        if function is None:
            function = "train" if "train" in fns else "infer"
        if function not in fns:
            raise _NOT_FOUND(f"the blob has no function '{function}' (it has {', '.join(fns)})")
        return fns[function]

    def _spec(self, name):
        spec = self._tensors.get(name)
        if spec is None:
            raise _NOT_FOUND(f"no input, output or parameter named '{name}'")
        return spec

    def _shape_dtype(self, name):
        spec = self._spec(name)
        return tuple(spec["shape"]), np.dtype(DTYPES[spec["dtype"]])

    def _buffer(self, name):
        shape, dtype = self._shape_dtype(name)
        return np.empty(shape, dtype)

    def _as_input(self, name, value):
        shape, dtype = self._shape_dtype(name)
        array = np.asarray(value)
        if array.dtype != dtype and not np.can_cast(array.dtype, dtype, casting="same_kind"):
            raise _SHAPE_MISMATCH(f"'{name}' is {self._spec(name)['dtype']}: an array of {array.dtype} does not convert")
        if array.shape != shape:
            raise _SHAPE_MISMATCH(f"'{name}' has shape {shape}, the array {array.shape}")
        return np.ascontiguousarray(array, dtype=dtype)  # the array itself when it already fits

    def _output_buffer(self, name, out):
        if out is None:
            return self._buffer(name)
        shape, dtype = self._shape_dtype(name)
        if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous \
                or not out.flags.writeable:
            raise _SHAPE_MISMATCH(f"out for '{name}' must be a writable C-ordered {dtype} array of shape {shape}")
        return out

    def _collect(self, function, out, copy):
        results = {}
        for name in self._function(function)["outputs"]:
            if name in out:
                results[name] = self.output(name, out[name])
            elif copy:
                results[name] = self.output(name)
            else:
                results[name] = self.output_view(name)
        return results
