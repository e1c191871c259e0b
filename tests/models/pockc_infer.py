"""Runs a model through pockc for the model checks: `pockc compile` with input shapes, then
`pockc infer` on numpy inputs; returns the outputs as float64 arrays by name."""
import os
import subprocess
import tempfile

import numpy as np


def pockc_infer(pockc, model, inputs, extra_args=()):
    """`model`: a .gguf/.onnx file or a Hugging Face folder; `inputs`: name -> int64/float array,
    each compiled with its own shape."""
    with tempfile.TemporaryDirectory() as d:
        blob, data, out = (os.path.join(d, n) for n in ("m.pock", "in.npz", "out.npz"))
        shapes = []
        for name, a in inputs.items():
            shapes += ["--input-shape", f"{name}={','.join(str(n) for n in a.shape)}"]
        subprocess.run([pockc, "compile", model, "-o", blob, *shapes, *extra_args], check=True, stdout=subprocess.DEVNULL)
        np.savez(data, **inputs)
        subprocess.run([pockc, "infer", blob, "--data", data, "--out", out], check=True, stdout=subprocess.DEVNULL)
        result = np.load(out)
        return {name: result[name].astype(np.float64) for name in result.files}
