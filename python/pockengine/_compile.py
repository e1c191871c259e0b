"""pockengine.compile: a model plus a recipe become a blob, through the compiler `pockc compile`
uses. The model is a file pockc reads (.onnx, .gguf, a Hugging Face folder), ONNX bytes or an
onnx.ModelProto, or a torch.nn.Module, exported to ONNX here with torch.onnx.export."""
import inspect as _inspect
import io
import json
import os
import tempfile
import warnings

from . import _pockengine
from ._errors import ERROR_CLASSES

_INVALID_ARGUMENT = ERROR_CLASSES[1]


class Blob:
    """A compiled blob: ``data`` (the bytes of the .pock file), ``report`` (the compiler's
    memory report as a dict: weights, trainable, optimizer state, saved activations, arena peak,
    ...) and ``path`` (where it was written, or None while it lives in memory only)."""

    def __init__(self, data, report=None, path=None):
        self.data = bytes(data)
        self.report = report if report is not None else {}
        self.path = os.fspath(path) if path is not None else None

    def __len__(self):
        return len(self.data)

    def __bytes__(self):
        return self.data

    def __repr__(self):
        where = self.path or "in memory"
        return f"<pockengine.Blob {len(self.data)} bytes, {where}>"

    def save(self, path):
        """Writes the blob to `path` (atomically: a crash leaves the previous file) and returns it."""
        path = os.fspath(path)
        partial = path + ".part"
        with open(partial, "wb") as f:
            f.write(self.data)
        os.replace(partial, path)
        self.path = path
        return path

    def open(self, **options):
        """An Engine over this blob (pockengine.Engine's options). A saved blob is mapped from
        its file; one in memory is copied once into aligned memory."""
        from ._engine import Engine
        return Engine(self, **options)

    def inspect(self, **options):
        """What `pockc inspect --json` reports about this blob, as a dict."""
        from . import inspect
        return inspect(self, **options)


def _recipe_text(recipe):
    if recipe is None:
        return None
    if isinstance(recipe, dict):
        return json.dumps(recipe)
    if isinstance(recipe, (str, os.PathLike)):
        text = os.fspath(recipe)
        if text.lstrip().startswith("{"):
            return text
        with open(text, encoding="utf-8") as f:
            return f.read()
    raise TypeError(f"recipe: a dict, JSON text or a path to a .json file, not {type(recipe).__name__}")


def _shape_args(input_shapes, dims):
    """{"x": (4, 6)} and {"batch": 8} as pockc's --input-shape arguments (x=4,6 and @batch=8)."""
    args = []
    if isinstance(input_shapes, dict):
        for name, shape in input_shapes.items():
            args.append(f"{name}=" + ",".join(str(int(d)) for d in shape))
    elif input_shapes:
        args.extend(str(a) for a in input_shapes)
    for name, value in (dims or {}).items():
        args.append(f"@{name}={int(value)}")
    return args


def _bind_args(bind, folder):
    """{"shape": [3, 4], "scales": np.array(...)} as pockc's --bind arguments: a list or scalar in
    text form (the input's declared dtype), an array through a .npy file in `folder` (its dtype)."""
    args = []
    for name, value in (bind or {}).items():
        if hasattr(value, "dtype") and hasattr(value, "shape"):
            import numpy as np
            path = os.path.join(folder, f"bind{len(args)}.npy")
            np.save(path, np.ascontiguousarray(value))
            args.append(f"{name}=@{path}")
        elif isinstance(value, (list, tuple)):
            args.append(f"{name}=" + ",".join(repr(v) for v in value))
        else:
            args.append(f"{name}={value!r}")
    return args


def _memory_budget(value):
    if isinstance(value, str):
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        text = value.strip().upper().rstrip("B")
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    return int(value or 0)


def _is_torch_module(model):
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(model).__mro__)


def export_torch(module, example_inputs, *, input_names=None, output_names=None, opset=17, training=True):
    """ONNX bytes of a torch.nn.Module, exported as pockc expects: every parameter keeps its
    state_dict name (no constant folding), BatchNorm and Dropout in training mode when
    `training`. The module's state (BatchNorm running statistics, train/eval mode) is as before."""
    import torch

    if isinstance(example_inputs, dict):
        input_names = input_names or list(example_inputs)
        example_inputs = tuple(example_inputs.values())
    elif not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    example_inputs = tuple(torch.as_tensor(x) for x in example_inputs)
    if input_names is None:
        # The forward's own argument names: forward(self, x) exports its input as "x".
        params = [p for p in _inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        input_names = [p.name for p in params[:len(example_inputs)]]
        if len(input_names) < len(example_inputs):
            input_names = [f"input{i}" for i in range(len(example_inputs))]
    state = {k: v.detach().clone() for k, v in module.state_dict().items()}
    was_training = module.training
    kwargs = dict(input_names=list(input_names), output_names=list(output_names or ["output"]),
                  opset_version=opset, do_constant_folding=False,
                  training=torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL)
    if "dynamo" in _inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False  # the TorchScript exporter: names parameters as state_dict does
    buffer = io.BytesIO()
    try:
        with warnings.catch_warnings():  # the exporter's notes on training-mode export, not errors
            warnings.simplefilter("ignore")
            torch.onnx.export(module, example_inputs, buffer, **kwargs)
        moved = {k: state[k] for k, v in module.state_dict().items() if not torch.equal(v, state[k])}
    finally:
        module.load_state_dict(state)  # tracing ran the forward: BatchNorm statistics moved
        module.train(was_training)
    return _with_initializers(buffer.getvalue(), moved)


def _with_initializers(onnx_bytes, values):
    """The ONNX model with these initializers set back to `values` (tensors by name): a
    training-mode trace ran BatchNorm once on the example inputs and the export wrote the running
    statistics as that step left them."""
    if not values:
        return onnx_bytes
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        warnings.warn(f"pockengine: {len(values)} BatchNorm statistics in the export moved by one step on the example "
                      "inputs; install onnx to keep them as in the module", stacklevel=3)
        return onnx_bytes
    model = onnx.load_from_string(onnx_bytes)
    for init in model.graph.initializer:
        if init.name in values:
            init.CopyFrom(numpy_helper.from_array(values[init.name].detach().cpu().numpy(), init.name))
    return model.SerializeToString()


def compile(model, recipe=None, *, output=None, input_shapes=None, dims=None, example_inputs=None,
            input_names=None, output_names=None, opset=17, backend="", plugins=(), optimize=True,
            reorder_updates=None, memory_schedule=True, layout=True, fold_frozen_scales=True, profile=None,
            memory_budget=0, expose_gradients=False, kv_cache=0, num_labels=-1, bind=None):
    """Compiles `model` (and with `recipe`, its training step) into a :class:`Blob`.

    model          a path (.onnx, .gguf, a Hugging Face folder), ONNX bytes, an onnx.ModelProto,
                   or a torch.nn.Module (exported here: needs `example_inputs`)
    recipe         None (inference only), a dict, JSON text or a .json path (docs/recipe.md)
    output         also write the blob to this path (Blob.open then maps the file)
    input_shapes   {"x": (8, 3, 64, 64)}: static shapes (pockc compile --input-shape)
    dims           {"batch": 8}: values of named symbolic dimensions (--input-shape @batch=8)
    bind           {"shape": [3, 4]}: ONNX graph inputs bound to values at compile time (pockc
                   compile --bind): a list or scalar takes the input's declared dtype, a NumPy
                   array keeps its own, which must be the declared one
    example_inputs a torch.nn.Module's inputs for the export: a tensor or array, a tuple, or a
                   dict by input name; input_names / output_names name the ONNX graph's tensors
                   (default: the forward's argument names, and "output")
    the rest       pockc compile's options: backend, plugins (--backend-plugin), optimize
                   (False: --no-optimize), reorder_updates (None: the compiler decides; True: --reorder), layout, memory_budget (bytes or
                   "512M"), profile (pockc tune's JSON), kv_cache, num_labels
    """
    if _is_torch_module(model):
        if example_inputs is None:
            raise _INVALID_ARGUMENT("compiling a torch.nn.Module needs example_inputs (its forward's inputs)")
        model = export_torch(model, example_inputs, input_names=input_names, output_names=output_names,
                             opset=opset, training=recipe is not None)
    elif hasattr(model, "SerializeToString"):  # onnx.ModelProto
        model = model.SerializeToString()
    elif isinstance(model, (bytearray, memoryview)):
        model = bytes(model)
    elif isinstance(model, os.PathLike):
        model = os.fspath(model)
    elif not isinstance(model, (str, bytes)):
        raise TypeError(f"model: a path, ONNX bytes, an onnx.ModelProto or a torch.nn.Module, not {type(model).__name__}")
    with tempfile.TemporaryDirectory() as folder:
        data, report = _pockengine.compile_model(
            model, _recipe_text(recipe), _shape_args(input_shapes, dims), int(kv_cache), int(num_labels),
            backend or "", [os.fspath(p) for p in plugins], bool(optimize), None if reorder_updates is None else bool(reorder_updates),
            bool(memory_schedule), bool(layout), bool(fold_frozen_scales), os.fspath(profile) if profile else "",
            _memory_budget(memory_budget), bool(expose_gradients), _bind_args(bind, folder))
    blob = Blob(data, json.loads(report) if report else {})
    if output is not None:
        blob.save(output)
    return blob
