"""PockEngine from Python: compile a model (an ONNX file, or a torch.nn.Module exported here)
with a recipe into a blob, train it step by step and run inference on numpy arrays, save and
load checkpoints, and read the compiler's and `pockc inspect`'s figures as dicts.

    import numpy as np, pockengine

    blob = pockengine.compile("model.onnx", {"batch_size": 8, "optimizer": {"type": "sgd", "lr": 0.1},
                                             "loss": {"type": "cross_entropy", "labels": "label"}})
    engine = blob.open()
    loss = engine.train_step(x=images, label=labels)
    logits = engine.infer(x=images)["logits"]

Everything runs in PockEngine's C++ runtime and compiler (docs/python.md); errors are
pockengine.Error subclasses named after the C status (pockengine.NotFoundError is
POCK_ERR_NOT_FOUND, with .code 9 and .status "POCK_ERR_NOT_FOUND").
"""
import os as _os

from . import _pockengine
from ._compile import Blob, compile, export_torch
from ._engine import DTYPES, Engine
from ._errors import ERROR_CLASSES as _ERROR_CLASSES
from ._errors import STATUSES, Error

globals().update({cls.__name__: cls for cls in _ERROR_CLASSES.values()})

__version__ = "0.1.0"
__all__ = ["Blob", "Engine", "Error", "compile", "export_torch", "inspect", "status_string", "DTYPES", "STATUSES",
           *(cls.__name__ for cls in _ERROR_CLASSES.values())]


def inspect(blob, *, backend=None, plugins=()):
    """What `pockc inspect --json BLOB` reports, as a dict: functions, FLOPs per phase, trainable
    parameters, memory, the backends an engine opened here with `backend` and `plugins` binds.
    `blob`: a path, a pockengine.Blob, or an Engine (as that engine bound it)."""
    import json
    if isinstance(blob, Engine):
        return blob.inspect()
    if isinstance(blob, Blob) and blob.path is None:
        return Engine(blob, backend=backend, plugins=plugins).inspect()
    path = blob.path if isinstance(blob, Blob) else _os.fspath(blob)
    return json.loads(_pockengine.inspect_file(path, backend or "", [_os.fspath(p) for p in plugins]))


def status_string(code):
    """The runtime's short text for a status code (pock_status_string): 5 -> "shape mismatch"."""
    return _pockengine.status_string(int(code))
